//! What no agent of a run, and no check, may change, whatever its role: Forge's own files
//! (config, specs, the run's breaker); git's control files — `.git/config`, everything in
//! `.git/info/` (exclude, attributes, grafts) and `.git/hooks/`, the object store's alternates,
//! `.git/shallow`, the stash's reflog; the cargo config a check would read; and the run's
//! spend ledgers, which may only grow ([`Ledgers`]). Captured before each agent call and each
//! check and put back after it, byte for byte; each thing put back is a finding for the gate.
//! Session timelines are append-only ([`Ledgers`]).
//! Refs are [`crate::evidence::refs`]'s.
//!
//! An agent under Forge's hooks or in the sandbox is stopped before such a write; this catches
//! the ones without (any command can be an agent).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::repo::Project;

pub struct Protected {
    run: String,
    /// (repository-relative or `.git/…` name, absolute path, bytes; `None` when absent).
    files: Vec<(String, PathBuf, Option<Vec<u8>>)>,
    git_dir: PathBuf,
}

/// Single files of `.git/` that steer what git shows or reads.
const GIT_FILES: [&str; 5] = [
    "config",
    "objects/info/alternates",
    "objects/info/http-alternates",
    "shallow",
    "logs/refs/stash",
];

/// Folders of `.git/` whose every file is protected, and new files removed.
const GIT_DIRS: [&str; 2] = ["info", "hooks"];

