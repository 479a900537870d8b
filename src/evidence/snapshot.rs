//! A content snapshot of a working tree: path → what git would store for it, computed by Forge
//! from the bytes on disk.
//!
//! Not `git status`: its answer rests on the index's stat cache (an agent can write an entry
//! whose size and mtime match a weakened file), on skip-worktree and assume-unchanged flags, on
//! clean filters and on global config. Here every file is read and hashed by Forge; the only
//! cache is [`Hasher`]'s, held in Forge's memory and keyed on the inode's ctime, which the
//! kernel sets on every change and no unprivileged process can set back.
//!
//! Ignore rules: the tree's own `.gitignore` files and `.git/info/exclude` (which Forge puts
//! back after every agent call), never the global excludes file. A tracked path is in the
//! snapshot whatever the ignore rules say. Forge's own files (`.forge/`, `.tmp/.forge/`) are
//! left to `run/protect.rs`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::git;

/// A path whose content changed less than this long before it was read is not cached: the
/// kernel's ctime clock may be coarse (a jiffy), so a second write in the same tick could leave
/// the ctime unchanged.
const RACY: Duration = Duration::from_millis(100);

/// What git would store for one path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Entry {
    /// A regular file: its blob id and whether it is executable (mode 100755).
    File { oid: String, exec: bool },
    /// A symbolic link: the blob id of its target.
    Symlink { oid: String },
    /// A submodule commit recorded in a tree (mode 160000); never read from disk.
    Gitlink { oid: String },
    /// A nested repository that is not a recorded submodule: git does not track its content.
    Nested,
    /// A file over [`MAX_FILE`] bytes: not read (a sparse file of terabytes must not stall or
    /// exhaust Forge), so never judged equal to anything, stored or committed.
    TooLarge { size: u64 },
}

/// The largest file Forge reads into a snapshot. A bigger one in an agent's change is a change
/// no gate can judge; repositories that track such files keep them in LFS.
pub const MAX_FILE: u64 = 1 << 30;

impl Entry {
    /// The tree mode git writes for it; `None` for a nested repository (not storable).
    pub fn mode(&self) -> Option<&'static str> {
        match self {
            Entry::File { exec: false, .. } => Some("100644"),
            Entry::File { exec: true, .. } => Some("100755"),
            Entry::Symlink { .. } => Some("120000"),
            Entry::Gitlink { .. } => Some("160000"),
            Entry::Nested | Entry::TooLarge { .. } => None,
        }
    }

    pub fn oid(&self) -> Option<&str> {
        match self {
            Entry::File { oid, .. } | Entry::Symlink { oid } | Entry::Gitlink { oid } => Some(oid),
            Entry::Nested | Entry::TooLarge { .. } => None,
        }
    }

    fn from_tree(mode: &str, oid: &str) -> Option<Entry> {
        let oid = oid.to_string();
        match mode {
            "100644" => Some(Entry::File { oid, exec: false }),
            "100755" => Some(Entry::File { oid, exec: true }),
            "120000" => Some(Entry::Symlink { oid }),
            "160000" => Some(Entry::Gitlink { oid }),
            _ => None,
        }
    }
}

/// Every path of a tree (a commit's, or a working tree Forge read), Forge's own paths excluded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Snapshot {
    pub entries: BTreeMap<String, Entry>,
    /// Small files git ignores (a person's `config.local`, `.env`), kept so what an agent
    /// deletes or rewrites of them can be put back. Not part of the tree: never compared,
    /// committed or checked out. Files inside ignored folders (`target/`, `node_modules/`) are
    /// not read.
    #[serde(default, skip_serializing)]
    pub ignored: BTreeMap<String, Entry>,
}

/// Two snapshots are equal when their trees are: ignored files are no part of a tree.
impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Snapshot {}

/// Ignored files kept per snapshot, at most, and their largest size.
const IGNORED_FILES: usize = 2000;
const IGNORED_SIZE: u64 = 1 << 20;

/// One path that differs between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub before: Option<Entry>,
    pub after: Option<Entry>,
}

impl Snapshot {
    /// The tree of `commit`, from git's object store (`ls-tree`; replacement objects, grafts
    /// and commit-graph files are ignored by [`git::git`]).
    pub fn of_commit(root: &Path, commit: &str) -> Result<Snapshot> {
        let out = git::git(root, &["ls-tree", "-r", "-z", "--full-tree", commit])?;
        let mut entries = BTreeMap::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            // `<mode> SP <type> SP <object> TAB <path>`
            let Some(tab) = rec.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let head = String::from_utf8_lossy(&rec[..tab]);
            let path = String::from_utf8_lossy(&rec[tab + 1..]).into_owned();
            let mut f = head.split(' ');
            let (Some(mode), Some(_), Some(oid)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if is_forge_path(&path) {
                continue;
            }
            if let Some(e) = Entry::from_tree(mode, oid) {
                entries.insert(path, e);
            }
        }
        Ok(Snapshot {
            entries,
            ..Default::default()
        })
    }

    /// The paths that differ from `self` to `after`, sorted.
    ///
    /// One pass over both maps in key order (a merge), not a lookup per path: `forge run` diffs
    /// trees of every file before and after each agent call and check, and on 10,000 files the
    /// lookups' string comparisons were a tenth of Forge's own time.
    pub fn diff(&self, after: &Snapshot) -> Vec<Change> {
        use std::cmp::Ordering;
        let change = |p: &String, b: Option<&Entry>, a: Option<&Entry>| Change {
            path: p.clone(),
            before: b.cloned(),
            after: a.cloned(),
        };
        let mut out = Vec::new();
        let mut before = self.entries.iter().peekable();
        let mut now = after.entries.iter().peekable();
        loop {
            match (before.peek(), now.peek()) {
                (Some((pb, b)), Some((pa, a))) => match pb.cmp(pa) {
                    Ordering::Less => {
                        out.push(change(pb, Some(b), None));
                        before.next();
                    }
                    Ordering::Greater => {
                        out.push(change(pa, None, Some(a)));
                        now.next();
                    }
                    Ordering::Equal => {
                        if b != a {
                            out.push(change(pb, Some(b), Some(a)));
                        }
                        before.next();
                        now.next();
                    }
                },
                (Some((pb, b)), None) => {
                    out.push(change(pb, Some(b), None));
                    before.next();
                }
                (None, Some((pa, a))) => {
                    out.push(change(pa, None, Some(a)));
                    now.next();
                }
                (None, None) => return out,
            }
        }
    }

    /// `self` with the paths of `changes` set to their `after`.
    pub fn with(&self, changes: &[Change]) -> Snapshot {
        let mut s = self.clone();
        for c in changes {
            match &c.after {
                Some(e) => s.entries.insert(c.path.clone(), e.clone()),
                None => s.entries.remove(&c.path),
            };
        }
        s
    }

    /// `self` with `paths` taken from `other` (present or absent there).
    pub fn overlay(&self, other: &Snapshot, paths: &[String]) -> Snapshot {
        let mut s = self.clone();
        for p in paths {
            match other.entries.get(p) {
                Some(e) => s.entries.insert(p.clone(), e.clone()),
                None => s.entries.remove(p),
            };
        }
        s
    }
}

