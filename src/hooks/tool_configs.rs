//! The tool configs a session's command made where there was none (issue 34, point 5). The
//! sandbox binds read-only each one that exists ([`TOOL_CONFIG`]), but a bind needs a path to
//! hold, and a placeholder would be read by the tool it configures (an empty
//! `rust-toolchain.toml` stops rustup; an empty `mise.toml` asks to be trusted). So the hook
//! looks instead: before each sandboxed shell call it notes which exist, in
//! `.tmp/.forge/tool-configs` (out of a session's reach), and after the call it puts aside,
//! into `.tmp/.forge/planted/`, each one the call made. What appears between calls is taken as
//! the person's, and kept. Nothing here decides what is a tool config (`sandbox::resolve`) nor
//! whether a call is sandboxed (`hooks/mod.rs`).
//!
//! [`TOOL_CONFIG`]: crate::sandbox::resolve::TOOL_CONFIG

use std::path::{Path, PathBuf};

use crate::repo::Project;
use crate::sandbox::resolve;

/// Where the last look is kept, in the project's `.tmp/.forge/`.
const STATE: &str = "tool-configs";

/// The tool configs the session keeps read-only that exist in the project and its agents'
/// worktrees, relative to the project's root, sorted. One `lstat` each.
fn present(root: &Path, writable: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for tree in std::iter::once(root.to_path_buf()).chain(resolve::agent_worktrees(root)) {
        for t in resolve::tool_config(crate::sandbox::Profile::Session, writable) {
            let p = tree.join(t);
            if std::fs::symlink_metadata(&p).is_ok()
                && let Ok(rel) = p.strip_prefix(root)
            {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

fn last_look(project: &Project) -> Option<String> {
    crate::state::read_untrusted(&project.tmp_dir().join(STATE), 1 << 20)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Keeps `now` as the last look, written only when it changed (the hook runs on every call).
fn keep(project: &Project, before: Option<&str>, now: &str) {
    if before != Some(now) {
        let _ = crate::state::write_atomic(&project.tmp_dir().join(STATE), now.as_bytes());
    }
}

/// Before a sandboxed shell call: which tool configs exist now (the person's, whatever they
/// made since the last call).
pub(super) fn note(project: &Project, writable: &[String]) {
    let root = project.root.canonicalize().unwrap_or(project.root.clone());
    keep(
        project,
        last_look(project).as_deref(),
        &present(&root, writable).join("\n"),
    );
}

/// After a sandboxed shell call: each tool config that exists now and did not before it, moved
/// into `.tmp/.forge/planted/` (a folder such as `.cargo/` whole). Returns what was moved, and
/// where to; nothing on the first look (no record of before).
pub(super) fn put_aside_new(project: &Project, writable: &[String]) -> Vec<(String, PathBuf)> {
    let root = project.root.canonicalize().unwrap_or(project.root.clone());
    let before = last_look(project);
    let now = present(&root, writable);
    let mut moved = Vec::new();
    if let Some(before) = &before {
        let known: Vec<&str> = before.lines().collect();
        let dir = project.tmp_dir().join("planted");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for rel in now.iter().filter(|r| !known.contains(&r.as_str())) {
            let to = dir.join(format!("{}-{nanos}", rel.replace('/', "%")));
            let from = root.join(rel);
            match std::fs::create_dir_all(&dir).and_then(|()| std::fs::rename(&from, &to)) {
                Ok(()) => moved.push((rel.clone(), to)),
                Err(e) => eprintln!(
                    "forge: WARNING: the command made {} (your tools read it on your next command) and Forge could not move it aside ({e}): look at it before running them here",
                    from.display()
                ),
            }
        }
    }
    let after = present(&root, writable).join("\n");
    keep(project, before.as_deref(), &after);
    moved
}
