//! What no agent of a run may change, whatever its role: Forge's own files (config, specs, the
//! run's breaker), git's settings that decide what `git status` shows (`.git/config`,
//! `.git/info/exclude`, the index's skip-worktree and assume-unchanged flags), and the run's
//! spend ledgers, which may only grow ([`Ledgers`]). Captured before each agent runs and put back after it,
//! byte for byte; each thing put back is a finding for the scope gate.
//!
//! An agent under Forge's hooks is stopped before such a write; this catches the ones without
//! hooks (any command can be an agent).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::git;
use crate::repo::Project;

pub struct Protected {
    run: String,
    /// (repository-relative or `.git/…` name, absolute path, bytes; `None` when absent).
    files: Vec<(String, PathBuf, Option<Vec<u8>>)>,
    hidden: BTreeSet<String>,
    git_dir: PathBuf,
    /// `refs/replace/*`: a replacement object makes a commit look like another.
    replace_refs: BTreeSet<String>,
}

impl Protected {
    /// `hidden`: the index's hidden paths as the run found them (they change only when an
    /// agent changes them, so one listing per run serves every snapshot).
    pub fn snapshot(
        project: &Project,
        git_dir: &Path,
        run: &str,
        hidden: &BTreeSet<String>,
    ) -> Result<Protected> {
        let root = &project.root;
        let mut files: Vec<(String, PathBuf, Option<Vec<u8>>)> = forge_files(root, run)
            .into_iter()
            .map(|(rel, bytes)| (rel.clone(), root.join(&rel), Some(bytes)))
            .collect();
        for name in ["config", "info/exclude", "info/attributes"] {
            let p = git_dir.join(name);
            files.push((format!(".git/{name}"), p.clone(), std::fs::read(&p).ok()));
        }
        for (name, p, bytes) in hook_files(git_dir) {
            files.push((name, p, Some(bytes)));
        }
        Ok(Protected {
            run: run.to_string(),
            files,
            hidden: hidden.clone(),
            git_dir: git_dir.to_path_buf(),
            replace_refs: replace_refs(root)?,
        })
    }

    /// Puts back everything that changed since the snapshot; what was put back, one line each.
    pub fn put_back(&self, project: &Project) -> Result<Vec<String>> {
        let root = &project.root;
        let mut out = Vec::new();
        for (name, path, bytes) in &self.files {
            if restore(path, bytes.as_deref())? {
                out.push(name.clone());
            }
        }
        // New files under .forge/ (not the ones hooks write) and new git hooks go.
        let known: BTreeSet<&str> = self.files.iter().map(|(n, _, _)| n.as_str()).collect();
        for (rel, _) in forge_files(root, &self.run) {
            if !known.contains(rel.as_str()) {
                let _ = std::fs::remove_file(root.join(&rel));
                out.push(rel);
            }
        }
        for (name, p, _) in hook_files(&self.git_dir) {
            if !known.contains(name.as_str()) {
                let _ = std::fs::remove_file(&p);
                out.push(name);
            }
        }
        for r in replace_refs(root)?.difference(&self.replace_refs) {
            git::git(root, &["update-ref", "-d", r])?;
            out.push(r.clone());
        }
        let hidden = git::hidden_paths(root)?;
        let new: Vec<String> = hidden.difference(&self.hidden).cloned().collect();
        if !new.is_empty() {
            git::unhide_paths(root, &new)?;
            out.extend(
                new.into_iter()
                    .map(|p| format!("{p} (skip-worktree/assume-unchanged flag)")),
            );
        }
        out.sort();
        Ok(out)
    }

    /// SHA-256 of each protected Forge file, for noticing after a kill what changed while an
    /// agent ran.
    pub fn manifest(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (name, _, bytes) in &self.files {
            let h = bytes
                .as_ref()
                .map(|b| format!("{:x}", Sha256::digest(b)))
                .unwrap_or_default();
            m.insert(name.clone(), serde_json::Value::String(h));
        }
        serde_json::Value::Object(m)
    }
}

/// The files of `manifest` whose content differs now (a run killed while an agent ran).
pub fn changed_since(
    project: &Project,
    git_dir: &Path,
    run: &str,
    manifest: &serde_json::Value,
) -> Vec<String> {
    let Some(m) = manifest.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The run's own breaker is Forge's to write after its checks: not a sign of anything.
    let own_breaker = format!(".forge/changes/{run}/verify-attempts.yaml");
    for (name, h) in m {
        if *name == own_breaker {
            continue;
        }
        let path = match name.strip_prefix(".git/") {
            Some(rest) => git_dir.join(rest),
            None => project.root.join(name),
        };
        let now = std::fs::read(&path)
            .ok()
            .map(|b| format!("{:x}", Sha256::digest(&b)))
            .unwrap_or_default();
        if Some(now.as_str()) != h.as_str() {
            out.push(name.clone());
        }
    }
    out
}

