//! The candidate tree written out for the checks: a folder outside the repository holding
//! exactly the tree that would be committed — no untracked or ignored file of the working tree
//! (a hand-made `.pyc`, a file a global excludes list hides, a build folder an agent prepared).
//!
//! The folder is kept between checks, and between runs, so only what changed is rewritten (an
//! inode created costs far more than a file read), and kept honest by content: on first use,
//! after each check, and whenever something else could have written it, every file in it is
//! hashed by a [`Hasher`] — whose cache lives in Forge's memory and trusts only an unchanged
//! ctime — and whatever does not match the tree goes: what a check, an agent or an earlier run
//! left there, a file whose mtime was set back, a link. The configured cache
//! folders (`keep`) are the one exception, and the documented trade-off: code a check runs can
//! write them.
//!
//! After each check the folder is swept back to its tree ([`Checkout::settle`]), which is also
//! how a check that rewrote a file of the candidate is caught — unless the check ran on an
//! overlay over the folder ([`Checkout::prepare_layer`], in the kernel sandbox): then the folder
//! was never writable to it, and only the overlay's upper layer, which holds exactly what the
//! check wrote, is read ([`Checkout::settle_layer`]). Until something else could have
//! written the folder (the caller says so: [`Checkout::invalidate`], for an agent call outside
//! the kernel sandbox), the next [`Checkout::sync`] only applies the difference between the two
//! trees; otherwise it sweeps the whole folder first. On a large tree a sweep is most of what a
//! check costs Forge.

use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::odb::{self, Odb};
use super::snapshot::{Entry, Hasher, Snapshot};
use crate::error::Error;

/// What [`Checkout::sync`] did, for the benchmarks and the gate evidence.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SyncStats {
    pub written: usize,
    pub removed: usize,
    pub kept: usize,
}

/// The size from which a checkout outlives its run (see [`Checkout::park`]): below it, writing
/// the tree again costs less than a copy of the project left in the temp folder is worth.
pub const PARK_FILES: usize = 2_000;

pub struct Checkout {
    pub dir: PathBuf,
    /// Relative folders kept between checks (build caches).
    keep: Vec<String>,
    /// Hashes the folder's files; its cache is Forge's memory, never the disk.
    hasher: Hasher,
    /// The tree the folder holds exactly (besides `keep`), as of the last sweep or sync, while
    /// nothing but Forge could have written it since.
    clean: Option<Snapshot>,
    /// The folder's (device, inode) when it was opened. Its path is in the temp folder, which
    /// an agent or a check outside the kernel sandbox can write: a link or another folder put
    /// in its place would make a sweep remove whatever it leads to (the person's repository).
    id: (u64, u64),
    /// Not synced since it was opened: what the cache folders hold came from an earlier run
    /// (parked, or stopped by a crash) and goes before the first check of this one.
    fresh: bool,
}

