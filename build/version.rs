//! The commit a build is made from, for `forge --version`. Shared by `build.rs` and its test
//! (`tests/build_version.rs`), so the fallback for a source tree without git is tested too.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `git args…` in `dir`, its trimmed stdout when it succeeds.
pub fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `<short hash> <commit date>` of HEAD when `dir` is the top of a git checkout; `None` for a
/// source tree without git (a tarball, a vendored copy inside someone else's repository).
pub fn commit(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), dir) {
        return None;
    }
    git(dir, &["log", "-1", "--format=%h %cs", "--abbrev=10"])
}

/// What follows the version number: ` (<commit>)`, or a note that none was recorded.
pub fn suffix(commit: Option<&str>) -> String {
    match commit {
        Some(c) => format!(" ({c})"),
        None => " (no commit recorded: built outside a git checkout)".to_string(),
    }
}

/// The files whose change means HEAD moved: the checkout's `HEAD`, the branch's ref and
/// `packed-refs` (only those that exist: cargo reruns the build script on every build for a
/// path that does not).
pub fn watched(dir: &Path) -> Vec<PathBuf> {
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { dir.join(p) }
    };
    let mut out = Vec::new();
    if let Some(git_dir) = git(dir, &["rev-parse", "--git-dir"]).map(abs) {
        out.push(git_dir.join("HEAD"));
    }
    if let Some(common) = git(dir, &["rev-parse", "--git-common-dir"]).map(abs) {
        out.push(common.join("packed-refs"));
        if let Some(r) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
            out.push(common.join(r));
        }
    }
    out.retain(|p| p.exists());
    out
}
