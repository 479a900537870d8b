//! Containment: CMD runs in a new PID namespace, so everything it starts — also what called
//! `setsid` or double-forked — is killed by the kernel when CMD ends (the namespace's init
//! exits, and with it every process of the namespace).
//!
//! Three processes, because a PID namespace's first process (its init) ignores every signal it
//! has no handler for, and a shell as init would ignore `SIGTERM`:
//!
//! ```text
//! forge sandbox  (the caller's child; stays in the caller's namespace, relays signals in,
//!   │             and ends as CMD ended: same exit code, or killed by the same signal)
//!   └─ init      (PID 1 of the new namespace: reaps orphans, forwards signals to CMD,
//!        │        exits when CMD exits — taking the rest of the namespace with it)
//!        └─ CMD   (sandboxed, then exec'd)
//! ```
//!
//! Signals go through `sigwaitinfo`, so no handler runs and nothing is async-signal-unsafe.
//! A signal the terminal sends (`^C`) already reaches CMD through its process group; only
//! signals a process sent (`kill`) are relayed, so CMD never gets one twice.

use nix::libc;

use super::Ended;

/// Why containment is not possible here (the caller falls back to plain execution).
#[derive(Debug)]
pub struct Unavailable(pub String);

/// Signals relayed to CMD.
const RELAYED: [i32; 8] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCONT,
];

fn sigset(with_chld: bool) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in RELAYED {
            libc::sigaddset(&mut set, s);
        }
        if with_chld {
            libc::sigaddset(&mut set, libc::SIGCHLD);
        }
        set
    }
}

/// Starts the namespace. Returns `Some(how CMD ended)` in `forge sandbox` itself, `None` in the
/// process that is to become CMD (it sandboxes itself and execs); the init never returns.
pub fn enter() -> Result<Option<Ended>, Unavailable> {
    let set = sigset(true);
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: blocking signals in a single-threaded process; `old` receives the previous mask.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) };
    let restore = |old: &libc::sigset_t| {
        // SAFETY: restores the mask saved above.
        unsafe { libc::sigprocmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
    };

    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let uid = unsafe { libc::getuid() };
    let gid = unsafe { libc::getgid() };
    let flags = if root {
        libc::CLONE_NEWPID
    } else {
        libc::CLONE_NEWPID | libc::CLONE_NEWUSER
    };
    // SAFETY: unshare(2) with namespace flags only changes this process's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        let e = std::io::Error::last_os_error();
        restore(&old);
        return Err(Unavailable(format!("no PID namespace: {e}")));
    }
    if !root {
        // Map this user onto itself in the new user namespace, so files keep their owner.
        let w = |f: &str, s: String| std::fs::write(f, s);
        let ok = w("/proc/self/setgroups", "deny".into()).is_ok()
            && w("/proc/self/uid_map", format!("{uid} {uid} 1")).is_ok()
            && w("/proc/self/gid_map", format!("{gid} {gid} 1")).is_ok();
        if !ok {
            restore(&old);
            return Err(Unavailable("cannot map the user namespace".into()));
        }
    }

    let mut status_pipe = [0i32; 2];
    let mut lifeline = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into each array.
    unsafe {
        libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC);
        libc::pipe2(lifeline.as_mut_ptr(), libc::O_CLOEXEC);
    }
    // SAFETY: single-threaded; the child continues in Rust code that only forks, waits and
    // exits.
    let init = unsafe { libc::fork() };
    if init < 0 {
        let e = std::io::Error::last_os_error();
        restore(&old);
        return Err(Unavailable(format!(
            "cannot start the namespace's init: {e}"
        )));
    }
    if init == 0 {
        // SAFETY: closing our copies of the parent's ends.
        unsafe {
            libc::close(status_pipe[0]);
            libc::close(lifeline[1]);
        }
        return match run_init(status_pipe[1], lifeline[0], &old) {
            Some(()) => Ok(None),
            None => unreachable!("the init exits"),
        };
    }
    // SAFETY: closing the child's ends in the parent.
    unsafe {
        libc::close(status_pipe[1]);
        libc::close(lifeline[0]);
    }
    let ended = relay(init, status_pipe[0]);
    restore(&old);
    Ok(Some(ended))
}

