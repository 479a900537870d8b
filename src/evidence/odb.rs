//! Git's object store as Forge uses it: blobs stored from bytes Forge hashed, objects read back
//! only after their bytes hash to their id, trees and commits checked after they are written.
//!
//! The store is a folder any agent can write. `git hash-object -w` does not rewrite an object
//! that already exists, and git does not re-hash what it reads, so an object planted under an
//! honest id (a weakened test's bytes named by the honest test's hash) would otherwise become
//! what Forge commits and what the checks run. Every read here is verified; [`Stamp`] notices
//! object files an agent added or rewrote, so they are verified before anything relies on them.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::snapshot::{Entry, ObjectFormat, Snapshot};
use crate::git;

/// Why an object cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store holds bytes that do not hash to the object's id, or lacks the object.
    #[error("git's object store is tampered with: {0}")]
    Tampered(String),
    #[error(transparent)]
    Other(#[from] crate::Error),
}

impl From<Error> for crate::Error {
    fn from(e: Error) -> crate::Error {
        match e {
            Error::Other(e) => e,
            Error::Tampered(m) => crate::Error::usage(format!(
                "git's object store is tampered with: {m}; run `git fsck` and remove the bad objects"
            )),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A person's identity for the commits Forge makes, read once with their config.
#[derive(Debug, Clone)]
pub struct Ident {
    pub name: String,
    pub email: String,
}

impl Ident {
    /// `user.name`/`user.email` as the person's git sees them (repository, then global).
    pub fn of_person(root: &Path) -> crate::Result<Ident> {
        let get = |k: &str| {
            git::as_person(root, &["config", k])
                .ok()
                .map(|o| String::from_utf8_lossy(&o).trim().to_string())
                .filter(|s| !s.is_empty())
        };
        match (get("user.name"), get("user.email")) {
            (Some(name), Some(email)) => Ok(Ident { name, email }),
            _ => Err(crate::Error::usage(format!(
                "git does not know who you are in {}: set `git config user.name \"Your Name\"` and `git config user.email you@example.com` (Forge's commits carry your name)",
                root.display()
            ))),
        }
    }
}

pub struct Odb<'a> {
    pub root: &'a Path,
    pub format: ObjectFormat,
    /// Blobs already read and verified, kept by whoever reads the store again and again (a
    /// run writes the same test and code files into its checkout check after check).
    blobs: Option<Arc<BlobCache>>,
}

/// Verified blobs by id, up to a total size: an id names its bytes for good, so what was
/// verified once needs no `git cat-file` again.
#[derive(Default)]
pub struct BlobCache {
    held: Mutex<Held>,
}

/// The blobs kept, and their total size.
#[derive(Default)]
struct Held {
    by_id: HashMap<String, Arc<[u8]>>,
    bytes: usize,
}

impl BlobCache {
    /// What one run keeps in memory at most, and the largest blob it keeps.
    const BUDGET: usize = 64 << 20;
    const LARGEST: usize = 1 << 20;

    fn get(&self, oid: &str) -> Option<Arc<[u8]>> {
        self.held.lock().ok()?.by_id.get(oid).cloned()
    }

    fn put(&self, oid: &str, bytes: &[u8]) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        if bytes.len() > Self::LARGEST || held.bytes + bytes.len() > Self::BUDGET {
            return;
        }
        held.bytes += bytes.len();
        held.by_id.insert(oid.to_string(), Arc::from(bytes));
    }
}

impl<'a> Odb<'a> {
    pub fn new(root: &'a Path, format: ObjectFormat) -> Odb<'a> {
        Odb {
            root,
            format,
            blobs: None,
        }
    }

    /// The same store, with blobs it reads kept in (and taken from) `cache`.
    pub fn with_cache(mut self, cache: Arc<BlobCache>) -> Odb<'a> {
        self.blobs = Some(cache);
        self
    }