impl Checkout {
    /// A checkout folder at `dir` (created 0700 if missing; refused if it is not a folder this
    /// user owns — a link planted in the temp folder must not redirect Forge's writes).
    pub fn open(dir: PathBuf, keep: Vec<String>, hasher: Hasher) -> crate::Result<Checkout> {
        match std::fs::symlink_metadata(&dir) {
            Ok(m) => {
                let me = nix::unistd::geteuid().as_raw();
                if !m.is_dir() || m.uid() != me {
                    return Err(Error::usage(format!(
                        "{} exists and is not a folder of yours: remove it, then resume",
                        dir.display()
                    )));
                }
            }
            Err(_) => {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&dir)
                    .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
            }
        }
        let m = std::fs::symlink_metadata(&dir)
            .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
        Ok(Checkout {
            dir,
            keep,
            hasher,
            clean: None,
            id: (m.dev(), m.ino()),
            fresh: true,
        })
    }

    /// The folder at `dir` is still the one opened — not a link, not another folder — or
    /// nothing in it is touched: the run stops, naming it.
    fn still_ours(&self) -> crate::Result<()> {
        let same = std::fs::symlink_metadata(&self.dir)
            .is_ok_and(|m| m.is_dir() && (m.dev(), m.ino()) == self.id);
        if same {
            return Ok(());
        }
        Err(Error::usage(format!(
            "the checks' folder {} was replaced while the run used it (by an agent or a check outside the kernel sandbox): Forge removes nothing through it. Look at what is there now, remove it, then resume",
            self.dir.display()
        )))
    }

    /// Makes the folder hold exactly `tree` (plus the cache folders): every file whose content
    /// is not the tree's goes, and missing ones are written from verified objects.
    pub fn sync(&mut self, odb: &Odb, tree: &Snapshot) -> odb::Result<SyncStats> {
        self.still_ours()?;
        let mut stats = SyncStats::default();
        let mut present: BTreeSet<String> = BTreeSet::new();
        match self.clean.take() {
            Some(was) => {
                // A cache folder kept for `was` but not for `tree` (which now has a path in it,
                // or a file or link above it) goes whole: nothing of it may stand in the tree.
                let now_kept = self.kept_for(tree);
                for k in self.kept_for(&was) {
                    if !now_kept.contains(&k) {
                        remove_entry(&self.dir, &k)?;
                    }
                }
                // Known to hold `was`: only what differs is removed (and rewritten below).
                let mut gone = Vec::new();
                for (p, e) in &was.entries {
                    if tree.entries.get(p) != Some(e) {
                        remove(&self.dir.join(p))?;
                        stats.removed += 1;
                        if !tree.entries.contains_key(p) {
                            gone.push(p.as_str());
                        }
                    }
                }
                stats.kept = was.entries.len() - stats.removed;
                // A folder of `was` that `tree` no longer needs goes too (its files are gone).
                prune_empty(&self.dir, &gone, tree);
                self.fill(odb, tree, |p, e| was.entries.get(p) == Some(e), &mut stats)?;
                self.clean = Some(tree.clone());
                return Ok(stats);
            }
            None => {
                if std::mem::take(&mut self.fresh) {
                    for k in &self.keep {
                        remove_entry(&self.dir, k)?;
                    }
                }
                let started = SystemTime::now();
                self.sweep(tree, &mut present, &mut stats, started)?;
            }
        }
        self.fill(odb, tree, |p, _| present.contains(p), &mut stats)?;
        self.clean = Some(tree.clone());
        Ok(stats)
    }

    /// Writes the entries of `tree` that are not `present` already, from verified objects.
    fn fill(
        &self,
        odb: &Odb,
        tree: &Snapshot,
        present: impl Fn(&str, &Entry) -> bool,
        stats: &mut SyncStats,
    ) -> odb::Result<()> {
        // In the tree's order: a folder before what it holds.
        let todo: Vec<(&String, &Entry)> = tree
            .entries
            .iter()
            .filter(|(p, e)| !present(p, e))
            .filter(|(_, e)| !matches!(e, Entry::Nested))
            .collect();
        let oids: Vec<&str> = todo
            .iter()
            .filter_map(|(_, e)| match e {
                Entry::File { oid, .. } | Entry::Symlink { oid } => Some(oid.as_str()),
                _ => None,
            })
            .collect();
        let blobs = odb.read(&oids, "blob")?;
        for (p, e) in todo {
            write_fresh(&self.dir, p, e, &blobs)?;
            stats.written += 1;
        }
        Ok(())
    }

    /// Something other than Forge may have written the folder (an agent outside the kernel
    /// sandbox can reach the temp folder): the next sync sweeps it whole.
    pub fn invalidate(&mut self) {
        self.clean = None;
    }

    /// After a check: the folder swept back to exactly `tree` — what the check added goes
    /// (build output, a planted `conftest.py`), what it changed of the tree is rewritten from
    /// verified objects — and the tree's files it had changed, named (code under test that
    /// rewrote its own checkout, a test that edits the test).
    pub fn settle(&mut self, odb: &Odb, tree: &Snapshot) -> odb::Result<Vec<String>> {
        self.clean = None;
        self.still_ours()?;
        let mut stats = SyncStats::default();
        let mut present: BTreeSet<String> = BTreeSet::new();
        let started = SystemTime::now();
        self.sweep(tree, &mut present, &mut stats, started)?;
        let rewritten: Vec<String> = tree
            .entries
            .iter()
            .filter(|(p, e)| {
                matches!(e, Entry::File { .. } | Entry::Symlink { .. }) && !present.contains(*p)
            })
            .map(|(p, _)| p.clone())
            .collect();
        // Every file is there again before anything is reported: the folder is clean.
        self.fill(odb, tree, |p, _| present.contains(p), &mut stats)?;
        self.clean = Some(tree.clone());
        Ok(rewritten)
    }

    /// The cache folders kept for a check of `tree`: those that hold no path of the tree and
    /// lie under none of its files or links. A tracked link `src/.build -> .` must not make the
    /// cache `src/.build/cache` a folder of the candidate, and a tracked file inside a cache
    /// folder must be checked like every other.
    pub fn kept_for(&self, tree: &Snapshot) -> Vec<String> {
        self.keep
            .iter()
            .filter(|k| {
                let inside = format!("{k}/");
                let holds = tree.entries.contains_key(k.as_str())
                    || tree
                        .entries
                        .range(inside.clone()..)
                        .next()
                        .is_some_and(|(p, _)| p.starts_with(&inside));
                let mut under_entry = false;
                let mut at = k.as_str();
                while let Some((parent, _)) = at.rsplit_once('/') {
                    under_entry |= tree.entries.contains_key(parent);
                    at = parent;
                }
                !holds && !under_entry
            })
            .cloned()
            .collect()
    }

    /// Removes the folder and everything in it (a check may have left read-only folders), if
    /// it is still the one opened: never through a link or folder put in its place.
    pub fn remove(self) {
        if self.still_ours().is_ok() {
            let _ = remove(&self.dir);
        }
    }

    /// The run is over: a checkout of at least `min_files` files ([`PARK_FILES`]) stays for
    /// the project's next run, less everything that is not the tree's own (the cache folders and the links to
    /// the environments, which code a check ran could have written: they are trusted within
    /// one run only); a smaller one goes. Writing a large tree costs an inode per file — on
    /// ext4 shortly after the last run removed as many, ~0.4–0.8 ms each (BENCHMARKS.md §6) —
    /// where the next run's first sync only reads each file to verify it.
    pub fn park(self, min_files: usize) {
        let large = self
            .clean
            .as_ref()
            .is_some_and(|t| t.entries.len() >= min_files);
        if !large || self.still_ours().is_err() {
            return self.remove();
        }
        let tree = self.clean.as_ref().expect("large above");
        for k in self.kept_for(tree) {
            if remove_entry(&self.dir, &k).is_err() {
                return self.remove();
            }
        }
    }

    /// Without an overlay: each of `envs` (kept folders the tree holds no path of) becomes a
    /// link to the project's own folder of that name, so a check started in the checkout finds
    /// the interpreter and packages the person's command finds in the working tree.
    pub fn link_envs(&mut self, project: &Path, envs: &[String]) -> crate::Result<()> {
        self.still_ours()?;
        for e in envs {
            let at = self.dir.join(e);
            let to = project.join(e);
            if std::fs::read_link(&at).is_ok_and(|l| l == to) {
                continue;
            }
            make_parents(&self.dir, &at)?;
            remove(&at)?;
            std::os::unix::fs::symlink(&to, &at)
                .map_err(|err| Error::io(format!("cannot link {}", at.display()), err))?;
        }
        Ok(())
    }

    /// The folder an overlay check writes into (`<dir>-layer`, holding `upper` and `work`).
    pub fn layer_dir(&self) -> PathBuf {
        PathBuf::from(format!("{}-layer", self.dir.display()))
    }

    /// Before a check on an overlay ([`crate::sandbox::Request::layer`]): the folder holds
    /// `tree` (a sync just made it so), the layer is empty, and the cache folders exist in the
    /// checkout, so they can be bound writable over the overlay. Returns the layer folder.
    pub fn prepare_layer(&mut self, tree: &Snapshot) -> crate::Result<PathBuf> {
        self.still_ours()?;
        if self.clean.as_ref() != Some(tree) {
            return Err(Error::usage(format!(
                "the checks' folder {} is not known to hold the candidate tree: Forge syncs it before each check",
                self.dir.display()
            )));
        }
        let layer = self.layer_dir();
        empty_private_dir(&layer)?;
        for sub in ["upper", "work"] {
            let p = layer.join(sub);
            std::fs::create_dir(&p)
                .map_err(|e| Error::io(format!("cannot create {}", p.display()), e))?;
        }
        for k in &self.kept_for(tree) {
            let p = self.dir.join(k);
            if !std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
                make_parents(&self.dir, &p)?;
                remove(&p)?;
                std::fs::create_dir(&p)
                    .map_err(|e| Error::io(format!("cannot create {}", p.display()), e))?;
            }
        }
        Ok(layer)
    }

    /// After a check on an overlay: the checkout was its lower layer, which the check could not
    /// write, so it still holds `tree`; what the check wrote is all in the upper layer. The
    /// tree's files it changed there are named (as [`Checkout::settle`] names them) and the
    /// layer is emptied. Reads only what the check wrote, not the whole checkout.
    pub fn settle_layer(&mut self, tree: &Snapshot) -> crate::Result<Vec<String>> {
        self.still_ours()?;
        let layer = self.layer_dir();
        let upper = layer.join("upper");
        // A check may have taken its own rights on what it wrote (`chmod 000`, kept by the
        // copy-up): give them back, or a person who is not root could not read the layer.
        let _ = make_writable(&upper);
        let seen = scan_upper(&upper)?;
        let format = self.hasher.format;
        let mut rewritten = BTreeSet::new();
        // The tree's files that the upper layer hides or replaces.
        let under = |key: &str| {
            let prefix = format!("{key}/");
            tree.entries
                .range(prefix.clone()..)
                .take_while(move |(p, _)| p.starts_with(&prefix))
                .filter(|(_, e)| matches!(e, Entry::File { .. } | Entry::Symlink { .. }))
                .map(|(p, _)| p.clone())
        };
        for (key, kind) in &seen {
            let in_tree = matches!(
                tree.entries.get(key),
                Some(Entry::File { .. } | Entry::Symlink { .. })
            );
            match kind {
                Upper::Dir { opaque } => {
                    if in_tree {
                        rewritten.insert(key.clone());
                    }
                    if *opaque {
                        // Nothing of the lower folder shows: each tree file under it is what
                        // the upper layer holds there, or gone.
                        rewritten.extend(under(key).filter(|p| !seen.contains_key(p)));
                    }
                }
                Upper::Entry(meta) => {
                    rewritten.extend(under(key));
                    // A file the check made unreadable is not the tree's either.
                    if in_tree
                        && super::snapshot::entry_at(&upper.join(key), meta, format)
                            .ok()
                            .flatten()
                            != tree.entries.get(key).cloned()
                    {
                        rewritten.insert(key.clone());
                    }
                }
                Upper::Gone => {
                    rewritten.extend(under(key));
                    if in_tree {
                        rewritten.insert(key.clone());
                    }
                }
            }
        }
        empty_private_dir(&layer)?;
        Ok(rewritten.into_iter().collect())
    }

    /// Walks the folder: keeps every file whose content is what `tree` has; removes the rest
    /// (never following a link). The listing runs on a few threads
    /// ([`super::walk::par_walk`]); the judging and removing here.
    fn sweep(
        &mut self,
        tree: &Snapshot,
        present: &mut BTreeSet<String>,
        stats: &mut SyncStats,
        started: SystemTime,
    ) -> crate::Result<()> {
        let root = self.dir.clone();
        let keep = &self.kept_for(tree);
        let is_gitlink = |key: &str| matches!(tree.entries.get(key), Some(Entry::Gitlink { .. }));
        // A folder holding no path of the tree and no cache folder goes whole, unread: what a
        // check left there can be deeper than a path can name, and it is no business of the
        // checks' anyway. The walk only goes where the tree does.
        let needed = |key: &str| {
            let prefix = format!("{key}/");
            tree.entries
                .range(prefix.clone()..)
                .next()
                .is_some_and(|(p, _)| p.starts_with(&prefix))
                || keep.iter().any(|k| k.starts_with(&prefix))
        };
        let first = super::walk::Job {
            rel: String::new(),
            state: (),
        };
        let listings = super::walk::par_walk(first, |job, out: &mut Listing| {
            let dir = root.join(&job.rel);
            // A check may have taken its own permissions on a folder away.
            let rd = std::fs::read_dir(&dir).or_else(|_| {
                let _ = unlock(&dir);
                std::fs::read_dir(&dir)
            });
            let rd = match rd {
                Ok(rd) => rd,
                Err(e) => {
                    out.errors
                        .push(Error::io(format!("cannot read {}", dir.display()), e));
                    return Vec::new();
                }
            };
            let mut more = Vec::new();
            for item in rd {
                let item = match item {
                    Ok(i) => i,
                    Err(e) => {
                        out.errors
                            .push(Error::io(format!("cannot read {}", dir.display()), e));
                        continue;
                    }
                };
                let Some(name) = item.file_name().to_str().map(str::to_string) else {
                    out.odd.push(dir.join(item.file_name()));
                    continue;
                };
                let key = if job.rel.is_empty() {
                    name
                } else {
                    format!("{}/{name}", job.rel)
                };
                if keep.contains(&key) {
                    continue;
                }
                // `lstat` relative to the open folder, once: the hasher takes it from here.
                match item.metadata() {
                    Ok(m) if m.is_dir() && is_gitlink(&key) => out.gitlinks.push(key),
                    Ok(m) if m.is_dir() && needed(&key) => {
                        more.push(super::walk::Job {
                            rel: key,
                            state: (),
                        });
                    }
                    Ok(m) if m.is_dir() => out.dirs.push(key),
                    Ok(m) => out.files.push((key, m)),
                    Err(e) => out.errors.push(Error::io(
                        format!("cannot read {}", dir.join(&key).display()),
                        e,
                    )),
                }
            }
            more
        });
        let mut all = Listing::default();
        for l in listings {
            all.files.extend(l.files);
            all.dirs.extend(l.dirs);
            all.gitlinks.extend(l.gitlinks);
            all.odd.extend(l.odd);
            all.errors.extend(l.errors);
        }
        if let Some(e) = all.errors.into_iter().next() {
            return Err(e);
        }
        for p in all.odd {
            remove(&p)?;
            stats.removed += 1;
        }
        // Only the tree's files are read (on a few threads); anything else goes.
        let (ours, others): (Vec<_>, Vec<_>) = all.files.into_iter().partition(|(key, _)| {
            matches!(
                tree.entries.get(key),
                Some(Entry::File { .. } | Entry::Symlink { .. })
            )
        });
        let read = self.hasher.read_many(&self.dir, ours, started);
        for (key, got) in read
            .into_iter()
            .map(|(k, r)| (k, Some(r)))
            .chain(others.into_iter().map(|(k, _)| (k, None)))
        {
            // A file that cannot be read (a check took its permissions away) is not the
            // tree's: it goes and is written again.
            let ok = matches!(got, Some(Ok(Some(ref g))) if tree.entries.get(&key) == Some(g));
            if ok {
                present.insert(key);
                stats.kept += 1;
            } else {
                remove(&self.dir.join(&key))?;
                stats.removed += 1;
            }
        }
        for key in all.gitlinks {
            present.insert(key);
            stats.kept += 1;
        }
        // The folders no tree path (and no cache folder) needs.
        for key in all.dirs {
            remove(&self.dir.join(key))?;
            stats.removed += 1;
        }
        Ok(())
    }
}

