//! Taking the journal: before each tool call that can change files, what the project's tracked
//! and untracked files (not ignored ones) and git's refs, HEAD and index held, kept in the
//! [`Store`] and named by one line of the session's `calls.jsonl`.
//!
//! Cheap by reuse: the working tree is read by [`Hasher::snapshot`] (the snapshot `forge run`
//! judges agents by), with its stat cache kept between hook processes in `state`; only a file
//! whose stamp (inode, size, mtime, ctime) changed is hashed, and only a file the journal has
//! not kept yet is copied. A tree that did not change since the last call costs no write.
//!
//! Nothing here restores anything (`restore.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::Store;
use crate::error::{Error, Result};
use crate::evidence::refs::Refs;
use crate::evidence::snapshot::{ObjectFormat, Stamp};
use crate::evidence::{Entry, Hasher, Snapshot};

/// After this many changes in a row, a call's tree is kept whole again: restoring reads at
/// most this many objects to rebuild one tree.
const MAX_DEPTH: u32 = 32;

/// One journaled call: the state just before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// Its number in the session, from 1.
    pub seq: u64,
    /// The client's id of the call (`tool_use_id`), where it sends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub tool: String,
    pub summary: String,
    pub at: String,
    /// The [`Tree`] object of the files.
    pub files: String,
    /// The [`GitState`] object.
    pub git: String,
}

/// A tree as kept: whole (`base` none), or the changes from `base`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Tree {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base: Option<String>,
    #[serde(default)]
    depth: u32,
    #[serde(default)]
    set: BTreeMap<String, Entry>,
    #[serde(default)]
    removed: Vec<String>,
}

/// Git's state as the journal keeps it: HEAD's file, every ref, and the index's bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitState {
    /// What `HEAD` holds: `ref: refs/heads/main`, or a commit id (detached).
    pub head: String,
    pub refs: BTreeMap<String, String>,
    /// The index's object; `None` when there was none.
    #[serde(default)]
    pub index: Option<String>,
    /// The index was larger than the cap: not kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub index_not_kept: bool,
}

/// What one look found and kept.
pub struct Taken {
    pub files: BTreeMap<String, Entry>,
    pub files_oid: String,
    pub git: GitState,
    pub git_oid: String,
}

/// The journal of one project: `.tmp/.forge/undo/`.
pub struct Journal {
    pub root: PathBuf,
    pub git_dir: PathBuf,
    pub dir: PathBuf,
    pub store: Store,
    pub cap: u64,
}

/// The last look, kept between processes in `state`: the stat cache and the tree it found.
#[derive(Default)]
struct State {
    format: Option<ObjectFormat>,
    session: String,
    files_oid: String,
    depth: u32,
    index: Option<(Stamp, String)>,
    /// The commit HEAD named: while it stays, the last tree stands for what git tracks.
    head: String,
    rows: Vec<(String, Option<Stamp>, Entry)>,
    /// The stat cache of the small ignored files the snapshot reads (not journaled).
    ignored: Vec<(String, Stamp, Entry)>,
}

const STATE_HEAD: &str = "forge-undo-state 1";

impl Journal {
    /// The journal of the repository at `root` (which holds `.git`); `None` where `root` is no
    /// repository's top (a project in a subfolder of one: not journaled).
    pub fn open(root: &Path, tmp_dir: &Path, cap: u64) -> Result<Option<Journal>> {
        let Some(git_dir) = git_dir_of(root) else {
            return Ok(None);
        };
        let dir = tmp_dir.join("undo");
        let format = match state_format(&dir.join("state")) {
            Some(f) => f,
            None => ObjectFormat::of_repo(root)?,
        };
        Ok(Some(Journal {
            root: root.to_path_buf(),
            git_dir,
            store: Store::new(dir.join("objects"), format),
            dir,
            cap,
        }))
    }