    /// The objects `oids`, each verified: present, of `kind`, and hashing to its id.
    pub fn read(&self, oids: &[&str], kind: &str) -> Result<HashMap<String, Vec<u8>>> {
        let mut out = HashMap::new();
        let cache = self.blobs.as_deref().filter(|_| kind == "blob");
        let oids: Vec<&str> = match cache {
            Some(c) => oids
                .iter()
                .copied()
                .filter(|o| match c.get(o) {
                    Some(b) => {
                        out.insert(o.to_string(), b.to_vec());
                        false
                    }
                    None => !out.contains_key(*o),
                })
                .collect(),
            None => oids.to_vec(),
        };
        if oids.is_empty() {
            return Ok(out);
        }
        let mut input = Vec::new();
        for o in &oids {
            input.extend_from_slice(o.as_bytes());
            input.push(b'\n');
        }
        let raw = git::git_stdin(self.root, &["cat-file", "--batch"], &input)?;
        let mut at = 0;
        for o in oids {
            let Some(nl) = raw[at..].iter().position(|&b| b == b'\n') else {
                return Err(Error::Tampered(format!("object {o} could not be read")));
            };
            let header = String::from_utf8_lossy(&raw[at..at + nl]).into_owned();
            at += nl + 1;
            let mut f = header.split(' ');
            let (Some(id), Some(ty), Some(size)) = (f.next(), f.next(), f.next()) else {
                return Err(Error::Tampered(format!("object {o} is missing")));
            };
            let size: usize = size
                .parse()
                .map_err(|_| Error::Tampered(format!("object {o}: bad header `{header}`")))?;
            if at + size > raw.len() {
                return Err(Error::Tampered(format!("object {o} is cut short")));
            }
            let bytes = raw[at..at + size].to_vec();
            at += size + 1;
            if id != o || ty != kind || self.format.oid(ty, &bytes) != o {
                return Err(Error::Tampered(format!(
                    "object {o} does not hold what its id says (a planted object?)"
                )));
            }
            if let Some(c) = cache {
                c.put(o, &bytes);
            }
            out.insert(id.to_string(), bytes);
        }
        Ok(out)
    }

    /// Stores `bytes` as a blob; its id. For content Forge itself made or read (a name with a
    /// line break, a link's target, the clean room's stubbed file).
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String> {
        let got = git::git_stdin(
            self.root,
            &["hash-object", "-w", "--no-filters", "-t", "blob", "--stdin"],
            bytes,
        )?;
        Ok(String::from_utf8_lossy(&got).trim().to_string())
    }

    /// Stores the working-tree paths of `items` (whose entries Forge hashed) as blobs, then
    /// reads each back and checks it: the store now holds exactly those bytes under those ids.
    pub fn store(&self, items: &[(&str, &Entry)]) -> Result<()> {
        let mut files: Vec<(&str, &str)> = Vec::new();
        for (p, e) in items {
            match e {
                // `--stdin-paths` takes one name per line: a name with a line break in it is
                // stored from the bytes Forge reads itself.
                Entry::File { oid, .. } if p.contains('\n') => {
                    let path = self.root.join(p);
                    let bytes = std::fs::symlink_metadata(&path)
                        .ok()
                        .and_then(|m| super::snapshot::read_regular(&path, &m).ok().flatten())
                        .ok_or_else(|| Error::Other(changed_while_read(p)))?;
                    if self.put_blob(&bytes)? != *oid {
                        return Err(Error::Other(changed_while_read(p)));
                    }
                }
                Entry::File { oid, .. } => files.push((p, oid)),
                Entry::Symlink { oid } => {
                    let target = std::fs::read_link(self.root.join(p))
                        .map_err(|e| crate::Error::io(format!("cannot read the link {p}"), e))?;
                    use std::os::unix::ffi::OsStrExt;
                    if self.put_blob(target.as_os_str().as_bytes())? != *oid {
                        return Err(Error::Other(changed_while_read(p)));
                    }
                }
                Entry::Gitlink { .. } | Entry::Nested | Entry::TooLarge { .. } => {}
            }
        }
        if !files.is_empty() {
            let mut input = Vec::new();
            for (p, _) in &files {
                input.extend_from_slice(p.as_bytes());
                input.push(b'\n');
            }
            let got = git::git_stdin(
                self.root,
                &["hash-object", "-w", "--no-filters", "--stdin-paths"],
                &input,
            )?;
            let got = String::from_utf8_lossy(&got);
            for ((p, oid), g) in files.iter().zip(got.lines()) {
                if g.trim() != *oid {
                    return Err(Error::Other(changed_while_read(p)));
                }
            }
        }
        let oids: Vec<&str> = items.iter().filter_map(|(_, e)| blob_oid(e)).collect();
        self.read(&oids, "blob").map(|_| ())
    }