/// Writes `entry` at `root/rel` (its bytes from `blobs`, verified objects keyed by id): through
/// a temporary file renamed into place, never through a link — a folder on the way that is a
/// file or a link is removed first, so no write lands outside `root`.
pub fn write_entry(
    root: &Path,
    rel: &str,
    entry: &Entry,
    blobs: &HashMap<String, Vec<u8>>,
) -> crate::Result<()> {
    let full = root.join(rel);
    make_parents(root, &full)?;
    let dir = full.parent().unwrap_or(root);
    let missing = || Error::usage(format!("no verified object for {rel}"));
    match entry {
        Entry::File { oid, exec } => {
            let bytes = blobs.get(oid).ok_or_else(missing)?;
            let mut tmp = tempfile::Builder::new()
                .prefix(crate::state::TEMP_PREFIX)
                .tempfile_in(dir)
                .map_err(|e| Error::io(format!("cannot write in {}", dir.display()), e))?;
            std::io::Write::write_all(&mut tmp, bytes)
                .map_err(|e| Error::io(format!("cannot write {}", full.display()), e))?;
            let mode = if *exec { 0o755 } else { 0o644 };
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io(format!("cannot set the mode of {}", full.display()), e))?;
            if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                remove(&full)?;
            }
            tmp.persist(&full)
                .map_err(|e| Error::io(format!("cannot write {}", full.display()), e.error))?;
        }
        Entry::Symlink { oid } => {
            use std::os::unix::ffi::OsStrExt;
            let target = std::ffi::OsStr::from_bytes(blobs.get(oid).ok_or_else(missing)?);
            remove(&full)?;
            std::os::unix::fs::symlink(target, &full)
                .map_err(|e| Error::io(format!("cannot create {}", full.display()), e))?;
        }
        Entry::Gitlink { .. } => {
            if !std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                remove(&full)?;
                std::fs::create_dir(&full)
                    .map_err(|e| Error::io(format!("cannot create {}", full.display()), e))?;
            }
        }
        Entry::Nested | Entry::TooLarge { .. } => {}
    }
    Ok(())
}

