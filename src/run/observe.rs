//! What the run observed, and how: the one place `forge run` looks at the working tree, the
//! object store and the refs (through [`crate::evidence`]). Phase files ask it for snapshots and
//! trees; none of them runs `git status` or trusts the index.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::evidence::odb::{self, BlobCache, Odb};
use crate::evidence::snapshot::ObjectFormat;
use crate::evidence::{Change, Hasher, Snapshot};

pub struct Observer {
    hasher: Hasher,
    /// Trees of commits read so far (a commit's tree never changes), shared: a tree of a
    /// 10,000-file repository costs milliseconds to copy.
    trees: HashMap<String, Arc<Snapshot>>,
    /// Blobs and trees Forge stored and read back verified; forgotten whenever a planted object
    /// was found.
    stored: std::collections::HashSet<String>,
    /// The last snapshot (full, or of an agent's areas), with the commit that decided what is
    /// tracked in it: what the watches of [`Hasher::quiet`] vouch for.
    last: Option<(String, Arc<Snapshot>)>,
    /// Blobs read and verified so far: checks write the same files into their checkout again
    /// and again.
    blobs: Arc<BlobCache>,
}

impl Observer {
    pub fn new(root: &Path) -> Result<Observer> {
        Ok(Observer {
            hasher: Hasher::new(ObjectFormat::of_repo(root)?),
            trees: HashMap::new(),
            stored: Default::default(),
            last: None,
            blobs: Arc::default(),
        })
    }

    pub fn format(&self) -> ObjectFormat {
        self.hasher.format
    }

    pub fn odb<'r>(&self, root: &'r Path) -> Odb<'r> {
        Odb::new(root, self.hasher.format).with_cache(self.blobs.clone())
    }

    /// The tree of `commit` (cached).
    pub fn tree(&mut self, root: &Path, commit: &str) -> Result<Arc<Snapshot>> {
        if let Some(t) = self.trees.get(commit) {
            return Ok(t.clone());
        }
        let _t = crate::trace::span("ls-tree");
        let t = Arc::new(Snapshot::of_commit(root, commit)?);
        self.trees.insert(commit.to_string(), t.clone());
        Ok(t)
    }

    /// A commit of `expected` (a snapshot Forge judged) on `parent`, its tree and the commit
    /// read back and verified; the new commit's tree is remembered from that verified listing.
    pub fn commit(
        &mut self,
        root: &Path,
        git_dir: &Path,
        parent: &str,
        expected: &Snapshot,
        message: &str,
        ident: &odb::Ident,
    ) -> odb::Result<String> {
        let have = self.tree(root, parent)?;
        let odb = self.odb(root);
        let (tree, listed) = odb.write_tree(git_dir, parent, &have, expected, &mut self.stored)?;
        let commit = odb.commit(&tree, parent, message, ident)?;
        self.trees.insert(commit.clone(), Arc::new(listed));
        Ok(commit)
    }

    /// The working tree now, with `base`'s tree deciding what is tracked; every entry that is
    /// not in `base`'s tree is stored (verified) in the object store, so Forge can put it back
    /// or write it into a checkout later.
    pub fn snapshot(&mut self, root: &Path, base: &str) -> odb::Result<Snapshot> {
        let _t = crate::trace::span("snapshot");
        let tree = self.tree(root, base)?;
        let snap = self.hasher.snapshot(root, &tree)?;
        self.store(root, &tree, &snap)?;
        let t = crate::trace::span("snap-keep");
        self.last = Some((base.to_string(), Arc::new(snap.clone())));
        drop(t);
        Ok(snap)
    }

    /// [`Self::snapshot`], taken from the last one when nothing was written under `root`
    /// since ([`Hasher::quiet`]). Only for the snapshot just before an agent call, never as a
    /// gate's evidence that something did not change: a write the watches cannot see (through
    /// a second name outside the watched folders, or a memory mapping of a process still
    /// running) is missing here; where the agent may write, the snapshot after the call reads
    /// it and it counts as the agent's change; elsewhere a later full snapshot finds it as a
    /// change Forge did not make.
    pub fn snapshot_before_call(&mut self, root: &Path, base: &str) -> odb::Result<Snapshot> {
        if let Some((b, snap)) = self.last.clone()
            && (b == base || self.tracks_alike(root, &b, base, &snap)?)
            && self.hasher.quiet(root)
        {
            let _t = crate::trace::span("snapshot-quiet");
            let tree = self.tree(root, base)?;
            self.store(root, &tree, &snap)?;
            return Ok((*snap).clone());
        }
        self.snapshot(root, base)
    }

    /// [`Self::snapshot`] after an agent call that the kernel let write only `areas` (folders
    /// relative to `root`), and whose processes have all ended: the snapshot before the call
    /// with only the areas read again ([`Hasher::snapshot_areas`]), or a full snapshot
    /// whenever that is unsure. `None` areas: a full snapshot.
    pub fn snapshot_after_call(
        &mut self,
        root: &Path,
        base: &str,
        before: &Snapshot,
        areas: Option<&[String]>,
    ) -> odb::Result<Snapshot> {
        if let Some(areas) = areas {
            let tree = self.tree(root, base)?;
            let t = crate::trace::span("snapshot-areas");
            let snap = self.hasher.snapshot_areas(root, &tree, before, areas)?;
            drop(t);
            if let Some(snap) = snap {
                self.store(root, &tree, &snap)?;
                self.last = Some((base.to_string(), Arc::new(snap.clone())));
                return Ok(snap);
            }
        }
        self.snapshot(root, base)
    }

    /// Whether a snapshot `snap` taken with `was`'s tree deciding what is tracked is also what
    /// one with `now`'s tree would be. A snapshot the watches covered read no path only
    /// because it was tracked (each came from the walk), so only two things differ: a path
    /// `now` tracks that the walk did not find (ignored there), and submodules.
    fn tracks_alike(&mut self, root: &Path, was: &str, now: &str, snap: &Snapshot) -> Result<bool> {
        let (was, now) = (self.tree(root, was)?, self.tree(root, now)?);
        let gitlinks = |t: &Snapshot| -> Vec<(String, crate::evidence::Entry)> {
            t.entries
                .iter()
                .filter(|(_, e)| matches!(e, crate::evidence::Entry::Gitlink { .. }))
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect()
        };
        Ok(gitlinks(&was) == gitlinks(&now)
            && now.entries.keys().all(|p| snap.entries.contains_key(p)))
    }

    /// Stores the entries of `snap` that `tree` does not already hold (and Forge has not
    /// stored and verified already).
    fn store(&mut self, root: &Path, tree: &Snapshot, snap: &Snapshot) -> odb::Result<()> {
        let _t = crate::trace::span("store");
        let changes = tree.diff(snap);
        let items: Vec<(&str, &crate::evidence::Entry)> = changes
            .iter()
            .filter_map(|c| c.after.as_ref().map(|e| (c.path.as_str(), e)))
            .chain(snap.ignored.iter().map(|(p, e)| (p.as_str(), e)))
            .filter(|(_, e)| e.oid().is_some_and(|o| !self.stored.contains(o)))
            .collect();
        self.odb(root).store(&items)?;
        self.stored.extend(
            items
                .iter()
                .filter_map(|(_, e)| e.oid().map(str::to_string)),
        );
        Ok(())
    }

    /// A planted object was found (and removed): nothing stored so far is taken on trust.
    pub fn forget_stored(&mut self) {
        self.stored.clear();
    }
}