impl Protected {
    pub fn snapshot(project: &Project, git_dir: &Path, run: &str) -> Result<Protected> {
        let root = &project.root;
        let mut files: Vec<(String, PathBuf, Option<Vec<u8>>)> = forge_files(root, run)
            .into_iter()
            .map(|(rel, bytes)| (rel.clone(), root.join(&rel), Some(bytes)))
            .collect();
        for name in GIT_FILES {
            let p = git_dir.join(name);
            files.push((format!(".git/{name}"), p.clone(), read(&p)));
        }
        for dir in GIT_DIRS {
            for (name, p, bytes) in git_folder(git_dir, dir) {
                files.push((name, p, Some(bytes)));
            }
        }
        for p in cargo_configs().into_iter().chain(home_git_configs()) {
            let b = read(&p);
            files.push((p.display().to_string(), p, b));
        }
        Ok(Protected {
            run: run.to_string(),
            files,
            git_dir: git_dir.to_path_buf(),
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
        // New files under .forge/ (not the ones hooks write), new hooks and info files go.
        let known: BTreeSet<&str> = self.files.iter().map(|(n, _, _)| n.as_str()).collect();
        for (rel, _) in forge_files(root, &self.run) {
            if !known.contains(rel.as_str()) {
                let _ = std::fs::remove_file(root.join(&rel));
                out.push(rel);
            }
        }
        for dir in GIT_DIRS {
            for (name, p, _) in git_folder(&self.git_dir, dir) {
                if !known.contains(name.as_str()) {
                    let _ = std::fs::remove_file(&p);
                    out.push(name);
                }
            }
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
        let now = read(&path)
            .map(|b| format!("{:x}", Sha256::digest(&b)))
            .unwrap_or_default();
        if Some(now.as_str()) != h.as_str() {
            out.push(name.clone());
        }
    }
    out
}

/// What Forge's hooks may add to while an agent runs but nothing may shrink or rewrite: the
/// run's spend ledgers (their totals may only grow) and every session's timeline (the bytes
/// before may only be followed by more; `git clean` or an editor would otherwise take the
/// record with it). Captured before an agent call or a check, checked right after it, before
/// Forge records the call's own cost.
pub struct Ledgers {
    spend: Vec<(PathBuf, Option<Vec<u8>>, f64, u64)>,
    timelines: Vec<(PathBuf, Vec<u8>)>,
}

impl Ledgers {
    pub fn capture(project: &Project, run: &str) -> Ledgers {
        Ledgers {
            spend: ledger_paths(project, run)
                .into_iter()
                .map(|p| {
                    let bytes = read(&p);
                    let (usd, tokens) = totals(&p);
                    (p, bytes, usd, tokens)
                })
                .collect(),
            timelines: timeline_paths(project)
                .into_iter()
                .filter_map(|p| read(&p).map(|b| (p, b)))
                .collect(),
        }
    }

    /// Puts back a ledger whose spend went down and a timeline whose past changed; what was
    /// put back. A timeline keeps what was appended after an intact past.
    pub fn put_back(&self, project: &Project) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for (path, bytes, usd, tokens) in &self.spend {
            let (u, t) = totals(path);
            if u + 1e-12 < *usd || t < *tokens {
                restore(path, bytes.as_deref())?;
                out.push(format!("{} (spend went down)", project.rel(path)));
            }
        }
        for (path, before) in &self.timelines {
            if !read(path).is_some_and(|now| now.starts_with(before)) {
                restore(path, Some(before))?;
                out.push(format!("{} (its past changed)", project.rel(path)));
            }
        }
        Ok(out)
    }
}

/// The files of `.git/<dir>/` (not the `.sample` hooks git writes): a planted hook runs for
/// whoever runs git next; a graft in `info/` rewrites history as git shows it.
fn git_folder(git_dir: &Path, dir: &str) -> Vec<(String, PathBuf, Vec<u8>)> {
    let Ok(rd) = std::fs::read_dir(git_dir.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf, Vec<u8>)> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        .map(|e| {
            let name = format!(".git/{dir}/{}", e.file_name().to_string_lossy());
            let bytes = read(&e.path()).unwrap_or_default();
            (name, e.path(), bytes)
        })
        .collect();
    out.sort();
    out
}

/// The cargo configuration files in the cargo home a check uses: a `runner = "true"` there
/// would make every Rust test "pass" without running.
fn cargo_configs() -> Vec<PathBuf> {
    let Some(home) = super::checks::cargo_home() else {
        return Vec::new();
    };
    vec![home.join("config.toml"), home.join("config")]
}

/// The person's global git configuration: Forge's own git never reads it, but the person's
/// next git does (a planted `core.fsmonitor` or alias would run for them).
fn home_git_configs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut out = Vec::new();
    if let Some(h) = home {
        out.push(h.join(".gitconfig"));
    }
    if let Some(x) = xdg {
        for f in ["config", "attributes", "ignore"] {
            out.push(x.join("git").join(f));
        }
    }
    out
}

/// The programs on PATH as they were: a program an agent plants or changes there would run in
/// place of the real one for every later check and command. Compared before and after each
/// agent call and check; what appeared is removed, what changed stops the run.
///
/// In the kernel sandbox only the PATH folders a sandboxed process could write are watched —
/// those that meet one of [`crate::sandbox::writable_roots`] — since no process inside can
/// change `/usr/bin`: a PATH holds thousands of programs, and each is a stat per call.
pub struct PathWatch {
    programs: Programs,
    scope: Option<Vec<PathBuf>>,
}

impl PathWatch {
    /// `scope`: the writable roots of the sandbox the call runs in; `None` watches every
    /// folder of PATH.
    pub fn take(scope: Option<Vec<PathBuf>>) -> PathWatch {
        PathWatch {
            programs: scan(scope.as_deref()),
            scope,
        }
    }

    /// Compares with now: programs that appeared are removed (named), programs that changed or
    /// went are named in `changed` — Forge cannot put a program back.
    pub fn put_back(&self) -> (Vec<String>, Vec<String>) {
        let now = scan(self.scope.as_deref());
        let mut removed = Vec::new();
        let mut changed = Vec::new();
        for (p, s) in &now {
            match self.programs.get(p) {
                None => {
                    let _ = std::fs::remove_file(p);
                    removed.push(format!(
                        "{} (a new program on PATH; removed)",
                        Path::new(p).display()
                    ));
                }
                Some(was) if was != s => changed.push(Path::new(p).display().to_string()),
                _ => {}
            }
        }
        for p in self.programs.keys() {
            if !now.contains_key(p) {
                changed.push(Path::new(p).display().to_string());
            }
        }
        (removed, changed)
    }
}

impl super::Run<'_> {
    /// What [`PathWatch`] watches for this run: in the kernel sandbox, the PATH folders under
    /// its writable roots (as written and as resolved); without it, all of PATH.
    pub(super) fn path_scope(&self) -> Option<Vec<PathBuf>> {
        if !matches!(self.wall, super::Wall::Kernel { .. }) {
            return None;
        }
        let home = crate::repo::home();
        let roots = crate::sandbox::writable_roots(&self.project.root, &home, self.config.sandbox);
        let real: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        Some(roots.into_iter().chain(real).collect())
    }
}

