//! Trust for relaxing rules that come with a repository. A committed `.forge/config.yaml` can
//! relax the default policy (`relaxes:`, lowered `decisions:`); in a cloned repository that is
//! someone else's choice. Until a person runs `forge guard trust` in the project, those parts
//! are shown and ignored. Trust covers exactly the relaxing parts as they were trusted (a
//! fingerprint of them): when they change, they need trusting again. The record lives in the
//! person's own Forge folder (`~/.config/forge/trust.json`), which no agent can write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Trusted {
    pub fingerprint: String,
    pub trusted_at: String,
    pub by: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    #[serde(default)]
    projects: BTreeMap<PathBuf, Trusted>,
}

fn path(dir: &Path) -> PathBuf {
    dir.join("trust.json")
}

fn load(dir: &Path) -> Store {
    std::fs::read(path(dir))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Whether a person trusted these relaxing parts of this project.
pub fn is_trusted(dir: &Path, root: &Path, fingerprint: &str) -> bool {
    load(dir)
        .projects
        .get(root)
        .is_some_and(|t| t.fingerprint == fingerprint)
}

/// What is trusted for this project, if anything.
pub fn get(dir: &Path, root: &Path) -> Option<Trusted> {
    load(dir).projects.get(root).cloned()
}

/// Trusts the project's relaxing parts as they are now.
pub fn trust(dir: &Path, root: &Path, fingerprint: &str, by: &str) -> crate::Result<Trusted> {
    set(dir, root, Some(fingerprint), by)
}

/// Withdraws trust.
pub fn untrust(dir: &Path, root: &Path) -> crate::Result<()> {
    set(dir, root, None, "").map(|_| ())
}

fn set(dir: &Path, root: &Path, fingerprint: Option<&str>, by: &str) -> crate::Result<Trusted> {
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::Error::io(format!("create {}", dir.display()), e))?;
    let _lock = crate::state::lock_dir(dir)?;
    let mut s = load(dir);
    let t = Trusted {
        fingerprint: fingerprint.unwrap_or("").to_string(),
        trusted_at: jiff::Timestamp::now().to_string(),
        by: by.to_string(),
    };
    match fingerprint {
        Some(_) => {
            s.projects.insert(root.to_path_buf(), t.clone());
        }
        None => {
            s.projects.remove(root);
        }
    }
    let json = serde_json::to_vec_pretty(&s).unwrap_or_default();
    crate::state::write_atomic(&path(dir), &json)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_covers_one_fingerprint_of_one_project() {
        let d = tempfile::tempdir().unwrap();
        let r = Path::new("/r");
        assert!(!is_trusted(d.path(), r, "abc"));
        trust(d.path(), r, "abc", "human:a").unwrap();
        assert!(is_trusted(d.path(), r, "abc"));
        assert!(!is_trusted(d.path(), r, "abd"));
        assert!(!is_trusted(d.path(), Path::new("/s"), "abc"));
        untrust(d.path(), r).unwrap();
        assert!(!is_trusted(d.path(), r, "abc"));
    }
}