/// Writes `entry` at `root/rel` in a folder Forge owns (the checks' checkout), where the path is
/// known to be free: created exclusively, never through a link, one inode per file.
fn write_fresh(
    root: &Path,
    rel: &str,
    entry: &Entry,
    blobs: &HashMap<String, Vec<u8>>,
) -> crate::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let full = root.join(rel);
    make_parents(root, &full)?;
    let missing = || Error::usage(format!("no verified object for {rel}"));
    match entry {
        Entry::File { oid, exec } => {
            let bytes = blobs.get(oid).ok_or_else(missing)?;
            let mode = if *exec { 0o755 } else { 0o644 };
            let mut f = with_parent_unlocked(&full, || {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(mode)
                    .custom_flags(nix::libc::O_NOFOLLOW)
                    .open(&full)
            })
            .map_err(|e| Error::io(format!("cannot create {}", full.display()), e))?;
            f.write_all(bytes)
                .map_err(|e| Error::io(format!("cannot write {}", full.display()), e))?;
            // Exactly the tree's mode, whatever the umask.
            f.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| Error::io(format!("cannot set the mode of {}", full.display()), e))?;
        }
        other => write_entry(root, rel, other, blobs)?,
    }
    Ok(())
}

/// Removes `root/rel` (a file, a link, or a folder with all it holds) without following links.
pub fn remove_entry(root: &Path, rel: &str) -> crate::Result<()> {
    let full = root.join(rel);
    // A parent that is a link would put `full` outside root: then there is nothing of ours to
    // remove there.
    let mut at = root.to_path_buf();
    if let Some(parent) = Path::new(rel).parent() {
        for c in parent.components() {
            at.push(c);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                _ => return Ok(()),
            }
        }
    }
    remove(&full)
}

