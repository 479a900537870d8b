//! Process execution: one shell command, in its own process group, with a timeout that kills
//! the whole group, its combined output streamed to a log file and only a bounded tail kept in
//! memory — a test command that prints a gigabyte costs disk, not Forge's memory.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::error::{Error, Result};

/// The largest read from the output pipe (a Linux pipe holds 64 KiB by default).
const READ_BUF: usize = 64 * 1024;
/// How long a timed-out group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait, once the command has exited, for processes it left behind to close the
/// output pipe before they are killed too.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ExecOptions {
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Where the combined stdout+stderr goes, in full.
    pub log_path: PathBuf,
    /// How many bytes of the end of the output to keep in memory.
    pub tail_bytes: usize,
    pub env: Vec<(String, String)>,
    /// Variables removed from the environment the command inherits.
    pub env_remove: Vec<String>,
    /// Up to this many bytes of the output are kept in memory from the start, so a gate parses
    /// what Forge read from the pipe rather than a log an agent could have rewritten. 0: none.
    pub capture: usize,
    /// Whether everything the command starts ends with it — also processes that left its
    /// process group (`setsid`, a double fork): Forge becomes their subreaper and kills every
    /// descendant once the command is done.
    pub contain: bool,
    /// Where to write `<pid> <start time>` of the command once it started (its process group
    /// id), so a later process can end it if Forge is killed meanwhile.
    pub pid_file: Option<PathBuf>,
    /// Runs `wrap… /bin/sh -c <command>` instead of the command alone: the kernel sandbox's
    /// launcher (`forge sandbox --profile … --`), whose exit code is the command's.
    pub wrap: Vec<std::ffi::OsString>,
}

