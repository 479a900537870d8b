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

/// Drops every capability from the bounding set and the ambient set, so neither this process nor
/// anything it executes holds one (root keeps its uid, not its powers). Without `CAP_SETPCAP`
/// (not root) there is nothing to drop.
pub fn drop_capabilities() -> Result<(), SandboxError> {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        if libc::prctl(libc::PR_CAPBSET_READ, 21 /* CAP_SYS_ADMIN */, 0, 0, 0) != 1 {
            return Ok(());
        }
        let mut cap = 0;
        while libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) >= 0 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
                && *libc::__errno_location() != libc::EINVAL
            {
                return Err(SandboxError::Setup {
                    step: format!("drop capability {cap}"),
                    source: std::io::Error::last_os_error(),
                });
            }
            cap += 1;
        }
    }
    Ok(())
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
fn list(dir: &Path) -> Vec<(PathBuf, bool)> {
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
            plan.read_inside_holes
                .iter()
                .map(|p| (p.clone(), read, false)),
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
