//! No trace in the project: the control folders and files the sandbox makes so that a missing
//! one (`.claude/`, `.git/modules`, an included git config) can be bound read-only — and so
//! never created by a command — are removed once no sandbox binds them any more.
//!
//! They cannot exist only inside the sandbox's mount namespace: a bind needs its mount point on
//! the file system the project shares with the person, and removing that point from outside
//! detaches the bind in every namespace that holds it (docs/sandbox.md, Limits), which would
//! hand the path to the command. So they are made before the namespace, and a *sweeper* — a
//! small process outside every sandbox, left by the command that made them — waits until no
//! mount namespace of the machine has one of them as a mount point (the command's, a keeper's
//! kept for the session, another command's that found them there), then removes what is still
//! as it was made: an empty folder, an empty file. What the person put there meanwhile stays.
//!
//! A lock orders the two sides: every command that builds a namespace holds it shared from
//! before its plan reads the project until its binds are made (its `exec` closes it); a
//! sweeper holds it alone to look and remove, so no command can find a pin, then lose it
//! before binding it. The lock file is write-only (mode 0200) in the user's private sandbox
//! folder: a sandboxed command, with no write grant there and no capability, cannot open it
//! to hold it.
//!
//! Nothing here decides what is pinned (resolve.rs) or how it is bound (mounts.rs).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::libc;

use super::{Plan, SandboxError};

/// How long a command waits for a sweeper to finish looking before it gives up.
const LOCK_WAIT: Duration = Duration::from_secs(5);
/// A sweeper looks again after this long, doubling up to [`SWEEP_MAX`].
const SWEEP_FIRST: Duration = Duration::from_millis(50);
const SWEEP_MAX: Duration = Duration::from_secs(2);

/// The lock in the user's private sandbox folder `base` (made by the caller).
fn lock_path(base: &Path) -> PathBuf {
    base.join("sweep.lock")
}

fn open_lock(base: &Path) -> Option<OwnedFd> {
    let c = CString::new(lock_path(base).as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned right away.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o200,
        )
    };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Holds the lock shared until the descriptor closes (at `exec`): no sweeper removes a pin