/// What an overlay's upper layer holds at a path.
enum Upper {
    /// A folder; `opaque` when nothing of the lower folder shows through it (overlayfs marks a
    /// folder made in place of a removed one, or one renamed from elsewhere).
    Dir { opaque: bool },
    /// A whiteout: the lower entry is removed.
    Gone,
    /// A file, a link, or anything else that stands in the lower entry's place.
    Entry(std::fs::Metadata),
}

/// Every path in an overlay's upper layer (never following a link), relative, with what is
/// there. Names that are not UTF-8 match no tree path and are skipped.
fn scan_upper(upper: &Path) -> crate::Result<std::collections::BTreeMap<String, Upper>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![String::new()];
    while let Some(rel) = todo.pop() {
        let dir = upper.join(&rel);
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
        for item in rd {
            let item = item.map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
            let Some(name) = item.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let key = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let m = item
                .metadata()
                .map_err(|e| Error::io(format!("cannot read {}", dir.join(&key).display()), e))?;
            use std::os::unix::fs::FileTypeExt;
            let kind = if m.is_dir() {
                let p = upper.join(&key);
                let opaque = xattr_is(&p, c"user.overlay.opaque", b"y")
                    || xattr_is(&p, c"user.overlay.opaque", b"x")
                    || has_xattr(&p, c"user.overlay.redirect");
                todo.push(key.clone());
                Upper::Dir { opaque }
            } else if m.file_type().is_char_device() && m.rdev() == 0 {
                Upper::Gone
            } else {
                Upper::Entry(m)
            };
            out.insert(key, kind);
        }
    }
    Ok(out)
}

fn xattr_value(p: &Path, name: &std::ffi::CStr) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).ok()?;
    let mut buf = [0u8; 256];
    // SAFETY: NUL-terminated strings and a buffer of the length passed, alive across the call.
    let n = unsafe {
        nix::libc::lgetxattr(
            c.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n >= 0).then(|| buf[..n as usize].to_vec())
}

fn xattr_is(p: &Path, name: &std::ffi::CStr, value: &[u8]) -> bool {
    xattr_value(p, name).is_some_and(|v| v == value)
}

fn has_xattr(p: &Path, name: &std::ffi::CStr) -> bool {
    xattr_value(p, name).is_some()
}

/// Makes `dir` an empty folder of this user's, mode 0700: whatever was there goes (never
/// through a link); a link or a file in its place is removed, not followed.
fn empty_private_dir(dir: &Path) -> crate::Result<()> {
    remove(dir)?;
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))
}

/// Creates the parent folders of `full` under `root`, removing any file or link in their way.
/// What a sweep's listing found.
#[derive(Default)]
struct Listing {
    files: Vec<(String, std::fs::Metadata)>,
    /// Folders nothing of the tree is in: removed whole, never entered.
    dirs: Vec<String>,
    gitlinks: Vec<String>,
    /// Names that are not UTF-8: no tree holds them.
    odd: Vec<PathBuf>,
    errors: Vec<Error>,
}

/// The folders of the files `tree` no longer has (`gone`) that it has no file under, removed
/// once empty (deepest first; a folder that still holds something, a cache among them, stays).
fn prune_empty(root: &Path, gone: &[&str], tree: &Snapshot) {
    let needed = |dir: &str| {
        let prefix = format!("{dir}/");
        tree.entries
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&prefix))
    };
    let mut dirs: BTreeSet<&str> = BTreeSet::new();
    for p in gone {
        let mut d = *p;
        while let Some((parent, _)) = d.rsplit_once('/') {
            dirs.insert(parent);
            d = parent;
        }
    }
    for d in dirs.iter().rev() {
        if !needed(d) {
            let _ = std::fs::remove_dir(root.join(d));
        }
    }
}