    /// The tree of `base` (whose listing is `have`) with `expected`'s differences applied,
    /// written through a temporary index (never the repository's) and read back: its listing
    /// must be exactly `expected`. Returns the tree and that verified listing.
    ///
    /// `known` holds trees Forge wrote and read back verified before: they are not written or
    /// read again. Every tree written here is added to it.
    pub fn write_tree(
        &self,
        git_dir: &Path,
        base: &str,
        have: &Snapshot,
        expected: &Snapshot,
        known: &mut std::collections::HashSet<String>,
    ) -> Result<(String, Snapshot)> {
        // A path git stores that is not UTF-8 is in no snapshot (or listing) Forge reads: such a
        // base goes through git's own index, which keeps it or fails.
        let lossy = have.entries.keys().any(|p| p.contains('\u{FFFD}'));
        if !lossy && let Some(done) = self.write_tree_direct(base, expected, known)? {
            return Ok(done);
        }
        let tmp = tempfile::Builder::new()
            .prefix("forge-index-")
            .tempfile_in(git_dir)
            .map_err(|e| {
                crate::Error::io(
                    format!("cannot create a temp index in {}", git_dir.display()),
                    e,
                )
            })?;
        let env = [("GIT_INDEX_FILE", tmp.path())];
        git::git_env(self.root, &["read-tree", base], &env)?;
        let zero = "0".repeat(self.format_len());
        let mut info = Vec::new();
        for c in have.diff(expected) {
            match c.after.as_ref().and_then(|e| Some((e.mode()?, e.oid()?))) {
                Some((mode, oid)) => info.extend_from_slice(format!("{mode} {oid}\t").as_bytes()),
                None => info.extend_from_slice(format!("0 {zero}\t").as_bytes()),
            }
            info.extend_from_slice(c.path.as_bytes());
            info.push(0);
        }
        if !info.is_empty() {
            git::git_stdin_env(
                self.root,
                &["update-index", "-z", "--index-info"],
                &info,
                &env,
            )?;
        }
        let tree = git::git_env(self.root, &["write-tree"], &env)?;
        let tree = String::from_utf8_lossy(&tree).trim().to_string();
        // Forge's own paths in `base` stay as they were; the rest must be what Forge judged.
        let listed = Snapshot::of_commit(self.root, &tree)?;
        let storable = Snapshot {
            ignored: Default::default(),
            entries: expected
                .entries
                .iter()
                .filter(|(_, e)| e.mode().is_some())
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect(),
        };
        if listed != storable {
            let wrong: Vec<String> = storable
                .diff(&listed)
                .into_iter()
                .map(|c| c.path)
                .take(5)
                .collect();
            return Err(Error::Tampered(format!(
                "tree {tree} does not list what Forge wrote into it ({})",
                wrong.join(", ")
            )));
        }
        Ok((tree, listed))
    }

