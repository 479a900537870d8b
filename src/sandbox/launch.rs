//! How callers start a sandboxed command: the exact argv of `forge sandbox …` for a
//! [`Request`](super::Request) (what `forge run` and `src/exec.rs` spawn), and the shell line the
//! PreToolUse hook gives Claude Code in place of an agent's Bash command. Pure string building,
//! tested by exact vectors.

use std::ffi::OsString;
use std::path::Path;

use super::Request;
use crate::text::shell_quote;

/// The argv that runs `program` inside the sandbox `req` describes, by re-executing `forge`
/// (`forge` is the binary to run: `std::env::current_exe()` for Forge itself).
///
/// ```
/// use std::ffi::OsString;
/// use std::path::Path;
/// use forge::sandbox::{launch, Profile, Request};
///
/// let mut req = Request::new(Profile::Red, "/repo");
/// req.write = vec!["tests/**".into()];
/// req.answer = Some("/repo/.tmp/.forge/runs/r/outputs/red-1/answer.json".into());
/// req.tmpdir = Some("/tmp/forge-run-r/red-1".into());
/// req.contain = true;
/// let argv = launch::argv(Path::new("/usr/bin/forge"), &req, &["claude".into(), "-p".into(), "go".into()]);
/// let words: Vec<&str> = argv.iter().map(|a| a.to_str().unwrap()).collect();
/// assert_eq!(words, [
///     "/usr/bin/forge", "sandbox", "--profile", "red", "--project", "/repo",
///     "--write", "tests/**", "--answer", "/repo/.tmp/.forge/runs/r/outputs/red-1/answer.json",
///     "--tmpdir", "/tmp/forge-run-r/red-1", "--contain", "--", "claude", "-p", "go",
/// ]);
/// ```
pub fn argv(forge: &Path, req: &Request, program: &[OsString]) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![
        forge.into(),
        "sandbox".into(),
        "--profile".into(),
        req.profile.as_str().into(),
        "--project".into(),
        req.project.clone().into(),
    ];
    for w in &req.write {
        v.push("--write".into());
        v.push(w.into());
    }
    if let Some(a) = &req.answer {
        v.push("--answer".into());
        v.push(a.into());
    }
    if let Some(t) = &req.tmpdir {
        v.push("--tmpdir".into());
        v.push(t.into());
    }
    if let Some(c) = req.client {
        v.push("--client".into());
        v.push(c.as_str().into());
    }
    for c in req.caches.iter().flatten() {
        v.push("--cache".into());
        v.push(c.into());
    }
    if let Some(m) = req.mode {
        v.push("--mode".into());
        v.push(m.as_str().into());
    }
    if req.contain {
        v.push("--contain".into());
    }
    if let Some(l) = &req.layer {
        v.push("--layer".into());
        v.push(l.into());
    }
    for k in &req.layer_keep {
        v.push("--layer-keep".into());
        v.push(k.into());
    }
    for e in &req.layer_envs {
        v.push("--layer-env".into());
        v.push(e.into());
    }
    if req.layer_in_place {
        v.push("--layer-in-place".into());
    }
    for k in &req.keep_read_only {
        v.push("--keep-read-only".into());
        v.push(k.into());
    }
    v.push("--".into());
    v.extend(program.iter().cloned());
    v
}

/// The programs the outer line runs, by absolute path in the system's folders: it runs outside
/// the sandbox, in the client's shell, and a name looked up through PATH could find a program
/// the sandboxed command wrote (a project's `.venv/bin` on PATH is writable inside).
fn system_program(name: &str) -> Option<String> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| Path::new(p).is_file())
}

/// How the outer line reads the folder file and removes it: with a time limit and a size cap
/// (`timeout`, `head`), by absolute path. `None` when the system lacks one of them.
fn outer_programs() -> Option<(String, String)> {
    let (timeout, head, rm) = (
        system_program("timeout")?,
        system_program("head")?,
        system_program("rm")?,
    );
    Some((format!("{timeout} 2 {head} -c 4096 --"), format!("{rm} -f")))
}

