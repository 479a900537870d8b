//! Where Forge's files live in a project, in one place so no control spells a path twice.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub const FORGE_DIR: &str = ".forge";
pub const CONFIG_FILE: &str = ".forge/config.yaml";
pub const CHANGES_DIR: &str = ".forge/changes";
/// Local, git-ignored working state: logs, runs, the active change.
pub const TMP_DIR: &str = ".tmp/.forge";

/// A project Forge works in: the folder holding `.forge/`.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    /// Finds the project from `cwd` by walking up to the nearest `.forge/config.yaml`. No git
    /// process is started: `forge verify` and the hooks run on every agent step.
    pub fn discover(cwd: &Path) -> Result<Project> {
        let mut dir = Some(cwd);
        while let Some(d) = dir {
            if d.join(CONFIG_FILE).is_file() {
                return Ok(Project {
                    root: d.to_path_buf(),
                });
            }
            dir = d.parent();
        }
        Err(Error::Config {
            path: cwd.join(CONFIG_FILE),
            message: "no Forge configuration here or in any parent folder; run `forge init` in the repository root".into(),
        })
    }

    /// The project of an agent session started in `start`: the outermost `.forge/config.yaml`
    /// from `start` up to the outermost folder holding `.git` (the repository's root); where
    /// there is none, the nearest one as [`Project::discover`] finds it.
    ///
    /// Not the nearest: the session's commands may write anywhere in the project but its own
    /// `.forge/` (the sandbox protects that one only), so a `.forge/config.yaml` below the
    /// project root may be the agent's, and it must not decide how the agent is judged, walled
    /// or verified.
    pub fn discover_session(start: &Path) -> Result<Project> {
        let repo_root = start.ancestors().filter(|d| d.join(".git").exists()).last();
        let outermost = repo_root.and_then(|top| {
            start
                .ancestors()
                .take_while(|d| d.starts_with(top))
                .filter(|d| d.join(CONFIG_FILE).is_file())
                .last()
        });
        match outermost {
            Some(root) => Ok(Project {
                root: root.to_path_buf(),
            }),
            None => Project::discover(start),
        }
    }

    pub fn at(root: impl Into<PathBuf>) -> Project {
        Project { root: root.into() }
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    pub fn changes_dir(&self) -> PathBuf {
        self.root.join(CHANGES_DIR)
    }

    pub fn change_dir(&self, change: &str) -> PathBuf {
        self.changes_dir().join(change)
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join(TMP_DIR)
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.tmp_dir().join("logs")
    }

    /// `path` relative to the root when it is inside, for short messages.
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// The user's home folder: `$HOME`, else `/root` (a service account without one).
pub fn home() -> std::path::PathBuf {
    std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("/root"))
}

/// A change name is a path segment and a YAML/JSON token: lowercase letters, digits and `-`,
/// starting with a letter or digit.
pub fn validate_change_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 80
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "invalid change name `{name}`: use lowercase letters, digits and `-` (e.g. `guest-checkout`)"
        )))
    }
}
