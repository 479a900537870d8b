//! Git, through the `git` CLI with machine formats (porcelain v2, `-z`): the few queries the
//! controls need. One `git` start costs about 3 ms, so nothing on a hot path calls it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// Runs `git args…` in `cwd` with a stable, non-interactive environment; stdout on success.
pub fn git(cwd: &Path, args: &[&str]) -> Result<Vec<u8>> {
    git_env(cwd, args, &[])
}

/// Every `git` Forge starts: stable output, never interactive, and deaf to what an agent could
/// plant to steer it. No global or system config (`~/.gitconfig` and `~/.config/git/` are
/// writable by any agent: a clean filter, an excludes file, an alias), and no `GIT_*` variable
/// inherited from whoever started Forge (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_GRAFT_FILE`, …). No
/// hooks (`core.hooksPath` is emptied, so Forge's own commits run none), no fsmonitor program,
/// no replacement objects, and no commit-graph or multi-pack-index files, which could lie about a
/// commit's parents or an object's place. Pathspec magic is off: a file named `:(top)` or
/// `*.rs` is that file.
///
/// The repository's own `.git/config` is read: Forge puts it back after every agent call.
pub(crate) fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(git_program());
    // `-C`, not a working directory for the process: a statically linked std cannot ask glibc
    // to change folders in `posix_spawn`, so a `current_dir` makes it fork, copying the page
    // tables of a Forge holding a 10,000-file tree, once per git call of `forge run`.
    cmd.arg("-C").arg(cwd);
    for (k, _) in std::env::vars_os() {
        if k.as_encoded_bytes().starts_with(b"GIT_") {
            cmd.env_remove(k);
        }
    }
    cmd.args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.commitGraph=false",
        "-c",
        "core.multiPackIndex=false",
    ])
    .args(args)
    .env("GIT_CONFIG_GLOBAL", "/dev/null")
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .env("GIT_LITERAL_PATHSPECS", "1")
    .env("GIT_NO_REPLACE_OBJECTS", "1")
    .env("LC_ALL", "C")
    .env("GIT_OPTIONAL_LOCKS", "0")
    .env("GIT_TERMINAL_PROMPT", "0")
    .env("GIT_PAGER", "cat")
    .stdin(std::process::Stdio::null());
    cmd
}

/// `git args…` as the person runs it, with their global config: only for facts about the person
/// (their name, their identity for commits, what they ignore at clean-start), never evidence.
pub fn as_person(cwd: &Path, args: &[&str]) -> Result<Vec<u8>> {
    // Their config, but no program it names runs: an agent may have planted an fsmonitor
    // command or a hook in it for the next git that reads it.
    let _t = crate::trace::span_of("git-as-person", || args.join(" "));
    let out = Command::new(git_program())
        .arg("-C")
        .arg(cwd)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .env("LC_ALL", "C")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Error::io(
                format!("cannot run `git {}` (is git installed?)", args.join(" ")),
                e,
            )
        })?;
    stdout_of(out, cwd, args)
}