    /// The repository's git folder.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    pub fn session_dir(&self, session: &str) -> PathBuf {
        self.dir
            .join("sessions")
            .join(crate::timeline::sanitize(session))
    }

    /// Journals the state before a call of `session`; the call's line.
    pub fn record(
        &self,
        session: &str,
        id: Option<&str>,
        tool: &str,
        summary: &str,
    ) -> Result<Call> {
        let _lock = crate::state::lock_dir(&self.dir)?;
        let taken = self.take(session, true)?;
        self.append_call(session, id, tool, summary, &taken)
    }

    /// Looks at the project and keeps what is new, naming no call (a session's start): the
    /// next call's look then reads only what changed.
    pub fn look(&self, session: &str) -> Result<()> {
        let _lock = crate::state::lock_dir(&self.dir)?;
        self.take(session, true).map(|_| ())
    }

    /// Names `taken` as the state before a call of `session` (the journal's lock held).
    pub fn append_call(
        &self,
        session: &str,
        id: Option<&str>,
        tool: &str,
        summary: &str,
        taken: &Taken,
    ) -> Result<Call> {
        let call = Call {
            seq: self.last_seq(session)? + 1,
            id: id.map(str::to_string),
            tool: tool.to_string(),
            summary: crate::text::clip_words(summary, 200),
            at: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            files: taken.files_oid.clone(),
            git: taken.git_oid.clone(),
        };
        let file = self.session_dir(session).join("calls.jsonl");
        let mut line = serde_json::to_string(&call)
            .map_err(|e| Error::usage(format!("cannot write the journal: {e}")))?;
        line.push('\n');
        append(&file, line.as_bytes())?;
        Ok(call)
    }

    /// The number of the session's last call (0: none), from the file's last line only: the
    /// hook runs at every call, and a long session's journal is long.
    fn last_seq(&self, session: &str) -> Result<u64> {
        use std::io::{Read, Seek, SeekFrom};
        let file = self.session_dir(session).join("calls.jsonl");
        let mut f = match std::fs::File::open(&file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(Error::io(format!("cannot read {}", file.display()), e)),
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let from = len.saturating_sub(64 << 10);
        let mut tail = Vec::new();
        f.seek(SeekFrom::Start(from))
            .and_then(|_| f.read_to_end(&mut tail))
            .map_err(|e| Error::io(format!("cannot read {}", file.display()), e))?;
        // The cut may fall inside a character: only whole lines after it are read.
        Ok(String::from_utf8_lossy(&tail)
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Call>(l).ok())
            .map_or(0, |c| c.seq))
    }

    /// The session's journaled calls, oldest first.
    pub fn calls(&self, session: &str) -> Result<Vec<Call>> {
        let file = self.session_dir(session).join("calls.jsonl");
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(format!("cannot read {}", file.display()), e)),
        };
        // A line cut by a crash mid-append is the last one: skipped.
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// Looks at the working tree and git now and keeps what is new; with `save`, the look is
    /// remembered for the next one (the stat cache, the tree's object).
    pub fn take(&self, session: &str, save: bool) -> Result<Taken> {
        let state_file = self.dir.join("state");
        let state = read_state(&state_file);
        let same_session = state.session == crate::timeline::sanitize(session);
        let prev: BTreeMap<&str, &Entry> =
            state.rows.iter().map(|(p, _, e)| (p.as_str(), e)).collect();
        let (git, index) = self.git_state(state.index.as_ref())?;
        let head = match git.head.strip_prefix("ref: ") {
            Some(r) => git.refs.get(r).cloned().unwrap_or_default(),
            None => git.head.clone(),
        };
        // What git tracks decides only the tracked files the walk does not meet (under an
        // ignored folder) and submodules: while HEAD names the commit of the last look, that
        // look's tree stands for it, and no `git ls-tree` of 10,000 paths is run.
        let tracked = if head.is_empty() {
            // No commit yet: git tracks nothing, and there is no tree to list.
            Snapshot::default()
        } else if head == state.head && !state.rows.is_empty() {
            Snapshot {
                entries: state
                    .rows
                    .iter()
                    .map(|(p, _, e)| (p.clone(), e.clone()))
                    .collect(),
                ..Default::default()
            }
        } else {
            Snapshot::of_commit(&self.root, "HEAD").unwrap_or_default()
        };
        let seeded: std::collections::HashMap<&str, &Stamp> = state
            .rows
            .iter()
            .filter_map(|(p, s, _)| s.as_ref().map(|s| (p.as_str(), s)))
            .chain(state.ignored.iter().map(|(p, s, _)| (p.as_str(), s)))
            .collect();
        let mut hasher = Hasher::unwatched(
            self.store.format,
            state
                .rows
                .iter()
                .filter_map(|(p, s, e)| s.map(|s| (p.clone(), s, e.clone())))
                .chain(state.ignored.iter().cloned()),
        );
        let snap = {
            let _t = crate::trace::span("undo-snapshot");
            hasher.snapshot(&self.root, &tracked)?
        };
        let mut files = snap.entries;
        // Keep what the journal does not hold yet.
        let fresh = state.rows.is_empty() || state.files_oid.is_empty();
        for (p, e) in files.iter_mut() {
            if !fresh && prev.get(p.as_str()) == Some(&&*e) {
                continue;
            }
            self.keep(p, e)?;
        }
        let unchanged = same_session
            && !state.files_oid.is_empty()
            && files.len() == prev.len()
            && files.iter().all(|(p, e)| prev.get(p.as_str()) == Some(&e));
        let (files_oid, depth) = if unchanged {
            (state.files_oid.clone(), state.depth)
        } else if same_session && !state.files_oid.is_empty() && state.depth < MAX_DEPTH {
            let mut t = Tree {
                base: Some(state.files_oid.clone()),
                depth: state.depth + 1,
                ..Default::default()
            };
            for (p, e) in &files {
                if prev.get(p.as_str()) != Some(&e) {
                    t.set.insert(p.clone(), e.clone());
                }
            }
            t.removed = prev
                .keys()
                .filter(|p| !files.contains_key(**p))
                .map(|p| p.to_string())
                .collect();
            (self.put_json(&t)?, t.depth)
        } else {
            let t = Tree {
                set: files.clone(),
                ..Default::default()
            };
            (self.put_json(&t)?, 0)
        };
        let git_oid = self.put_json(&git)?;
        // Nothing new to remember (the steady case): the state is not written again.
        let cache_same = hasher.cached().count() == seeded.len()
            && hasher
                .cached()
                .all(|(p, s, _)| seeded.get(p).is_some_and(|o| *o == s));
        let same = unchanged
            && cache_same
            && head == state.head
            && index.as_ref().map(|(s, _)| s) == state.index.as_ref().map(|(s, _)| s);
        if save && !same {
            let stamps: std::collections::HashMap<&str, &Stamp> =
                hasher.cached().map(|(p, s, _)| (p, s)).collect();
            let rows = files
                .iter()
                .map(|(p, e)| (p.clone(), stamps.get(p.as_str()).map(|s| **s), e.clone()))
                .collect();
            let ignored = hasher
                .cached()
                .filter(|(p, _, _)| !files.contains_key(*p))
                .map(|(p, s, e)| (p.to_string(), *s, e.clone()))
                .collect();
            write_state(
                &state_file,
                &State {
                    format: Some(self.store.format),
                    session: crate::timeline::sanitize(session),
                    files_oid: files_oid.clone(),
                    depth,
                    index,
                    head,
                    rows,
                    ignored,
                },
            )?;
        }
        Ok(Taken {
            files,
            files_oid,
            git,
            git_oid,
        })
    }

    /// Keeps the bytes of the path `p` whose entry is `e` (a file at most the cap, a link's
    /// target); a file that changed since it was hashed is kept as it is now, and `e` follows.
    fn keep(&self, p: &str, e: &mut Entry) -> Result<()> {
        let path = self.root.join(p);
        match e {
            Entry::File { oid, .. } => {
                if self.store.has(oid) {
                    return Ok(());
                }
                let Ok(meta) = std::fs::symlink_metadata(&path) else {
                    return Ok(());
                };
                if meta.file_type().is_file()
                    && let Some(kept) = self.store.put_file(&path, &meta, self.cap)?
                {
                    *oid = kept;
                }
            }
            Entry::Symlink { oid } => {
                if self.store.has(oid) {
                    return Ok(());
                }
                if let Ok(t) = std::fs::read_link(&path) {
                    use std::os::unix::ffi::OsStrExt;
                    *oid = self.store.put(t.as_os_str().as_bytes())?;
                }
            }
            Entry::Gitlink { .. } | Entry::Nested | Entry::TooLarge { .. } => {}
        }
        Ok(())
    }

    fn put_json<T: Serialize>(&self, v: &T) -> Result<String> {
        let bytes = serde_json::to_vec(v)
            .map_err(|e| Error::usage(format!("cannot write the journal: {e}")))?;
        self.store.put(&bytes)
    }

    pub fn get_json<T: for<'de> Deserialize<'de>>(&self, oid: &str) -> Result<T> {
        let bytes = self.store.get(oid)?.ok_or_else(|| Error::State {
            path: self.dir.join("objects"),
            message: format!("the journal object {oid} is missing"),
            recovery: "The journal is incomplete: nothing can be restored from this call.".into(),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| Error::State {
            path: self.dir.join("objects"),
            message: format!("the journal object {oid} cannot be read ({e})"),
            recovery: "The journal is damaged: nothing can be restored from this call.".into(),
        })
    }

    /// The whole tree the object `oid` names.
    pub fn tree(&self, oid: &str) -> Result<BTreeMap<String, Entry>> {
        let mut chain = Vec::new();
        let mut at = oid.to_string();
        loop {
            let t: Tree = self.get_json(&at)?;
            let base = t.base.clone();
            chain.push(t);
            match base {
                Some(b) if chain.len() <= MAX_DEPTH as usize + 1 => at = b,
                Some(_) => {
                    return Err(Error::State {
                        path: self.dir.join("objects"),
                        message: format!("the tree {oid} has too long a chain of changes"),
                        recovery: "The journal is damaged: nothing can be restored from this call."
                            .into(),
                    });
                }
                None => break,
            }
        }
        let mut files = BTreeMap::new();
        for t in chain.into_iter().rev() {
            for r in &t.removed {
                files.remove(r);
            }
            files.extend(t.set);
        }
        Ok(files)
    }

    /// HEAD, the refs and the index now; the index is read again only when its stamp moved.
    fn git_state(
        &self,
        last: Option<&(Stamp, String)>,
    ) -> Result<(GitState, Option<(Stamp, String)>)> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let refs = Refs::list(&self.root, &self.git_dir)?.0;
        let index_path = self.git_dir.join("index");
        let (mut index, mut not_kept, mut remembered) = (None, false, None);
        if let Ok(meta) = std::fs::symlink_metadata(&index_path) {
            let stamp = stamp_of(&meta);
            match last {
                Some((s, oid)) if *s == stamp && self.store.has(oid) => {
                    index = Some(oid.clone());
                    remembered = Some((stamp, oid.clone()));
                }
                _ => match self.store.put_file(&index_path, &meta, self.cap)? {
                    Some(oid) => {
                        // Only an index that has not changed for a while is known by its stamp.
                        if settled(&meta) {
                            remembered = Some((stamp, oid.clone()));
                        }
                        index = Some(oid);
                    }
                    None => not_kept = true,
                },
            }
        }
        Ok((
            GitState {
                head,
                refs,
                index,
                index_not_kept: not_kept,
            },
            remembered,
        ))
    }
}

