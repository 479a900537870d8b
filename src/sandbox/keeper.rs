//! A live session's sandbox, kept for its next commands: the mount namespace, and the plan.
//!
//! Every Bash command of a live session runs in `forge sandbox --profile session`, and they all
//! ask for the same thing. Making the namespace — `unshare`, ~50 binds, a private `/dev` — and
//! tearing it down when CMD exits (the kernel waits for an RCU grace period before it frees the
//! mounts, milliseconds on a busy two-core VM), and working out the plan (~150 system calls),
//! cost more than everything else the sandbox does (BENCHMARKS.md §7). So the first command
//! leaves a *keeper* behind: a small process, outside every sandbox, that only holds the
//! namespace open, and a record of it and of the plan. The next command with the same request
//! joins the namespace (`setns`) instead of building one, then restricts itself with Landlock
//! and seccomp as always: only the mount table is shared, never a Landlock domain.
//!
//! A command reuses only what it can prove is what it would have made itself:
//! - the record (`<tmp>/forge-sandbox-<uid>/keepers/<key>`; the key a hash of this build, the
//!   request, the `sandbox:` config and the environment the plan reads) is sealed with a key
//!   kept in the user's kernel keyring, which every sandbox's seccomp filter keeps out of reach
//!   (`keyctl`, `add_key`, `request_key` fail inside): a sandboxed process that can write the
//!   record's folder — through a cache folder that is a link to `/tmp`, say (red team, round 14)
//!   — still cannot make a record Forge accepts. It also lies in a folder of this user's that no
//!   one else may write, and names its own key;
//! - the plan: every folder on the way to each of its paths, and every file it read, has the
//!   identity and change time it had when the plan was made. A folder's change time moves with
//!   every entry made, removed or renamed in it, and no one can set it back (`utimensat` moves
//!   it too); a change in the two seconds before the plan was made is not trusted (timestamps
//!   are coarse), and the next command works the plan out again;
//! - the namespace: the ones the record names are those its process holds (their inode
//!   numbers, so a reused pid is not joined), and every path the plan binds is still the root
//!   of a mount there, looked up through the keeper's own root — a cover detaches when its path
//!   is replaced outside (docs/sandbox.md, Limits), and a namespace that lost one is not joined
//!   but built anew.
//!
//! What commands with one key share (two sessions on one project, in one environment, do): the
//! mount table, `/dev/shm` and SysV IPC (the namespace's own, as before, but now the key's
//! rather than the command's), the private `/dev/pts`. A keeper ends once no process is left in its namespace and no command has come
//! for [`IDLE`] — what `/dev/shm` held is freed with it; it holds no descriptor, no folder and
//! no terminal. `sandbox.reuse: false` turns all of this off.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::libc;
use serde::{Deserialize, Serialize};

use super::resolve::Basis;
use super::{Plan, Request, SandboxConfig};

/// A keeper ends when no command has joined for this long and no process is left in its
/// namespace.
pub const IDLE: Duration = Duration::from_secs(120);
/// How often a keeper looks at its record and its namespace.
const CHECK: Duration = Duration::from_secs(15);
/// Change times this close to when a plan was made are not trusted: a second change within the
/// same timestamp tick would not move them (file systems keep one- or two-second times too).
const RACY: Duration = Duration::from_secs(2);
/// A record is small; a larger file is not one.
const MAX_RECORD: u64 = 1 << 20;

/// Where one request's keeper is recorded.
pub struct Keeper {
    /// `<tmp>/forge-sandbox-<uid>/keepers`.
    dir: PathBuf,
    /// `<dir>/<key>`.
    file: PathBuf,
    key: String,
}

/// What a keeper holds and what was proven when it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The request key it was made for (a record copied to another key's file is not that
    /// key's).
    key: String,
    /// The keeper's pid, when it started (`/proc/<pid>/stat`, clock ticks since boot: with
    /// the pid, a process no later one can be mistaken for), and the inode numbers of its
    /// mount, IPC and user namespaces (reused once a namespace is freed).
    pid: i32,
    start: u64,
    mnt: u64,
    ipc: u64,
    user: u64,
    /// A hash of what the namespace is made of ([`namespace_key`]).
    namespace: String,
    /// A hash of the caller's mount table when the namespace was copied from it: a file system
    /// the person unmounted since (a vault, a share) must not stay readable in a kept copy, nor
    /// one mounted since be missing (red team, round 15).
    mounts: String,
    /// The plan, with secrets hidden by binds (what the namespace enforces).
    pub plan: Plan,
    /// The state of every path the plan was read from; `None`: not to be reused without
    /// working it out again (it changed too recently to tell).
    witnesses: Option<Vec<Witness>>,
}