    /// [`Self::write_tree`] without an index: every tree object of `expected` (with `base`'s
    /// own Forge paths, as an index read from `base` would keep them) built here, written in
    /// one `git mktree --batch`, and each read back and checked against the bytes built — so
    /// the store holds exactly these trees. `None` when a path is one git's index would judge
    /// itself (a name outside plain ASCII, a `.git` look-alike, a file and a folder at one
    /// path): those go through the index and its checks.
    fn write_tree_direct(
        &self,
        base: &str,
        expected: &Snapshot,
        known: &mut std::collections::HashSet<String>,
    ) -> Result<Option<(String, Snapshot)>> {
        let storable: BTreeMap<String, Entry> = expected
            .entries
            .iter()
            .filter(|(_, e)| e.mode().is_some())
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        if !storable
            .iter()
            .all(|(p, e)| plain_path(p, matches!(e, Entry::Symlink { .. })))
        {
            return Ok(None);
        }
        // Forge's own paths are not in a snapshot: they come from `base` unchanged.
        let out = git::git(
            self.root,
            &["ls-tree", "-z", base, "--", ".forge", ".tmp/.forge"],
        )?;
        let mut kept: Vec<(String, String, String)> = Vec::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = rec.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let head = String::from_utf8_lossy(&rec[..tab]);
            let path = String::from_utf8_lossy(&rec[tab + 1..]).into_owned();
            let f: Vec<&str> = head.split(' ').collect();
            if let [mode, _, oid] = f[..] {
                kept.push((path, mode.to_string(), oid.to_string()));
            }
        }
        let mut items: Vec<(String, String, String)> = storable
            .iter()
            .filter_map(|(p, e)| Some((p.clone(), e.mode()?.to_string(), e.oid()?.to_string())))
            .chain(kept)
            .collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        let mut trees = Vec::new();
        let Some(root) = build_tree(self.format, &items, &mut trees) else {
            return Ok(None);
        };
        trees.retain(|(oid, _, _)| !known.contains(oid));
        if trees.is_empty() {
            return Ok(Some((
                root,
                Snapshot {
                    entries: storable,
                    ignored: Default::default(),
                },
            )));
        }
        // NUL-terminated: a name is taken as it is (without `-z`, one starting with `"` is
        // unquoted); an empty record ends each tree.
        let mut input = Vec::new();
        for (_, text, _) in &trees {
            input.extend_from_slice(text.as_bytes());
            input.push(0);
        }
        let got = git::git_stdin(self.root, &["mktree", "-z", "--batch"], &input)?;
        let got = String::from_utf8_lossy(&got);
        let oids: Vec<&str> = trees.iter().map(|(oid, _, _)| oid.as_str()).collect();
        if got.lines().collect::<Vec<_>>() != oids {
            return Err(Error::Tampered(format!(
                "`git mktree` wrote other trees than Forge built (root {root})"
            )));
        }
        let stored = self.read(&oids, "tree")?;
        for (oid, _, bytes) in &trees {
            if stored.get(oid) != Some(bytes) {
                return Err(Error::Tampered(format!(
                    "tree {oid} does not hold what Forge wrote into it"
                )));
            }
        }
        known.extend(oids.iter().map(|o| o.to_string()));
        Ok(Some((
            root,
            Snapshot {
                entries: storable,
                ignored: Default::default(),
            },
        )))
    }

    /// A commit of `tree` on `parent` with `message`, by `ident`, read back and verified.
    pub fn commit(&self, tree: &str, parent: &str, message: &str, ident: &Ident) -> Result<String> {
        let out = git::command(
            self.root,
            &["commit-tree", tree, "-p", parent, "-m", message],
        )
        .env("GIT_AUTHOR_NAME", &ident.name)
        .env("GIT_AUTHOR_EMAIL", &ident.email)
        .env("GIT_COMMITTER_NAME", &ident.name)
        .env("GIT_COMMITTER_EMAIL", &ident.email)
        .output()
        .map_err(|e| crate::Error::io("cannot run `git commit-tree`", e))?;
        if !out.status.success() {
            return Err(Error::Other(crate::Error::usage(format!(
                "`git commit-tree` failed in {}: {}",
                self.root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))));
        }
        let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let got = self.read(&[commit.as_str()], "commit")?;
        let text = String::from_utf8_lossy(&got[&commit]);
        let head: Vec<&str> = text.lines().take(2).collect();
        if head.first() != Some(&format!("tree {tree}").as_str())
            || head.get(1) != Some(&format!("parent {parent}").as_str())
        {
            return Err(Error::Tampered(format!(
                "commit {commit} does not hold tree {tree} on parent {parent}"
            )));
        }
        Ok(commit)
    }

    /// The first parent of `commit`, read from the commit object itself (verified), not from a
    /// commit-graph file or a graft an agent could have written.
    pub fn parent(&self, commit: &str) -> Result<Option<String>> {
        let got = self.read(&[commit], "commit")?;
        let text = String::from_utf8_lossy(&got[commit]);
        Ok(text
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("parent ").map(str::to_string)))
    }

    fn format_len(&self) -> usize {
        match self.format {
            ObjectFormat::Sha1 => 40,
            ObjectFormat::Sha256 => 64,
        }
    }
}