/// The git folder of the repository whose top is `root`: `.git`, or where a `.git` file (a
/// linked worktree's, a submodule's) points.
pub fn git_dir_of(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot).ok()?;
    if meta.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let to = text.trim().strip_prefix("gitdir:")?.trim();
    Some(root.join(to))
}

fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    Stamp::from_fields([
        meta.dev() as i64,
        meta.ino() as i64,
        meta.size() as i64,
        meta.mode() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ])
}

/// Whether the file last changed more than a second ago: a write in the same tick of a coarse
/// clock could otherwise leave its stamp as it was.
fn settled(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    meta.ctime() + 1 < now
}

fn append(file: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    if let Some(d) = file.parent() {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::io(format!("cannot create {}", d.display()), e))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| Error::io(format!("cannot write {}", file.display()), e))
}

/// The last look; an empty one when there is none or it cannot be read (it is a cache: the
/// next look reads every file and keeps a whole tree).
fn read_state(file: &Path) -> State {
    let Ok(text) = std::fs::read_to_string(file) else {
        return State::default();
    };
    parse_state(&text).unwrap_or_default()
}

/// The object format the state names, from its first lines only (the rest is the cache).
fn state_format(file: &Path) -> Option<ObjectFormat> {
    use std::io::Read;
    let mut head = [0u8; 128];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    let mut lines = text.lines();
    if lines.next()? != STATE_HEAD {
        return None;
    }
    match lines.next()? {
        "format sha256" => Some(ObjectFormat::Sha256),
        "format sha1" => Some(ObjectFormat::Sha1),
        _ => None,
    }
}