impl ExecOptions {
    /// Options with nothing captured and nothing contained beyond the process group.
    pub fn new(cwd: PathBuf, timeout: Duration, log_path: PathBuf, tail_bytes: usize) -> Self {
        ExecOptions {
            cwd,
            timeout,
            log_path,
            tail_bytes,
            env: Vec::new(),
            env_remove: Vec::new(),
            capture: 0,
            contain: false,
            pid_file: None,
            wrap: Vec::new(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ExecOutcome {
    /// `None` when the process was killed by a signal or never started.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    /// Total bytes the command printed (stdout and stderr together).
    pub output_bytes: u64,
    /// The last `tail_bytes` of the output.
    pub tail: Vec<u8>,
    /// The whole output as read from the pipe, when it fit in [`ExecOptions::capture`].
    pub captured: Option<Vec<u8>>,
    /// Processes the command left behind that Forge killed (contained commands only).
    pub leftovers: usize,
    pub log_path: PathBuf,
    /// Ended by Forge because a person pressed Ctrl-C ([`stop_on_interrupt`]).
    pub interrupted: bool,
}

/// Set by the SIGINT handler [`stop_on_interrupt`] installs.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_interrupt(_: nix::libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// From now on, Ctrl-C ends the running command's group (as a timeout does, SIGTERM then
/// SIGKILL) and [`interrupted`] says so, instead of killing Forge at once: a command runs in
/// its own process group, which the terminal's SIGINT never reaches, so Forge dying first would
/// leave the suite running with no one to report on it. A second Ctrl-C kills Forge as usual.
pub fn stop_on_interrupt() {
    let handler: extern "C" fn(nix::libc::c_int) = on_interrupt;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        let mut sa: nix::libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as nix::libc::sighandler_t;
        sa.sa_flags = nix::libc::SA_RESETHAND | nix::libc::SA_RESTART;
        nix::libc::sigaction(nix::libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// Whether a person pressed Ctrl-C since [`stop_on_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

impl ExecOutcome {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Runs `command` with `/bin/sh -c` in `opts.cwd`. stdin is closed (a command waiting for input
/// gets EOF, never the terminal). stdout and stderr share one pipe, so the log interleaves them
/// exactly as a terminal would show `2>&1`.
///
/// One thread does everything — drain the pipe, watch the clock, reap the child — with `poll(2)`:
/// verify runs on every agent step, and helper threads cost more than the command `true` itself.
pub fn run_shell(command: &str, opts: &ExecOptions) -> Result<ExecOutcome> {
    let log = open_log(&opts.log_path)?;
    // Held while the command runs: a concurrent verify never recycles a log still being written.
    let _ = log.try_lock();
    let (mut reader, writer) = std::io::pipe().map_err(|e| Error::io("cannot create a pipe", e))?;

    // A statically linked std cannot find glibc's posix_spawn_file_actions_addchdir_np at run
    // time, so a Command with a working directory falls back to fork+exec, which copies the
    // page tables and makes the parent fault its pages back in. When the command runs where
    // Forge already is, leaving the directory unset lets std use posix_spawn (vfork).
    let chdir = !std::env::current_dir().is_ok_and(|here| here == opts.cwd);
    let start = Instant::now();
    // A plain command (`cargo test`, `true`) is exec'd directly, as make does: the same program
    // with the same arguments, without paying for a shell. Anything else goes through the shell.
    let spawn = |direct: Option<&[&str]>| {
        let mut cmd = match direct {
            Some(words) => {
                // Resolve the program on PATH with stat(2): letting exec try every PATH entry
                // costs a failed execve per entry, more than `true` takes to run.
                let mut c =
                    Command::new(which(words[0]).unwrap_or_else(|| PathBuf::from(words[0])));
                c.args(&words[1..]);
                c
            }
            None if !opts.wrap.is_empty() => {
                let mut c = Command::new(&opts.wrap[0]);
                c.args(&opts.wrap[1..])
                    .arg("/bin/sh")
                    .arg("-c")
                    .arg(command);
                c
            }
            None => {
                let mut c = Command::new("/bin/sh");
                c.arg("-c").arg(command);
                c
            }
        };
        let (w1, w2) = (writer.try_clone(), writer.try_clone());
        let (Ok(w1), Ok(w2)) = (w1, w2) else {
            return Err(std::io::Error::other("cannot duplicate the output pipe"));
        };
        if chdir {
            cmd.current_dir(&opts.cwd);
        }
        cmd.stdin(Stdio::null())
            .stdout(w1)
            .stderr(w2)
            .process_group(0);
        for k in &opts.env_remove {
            cmd.env_remove(k);
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        // The Command holds the pipe's write ends: it is dropped on return, or the reader would
        // never see EOF.
        cmd.spawn()
    };
    if opts.contain && is_sole_spawner() {
        become_subreaper();
    }
    let direct = if opts.wrap.is_empty() {
        direct_argv(command)
    } else {
        None
    };
    let spawned = match direct.as_deref().map(|w| spawn(Some(w))) {
        Some(Ok(child)) => Ok(child),
        // Not found or not executable: let the shell say so, with its usual exit code.
        _ => spawn(None),
    };
    drop(writer);
    let mut child = spawned.map_err(|e| {
        Error::io(
            format!(
                "cannot start `/bin/sh -c {command}` in {}",
                opts.cwd.display()
            ),
            e,
        )
    })?;
    let pgid = Pid::from_raw(child.id() as i32);
    if let Some(f) = &opts.pid_file {
        let line = format!("{} {}\n", child.id(), start_time(child.id()).unwrap_or(0));
        let _ = crate::state::write_atomic(f, line.as_bytes());
    }

    let mut log = BufWriter::with_capacity(64 * 1024, log);
    let mut tail = Tail::new(opts.tail_bytes);
    let mut captured: Option<Vec<u8>> = (opts.capture > 0).then(Vec::new);
    let mut output_bytes = 0u64;
    let mut leftovers = 0usize;
    // Start with one page and grow to a full pipe's worth once a read fills it: zeroing 64 KiB
    // up front faults in sixteen fresh pages on every run, even for a command that prints
    // nothing.
    let mut buf = vec![0u8; 4 * 1024];
    let mut status: Option<ExitStatus> = None;
    let mut timed_out = false;
    let mut interrupted = false;
    // What the clock is waiting for next.
    let mut stage = Stage::Running;
    let mut deadline = start + opts.timeout;
    let mut eof = false;

    while !eof {
        let now = Instant::now();
        if stage == Stage::Running && self::interrupted() {
            interrupted = true;
            let _ = killpg(pgid, Signal::SIGTERM);
            stage = Stage::Terminating;
            deadline = now + KILL_GRACE;
            continue;
        }
        if now >= deadline {
            match stage {
                Stage::Running => {
                    timed_out = true;
                    let _ = killpg(pgid, Signal::SIGTERM);
                    stage = Stage::Terminating;
                    deadline = now + KILL_GRACE;
                }
                Stage::Exited => {
                    // The shell is gone but something it left holds the pipe: end the group
                    // (and, contained, every descendant: nothing it left is wanted now).
                    let _ = killpg(pgid, Signal::SIGTERM);
                    if opts.contain {
                        leftovers += kill_descendants(child.id());
                    }
                    stage = Stage::Terminating;
                    deadline = now + KILL_GRACE;
                }
                Stage::Terminating => {
                    let _ = killpg(pgid, Signal::SIGKILL);
                    if opts.contain {
                        // The command may have left its own group (`exec setsid …`).
                        let _ = nix::sys::signal::kill(pgid, Signal::SIGKILL);
                        leftovers += kill_descendants(child.id());
                    }
                    stage = Stage::Killed;
                    deadline = now + DRAIN_GRACE;
                }
                // A process that left the group (setsid) can keep the pipe open forever: stop
                // reading rather than hang.
                Stage::Killed => break,
            }
            continue;
        }
        // Wake at least every 50 ms to notice the shell exiting while others hold the pipe.
        let wait = deadline
            .saturating_duration_since(now)
            .min(Duration::from_millis(50));
        if readable(&reader, wait) {
            match reader.read(&mut buf) {
                Ok(0) => eof = true,
                Ok(n) => {
                    // A full disk must not stop the drain: the child would block on the pipe.
                    let _ = log.write_all(&buf[..n]);
                    tail.push(&buf[..n]);
                    if let Some(c) = captured.as_mut() {
                        if c.len() + n <= opts.capture {
                            c.extend_from_slice(&buf[..n]);
                        } else {
                            captured = None;
                        }
                    }
                    output_bytes += n as u64;
                    if n == buf.len() && buf.len() < READ_BUF {
                        buf.resize(READ_BUF, 0);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            }
        } else {
            // The pipe went quiet: what is buffered reaches the log, so a person following it
            // (`tail -f`, the path `forge verify` names as a command starts) sees it now, while a
            // chatty command still costs one write per 64 KiB.
            let _ = log.flush();
        }
        if status.is_none()
            && let Ok(Some(s)) = child.try_wait()
        {
            status = Some(s);
            if stage == Stage::Running {
                stage = Stage::Exited;
                deadline = Instant::now() + DRAIN_GRACE;
            }
        }
    }
    let _ = log.flush();

    let status = match status {
        Some(s) => s,
        None => wait_or_kill(&mut child, pgid, start + opts.timeout, &mut timed_out)?,
    };
    let duration = start.elapsed();
    // Whatever the command left running in its group (a server started in the background) ends
    // with it: verify must not leak processes into the agent's machine.
    let _ = killpg(pgid, Signal::SIGKILL);
    if opts.contain {
        leftovers += kill_descendants(child.id());
    }
    Ok(ExecOutcome {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        duration,
        output_bytes,
        tail: tail.into_vec(),
        captured,
        leftovers,
        log_path: opts.log_path.clone(),
        interrupted,
    })
}

/// The kernel's start time of process `pid` (clock ticks since boot): with the pid, it names one
/// process for good, as pids are reused.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    // Fields after the command name start at field 3 (state); start time is field 22.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether this process starts commands from one thread only (the `forge` binary): then every
/// child it has once a contained command is done is that command's, and containment may take
/// them all. A program embedding the library with other threads spawning (a test harness)
/// gets the narrower containment: the command's own tree and what carries its mark.
static SOLE_SPAWNER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Declares this process the sole spawner of its children (the `forge` binary does, first).
pub fn sole_spawner() {
    SOLE_SPAWNER.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn is_sole_spawner() -> bool {
    SOLE_SPAWNER.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes Forge the subreaper of its descendants: a process that detaches (`setsid`, a double
/// fork) is re-parented to Forge instead of init, so [`kill_descendants`] still finds it.
fn become_subreaper() {
    // SAFETY: prctl with an integer argument; no memory is passed.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Kills every process descended from Forge other than `main` (the command itself, which its
/// caller kills and reaps): the command's children, and every orphan re-parented to Forge as
/// subreaper. Killing a parent re-parents its children to Forge, so rounds repeat until one
/// finds none alive. Returns how many processes it killed.
fn kill_descendants(main: u32) -> usize {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    if !is_sole_spawner() {
        return kill_tree(main);
    }
    let me = std::process::id();
    let mut killed = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut alive = Vec::new();
        for p in children_of(me).into_iter().filter(|&p| p != main) {
            // Reaps it if it is a zombie; a pid that is no longer our child is gone.
            if let Ok(WaitStatus::StillAlive) =
                waitpid(Pid::from_raw(p as i32), Some(WaitPidFlag::WNOHANG))
            {
                alive.push(p);
            }
        }
        if alive.is_empty() || Instant::now() > deadline {
            break;
        }
        for p in alive {
            let _ = nix::sys::signal::kill(Pid::from_raw(p as i32), Signal::SIGKILL);
            killed.insert(p);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    killed.len()
}

/// Without the subreaper (see [`sole_spawner`]): kills the live processes descended from
/// `main`, found through their parents, until none is left. A process that detached from the
/// tree escapes this narrower form.
fn kill_tree(main: u32) -> usize {
    let mut killed = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut tree = vec![main];
        let mut i = 0;
        while i < tree.len() {
            tree.extend(children_of(tree[i]));
            i += 1;
        }
        let alive: Vec<u32> = tree.into_iter().skip(1).collect();
        if alive.is_empty() || Instant::now() > deadline {
            break;
        }
        for p in alive {
            let _ = nix::sys::signal::kill(Pid::from_raw(p as i32), Signal::SIGKILL);
            killed.insert(p);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    killed.len()
}

/// The direct children of `pid`, from `/proc/<pid>/task/*/children`, or by scanning `/proc`
/// where the kernel does not offer that file.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let tasks = format!("/proc/{pid}/task");
    let mut found_file = false;
    if let Ok(rd) = std::fs::read_dir(&tasks) {
        for t in rd.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                found_file = true;
                out.extend(s.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
            }
        }
    }
    if found_file {
        return out;
    }
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            && let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r)
            && rest
                .split_whitespace()
                .nth(1)
                .and_then(|x| x.parse::<u32>().ok())
                == Some(pid)
        {
            out.push(p);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Running,
    Exited,
    Terminating,
    Killed,
}

/// Whether the pipe has data or hit EOF within `wait`.
fn readable(reader: &std::io::PipeReader, wait: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut fds = nix::libc::pollfd {
        fd: reader.as_raw_fd(),
        events: nix::libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for a file descriptor we own, for the duration of the call.
    let n = unsafe { nix::libc::poll(&mut fds, 1, ms) };
    n > 0 && fds.revents != 0
}

/// The output closed before the shell exited (it closed its stdout): wait for it up to the
/// deadline, then kill the group.
fn wait_or_kill(
    child: &mut std::process::Child,
    pgid: Pid,
    deadline: Instant,
    timed_out: &mut bool,
) -> Result<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                *timed_out = true;
                let _ = killpg(pgid, Signal::SIGTERM);
                std::thread::sleep(KILL_GRACE.min(Duration::from_millis(200)));
                let _ = killpg(pgid, Signal::SIGKILL);
                return child
                    .wait()
                    .map_err(|e| Error::io("cannot wait for the command", e));
            }
            Err(e) => return Err(Error::io("cannot wait for the command", e)),
        }
    }
}

/// The first executable file named `prog` on `PATH` (or `prog` itself when it has a `/`).
pub fn which(prog: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if prog.contains('/') {
        return None;
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Shell words, keywords and builtins that only mean something inside a shell.
const SHELL_ONLY: [&str; 40] = [
    "cd", "exit", "export", "set", "unset", "alias", "source", ".", "eval", "exec", "read", "wait",
    "trap", "shift", "times", "ulimit", "umask", "return", "break", "continue", "readonly",
    "local", "type", "hash", "command", "builtin", "getopts", "fg", "bg", "jobs", "if", "for",
    "while", "until", "case", "function", "select", "time", "!", "declare",
];

/// The words of a command that needs no shell: only plain characters (no quotes, `$`, globs,
/// redirections or operators), not starting with an assignment or a shell builtin.
fn direct_argv(command: &str) -> Option<Vec<&str>> {
    if !command
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" \t-_./,:+@%=".contains(&b))
    {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let first = *words.first()?;
    if first.contains('=') || SHELL_ONLY.contains(&first) {
        return None;
    }
    Some(words)
}

/// A ring of the last `cap` bytes.
struct Tail {
    cap: usize,
    buf: VecDeque<u8>,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Tail {
            cap,
            buf: VecDeque::with_capacity(cap.min(1 << 20)),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.cap == 0 {
            return;
        }
        let bytes = if bytes.len() > self.cap {
            &bytes[bytes.len() - self.cap..]
        } else {
            bytes
        };
        let overflow = (self.buf.len() + bytes.len()).saturating_sub(self.cap);
        self.buf.drain(..overflow);
        self.buf.extend(bytes);
    }

    fn into_vec(self) -> Vec<u8> {
        self.buf.into()
    }
}

/// A log path under `dir` that no concurrent run will pick: time, pid and a label.
pub fn unique_log_path(dir: &Path, label: &str) -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let label: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!(
        "{}{:06}-{}-{}.log",
        now.as_secs(),
        now.subsec_micros(),
        std::process::id(),
        label
    ))
}

/// The `.log` files in `dir`, oldest first (names start with a fixed-width timestamp, so name
/// order is age order).
fn logs_by_age(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut logs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs
}

/// Opens (creating or truncating) a command's log. Never through a symlink: a link planted in
/// the logs folder must not make Forge overwrite its target. A log that cannot be opened as it
/// is (another user's, read-only, a folder) is removed and created afresh. The log folder
/// exists on every run but the first: it is created only when the log cannot be.
fn open_log(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(path)
    };
    let err = |e| Error::io(format!("cannot create {}", path.display()), e);
    match open() {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
            }
            open().map_err(err)
        }
        Err(_) => {
            let _ = std::fs::remove_file(path);
            open().map_err(err)
        }
    }
}

/// Makes room in `dir` for the new log `into` so that at most `keep` logs remain: once `keep`
/// are there, the oldest is renamed to `into` (which [`run_shell`] then truncates) and any
/// older than that are deleted.
///
/// Reusing the oldest file rather than deleting it and creating another spares the filesystem
/// an inode allocation per log. On ext4 that matters when verify runs in a loop: the allocator
/// passes over every inode freed in the last minutes, so each delete makes later creates
/// slower. A concurrent verify that renamed the same file first only makes this one create a
/// new file.
pub fn recycle_log(dir: &Path, keep: usize, into: &Path) {
    let logs = logs_by_age(dir);
    if keep == 0 || logs.len() < keep {
        return;
    }
    let surplus = logs.len() - keep;
    for p in &logs[..surplus] {
        let _ = std::fs::remove_file(p);
    }
    let oldest = &logs[surplus];
    // Only a plain file no command is still writing (each holds a lock on its log while it
    // runs); anything else is removed, or left for a later run if in use.
    use std::os::unix::fs::OpenOptionsExt;
    let plain = std::fs::symlink_metadata(oldest).is_ok_and(|m| m.file_type().is_file());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(oldest);
    match file {
        Ok(f) if plain => {
            if f.try_lock().is_ok() {
                let _ = std::fs::rename(oldest, into);
            }
        }
        _ => {
            let _ = std::fs::remove_file(oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dir: &Path, timeout: Duration) -> ExecOptions {
        let mut o = ExecOptions::new(dir.to_path_buf(), timeout, dir.join("logs/out.log"), 16);
        o.env = vec![("FORGE_TEST_VAR".into(), "hello".into())];
        o
    }

    // Containment (`contain: true`) kills every child of the process, so it is proven end to
    // end on the forge binary (tests/hermetic.rs), never inside this multi-threaded test binary.

    #[test]
    fn output_over_the_capture_limit_is_not_captured() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(dir.path(), Duration::from_secs(10));
        o.capture = 10;
        let out = run_shell("echo 0123456789abcdef", &o).unwrap();
        assert!(out.captured.is_none());
        assert_eq!(out.output_bytes, 17);
    }

    #[test]
    fn captures_exit_code_output_and_env() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            "echo out; echo err >&2; echo $FORGE_TEST_VAR; exit 3",
            &opts(dir.path(), Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(out.exit_code, Some(3));
        assert!(!out.timed_out);
        let log = std::fs::read_to_string(&out.log_path).unwrap();
        assert_eq!(log, "out\nerr\nhello\n");
        assert_eq!(out.output_bytes, log.len() as u64);
    }

    #[test]
    fn tail_is_bounded_but_log_is_complete() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            "i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done",
            &opts(dir.path(), Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(out.tail.len(), 16);
        assert!(String::from_utf8_lossy(&out.tail).ends_with("line999\n"));
        let log = std::fs::read_to_string(&out.log_path).unwrap();
        assert_eq!(log.lines().count(), 1000);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child.pid");
        // The grandchild would outlive a kill of the shell alone.
        let cmd = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let out = run_shell(&cmd, &opts(dir.path(), Duration::from_millis(300))).unwrap();
        assert!(out.timed_out);
        assert!(!out.success());
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Reaped by init or a zombie at worst: it must not still be running.
        std::thread::sleep(Duration::from_millis(100));
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
            "sleep still alive: {stat}"
        );
    }

    #[test]
    fn background_leftovers_do_not_hang_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run_shell(
            "sleep 30 & echo started",
            &opts(dir.path(), Duration::from_secs(20)),
        )
        .unwrap();
        assert_eq!(out.exit_code, Some(0));
        assert!(started.elapsed() < Duration::from_secs(15));
        // A background process that let go of the output is ended with the group too.
        let pidfile = dir.path().join("bg.pid");
        let cmd = format!("sleep 30 >/dev/null 2>&1 & echo $! > {}", pidfile.display());
        run_shell(&cmd, &opts(dir.path(), Duration::from_secs(20))).unwrap();
        let pid = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .to_string();
        std::thread::sleep(Duration::from_millis(100));
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
            "left running: {stat}"
        );
    }

    #[test]
    fn missing_program_is_exit_127() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            "definitely-not-a-program-xyz",
            &opts(dir.path(), Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(out.exit_code, Some(127));
    }

    #[test]
    fn plain_commands_skip_the_shell_and_others_keep_it() {
        assert_eq!(
            direct_argv("cargo test --all"),
            Some(vec!["cargo", "test", "--all"])
        );
        assert_eq!(direct_argv("true"), Some(vec!["true"]));
        for needs_shell in [
            "echo $HOME",
            "a && b",
            "x > y",
            "FOO=1 cargo test",
            "cd src",
            "ls *.rs",
            "echo 'a b'",
            "",
        ] {
            assert_eq!(direct_argv(needs_shell), None, "{needs_shell}");
        }
        // A direct program that does not exist still reports like a shell would.
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            "no-such-program-xyz --flag",
            &opts(dir.path(), Duration::from_secs(10)),
        )
        .unwrap();
        assert_eq!(out.exit_code, Some(127));
        let log = std::fs::read_to_string(&out.log_path).unwrap();
        assert!(log.contains("not found"), "{log}");
        // And a direct program is still killed with its group at the timeout.
        let out = run_shell("sleep 30", &opts(dir.path(), Duration::from_millis(200))).unwrap();
        assert!(out.timed_out);
    }

    #[test]
    fn recycling_reuses_the_oldest_log_and_keeps_at_most_keep() {
        let dir = tempfile::tempdir().unwrap();
        let names = |d: &Path| {
            let mut v: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        // Below the limit nothing moves.
        std::fs::write(dir.path().join("001.log"), "one").unwrap();
        recycle_log(dir.path(), 3, &dir.path().join("002.log"));
        assert_eq!(names(dir.path()), vec!["001.log"]);
        for i in 2..=5 {
            std::fs::write(dir.path().join(format!("{i:03}.log")), format!("{i}")).unwrap();
        }
        // Five logs, keep three: the two oldest go, the third oldest becomes the new log.
        recycle_log(dir.path(), 3, &dir.path().join("006.log"));
        assert_eq!(names(dir.path()), vec!["004.log", "005.log", "006.log"]);
        // run_shell truncates it: the new log holds only the new output.
        let out = run_shell(
            "echo fresh",
            &ExecOptions {
                log_path: dir.path().join("006.log"),
                ..opts(dir.path(), Duration::from_secs(10))
            },
        )
        .unwrap();
        assert_eq!(out.exit_code, Some(0));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("006.log")).unwrap(),
            "fresh\n"
        );
    }

    #[test]
    fn recycling_never_follows_a_link_nor_takes_a_log_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        // A link planted as the oldest log: its target must survive untouched.
        let precious = dir.path().join("precious.txt");
        std::fs::write(&precious, "keep me\n").unwrap();
        std::os::unix::fs::symlink(&precious, logs.join("000.log")).unwrap();
        std::fs::write(logs.join("001.log"), "b").unwrap();
        let into = logs.join("002.log");
        recycle_log(&logs, 2, &into);
        assert!(
            !logs.join("000.log").exists(),
            "the link is removed, not reused"
        );
        let mut o = opts(dir.path(), Duration::from_secs(10));
        o.log_path = into.clone();
        run_shell("echo hello", &o).unwrap();
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
        // A link at the new log's own path is not followed either.
        std::os::unix::fs::symlink(&precious, logs.join("003.log")).unwrap();
        o.log_path = logs.join("003.log");
        run_shell("echo again", &o).unwrap();
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
        assert_eq!(
            std::fs::read_to_string(logs.join("003.log")).unwrap(),
            "again\n"
        );

        // A log another command is still writing (it holds the lock) is left alone.
        let busy = std::fs::OpenOptions::new()
            .write(true)
            .open(logs.join("001.log"))
            .unwrap();
        busy.lock().unwrap();
        let next = logs.join("004.log");
        recycle_log(&logs, 3, &next);
        assert!(
            logs.join("001.log").exists(),
            "a log in use is not recycled"
        );
        assert!(!next.exists());
        drop(busy);
        recycle_log(&logs, 3, &next);
        assert!(!logs.join("001.log").exists());
        assert!(next.exists(), "once free, the oldest log is reused");
    }
}
