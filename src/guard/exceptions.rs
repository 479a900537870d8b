//! A person's allow-once exceptions: `forge guard allow-once -- '<command>'` lets exactly that
//! call through once, in one project, within a time limit. They live in the person's own Forge
//! folder (`~/.config/forge/allow-once.json`), which no agent can write (the guard denies
//! writes outside the repository, the session sandbox makes HOME read-only), and the command
//! that grants them is one an agent may not run (`human-only`). Using one removes it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One exception.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Grant {
    /// The repository it applies in.
    pub root: PathBuf,
    /// The canonical tool name (`Bash`, `Write`, `mcp__…`).
    pub tool: String,
    /// The exact command line, or the exact tool input as JSON.
    pub call: String,
    pub granted_at: String,
    pub expires_at: String,
    pub by: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    #[serde(default)]
    grants: Vec<Grant>,
}

fn path(dir: &Path) -> PathBuf {
    dir.join("allow-once.json")
}

fn load(dir: &Path) -> Store {
    std::fs::read(path(dir))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save(dir: &Path, s: &Store) -> crate::Result<()> {
    let json = serde_json::to_vec_pretty(s).unwrap_or_default();
    crate::state::write_atomic(&path(dir), &json)
}

fn now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

fn live(g: &Grant, at: jiff::Timestamp) -> bool {
    g.expires_at
        .parse::<jiff::Timestamp>()
        .is_ok_and(|e| e > at)
}

/// Records an exception for one exact call, valid for `ttl`.
pub fn grant(
    dir: &Path,
    root: &Path,
    tool: &str,
    call: &str,
    by: &str,
    ttl: std::time::Duration,
) -> crate::Result<Grant> {
    std::fs::create_dir_all(dir)
        .map_err(|e| crate::Error::io(format!("create {}", dir.display()), e))?;
    let _lock = crate::state::lock_dir(dir)?;
    let mut s = load(dir);
    let at = now();
    s.grants.retain(|g| live(g, at));
    let span = jiff::SignedDuration::try_from(ttl).unwrap_or(jiff::SignedDuration::from_hours(1));
    let g = Grant {
        root: root.to_path_buf(),
        tool: tool.to_string(),
        call: call.to_string(),
        granted_at: at.to_string(),
        expires_at: at.saturating_add(span).unwrap_or(at).to_string(),
        by: by.to_string(),
    };
    s.grants.push(g.clone());
    save(dir, &s)?;
    Ok(g)
}

/// Uses up the exception for this exact call, if a person granted one that is still valid.
pub fn take(dir: &Path, root: &Path, tool: &str, call: &str) -> Option<Grant> {
    let p = path(dir);
    if !p.is_file() {
        return None;
    }
    let _lock = crate::state::lock_dir(dir).ok()?;
    let mut s = load(dir);
    let at = now();
    let i = s
        .grants
        .iter()
        .position(|g| g.root == root && g.tool == tool && g.call == call && live(g, at))?;
    let g = s.grants.remove(i);
    s.grants.retain(|g| live(g, at));
    save(dir, &s).ok()?;
    Some(g)
}

/// The exceptions still valid.
pub fn list(dir: &Path) -> Vec<Grant> {
    let at = now();
    load(dir)
        .grants
        .into_iter()
        .filter(|g| live(g, at))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exception_is_used_once_and_only_for_its_call() {
        let d = tempfile::tempdir().unwrap();
        let root = Path::new("/r");
        grant(
            d.path(),
            root,
            "Bash",
            "git push --force origin x",
            "human:a",
            std::time::Duration::from_secs(60),
        )
        .unwrap();
        assert!(take(d.path(), root, "Bash", "git push --force origin y").is_none());
        assert!(
            take(
                d.path(),
                Path::new("/other"),
                "Bash",
                "git push --force origin x"
            )
            .is_none()
        );
        assert!(take(d.path(), root, "Bash", "git push --force origin x").is_some());
        assert!(
            take(d.path(), root, "Bash", "git push --force origin x").is_none(),
            "once"
        );
        grant(
            d.path(),
            root,
            "Bash",
            "x",
            "human:a",
            std::time::Duration::from_secs(0),
        )
        .unwrap();
        assert!(take(d.path(), root, "Bash", "x").is_none(), "expired");
        assert!(list(d.path()).is_empty());
    }
}
