//! State files: atomic writes under a lock, and loads that fail closed.
//!
//! Every control that persists something (breaker, budget, run state) goes through here, so the
//! guarantees hold everywhere: a write is a temp file in the same folder, fsynced, renamed over
//! the old one and the folder fsynced — a kill at any instant leaves the old or the new file —
//! and a read-modify-write holds an exclusive lock on the folder, so two agents updating the same
//! change at once both count.

use std::fs::{File, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Prefix of the temp files of in-flight writes. A write killed before its rename leaves one
/// behind; `forge init` ignores them in git and loaders never read them.
pub const TEMP_PREFIX: &str = ".forge-tmp-";

/// Reads a file an agent could have written or replaced: a regular file only (not a FIFO that
/// would block Forge forever, not a device, not a link to elsewhere), at most `max` bytes.
/// `Ok(None)` when it does not exist; `Err` says what is wrong with it.
pub fn read_untrusted(path: &Path, max: u64) -> std::result::Result<Option<Vec<u8>>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let f = match f {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err("is a symbolic link, not a file".into());
        }
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    read_regular(f, max).map(Some)
}

/// The bytes of an opened file that must be a regular file of at most `max` bytes.
fn read_regular(f: File, max: u64) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let m = f.metadata().map_err(|e| format!("cannot be read: {e}"))?;
    if !m.is_file() {
        return Err("is not a regular file (a FIFO, a device or a folder?)".into());
    }
    if m.len() > max {
        return Err(format!("is {} bytes, over the {max}-byte limit", m.len()));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("is over the {max}-byte limit"));
    }
    Ok(bytes)
}

/// Opens `rel` under `dir` the way the kernel resolves it with no symbolic link on the way and
/// never out of `dir` (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): a path an agent
/// could have built — `build/junit.xml` with `build` a link to a person's folder — cannot lead
/// Forge elsewhere. An absolute `rel` is resolved from `/`, still without links.
#[cfg(target_os = "linux")]
pub fn open_beneath(dir: &Path, rel: &Path, flags: i32) -> std::io::Result<std::os::fd::OwnedFd> {
    use nix::libc;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let (dir, rel) = match rel.strip_prefix("/") {
        Ok(r) => (Path::new("/"), r),
        Err(_) => (dir, rel),
    };
    let d = File::open(dir)?;
    let c = std::ffi::CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: `open_how` is plain data; every field is set below.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a valid folder descriptor, a NUL-terminated path and an `open_how` of the size
    // passed, all alive across the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            d.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us alone.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

fn link_on_the_way(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(nix::libc::ELOOP) | Some(nix::libc::EXDEV)
    )
}