/// One fact a plan was read from, as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Witness {
    /// A folder's or file's identity and change time (the folder's entries, the file's
    /// contents); `None`: it could not be looked up, as when it is missing.
    Changed {
        path: PathBuf,
        seen: Option<(u64, u64, i64, i64)>,
    },
    /// An entry's identity and type, not followed, and a link's target (where its folder
    /// changes too often for the folder's change time to vouch for it: `/tmp`, a project's
    /// root). Inode numbers are reused: a link made anew may get the old one's.
    Entry {
        path: PathBuf,
        seen: Option<(u64, u64, u32, Option<PathBuf>)>,
    },
    /// The Unix sockets bound at a path on the machine (a hash of the kernel's list): a daemon
    /// that starts listening after the plan (a new tmux server) must be covered too, so the plan
    /// is made again.
    Sockets { seen: u64 },
}

impl Witness {
    fn changed(path: &Path) -> (Witness, Option<(i64, i64)>) {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok();
        let w = Witness::Changed {
            path: path.to_path_buf(),
            seen: m
                .as_ref()
                .map(|m| (m.dev(), m.ino(), m.ctime(), m.ctime_nsec())),
        };
        (w, m.map(|m| (m.ctime(), m.ctime_nsec())))
    }

    fn entry(path: &Path) -> (Witness, Option<(i64, i64)>) {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).ok();
        let w = Witness::Entry {
            path: path.to_path_buf(),
            seen: m.as_ref().map(|m| {
                let target = m
                    .file_type()
                    .is_symlink()
                    .then(|| std::fs::read_link(path).ok())
                    .flatten();
                (m.dev(), m.ino(), m.mode(), target)
            }),
        };
        (w, m.map(|m| (m.ctime(), m.ctime_nsec())))
    }

    fn sockets() -> Witness {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        super::bound_sockets().hash(&mut h);
        Witness::Sockets { seen: h.finish() }
    }

    fn holds(&self) -> bool {
        match self {
            Witness::Changed { path, .. } => Witness::changed(path).0 == *self,
            Witness::Entry { path, .. } => Witness::entry(path).0 == *self,
            Witness::Sockets { .. } => Witness::sockets() == *self,
        }
    }
}

/// A folder that changed less than this long before a plan is vouched for entry by entry, not
/// by its change time, which its other entries would keep moving.
const BUSY: Duration = Duration::from_secs(60);

/// The facts `basis` names, as they are now — or `None` when one of them changed less than
/// [`RACY`] before `since` (the moment the plan began to be worked out): then it may have
/// changed while the plan was being made, and the plan is not to be reused. An entry that is
/// missing vouches for everything below it (it cannot be made without its folder's change time
/// or its own witness moving), so nothing below a missing entry is looked at again.
pub fn witness(basis: &Basis, since: SystemTime) -> Option<Vec<Witness>> {
    let before = |d: Duration| -> Option<(i64, i64)> {
        let t = since
            .checked_sub(d)?
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()?;
        Some((t.as_secs() as i64, t.subsec_nanos() as i64))
    };
    let (racy, busy) = (before(RACY)?, before(BUSY)?);
    let mut out = vec![Witness::sockets()];
    let mut push = |(w, ctime): (Witness, Option<(i64, i64)>)| -> bool {
        out.push(w);
        ctime.is_none_or(|t| t < racy)
    };
    let mut entries: Vec<&(PathBuf, Vec<PathBuf>)> = basis.entries.iter().collect();
    entries.sort_by_key(|(d, _)| d.components().count());
    let mut gone: Vec<&Path> = Vec::new();
    let below_gone = |p: &Path, gone: &[&Path]| gone.iter().any(|g| p.starts_with(g));
    for (dir, children) in entries {
        if below_gone(dir, &gone) {
            continue;
        }
        let (w, ctime) = Witness::changed(dir);
        let listed = basis.listed.iter().any(|l| l == dir);
        if listed || ctime.is_none_or(|t| t < busy) {
            if !push((w, ctime)) {
                return None;
            }
            if ctime.is_none() {
                gone.push(dir);
                continue;
            }
            for c in children {
                if std::fs::symlink_metadata(c).is_err() {
                    gone.push(c);
                }
            }
        } else {
            for c in children {
                let (w, ctime) = Witness::entry(c);
                if ctime.is_none() {
                    gone.push(c);
                }
                if !push((w, ctime)) {
                    return None;
                }
            }
        }
    }
    for p in basis.listed.iter().chain(&basis.read) {
        if !below_gone(p, &gone)
            && !basis.entries.iter().any(|(d, _)| d == p)
            && !push(Witness::changed(p))
        {
            return None;
        }
    }
    Some(out)
}