/// The run's spend ledgers, which Forge's hooks may add to while an agent runs but nothing may
/// shrink: captured before an agent call, checked right after it, before Forge records the
/// call's own cost.
pub struct Ledgers(Vec<(PathBuf, Option<Vec<u8>>, f64, u64)>);

impl Ledgers {
    pub fn capture(project: &Project, run: &str) -> Ledgers {
        Ledgers(
            ledger_paths(project, run)
                .into_iter()
                .map(|p| {
                    let bytes = std::fs::read(&p).ok();
                    let (usd, tokens) = totals(&p);
                    (p, bytes, usd, tokens)
                })
                .collect(),
        )
    }

    /// Puts back a ledger whose spend went down; what was put back.
    pub fn put_back(&self, project: &Project) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for (path, bytes, usd, tokens) in &self.0 {
            let (u, t) = totals(path);
            if u + 1e-12 < *usd || t < *tokens {
                restore(path, bytes.as_deref())?;
                out.push(format!("{} (spend went down)", project.rel(path)));
            }
        }
        Ok(out)
    }
}

/// The hooks in `.git/hooks/` (not the `.sample` files git writes): an agent could plant one
/// for whoever runs git next.
fn hook_files(git_dir: &Path) -> Vec<(String, PathBuf, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(git_dir.join("hooks")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf, Vec<u8>)> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        .map(|e| {
            let name = format!(".git/hooks/{}", e.file_name().to_string_lossy());
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (name, e.path(), bytes)
        })
        .collect();
    out.sort();
    out
}

fn replace_refs(root: &Path) -> Result<BTreeSet<String>> {
    let out = git::git(
        root,
        &["for-each-ref", "--format=%(refname)", "refs/replace/"],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Puts `path` back to `bytes` (`None`: absent) if it differs; whether it did.
fn restore(path: &Path, bytes: Option<&[u8]>) -> Result<bool> {
    let now = std::fs::read(path).ok();
    if now.as_deref() == bytes {
        return Ok(false);
    }
    match bytes {
        Some(b) => crate::state::write_atomic(path, b)?,
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(true)
}

/// The bytes of `paths` under `root` (`None` when absent), to hold a read-only agent to them.
pub fn file_bytes(root: &Path, paths: &[String]) -> Vec<(String, Option<Vec<u8>>)> {
    paths
        .iter()
        .map(|p| (p.clone(), std::fs::read(root.join(p)).ok()))
        .collect()
}

/// Puts back the files of [`file_bytes`] that changed; the paths put back.
pub fn put_back_files(root: &Path, before: &[(String, Option<Vec<u8>>)]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (p, bytes) in before {
        if restore(&root.join(p), bytes.as_deref())? {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn ledger_paths(project: &Project, run: &str) -> Vec<PathBuf> {
    vec![
        crate::budget::change_ledger_path(project, run),
        crate::budget::session_ledger_path(project, &format!("run-{run}")),
    ]
}

fn totals(path: &Path) -> (f64, u64) {
    match crate::budget::load_ledger(path) {
        Ok(l) => (l.usd, l.tokens),
        // Unreadable counts as emptied: it is put back.
        Err(_) => (0.0, 0),
    }
}

/// Forge's files under `.forge/`, except those Forge's hooks write while an agent runs (the
/// timeline, spend ledgers — guarded as append-only above — and the breaker of a change a Stop
/// hook verifies); the run's own breaker is kept.
fn forge_files(root: &Path, run: &str) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.join(crate::repo::FORGE_DIR)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            let rel = p
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            if ft.is_dir() {
                if rel != ".forge/sessions" {
                    stack.push(p);
                }
            } else if ft.is_file()
                && !hook_written(&rel, run)
                && let Ok(b) = std::fs::read(&p)
            {
                files.push((rel, b));
            }
        }
    }
    files.sort();
    files
}

fn hook_written(rel: &str, run: &str) -> bool {
    let own_breaker = format!(".forge/changes/{run}/verify-attempts.yaml");
    (rel.ends_with("/verify-attempts.yaml") && rel != own_breaker)
        || rel.ends_with("/budget.yaml")
        || rel.contains(crate::state::TEMP_PREFIX)
        || rel.starts_with(".forge/sessions/")
}