/// A path whose every name git's index takes as it is: printable ASCII without `\\` or `:`, no
/// empty, `.` or `..` name, no name that an NTFS or case-insensitive file system reads as
/// `.git` (`.GIT`, `.git. `, `git~1`), and no link named like a file git reads itself
/// (`.gitmodules`, `.gitattributes`, `.mailmap`, or a short name `…~1`).
fn plain_path(p: &str, link: bool) -> bool {
    let names: Vec<&str> = p.split('/').collect();
    let last = names.len() - 1;
    names.iter().enumerate().all(|(i, name)| {
        let lower = name.to_ascii_lowercase();
        let trimmed = lower.trim_end_matches(['.', ' ']);
        let git_read =
            lower.starts_with(".git") || lower.starts_with(".mailmap") || lower.contains('~');
        !name.is_empty()
            && name != &"."
            && name != &".."
            && trimmed != ".git"
            && !lower.starts_with("git~")
            && !(link && i == last && git_read)
            && name
                .bytes()
                .all(|b| (0x20..0x7f).contains(&b) && b != b'\\' && b != b':')
    })
}

/// The tree objects for `items` (sorted `(path, mode, oid)` of one folder's subtree, paths
/// relative to it), children before their parent, each as (id, `git mktree` input, object
/// bytes); returns the folder's tree id. `None` when a name is both a file and a folder.
fn build_tree(
    format: ObjectFormat,
    items: &[(String, String, String)],
    out: &mut Vec<(String, String, Vec<u8>)>,
) -> Option<String> {
    // (name as git sorts it, mode, type, oid, name)
    let mut rows: Vec<(String, String, &str, String, String)> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let (path, mode, oid) = &items[i];
        match path.split_once('/') {
            None => {
                let kind = match mode.as_str() {
                    "160000" => "commit",
                    "40000" | "040000" => "tree",
                    _ => "blob",
                };
                let key = if kind == "tree" {
                    format!("{path}/")
                } else {
                    path.clone()
                };
                rows.push((
                    key,
                    mode.trim_start_matches('0').to_string(),
                    kind,
                    oid.clone(),
                    path.clone(),
                ));
                i += 1;
            }
            Some((dir, _)) => {
                let prefix = format!("{dir}/");
                let mut sub = Vec::new();
                while i < items.len() && items[i].0.starts_with(&prefix) {
                    let (p, m, o) = &items[i];
                    sub.push((p[prefix.len()..].to_string(), m.clone(), o.clone()));
                    i += 1;
                }
                let oid = build_tree(format, &sub, out)?;
                rows.push((prefix, "40000".into(), "tree", oid, dir.to_string()));
            }
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let mut names = std::collections::HashSet::new();
    if rows.is_empty() || !rows.iter().all(|r| names.insert(r.4.as_str())) {
        return None;
    }
    let mut bytes = Vec::new();
    let mut text = String::new();
    for (_, mode, kind, oid, name) in &rows {
        bytes.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        bytes.extend_from_slice(&unhex(oid)?);
        text.push_str(&format!("{mode:0>6} {kind} {oid}\t{name}\0"));
    }
    let oid = format.oid("tree", &bytes);
    out.push((oid.clone(), text, bytes));
    Some(oid)
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    s.len()
        .is_multiple_of(2)
        .then(|| {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
                .collect()
        })
        .flatten()
}

fn blob_oid(e: &Entry) -> Option<&str> {
    match e {
        Entry::File { oid, .. } | Entry::Symlink { oid } => Some(oid),
        _ => None,
    }
}

fn changed_while_read(p: &str) -> crate::Error {
    crate::Error::usage(format!(
        "{p} changed while Forge stored it: is a process still writing the working tree?"
    ))
}

/// The object store's files as they were at one moment: name → (inode, size, ctime). Two
/// stamps around an agent call name the object files it added or rewrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamp(BTreeMap<String, (u64, u64, i64, i64)>);

/// What changed in the object store between two stamps.
#[derive(Debug, Default)]
pub struct StoreChanges {
    /// Loose objects added or rewritten, by id.
    pub loose: Vec<String>,
    /// Pack index files (`pack-*.idx`) added or rewritten.
    pub packs: Vec<PathBuf>,
    /// Anything else under `objects/` (`info/alternates`, a commit-graph, …).
    pub other: Vec<String>,
}

impl Stamp {
    pub fn take(git_dir: &Path) -> Stamp {
        let objects = git_dir.join("objects");
        let mut out = BTreeMap::new();
        let mut stack = vec![objects.clone()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                if m.is_dir() {
                    stack.push(p);
                    continue;
                }
                let rel = p
                    .strip_prefix(&objects)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.insert(rel, (m.ino(), m.size(), m.ctime(), m.ctime_nsec()));
            }
        }
        Stamp(out)
    }

    pub fn changes_since(&self, before: &Stamp, git_dir: &Path) -> StoreChanges {
        let mut c = StoreChanges::default();
        for (name, s) in &self.0 {
            if before.0.get(name) == Some(s) {
                continue;
            }
            let parts: Vec<&str> = name.split('/').collect();
            match parts.as_slice() {
                [dir, file] if dir.len() == 2 && dir.chars().all(|x| x.is_ascii_hexdigit()) => {
                    c.loose.push(format!("{dir}{file}"))
                }
                ["pack", f] if f.ends_with(".idx") => {
                    c.packs.push(git_dir.join("objects").join(name))
                }
                ["pack", f] if f.ends_with(".pack") => {
                    let idx = git_dir
                        .join("objects")
                        .join(name.trim_end_matches(".pack").to_string() + ".idx");
                    if !c.packs.contains(&idx) {
                        c.packs.push(idx);
                    }
                }
                // Temporary files of a running or killed git, and pack bookkeeping git rewrites.
                ["pack", f]
                    if f.ends_with(".keep")
                        || f.ends_with(".rev")
                        || f.ends_with(".mtimes")
                        || f.starts_with("tmp_") => {}
                ["info", "packs"] => {}
                [f] if f.starts_with("tmp_") => {}
                _ => c.other.push(name.clone()),
            }
        }
        c
    }
}

