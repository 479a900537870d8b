//! The private mount namespace that keeps control files read-only inside writable folders.
//!
//! Landlock grants a right on a whole subtree, so "the repository but not `.forge/`" cannot be
//! said with Landlock alone (docs/sandbox.md has the measurement). Here the process gets its
//! own mount table: control files are bound onto themselves read-only, the folders between
//! them and the writable root are bound onto themselves (a mount point cannot be renamed or
//! removed, so `mv .git x` cannot carry `.git/config` away), and secrets inside writable folders
//! (and, where the namespace exists anyway, every secret) are covered: a file by `/dev/null` on a
//! `nodev` mount (opening it fails), a folder by an empty read-only folder. Landlock then forbids any
//! further mount, so the sandboxed process cannot undo this.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::libc;

use super::{Plan, SandboxError};

/// Whether this process can make namespaces: root, or unprivileged user namespaces switched on.
pub fn namespaces_possible() -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return Path::new("/proc/self/ns/mnt").exists();
    }
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let max = read("/proc/sys/user/max_user_namespaces").and_then(|s| s.parse::<u64>().ok());
    let unpriv = read("/proc/sys/kernel/unprivileged_userns_clone");
    max.is_some_and(|m| m > 0) && unpriv.as_deref() != Some("0")
}

/// Replaces `/dev` with a small tmpfs holding only the usable devices (bound from the real
/// `/dev`) and the `fd`/`stdin`/`stdout`/`stderr` links: disks and memory devices do not exist
/// in the sandbox. Built in a staging folder next to `empty`, then moved onto `/dev`, and made
/// read-only (writing to a device node is not a write to the mount).
fn private_dev(empty: &Path) -> Result<(), SandboxError> {
    let staging = empty.with_file_name("dev");
    // The tmpfs goes onto the folder checked, not onto whatever the name leads to.
    let (_below, at) = own_folder(&staging, false)?;
    let io = |step: String, e: std::io::Error| SandboxError::Setup { step, source: e };
    mount_fs(
        c"forge-dev",
        &at,
        c"tmpfs",
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"mode=755,size=64k",
    )?;
    for d in super::resolve::DEVICES {
        let src = Path::new(d);
        let name = src.file_name().unwrap_or_default();
        // Pseudo-terminals come from a devpts of the sandbox's own (below): the host's
        // `/dev/ptmx` finds its `pts` through the host's `/dev`, which is gone here.
        if name == "pts" || name == "ptmx" {
            continue;
        }
        if name == "shm" {
            // A `/dev/shm` of the sandbox's own, writable: the host's holds the shared memory
            // and semaphores of processes outside (a browser's, the sound server's, a person's
            // Python), which a sandboxed process could otherwise rewrite or plant names in.
            let dst = staging.join(name);
            std::fs::create_dir(&dst).map_err(|e| io(format!("create {}", dst.display()), e))?;
            mount_fs(
                c"forge-shm",
                &dst,
                c"tmpfs",
                libc::MS_NOSUID | libc::MS_NODEV,
                c"mode=1777",
            )?;
            continue;
        }
        let Ok(meta) = std::fs::metadata(src) else {
            continue;
        };
        let dst = staging.join(name);
        let made = if meta.is_dir() {
            std::fs::create_dir(&dst)
        } else {
            std::fs::File::create(&dst).map(drop)
        };
        made.map_err(|e| io(format!("create {}", dst.display()), e))?;
        mount(Some(src), &dst, libc::MS_BIND | libc::MS_REC)?;
    }
    let pts = staging.join("pts");
    std::fs::create_dir(&pts).map_err(|e| io(format!("create {}", pts.display()), e))?;
    mount_fs(
        c"devpts",
        &pts,
        c"devpts",
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    )?;
    for (name, target) in [
        ("ptmx", "pts/ptmx"),
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, staging.join(name))
            .map_err(|e| io(format!("link /dev/{name}"), e))?;
    }
    set_read_only(&staging, true, false)?;
    mount(Some(&staging), Path::new("/dev"), libc::MS_MOVE)
}