impl Keeper {
    /// The record of `req` (a session's request) under `config`, in this environment.
    pub fn new(req: &Request, config: &SandboxConfig) -> Keeper {
        // SAFETY: getuid(2) cannot fail.
        let uid = unsafe { libc::getuid() };
        let dir = super::resolve::system_tmp()
            .join(format!("forge-sandbox-{uid}"))
            .join("keepers");
        let key = format!("{:016x}", request_key(req, config));
        let file = dir.join(&key);
        Keeper { dir, file, key }
    }

    /// The record, if its seal is right and it is this user's, in a folder only this user can
    /// write, made for this request, its namespace key that of its plan.
    pub fn read(&self) -> Option<Record> {
        // SAFETY: getuid(2) cannot fail.
        let uid = unsafe { libc::getuid() };
        if !self.dir_is_private() {
            return None;
        }
        let fd = open_path(
            &self.file,
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        )?;
        let text = read_record_file(fd, uid)?;
        let body = unseal(&seal_key(false)?, &text)?;
        let rec: Record = serde_json::from_slice(body).ok()?;
        (rec.key == self.key && rec.pid > 1 && rec.namespace == namespace_key(&rec.plan))
            .then_some(rec)
    }

    /// Whether `rec`'s plan may be used as it is: every path it was read from is as it was.
    pub fn plan_holds(rec: &Record) -> bool {
        rec.witnesses
            .as_ref()
            .is_some_and(|ws| ws.iter().all(Witness::holds))
    }

    /// Whether the record folder and its parent are folders of this user's that no one else
    /// may write (not links): only then is a record in it this user's.
    fn dir_is_private(&self) -> bool {
        // SAFETY: getuid(2) cannot fail.
        let uid = unsafe { libc::getuid() };
        [self.dir.parent(), Some(self.dir.as_path())]
            .into_iter()
            .all(|d| {
                d.and_then(lstat).is_some_and(|st| {
                    st.st_mode & libc::S_IFMT == libc::S_IFDIR
                        && st.st_uid == uid
                        && st.st_mode & 0o022 == 0
                })
            })
    }