/// The output of a finished git, or an error with its stderr.
fn stdout_of(out: std::process::Output, cwd: &Path, args: &[&str]) -> Result<Vec<u8>> {
    if !out.status.success() {
        return Err(Error::usage(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            cwd.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// [`git`] with extra environment variables (`GIT_INDEX_FILE`, …).
pub fn git_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Result<Vec<u8>> {
    let _t = crate::trace::span_of("git", || args.join(" "));
    let mut cmd = command(cwd, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| {
        Error::io(
            format!("cannot run `git {}` (is git installed?)", args.join(" ")),
            e,
        )
    })?;
    stdout_of(out, cwd, args)
}

/// The top of the working tree containing `cwd`.
pub fn repo_root(cwd: &Path) -> Result<PathBuf> {
    let out = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|_| {
        Error::usage(format!(
            "{} is not inside a git repository: run `git init` first",
            cwd.display()
        ))
    })?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim_end()))
}

/// `user.name` from git config, for attributing a person's acts (a breaker reset).
pub fn user_name(cwd: &Path) -> Option<String> {
    as_person(cwd, &["config", "user.name"])
        .ok()
        .map(|o| String::from_utf8_lossy(&o).trim().to_string())
        .filter(|s| !s.is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Changed in the working tree, not staged.
    Modified,
    /// Staged in the index (possibly also modified after).
    Staged,
    Untracked,
    /// Unmerged: a conflict in progress.
    Conflicted,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    pub path: String,
    pub change: Change,
}

/// `user.name` read straight from the repository's and the user's git config files, without
/// starting `git` (3 ms): for attributing timeline events, which verify writes on every run.
/// Handles the common `[user] name = …` form; `include`s and `-c` overrides are not followed.
pub fn user_name_from_files(root: &Path) -> Option<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let candidates = [
        Some(root.join(".git/config")),
        home.map(|h| h.join(".gitconfig")),
        xdg.map(|x| x.join("git/config")),
    ];
    candidates.into_iter().flatten().find_map(|p| {
        let text = std::fs::read_to_string(p).ok()?;
        config_value(&text, "user", "name")
    })
}

fn config_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut in_section = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            let name = t
                .trim_start_matches('[')
                .split([']', ' ', '"'])
                .next()
                .unwrap_or("");
            in_section = name.eq_ignore_ascii_case(section);
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((k, v)) = t.split_once('=')
            && k.trim().eq_ignore_ascii_case(key)
        {
            let v = v.trim().trim_matches('"').to_string();
            if !v.is_empty() {
                return Some(v);
            }
        }
    }
    None
}

/// Every changed, staged, untracked or conflicted path, from `git status --porcelain=v2 -z`.
/// Ignored files are not listed. Renames list the new path.
///
/// Run as the person (their global excludes apply): clean-start asks whether *their* tree is
/// clean before any agent runs. No gate after that reads it.
pub fn status(cwd: &Path) -> Result<Vec<StatusEntry>> {
    let out = as_person(
        cwd,
        &[
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )?;
    Ok(parse_status_v2(&out))
}

fn parse_status_v2(out: &[u8]) -> Vec<StatusEntry> {
    let mut entries = Vec::new();
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let Some(rec) = fields.next() {
        let rec = String::from_utf8_lossy(rec);
        match rec.as_bytes().first() {
            Some(b'1') => {
                // 1 XY sub mH mI mW hH hI path
                let parts: Vec<&str> = rec.splitn(9, ' ').collect();
                if parts.len() == 9 {
                    let xy = parts[1].as_bytes();
                    let change = if xy[0] != b'.' {
                        Change::Staged
                    } else {
                        Change::Modified
                    };
                    entries.push(StatusEntry {
                        path: parts[8].to_string(),
                        change,
                    });
                }
            }
            Some(b'2') => {
                // 2 XY sub mH mI mW hH hI Xscore path, then the original path as its own field.
                let parts: Vec<&str> = rec.splitn(10, ' ').collect();
                if parts.len() == 10 {
                    entries.push(StatusEntry {
                        path: parts[9].to_string(),
                        change: Change::Staged,
                    });
                }
                fields.next();
            }
            Some(b'u') => {
                let parts: Vec<&str> = rec.splitn(11, ' ').collect();
                if let Some(p) = parts.get(10) {
                    entries.push(StatusEntry {
                        path: p.to_string(),
                        change: Change::Conflicted,
                    });
                }
            }
            Some(b'?') => entries.push(StatusEntry {
                path: rec[2..].to_string(),
                change: Change::Untracked,
            }),
            _ => {}
        }
    }
    entries
}

/// The commit `HEAD` points at.
pub fn head(cwd: &Path) -> Result<String> {
    let out = git(cwd, &["rev-parse", "--verify", "HEAD"])?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Whether git ignores `path` (repository-relative).
pub fn is_ignored(cwd: &Path, path: &str) -> Result<bool> {
    // check-ignore takes no pathspec magic, not even `literal`; the path is Forge's own.
    let out = command(cwd, &["check-ignore", "-q", "--no-index", "--", path])
        .env_remove("GIT_LITERAL_PATHSPECS")
        .status()
        .map_err(|e| Error::io("cannot run `git check-ignore` (is git installed?)", e))?;
    match out.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(Error::usage(format!(
            "`git check-ignore {path}` failed in {}",
            cwd.display()
        ))),
    }
}

/// Splits NUL-separated git output into strings.
fn nul_list(out: &[u8]) -> Vec<String> {
    out.split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect()
}

/// The first parent of `commit`, or `None` for a root commit.
pub fn parent(cwd: &Path, commit: &str) -> Result<Option<String>> {
    let out = git(cwd, &["rev-list", "--parents", "-n", "1", commit])?;
    let line = String::from_utf8_lossy(&out);
    Ok(line.split_whitespace().nth(1).map(str::to_string))
}

/// The paths `commit` changes against its first parent (all of its files for a root commit).
pub fn commit_files(cwd: &Path, commit: &str) -> Result<Vec<String>> {
    let out = git(
        cwd,
        &[
            "diff-tree",
            "--no-commit-id",
            "--name-only",
            "-r",
            "-z",
            "--root",
            "--no-renames",
            "--no-ext-diff",
            commit,
        ],
    )?;
    let mut files = nul_list(&out);
    files.sort();
    Ok(files)
}

/// The full message of `commit`.
pub fn commit_message(cwd: &Path, commit: &str) -> Result<String> {
    let out = git(cwd, &["log", "-1", "--format=%B", commit])?;
    Ok(String::from_utf8_lossy(&out).trim_end().to_string())
}

/// Whether `ancestor` is reachable from `commit` (a commit is its own ancestor).
pub fn is_ancestor(cwd: &Path, ancestor: &str, commit: &str) -> Result<bool> {
    let out = command(cwd, &["merge-base", "--is-ancestor", ancestor, commit])
        .status()
        .map_err(|e| Error::io("cannot run `git merge-base` (is git installed?)", e))?;
    match out.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(Error::usage(format!(
            "`git merge-base --is-ancestor {ancestor} {commit}` failed in {}",
            cwd.display()
        ))),
    }
}