/// Forge's own files: its config, specs and ledgers, and its ignored run state. Protected
/// byte for byte by `run/protect.rs`, never part of an agent's change or a commit.
pub fn is_forge_path(p: &str) -> bool {
    p == ".forge" || p.starts_with(".forge/") || p == ".tmp/.forge" || p.starts_with(".tmp/.forge/")
}

/// The stat fields a cached hash is valid for. `ctime` is set by the kernel on every change of
/// content or inode; `touch -d` can forge the mtime, not the ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// The fields as numbers, for a cache kept on disk between processes (`src/undo/`).
    pub fn fields(&self) -> [i64; 8] {
        [
            self.dev as i64,
            self.ino as i64,
            self.size as i64,
            self.mode as i64,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1,
        ]
    }

    pub fn from_fields(f: [i64; 8]) -> Stamp {
        Stamp {
            dev: f[0] as u64,
            ino: f[1] as u64,
            size: f[2] as u64,
            mode: f[3] as u32,
            mtime: (f[4], f[5]),
            ctime: (f[6], f[7]),
        }
    }

    fn changed_before(&self, t: SystemTime) -> bool {
        let ctime = std::time::UNIX_EPOCH
            + Duration::new(
                self.ctime.0.max(0) as u64,
                self.ctime.1.clamp(0, 999_999_999) as u32,
            );
        ctime + RACY < t
    }
}

/// Git's object hash of this repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectFormat {
    Sha1,
    Sha256,
}

impl ObjectFormat {
    pub fn of_repo(root: &Path) -> Result<ObjectFormat> {
        let out = git::git(root, &["rev-parse", "--show-object-format"])?;
        Ok(match String::from_utf8_lossy(&out).trim() {
            "sha256" => ObjectFormat::Sha256,
            _ => ObjectFormat::Sha1,
        })
    }

    /// The id git gives an object of `kind` (`blob`, `tree`, `commit`) with these bytes.
    pub fn oid(self, kind: &str, bytes: &[u8]) -> String {
        let header = format!("{kind} {}\0", bytes.len());
        match self {
            ObjectFormat::Sha1 => {
                use sha1::Digest;
                let mut h = sha1::Sha1::new();
                h.update(header.as_bytes());
                h.update(bytes);
                hex(&h.finalize())
            }
            ObjectFormat::Sha256 => {
                use sha2::Digest;
                let mut h = sha2::Sha256::new();
                h.update(header.as_bytes());
                h.update(bytes);
                hex(&h.finalize())
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(D[(x >> 4) as usize] as char);
        s.push(D[(x & 15) as usize] as char);
    }
    s
}

/// Hashes working trees into [`Snapshot`]s, remembering (in memory only) the hash of each file
/// whose inode has not changed since it was read.
pub struct Hasher {
    pub format: ObjectFormat,
    cache: HashMap<String, (Stamp, Entry)>,
    /// Watches on every folder the last full snapshot listed ([`Hasher::quiet`],
    /// [`Hasher::snapshot_areas`]).
    watch: Option<Watch>,
    /// Whether a full snapshot places those watches: not in a process that ends after one
    /// snapshot (a hook's journal, `src/undo/`), where arming them is only cost.
    watching: bool,
}

/// inotify watches on every folder a snapshot listed, each armed before its folder was read: a
/// change made after the walk saw a folder is an event on this descriptor.
struct Watch {
    inotify: nix::sys::inotify::Inotify,
    root: std::path::PathBuf,
    /// `.git/info/exclude` as the walk read it (it is not in a watched folder).
    exclude: Option<Stamp>,
    /// Each watch's folder, relative to the root.
    dirs: HashMap<nix::sys::inotify::WatchDescriptor, String>,
    /// A file with more than one name was seen: a write through its other name (outside the
    /// watched folders) would make no event here.
    linked: bool,
}

impl Watch {
    /// Closing an inotify descriptor waits for the kernel's grace period (up to tens of
    /// milliseconds): done on a thread of its own, off the run's time.
    fn close_later(self) {
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(self)));
        let theirs = slot.clone();
        let spawned = std::thread::Builder::new().spawn(move || {
            drop(theirs.lock().map(|mut w| w.take()));
        });
        if spawned.is_err() {
            // No thread to spare: close it here.
            drop(slot.lock().map(|mut w| w.take()));
        }
    }
}

/// What a walk arms as it goes: a watch on each folder before it is read, each folder's
/// name, whether every watch could be placed, and whether a file has several names.
struct Arming<'a> {
    inotify: Option<&'a nix::sys::inotify::Inotify>,
    complete: std::sync::atomic::AtomicBool,
    dirs: std::sync::Mutex<HashMap<nix::sys::inotify::WatchDescriptor, String>>,
    linked: std::sync::atomic::AtomicBool,
}

