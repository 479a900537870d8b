//! A last line of defence for the PreToolUse hook: if a decision hangs or its memory runs away
//! (a parser bug on hostile input), the process answers "deny" itself instead of being killed by
//! the agent's timeout or the allocator — both of which the agents treat as "proceed".
//!
//! The answer is exit code 2 with the reason on stderr, which Claude Code, Codex CLI and Gemini
//! CLI all read as a block.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static USED: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes; over the armed limit it denies and exits.
pub struct Capped;

const DENY_MEMORY: &[u8] = b"Forge guard deny [resource-limit]: judging this tool call used too much memory; Forge denies what it cannot judge\n";
const DENY_CRASH: &[u8] = b"Forge guard deny [resource-limit]: judging this tool call crashed (stack or memory exhausted); Forge denies what it cannot judge\n";
const DENY_TIME: &[u8] = b"Forge guard deny [resource-limit]: judging this tool call took too long; Forge denies what it cannot judge\n";

fn deny_now(msg: &[u8]) -> ! {
    // SAFETY: write(2) and _exit(2) are async-signal-safe and allocate nothing; the message is a
    // static buffer.
    unsafe {
        nix::libc::write(2, msg.as_ptr().cast(), msg.len());
        nix::libc::_exit(2)
    }
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let limit = LIMIT.load(Ordering::Relaxed);
        let used = USED.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        if limit != 0 && used > limit {
            deny_now(DENY_MEMORY);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        USED.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let grow = new_size - layout.size();
            let limit = LIMIT.load(Ordering::Relaxed);
            let used = USED.fetch_add(grow, Ordering::Relaxed) + grow;
            if limit != 0 && used > limit {
                deny_now(DENY_MEMORY);
            }
        } else {
            USED.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

extern "C" fn on_alarm(_: nix::libc::c_int) {
    deny_now(DENY_TIME);
}

extern "C" fn on_crash(_: nix::libc::c_int) {
    deny_now(DENY_CRASH);
}

/// From now on, deny if the process runs longer than `deadline` (whole seconds, at least one),
/// holds more than `memory` bytes, crashes (stack overflow, abort) or panics. A `SIGALRM` handler rather than a timer thread: this runs
/// on every tool call.
pub fn arm(deadline: Duration, memory: usize) {
    LIMIT.store(USED.load(Ordering::Relaxed) + memory, Ordering::Relaxed);
    let handler: extern "C" fn(nix::libc::c_int) = on_alarm;
    let crash: extern "C" fn(nix::libc::c_int) = on_crash;
    // SAFETY: the handlers only call async-signal-safe functions (write, _exit). The crash
    // handler runs on the alternate signal stack std sets up, so a stack overflow reaches it.
    unsafe {
        nix::libc::signal(nix::libc::SIGALRM, handler as nix::libc::sighandler_t);
        nix::libc::alarm(deadline.as_secs().max(1) as nix::libc::c_uint);
        for sig in [
            nix::libc::SIGSEGV,
            nix::libc::SIGBUS,
            nix::libc::SIGABRT,
            nix::libc::SIGILL,
            nix::libc::SIGFPE,
        ] {
            let mut sa: nix::libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = crash as nix::libc::sighandler_t;
            sa.sa_flags = nix::libc::SA_ONSTACK;
            nix::libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    // A panic (in a build that unwinds) would exit 101, which agents read as "proceed".
    std::panic::set_hook(Box::new(|_| deny_now(DENY_CRASH)));
}