/// The last commits as `git log --oneline --graph`: the commit graph a person reviews when a
/// run stops on its ancestry.
pub fn graph(cwd: &Path) -> Result<String> {
    let out = git(cwd, &["log", "--oneline", "--graph", "-n", "10", "HEAD"])?;
    Ok(String::from_utf8_lossy(&out).trim_end().to_string())
}

/// Commits `paths` (as they are in the working tree, deletions included) on top of `parent` as
/// one commit and moves HEAD's branch to it with a compare-and-swap from `expected_head`. The
/// commit is built with plumbing (`write-tree`, `commit-tree`), so no git hook an agent may have
/// planted runs, and the single `update-ref` is the commit point: a kill before it leaves HEAD
/// where it was. Returns the new commit.
///
/// The tree is built in a temporary index, so the repository's own index keeps its stat cache:
/// re-reading a tree into it would make the next `git status` re-hash every file (100 ms on
/// 10,000 files). Only the committed paths are synced into it afterwards.
pub fn commit_paths(
    cwd: &Path,
    parent: &str,
    expected_head: &str,
    paths: &[String],
    message: &str,
) -> Result<String> {
    let git_dir = git(cwd, &["rev-parse", "--absolute-git-dir"])?;
    let git_dir = PathBuf::from(String::from_utf8_lossy(&git_dir).trim());
    let tmp = tempfile::Builder::new()
        .prefix("forge-index-")
        .tempfile_in(&git_dir)
        .map_err(|e| {
            Error::io(
                format!("cannot create a temp index in {}", git_dir.display()),
                e,
            )
        })?;
    let env = [("GIT_INDEX_FILE", tmp.path())];
    git_env(cwd, &["read-tree", parent], &env)?;
    if !paths.is_empty() {
        let mut args = vec!["add", "-A", "--"];
        args.extend(paths.iter().map(String::as_str));
        git_env(cwd, &args, &env)?;
    }
    let tree = git_env(cwd, &["write-tree"], &env)?;
    let tree = String::from_utf8_lossy(&tree).trim().to_string();
    let out = git(cwd, &["commit-tree", &tree, "-p", parent, "-m", message])?;
    let commit = String::from_utf8_lossy(&out).trim().to_string();
    git(
        cwd,
        &[
            "update-ref",
            "-m",
            "forge: commit",
            "HEAD",
            &commit,
            expected_head,
        ],
    )?;
    sync_index(cwd, paths)?;
    Ok(commit)
}