    /// Joins the namespace `rec` names if it is intact; `false` (and nothing changed)
    /// otherwise. `fresh` is written as the record first, while its folder is still writable
    /// in this process's mount table (a plan worked out again, for the same namespace). Call it
    /// before this process makes any namespace of its own.
    pub fn join(&self, rec: &Record, fresh: Option<&Record>) -> bool {
        let ns = |name: &str, want: u64| -> Option<OwnedFd> {
            let fd = open(&format!("/proc/{}/ns/{name}", rec.pid), libc::O_RDONLY)?;
            (ino(&fd)? == want).then_some(fd)
        };
        let (Some(mnt), Some(ipc), Some(user)) =
            (ns("mnt", rec.mnt), ns("ipc", rec.ipc), ns("user", rec.user))
        else {
            return false;
        };
        // Never this process's own table (the host's): that is no sandbox.
        let own = |name: &str| {
            open(&format!("/proc/self/ns/{name}"), libc::O_RDONLY).and_then(|f| ino(&f))
        };
        if own("mnt") == Some(rec.mnt) || own("ipc") == Some(rec.ipc) {
            return false;
        }
        // Every bind still in place, seen through the keeper's own root (its mount table).
        let Some(root) = open(
            &format!("/proc/{}/root", rec.pid),
            libc::O_PATH | libc::O_DIRECTORY,
        ) else {
            return false;
        };
        // Every bind: a cover lost lets the command do more; a writable place lost (a TMPDIR a
        // cleaner removed) would leave it unable to write there until the keeper ends.
        if !super::mounts::targets(&rec.plan)
            .iter()
            .all(|t| mount_root(&root, t))
        {
            return false;
        }
        // Read after the descriptors above were opened: had the keeper ended and its pid gone
        // to another process before any of them, the start time would not be its own.
        if start_time(rec.pid) != Some(rec.start) || mount_table() != Some(rec.mounts.clone()) {
            return false;
        }
        match fresh {
            Some(f) => {
                if let (Some(dir), Some(key)) = (self.open_dir(), seal_key(true)) {
                    write_record(&dir, &self.name(), f, &key);
                }
            }
            // Used: the keeper's idle clock starts again (a failure only shortens its life).
            None => {
                if let Ok(c) = CString::new(self.file.as_os_str().as_bytes()) {
                    // SAFETY: a NUL-terminated path; NULL times mean "now".
                    unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), std::ptr::null(), 0) };
                }
            }
        }
        let own_user = open("/proc/self/ns/user", libc::O_RDONLY).and_then(|fd| ino(&fd));
        // SAFETY: setns(2) on namespace descriptors we hold; a refused call changes nothing,
        // and `forge sandbox` is single-threaded, as joining a user namespace requires.
        unsafe {
            if own_user != Some(rec.user) && libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER) != 0
            {
                return false;
            }
            if libc::setns(mnt.as_raw_fd(), libc::CLONE_NEWNS) != 0 {
                return false;
            }
            // Half-joined — the session's mount table, the host's IPC objects — is no state
            // to carry on from.
            if libc::setns(ipc.as_raw_fd(), libc::CLONE_NEWIPC) != 0 {
                libc::_exit(super::EXIT_SETUP);
            }
        }
        true
    }

    fn name(&self) -> Vec<u8> {
        self.file
            .file_name()
            .map(|n| n.as_bytes().to_vec())
            .unwrap_or_default()
    }

    /// The record folder, opened before this process leaves the caller's mount table: inside
    /// the new one the whole machine is read-only, and the record is written through this.
    pub fn open_dir(&self) -> Option<OwnedFd> {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir);
        if !self.dir_is_private() {
            return None;
        }
        open_path(
            &self.dir,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )
    }

    /// Leaves a keeper holding this process's namespaces (made and bound as `plan` says) and
    /// records it through `dir` ([`Keeper::open_dir`]), with the witnesses of the plan. Best
    /// effort: without it, the next command builds its own namespace, as it would have anyway.
    pub fn keep(&self, dir: OwnedFd, plan: Plan, witnesses: Option<Vec<Witness>>, mounts: String) {
        let own = |name: &str| {
            open(&format!("/proc/self/ns/{name}"), libc::O_RDONLY).and_then(|f| ino(&f))
        };
        let (Some(mnt), Some(ipc), Some(user)) = (own("mnt"), own("ipc"), own("user")) else {
            return;
        };
        // Only a namespace a later command could join: its covers seen as the joiner sees
        // them (a cover on a link lies on the link's target, and is never found there).
        let Some(root) = open("/proc/self/root", libc::O_PATH | libc::O_DIRECTORY) else {
            return;
        };
        if !super::mounts::targets(&plan)
            .iter()
            .all(|t| mount_root(&root, t))
        {
            return;
        }
        drop(root);
        let Some(seal) = seal_key(true) else {
            return;
        };
        let name = self.name();
        let mut rec = Record {
            key: self.key.clone(),
            pid: 0,
            start: 0,
            mnt,
            ipc,
            user,
            namespace: namespace_key(&plan),
            mounts,
            plan: enforced(plan),
            witnesses,
        };
        // Two forks, so the keeper is nobody's child: not CMD's (which could wait for it), not
        // the caller's. The middle process writes the record and ends; this one waits for it.
        // SAFETY: fork(2) in a single-threaded process; the children make system calls, write
        // one file and end with _exit.
        let middle = unsafe { libc::fork() };
        if middle < 0 {
            return;
        }
        if middle == 0 {
            // SAFETY: as above.
            unsafe {
                libc::setsid();
                let keeper = libc::fork();
                if keeper == 0 {
                    keeper_main(dir, &name, mnt);
                }
                if keeper > 0
                    && let Some(start) = start_time(keeper)
                {
                    rec.pid = keeper;
                    rec.start = start;
                    write_record(&dir, &name, &rec, &seal);
                }
                libc::_exit(0);
            }
        }
        drop(dir);
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(middle, &mut status, 0) };
    }
}