/// `forge sandbox`: relays signals to the init until it exits, then reads how CMD ended.
fn relay(init: libc::pid_t, status_fd: i32) -> Ended {
    let set = sigset(true);
    loop {
        // SAFETY: siginfo_t is plain data filled by sigwaitinfo.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let sig = unsafe { libc::sigwaitinfo(&set, &mut info) };
        if sig < 0 {
            continue; // EINTR
        }
        if sig == libc::SIGCHLD {
            let mut st = 0;
            // SAFETY: waiting for our own child without blocking.
            let r = unsafe { libc::waitpid(init, &mut st, libc::WNOHANG) };
            if r == init {
                let mut buf = [0u8; 4];
                // SAFETY: reading at most 4 bytes into a 4-byte buffer.
                let n = unsafe { libc::read(status_fd, buf.as_mut_ptr().cast(), 4) };
                let cmd = if n == 4 { i32::from_ne_bytes(buf) } else { st };
                // The init itself killed (SIGKILL from outside): CMD died with it.
                if n != 4 && libc::WIFSIGNALED(st) {
                    return Ended::Signaled(libc::WTERMSIG(st));
                }
                return decode(cmd);
            }
            continue;
        }
        // Only what a process sent: the terminal's signals already reach CMD's group.
        if info.si_code <= 0 {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(init, sig) };
        }
    }
}

fn decode(st: i32) -> Ended {
    if libc::WIFSIGNALED(st) {
        Ended::Signaled(libc::WTERMSIG(st))
    } else {
        Ended::Exited(libc::WEXITSTATUS(st))
    }
}

/// The namespace's init. Forks CMD (returns `Some(())` in it), then reaps and relays until CMD
/// exits, and exits itself — which ends every process left in the namespace.
fn run_init(status_fd: i32, lifeline: i32, old_mask: &libc::sigset_t) -> Option<()> {
    // SAFETY: prctl/poll/fork/kill/waitpid/write/_exit on values this process owns.
    unsafe {
        // If `forge sandbox` dies (SIGKILL), the init dies, and the namespace with it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut p = libc::pollfd {
            fd: lifeline,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut p, 1, 0) > 0 && p.revents & (libc::POLLHUP | libc::POLLIN) != 0 {
            libc::_exit(1); // the parent died before PDEATHSIG was armed
        }
        let cmd = libc::fork();
        if cmd < 0 {
            libc::_exit(super::EXIT_SETUP);
        }
        if cmd == 0 {
            libc::close(status_fd);
            libc::close(lifeline);
            libc::sigprocmask(libc::SIG_SETMASK, old_mask, std::ptr::null_mut());
            return Some(());
        }
        let set = sigset(true);
        loop {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let sig = libc::sigwaitinfo(&set, &mut info);
            if sig < 0 {
                continue;
            }
            if sig == libc::SIGCHLD {
                loop {
                    let mut st = 0;
                    let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
                    if r <= 0 {
                        break;
                    }
                    if r == cmd {
                        let b = st.to_ne_bytes();
                        libc::write(status_fd, b.as_ptr().cast(), 4);
                        libc::_exit(0);
                    }
                }
                continue;
            }
            libc::kill(cmd, sig);
        }
    }
}

/// Exits this process the way CMD ended: the same code, or killed by the same signal.
pub fn exit_like(ended: Ended) -> ! {
    match ended {
        Ended::Exited(code) => std::process::exit(code),
        Ended::Signaled(sig) => {
            // SAFETY: default disposition, unblocked, then the signal to ourselves.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(sig);
            }
            std::process::exit(128 + sig)
        }
    }
}
