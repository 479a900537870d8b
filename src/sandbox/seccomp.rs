//! The few system calls that reach another process which Landlock's scopes do not cover.
//!
//! Landlock (ABI ≥ 6) stops a sandboxed process from signalling or tracing processes outside
//! its domain, but `prlimit64` on another pid needs only the same uid: the red team set
//! `RLIMIT_FSIZE` to 0 on the shell that runs the session line, which then died of SIGXFSZ
//! writing its folder file, and could have starved the client itself. A seccomp filter answers
//! EPERM to those calls when they name any process but the caller; on itself (`ulimit`, `nice`,
//! `taskset`) they work as before. System calls of another ABI (i386's `int 0x80`, x32) end the
//! process. The filter is inherited across fork and exec.
//!
//! Two more reach past the file rules (red team, round 8): the kernel's keyrings (a Kerberos
//! ticket in the uid's persistent keyring was read inside, and a key planted in the user
//! keyring outlived the call), and file leases (a read lease on any readable file made an
//! outside writer of it hang until the lease broke). Both fail with EPERM inside, as under
//! Docker's default profile. So does a kernel crypto socket (`AF_ALG`), whose
//! `ALG_SET_KEY_BY_KEY_SERIAL` loads a keyring key without `keyctl` (round 9): a hash of one
//! known block gives its bytes back.

use super::SandboxError;

/// `(syscall, [(argument index, the only value allowed)])`: x86-64 numbers. A pid of 0 means
/// the caller.
#[cfg(target_arch = "x86_64")]
const RULES: &[(u32, &[(u32, u32)])] = &[
    (302, &[(0, 0)]),         // prlimit64(pid, …)
    (203, &[(0, 0)]),         // sched_setaffinity(pid, …)
    (144, &[(0, 0)]),         // sched_setscheduler(pid, …)
    (142, &[(0, 0)]),         // sched_setparam(pid, …)
    (314, &[(0, 0)]),         // sched_setattr(pid, …)
    (141, &[(0, 0), (1, 0)]), // setpriority(PRIO_PROCESS, 0, …) only: not a group, not a user
    (251, &[(0, 1), (1, 0)]), // ioprio_set(IOPRIO_WHO_PROCESS, 0, …) only
];

/// Always EPERM: `add_key`, `request_key`, `keyctl`.
#[cfg(target_arch = "x86_64")]
const DENIED: &[u32] = &[248, 249, 250];

/// `(syscall, argument index, value)`: EPERM when that argument has that value.
#[cfg(target_arch = "x86_64")]
const DENIED_WHEN: &[(u32, u32, u32)] = &[
    (72, 1, 1024), // fcntl(fd, F_SETLEASE, …)
    (41, 0, 38),   // socket(AF_ALG, …)
];

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// The x32 ABI's calls carry this bit; nothing here needs them, and they would bypass the rules.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Installs the filter on this process (and what it execs). Needs `no_new_privs`, which the
/// Landlock step has set.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn deny_reaching_other_processes() -> Result<(), SandboxError> {
    use nix::libc;
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
    const KILL: u32 = 0x8000_0000; // SECCOMP_RET_KILL_PROCESS
    const EPERM: u32 = 0x0005_0000 | libc::EPERM as u32; // SECCOMP_RET_ERRNO
    const NR: u32 = 0; // offsetof(struct seccomp_data, nr)
    const ARCH: u32 = 4;
    let arg = |i: u32| 16 + 8 * i; // the low 32 bits of args[i] (little-endian)
    let op = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };

    let mut prog = vec![
        // Another ABI (i386's `int 0x80`, with its own numbers) would pass every rule below
        // unseen: a process that uses one is ended (red team, round 4).
        op(LD_W_ABS, 0, 0, ARCH),
        op(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        op(RET_K, 0, 0, KILL),
        op(LD_W_ABS, 0, 0, NR),
        op(JSET_K, 0, 1, X32_SYSCALL_BIT),
        op(RET_K, 0, 0, EPERM),
    ];
    for (nr, checks) in RULES {
        // ld nr; jeq nr (else skip the block); per check: ld arg, jeq value (else to EPERM);
        // ret ALLOW; ret EPERM.
        let len = 2 * checks.len() as u8 + 2;
        prog.push(op(LD_W_ABS, 0, 0, NR));
        prog.push(op(JEQ_K, 0, len, *nr));
        for (i, (idx, value)) in checks.iter().enumerate() {
            // Instructions left before the EPERM return, after this jump.
            let to_eperm = 2 * (checks.len() - i - 1) as u8 + 1;
            prog.push(op(LD_W_ABS, 0, 0, arg(*idx)));
            prog.push(op(JEQ_K, 0, to_eperm, *value));
        }
        prog.push(op(RET_K, 0, 0, ALLOW));
        prog.push(op(RET_K, 0, 0, EPERM));
    }
    for nr in DENIED {
        // ld nr; jeq nr (else skip the return); ret EPERM.
        prog.push(op(LD_W_ABS, 0, 0, NR));
        prog.push(op(JEQ_K, 0, 1, *nr));
        prog.push(op(RET_K, 0, 0, EPERM));
    }
    for (nr, idx, value) in DENIED_WHEN {
        // ld nr; jeq nr (else skip the block); ld arg; jeq value (else skip the return);
        // ret EPERM.
        prog.push(op(LD_W_ABS, 0, 0, NR));
        prog.push(op(JEQ_K, 0, 3, *nr));
        prog.push(op(LD_W_ABS, 0, 0, arg(*idx)));
        prog.push(op(JEQ_K, 0, 1, *value));
        prog.push(op(RET_K, 0, 0, EPERM));
    }
    prog.push(op(RET_K, 0, 0, ALLOW));
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: `fprog` points at `prog`, alive across the call; the kernel copies the program.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r != 0 {
        return Err(SandboxError::Setup {
            step: "install the seccomp filter".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Elsewhere the Landlock scopes are all there is.
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub fn deny_reaching_other_processes() -> Result<(), SandboxError> {
    Ok(())
}