impl StoreChanges {
    /// Verifies every object file that appeared or changed: loose objects are read and hashed,
    /// packs checked with `git verify-pack` (every object's hash, the checksums). A bad loose
    /// object or pack is removed, so git no longer finds it; what was wrong is returned.
    pub fn verify(&self, odb: &Odb, git_dir: &Path) -> Vec<String> {
        let mut bad = Vec::new();
        for oid in &self.loose {
            // The type is not known: ask git, then hash with it.
            let ok = git::git(odb.root, &["cat-file", "-t", oid])
                .ok()
                .map(|t| String::from_utf8_lossy(&t).trim().to_string())
                .is_some_and(|ty| odb.read(&[oid.as_str()], &ty).is_ok());
            if !ok {
                let p = git_dir.join("objects").join(&oid[..2]).join(&oid[2..]);
                let _ = std::fs::remove_file(&p);
                bad.push(format!("loose object {oid} (removed)"));
            }
        }
        for idx in &self.packs {
            if !idx.exists() {
                continue;
            }
            let ok = git::git(odb.root, &["verify-pack", &idx.to_string_lossy()]).is_ok();
            if !ok {
                let _ = std::fs::remove_file(idx);
                let _ = std::fs::remove_file(idx.with_extension("pack"));
                bad.push(format!(
                    "pack {} (removed)",
                    idx.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
        bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::sh;

    /// A blob read through a cache is verified once and then served from memory, which is why
    /// the store no longer needs to hold it; without the cache the store is read every time.
    /// A planted object is refused either way, and not cached.
    #[test]
    fn verified_blobs_are_kept_by_id_and_planted_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo honest > t && git add t && git commit -qm init",
        );
        let oid = sh(d, "git rev-parse HEAD:t");
        let cache = Arc::new(BlobCache::default());
        let odb = Odb::new(d, ObjectFormat::Sha1).with_cache(cache.clone());
        assert_eq!(odb.read(&[&oid], "blob").unwrap()[&oid], b"honest\n");
        // The object goes from the store: the cached read still holds, the plain one fails.
        let loose = d.join(".git/objects").join(&oid[..2]).join(&oid[2..]);
        std::fs::remove_file(&loose).unwrap();
        assert_eq!(odb.read(&[&oid], "blob").unwrap()[&oid], b"honest\n");
        assert!(
            Odb::new(d, ObjectFormat::Sha1)
                .read(&[&oid], "blob")
                .is_err()
        );
        // An object whose bytes do not hash to its name: refused, and not remembered.
        let other = sh(d, "echo weakened | git hash-object -w --stdin");
        let planted = "0123456789abcdef0123456789abcdef01234567";
        let from = d.join(".git/objects").join(&other[..2]).join(&other[2..]);
        let to = d.join(".git/objects").join(&planted[..2]);
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(&from, to.join(&planted[2..])).unwrap();
        for _ in 0..2 {
            assert!(matches!(
                odb.read(&[planted], "blob"),
                Err(Error::Tampered(_))
            ));
        }
    }

    /// The trees Forge builds itself are, byte for byte, the ones git's index writes: names
    /// that sort differently as folders (`a.b`, `a/b`, `a-b`), modes, links, submodules, and
    /// the base's own Forge paths kept.
    #[test]
    fn trees_built_without_an_index_are_the_ones_git_writes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p a .forge .tmp/.forge .tmp/x && echo 1 > a.b && echo 2 > a/b && echo 3 > a-b && echo 4 > a0 \
             && echo 5 > .forge/config.yaml && echo 6 > .tmp/.forge/s && echo 7 > .tmp/x/y && ln -s a.b link && echo 8 > run.sh && chmod +x run.sh \
             && echo 9 > '\"q\"' && echo 10 > '\"r' \
             && git add -A && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub && git commit -qm init",
        );
        let base = sh(d, "git rev-parse HEAD");
        let tree0 = Snapshot::of_commit(d, &base).unwrap();
        let mut want = tree0.clone();
        want.entries.remove("a-b");
        want.entries
            .insert("a/c".into(), want.entries["a/b"].clone());
        let odb = Odb::new(d, ObjectFormat::Sha1);
        let mut known = Default::default();
        let direct = odb
            .write_tree_direct(&base, &want, &mut known)
            .unwrap()
            .unwrap();
        assert!(known.contains(&direct.0));
        // The same change through a temporary index.
        let by_index = sh(
            d,
            "export GIT_INDEX_FILE=$PWD/.git/t-index && git read-tree HEAD && git update-index --force-remove a-b \
             && git update-index --add --cacheinfo 100644,$(git rev-parse HEAD:a/b),a/c && git write-tree",
        );
        assert_eq!(direct.0, by_index);
        assert_eq!(direct.1, want);
        assert_eq!(
            sh(d, &format!("git ls-tree {} .forge .tmp/.forge", direct.0)),
            sh(d, "git ls-tree HEAD .forge .tmp/.forge")
        );
        // What git's index would judge itself goes through it.
        for odd in [
            ".GIT/config",
            "x/.git./hooks",
            "git~1/config",
            "caf\u{e9}",
            "a\\b",
        ] {
            let mut w = want.clone();
            w.entries.insert(odd.into(), want.entries["a.b"].clone());
            assert!(
                odb.write_tree_direct(&base, &w, &mut known)
                    .unwrap()
                    .is_none(),
                "{odd}"
            );
        }
        let mut w = want.clone();
        w.entries.insert(
            ".gitmodules".into(),
            crate::evidence::Entry::Symlink {
                oid: sh(d, "git rev-parse HEAD:link"),
            },
        );
        assert!(
            odb.write_tree_direct(&base, &w, &mut known)
                .unwrap()
                .is_none()
        );
        // And git refuses the `.git` look-alike there, as before.
        let mut w = want.clone();
        w.entries
            .insert(".GIT/config".into(), want.entries["a.b"].clone());
        assert!(
            odb.write_tree(&d.join(".git"), &base, &tree0, &w, &mut known)
                .is_err()
        );
        // A tracked name that is not UTF-8 is in no snapshot of the working tree: built from
        // the snapshot, the tree would drop it; through git's index the tree keeps it, and does
        // not list what Forge judged, so the commit fails instead.
        sh(
            d,
            "echo 11 > \"$(printf 'caf\\351')\" && git add -A && git commit -qm latin1",
        );
        let base = sh(d, "git rev-parse HEAD");
        let tree1 = Snapshot::of_commit(d, &base).unwrap();
        let mut seen = tree1.clone();
        seen.entries.retain(|p, _| !p.contains('\u{FFFD}'));
        assert_eq!(seen.entries.len() + 1, tree1.entries.len());
        assert!(
            odb.write_tree(&d.join(".git"), &base, &tree1, &seen, &mut known)
                .is_err()
        );
    }

    /// The same in a SHA-256 repository: ids of 64 hex digits, trees of 32-byte ids.
    #[test]
    fn trees_built_without_an_index_in_a_sha256_repository() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main --object-format=sha256 && mkdir -p a && echo 1 > a/x && echo 2 > b \
             && git add -A && git commit -qm init && echo 3 > a/y && git add -A",
        );
        let base = sh(d, "git rev-parse HEAD");
        let tree0 = Snapshot::of_commit(d, &base).unwrap();
        let mut want = tree0.clone();
        want.entries.insert(
            "a/y".into(),
            crate::evidence::Entry::File {
                oid: sh(d, "git rev-parse :a/y"),
                exec: false,
            },
        );
        let odb = Odb::new(d, ObjectFormat::Sha256);
        let (tree, _) = odb
            .write_tree_direct(&base, &want, &mut Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(tree.len(), 64);
        assert_eq!(tree, sh(d, "git write-tree"));
    }