/// between this command's plan and its binds.
pub fn hold(base: &Path) -> Result<OwnedFd, SandboxError> {
    let path = lock_path(base);
    let fd = open_lock(base).ok_or_else(|| SandboxError::Setup {
        step: format!("open the lock {}", path.display()),
        source: std::io::Error::last_os_error(),
    })?;
    let start = Instant::now();
    loop {
        // SAFETY: flock(2) on a descriptor this function owns.
        if unsafe { libc::flock(fd.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return Ok(fd);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::WouldBlock || start.elapsed() > LOCK_WAIT {
            return Err(SandboxError::Setup {
                step: format!(
                    "lock {} (held by another process for more than {} s; if no Forge sandbox is starting, remove the file)",
                    path.display(),
                    LOCK_WAIT.as_secs()
                ),
                source: e,
            });
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Makes the plan's missing control folders and files, empty; returns what it made, each
/// before what it made inside it (a folder on the way included).
pub fn make(plan: &Plan) -> Result<Vec<PathBuf>, SandboxError> {
    let mut made = Vec::new();
    for p in &plan.placeholder_files {
        // An include the config names in a folder that does not exist yet: that folder too.
        if let Some(parent) = p.parent() {
            let _ = make_dirs(parent, &mut made);
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p);
        match file {
            Ok(_) => made.push(p.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(SandboxError::Setup {
                    step: format!("create the empty control file {}", p.display()),
                    source: e,
                });
            }
        }
    }
    for p in &plan.placeholders {
        make_dirs(p, &mut made).map_err(|e| SandboxError::Setup {
            step: format!("create the empty control folder {}", p.display()),
            source: e,
        })?;
    }
    Ok(made)
}

/// `create_dir_all`, noting each folder it made.
fn make_dirs(p: &Path, made: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let missing: Vec<&Path> = p
        .ancestors()
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .collect();
    for dir in missing.into_iter().rev() {
        match std::fs::create_dir(dir) {
            Ok(()) => made.push(dir.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Leaves a sweeper for `made`. Call it from the caller's mount namespace, before this process
/// enters its own: the sweeper must stay outside, where a bind is no mount point. Best effort:
/// without it the pins stay, as they did before.
pub fn leave(base: &Path, made: Vec<PathBuf>) {
    if made.is_empty() {
        return;
    }
    let base = base.to_path_buf();
    // Two forks, so the sweeper is nobody's child: not CMD's, not the caller's (which may wait
    // for its children's output to close).
    // SAFETY: fork(2) in a single-threaded process; the children make system calls and end
    // with _exit.
    unsafe {
        let middle = libc::fork();
        if middle < 0 {
            return;
        }
        if middle == 0 {
            libc::setsid();
            if libc::fork() == 0 {
                sweeper_main(&base, &made);
            }
            libc::_exit(0);
        }
        libc::waitpid(middle, std::ptr::null_mut(), 0);
    }
}

fn sweeper_main(base: &Path, made: &[PathBuf]) -> ! {
    // SAFETY: system calls on this process's own state; nothing here returns.
    unsafe {
        // The caller's descriptors (its shared lock among them, its pipes) are not ours to keep.
        libc::syscall(
            libc::SYS_close_range,
            0 as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
    }
    super::keeper::detached_as(c"forge-sweeper");
    let own = std::fs::read_link("/proc/self/ns/mnt").ok();
    let mut wait = SWEEP_FIRST;
    loop {
        std::thread::sleep(wait);
        wait = (wait * 2).min(SWEEP_MAX);
        let Some(lock) = open_lock(base) else { break };
        // SAFETY: flock(2) on a descriptor this process owns; blocks while a command holds it.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            break;
        }
        if !bound_elsewhere(made, own.as_deref()) {
            remove(made);
            break;
        }
        drop(lock);
    }
    // SAFETY: ends this process.
    unsafe { libc::_exit(0) }
}

/// Whether a mount namespace other than `own` has one of `paths` as a mount point. A process
/// whose namespace cannot be read is no sandbox's: a sandbox's user namespace is its caller's
/// user's, whose processes read it.
fn bound_elsewhere(paths: &[PathBuf], own: Option<&Path>) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return true;
    };
    let mut seen: Vec<PathBuf> = Vec::new();
    for e in procs.flatten() {
        let name = e.file_name();
        if !name.as_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(ns) = std::fs::read_link(e.path().join("ns/mnt")) else {
            continue;
        };
        if Some(ns.as_path()) == own || seen.contains(&ns) {
            continue;
        }
        let Ok(table) = std::fs::read(e.path().join("mountinfo")) else {
            continue;
        };
        seen.push(ns);
        if mount_points(&table).any(|m| paths.iter().any(|p| p.as_os_str().as_bytes() == m)) {
            return true;
        }
    }
    false
}

/// The mount points of a `/proc/<pid>/mountinfo` table (its fifth field), unescaped.
fn mount_points(table: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    table.split(|b| *b == b'\n').filter_map(|line| {
        let field = line.split(|b| *b == b' ').nth(4)?;
        Some(unescape(field))
    })
}

/// `\040` and the like: the octal escapes mountinfo writes for space, tab, newline, `\`.
fn unescape(f: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.len());
    let mut i = 0;
    while i < f.len() {
        if f[i] == b'\\'
            && i + 3 < f.len()
            && f[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = f[i + 1..i + 4]
                .iter()
                .fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(f[i]);
            i += 1;
        }
    }
    out
}

/// Removes what is still as it was made — an empty folder, an empty file — innermost first.
fn remove(made: &[PathBuf]) {
    for p in made.iter().rev() {
        let Ok(m) = std::fs::symlink_metadata(p) else {
            continue;
        };
        if m.is_dir() {
            // Fails on a folder someone put something in: it stays.
            let _ = std::fs::remove_dir(p);
        } else if m.is_file() && m.len() == 0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_the_fifth_field_unescaped() {
        let table = b"36 35 98:0 /mnt1 /mnt/my\\040dir rw,noatime master:1 - ext3 /dev/root rw\n\
                      37 35 98:0 / /w/repo/.claude ro - ext4 /dev/sda1 rw\n";
        let m: Vec<Vec<u8>> = mount_points(table).collect();
        assert_eq!(
            m,
            vec![b"/mnt/my dir".to_vec(), b"/w/repo/.claude".to_vec()]
        );
    }

    #[test]
    fn only_what_is_still_empty_is_removed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let mut made = Vec::new();
        make_dirs(&root.join(".tmp/.forge"), &mut made).unwrap();
        make_dirs(&root.join(".claude"), &mut made).unwrap();
        make_dirs(&root.join(".codex"), &mut made).unwrap();
        std::fs::write(root.join("empty.inc"), "").unwrap();
        std::fs::write(root.join("full.inc"), "").unwrap();
        made.push(root.join("empty.inc"));
        made.push(root.join("full.inc"));
        assert_eq!(
            made[..2],
            [root.join(".tmp"), root.join(".tmp/.forge")],
            "each folder before what is inside it"
        );
        // The person's, meanwhile.
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(root.join("full.inc"), "[core]").unwrap();
        remove(&made);
        for gone in [".tmp", ".codex", "empty.inc"] {
            assert!(!root.join(gone).exists(), "{gone}");
        }
        assert!(root.join(".claude/settings.json").exists());
        assert!(root.join("full.inc").exists());
    }
}