/// Sets the index entries of `paths` to HEAD's, leaving the rest of the index — and its stat
/// cache — alone. Plumbing (`update-index --index-info`), because `git reset -- paths`
/// refreshes the whole index afterwards: 170 ms on 10,000 files.
pub fn sync_index(cwd: &Path, paths: &[String]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut args = vec!["ls-tree", "-z", "--full-tree", "HEAD", "--"];
    args.extend(paths.iter().map(String::as_str));
    let listed = git(cwd, &args)?;
    let mut info = Vec::new();
    let mut present = std::collections::HashSet::new();
    for rec in listed.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        // `<mode> SP <type> SP <object> TAB <path>`
        if let Some(tab) = rec.iter().position(|&b| b == b'\t') {
            present.insert(rec[tab + 1..].to_vec());
        }
        info.extend_from_slice(rec);
        info.push(0);
    }
    for p in paths {
        if !present.contains(p.as_bytes()) {
            // Mode 0 removes the entry: the path is not in HEAD.
            info.extend_from_slice(b"0 0000000000000000000000000000000000000000\t");
            info.extend_from_slice(p.as_bytes());
            info.push(0);
        }
    }
    git_stdin(cwd, &["update-index", "-z", "--index-info"], &info).map(|_| ())
}

/// [`git`] with `input` on stdin, written from a thread so a git that answers while it reads
/// (`cat-file --batch`, `hash-object --stdin-paths`) cannot fill its output pipe and block both.
pub(crate) fn git_stdin(cwd: &Path, args: &[&str], input: &[u8]) -> Result<Vec<u8>> {
    git_stdin_env(cwd, args, input, &[])
}

/// [`git_stdin`] with extra environment variables (`GIT_INDEX_FILE`, …).
pub(crate) fn git_stdin_env(
    cwd: &Path,
    args: &[&str],
    input: &[u8],
    env: &[(&str, &Path)],
) -> Result<Vec<u8>> {
    use std::io::Write;
    let _t = crate::trace::span_of("git", || args.join(" "));
    let mut cmd = command(cwd, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Error::io(format!("cannot run `git {}`", args.join(" ")), e))?;
    let mut stdin = child.stdin.take();
    let out = std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(w) = stdin.as_mut() {
                // A git that exits early closes the pipe: its status tells.
                let _ = w.write_all(input);
            }
            drop(stdin);
        });
        child.wait_with_output()
    })
    .map_err(|e| Error::io(format!("cannot run `git {}`", args.join(" ")), e))?;
    stdout_of(out, cwd, args)
}

/// The `git` program, found on PATH once: letting every spawn search PATH costs a failed
/// `execve` per entry before the right one, and `forge run` starts git dozens of times a slice.
fn git_program() -> &'static Path {
    static GIT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    GIT.get_or_init(|| crate::exec::which("git").unwrap_or_else(|| PathBuf::from("git")))
}

/// Moves HEAD's branch to `commit` and the index with it, leaving the working tree as it is
/// (`git reset --mixed`): commits made since are undone, their changes kept for judging.
pub fn reset_keep(cwd: &Path, commit: &str) -> Result<()> {
    git(cwd, &["reset", "-q", commit]).map(|_| ())
}