impl Record {
    /// This record with a plan worked out again for the same namespace, and its witnesses.
    pub fn refreshed(&self, plan: Plan, witnesses: Option<Vec<Witness>>) -> Record {
        Record {
            plan: enforced(plan),
            witnesses,
            ..self.clone()
        }
    }

    /// Whether `plan` needs exactly the namespace this record's keeper holds.
    pub fn same_namespace(&self, plan: &Plan) -> bool {
        self.namespace == namespace_key(plan)
    }
}

/// What of a plan a joining command enforces: not its places (for explanations) nor what the
/// first command made (placeholders, new areas), so the record reads quickly.
fn enforced(plan: Plan) -> Plan {
    Plan {
        places: Vec::new(),
        placeholders: Vec::new(),
        placeholder_files: Vec::new(),
        create_areas: Vec::new(),
        ..plan
    }
}

/// A hash of this build, the request, the `sandbox:` config and the environment the plan reads
/// (home, `PATH`, the temporary folder, the agents' sockets, git's config variables, the marker
/// of a nested sandbox): two commands with the same key ask for the same plan of the same machine.
fn request_key(req: &Request, config: &SandboxConfig) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    concat!(env!("CARGO_PKG_VERSION"), env!("FORGE_VERSION_SUFFIX")).hash(&mut h);
    format!("{req:?}").hash(&mut h);
    serde_json::to_vec(config).unwrap_or_default().hash(&mut h);
    for k in [
        "HOME",
        "PATH",
        "TMPDIR",
        "SSH_AUTH_SOCK",
        "XDG_RUNTIME_DIR",
        super::ENV_MARKER,
    ] {
        std::env::var_os(k).hash(&mut h);
    }
    super::resolve::GitEnv::current().hash(&mut h);
    // A relative PATH entry (`bin`, `node_modules/.bin`) is a folder of the working folder,
    // which a session's `cd` changes: the plan keeps that one read-only (red team, round 14).
    let relative = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| !(d.is_absolute() || d.starts_with("~")))
    });
    if relative {
        std::env::current_dir().ok().hash(&mut h);
    }
    h.finish()
}

/// The key records are sealed with (32 bytes, made once), kept in the user's kernel keyring.
/// Every sandbox's seccomp filter refuses `keyctl`, `add_key` and `request_key`, so no sandboxed
/// process can read it or plant its own, wherever it can write files. `None` where the kernel
/// or a container refuses keyrings: then nothing is kept or joined.
fn seal_key(make: bool) -> Option<[u8; 32]> {
    const KEYCTL_SEARCH: libc::c_long = 10;
    const KEYCTL_READ: libc::c_long = 11;
    const KEY_SPEC_USER_KEYRING: libc::c_long = -4;
    let (kind, desc) = (c"user", c"forge:keeper-seal");
    let mut key = [0u8; 32];
    // SAFETY: keyctl(2) and add_key(2) with NUL-terminated strings and a buffer of the length
    // passed; getrandom(2) into the same buffer.
    unsafe {
        let id = libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_SEARCH,
            KEY_SPEC_USER_KEYRING,
            kind.as_ptr(),
            desc.as_ptr(),
            0 as libc::c_long,
        );
        if id >= 0 {
            let n = libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_READ,
                id,
                key.as_mut_ptr(),
                key.len(),
            );
            return (n == key.len() as libc::c_long).then_some(key);
        }
        if !make || libc::getrandom(key.as_mut_ptr().cast(), key.len(), 0) != key.len() as isize {
            return None;
        }
        let id = libc::syscall(
            libc::SYS_add_key,
            kind.as_ptr(),
            desc.as_ptr(),
            key.as_ptr(),
            key.len(),
            KEY_SPEC_USER_KEYRING,
        );
        (id >= 0).then_some(key)
    }
}

/// HMAC-SHA-256 of `body` under `key` (RFC 2104).
fn seal(key: &[u8; 32], body: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let (mut inner, mut outer) = ([0x36u8; 64], [0x5cu8; 64]);
    for (i, b) in key.iter().enumerate() {
        inner[i] ^= b;
        outer[i] ^= b;
    }
    let h = Sha256::new()
        .chain_update(inner)
        .chain_update(body)
        .finalize();
    Sha256::new()
        .chain_update(outer)
        .chain_update(h)
        .finalize()
        .into()
}