/// The shell line that runs an agent's Bash `command` inside `forge sandbox --profile session`,
/// for the client's shell to run in place of the command (Claude Code's `updatedInput`).
///
/// The command runs in `shell -c` inside the sandbox exactly as written. The client keeps the
/// folder a command `cd`s to between calls; a sandboxed shell's `cd` would be lost with it, so
/// the inner shell writes its last folder to `cwd_file` (in the sandbox's TMPDIR) on exit and the
/// outer line `cd`s there, then returns the command's exit status. The folder file lies where
/// the sandboxed command (and what it left running) may write: it is read with a time limit and
/// a size cap, so swapping it for a FIFO or a link to something endless cannot hang the client.
/// The `cd` is the shell's own (`builtin cd`; `command cd` in a shell without `builtin`): a `cd`
/// function of the user's (one that sources `venv/bin/activate`) would run what the command
/// wrote, outside the sandbox.
pub fn session_command(
    forge: &Path,
    project: &Path,
    shell: &Path,
    command: &str,
    cwd_file: Option<&Path>,
) -> String {
    let outer = outer_programs();
    let (Some(cwd_file), Some((read_cwd, remove))) = (cwd_file, outer) else {
        // A client that starts every command in its session folder (Codex CLI) needs no `cd`
        // carried out; its own command check also refuses the `rm -f` that cleans up after one.
        // (Without the system's `timeout`, `head` and `rm`, the folder is not carried out either.)
        return format!(
            "{} sandbox --profile session --project {} -- {} -c {}",
            shell_quote(&forge.to_string_lossy()),
            shell_quote(&project.to_string_lossy()),
            shell_quote(&shell.to_string_lossy()),
            shell_quote(command),
        );
    };
    let cwd_file = shell_quote(&cwd_file.to_string_lossy());
    let inner = format!(
        "trap {} EXIT\n{command}",
        shell_quote(&format!("pwd -P >| {cwd_file}"))
    );
    format!(
        "{} sandbox --profile session --project {} -- {} -c {}; __forge_rc=$?; {{ [ -f {cwd_file} ] && [ ! -L {cwd_file} ] && __forge_cwd=$({read_cwd} {cwd_file}) && {{ builtin cd -- \"$__forge_cwd\" || command cd -- \"$__forge_cwd\"; }}; }} 2>/dev/null; {remove} {cwd_file}; (exit $__forge_rc)",
        shell_quote(&forge.to_string_lossy()),
        shell_quote(&project.to_string_lossy()),
        shell_quote(&shell.to_string_lossy()),
        shell_quote(&inner),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Mode, Profile};

    #[test]
    fn argv_of_a_check_and_a_session() {
        let mut req = Request::new(Profile::Check, "/repo");
        req.write = vec!["/tmp/checkout".into()];
        req.caches = Some(vec!["~/.cargo/registry".into()]);
        req.mode = Some(Mode::Require);
        let v = argv(
            Path::new("forge"),
            &req,
            &["sh".into(), "-c".into(), "cargo test".into()],
        );
        let words: Vec<&str> = v.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            words,
            [
                "forge",
                "sandbox",
                "--profile",
                "check",
                "--project",
                "/repo",
                "--write",
                "/tmp/checkout",
                "--cache",
                "~/.cargo/registry",
                "--mode",
                "require",
                "--",
                "sh",
                "-c",
                "cargo test"
            ]
        );
        let req = Request::new(Profile::Session, "/repo");
        let v = argv(Path::new("forge"), &req, &["true".into()]);
        assert_eq!(v.len(), 8);
    }

    const CODEX_LINE: &str = r"/usr/bin/forge sandbox --profile session --project /repo -- /bin/bash -c 'echo '\''hi'\'''";

    #[test]
    fn session_line_is_exact() {
        let line = session_command(
            Path::new("/usr/bin/forge"),
            Path::new("/repo"),
            Path::new("/bin/bash"),
            "echo 'hi'",
            Some(Path::new("/tmp/s/cwd-1")),
        );
        let codex = session_command(
            Path::new("/usr/bin/forge"),
            Path::new("/repo"),
            Path::new("/bin/bash"),
            "echo 'hi'",
            None,
        );
        assert_eq!(codex, CODEX_LINE);
        // Outside the sandbox: shell builtins, and the system's programs by absolute path only.
        let (read, remove) = outer_programs().expect("timeout, head and rm in /usr/bin or /bin");
        assert!(read.starts_with('/') && remove.starts_with('/'));
        assert_eq!(
            line,
            format!(
                r#"/usr/bin/forge sandbox --profile session --project /repo -- /bin/bash -c 'trap '\''pwd -P >| /tmp/s/cwd-1'\'' EXIT
echo '\''hi'\'''; __forge_rc=$?; {{ [ -f /tmp/s/cwd-1 ] && [ ! -L /tmp/s/cwd-1 ] && __forge_cwd=$({read} /tmp/s/cwd-1) && {{ builtin cd -- "$__forge_cwd" || command cd -- "$__forge_cwd"; }}; }} 2>/dev/null; {remove} /tmp/s/cwd-1; (exit $__forge_rc)"#
            )
        );
    }

    /// Red team: a process the command left running swapped the folder file for a FIFO between
    /// the outer line's test and its read, and the client hung.
    #[test]
    fn the_folder_file_is_read_without_hanging_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("cwd");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "x=$({} {}); echo done",
                outer_programs().unwrap().0,
                shell_quote(&fifo.to_string_lossy())
            ))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ended = None;
        for _ in 0..200 {
            if let Some(s) = child.try_wait().unwrap() {
                ended = Some(s);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if ended.is_none() {
            let _ = child.kill();
        }
        assert!(ended.is_some(), "reading the folder file hung on a FIFO");
    }

    /// The line runs the command exactly as written, in bash and zsh, keeps its exit status and
    /// carries its `cd` out. `forge` is stood in for by `env` with the sandbox's arguments
    /// dropped (the sandbox itself is proven in tests/sandbox.rs).
    #[test]
    fn session_line_runs_commands_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake-forge");
        std::fs::write(
            &fake,
            "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let sub = dir.path().join("sub dir");
        std::fs::create_dir(&sub).unwrap();
        let cases: &[(&str, &str, i32)] = &[
            ("echo \"a  b\" '$HOME' \\$x", "a  b $HOME $x\n", 0),
            (
                "cat <<'EOF'\nline $1 'q' \"d\"\nEOF",
                "line $1 'q' \"d\"\n",
                0,
            ),
            ("x=1\nif [ $x = 1 ]; then echo yes; fi\nexit 3", "yes\n", 3),
            ("printf '%s\\n' \"it's\"", "it's\n", 0),
            ("cd 'sub dir' && pwd -P", "", 0),
        ];
        for shell in ["/bin/bash", "/usr/bin/zsh", "/bin/sh"] {
            if !Path::new(shell).exists() {
                continue;
            }
            for (cmd, out, code) in cases {
                let cwd_file = dir.path().join("cwd");
                let line = session_command(
                    &fake,
                    Path::new("/repo"),
                    Path::new("/bin/bash"),
                    cmd,
                    Some(&cwd_file),
                );
                let o = std::process::Command::new(shell)
                    .arg("-c")
                    .arg(format!(
                        // A `cd` function of the user's must not be what carries the folder out.
                        "cd() {{ echo HIJACKED; }}\neval {}\necho \"rc=$? pwd=$(pwd -P)\"",
                        shell_quote(&line)
                    ))
                    .current_dir(dir.path())
                    .output()
                    .unwrap();
                let stdout = String::from_utf8_lossy(&o.stdout);
                let here = dir.path().canonicalize().unwrap();
                let want_pwd = if cmd.starts_with("cd") {
                    sub.canonicalize().unwrap()
                } else {
                    here.clone()
                };
                let tail = format!("rc={code} pwd={}\n", want_pwd.display());
                assert!(
                    stdout.ends_with(&tail),
                    "{shell} {cmd:?}: {stdout:?} {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                if !cmd.starts_with("cd") {
                    assert_eq!(
                        &stdout[..stdout.len() - tail.len()],
                        *out,
                        "{shell} {cmd:?}"
                    );
                }
                assert!(!cwd_file.exists());
            }
        }
    }
}