fn make_parents(root: &Path, full: &Path) -> crate::Result<()> {
    let Some(parent) = full.parent() else {
        return Ok(());
    };
    let mut at = root.to_path_buf();
    for comp in parent
        .strip_prefix(root)
        .unwrap_or(Path::new(""))
        .components()
    {
        at.push(comp);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                remove(&at)?;
                with_parent_unlocked(&at, || std::fs::create_dir(&at))
                    .map_err(|e| Error::io(format!("cannot create {}", at.display()), e))?;
            }
            Err(_) => with_parent_unlocked(&at, || std::fs::create_dir(&at))
                .map_err(|e| Error::io(format!("cannot create {}", at.display()), e))?,
        }
    }
    Ok(())
}

/// Removes a file, link or folder without following links.
fn remove(p: &Path) -> crate::Result<()> {
    let attempt = || match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            // A check may leave read-only folders (Go's module cache does).
            let _ = make_writable(p);
            std::fs::remove_dir_all(p).or_else(|_| remove_deep(p))
        }
        Ok(_) => std::fs::remove_file(p),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    with_parent_unlocked(p, attempt)
        .map_err(|e| Error::io(format!("cannot remove {}", p.display()), e))
}

/// Runs `f`; if the kernel refuses it for permissions, gives the folder holding `p` back its
/// owner's rights (a check may have run `chmod a-w` on a folder of its checkout) and runs it
/// once more.
fn with_parent_unlocked<T>(
    p: &Path,
    mut f: impl FnMut() -> std::io::Result<T>,
) -> std::io::Result<T> {
    match f() {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            if let Some(parent) = p.parent() {
                let _ = unlock(parent);
            }
            f()
        }
        r => r,
    }
}

/// Removes the folder `top` and all it holds, however deep (a check can nest folders past what
/// a path can name, and past the open-file limit that a recursive removal holds one descriptor
/// per level of): each subfolder's content is moved up into `top` before the subfolder goes, so
/// no path used is more than two names below `top` and one folder is read at a time.
fn remove_deep(top: &Path) -> std::io::Result<()> {
    let mut n = 0u64;
    loop {
        let mut sub = None;
        for e in std::fs::read_dir(top)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                sub = Some(e.path());
                break;
            }
            std::fs::remove_file(e.path())?;
        }
        let Some(d) = sub else { break };
        let _ = unlock(&d);
        loop {
            let items: Vec<_> = std::fs::read_dir(&d)?.collect::<std::io::Result<_>>()?;
            if items.is_empty() {
                break;
            }
            for c in items {
                let to = loop {
                    n += 1;
                    let to = top.join(format!(".forge-rm-{n}"));
                    if std::fs::symlink_metadata(&to).is_err() {
                        break to;
                    }
                };
                std::fs::rename(c.path(), to)?;
            }
        }
        std::fs::remove_dir(&d)?;
    }
    std::fs::remove_dir(top)
}

/// Gives this user every right on the folder `dir` (never through a link).
fn unlock(dir: &Path) -> std::io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    if m.is_dir() {
        let mut perm = m.permissions();
        perm.set_mode(perm.mode() | 0o700);
        std::fs::set_permissions(dir, perm)?;
    }
    Ok(())
}