/// The writable places that need a writable mount: the outermost ones (a place inside another
/// is writable with it), not device files (a read-only mount does not stop writes to a device).
fn writable_mounts(plan: &Plan) -> Vec<&Path> {
    let mut out: Vec<&Path> = Vec::new();
    let mut all: Vec<&Path> = plan
        .write
        .iter()
        .map(|p| p.as_path())
        .filter(|p| !p.starts_with("/dev") || p.starts_with("/dev/shm"))
        .collect();
    all.sort_by_key(|p| p.components().count());
    for p in all {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// `mount_setattr(2)`: sets or clears read-only on the mount at `path` (and, with `recursive`,
/// every mount below), keeping its other flags (nosuid, nodev, noexec).
fn set_read_only(path: &Path, read_only: bool, recursive: bool) -> Result<(), SandboxError> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let c = cstr(path);
    // SAFETY: a NUL-terminated path and a mount_attr of the size passed, both alive across the
    // call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            if recursive { AT_RECURSIVE } else { 0 },
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(SandboxError::Setup {
            step: format!(
                "make {} {}",
                path.display(),
                if read_only { "read-only" } else { "writable" }
            ),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Mounts a new file system of `fstype` (`tmpfs`, `devpts`) on `dst`.
fn mount_fs(
    source: &std::ffi::CStr,
    dst: &Path,
    fstype: &std::ffi::CStr,
    flags: libc::c_ulong,
    data: &std::ffi::CStr,
) -> Result<(), SandboxError> {
    let t = cstr(dst);
    // SAFETY: NUL-terminated strings alive across the call.
    let r = unsafe {
        libc::mount(
            source.as_ptr(),
            t.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    if r != 0 {
        return Err(SandboxError::Setup {
            step: format!(
                "mount a {} of the sandbox's own on {}",
                fstype.to_string_lossy(),
                dst.display()
            ),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

fn mount(src: Option<&Path>, dst: &Path, flags: libc::c_ulong) -> Result<(), SandboxError> {
    let s = src.map(cstr);
    let d = cstr(dst);
    // SAFETY: NUL-terminated paths that live across the call; no filesystem type or data.
    let r = unsafe {
        libc::mount(
            s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            d.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(SandboxError::Setup {
            step: format!("bind {}", dst.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// The overlay a check runs on: `checkout` becomes the lower layer of an overlay mounted on
/// itself, whose upper layer is `<layer>/upper`. Everything the check writes lands in the
/// upper layer, so the checkout still holds exactly its tree afterwards and Forge reads what
/// the check changed from the (small) upper layer instead of re-reading the whole checkout.
/// The checkout's own inode never gets a Landlock write rule (the rules are made after this,
/// on the overlay), so no other path to it is writable either. `keep` (build caches inside the
/// checkout) are bound back over the overlay: writes there persist, as they must.
pub fn overlay(checkout: &Path, layer: &Path, keep: &[String]) -> Result<(), SandboxError> {
    let setup = |step: String, source: std::io::Error| SandboxError::Setup { step, source };
    for p in [checkout, layer] {
        if !super::overlay_path_ok(p) {
            return Err(setup(
                format!(
                    "mount an overlay with {} (a comma, colon or backslash in the path)",
                    p.display()
                ),
                std::io::Error::from(std::io::ErrorKind::InvalidInput),
            ));
        }
    }
    // The cache folders, held open before the overlay hides them — each a folder of the
    // checkout reached without a symbolic link anywhere on the way: a link in the candidate
    // (`src/.build -> .`) would otherwise bind a folder of the candidate itself writable over
    // the overlay.
    let held = hold_folders(checkout, keep, "keep")?;
    // The upper layer's mount must be writable (the machine was made read-only).
    mount(Some(layer), layer, libc::MS_BIND)?;
    set_read_only(layer, false, false)?;
    let data = CString::new(format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        checkout.display(),
        layer.join("upper").display(),
        layer.join("work").display()
    ))
    .map_err(|_| {
        setup(
            "mount the checks' overlay".into(),
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        )
    })?;
    let target = cstr(checkout);
    // SAFETY: NUL-terminated strings alive across the call.
    let r = unsafe {
        libc::mount(
            c"forge-check".as_ptr(),
            target.as_ptr(),
            c"overlay".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr().cast(),
        )
    };
    if r != 0 {
        return Err(setup(
            format!("mount an overlay on {}", checkout.display()),
            std::io::Error::last_os_error(),
        ));
    }
    for (fd, rel) in held {
        // The target is looked up through the overlay, which shows the same folders: a link
        // there now is one the lower layer had, which `open_beneath` refused above.
        mount(Some(&fd_path(&fd)), &checkout.join(rel), libc::MS_BIND)?;
    }
    Ok(())
}

/// Each of `rels` (relative, no `.`/`..`) opened as a folder beneath `root` with no symbolic
/// link on the way; one that does not exist is left out.
fn hold_folders<'a>(
    root: &Path,
    rels: &'a [String],
    what: &str,
) -> Result<Vec<(std::os::fd::OwnedFd, &'a Path)>, SandboxError> {
    let setup = |step: String, source: std::io::Error| SandboxError::Setup { step, source };
    let mut held = Vec::new();
    for k in rels {
        let rel = Path::new(k);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(setup(
                format!("{what} {k}: name a folder inside {}", root.display()),
                std::io::Error::from(std::io::ErrorKind::InvalidInput),
            ));
        }
        match crate::state::open_beneath(root, rel, libc::O_PATH | libc::O_DIRECTORY) {
            Ok(fd) => held.push((fd, rel)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(setup(
                    format!(
                        "{what} {} (a link on the way, or not a folder)",
                        root.join(rel).display()
                    ),
                    e,
                ));
            }
        }
    }
    Ok(held)
}

/// The path through which a held descriptor is mounted: what was checked, whatever the name
/// leads to a moment later.
fn fd_path(fd: &std::os::fd::OwnedFd) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// The project's ignored environments (`.venv`, `node_modules`) shown read-only at the same
/// places in the checkout, over the empty folders Forge made there: a check runs the person's
/// command with the interpreter and packages that command finds in the working tree, and can
/// change none of them. Bound recursively, so the covers over secrets inside come along.
pub fn environments(checkout: &Path, project: &Path, envs: &[String]) -> Result<(), SandboxError> {
    let held = hold_folders(project, envs, "environment")?;
    let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    for (fd, rel) in held {
        let at = checkout.join(rel);
        if !at.is_dir() {
            // No folder to mount on: the candidate has a file or link there, or Forge made none.
            continue;
        }
        mount(Some(&fd_path(&fd)), &at, libc::MS_BIND | libc::MS_REC)?;
        mount(None, &at, ro)?;
    }
    Ok(())
}

/// The checkout, with its overlay and environments, mounted over the project's own folder: in
/// this namespace the project's path shows the candidate (and the environments), so what an
/// environment names by absolute path — a script's interpreter, an editable install's source
/// folder — is the candidate's file, and nothing of the working tree is in view.
pub fn in_place(checkout: &Path, project: &Path) -> Result<(), SandboxError> {
    mount(Some(checkout), project, libc::MS_BIND | libc::MS_REC)
}

/// Enters a private mount and IPC namespace (with a user namespace of its own when not root). Called
/// before anything is decided on it, so a kernel or container that refuses one is found out while
/// `auto` can still fall back to carving with Landlock rules. With `loopback`, a network
/// namespace too, whose only interface is its own loopback, brought up: a server the command
/// starts on `127.0.0.1` works, nothing outside is reachable. Returns whether that network
/// namespace was made (a kernel without network namespaces still gets the rest).
pub fn enter_namespace(loopback: bool) -> Result<bool, SandboxError> {
    let setup = |step: &str| {
        let e = std::io::Error::last_os_error();
        SandboxError::Setup {
            step: step.to_string(),
            source: e,
        }
    };
    // An IPC namespace with it: SysV shared memory, semaphores and message queues, and POSIX
    // message queues, are not files, and the host's belong to processes outside (a command
    // could attach and rewrite a segment of the same uid, or remove it). A kernel without IPC
    // namespaces still gets the mount namespace. Then `/` is made private: nothing done from
    // there on may reach the caller's mount table.
    let uid = unsafe { libc::getuid() };
    let gid = unsafe { libc::getgid() };
    let ns = libc::CLONE_NEWNS;
    let net = if loopback { libc::CLONE_NEWNET } else { 0 };
    let tries = [
        ns | libc::CLONE_NEWIPC | net,
        ns | libc::CLONE_NEWIPC,
        ns | net,
        ns,
    ];
    let mut seen = Vec::new();
    for flags in tries {
        if seen.contains(&flags) {
            continue;
        }
        seen.push(flags);
        let with_net = flags & libc::CLONE_NEWNET != 0;
        // SAFETY: unshare(2) only affects this process; a failed call changes nothing.
        let own_user = if unsafe { libc::unshare(flags) } == 0 {
            false
        } else if unsafe { libc::unshare(flags | libc::CLONE_NEWUSER) } == 0 {
            // Not root and not already in a user namespace of our own: made one.
            true
        } else {
            continue;
        };
        if own_user {
            let w = |f: &str, s: String| std::fs::write(f, s);
            if w("/proc/self/setgroups", "deny".into()).is_err()
                || w("/proc/self/uid_map", format!("{uid} {uid} 1")).is_err()
                || w("/proc/self/gid_map", format!("{gid} {gid} 1")).is_err()
            {
                return Err(setup("map the user namespace"));
            }
        }
        if with_net {
            loopback_up()?;
        }
        mount(None, Path::new("/"), libc::MS_REC | libc::MS_PRIVATE)?;
        return Ok(with_net);
    }
    Err(setup("unshare the mount namespace"))
}

/// Brings up `lo` in this process's (new) network namespace, where it starts down.
fn loopback_up() -> Result<(), SandboxError> {
    let err = |step: &str| SandboxError::Setup {
        step: step.to_string(),
        source: std::io::Error::last_os_error(),
    };
    // SAFETY: a datagram socket only to carry the interface ioctls; closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(err("open a socket to bring up the loopback interface"));
    }
    // SAFETY: ifreq is plain data; its name is set to "lo" (NUL-terminated, zeroed rest), and
    // the flags union member is the one SIOCGIFFLAGS/SIOCSIFFLAGS read and write.
    let ok = unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0 && {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) == 0
        }
    };
    let e = err("bring up the loopback interface");
    // SAFETY: closing the socket opened above.
    unsafe { libc::close(fd) };
    if ok { Ok(()) } else { Err(e) }
}

/// Every path [`apply`] makes the root of a mount: a namespace in which one of them is not (its
/// cover detached when the path was replaced outside) is not the plan's any more.
pub fn targets(plan: &Plan) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = writable_mounts(plan)
        .into_iter()
        .map(Path::to_path_buf)
        .collect();
    v.extend(plan.pin.iter().cloned());
    v.extend(plan.read_only.iter().cloned());
    v.extend(plan.hide.iter().cloned());
    v.extend(plan.rebind_writable.iter().cloned());
    v.extend(plan.views.iter().map(|w| w.path.clone()));
    if plan.private_dev {
        v.push(PathBuf::from("/dev"));
    }
    v
}

/// Opens `path` without following a link in its last step: a folder of this user's that only
/// this user may write (and, for `empty`, with nothing in it), as [`super::prepare`] made it.
/// Returns a path through the descriptor (`/proc/self/fd/N`), so what is mounted is what was
/// checked, whatever the name leads to a moment later. Red team, round 15: where the sandbox
/// folder lay inside a writable place (a cache linked to the temporary folder, a TMPDIR in the
/// project), a session swapped `empty` for a link to `~/.ssh`, and the next namespace bound
/// `~/.ssh` over itself as its cover.
fn own_folder(path: &Path, empty: bool) -> Result<(std::fs::File, PathBuf), SandboxError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let bad = |why: String| {
        SandboxError::Plan(format!(
            "the sandbox's folder {} {why}: something changed it since Forge made it; remove it (Forge makes it again)",
            path.display()
        ))
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| bad(format!("cannot be opened as a folder ({e})")))?;
    let m = f
        .metadata()
        .map_err(|e| bad(format!("cannot be read ({e})")))?;
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() };
    if m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(bad(format!(
            "is not this user's alone (owner uid {}, mode {:o})",
            m.uid(),
            m.mode() & 0o7777
        )));
    }
    let at = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&f)
    ));
    if empty
        && std::fs::read_dir(&at)
            .map_err(|e| bad(format!("cannot be listed ({e})")))?
            .next()
            .is_some()
    {
        return Err(bad("is not empty".into()));
    }
    Ok((f, at))
}

/// Applies the plan's binds in the namespace [`enter_namespace`] made.
pub fn apply(plan: &Plan, empty: &Path) -> Result<(), SandboxError> {
    // The whole machine read-only, then the writable places bound writable again: Landlock does
    // not cover a file's metadata (chmod, utimes, extended attributes), a read-only mount does.
    set_read_only(Path::new("/"), true, true)?;
    for w in writable_mounts(plan) {
        mount(Some(w), w, libc::MS_BIND | libc::MS_REC)?;
        set_read_only(w, false, false)?;
    }
    let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    for p in &plan.pin {
        mount(Some(p), p, libc::MS_BIND)?;
    }
    for p in &plan.read_only {
        mount(Some(p), p, libc::MS_BIND | libc::MS_REC)?;
        mount(None, p, ro)?;
    }
    let cover = match plan.hide.iter().any(|p| p.is_dir()) {
        true => Some(own_folder(empty, true)?),
        false => None,
    };
    for p in &plan.hide {
        // A folder is covered by an empty read-only folder, a file by /dev/null on a `nodev`
        // mount (opening it fails).
        let src = if let (true, Some((_, at))) = (p.is_dir(), &cover) {
            at.as_path()
        } else {
            Path::new("/dev/null")
        };
        // Gone since the plan was made (a daemon that stopped and removed its socket, a secret
        // deleted): nothing is left to hide there, and the sandbox starts. One made again later
        // is a new entry the next plan sees; a kept namespace is re-planned when its witnesses
        // change (keeper.rs).
        match mount(Some(src), p, libc::MS_BIND) {
            Err(SandboxError::Setup { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound
                    && std::fs::symlink_metadata(p).is_err() =>
            {
                continue;
            }
            other => other?,
        }
        mount(None, p, ro)?;
    }
    for p in &plan.rebind_writable {
        mount(Some(p), p, libc::MS_BIND)?;
    }
    // A writable folder bound again covers the read-only binds inside it (an agent's worktree
    // inside `.claude/`, with its own `.forge/`): they are bound again on top.
    for p in plan.read_only.iter().filter(|p| {
        plan.rebind_writable
            .iter()
            .any(|w| p.starts_with(w) && *p != w)
    }) {
        mount(Some(p), p, libc::MS_BIND | libc::MS_REC)?;
        mount(None, p, ro)?;
    }
    views(plan, &empty.with_file_name("views"))?;
    if plan.private_dev {
        private_dev(empty)?;
    }
    Ok(())
}

/// Binds each redacted view (written to `dir` by `write_views` in mod.rs) read-only over its
/// original. The copy is opened without following a link and must be this user's: what is
/// mounted is what was checked.
fn views(plan: &Plan, dir: &Path) -> Result<(), SandboxError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() };
    for v in &plan.views {
        let at = dir.join(v.file_name());
        let bad = |e: std::io::Error| SandboxError::Setup {
            step: format!(
                "open the redacted view {} of {}",
                at.display(),
                v.path.display()
            ),
            source: e,
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&at)
            .map_err(bad)?;
        let m = f.metadata().map_err(bad)?;
        if !m.is_file() || m.uid() != uid {
            return Err(bad(std::io::Error::from(
                std::io::ErrorKind::PermissionDenied,
            )));
        }
        let src = PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&f)
        ));
        // An original removed since the plan: nothing is left to cover.
        match mount(Some(&src), &v.path, libc::MS_BIND) {
            Err(SandboxError::Setup { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound
                    && std::fs::symlink_metadata(&v.path).is_err() =>
            {
                continue;
            }
            other => other?,
        }
        mount(None, &v.path, ro)?;
    }
    Ok(())
}