/// Puts `paths` back as they are in `commit`: restored when `commit` has them, removed when it
/// does not. Index and working tree both.
pub fn restore_paths(cwd: &Path, commit: &str, paths: &[String]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let mut args = vec!["ls-tree", "-r", "-z", "--name-only", commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    let known = nul_list(&git(cwd, &args)?);
    if !known.is_empty() {
        let mut args = vec!["checkout", "-q", commit, "--"];
        args.extend(known.iter().map(String::as_str));
        git(cwd, &args)?;
    }
    let gone: Vec<&String> = paths.iter().filter(|p| !known.contains(p)).collect();
    if !gone.is_empty() {
        let mut args = vec!["rm", "-q", "--cached", "--ignore-unmatch", "--"];
        args.extend(gone.iter().map(|s| s.as_str()));
        git(cwd, &args)?;
        for p in gone {
            let full = cwd.join(p.trim_end_matches('/'));
            // A folder status lists whole: a nested repository an agent created.
            let removed = match std::fs::symlink_metadata(&full) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full),
                Ok(_) => std::fs::remove_file(&full),
                Err(e) => Err(e),
            };
            match removed {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(format!("cannot remove {}", full.display()), e)),
            }
        }
    }
    Ok(())
}

/// Refreshes the index's stat cache and writes it (best effort). Files written in the same
/// second as the index (a fresh checkout, `git reset --hard`) are "racily clean": every later
/// `git status` re-hashes them, and with `GIT_OPTIONAL_LOCKS=0` never records the result —
/// 140 ms a scan on 10,000 files instead of 25. One refresh by the run that owns the
/// repository fixes that for the rest of the run.
pub fn refresh_index(cwd: &Path) {
    let _ = command(cwd, &["update-index", "-q", "--refresh"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// The branch HEAD names (`refs/heads/main`), or `None` when HEAD is detached.
pub fn head_ref(cwd: &Path) -> Result<Option<String>> {
    let out = command(cwd, &["symbolic-ref", "-q", "HEAD"])
        .output()
        .map_err(|e| Error::io("cannot run `git symbolic-ref` (is git installed?)", e))?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )),
        Some(1) => Ok(None),
        _ => Err(Error::usage(format!(
            "`git symbolic-ref HEAD` failed in {}: {}",
            cwd.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

/// Points HEAD back at `branch` (or, detached, at `commit`) without touching the index or the
/// working tree, and without moving any branch: undoes a `git checkout` / `git switch`.
pub fn set_head(cwd: &Path, branch: Option<&str>, commit: &str) -> Result<()> {
    match branch {
        Some(b) => {
            // A branch an agent deleted comes back at `commit`.
            if git(cwd, &["rev-parse", "--verify", "-q", b]).is_err() {
                git(cwd, &["update-ref", b, commit])?;
            }
            git(cwd, &["symbolic-ref", "HEAD", b]).map(|_| ())
        }
        None => git(cwd, &["update-ref", "--no-deref", "HEAD", commit]).map(|_| ()),
    }
}

/// Paths whose index entries hide their working-tree state from `git status`:
/// `skip-worktree` (`S`) and `assume-unchanged` (a lowercase tag) in `git ls-files -v`.
pub fn hidden_paths(cwd: &Path) -> Result<std::collections::BTreeSet<String>> {
    let out = git(cwd, &["ls-files", "-v", "-z"])?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|r| r.len() > 2)
        .filter(|r| r[0] == b'S' || r[0].is_ascii_lowercase())
        .map(|r| String::from_utf8_lossy(&r[2..]).into_owned())
        .collect())
}

/// Clears `skip-worktree` and `assume-unchanged` on `paths`, so status sees them again.
pub fn unhide_paths(cwd: &Path, paths: &[String]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    // One flag per call: update-index keeps only the last of the two.
    for flag in ["--no-skip-worktree", "--no-assume-unchanged"] {
        let mut args = vec!["update-index", flag, "--"];
        args.extend(paths.iter().map(String::as_str));
        git(cwd, &args)?;
    }
    Ok(())
}

/// Every tracked path at HEAD.
pub fn tracked_files(cwd: &Path) -> Result<Vec<String>> {
    Ok(nul_list(&git(cwd, &["ls-files", "-z"])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::sh;

    #[test]
    fn status_sees_every_kind_of_change() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && git config user.name 'Ada L' && printf 'a\\n' > a.txt && printf 'b\\n' > 'b c.txt' && git add . && git commit -qm init",
        );
        sh(
            d,
            "printf 'x\\n' >> a.txt && printf 'y\\n' >> 'b c.txt' && git add 'b c.txt' && mkdir n && printf 'n\\n' > n/new.txt",
        );
        let mut st = status(d).unwrap();
        st.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(
            st,
            vec![
                StatusEntry {
                    path: "a.txt".into(),
                    change: Change::Modified
                },
                StatusEntry {
                    path: "b c.txt".into(),
                    change: Change::Staged
                },
                StatusEntry {
                    path: "n/new.txt".into(),
                    change: Change::Untracked
                },
            ]
        );
        assert_eq!(user_name(d).as_deref(), Some("Ada L"));
        assert_eq!(user_name_from_files(d).as_deref(), Some("Ada L"));
        let root = repo_root(&d.join("n")).unwrap();
        assert_eq!(root.canonicalize().unwrap(), d.canonicalize().unwrap());
    }

    #[test]
    fn outside_a_repository_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = repo_root(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not inside a git repository"), "{err}");
    }

    #[test]
    fn commit_paths_commits_only_those_paths_and_keeps_the_index_in_step() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && git config user.name T && git config user.email t@e.com && printf 'a\\n' > a.txt && printf 'gone\\n' > old.txt && git add . && git commit -qm init",
        );
        let base = head(d).unwrap();
        sh(
            d,
            "printf 'b\\n' > b.txt && printf 'a2\\n' > a.txt && rm old.txt && printf 'wip\\n' > wip.txt",
        );
        let paths = vec![
            "a.txt".to_string(),
            "b.txt".to_string(),
            "old.txt".to_string(),
        ];
        let c = commit_paths(d, &base, &base, &paths, "feat: x").unwrap();
        assert_eq!(head(d).unwrap(), c);
        assert_eq!(parent(d, &c).unwrap().as_deref(), Some(base.as_str()));
        assert_eq!(commit_files(d, &c).unwrap(), paths);
        assert_eq!(commit_message(d, &c).unwrap(), "feat: x");
        // Only the uncommitted file is left as a change: the index follows the new HEAD.
        let st = status(d).unwrap();
        assert_eq!(
            st,
            vec![StatusEntry {
                path: "wip.txt".into(),
                change: Change::Untracked
            }]
        );
        // A stale expected HEAD is refused: the compare-and-swap protects a moved branch.
        assert!(commit_paths(d, &base, &base, &["wip.txt".to_string()], "feat: y").is_err());
        assert_eq!(head(d).unwrap(), c);
        assert!(is_ancestor(d, &base, &c).unwrap());
        assert!(!is_ancestor(d, &c, &base).unwrap());
        // restore_paths puts files back as a commit has them, and removes the ones it lacks.
        restore_paths(d, &base, &["a.txt".to_string(), "b.txt".to_string()]).unwrap();
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "a\n");
        assert!(!d.join("b.txt").exists());
    }

    #[test]
    fn hidden_index_flags_are_found_and_cleared_and_head_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && git config user.name T && git config user.email t@e.com && printf 'a\\n' > a.txt && printf 'b\\n' > b.txt && git add . && git commit -qm init && git update-index --skip-worktree a.txt && git update-index --assume-unchanged b.txt",
        );
        let hidden = hidden_paths(d).unwrap();
        assert_eq!(
            hidden.into_iter().collect::<Vec<_>>(),
            vec!["a.txt", "b.txt"]
        );
        unhide_paths(d, &["a.txt".into(), "b.txt".into()]).unwrap();
        assert!(hidden_paths(d).unwrap().is_empty());

        let c = head(d).unwrap();
        assert_eq!(head_ref(d).unwrap().as_deref(), Some("refs/heads/main"));
        sh(d, "git checkout -q -b other");
        set_head(d, Some("refs/heads/main"), &c).unwrap();
        assert_eq!(head_ref(d).unwrap().as_deref(), Some("refs/heads/main"));
        sh(d, "git checkout -q --detach");
        assert_eq!(head_ref(d).unwrap(), None);
        set_head(d, None, &c).unwrap();
        assert_eq!(head(d).unwrap(), c);
    }
}