impl<'a> Arming<'a> {
    fn new(inotify: Option<&'a nix::sys::inotify::Inotify>) -> Arming<'a> {
        Arming {
            inotify,
            complete: std::sync::atomic::AtomicBool::new(inotify.is_some()),
            dirs: Default::default(),
            linked: Default::default(),
        }
    }

    /// Armed before the folder is read: whatever changes in it after the listing is an event.
    /// After a watch fails (the user's watch limit) no more are placed: the set is useless and
    /// would only hold watches the person's own tools need.
    fn watch(&self, dir: &Path, rel: &str) {
        let Some(i) = self.inotify else { return };
        if !self.complete() {
            return;
        }
        use nix::sys::inotify::AddWatchFlags as F;
        let mask = F::IN_MODIFY
            | F::IN_ATTRIB
            | F::IN_CLOSE_WRITE
            | F::IN_MOVED_FROM
            | F::IN_MOVED_TO
            | F::IN_CREATE
            | F::IN_DELETE
            | F::IN_DELETE_SELF
            | F::IN_MOVE_SELF
            | F::IN_DONT_FOLLOW
            | F::IN_ONLYDIR;
        match i.add_watch(dir, mask) {
            Ok(wd) => {
                self.dirs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(wd, rel.to_string());
            }
            Err(_) => self.unsure(),
        }
    }

    fn unsure(&self) {
        self.complete
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    fn complete(&self) -> bool {
        self.complete.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What one walk read, before it is merged into a snapshot.
struct WalkRead {
    entries: BTreeMap<String, Entry>,
    ignored: Vec<(String, Entry)>,
}

impl Hasher {
    pub fn new(format: ObjectFormat) -> Hasher {
        Hasher {
            format,
            cache: HashMap::new(),
            watch: None,
            watching: true,
        }
    }

    /// A hasher that places no watches, its cache seeded from `cached` (what a former process
    /// read, kept where no agent can write: the ctime in each stamp still decides).
    pub fn unwatched(
        format: ObjectFormat,
        cached: impl IntoIterator<Item = (String, Stamp, Entry)>,
    ) -> Hasher {
        Hasher {
            format,
            cache: cached.into_iter().map(|(p, s, e)| (p, (s, e))).collect(),
            watch: None,
            watching: false,
        }
    }

    /// The cache, to be kept for the next process ([`Hasher::unwatched`]).
    pub fn cached(&self) -> impl Iterator<Item = (&str, &Stamp, &Entry)> {
        self.cache.iter().map(|(p, (s, e))| (p.as_str(), s, e))
    }

    /// The paths (relative to `root`) written since the last look, from the watches of the
    /// last full snapshot; `None` when unsure: no watch, one that could not be placed, a full
    /// event queue, another root, `.git/info/exclude` changed. An unsure answer drops the
    /// watch: the next full snapshot places new ones.
    fn written_since(&mut self, root: &Path) -> Option<Vec<String>> {
        use nix::sys::inotify::AddWatchFlags as F;
        let w = self.watch.as_ref()?;
        let mut out = Vec::new();
        let mut sure = w.root == root && w.exclude == exclude_stamp(root);
        while sure {
            match w.inotify.read_events() {
                Ok(events) => {
                    for e in events {
                        if e.mask.contains(F::IN_Q_OVERFLOW) {
                            sure = false;
                            break;
                        }
                        let Some(dir) = w.dirs.get(&e.wd) else {
                            sure = false;
                            break;
                        };
                        let name = e.name.map(|n| n.to_string_lossy().into_owned());
                        out.push(match name {
                            Some(n) if dir.is_empty() => n,
                            Some(n) => format!("{dir}/{n}"),
                            None => dir.clone(),
                        });
                    }
                }
                Err(nix::errno::Errno::EAGAIN) => break,
                Err(_) => sure = false,
            }
        }
        if !sure {
            if let Some(w) = self.watch.take() {
                w.close_later();
            }
            return None;
        }
        Some(out)
    }

    /// Whether nothing under `root` that the last snapshot of it read has been written through
    /// the file system since the last look: no folder it listed had an entry created, removed,
    /// renamed, written, closed after writing or changed in mode, and `.git/info/exclude` is as
    /// it was. `false` when unsure.
    ///
    /// A write through a shared memory mapping makes its event only when the file is closed,
    /// and one through a second name in an unwatched folder makes none: so this is no evidence
    /// about what a process that is still running could have done. Forge asks it only where
    /// every process of an agent or a check has ended and a full look at what an agent could
    /// write follows (the snapshot just before an agent call).
    pub fn quiet(&mut self, root: &Path) -> bool {
        // A file with a second name can be written through it with no event here.
        if self.watch.as_ref().is_none_or(|w| w.linked) {
            return false;
        }
        self.written_since(root).is_some_and(|w| w.is_empty())
    }

    /// The working tree under `root` as git would store it, with `tracked` (a commit's tree)
    /// deciding what is tracked: tracked paths are read whatever the ignore rules say, a
    /// submodule's gitlink is taken from `tracked`, and everything else not ignored is read.
    pub fn snapshot(&mut self, root: &Path, tracked: &Snapshot) -> Result<Snapshot> {
        use nix::sys::inotify::{InitFlags, Inotify};
        let started = SystemTime::now();
        if let Some(old) = self.watch.take() {
            old.close_later();
        }
        let exclude_at_start = exclude_stamp(root);
        // On a network or FUSE file system another machine's writes make no event here.
        let inotify = if self.watching && events_local(root) {
            Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()
        } else {
            None
        };
        let arming = Arming::new(inotify.as_ref());
        let first = Job {
            rel: String::new(),
            state: std::sync::Arc::new(root_rules(root)),
        };
        let read = self.read_walk(root, tracked, first, &arming, started)?;
        let dirs = std::mem::take(&mut *arming.dirs.lock().unwrap_or_else(|e| e.into_inner()));
        let (complete, linked) = (
            arming.complete(),
            arming.linked.load(std::sync::atomic::Ordering::Relaxed),
        );
        if let Some(inotify) = inotify
            && complete
            && exclude_stamp(root) == exclude_at_start
        {
            self.watch = Some(Watch {
                inotify,
                root: root.to_path_buf(),
                exclude: exclude_at_start,
                dirs,
                linked,
            });
        }
        Ok(Snapshot {
            entries: read.entries,
            ignored: read.ignored.into_iter().collect(),
        })
    }

    /// `prev` (the last snapshot of `root`, taken with `tracked`) with only `areas` read again
    /// — what an agent in the kernel sandbox could write — or `None` when that would not be
    /// the working tree as a full snapshot would see it: the watches saw a write outside the
    /// areas (a person, or Forge itself), are unsure, or a file has a second name; an area is
    /// the whole tree or lies in an ignored folder; a tracked file in an area is ignored.
    ///
    /// Sound only where nothing but the sandboxed agent, now ended with all it started, could
    /// have written under the areas' folders, and the kernel let it write nothing else.
    pub fn snapshot_areas(
        &mut self,
        root: &Path,
        tracked: &Snapshot,
        prev: &Snapshot,
        areas: &[String],
    ) -> Result<Option<Snapshot>> {
        let started = SystemTime::now();
        // A submodule's folder is not walked: an area in one is not the walk's to redo.
        let in_gitlink = |a: &String| {
            tracked
                .entries
                .iter()
                .any(|(g, e)| matches!(e, Entry::Gitlink { .. }) && under(a, g))
        };
        // A cut list of ignored files cannot be patched: what the cut left out may be due now.
        if areas.iter().any(|a| a.is_empty() || in_gitlink(a))
            || prev.ignored.len() >= IGNORED_FILES
            || self.watch.as_ref().is_none_or(|w| w.linked)
        {
            return Ok(None);
        }
        // An area inside another is read with it.
        let areas: Vec<String> = areas
            .iter()
            .filter(|a| !areas.iter().any(|b| b != *a && under(a, b)))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let areas = areas.as_slice();
        let Some(written) = self.written_since(root) else {
            return Ok(None);
        };
        if written.iter().any(|p| !areas.iter().any(|a| under(p, a))) {
            return Ok(None);
        }
        let Some(w) = self.watch.take() else {
            return Ok(None);
        };
        let arming = Arming::new(Some(&w.inotify));
        let mut reads = Vec::new();
        for a in areas {
            let Some(rules) = area_rules(root, a) else {
                self.watch = Some(w);
                return Ok(None);
            };
            let first = Job {
                rel: a.clone(),
                state: std::sync::Arc::new(rules),
            };
            let only: BTreeMap<String, Entry> = tracked
                .entries
                .iter()
                .filter(|(p, _)| under(p, a))
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect();
            let only = Snapshot {
                entries: only,
                ignored: Default::default(),
            };
            match std::fs::symlink_metadata(root.join(a)) {
                Ok(m) if m.is_dir() => {
                    reads.push(self.read_walk(root, &only, first, &arming, started)?)
                }
                // A file area, or nothing there: its one entry.
                _ => {
                    let mut entries = BTreeMap::new();
                    if let Some(e) = self.read(root, a, started)? {
                        entries.insert(a.clone(), e);
                    }
                    reads.push(WalkRead {
                        entries,
                        ignored: Vec::new(),
                    });
                }
            }
        }
        let new_dirs = std::mem::take(&mut *arming.dirs.lock().unwrap_or_else(|e| e.into_inner()));
        let (complete, linked) = (
            arming.complete(),
            arming.linked.load(std::sync::atomic::Ordering::Relaxed),
        );
        let mut w = w;
        w.dirs.extend(new_dirs);
        w.linked |= linked;
        if !complete {
            w.close_later();
            return Ok(None);
        }
        self.watch = Some(w);
        let in_areas = |p: &String| areas.iter().any(|a| under(p, a));
        let mut entries: BTreeMap<String, Entry> = prev
            .entries
            .iter()
            .filter(|(p, _)| !in_areas(p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        let mut ignored: Vec<(String, Entry)> = prev
            .ignored
            .iter()
            .filter(|(p, _)| !in_areas(p))
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        for r in reads {
            entries.extend(r.entries);
            ignored.extend(r.ignored);
        }
        ignored.sort_by(|a, b| a.0.cmp(&b.0));
        ignored.truncate(IGNORED_FILES);
        Ok(Some(Snapshot {
            entries,
            ignored: ignored.into_iter().collect(),
        }))
    }

    /// Walks from `first` and reads what it found: files, nested repositories, the small
    /// ignored files (sorted by name), tracked gitlinks, and tracked files the walk did not meet
    /// (under an ignored folder: read by path, outside every watch, so the arming is unsure).
    fn read_walk(
        &mut self,
        root: &Path,
        tracked: &Snapshot,
        first: Job,
        arming: &Arming,
        started: SystemTime,
    ) -> Result<WalkRead> {
        let gitlinks: HashSet<&str> = tracked
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::Gitlink { .. }))
            .map(|(p, _)| p.as_str())
            .collect();
        let t = crate::trace::span("snap-list");
        let found = list(root, &gitlinks, first, arming);
        drop(t);
        let t = crate::trace::span("snap-read");
        let mut entries = BTreeMap::new();
        for (rel, entry) in self.read_many(root, found.files, started) {
            if let Some(entry) = entry? {
                entries.insert(rel, entry);
            }
        }
        for rel in found.restat {
            if let Some(entry) = self.read(root, &rel, started)? {
                entries.insert(rel, entry);
            }
        }
        for rel in &found.nested_repos {
            entries.insert(rel.clone(), Entry::Nested);
        }
        // The person's small ignored files, the first ones by name (the same ones each time).
        let mut small = found.ignored_small;
        small.sort_by(|a, b| a.0.cmp(&b.0));
        small.truncate(IGNORED_FILES);
        let mut ignored = Vec::new();
        for (rel, meta) in small {
            if let Some(e) = self.read_meta(root, &rel, meta, started)? {
                ignored.push((rel, e));
            }
        }
        drop(t);
        let _t = crate::trace::span("snap-tracked");
        let nested: Vec<&String> = found.nested_repos.iter().chain(&found.skipped).collect();
        let walked: HashSet<String> = arming
            .dirs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for (p, e) in &tracked.entries {
            if let Entry::Gitlink { .. } = e {
                if root.join(p).is_dir() {
                    entries.insert(p.clone(), e.clone());
                }
                continue;
            }
            // Tracked files the walk did not meet: gone, or under an ignored folder (read by
            // path, where no watch sees it change).
            if !found.seen.contains(p) && !nested.iter().any(|n| under(p, n)) {
                match self.read(root, p, started)? {
                    Some(entry) => {
                        arming.unsure();
                        entries.insert(p.clone(), entry);
                    }
                    // Gone: seen coming back only if a watched folder holds where it would be.
                    None if !watched_above(root, p, &walked) => arming.unsure(),
                    None => {}
                }
            }
        }
        Ok(WalkRead { entries, ignored })
    }

    /// One path's entry, hashed from its bytes (or from the cache when its inode is unchanged);
    /// `None` when it is absent or not something git stores (a FIFO, a socket, a device).
    pub fn read(&mut self, root: &Path, rel: &str, started: SystemTime) -> Result<Option<Entry>> {
        let path = root.join(rel);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if is_absent(&e) => {
                self.cache.remove(rel);
                return Ok(None);
            }
            Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
        };
        self.read_meta(root, rel, meta, started)
    }

    /// [`Self::read_meta`] of many paths, in their order: the files the cache does not know
    /// are hashed on a few threads (on a first snapshot of a large tree, hashing is most of
    /// the time and every file is independent), then remembered here.
    pub fn read_many(
        &mut self,
        root: &Path,
        items: Vec<(String, std::fs::Metadata)>,
        started: SystemTime,
    ) -> Vec<(String, Result<Option<Entry>>)> {
        let mut out: Vec<(String, Option<Result<Option<Entry>>>)> = Vec::with_capacity(items.len());
        let mut misses: Vec<(usize, std::fs::Metadata)> = Vec::new();
        for (rel, meta) in items {
            match self.cache.get(&rel) {
                Some((s, e)) if *s == Stamp::of(&meta) => {
                    out.push((rel, Some(Ok(Some(e.clone())))))
                }
                _ => {
                    misses.push((out.len(), meta));
                    out.push((rel, None));
                }
            }
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 4);
        let format = self.format;
        let hashed: Vec<(usize, std::fs::Metadata, Result<Hashed>)> = if misses.len() < 64
            || threads == 1
        {
            misses
                .into_iter()
                .map(|(i, m)| {
                    let h = hash_entry(&root.join(&out[i].0), &m, format);
                    (i, m, h)
                })
                .collect()
        } else {
            let chunk = misses.len().div_ceil(threads);
            let names: Vec<&str> = out.iter().map(|(r, _)| r.as_str()).collect();
            std::thread::scope(|scope| {
                let names = &names;
                let handles: Vec<_> = misses
                    .chunks(chunk)
                    .map(|part| {
                        scope.spawn(move || {
                            part.iter()
                                .map(|(i, m)| {
                                    (*i, m.clone(), hash_entry(&root.join(names[*i]), m, format))
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        for (i, meta, h) in hashed {
            let rel = out[i].0.clone();
            let r = match h {
                Ok(Hashed::Entry(entry)) => {
                    if Stamp::of(&meta).changed_before(started) {
                        self.cache
                            .insert(rel.clone(), (Stamp::of(&meta), entry.clone()));
                    } else {
                        self.cache.remove(&rel);
                    }
                    Ok(Some(entry))
                }
                Ok(Hashed::NotStored) => Ok(None),
                Ok(Hashed::Replaced) => {
                    self.cache.remove(&rel);
                    self.read_once_more(root, &rel, started)
                }
                Err(e) => Err(e),
            };
            out[i].1 = Some(r);
        }
        out.into_iter()
            .map(|(rel, r)| (rel, r.unwrap_or(Ok(None))))
            .collect()
    }

    /// [`Self::read`] with the path's `lstat` already taken (from a folder listing).
    pub fn read_meta(
        &mut self,
        root: &Path,
        rel: &str,
        meta: std::fs::Metadata,
        started: SystemTime,
    ) -> Result<Option<Entry>> {
        let path = root.join(rel);
        let stamp = Stamp::of(&meta);
        if let Some((s, e)) = self.cache.get(rel)
            && *s == stamp
        {
            return Ok(Some(e.clone()));
        }

        let entry = match hash_entry(&path, &meta, self.format)? {
            Hashed::Entry(e) => e,
            Hashed::NotStored => return Ok(None),
            Hashed::Replaced => {
                // Replaced between the stat and the open: read it again next time.
                self.cache.remove(rel);
                return self.read_once_more(root, rel, started);
            }
        };
        if stamp.changed_before(started) {
            self.cache.insert(rel.to_string(), (stamp, entry.clone()));
        } else {
            self.cache.remove(rel);
        }
        Ok(Some(entry))
    }

    fn read_once_more(
        &mut self,
        root: &Path,
        rel: &str,
        started: SystemTime,
    ) -> Result<Option<Entry>> {
        let path = root.join(rel);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if is_absent(&e) => return Ok(None),
            Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
        };
        if !meta.file_type().is_file() {
            return self.read(root, rel, started);
        }
        if meta.len() > MAX_FILE {
            return Ok(Some(Entry::TooLarge { size: meta.len() }));
        }
        match hash_regular(&path, &meta, self.format)? {
            Some(oid) => Ok(Some(Entry::File {
                oid,
                exec: meta.mode() & 0o100 != 0,
            })),
            None => Err(Error::usage(format!(
                "{} keeps changing while Forge reads it: is a process still writing it?",
                path.display()
            ))),
        }
    }
}

/// What [`hash_entry`] made of a path.
enum Hashed {
    Entry(Entry),
    /// Not something git stores (a FIFO, a socket, a device).
    NotStored,
    /// No longer the inode its `lstat` described.
    Replaced,
}

/// The entry of the file or link at `path` whose `lstat` is `meta`, hashed from its bytes;
/// `None` for anything git does not store, or a path no longer the inode `meta` describes.
pub fn entry_at(
    path: &Path,
    meta: &std::fs::Metadata,
    format: ObjectFormat,
) -> Result<Option<Entry>> {
    Ok(match hash_entry(path, meta, format)? {
        Hashed::Entry(e) => Some(e),
        Hashed::NotStored | Hashed::Replaced => None,
    })
}

/// The entry of the file or link at `path` whose `lstat` is `meta`, hashed from its bytes.
fn hash_entry(path: &Path, meta: &std::fs::Metadata, format: ObjectFormat) -> Result<Hashed> {
    let ft = meta.file_type();
    Ok(if ft.is_symlink() {
        let target = std::fs::read_link(path)
            .map_err(|e| Error::io(format!("cannot read the link {}", path.display()), e))?;
        use std::os::unix::ffi::OsStrExt;
        Hashed::Entry(Entry::Symlink {
            oid: format.oid("blob", target.as_os_str().as_bytes()),
        })
    } else if ft.is_file() && meta.len() > MAX_FILE {
        Hashed::Entry(Entry::TooLarge { size: meta.len() })
    } else if ft.is_file() {
        match hash_regular(path, meta, format)? {
            Some(oid) => Hashed::Entry(Entry::File {
                oid,
                exec: meta.mode() & 0o100 != 0,
            }),
            None => Hashed::Replaced,
        }
    } else {
        Hashed::NotStored
    })
}

/// What a walk of a working tree found: each file not ignored with its `lstat`, the small
/// ignored files, nested repositories, and the gitlink folders it did not enter.
#[derive(Default)]
struct Found {
    files: Vec<(String, std::fs::Metadata)>,
    ignored_small: Vec<(String, std::fs::Metadata)>,
    nested_repos: Vec<String>,
    skipped: Vec<String>,
    /// Files whose `lstat` failed in the listing: read again by path.
    restat: Vec<String>,
    /// Every file path the walk met (not ignored), read or not (a FIFO is met, not read).
    seen: HashSet<String>,
}

/// The `.gitignore` rules in force in a folder, outermost first.
type Rules = std::sync::Arc<Vec<ignore::gitignore::Gitignore>>;
type Job = super::walk::Job<Rules>;

/// Lists the tree under `root` ([`super::walk::par_walk`]). The rules: a folder's `.gitignore`
/// applies below it (the innermost matching rule decides), a folder holding `.git` is a nested
/// repository, a tracked gitlink's folder is not entered, Forge's own folders are skipped.
fn list(root: &Path, gitlinks: &HashSet<&str>, first: Job, arming: &Arming) -> Found {
    let mut all = Found::default();
    for f in super::walk::par_walk(first, |job, found: &mut Found| {
        list_dir(root, gitlinks, arming, job, found)
    }) {
        all.files.extend(f.files);
        all.ignored_small.extend(f.ignored_small);
        all.nested_repos.extend(f.nested_repos);
        all.skipped.extend(f.skipped);
        all.restat.extend(f.restat);
        all.seen.extend(f.seen);
    }
    all
}

/// The rules of lowest priority, the root's: `.git/info/exclude`.
fn root_rules(root: &Path) -> Vec<ignore::gitignore::Gitignore> {
    let mut ignores = Vec::new();
    let exclude = root.join(".git/info/exclude");
    if exclude.is_file() {
        let mut b = ignore::gitignore::GitignoreBuilder::new(root);
        b.add(&exclude);
        if let Ok(g) = b.build() {
            ignores.push(g);
        }
    }
    ignores
}

/// `dir`'s `.gitignore` as a matcher, if it has one that is not a folder.
fn dir_rules(dir: &Path) -> Option<ignore::gitignore::Gitignore> {
    let gi = dir.join(".gitignore");
    if !std::fs::symlink_metadata(&gi).is_ok_and(|m| !m.is_dir()) {
        return None;
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new(dir);
    b.add(gi);
    b.build().ok()
}

/// Whether `rules` (outermost first) ignore `path`: the innermost rule that matches decides.
fn is_ignored(rules: &[ignore::gitignore::Gitignore], path: &Path, is_dir: bool) -> bool {
    for g in rules.iter().rev() {
        match g.matched(path, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The ignore rules in force in the folder `area` as a walk from the root would have them on
/// reaching it; `None` when that walk would not reach it (it or a folder above is ignored, a
/// nested repository, `.git`).
fn area_rules(root: &Path, area: &str) -> Option<Vec<ignore::gitignore::Gitignore>> {
    let mut rules = root_rules(root);
    let mut dir = root.to_path_buf();
    let names: Vec<&str> = area.split('/').collect();
    for (i, name) in names.iter().enumerate() {
        if let Some(g) = dir_rules(&dir) {
            rules.push(g);
        }
        if i > 0 && dir.join(".git").exists() {
            return None;
        }
        let child = dir.join(name);
        // A link on the way: the walk from the root records the link, not what it leads to.
        let link = std::fs::symlink_metadata(&child).is_ok_and(|m| m.file_type().is_symlink());
        if *name == ".git" || link || is_ignored(&rules, &child, true) {
            return None;
        }
        dir = child;
    }
    Some(rules)
}

/// One folder of [`list`]: its files into `found`, its subfolders returned as jobs.
fn list_dir(
    root: &Path,
    gitlinks: &HashSet<&str>,
    arming: &Arming,
    job: &Job,
    found: &mut Found,
) -> Vec<Job> {
    let rel_dir = job.rel.as_str();
    let dir = if rel_dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel_dir)
    };
    arming.watch(&dir, rel_dir);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut items: Vec<(String, std::fs::FileType, std::fs::DirEntry)> = Vec::new();
    for e in rd.flatten() {
        let (Ok(name), Ok(ft)) = (e.file_name().into_string(), e.file_type()) else {
            continue;
        };
        items.push((name, ft, e));
    }
    if !rel_dir.is_empty() && items.iter().any(|(n, _, _)| n == ".git") {
        // A repository of its own: git does not track what is in it.
        found.nested_repos.push(rel_dir.to_string());
        return Vec::new();
    }
    let ignores = match items
        .iter()
        .any(|(n, ft, _)| n == ".gitignore" && !ft.is_dir())
        .then(|| dir_rules(&dir))
        .flatten()
    {
        Some(g) => {
            let mut v = (*job.state).clone();
            v.push(g);
            std::sync::Arc::new(v)
        }
        None => job.state.clone(),
    };
    let ignored = |path: &Path, is_dir: bool| is_ignored(&ignores, path, is_dir);
    let mut jobs = Vec::new();
    for (name, ft, e) in items {
        if name == ".git" {
            continue;
        }
        let rel = if rel_dir.is_empty() {
            name.clone()
        } else {
            format!("{rel_dir}/{name}")
        };
        if is_forge_path(&rel) {
            continue;
        }
        let is_dir = ft.is_dir();
        if ignored(&dir.join(&name), is_dir) {
            if ft.is_file()
                && let Ok(m) = e.metadata()
            {
                // A second name (in an ignored folder no walk enters) would carry writes past
                // every watch: the person's ignored files are kept too.
                if m.nlink() > 1 {
                    arming
                        .linked
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                if m.len() <= IGNORED_SIZE {
                    found.ignored_small.push((rel, m));
                }
            }
            continue;
        }
        if is_dir {
            if gitlinks.contains(rel.as_str()) {
                found.skipped.push(rel);
            } else {
                jobs.push(Job {
                    rel,
                    state: ignores.clone(),
                });
            }
            continue;
        }
        // `lstat` relative to the open folder (`fstatat`), not by a path walked from `/`.
        match e.metadata() {
            Ok(m) => {
                if m.nlink() > 1 && !m.is_dir() {
                    arming
                        .linked
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                found.files.push((rel.clone(), m))
            }
            // Read by path later, where an error is an error (absent is no entry).
            Err(_) => found.restat.push(rel.clone()),
        }
        found.seen.insert(rel);
    }
    jobs
}

/// The blob id of a regular file, hashed as it streams (never held whole in memory); `None`
/// if it is no longer the inode `meta` describes, or its length changed while being read.
pub fn hash_regular(
    path: &Path,
    meta: &std::fs::Metadata,
    format: ObjectFormat,
) -> Result<Option<String>> {
    let Some(mut f) = open_regular(path, meta)? else {
        return Ok(None);
    };
    let len = meta.len();
    let header = format!("blob {len}\0");
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen: u64 = 0;
    let err = |e| Error::io(format!("cannot read {}", path.display()), e);
    macro_rules! stream {
        ($h:expr) => {{
            let mut h = $h;
            h.update(header.as_bytes());
            loop {
                let n = f.read(&mut buf).map_err(err)?;
                if n == 0 {
                    break;
                }
                seen += n as u64;
                if seen > len {
                    return Ok(None);
                }
                h.update(&buf[..n]);
            }
            hex(&h.finalize())
        }};
    }
    let oid = match format {
        ObjectFormat::Sha1 => {
            use sha1::Digest;
            stream!(sha1::Sha1::new())
        }
        ObjectFormat::Sha256 => {
            use sha2::Digest;
            stream!(sha2::Sha256::new())
        }
    };
    Ok((seen == len).then_some(oid))
}

/// A regular file opened without following a link and without blocking, if it is still the
/// inode `meta` describes.
fn open_regular(path: &Path, meta: &std::fs::Metadata) -> Result<Option<std::fs::File>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let f = match f {
        Ok(f) => f,
        Err(e) if is_absent(&e) || e.raw_os_error() == Some(nix::libc::ELOOP) => return Ok(None),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let now = f
        .metadata()
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    if !now.file_type().is_file() || now.ino() != meta.ino() || now.dev() != meta.dev() {
        return Ok(None);
    }
    Ok(Some(f))
}

/// The bytes of a regular file, opened without following a link and without blocking (a FIFO
/// swapped in after the stat must not hang Forge); `None` if it is no longer the inode `meta`
/// describes.
pub fn read_regular(path: &Path, meta: &std::fs::Metadata) -> Result<Option<Vec<u8>>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let mut f = match f {
        Ok(f) => f,
        Err(e) if is_absent(&e) || e.raw_os_error() == Some(nix::libc::ELOOP) => return Ok(None),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let now = f
        .metadata()
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    if !now.file_type().is_file() || now.ino() != meta.ino() || now.dev() != meta.dev() {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(now.len() as usize);
    f.read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    Ok(Some(bytes))
}

/// Whether every write under `root` passes through this kernel, so inotify can see it: not on
/// a network file system (NFS, SMB, Ceph, AFS, 9p) or a FUSE one (sshfs, virtiofs), where
/// another machine or the server writes without an event here.
fn events_local(root: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(root.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path and a statfs buffer, both alive across the call.
    let mut st: nix::libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { nix::libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    const REMOTE: [i64; 9] = [
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x0102_1997, // 9p
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x6B41_4653, // kAFS
        0x6573_5546, // FUSE
    ];
    !REMOTE.contains(&(st.f_type as i64))
}

/// Whether the nearest folder above `rel` that exists was walked (and so watched): a file
/// created there, or a folder on the way to it, is an event.
fn watched_above(root: &Path, rel: &str, walked: &HashSet<String>) -> bool {
    let mut at = rel;
    loop {
        let parent = at.rsplit_once('/').map_or("", |(p, _)| p);
        if std::fs::symlink_metadata(root.join(parent)).is_ok_and(|m| m.is_dir()) {
            return walked.contains(parent);
        }
        if parent.is_empty() {
            return false;
        }
        at = parent;
    }
}

/// `.git/info/exclude`'s stat fields (`None` when absent): the ignore rules of lowest priority,
/// outside every watched folder.
fn exclude_stamp(root: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(root.join(".git/info/exclude"))
        .ok()
        .map(|m| Stamp::of(&m))
}

fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// Whether `p` is `dir` or inside it.
fn under(p: &str, dir: &str) -> bool {
    p == dir || (p.len() > dir.len() && p.starts_with(dir) && p.as_bytes()[dir.len()] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    use crate::testing::sh;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(
            dir.path(),
            "git init -q -b main && printf 'a\\n' > a.txt && mkdir -p src build && printf 'x\\n' > src/x.sh && chmod +x src/x.sh \
             && ln -s a.txt link && printf 'build/\\n*.log\\n' > .gitignore && printf 'k\\n' > build/keep.txt \
             && mkdir -p .forge && printf 'c\\n' > .forge/config.yaml \
             && git add -A && git add -f build/keep.txt && git commit -qm init",
        );
        dir
    }

    #[test]
    fn a_working_tree_snapshot_equals_its_commit_and_names_every_change() {
        let dir = repo();
        let d = dir.path();
        let head = git::head(d).unwrap();
        let tree = Snapshot::of_commit(d, &head).unwrap();
        assert!(tree.entries.contains_key("build/keep.txt"));
        assert!(!tree.entries.keys().any(|k| k.starts_with(".forge")));
        assert_eq!(
            tree.entries["src/x.sh"].mode(),
            Some("100755"),
            "{:?}",
            tree.entries
        );
        assert_eq!(tree.entries["link"].mode(), Some("120000"));
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        let now = h.snapshot(d, &tree).unwrap();
        assert_eq!(now, tree, "a fresh checkout is its commit");

        // Every kind of change, including ones `git status` would not show.
        sh(
            d,
            "printf 'b\\n' > a.txt && git update-index --skip-worktree a.txt \
             && printf 'k2\\n' > build/keep.txt && printf 'ignored\\n' > x.log && printf 'n\\n' > new.txt \
             && chmod -x src/x.sh && rm link && ln -s /etc/passwd link && printf 'f\\n' > .forge/config.yaml \
             && mkfifo pipe",
        );
        let after = h.snapshot(d, &tree).unwrap();
        let paths: Vec<String> = tree.diff(&after).into_iter().map(|c| c.path).collect();
        assert_eq!(
            paths,
            ["a.txt", "build/keep.txt", "link", "new.txt", "src/x.sh"]
        );
    }

    /// `quiet` says "nothing was written" only when nothing was: every kind of write to what the
    /// last snapshot read is an event, and what the watches cannot cover makes it unsure.
    #[test]
    fn quiet_only_when_nothing_the_snapshot_read_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p src/deep && printf 'a\\n' > a.txt && printf 'x\\n' > src/deep/x.sh \
             && printf '*.log\\n' > .gitignore && git add -A && git commit -qm init && mkdir -p .git/info",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        let writes = [
            "printf 'y\\n' > src/deep/x.sh",
            "chmod +x a.txt",
            "touch src/deep/new",
            "rm a.txt",
            "mv src/deep src/moved",
            "printf 'x\\n' > .gitignore",
            "echo '*.txt' >> .git/info/exclude",
            ": >> src/deep/x.sh",
        ];
        for w in writes {
            h.snapshot(d, &tree).unwrap();
            assert!(h.quiet(d), "nothing written yet, before `{w}`");
            h.snapshot(d, &tree).unwrap();
            sh(d, w);
            assert!(!h.quiet(d), "`{w}` was not seen");
            // Put back for the next write.
            sh(
                d,
                "git checkout -q -f HEAD -- . && rm -rf src/moved src/deep/new && chmod -x a.txt && rm -f .git/info/exclude",
            );
        }
        // Reading is no write; a file in a folder git ignores was never read.
        h.snapshot(d, &tree).unwrap();
        sh(d, "cat a.txt >/dev/null && echo x > debug.log");
        assert!(
            !h.quiet(d),
            "an ignored file is still a file in a watched folder"
        );
        h.snapshot(d, &tree).unwrap();
        sh(d, "cat a.txt src/deep/x.sh >/dev/null");
        assert!(h.quiet(d));
        // Each answer covers what happened since the last one.
        assert!(h.quiet(d));
        sh(d, "echo z >> a.txt");
        assert!(!h.quiet(d));
        // A file with a second name can be written through it unseen: never quiet.
        let out = tempfile::tempdir_in(d.parent().unwrap()).unwrap();
        sh(d, &format!("ln a.txt {}/second", out.path().display()));
        h.snapshot(d, &tree).unwrap();
        assert!(!h.quiet(d));
        // A tracked file under an ignored folder is read by path, outside every watch.
        let dir = repo();
        let d = dir.path();
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        h.snapshot(d, &tree).unwrap();
        assert!(!h.quiet(d));
    }

    /// Reading only the areas an agent could write gives the snapshot a full walk gives — or
    /// nothing, when anything else was written or could have been.
    #[test]
    fn a_snapshot_of_the_areas_is_the_full_snapshot_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p src tests/unit build && printf 'a\\n' > src/a.sh && printf 't\\n' > tests/t.sh \
             && printf 'u\\n' > tests/unit/u.sh && printf 'build/\\n*.log\\n' > .gitignore && git add -A && git commit -qm init",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        let areas = vec!["tests".to_string()];
        let inside = [
            "printf 'T\\n' > tests/t.sh",
            "rm tests/unit/u.sh",
            "mkdir -p tests/new/deep && echo n > tests/new/deep/n.sh && echo x > tests/new/x.log",
            "printf 'new/\\n' > tests/.gitignore",
            "chmod +x tests/t.sh",
            "ln -s ../src/a.sh tests/link",
        ];
        for w in inside {
            let before = h.snapshot(d, &tree).unwrap();
            sh(d, w);
            let part = h.snapshot_areas(d, &tree, &before, &areas).unwrap();
            let full = h.snapshot(d, &tree).unwrap();
            assert_eq!(part.as_ref(), Some(&full), "`{w}`");
            assert_eq!(
                part.unwrap().ignored.keys().collect::<Vec<_>>(),
                full.ignored.keys().collect::<Vec<_>>(),
                "`{w}`"
            );
        }
        // Anything written outside the areas, or a file with a second name: unsure.
        for w in ["echo b >> src/a.sh", "touch src/new.sh"] {
            let before = h.snapshot(d, &tree).unwrap();
            sh(d, w);
            assert!(
                h.snapshot_areas(d, &tree, &before, &areas)
                    .unwrap()
                    .is_none(),
                "`{w}`"
            );
        }
        // A second name made in an area: this look reads both, the next ones are unsure.
        let before = h.snapshot(d, &tree).unwrap();
        sh(d, "ln tests/t.sh tests/t2.sh");
        let part = h
            .snapshot_areas(d, &tree, &before, &areas)
            .unwrap()
            .unwrap();
        assert!(part.entries.contains_key("tests/t2.sh"));
        assert!(h.snapshot_areas(d, &tree, &part, &areas).unwrap().is_none());
        sh(d, "rm -f tests/t2.sh");
        // An area the walk would not enter, or the whole tree.
        let before = h.snapshot(d, &tree).unwrap();
        assert!(
            h.snapshot_areas(d, &tree, &before, &["build".to_string()])
                .unwrap()
                .is_none()
        );
        let before = h.snapshot(d, &tree).unwrap();
        assert!(
            h.snapshot_areas(d, &tree, &before, &[String::new()])
                .unwrap()
                .is_none()
        );
        // A hard link already there when the watches were placed: never sure.
        sh(d, "ln src/a.sh src/b.sh");
        let before = h.snapshot(d, &tree).unwrap();
        assert!(
            h.snapshot_areas(d, &tree, &before, &areas)
                .unwrap()
                .is_none()
        );
    }

    /// Red-team round 7: an area named through a tracked link into an ignored folder is not
    /// read by itself (a walk from the root records the link, not what it leads to).
    #[test]
    fn an_area_through_a_link_is_not_read_by_itself() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p tests build/t && printf 't\\n' > tests/t.sh \
             && printf 'build/\\n' > .gitignore && ln -s ../build/t tests/lnk \
             && git add -A && git commit -qm init",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        let before = h.snapshot(d, &tree).unwrap();
        sh(
            d,
            "mkdir -p tests/lnk/y && printf 'evil\\n' > tests/lnk/y/evil_test.sh",
        );
        let part = h
            .snapshot_areas(d, &tree, &before, &["tests/lnk/y".to_string()])
            .unwrap();
        assert!(part.is_none(), "{part:?}");
    }

    /// Red-team round 7: a person's ignored file given a second name outside the tree; a
    /// later write through it reaches no watched folder, so no snapshot of areas is trusted
    /// from then on.
    #[test]
    fn an_ignored_file_with_a_second_name_ends_the_area_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir_in(dir.path().parent().unwrap()).unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p tests lib && printf 't\\n' > tests/t.sh \
             && printf '*.local\\n' > lib/.gitignore && printf 'x\\n' > lib/x.sh \
             && git add -A && git commit -qm init && printf 'the person\\n' > lib/settings.local",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        let before = h.snapshot(d, &tree).unwrap();
        assert!(before.ignored.contains_key("lib/settings.local"));
        sh(
            d,
            &format!("ln lib/settings.local {}/x", out.path().display()),
        );
        let after = h
            .snapshot_areas(d, &tree, &before, &["lib".to_string()])
            .unwrap()
            .expect("this call's areas are read whole");
        sh(
            d,
            &format!(
                "printf 'gone\\n' > {}/x && echo more >> tests/t.sh",
                out.path().display()
            ),
        );
        assert!(
            h.snapshot_areas(d, &tree, &after, &["tests".to_string()])
                .unwrap()
                .is_none()
        );
        // A full walk sees it, and it stays unsure while the second name is there.
        let full = h.snapshot(d, &tree).unwrap();
        assert_ne!(
            full.ignored.get("lib/settings.local"),
            after.ignored.get("lib/settings.local")
        );
        assert!(
            h.snapshot_areas(d, &tree, &full, &["tests".to_string()])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_forged_stat_cannot_hide_a_same_size_edit() {
        let dir = repo();
        let d = dir.path();
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::of_repo(d).unwrap());
        // Old enough for the cache to keep it.
        sh(d, "touch -d '2020-01-01' a.txt");
        std::thread::sleep(RACY * 2);
        let first = h.snapshot(d, &tree).unwrap();
        // Same size, same mtime: only the ctime (which no process can set) tells.
        sh(d, "printf 'z\\n' > a.txt && touch -d '2020-01-01' a.txt");
        let second = h.snapshot(d, &tree).unwrap();
        assert_ne!(first.entries["a.txt"], second.entries["a.txt"]);
        let diff = tree.diff(&second);
        assert_eq!(diff.len(), 1);
        assert_eq!(diff[0].path, "a.txt");
    }

    #[test]
    fn ignore_rules_are_the_trees_own() {
        let dir = repo();
        let d = dir.path();
        sh(
            d,
            "mkdir -p web/dist web/src && printf 'dist/\n*.tmp\n!keep.tmp\n' > web/.gitignore \
             && echo x > web/dist/app.js && echo y > web/src/a.tmp && echo z > web/src/keep.tmp \
             && echo w > web/src/a.js && echo local > mine.txt && printf 'mine.txt\n' >> .git/info/exclude",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::Sha1);
        let s = h.snapshot(d, &tree).unwrap();
        let new: Vec<String> = tree.diff(&s).into_iter().map(|c| c.path).collect();
        assert_eq!(new, ["web/.gitignore", "web/src/a.js", "web/src/keep.tmp"]);
    }

    #[test]
    fn nested_repositories_are_one_entry_and_not_read() {
        let dir = repo();
        let d = dir.path();
        sh(
            d,
            "git init -q vendor/lib && printf 'x\\n' > vendor/lib/x.txt",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let mut h = Hasher::new(ObjectFormat::Sha1);
        let s = h.snapshot(d, &tree).unwrap();
        assert_eq!(s.entries.get("vendor/lib"), Some(&Entry::Nested));
        assert!(!s.entries.contains_key("vendor/lib/x.txt"));
    }

    #[test]
    fn oids_match_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"hello\n").unwrap();
        let out = Command::new("git")
            .args(["hash-object", "--no-filters", "f"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            ObjectFormat::Sha1.oid("blob", b"hello\n"),
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }

    /// The merge in `diff` against its definition (a lookup of every path on both sides), on
    /// pairs of snapshots that share, drop, add and change paths, prefixes of each other among
    /// them (`a` and `a/b`, `a-b`: `/` sorts after `-`).
    #[test]
    fn diff_is_the_lookup_definition() {
        let e = |o: u64| Entry::File {
            oid: format!("{o:040x}"),
            exec: o.is_multiple_of(7),
        };
        let names = [
            "a", "a-b", "a/b", "a/b/c", "b", "ba", "c.rs", "z", "é", ".forge/x",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..500 {
            let mut pick = || {
                let mut m = BTreeMap::new();
                for n in names {
                    let r = next();
                    if !r.is_multiple_of(3) {
                        m.insert(n.to_string(), e(r % 4));
                    }
                }
                Snapshot {
                    entries: m,
                    ..Default::default()
                }
            };
            let (x, y) = (pick(), pick());
            let mut want: Vec<Change> = Vec::new();
            for (p, b) in &x.entries {
                match y.entries.get(p) {
                    Some(a) if a == b => {}
                    a => want.push(Change {
                        path: p.clone(),
                        before: Some(b.clone()),
                        after: a.cloned(),
                    }),
                }
            }
            for (p, a) in &y.entries {
                if !x.entries.contains_key(p) {
                    want.push(Change {
                        path: p.clone(),
                        before: None,
                        after: Some(a.clone()),
                    });
                }
            }
            want.sort_by(|a, b| a.path.cmp(&b.path));
            assert_eq!(x.diff(&y), want);
            assert_eq!(x.with(&x.diff(&y)), y);
        }
    }

    #[test]
    fn diff_with_and_overlay_compose() {
        let e = |o: &str| Entry::File {
            oid: o.into(),
            exec: false,
        };
        let a = Snapshot {
            entries: [("x".to_string(), e("1")), ("y".to_string(), e("2"))].into(),
            ..Default::default()
        };
        let b = Snapshot {
            entries: [("x".to_string(), e("1")), ("z".to_string(), e("3"))].into(),
            ..Default::default()
        };
        let d = a.diff(&b);
        assert_eq!(
            d.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
            ["y", "z"]
        );
        assert_eq!(a.with(&d), b);
        assert_eq!(a.overlay(&b, &["z".into()]).entries.len(), 3);
        assert_eq!(a.overlay(&b, &["y".into()]).entries.len(), 1);
    }
}