fn parse_state(text: &str) -> Option<State> {
    let mut lines = text.split('\n');
    if lines.next()? != STATE_HEAD {
        return None;
    }
    let mut s = State::default();
    for l in lines {
        if l.is_empty() {
            continue;
        }
        let (head, path) = match l.split_once('\t') {
            Some((h, p)) => (h, Some(p)),
            None => (l, None),
        };
        let f: Vec<&str> = head.split(' ').collect();
        match (f.as_slice(), path) {
            (["format", x], None) => {
                s.format = Some(match *x {
                    "sha256" => ObjectFormat::Sha256,
                    _ => ObjectFormat::Sha1,
                })
            }
            (["session", x], None) => s.session = x.to_string(),
            (["head", x], None) => s.head = x.to_string(),
            (["files", oid, depth], None) => {
                s.files_oid = oid.to_string();
                s.depth = depth.parse().ok()?;
            }
            (["index", oid, rest @ ..], None) => {
                s.index = Some((parse_stamp(rest)?, oid.to_string()));
            }
            ([tag, oid, rest @ ..], Some(p)) if tag.starts_with('I') => {
                let e = entry_of(&tag[1..], oid)?;
                s.ignored.push((p.to_string(), parse_stamp(rest)?, e));
            }
            ([tag, oid, rest @ ..], Some(p)) => {
                let stamp = if rest == ["-"] {
                    None
                } else {
                    Some(parse_stamp(rest)?)
                };
                let e = entry_of(tag, oid)?;
                s.rows.push((p.to_string(), stamp, e));
            }
            _ => return None,
        }
    }
    Some(s)
}

