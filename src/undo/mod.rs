//! Work that can be undone (issue 34, point 4): before each tool call of a live session that
//! can change files, the hook journals the project's tracked and untracked files and git's
//! refs, HEAD and index; `forge undo [--to CALL]` puts them back as they were before any call
//! of the session.
//!
//! - [`store`]: the content-addressed store the journal keeps bytes in, under `.tmp/.forge/`
//!   (which no session command can write).
//! - [`journal`]: taking the journal, cheaply (the stat cache kept between hook processes).
//! - [`restore`]: the calls and what each changed, and the undo itself.
//!
//! What the journal cannot give back is said, never hidden: a file over
//! `undo.max_file_size`, a ref whose commit an agent's `git gc --prune=now` removed from git's
//! objects (docs/undo.md).

pub mod journal;
pub mod restore;
pub mod store;

use serde::{Deserialize, Deserializer};

pub use journal::{Call, Journal};
pub use restore::{Changed, Listed, Refused, Undone};

/// The `undo:` section of `.forge/config.yaml`. A leaf: serde and std only.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct UndoConfig {
    /// Whether the hooks journal each call.
    #[serde(default = "yes")]
    pub journal: bool,
    /// The largest file the journal keeps (bytes, or `512KiB`, `16MiB`, `1GiB`); a larger one
    /// is listed as not kept and `forge undo` says so.
    #[serde(default = "default_max_file_size", deserialize_with = "de_size")]
    pub max_file_size: u64,
    /// The most files git tracks in a project the hooks journal: each call walks the tree, so
    /// a larger one would pay for the journal on every call (~7 µs a file, BENCHMARKS.md §11).
    #[serde(default = "default_max_files")]
    pub max_files: u64,
}

impl Default for UndoConfig {
    fn default() -> Self {
        UndoConfig {
            journal: true,
            max_file_size: default_max_file_size(),
            max_files: default_max_files(),
        }
    }
}

/// 50,000 tracked files: ~0.35 s of journal a call, the most a hook should add.
pub const DEFAULT_MAX_FILES: u64 = 50_000;

fn default_max_files() -> u64 {
    DEFAULT_MAX_FILES
}

/// How many files git's index at `git_dir` holds, when that is more than `max`: read from the
/// index's header (its third word), so asking costs one small read whatever the size.
pub fn too_many_files(git_dir: &std::path::Path, max: u64) -> Option<u64> {
    use std::io::Read;
    let mut head = [0u8; 12];
    std::fs::File::open(git_dir.join("index"))
        .and_then(|mut f| f.read_exact(&mut head))
        .ok()?;
    if &head[..4] != b"DIRC" {
        return None;
    }
    let n = u64::from(u32::from_be_bytes([head[8], head[9], head[10], head[11]]));
    (n > max).then_some(n)
}

fn yes() -> bool {
    true
}

/// 16 MiB: source files, lockfiles and git's index of a large project fit; build outputs
/// (ignored anyway) and media do not.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 16 << 20;

fn default_max_file_size() -> u64 {
    DEFAULT_MAX_FILE_SIZE
}

fn de_size<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        N(u64),
        S(String),
    }
    match Size::deserialize(d)? {
        Size::N(n) => Ok(n),
        Size::S(s) => parse_size(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`undo.max_file_size: {s}` is not a size: write bytes (16777216) or a number with KiB, MiB or GiB (16MiB)"
            ))
        }),
    }
}

/// `16MiB`, `512 KiB`, `1GiB`, `1000`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    let mult = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" | "KB" => 1 << 10,
        "MiB" | "M" | "MB" => 1 << 20,
        "GiB" | "G" | "GB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Tools that change no file: not journaled. Every other tool is, an unknown one (an MCP
/// server's) included: a call journaled for nothing costs a look, one missed costs the work.
pub fn changes_nothing(canonical_tool: &str) -> bool {
    matches!(
        canonical_tool,
        "Read"
            | "Grep"
            | "Glob"
            | "LS"
            | "WebFetch"
            | "WebSearch"
            | "web_search"
            | "google_web_search"
            | "TodoWrite"
            | "TodoRead"
            | "write_todos"
            | "Task"
            | "Agent"
            | "ExitPlanMode"
            | "update_plan"
            | "save_memory"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count comes from the index's header, as git wrote it.
    #[test]
    fn a_project_with_more_tracked_files_than_the_limit_is_named() {
        let dir = tempfile::tempdir().unwrap();
        crate::testing::sh(
            dir.path(),
            "git init -q && echo a > a && echo b > b && echo c > c && git add -A",
        );
        let git = dir.path().join(".git");
        assert_eq!(too_many_files(&git, 2), Some(3));
        assert_eq!(too_many_files(&git, 3), None);
        assert_eq!(too_many_files(&dir.path().join("none"), 0), None);
        let c: UndoConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c.max_files, DEFAULT_MAX_FILES);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("16MiB"), Some(16 << 20));
        assert_eq!(parse_size("512 KiB"), Some(512 << 10));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("3TiB"), None);
        let c: UndoConfig = serde_json::from_str(r#"{"max_file_size": "2MiB"}"#).unwrap();
        assert_eq!(c.max_file_size, 2 << 20);
        assert!(c.journal);
        let e = serde_json::from_str::<UndoConfig>(r#"{"max_file_size": "big"}"#).unwrap_err();
        assert!(e.to_string().contains("undo.max_file_size"), "{e}");
    }
}
