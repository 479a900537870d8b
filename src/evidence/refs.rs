//! Refs as an agent call found and left them: every branch, tag, note and stash entry. A
//! person's branches are not an agent's to move, delete or create; the run's own branch is
//! judged by the scope gates (commits undone), everything else is put back here.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use crate::git;

/// `refname → object id`, from `for-each-ref` (loose and packed refs alike).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refs(pub BTreeMap<String, String>);

impl Refs {
    pub fn list(root: &Path) -> Result<Refs> {
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
                    git::git(root, &["update-ref", "-m", "forge: put back", r, was])?;
                    out.push(format!("{r} (moved; put back)"));
                }
                None => {
                    git::git(root, &["update-ref", "-m", "forge: put back", r, was])?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn sh(dir: &Path, script: &str) {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    #[test]
    fn moved_deleted_and_new_refs_are_put_back_but_the_run_branch_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && echo a > a && git add a && git commit -qm one && git tag v1 \
             && git branch feature && echo b > a && git stash -q && echo c > c && git add c && git commit -qm two",
        );
        let before = Refs::list(d).unwrap();
        sh(
            d,
            "git tag -f v1 HEAD && git branch -D feature && git stash drop -q && git branch new && git commit -q --allow-empty -m three",
        );
        let now = Refs::list(d).unwrap();
        let put = before.put_back(d, &now, Some("refs/heads/main")).unwrap();
        assert_eq!(put.len(), 4, "{put:?}");
        let after = Refs::list(d).unwrap();
        for r in ["refs/tags/v1", "refs/heads/feature", "refs/stash"] {
            assert_eq!(after.0.get(r), before.0.get(r), "{r}");
        }
        assert!(!after.0.contains_key("refs/heads/new"));
        assert_ne!(after.0["refs/heads/main"], before.0["refs/heads/main"]);
    }
}
