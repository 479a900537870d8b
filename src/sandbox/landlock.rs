//! Applies a [`Plan`] to this process with Landlock (the `landlock` crate, by the Landlock
//! maintainers), after dropping every capability: as root, file permissions protect nothing and
//! capabilities reach past Landlock (raw disks, kernel modules, `reboot`), so the sandboxed
//! process keeps none. Linux only; the rules themselves are decided in `resolve.rs`.
//!
//! Reads: everything but the plan's holes (secrets, raw devices), as the [`cover`] of `/`.
//! Writes: the plan's writable paths. Scopes (ABI ≥ 6): no signal to, and no abstract Unix
//! socket of, a process outside the sandbox. `no_new_privs` is set by `restrict_self`.
//!
//! Fails closed: a ruleset the kernel did not enforce is always an error; one it enforced
//! only in part is an error under `sandbox.mode: require`.

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::libc;

use super::resolve::cover;
use super::{Plan, SandboxError};

/// The kernel's Landlock ABI version (0 when it has none).
pub fn kernel_abi() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns the
    // version number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if v < 0 { 0 } else { v as i32 }
}

fn abi_of(v: i32) -> ABI {
    match v {
        i32::MIN..=0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        8 => ABI::V8,
        _ => ABI::V9,
    }
}

/// Leaves this process, and whatever it executes, without capabilities: root keeps its uid, not
/// its powers. `SECBIT_NOROOT` (locked) stops `execve` from granting root its capabilities
/// again, and the permitted, effective, inheritable and ambient sets are emptied — three system
/// calls instead of one per capability of the bounding set. Without `CAP_SETPCAP` (not root)
/// there is nothing to drop.
pub fn drop_capabilities() -> Result<(), SandboxError> {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let fail = |step: &str| SandboxError::Setup {
        step: step.into(),
        source: std::io::Error::last_os_error(),
    };
    // SAFETY: prctl with integer arguments, and capget/capset with a v3 header and two data
    // structs, as capget(2) documents.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut head = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capget, &mut head, data.as_mut_ptr()) != 0 {
            return Err(fail("read capabilities"));
        }
        if data.iter().all(|d| d.permitted == 0) {
            return Ok(());
        }
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED;
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 {
            return Err(fail("set SECBIT_NOROOT"));
        }
        let zero = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &mut head, zero.as_ptr()) != 0 {
            return Err(fail("drop capabilities"));
        }
    }
    Ok(())
}

/// Gives up the controlling terminal, so that a sandboxed process cannot push keystrokes into
/// the terminal of the shell or client that started it (`TIOCSTI`, still allowed where
/// `dev.tty.legacy_tiocsti=1`): without a controlling terminal, `/dev/tty` cannot be opened and
/// `TIOCSTI` on the terminal's own device is refused. Reading and writing inherited terminal
/// descriptors, and the terminal's signals to the process group, still work. A session leader
/// that gives its terminal up sends its foreground group `SIGHUP`: it ignores that one while it
/// does.
pub fn detach_terminal() {
    // SAFETY: getsid/getpid/signal/open/ioctl/close on values this process owns.
    unsafe {
        let leader = libc::getsid(0) == libc::getpid();
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        let old = leader.then(|| libc::signal(libc::SIGHUP, libc::SIG_IGN));
        libc::ioctl(fd, libc::TIOCNOTTY);
        libc::close(fd);
        if let Some(old) = old {
            libc::signal(libc::SIGHUP, old);
        }
    }
}

/// Opens `path` for a rule without following a final symbolic link when `nofollow`.
fn open_path(path: &Path, nofollow: bool) -> Option<(OwnedFd, bool)> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let flags = libc::O_PATH | libc::O_CLOEXEC | if nofollow { libc::O_NOFOLLOW } else { 0 };
    // SAFETY: a NUL-terminated path; the descriptor is owned right away.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return None;
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of a descriptor we own into a zeroed stat.
    if unsafe { libc::fstat(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut st) } != 0 {
        return None;
    }
    let kind = st.st_mode & libc::S_IFMT;
    if kind == libc::S_IFLNK {
        return None;
    }
    Some((fd, kind == libc::S_IFDIR))
}

/// A folder's entries as `(path, is_symlink)`, from `readdir` (no `stat` per entry).
pub fn list(dir: &Path) -> Vec<(PathBuf, bool)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            (e.path(), link)
        })
        .collect()
}

/// Restricts this process to `plan`. `abi` is the kernel's; `require` makes a partial ruleset an
/// error.
pub fn restrict(plan: &Plan, abi: i32, require: bool) -> Result<(), SandboxError> {
    let target = abi_of(abi);
    let err = |e: landlock::RulesetError| SandboxError::Setup {
        step: "build the Landlock ruleset".into(),
        source: std::io::Error::other(e.to_string()),
    };
    let all = AccessFs::from_all(target);
    let read = AccessFs::from_read(target);
    let file_rights = AccessFs::from_file(target);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(err)?;
    if abi >= 6 {
        ruleset = ruleset.scope(Scope::from_all(target)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let mut list = list;
    let rules = cover(Path::new("/"), &plan.holes, &mut list)
        .into_iter()
        .map(|p| (p, read, true))
        .chain(
            // Each around the holes inside it: `~/.cargo` is read, `~/.cargo/credentials.toml`
            // not.
            plan.read_inside_holes
                .iter()
                .flat_map(|p| cover(p, &plan.holes, &mut list))
                .map(|p| (p, read, false)),
        )
        .chain(plan.write.iter().map(|p| (p.clone(), all, false)));
    for (path, access, nofollow) in rules {
        if let Some((fd, dir)) = open_path(&path, nofollow) {
            let access = if dir { access } else { access & file_rights };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(err)?;
        }
    }
    let status = created.no_new_privs(true).restrict_self().map_err(err)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(()),
        RulesetStatus::PartiallyEnforced if !require => Ok(()),
        RulesetStatus::PartiallyEnforced => Err(SandboxError::Unavailable(format!(
            "the kernel enforced the Landlock ruleset only in part (ABI {abi})"
        ))),
        RulesetStatus::NotEnforced => Err(SandboxError::Unavailable(
            "the kernel did not enforce the Landlock ruleset".into(),
        )),
    }
}
