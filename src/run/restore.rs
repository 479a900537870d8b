//! The only code that reverts an agent's work. It puts back paths to what Forge saw before (a
//! snapshot, written from verified objects), the run's branch to where Forge left it, and HEAD
//! to that branch — and nothing else: a person's files are never touched.

use serde_json::json;

use super::Run;
use super::gates::{self, GateResult, Phase, Scope};
use super::observe::Attempt;
use crate::error::Result;
use crate::evidence::checkout::{remove_entry, write_entry};
use crate::evidence::{Entry, Snapshot};
use crate::git;

impl Run<'_> {
    /// Judges what one agent call changed against its phase's rules, and puts back what it
    /// may not change — as it was just before the call, so a person's file is never lost. With
    /// `only_adds_to` (red, unless the project relaxes it), existing test files of that tree
    /// may only gain lines. Returns the scope for the gate and the tree as it is now.
    pub(super) fn judge(
        &mut self,
        phase: &Phase,
        a: &Attempt,
        only_adds_to: Option<&Snapshot>,
    ) -> Result<(Scope, Snapshot)> {
        let scope = self.classify(phase, a, only_adds_to)?;
        let back: Vec<String> = scope.disallowed.iter().map(|(p, _)| p.clone()).collect();
        self.put_back_paths(&a.before, &back)?;
        // What Forge just wrote is what it read before the call: no second look needed.
        let now = a.after.overlay(&a.before, &back);
        Ok((scope, now))
    }

    /// What one agent call changed, judged against its phase's rules without touching the
    /// tree: the paths it may keep and those it may not, with why.
    pub(super) fn classify(
        &mut self,
        phase: &Phase,
        a: &Attempt,
        only_adds_to: Option<&Snapshot>,
    ) -> Result<Scope> {
        let changes = a.changes();
        // After a branch switch the working tree is another branch's checkout: none of it is
        // the agent's work to keep.
        let void = a.head_moved.is_some();
        let mut oids: Vec<&str> = Vec::new();
        for c in &changes {
            if let Some(Entry::Symlink { oid }) = &c.after {
                oids.push(oid);
            }
            if let (Some(start), Some(Entry::File { oid: new, .. })) = (only_adds_to, &c.after)
                && let Some(Entry::File { oid: old, .. }) = start.entries.get(&c.path)
            {
                oids.push(old);
                oids.push(new);
            }
        }
        // Red's shell files, and the shell files of the tests and harness it may shadow.
        let shared: Vec<(&String, &str)> = match (phase, only_adds_to) {
            (
                Phase::Red {
                    test_areas,
                    harness,
                },
                Some(start),
            ) => start
                .entries
                .iter()
                .filter(|(p, _)| {
                    gates::is_shell(p)
                        && (harness.contains(p)
                            || gates::in_areas(test_areas, p)
                            || gates::is_test_file(p))
                })
                .filter_map(|(p, e)| e.oid().map(|o| (p, o)))
                .collect(),
            _ => Vec::new(),
        };
        if !shared.is_empty() {
            oids.extend(shared.iter().map(|(_, o)| *o));
            for c in &changes {
                if let Some(Entry::File { oid, .. }) = &c.after
                    && gates::is_shell(&c.path)
                {
                    oids.push(oid);
                }
            }
        }
        let root = self.project.root.clone();
        let blobs = self.seen.odb(&root).read(&oids, "blob")?;
        let mut functions = std::collections::BTreeMap::new();
        for (p, o) in &shared {
            for f in gates::shell_functions(&blobs[*o]) {
                functions.entry(f).or_insert_with(|| (*p).clone());
            }
        }
        let mut scope = Scope {
            commits: a.commits.clone(),
            restored: a.restored.clone(),
            head_moved: a.head_moved.clone(),
            ..Default::default()
        };
        for c in &changes {
            let target = match &c.after {
                Some(Entry::Symlink { oid }) => blobs.get(oid).map(Vec::as_slice),
                _ => None,
            };
            let mut why = if void {
                Some("the agent switched branches".to_string())
            } else {
                gates::disallowed(phase, c, target)
            };
            if why.is_none()
                && !functions.is_empty()
                && let Some(Entry::File { oid, .. }) = &c.after
                && gates::is_shell(&c.path)
            {
                let old = only_adds_to
                    .and_then(|s| s.entries.get(&c.path))
                    .and_then(Entry::oid)
                    .and_then(|o| blobs.get(o))
                    .map(Vec::as_slice);
                let elsewhere: std::collections::BTreeMap<String, String> = functions
                    .iter()
                    .filter(|(_, f)| **f != c.path)
                    .map(|(n, f)| (n.clone(), f.clone()))
                    .collect();
                why = blobs.get(oid.as_str()).and_then(|new| {
                    gates::redefines(new, old, &elsewhere)
                        .err()
                        .map(|e| format!("red only adds: {e}"))
                });
            }
            // The person's own uncommitted changes are never committed by the run (`forge run`
            // says so when it keeps them): an agent that edits such a file would carry them
            // into the slice's commit (red team, round 16).
            if why.is_none() && self.meta.person_paths.contains(&c.path) {
                why = Some(
                    "a file with the person's uncommitted changes, which the run never commits"
                        .into(),
                );
            }
            if why.is_none()
                && let Some(start) = only_adds_to
                && let Some(old) = start.entries.get(&c.path)
            {
                why = match (old, &c.after) {
                    (Entry::File { oid: o, .. }, Some(Entry::File { oid: n, .. })) => {
                        gates::only_adds(&blobs[o.as_str()], &blobs[n.as_str()])
                            .err()
                            .map(|e| format!("red only adds to existing tests: {e}"))
                    }
                    (_, None) => Some("red may not delete an existing test file".into()),
                    _ => Some("red may not replace an existing test file".into()),
                };
            }
            match why {
                Some(w) => scope.disallowed.push((c.path.clone(), w)),
                None => scope.changed.push(c.path.clone()),
            }
        }
        Ok(scope)
    }

    /// Puts `paths` back as `to` has them: written from verified objects where `to` has them,
    /// removed where it does not. Deeper paths are removed first, so a folder an agent turned
    /// into a file (or a link) is a folder again before anything is written into it.
    pub(super) fn put_back_paths(&mut self, to: &Snapshot, paths: &[String]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let root = self.project.root.clone();
        let mut gone: Vec<&String> = paths
            .iter()
            .filter(|p| !to.entries.contains_key(*p))
            .collect();
        gone.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
        for p in gone {
            remove_entry(&root, p)?;
        }
        let back: Vec<(&String, &Entry)> = paths
            .iter()
            .filter_map(|p| to.entries.get(p).map(|e| (p, e)))
            .collect();
        let oids: Vec<&str> = back
            .iter()
            .filter_map(|(_, e)| match e {
                Entry::File { oid, .. } | Entry::Symlink { oid } => Some(oid.as_str()),
                _ => None,
            })
            .collect();
        let blobs = self.seen.odb(&root).read(&oids, "blob")?;
        for (p, e) in back {
            // A nested repository cannot be written back: it was never read.
            if matches!(e, Entry::Nested | Entry::TooLarge { .. }) {
                continue;
            }
            write_entry(&root, p, e, &blobs)?;
        }
        Ok(())
    }

    /// Before a commit: the working tree must still be what Forge judged after the agent's call
    /// (`judged`), for every path. Something changed it while the checks ran — a check reaching
    /// out of its checkout, or a person. The run's own paths are put back to what was judged:
    /// the slice's tests and code (`owned`), and every path Forge had seen that is not known to
    /// be a person's; a path that appeared, or one a person changed before, is only named.
    /// `Some(failed gate)` when anything differed: nothing is committed then.
    pub(super) fn settle(
        &mut self,
        base: &str,
        judged: &Snapshot,
        owned: &[String],
        gate: &str,
    ) -> Result<Option<GateResult>> {
        let now = self.observe(base)?;
        self.settle_seen(base, judged, &now, owned, gate)
    }

    /// [`Self::settle`] with the working tree as Forge has just seen it (`now`).
    pub(super) fn settle_seen(
        &mut self,
        base: &str,
        judged: &Snapshot,
        now: &Snapshot,
        owned: &[String],
        gate: &str,
    ) -> Result<Option<GateResult>> {
        let differ: Vec<String> = judged.diff(now).into_iter().map(|c| c.path).collect();
        if differ.is_empty() {
            return Ok(None);
        }
        let mine: Vec<String> = differ
            .iter()
            .filter(|p| {
                owned.contains(p)
                    || (judged.entries.contains_key(*p) && !self.meta.person_paths.contains(p))
            })
            .cloned()
            .collect();
        self.put_back_paths(judged, &mine)?;
        let now = self.observe(base)?;
        self.remember(base, &now)?;
        Ok(Some(GateResult::fail(
            gate,
            json!({"reason": format!("the working tree changed after the agent's call ended, while Forge ran the checks ({}): nothing was committed{}", differ.join(", "), if mine.is_empty() { String::new() } else { format!("; the run's files were put back ({})", mine.join(", ")) }), "files": differ, "put_back": mine}),
            false,
            "the attempt is judged again; nothing may write the repository while Forge checks it",
        )))
    }

    /// The run's branch made a symbolic ref (to a person's branch, say: every update of HEAD
    /// would then move that branch) becomes a plain ref at `base` again, before anything writes
    /// through it.
    pub(super) fn unlink_branch(&mut self, base: &str) -> Result<Vec<String>> {
        let Some(branch) = self.meta.branch.clone() else {
            return Ok(Vec::new());
        };
        let file = crate::evidence::refs::common_dir(&self.git_dir).join(&branch);
        let symbolic = crate::state::read_untrusted(&file, 4096)
            .ok()
            .flatten()
            .is_some_and(|b| b.starts_with(b"ref:"));
        if !symbolic {
            return Ok(Vec::new());
        }
        git::git(
            self.root(),
            &[
                "update-ref",
                "--no-deref",
                "-m",
                "forge: put back",
                &branch,
                base,
            ],
        )?;
        Ok(vec![format!("{branch} (made a symbolic ref; put back)")])
    }

    /// Puts HEAD back on the run's branch if an agent switched it (`git checkout other`,
    /// `git switch -c x`, a detach). No branch is moved: the other branch keeps its commits.
    pub(super) fn restore_head(&mut self, base: &str) -> Result<Option<String>> {
        let now = git::head_ref(self.root())?;
        if now == self.meta.branch {
            return Ok(None);
        }
        git::set_head(self.root(), self.meta.branch.as_deref(), base)?;
        // The index is the other branch's now: back to the run's (the working tree is judged
        // on content, and put back path by path).
        git::reset_keep(self.root(), base)?;
        let name = |r: &Option<String>| {
            r.as_deref()
                .map(|b| b.trim_start_matches("refs/heads/").to_string())
                .unwrap_or_else(|| "a detached HEAD".into())
        };
        Ok(Some(format!(
            "HEAD was switched to {}; put back on {}",
            name(&now),
            name(&self.meta.branch)
        )))
    }

    /// Moves the run's branch back to `base` if commits appeared on it (an agent commits; Forge
    /// makes the commits). The commits are named; their content is judged with the rest of the
    /// working tree, which a branch move does not touch.
    pub(super) fn undo_commits(&mut self, base: &str) -> Result<Vec<String>> {
        let head = git::head(self.root())?;
        if head == base {
            return Ok(Vec::new());
        }
        let out =
            git::git(self.root(), &["rev-list", &format!("{base}..{head}")]).unwrap_or_default();
        let mut commits: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_string)
            .collect();
        if commits.is_empty() {
            // HEAD moved elsewhere (a reset, a checkout): name it.
            commits.push(head.clone());
        }
        git::reset_keep(self.root(), base)?;
        Ok(commits)
    }

    /// Puts the paths the current slice's agents changed back as `commit` has them (the other
    /// paths — a person's — stay), and the branch at `commit`.
    pub(super) fn restore_to(&mut self, commit: &str, paths: &[String]) -> Result<()> {
        self.undo_commits(commit)?;
        let tree = self.seen.tree(&self.project.root, commit)?;
        self.put_back_paths(&tree, paths)?;
        let now = self.observe(commit)?;
        self.remember(commit, &now)
    }
}