/// A PATH folder's programs by path: inode, size and change time. Keyed by the path's bytes:
/// PATH holds thousands of programs, scanned before and after every agent call, and ordering
/// `PathBuf`s compares them component by component.
type Programs = BTreeMap<std::ffi::OsString, (u64, u64, i64, i64)>;

/// The programs of every PATH folder that meets `scope` (all of them without one).
fn scan(scope: Option<&[PathBuf]>) -> Programs {
    match std::env::var_os("PATH") {
        Some(path) => scan_path(&path, scope),
        None => BTreeMap::new(),
    }
}

fn scan_path(path: &std::ffi::OsStr, scope: Option<&[PathBuf]>) -> Programs {
    let mut out = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for dir in std::env::split_paths(path) {
        // `/bin` is `/usr/bin` on a merged-usr system: each folder once.
        let real = std::fs::canonicalize(&dir).unwrap_or(dir.clone());
        if !dir.is_absolute() || !seen.insert(real.clone()) {
            continue;
        }
        let meets = |r: &PathBuf| {
            [&dir, &real]
                .iter()
                .any(|d| d.starts_with(r) || r.starts_with(d))
        };
        if scope.is_some_and(|roots| !roots.iter().any(meets)) {
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            // `lstat` relative to the open folder (a PATH folder holds thousands).
            if let Ok(m) = e.metadata() {
                use std::os::unix::fs::MetadataExt;
                out.insert(
                    e.path().into_os_string(),
                    (m.ino(), m.size(), m.ctime(), m.ctime_nsec()),
                );
            }
        }
    }
    out
}

/// A protected file's bytes, read without following a link or blocking on a FIFO.
fn read(p: &Path) -> Option<Vec<u8>> {
    crate::state::read_untrusted(p, 64 * 1024 * 1024)
        .ok()
        .flatten()
}

/// Puts `path` back to `bytes` (`None`: absent) if it differs; whether it did.
fn restore(path: &Path, bytes: Option<&[u8]>) -> Result<bool> {
    let now = read(path);
    if now.as_deref() == bytes {
        return Ok(false);
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(path);
    }
    match bytes {
        Some(b) => crate::state::write_atomic(path, b)?,
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(true)
}

fn ledger_paths(project: &Project, run: &str) -> Vec<PathBuf> {
    vec![
        crate::budget::change_ledger_path(project, run),
        crate::budget::session_ledger_path(project, &format!("run-{run}")),
    ]
}

/// Every session's timeline file (a run's among them).
fn timeline_paths(project: &Project) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(crate::timeline::sessions_dir(&project.root)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path().join(crate::timeline::TIMELINE_FILE))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    out.sort();
    out
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
                && let Some(b) = read(&p)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_the_sandbox_only_path_folders_it_could_write_are_watched() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let (system, home_bin, cache_bin) = (
            root.join("usr/bin"),
            root.join("home/.local/bin"),
            root.join("home/.cargo/registry/bin"),
        );
        for dir in [&system, &home_bin, &cache_bin] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("tool"), "#!/bin/sh\n").unwrap();
        }
        let path = std::env::join_paths([&system, &home_bin, &cache_bin]).unwrap();
        let all = scan_path(&path, None);
        assert_eq!(all.len(), 3);
        // A cache folder is writable in the `check` profile: the PATH folder inside it counts,
        // and so does one that holds a writable root; `/usr/bin` and `~/.local/bin` do not.
        let scope = vec![root.join("home/.cargo/registry"), root.join("usr/bin/sub")];
        let watched: Vec<PathBuf> = scan_path(&path, Some(&scope))
            .into_keys()
            .map(PathBuf::from)
            .collect();
        assert_eq!(watched, [cache_bin.join("tool"), system.join("tool")]);
        assert!(scan_path(&path, Some(&[root.join("elsewhere")])).is_empty());
    }
}