fn entry_of(tag: &str, oid: &str) -> Option<Entry> {
    let oid = oid.to_string();
    Some(match tag {
        "f" => Entry::File { oid, exec: false },
        "x" => Entry::File { oid, exec: true },
        "l" => Entry::Symlink { oid },
        "g" => Entry::Gitlink { oid },
        "n" => Entry::Nested,
        "t" => Entry::TooLarge {
            size: oid.parse().ok()?,
        },
        _ => return None,
    })
}

fn tag_of(e: &Entry) -> (&'static str, String) {
    match e {
        Entry::File { oid, exec: false } => ("f", oid.clone()),
        Entry::File { oid, exec: true } => ("x", oid.clone()),
        Entry::Symlink { oid } => ("l", oid.clone()),
        Entry::Gitlink { oid } => ("g", oid.clone()),
        Entry::Nested => ("n", "-".into()),
        Entry::TooLarge { size } => ("t", size.to_string()),
    }
}

fn parse_stamp(f: &[&str]) -> Option<Stamp> {
    if f.len() != 8 {
        return None;
    }
    let mut n = [0i64; 8];
    for (i, x) in f.iter().enumerate() {
        n[i] = x.parse().ok()?;
    }
    Some(Stamp::from_fields(n))
}

/// One line per path (`tag oid stamp…<TAB>path`): read by every hook call, so plain text a
/// loop splits, not JSON. A path with a line break is not kept in the cache (read again).
fn write_state(file: &Path, s: &State) -> Result<()> {
    use std::fmt::Write;
    let mut out = String::with_capacity(s.rows.len() * 100);
    out.push_str(STATE_HEAD);
    out.push('\n');
    let fmt = match s.format {
        Some(ObjectFormat::Sha256) => "sha256",
        _ => "sha1",
    };
    let _ = writeln!(out, "format {fmt}");
    let _ = writeln!(out, "session {}", s.session);
    if !s.head.is_empty() {
        let _ = writeln!(out, "head {}", s.head);
    }
    let _ = writeln!(out, "files {} {}", s.files_oid, s.depth);
    let stamp = |out: &mut String, st: &Stamp| {
        for x in st.fields() {
            let _ = write!(out, " {x}");
        }
    };
    if let Some((st, oid)) = &s.index {
        let _ = write!(out, "index {oid}");
        stamp(&mut out, st);
        out.push('\n');
    }
    for (p, st, e) in &s.rows {
        if p.contains('\n') || p.contains('\t') {
            continue;
        }
        let (tag, oid) = tag_of(e);
        let _ = write!(out, "{tag} {oid}");
        match st {
            Some(st) => stamp(&mut out, st),
            None => out.push_str(" -"),
        }
        out.push('\t');
        out.push_str(p);
        out.push('\n');
    }
    for (p, st, e) in &s.ignored {
        if p.contains('\n') || p.contains('\t') {
            continue;
        }
        let (tag, oid) = tag_of(e);
        let _ = write!(out, "I{tag} {oid}");
        stamp(&mut out, st);
        out.push('\t');
        out.push_str(p);
        out.push('\n');
    }
    crate::state::replace_unsynced(file, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sh;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(
            dir.path(),
            "git init -q -b main && mkdir -p src && echo a > src/a.rs && echo b > b.txt \
             && printf 'target/\\n.tmp/\\n' > .gitignore && git add -A && git commit -qm init",
        );
        dir
    }

    #[test]
    fn the_state_reads_back_as_written() {
        let s = State {
            format: Some(ObjectFormat::Sha256),
            session: "s1".into(),
            files_oid: "ab".repeat(32),
            depth: 3,
            index: Some((
                Stamp::from_fields([1, 2, 3, 4, 5, 6, 7, 8]),
                "cd".repeat(32),
            )),
            head: "12".repeat(32),
            ignored: vec![(
                ".env".into(),
                Stamp::from_fields([1, 1, 1, 1, 1, 1, 1, 1]),
                Entry::File {
                    oid: "34".repeat(32),
                    exec: false,
                },
            )],
            rows: vec![
                (
                    "a b/c".into(),
                    Some(Stamp::from_fields([9, 8, 7, 6, 5, 4, 3, -2])),
                    Entry::File {
                        oid: "ef".repeat(32),
                        exec: true,
                    },
                ),
                ("n".into(), None, Entry::Nested),
                ("t".into(), None, Entry::TooLarge { size: 99 }),
                (
                    "l".into(),
                    None,
                    Entry::Symlink {
                        oid: "01".repeat(32),
                    },
                ),
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("state");
        write_state(&f, &s).unwrap();
        let r = read_state(&f);
        assert_eq!(r.format, s.format);
        assert_eq!(state_format(&f), s.format);
        assert_eq!(r.session, s.session);
        assert_eq!((r.files_oid, r.depth), (s.files_oid, s.depth));
        assert_eq!(r.index, s.index);
        assert_eq!(r.rows, s.rows);
        assert_eq!((r.head, r.ignored), (s.head, s.ignored));
        // A damaged state is no state: the next look starts afresh.
        std::fs::write(&f, "forge-undo-state 1\nx y\n").unwrap();
        assert!(read_state(&f).rows.is_empty());
    }

    #[test]
    fn unchanged_trees_share_one_object_and_changes_chain_to_their_base() {
        let dir = repo();
        let d = dir.path();
        let j = Journal::open(d, &d.join(".tmp/.forge"), 1 << 20)
            .unwrap()
            .unwrap();
        let one = j.record("s", Some("t1"), "Bash", "ls").unwrap();
        let two = j.record("s", None, "Bash", "ls").unwrap();
        assert_eq!((one.seq, two.seq), (1, 2));
        assert_eq!(one.files, two.files);
        assert_eq!(one.git, two.git);
        std::fs::write(d.join("new.txt"), "n\n").unwrap();
        std::fs::remove_file(d.join("b.txt")).unwrap();
        std::fs::create_dir_all(d.join("target")).unwrap();
        std::fs::write(d.join("target/x"), "ignored\n").unwrap();
        let three = j.record("s", None, "Write", "new.txt").unwrap();
        assert_ne!(three.files, two.files);
        let t: Tree = j.get_json(&three.files).unwrap();
        assert_eq!(t.base.as_deref(), Some(two.files.as_str()));
        assert_eq!(t.set.keys().collect::<Vec<_>>(), ["new.txt"]);
        assert_eq!(t.removed, ["b.txt"]);
        let whole = j.tree(&three.files).unwrap();
        assert_eq!(
            whole.keys().collect::<Vec<_>>(),
            [".gitignore", "new.txt", "src/a.rs"]
        );
        // Every file's bytes are kept, once.
        for e in whole.values() {
            assert!(j.store.has(e.oid().unwrap()));
        }
        // Another session starts from a whole tree.
        let other = j.record("t", None, "Bash", "ls").unwrap();
        let t: Tree = j.get_json(&other.files).unwrap();
        assert!(t.base.is_none());
        assert_eq!(j.tree(&other.files).unwrap(), whole);
        assert_eq!(j.calls("s").unwrap().len(), 3);
        assert_eq!(j.calls("s").unwrap()[0].id.as_deref(), Some("t1"));
    }

    #[test]
    fn a_file_over_the_cap_is_in_the_tree_but_not_kept() {
        let dir = repo();
        let d = dir.path();
        std::fs::write(d.join("big.bin"), vec![7u8; 4096]).unwrap();
        let j = Journal::open(d, &d.join(".tmp/.forge"), 1024)
            .unwrap()
            .unwrap();
        let c = j.record("s", None, "Bash", "x").unwrap();
        let tree = j.tree(&c.files).unwrap();
        let big = tree["big.bin"].oid().unwrap();
        assert!(!j.store.has(big));
        assert!(j.store.has(tree["b.txt"].oid().unwrap()));
    }

    #[test]
    fn refs_head_and_index_are_journaled() {
        let dir = repo();
        let d = dir.path();
        sh(d, "git branch feature && git tag v1");
        let j = Journal::open(d, &d.join(".tmp/.forge"), 1 << 20)
            .unwrap()
            .unwrap();
        let c = j.record("s", None, "Bash", "x").unwrap();
        let g: GitState = j.get_json(&c.git).unwrap();
        assert_eq!(g.head, "ref: refs/heads/main");
        assert!(g.refs.contains_key("refs/heads/feature"));
        assert!(g.refs.contains_key("refs/tags/v1"));
        let index = j.store.get(g.index.as_deref().unwrap()).unwrap().unwrap();
        assert_eq!(index, std::fs::read(d.join(".git/index")).unwrap());
    }
}