/// The body of a sealed record (`<seal in hex>\n<body>`), if its seal is right.
fn unseal<'a>(key: &[u8; 32], text: &'a [u8]) -> Option<&'a [u8]> {
    let nl = memchr::memchr(b'\n', text)?;
    let (hex, body) = (&text[..nl], &text[nl + 1..]);
    let want = seal(key, body);
    let hex = std::str::from_utf8(hex).ok()?;
    if hex.len() != 64 {
        return None;
    }
    let mut diff = 0u8;
    for (i, w) in want.iter().enumerate() {
        diff |= u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()? ^ w;
    }
    (diff == 0).then_some(body)
}

/// A hash of what the namespace is made of ([`super::mounts::apply`]'s inputs: the binds of each
/// kind, the private `/dev`, the empty folder): two plans with the same one need the same mount
/// table. (Not the whole plan: its placeholders, made by the first command, are gone from the
/// second one's.)
fn namespace_key(plan: &Plan) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    super::mounts::targets(plan).hash(&mut h);
    (
        &plan.pin,
        &plan.read_only,
        &plan.hide,
        &plan.rebind_writable,
    )
        .hash(&mut h);
    (plan.private_dev, super::empty_dir(plan)).hash(&mut h);
    // A view's name is its text's: a changed original needs another namespace.
    for v in &plan.views {
        v.file_name().hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Writes `rec`, sealed with `key`, to `<dir>/<name>` by a rename, so a reader sees the old
/// record or the new.
fn write_record(dir: &OwnedFd, name: &[u8], rec: &Record, key: &[u8; 32]) {
    let Ok(body) = serde_json::to_vec(rec) else {
        return;
    };
    let mut json: Vec<u8> = seal(key, &body)
        .iter()
        .flat_map(|b| format!("{b:02x}").into_bytes())
        .collect();
    json.push(b'\n');
    json.extend_from_slice(&body);
    let mut tmp = b".new-".to_vec();
    tmp.extend_from_slice(name);
    tmp.extend_from_slice(format!("-{}", std::process::id()).as_bytes());
    let (Ok(tmp), Ok(name)) = (CString::new(tmp), CString::new(name)) else {
        return;
    };
    // SAFETY: openat/write/close/renameat on a folder descriptor we hold and NUL-terminated
    // names.
    unsafe {
        let fd = libc::openat(
            dir.as_raw_fd(),
            tmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600,
        );
        if fd < 0 {
            return;
        }
        let ok = libc::write(fd, json.as_ptr().cast(), json.len()) == json.len() as isize;
        libc::close(fd);
        if ok {
            libc::renameat(
                dir.as_raw_fd(),
                tmp.as_ptr(),
                dir.as_raw_fd(),
                name.as_ptr(),
            );
        } else {
            libc::unlinkat(dir.as_raw_fd(), tmp.as_ptr(), 0);
        }
    }
}

/// The keeper: holds the namespaces it was born in and the record folder `dir` (opened in the
/// caller's mount table), nothing else, until its record names another process, or no command
/// has joined for [`IDLE`] and no process but itself is left in its mount namespace (`mnt`, an
/// inode number). Then it removes its record, so no later command looks for it.
fn keeper_main(dir: OwnedFd, name: &[u8], mnt: u64) -> ! {
    let d = dir.as_raw_fd() as libc::c_uint;
    // SAFETY: system calls on this process's own state; nothing here returns.
    unsafe {
        if d > 0 {
            libc::syscall(
                libc::SYS_close_range,
                0 as libc::c_uint,
                d - 1,
                0 as libc::c_uint,
            );
        }
        libc::syscall(
            libc::SYS_close_range,
            d + 1,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
    }
    detached_as(c"forge-keeper");
    let me = std::process::id();
    let ours = format!("mnt:[{mnt}]");
    let others_inside = || {
        std::fs::read_dir("/proc").ok().is_some_and(|rd| {
            rd.flatten().any(|e| {
                let pid = e.file_name();
                let Some(pid) = pid.to_str().and_then(|p| p.parse::<u32>().ok()) else {
                    return false;
                };
                pid != me
                    && std::fs::read_link(format!("/proc/{pid}/ns/mnt"))
                        .is_ok_and(|l| l.as_os_str() == ours.as_str())
            })
        })
    };
    let Ok(cname) = CString::new(name) else {
        // SAFETY: ends this process.
        unsafe { libc::_exit(0) }
    };
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() };
    loop {
        std::thread::sleep(CHECK);
        // SAFETY: openat(2) on the folder descriptor held, with a NUL-terminated name; the
        // descriptor is owned right away.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                cname.as_ptr(),
                libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        };
        let text = (fd >= 0)
            .then(|| read_record_file(unsafe { OwnedFd::from_raw_fd(fd) }, uid))
            .flatten();
        let mine = text.as_ref().is_some_and(|t| {
            let body = memchr::memchr(b'\n', t).map_or(&t[..0], |nl| &t[nl + 1..]);
            serde_json::from_slice::<Record>(body).is_ok_and(|r| r.pid == me as i32)
        });
        // SAFETY: fstatat(2) into a zeroed struct on the folder descriptor held.
        let recent = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstatat(
                dir.as_raw_fd(),
                cname.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
                && SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .is_ok_and(|now| (now.as_secs() as i64 - st.st_mtime) < IDLE.as_secs() as i64)
        };
        if !mine || !(recent || others_inside()) {
            // SAFETY: unlinkat(2) on the folder descriptor held; then this process ends.
            unsafe {
                if mine {
                    libc::unlinkat(dir.as_raw_fd(), cname.as_ptr(), 0);
                }
                libc::_exit(0)
            };
        }
    }
}