/// [`read_untrusted`] for `rel` under `dir`, with no symbolic link anywhere on the way.
pub fn read_beneath(
    dir: &Path,
    rel: &Path,
    max: u64,
) -> std::result::Result<Option<Vec<u8>>, String> {
    #[cfg(target_os = "linux")]
    let f = open_beneath(
        dir,
        rel,
        nix::libc::O_RDONLY | nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK,
    )
    .map(File::from);
    #[cfg(not(target_os = "linux"))]
    let f = File::open(dir.join(rel));
    let f = match f {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if link_on_the_way(&e) => {
            return Err("goes through a symbolic link (or out of the folder)".into());
        }
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    read_regular(f, max).map(Some)
}

/// Removes the file `rel` under `dir` (absent is fine), with no symbolic link on the way: a link
/// named like the file is removed itself, a link among the folders is an error.
pub fn remove_beneath(dir: &Path, rel: &Path) -> std::result::Result<(), String> {
    let Some(name) = rel.file_name() else {
        return Err("names no file".into());
    };
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let parent = rel.parent().unwrap_or(Path::new(""));
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let d = match open_beneath(dir, parent, nix::libc::O_PATH | nix::libc::O_DIRECTORY) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if link_on_the_way(&e) => {
                return Err("goes through a symbolic link (or out of the folder)".into());
            }
            Err(e) => return Err(e.to_string()),
        };
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(name.as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: a folder descriptor we own and a NUL-terminated name, alive across the call.
        if unsafe { nix::libc::unlinkat(d.as_raw_fd(), c.as_ptr(), 0) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::NotFound {
            Ok(())
        } else {
            Err(e.to_string())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = name;
        match std::fs::remove_file(dir.join(rel)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Makes the folders above the file `rel` under `dir` that do not exist yet, with no symbolic
/// link on the way: a check's report path whose folder only the working tree had (jest writes
/// its `--outputFile` but makes no folder for it).
#[cfg(target_os = "linux")]
pub fn make_parents_beneath(dir: &Path, rel: &Path) -> std::result::Result<(), String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let Some(parent) = rel.parent() else {
        return Ok(());
    };
    let mut at = std::path::PathBuf::from(".");
    for comp in parent.components() {
        let std::path::Component::Normal(name) = comp else {
            return Err("names a folder outside the checkout".into());
        };
        let d =
            open_beneath(dir, &at, nix::libc::O_PATH | nix::libc::O_DIRECTORY).map_err(|e| {
                if link_on_the_way(&e) {
                    "goes through a symbolic link (or out of the folder)".to_string()
                } else {
                    e.to_string()
                }
            })?;
        let c = std::ffi::CString::new(name.as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: a folder descriptor we own and a NUL-terminated name, alive across the call.
        if unsafe { nix::libc::mkdirat(d.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(e.to_string());
            }
        }
        at.push(name);
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn make_parents_beneath(dir: &Path, rel: &Path) -> std::result::Result<(), String> {
    match rel.parent() {
        Some(p) => std::fs::create_dir_all(dir.join(p)).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` atomically: either the old content or the new one is ever visible.
///
/// The file keeps the mode it had (a team's `.gitignore` or agent settings stay as readable as
/// they were); a new file gets what the umask leaves of 0666, as `std::fs::write` would give it
/// (0644 under umask 022). A temp file alone would be 0600 and, renamed into place, would make
/// every file Forge touches unreadable to the rest of the team. Set-id and sticky bits are never
/// carried over.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent_dir(path);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let kept_mode = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .map(|m| m.permissions().mode() & 0o777);
    // 0666 at creation: the kernel applies the umask, with no process-wide umask juggling.
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(&dir)
        .map_err(|e| Error::io(format!("cannot create a temp file in {}", dir.display()), e))?;
    if let Some(mode) = kept_mode {
        tmp.as_file()
            .set_permissions(Permissions::from_mode(mode))
            .map_err(|e| {
                Error::io(
                    format!("cannot set the mode of {}", tmp.path().display()),
                    e,
                )
            })?;
    }
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Error::io(format!("cannot write {}", tmp.path().display()), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io(format!("cannot replace {}", path.display()), e.error))?;
    // The rename is durable only once the directory entry is.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path` (making its folder) through a temp file in the same folder renamed
/// over it — a kill leaves the old file or the new one — but without fsync: for what Forge can
/// make again if a crash loses it (the undo journal's objects and its last look), where two
/// fsyncs on every tool call would cost more than the file is worth.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent_dir(path);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(&dir)
        .map_err(|e| Error::io(format!("cannot write in {}", dir.display()), e))?;
    tmp.write_all(bytes)
        .map_err(|e| Error::io(format!("cannot write {}", tmp.path().display()), e))?;
    tmp.persist(path)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e.error))?;
    Ok(())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// An exclusive lock on a folder, released on drop. Locking the folder rather than the file
/// survives the rename of an atomic write (a lock on the old inode would guard nothing) and
/// leaves no lock file for git to see.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// How long Forge waits for a lock before it gives up with an error. Any process that can open
/// a file — for reading is enough — can `flock` it; an agent's leftover process holding one
/// must not hang a hook until the client's own timeout lets the agent past the Stop hook.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes the exclusive lock on `file`, waiting at most [`LOCK_WAIT`] (`FORGE_LOCK_WAIT_MS`
/// shortens it, for tests).
pub fn lock_file(file: &File, path: &Path) -> Result<()> {
    let start = std::time::Instant::now();
    let wait = std::env::var("FORGE_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis)
        .unwrap_or(LOCK_WAIT)
        .min(LOCK_WAIT);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::io(
                    format!("cannot lock {}", path.display()),
                    std::io::Error::other(format!(
                        "another process has held it for {} ms (a process an agent left running?)",
                        wait.as_millis()
                    )),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::io(format!("cannot lock {}", path.display()), e));
            }
        }
    }
}

/// Takes the exclusive lock on `dir` (created if missing), waiting at most [`LOCK_WAIT`].
pub fn lock_dir(dir: &Path) -> Result<DirLock> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let file =
        File::open(dir).map_err(|e| Error::io(format!("cannot open {}", dir.display()), e))?;
    lock_file(&file, dir)?;
    Ok(DirLock { _file: file })
}

/// Like [`lock_dir`], but returns `None` at once when another process holds the lock: for a
/// long-lived owner (a `forge run`) that a second one must not queue behind.
pub fn try_lock_dir(dir: &Path) -> Result<Option<DirLock>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let file =
        File::open(dir).map_err(|e| Error::io(format!("cannot open {}", dir.display()), e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(DirLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(Error::io(format!("cannot lock {}", dir.display()), e))
        }
    }
}

/// A document kept in a state file: how it reads and writes itself, strictly.
pub trait StateDoc: Sized {
    /// Parses the file's text; an error says what is wrong (line, field).
    fn parse(text: &str) -> std::result::Result<Self, String>;
    fn render(&self) -> String;
}

/// Reads a state file. `Ok(None)` when it does not exist; an [`Error::State`] naming the file
/// and `recovery` when it exists but cannot be trusted.
pub fn load<T: StateDoc>(path: &Path, recovery: &str) -> Result<Option<T>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let text = String::from_utf8(text).map_err(|_| Error::State {
        path: path.to_path_buf(),
        message: "is not UTF-8 text".into(),
        recovery: recovery.to_string(),
    })?;
    T::parse(&text).map(Some).map_err(|message| Error::State {
        path: path.to_path_buf(),
        message,
        recovery: recovery.to_string(),
    })
}

/// Locked read-modify-write: loads the current document (if any), lets `f` compute the new one
/// and a result, and writes the new one atomically before releasing the lock. A file that does
/// not parse stops the update with [`Error::State`]; `f` never sees a made-up default for it.
pub fn update<T: StateDoc, R>(
    path: &Path,
    recovery: &str,
    f: impl FnOnce(Option<T>) -> Result<(T, R)>,
) -> Result<R> {
    let _lock = lock_dir(&parent_dir(path))?;
    let current = load::<T>(path, recovery)?;
    let (next, result) = f(current)?;
    write_atomic(path, next.render().as_bytes())?;
    Ok(result)
}

/// Like [`update`], but `f` may replace a state file that does not parse — for the human
/// recovery commands, which exist precisely to clear such a file. `f` receives the parse
/// error's message in that case.
pub fn update_or_recover<T: StateDoc, R>(
    path: &Path,
    f: impl FnOnce(std::result::Result<Option<T>, String>) -> Result<(T, R)>,
) -> Result<R> {
    let _lock = lock_dir(&parent_dir(path))?;
    let current = match load::<T>(path, "") {
        Ok(v) => Ok(v),
        Err(Error::State { message, .. }) => Err(message),
        Err(e) => return Err(e),
    };
    let (next, result) = f(current)?;
    write_atomic(path, next.render().as_bytes())?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Counter(u64);

    impl StateDoc for Counter {
        fn parse(text: &str) -> std::result::Result<Self, String> {
            text.trim()
                .parse()
                .map(Counter)
                .map_err(|e| format!("not a number: {e}"))
        }
        fn render(&self) -> String {
            format!("{}\n", self.0)
        }
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.txt")]);
    }

    /// This process's umask, read without changing it (a set-and-restore would race the other
    /// test threads).
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn new_files_follow_the_umask_and_rewritten_files_keep_their_mode() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.yaml");
        write_atomic(&new, b"a").unwrap();
        assert_eq!(
            mode(&new),
            0o666 & !umask(),
            "a new file gets 0666 minus the umask"
        );
        for kept in [0o664, 0o600, 0o640, 0o755] {
            let p = dir.path().join(format!("kept-{kept:o}"));
            std::fs::write(&p, "old").unwrap();
            std::fs::set_permissions(&p, Permissions::from_mode(kept)).unwrap();
            write_atomic(&p, b"new").unwrap();
            assert_eq!(mode(&p), kept, "a rewritten file keeps its mode");
            assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        }
        // Set-id bits are not carried over to the new inode.
        let p = dir.path().join("setuid");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, Permissions::from_mode(0o4755)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(mode(&p), 0o755);
    }

    #[test]
    fn concurrent_updates_all_count() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("counter");
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..25 {
                        update::<Counter, ()>(&p, "fix it", |c| {
                            Ok((Counter(c.map_or(0, |c| c.0) + 1), ()))
                        })
                        .unwrap();
                    }
                });
            }
        });
        assert_eq!(load::<Counter>(&p, "").unwrap(), Some(Counter(200)));
    }

    #[test]
    fn corrupt_state_is_an_error_naming_file_and_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("counter");
        std::fs::write(&p, "garbage").unwrap();
        let err = update::<Counter, ()>(&p, "run `fix it`", |_| unreachable!()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("counter"), "{msg}");
        assert!(msg.contains("run `fix it`"), "{msg}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "garbage");
    }

    #[test]
    fn recovery_update_sees_the_parse_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("counter");
        std::fs::write(&p, "garbage").unwrap();
        let seen =
            update_or_recover::<Counter, String>(&p, |c| Ok((Counter(0), c.unwrap_err()))).unwrap();
        assert!(seen.contains("not a number"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "0\n");
    }

    #[test]
    fn missing_file_loads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load::<Counter>(&dir.path().join("nope"), "").unwrap(), None);
    }
}
