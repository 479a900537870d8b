//! Refs as an agent call found and left them: every branch, tag, note and stash entry. A
//! person's branches are not an agent's to move, delete or create; the run's own branch is
//! judged by the scope gates (commits undone), everything else is put back here.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use crate::git;

/// `refname → object id` (or `ref: <target>` for a symbolic ref), loose and packed refs alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refs(pub BTreeMap<String, String>);

impl Refs {
    /// Every ref under `refs/`, read from the files git keeps them in (`packed-refs`, then the
    /// loose files, which win): an agent call and a check are each bracketed by two listings,
    /// and starting `git for-each-ref` for each would cost more than reading. A repository
    /// with the reftable format is asked through git.
    pub fn list(root: &Path, git_dir: &Path) -> Result<Refs> {
        let common = common_dir(git_dir);
        if common.join("reftable").exists() {
            return Self::list_by_git(root);
        }
        let mut refs = BTreeMap::new();
        if let Ok(packed) = std::fs::read_to_string(common.join("packed-refs")) {
            for l in packed.lines() {
                if l.starts_with('#') || l.starts_with('^') {
                    continue;
                }
                if let Some((oid, name)) = l.split_once(' ') {
                    refs.insert(name.to_string(), oid.to_string());
                }
            }
        }
        let mut stack = vec![common.join("refs")];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(p);
                    continue;
                }
                let Ok(rel) = p.strip_prefix(&common) else {
                    continue;
                };
                let name = rel.to_string_lossy().into_owned();
                if name.ends_with(".lock") {
                    continue;
                }
                if let Ok(Some(b)) = crate::state::read_untrusted(&p, 4096) {
                    let v = String::from_utf8_lossy(&b).trim().to_string();
                    refs.insert(name, v);
                }
            }
        }
        Ok(Refs(refs))
    }

    fn list_by_git(root: &Path) -> Result<Refs> {
        let out = git::git(
            root,
            &["for-each-ref", "--format=%(refname)%00%(objectname)"],
        )?;
        Ok(Refs(
            String::from_utf8_lossy(&out)
                .lines()
                .filter_map(|l| l.split_once('\0'))
                .map(|(r, o)| (r.to_string(), o.to_string()))
                .collect(),
        ))
    }

    /// Puts every ref but `except` (the run's branch) back as `self` has it: moved or deleted
    /// refs are set back, new ones deleted. One line per ref put back.
    pub fn put_back(&self, root: &Path, now: &Refs, except: Option<&str>) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for (r, was) in &self.0 {
            if Some(r.as_str()) == except {
                continue;
            }
            match now.0.get(r) {
                Some(is) if is == was => {}
                Some(_) => {
                    set(root, r, was)?;
                    out.push(format!("{r} (moved; put back)"));
                }
                None => {
                    set(root, r, was)?;
                    out.push(format!("{r} (deleted; restored)"));
                }
            }
        }
        for r in now.0.keys() {
            if !self.0.contains_key(r) && Some(r.as_str()) != except {
                git::git(root, &["update-ref", "-d", r])?;
                out.push(format!("{r} (created; removed)"));
            }
        }
        Ok(out)
    }
}

/// The folder shared refs live in: a linked worktree's `commondir`, else the git folder itself.
pub fn common_dir(git_dir: &Path) -> std::path::PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.to_path_buf(),
    }
}

/// Points `r` at `value` again: an object id, or `ref: <target>` for a symbolic ref.
fn set(root: &Path, r: &str, value: &str) -> Result<()> {
    match value.strip_prefix("ref: ") {
        Some(target) => git::git(root, &["symbolic-ref", "-m", "forge: put back", r, target]),
        None => git::git(root, &["update-ref", "-m", "forge: put back", r, value]),
    }
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::sh;

    #[test]
    fn moved_deleted_and_new_refs_are_put_back_but_the_run_branch_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo a > a && git add a && git commit -qm one && git tag v1 \
             && git branch feature && echo b > a && git stash -q && echo c > c && git add c && git commit -qm two",
        );
        let gd = d.join(".git");
        let before = Refs::list(d, &gd).unwrap();
        assert_eq!(before, Refs::list_by_git(d).unwrap());
        sh(
            d,
            "git tag -f v1 HEAD && git branch -D feature && git stash drop -q && git branch new && git commit -q --allow-empty -m three",
        );
        let now = Refs::list(d, &gd).unwrap();
        assert_eq!(now, Refs::list_by_git(d).unwrap());
        let put = before.put_back(d, &now, Some("refs/heads/main")).unwrap();
        assert_eq!(put.len(), 4, "{put:?}");
        let after = Refs::list(d, &gd).unwrap();
        for r in ["refs/tags/v1", "refs/heads/feature", "refs/stash"] {
            assert_eq!(after.0.get(r), before.0.get(r), "{r}");
        }
        assert!(!after.0.contains_key("refs/heads/new"));
        assert_ne!(after.0["refs/heads/main"], before.0["refs/heads/main"]);
    }
}