/// A record's bytes from `fd` (opened without following a link and without blocking), if it is
/// a regular file of this user's that only this user may write, of at most [`MAX_RECORD`]
/// bytes: a FIFO or a device put in its place is not read (red team, round 15: a FIFO hung every
/// later command).
fn read_record_file(fd: OwnedFd, uid: libc::uid_t) -> Option<Vec<u8>> {
    let st = fstat(&fd)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG
        || st.st_uid != uid
        || st.st_mode & 0o022 != 0
        || st.st_size as u64 > MAX_RECORD
    {
        return None;
    }
    let mut text = Vec::with_capacity(st.st_size as usize);
    use std::io::Read;
    std::fs::File::from(fd)
        .take(MAX_RECORD)
        .read_to_end(&mut text)
        .ok()?;
    Some(text)
}

/// When process `pid` started (field 22 of `/proc/<pid>/stat`, clock ticks since boot).
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses: fields 3 onwards.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

/// A hash of this process's mount table (`/proc/self/mountinfo`).
pub fn mount_table() -> Option<String> {
    use std::hash::{Hash, Hasher};
    let text = std::fs::read("/proc/self/mountinfo").ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    Some(format!("{:016x}", h.finish()))
}

/// Whether `path` is the root of a mount in the table `root` (a namespace's `/`) belongs to. A
/// path that is a link (a cache folder linked elsewhere) was bound at its target: that is
/// looked up in the same table, its absolute links taken from `root` (`RESOLVE_IN_ROOT`), not
/// from this process's own.
fn mount_root(root: &OwnedFd, path: &Path) -> bool {
    const STATX_ATTR_MOUNT_ROOT: u64 = 0x2000;
    let rel = path.strip_prefix("/").unwrap_or(path);
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let Ok(c) = CString::new(rel.as_os_str().as_bytes()) else {
        return false;
    };
    let is_root = |stx: &libc::statx| {
        stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT != 0
            && stx.stx_attributes & STATX_ATTR_MOUNT_ROOT != 0
    };
    // SAFETY: statx(2) and openat2(2) into zeroed structs, with descriptors and paths that
    // outlive the calls; the descriptor openat2 returns is owned right away.
    unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        if libc::statx(
            root.as_raw_fd(),
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            0,
            &mut stx,
        ) != 0
        {
            return false;
        }
        if is_root(&stx) {
            return true;
        }
        if u32::from(stx.stx_mode) & libc::S_IFMT != libc::S_IFLNK {
            return false;
        }
        let mut how: libc::open_how = std::mem::zeroed();
        how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        how.resolve = libc::RESOLVE_IN_ROOT;
        let fd = libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        );
        if fd < 0 {
            return false;
        }
        let fd = OwnedFd::from_raw_fd(fd as i32);
        let mut stx: libc::statx = std::mem::zeroed();
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            0,
            &mut stx,
        ) == 0
            && is_root(&stx)
    }
}

fn open(path: &str, flags: i32) -> Option<OwnedFd> {
    open_path(Path::new(path), flags)
}