fn make_writable(dir: &Path) -> std::io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    if m.is_dir() {
        let mut perm = m.permissions();
        perm.set_mode(perm.mode() | 0o700);
        std::fs::set_permissions(dir, perm)?;
        for e in std::fs::read_dir(dir)?.flatten() {
            let _ = make_writable(&e.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::snapshot::{Hasher, ObjectFormat};
    use super::*;
    use crate::git;

    use crate::testing::sh;

    /// A large checkout outlives its run without what a check could have written to it (the
    /// cache folders); a small one goes. The next run's first sync takes nothing of the parked
    /// folder on trust: a planted file, a changed one and a cache folder left behind all go.
    #[test]
    fn a_large_checkout_is_parked_for_the_next_run_and_verified_there() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p src && echo a > src/a && echo b > src/b \
             && git add -A && git commit -qm init",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let odb = Odb::new(d, ObjectFormat::Sha1);
        let open = || {
            Checkout::open(
                d.join("co"),
                vec!["target".into()],
                Hasher::new(ObjectFormat::Sha1),
            )
            .unwrap()
        };
        let mut co = open();
        co.sync(&odb, &tree).unwrap();
        sh(&d.join("co"), "mkdir target && echo built > target/out");
        // Smaller than the threshold: removed.
        co.park(3);
        assert!(!d.join("co").exists());

        let mut co = open();
        co.sync(&odb, &tree).unwrap();
        sh(&d.join("co"), "mkdir target && echo built > target/out");
        co.park(2);
        assert_eq!(std::fs::read_to_string(d.join("co/src/a")).unwrap(), "a\n");
        assert!(!d.join("co/target").exists(), "a cache outlived its run");

        // Between runs: anything may have written the folder.
        sh(
            &d.join("co"),
            "echo planted > src/conftest.py && echo changed > src/b && mkdir target && echo old > target/out",
        );
        let mut co = open();
        let stats = co.sync(&odb, &tree).unwrap();
        let co_dir = d.join("co");
        assert_eq!(
            std::fs::read_to_string(co_dir.join("src/b")).unwrap(),
            "b\n"
        );
        assert!(!co_dir.join("src/conftest.py").exists());
        assert!(
            !co_dir.join("target").exists(),
            "an earlier run's cache was trusted"
        );
        assert_eq!((stats.written, stats.kept), (1, 1), "{stats:?}");
        // Within the run, a cache folder is kept from one check to the next.
        sh(&co_dir, "mkdir target && echo built > target/out");
        co.invalidate();
        co.sync(&odb, &tree).unwrap();
        assert!(co_dir.join("target/out").exists());
    }

    /// What a check changed of its candidate, read from an upper layer made by hand the way
    /// overlayfs makes it: a rewritten file, a whiteout, an opaque folder, a file in place of
    /// a folder and the reverse, an unreadable copy; new files are no change.
    #[test]
    fn the_upper_layer_names_every_file_of_the_candidate_the_check_changed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && mkdir -p src/old src/gone lib docs && echo a > src/a && echo x > src/old/x \
             && echo y > src/gone/y && echo l > lib/l && echo k > docs/keep && echo m > src/mode && git add -A && git commit -qm init",
        );
        let tree = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let odb = Odb::new(d, ObjectFormat::Sha1);
        let mut co =
            Checkout::open(d.join("co"), Vec::new(), Hasher::new(ObjectFormat::Sha1)).unwrap();
        co.sync(&odb, &tree).unwrap();
        let layer = co.prepare_layer(&tree).unwrap();
        let up = layer.join("upper");
        sh(
            &up,
            "mkdir -p src/old src/gone docs lib && echo changed > src/a && echo same > src/new \
             && echo x > src/old/x && echo k > docs/keep && echo file > src/gone/y.not \
             && rm -rf lib && echo not-a-folder > lib && echo m > src/mode && chmod 000 src/mode",
        );
        // An opaque folder: nothing of the lower `src/gone` shows.
        let c = std::ffi::CString::new(up.join("src/gone").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: NUL-terminated strings and a value of the length passed.
        let r = unsafe {
            nix::libc::lsetxattr(
                c.as_ptr(),
                c"user.overlay.opaque".as_ptr(),
                b"y".as_ptr().cast(),
                1,
                0,
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        // A whiteout (a character device 0/0) needs the right to make devices: root's.
        let root = nix::unistd::geteuid().is_root();
        if root {
            let w = std::ffi::CString::new(up.join("docs/keep").as_os_str().as_encoded_bytes())
                .unwrap();
            sh(&up, "rm docs/keep");
            // SAFETY: a NUL-terminated path.
            assert_eq!(
                unsafe { nix::libc::mknod(w.as_ptr(), nix::libc::S_IFCHR, 0) },
                0
            );
        }
        let mut want = vec!["lib/l", "src/a", "src/gone/y"];
        if root {
            want.insert(0, "docs/keep");
        } else {
            // Without a whiteout the upper `docs/keep` is the tree's own bytes: no change.
        }
        // chmod 000 on a copy: root still reads it (the same bytes, no change); others cannot.
        if !root {
            want.push("src/mode");
        }
        want.sort();
        assert_eq!(co.settle_layer(&tree).unwrap(), want);
        // The layer is empty again, and the checkout still the tree.
        assert_eq!(std::fs::read_dir(&layer).unwrap().count(), 0);
        assert_eq!(co.sync(&odb, &tree).unwrap().written, 0);
    }

    /// A cache folder kept for one tree and not the next (the tree now has a file in it) goes
    /// whole: the next tree's file is written, not the cache's left in its place.
    #[test]
    fn a_cache_the_next_tree_reaches_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo a > a && git add -A && git commit -qm one",
        );
        let one = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        sh(
            d,
            "mkdir target && echo tracked > target/t && git add -A && git commit -qm two",
        );
        let two = Snapshot::of_commit(d, &git::head(d).unwrap()).unwrap();
        let odb = Odb::new(d, ObjectFormat::Sha1);
        let mut co = Checkout::open(
            d.join("co"),
            vec!["target".into()],
            Hasher::new(ObjectFormat::Sha1),
        )
        .unwrap();
        co.sync(&odb, &one).unwrap();
        co.prepare_layer(&one).unwrap();
        std::fs::write(d.join("co/target/t"), "stale build output\n").unwrap();
        std::fs::write(d.join("co/target/other"), "x\n").unwrap();
        co.settle_layer(&one).unwrap();
        co.sync(&odb, &two).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("co/target/t")).unwrap(),
            "tracked\n"
        );
        assert!(!d.join("co/target/other").exists());
    }

    /// A cache folder is kept only where the tree has nothing: no tracked file in it, no
    /// tracked file or link above it.
    #[test]
    fn a_cache_folder_the_tree_reaches_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let keep = [
            "target",
            "web/node_modules",
            "src/.build/cache",
            "lib/cache",
        ]
        .map(String::from)
        .to_vec();
        let co =
            Checkout::open(dir.path().join("co"), keep, Hasher::new(ObjectFormat::Sha1)).unwrap();
        let file = Entry::File {
            oid: "0".repeat(40),
            exec: false,
        };
        let link = Entry::Symlink {
            oid: "1".repeat(40),
        };
        let mut tree = Snapshot::default();
        for (p, e) in [
            ("web/index.js", &file),
            ("src/.build", &link),
            ("lib/cache/tracked.txt", &file),
            ("target.txt", &file),
        ] {
            tree.entries.insert(p.into(), e.clone());
        }
        assert_eq!(co.kept_for(&tree), ["target", "web/node_modules"]);
    }

    #[test]
    fn the_checkout_holds_exactly_the_tree_whatever_was_left_in_it() {
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        sh(
            r,
            "git init -q -b main && mkdir -p src tests && echo 'x' > src/a.py && echo 't' > tests/t.py \
             && chmod +x tests/t.py && ln -s src/a.py link && printf '__pycache__/\\ntarget/\\n' > .gitignore \
             && git add -A && git commit -qm init",
        );
        let head = crate::git::head(r).unwrap();
        let tree = Snapshot::of_commit(r, &head).unwrap();
        let odb = Odb::new(r, ObjectFormat::Sha1);
        let out = tempfile::tempdir().unwrap();
        let mut co = Checkout::open(
            out.path().join("check"),
            vec!["target".into()],
            Hasher::new(ObjectFormat::Sha1),
        )
        .unwrap();
        let s = co.sync(&odb, &tree).unwrap();
        assert_eq!(s.written, 4);
        let mut h = Hasher::new(ObjectFormat::Sha1);
        assert_eq!(h.snapshot(&co.dir, &tree).unwrap(), tree);

        // A check (or an agent) leaves a hand-made .pyc, rewrites a file keeping its size and
        // mtime, swaps the link, and fills the cache folder.
        let d = co.dir.clone();
        sh(
            &d,
            "mkdir -p src/__pycache__ target && echo evil > src/__pycache__/a.cpython-311.pyc \
             && printf 'y\\n' > src/a.py && touch -d 2001-01-01 src/a.py && rm link && ln -s /etc/passwd link \
             && echo cached > target/out && mkdir -p junk && echo j > junk/j",
        );
        // After a check: swept back, and the tree's files it changed named.
        let rewritten = co.settle(&odb, &tree).unwrap();
        assert_eq!(rewritten, ["link", "src/a.py"]);
        assert!(!d.join("src/__pycache__").exists());
        assert!(!d.join("junk").exists());
        assert_eq!(std::fs::read_to_string(d.join("src/a.py")).unwrap(), "x\n");
        assert_eq!(
            std::fs::read_link(d.join("link")).unwrap(),
            Path::new("src/a.py")
        );
        assert_eq!(
            std::fs::read_to_string(d.join("target/out")).unwrap(),
            "cached\n"
        );
        assert_eq!(h.snapshot(&d, &tree).unwrap(), tree);

        // An agent outside the sandbox could have written it: the next sync sweeps it whole.
        sh(&d, "printf 'z\\n' > src/a.py && echo j > planted.py");
        co.invalidate();
        let s = co.sync(&odb, &tree).unwrap();
        assert_eq!((s.kept, s.written), (3, 1), "{s:?}");
        assert!(!d.join("planted.py").exists());
        assert_eq!(h.snapshot(&d, &tree).unwrap(), tree);

        // A smaller tree: what it lacks goes.
        let mut less = tree.clone();
        less.entries.remove("tests/t.py");
        co.sync(&odb, &less).unwrap();
        assert!(!d.join("tests").exists());
    }

    #[test]
    fn a_folder_replaced_after_it_was_opened_is_never_swept() {
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        sh(
            r,
            "git init -q -b main && echo x > a && git add -A && git commit -qm init",
        );
        let tree = Snapshot::of_commit(r, &crate::git::head(r).unwrap()).unwrap();
        let odb = Odb::new(r, ObjectFormat::Sha1);
        let out = tempfile::tempdir().unwrap();
        let mut co = Checkout::open(
            out.path().join("check"),
            vec![],
            Hasher::new(ObjectFormat::Sha1),
        )
        .unwrap();
        co.sync(&odb, &tree).unwrap();
        // The folder becomes a link to the person's files, or another folder: nothing there
        // is removed, by a sync or a settle.
        let person = out.path().join("person");
        std::fs::create_dir(&person).unwrap();
        std::fs::write(person.join("notes"), "mine").unwrap();
        std::fs::rename(out.path().join("check"), out.path().join("away")).unwrap();
        std::os::unix::fs::symlink(&person, out.path().join("check")).unwrap();
        co.invalidate();
        assert!(co.sync(&odb, &tree).is_err());
        assert!(co.settle(&odb, &tree).is_err());
        std::fs::remove_file(out.path().join("check")).unwrap();
        std::fs::create_dir(out.path().join("check")).unwrap();
        std::fs::write(out.path().join("check/notes"), "mine").unwrap();
        assert!(co.sync(&odb, &tree).is_err());
        assert_eq!(
            std::fs::read_to_string(person.join("notes")).unwrap(),
            "mine"
        );
        assert!(out.path().join("check/notes").exists());
    }

    #[test]
    fn a_folder_deeper_than_a_path_can_name_is_removed() {
        let out = tempfile::tempdir().unwrap();
        let top = out.path().join("junk");
        // Deeper than PATH_MAX and than the usual open-file limit (1024; a chain grown
        // from the top by renames: no long path is ever used to build it).
        std::fs::create_dir(&top).unwrap();
        let next = out.path().join("next");
        for _ in 0..3000 {
            std::fs::create_dir(&next).unwrap();
            std::fs::write(next.join("f"), "x").unwrap();
            std::fs::rename(&top, next.join("d")).unwrap();
            std::fs::rename(&next, &top).unwrap();
        }
        remove_deep(&top).unwrap();
        assert!(!top.exists());
    }

    #[test]
    fn a_planted_link_in_place_of_the_folder_is_refused() {
        let out = tempfile::tempdir().unwrap();
        let target = out.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, out.path().join("check")).unwrap();
        assert!(
            Checkout::open(
                out.path().join("check"),
                vec![],
                Hasher::new(super::super::snapshot::ObjectFormat::Sha1)
            )
            .is_err()
        );
    }
}