    #[test]
    fn a_planted_object_under_an_honest_id_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo base > a && git add a && git commit -qm init",
        );
        let odb = Odb::new(d, ObjectFormat::Sha1);
        // The honest test's bytes, and their id.
        std::fs::write(d.join("t.sh"), "check honest\n").unwrap();
        let honest = ObjectFormat::Sha1.oid("blob", b"check honest\n");
        // The agent plants a loose object under that id holding the weakened test.
        let weak = sh(d, "printf 'check weak\\n' | git hash-object -w --stdin");
        let from = d.join(".git/objects").join(&weak[..2]).join(&weak[2..]);
        let to_dir = d.join(".git/objects").join(&honest[..2]);
        std::fs::create_dir_all(&to_dir).unwrap();
        std::fs::copy(&from, to_dir.join(&honest[2..])).unwrap();
        let entry = Entry::File {
            oid: honest.clone(),
            exec: false,
        };
        let e = odb.store(&[("t.sh", &entry)]).unwrap_err();
        assert!(matches!(e, Error::Tampered(_)), "{e}");
        // And a stamp taken before the planting names the planted file.
        let _ = std::fs::remove_file(to_dir.join(&honest[2..]));
        let gd = d.join(".git");
        let before = Stamp::take(&gd);
        std::fs::copy(&from, to_dir.join(&honest[2..])).unwrap();
        let changes = Stamp::take(&gd).changes_since(&before, &gd);
        assert_eq!(changes.loose, vec![honest.clone()]);
        let bad = changes.verify(&odb, &gd);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(!to_dir.join(&honest[2..]).exists());
        // Stored honestly now, it reads back.
        odb.store(&[("t.sh", &entry)]).unwrap();
    }

    #[test]
    fn trees_and_commits_are_built_from_snapshots_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo a > a && echo b > b && git add a b && git commit -qm init",
        );
        let base = sh(d, "git rev-parse HEAD");
        std::fs::write(d.join("c"), "c\n").unwrap();
        let mut h = super::super::snapshot::Hasher::new(ObjectFormat::Sha1);
        let tree0 = Snapshot::of_commit(d, &base).unwrap();
        let mut want = tree0.clone();
        let c = h
            .read(d, "c", std::time::SystemTime::now())
            .unwrap()
            .unwrap();
        want.entries.insert("c".into(), c.clone());
        want.entries.remove("b");
        let odb = Odb::new(d, ObjectFormat::Sha1);
        odb.store(&[("c", &c)]).unwrap();
        let (tree, listed) = odb
            .write_tree(
                &d.join(".git"),
                &base,
                &tree0,
                &want,
                &mut Default::default(),
            )
            .unwrap();
        assert_eq!(listed, want);
        let ident = Ident {
            name: "Ada".into(),
            email: "ada@example.com".into(),
        };
        let commit = odb.commit(&tree, &base, "feat: c", &ident).unwrap();
        assert_eq!(odb.parent(&commit).unwrap().as_deref(), Some(base.as_str()));
        assert_eq!(Snapshot::of_commit(d, &commit).unwrap(), want);
        assert_eq!(sh(d, &format!("git log -1 --format=%an {commit}")), "Ada");
    }
}