fn open_path(path: &Path, flags: i32) -> Option<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned right away.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> Option<libc::stat> {
    // SAFETY: fstat(2) into a zeroed struct.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd.as_raw_fd(), &mut st) == 0).then_some(st)
    }
}

fn lstat(path: &Path) -> Option<libc::stat> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: lstat(2) into a zeroed struct, with a NUL-terminated path.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::lstat(c.as_ptr(), &mut st) == 0).then_some(st)
    }
}

fn ino(fd: &OwnedFd) -> Option<u64> {
    fstat(fd).map(|st| st.st_ino)
}

/// What a process Forge leaves running outside every sandbox (the keeper, the sweeper) does
/// once its descriptors are closed: no working folder to pin, a name `ps` shows, and deaf to the
/// terminal's signals (the session it came from may end first).
pub(super) fn detached_as(name: &std::ffi::CStr) {
    // SAFETY: chdir(2), prctl(2) and signal(2) with a NUL-terminated path and name.
    unsafe {
        libc::chdir(c"/".as_ptr());
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
        for s in [
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGPIPE,
            libc::SIGTSTP,
        ] {
            libc::signal(s, libc::SIG_IGN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HMAC_0B32_HI_THERE: &str =
        "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7";

    #[test]
    fn a_record_is_accepted_only_with_its_seal() {
        let key = [7u8; 32];
        let body = br#"{"pid":4242}"#;
        let mut text: Vec<u8> = seal(&key, body)
            .iter()
            .flat_map(|b| format!("{b:02x}").into_bytes())
            .collect();
        text.push(b'\n');
        text.extend_from_slice(body);
        assert_eq!(unseal(&key, &text), Some(&body[..]));
        assert_eq!(unseal(&[8u8; 32], &text), None, "another key");
        let mut forged = text.clone();
        *forged.last_mut().unwrap() = b' ';
        assert_eq!(unseal(&key, &forged), None, "another body");
        assert_eq!(unseal(&key, body), None, "no seal");
        // A 32-byte key of 0x0b over "Hi There" (RFC 4231's case 1 with a longer key), as
        // Python's `hmac.new(bytes([11]) * 32, b"Hi There", "sha256")` gives it.
        let k = [0x0bu8; 32];
        let mac: String = seal(&k, b"Hi There")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(mac, HMAC_0B32_HI_THERE);
    }

    #[test]
    fn witnesses_see_a_changed_folder_and_refuse_a_recent_change() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("watched");
        std::fs::create_dir(&dir).unwrap();
        let secret = dir.join("secret");
        let basis = Basis::of([secret.as_path()], Vec::new(), Vec::new());
        let rec = |ws: Option<Vec<Witness>>| Record {
            key: String::new(),
            pid: 2,
            start: 0,
            mounts: String::new(),
            mnt: 0,
            ipc: 0,
            user: 0,
            namespace: String::new(),
            plan: Plan::default(),
            witnesses: ws,
        };
        // Just made: too recent to vouch for.
        assert!(witness(&basis, SystemTime::now()).is_none());
        // Old enough (seen from a plan made a while later): the folder is vouched for by its
        // change time, and a secret made in it breaks the proof.
        let later = SystemTime::now() + BUSY + Duration::from_secs(1);
        let ws = witness(&basis, later).expect("old enough");
        assert!(
            ws.iter()
                .any(|w| matches!(w, Witness::Changed { path, .. } if *path == dir))
        );
        assert!(Keeper::plan_holds(&rec(Some(ws.clone()))));
        std::fs::write(&secret, "").unwrap();
        assert!(!Keeper::plan_holds(&rec(Some(ws))));
        // A busy folder (changed within BUSY, not within RACY): vouched for entry by entry, so
        // another entry made there does not break the proof; the secret's removal does.
        let soon = SystemTime::now() + RACY + Duration::from_millis(50);
        let ws = witness(&basis, soon).expect("not racy");
        assert!(
            ws.iter()
                .any(|w| matches!(w, Witness::Entry { path, .. } if *path == secret))
        );
        std::fs::write(dir.join("other"), "").unwrap();
        assert!(Keeper::plan_holds(&rec(Some(ws.clone()))));
        std::fs::remove_file(&secret).unwrap();
        assert!(!Keeper::plan_holds(&rec(Some(ws))));
        // No witnesses: never reused as it is.
        assert!(!Keeper::plan_holds(&rec(None)));
    }
}