/// What one agent call did, as Forge saw it: the tree just before and just after, and every
/// protected thing that changed and was put back (Forge's files, git's control files, refs,
/// objects, a switched HEAD, commits), each named for the scope gate.
pub struct Attempt {
    pub before: Snapshot,
    pub after: Snapshot,
    pub restored: Vec<String>,
    /// Commits that appeared on the run's branch (undone: the branch is back where it was).
    pub commits: Vec<String>,
    pub head_moved: Option<String>,
}

impl Attempt {
    /// The paths the agent changed in this call.
    pub fn changes(&self) -> Vec<Change> {
        self.before.diff(&self.after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::sh;

    /// A snapshot taken with one commit deciding what is tracked stands for one with another
    /// only when the other tracks nothing the walk left out (an ignored path) and has the same
    /// submodules.
    #[test]
    fn a_snapshot_stands_for_another_commit_only_when_it_tracks_alike() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo a > a && printf '*.log\\n' > .gitignore && git add -A && git commit -qm one",
        );
        let one = sh(d, "git rev-parse HEAD");
        sh(d, "echo t > t && git add t && git commit -qm two");
        let two = sh(d, "git rev-parse HEAD");
        sh(
            d,
            "echo x > x.log && git add -f x.log && git commit -qm three",
        );
        let three = sh(d, "git rev-parse HEAD");
        sh(
            d,
            "git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub && git commit -qm four",
        );
        let four = sh(d, "git rev-parse HEAD");
        let mut seen = Observer::new(d).unwrap();
        sh(d, "git checkout -q --detach HEAD~2");
        let snap = seen.snapshot(d, &two).unwrap();
        // A new tracked file the walk met: alike.
        assert!(seen.tracks_alike(d, &one, &two, &snap).unwrap());
        // A tracked file git ignores (the walk left it out): not alike.
        assert!(!seen.tracks_alike(d, &two, &three, &snap).unwrap());
        // Another submodule: not alike.
        assert!(!seen.tracks_alike(d, &two, &four, &snap).unwrap());
    }
}
