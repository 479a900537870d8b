//! From an argument vector to the commands it runs: wrappers peeled (`sudo`, `env -S`, `strace
//! -f`, `nohup`, `timeout`, `uv run`, …) down to the program; shell builtins that change the
//! shell (`cd`, `pushd`, `export`, `alias`, `shopt`); and programs that run code given to them
//! as a string or a file: shells (`bash -c`, a script, stdin), `eval`, `source`, `trap`,
//! `find -exec`, `xargs`, `ssh`, `docker run`, `at`, `crontab`, `screen`, `tmux`, `watch`,
//! `git` (aliases, `submodule foreach`, `rebase --exec`, patches), `make`, `npm` and friends.

use std::path::{Path, PathBuf};

use super::sources::{Content, PatchSource, is_downloader};
use super::walk::{Ctx, Val, Walker, dyn_arg};
use super::{Arg, Cwd, Invocation, Names, Opaque, Origin, Stdin, Word};

/// A command about to run.
pub(super) struct Call {
    pub argv: Vec<Word>,
    pub wrappers: Vec<String>,
    pub env: Vec<(String, Arg)>,
    pub stdin: Stdin,
    pub upstream: Vec<usize>,
    pub names: Names,
}

const SHELLS: [&str; 9] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash",
];

/// Programs whose name a glob or a brace in the program word could reach: the ones rules care
/// about. A program word that is a pattern is judged as every one of these it matches.
const KNOWN_PROGRAMS: [&str; 40] = [
    "rm", "rmdir", "shred", "unlink", "dd", "mkfs", "mv", "cp", "chmod", "chown", "git", "curl",
    "wget", "sh", "bash", "zsh", "dash", "python", "python3", "perl", "ruby", "node", "kill",
    "pkill", "killall", "find", "xargs", "tee", "truncate", "sudo", "forge", "eval", "env", "nc",
    "ssh", "scp", "rsync", "tar", "sed", "awk",
];

/// Options of common wrappers that take a value (`sudo -u root`).
fn wrapper_options(prog: &str) -> Option<&'static [&'static str]> {
    Some(match prog {
        "sudo" | "doas" => &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
        ],
        "exec" => &["-a"],
        "time" => &["-f", "-o", "--format", "--output"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "unbuffer" | "builtin" | "nohup" | "catchsegv" | "dbus-run-session" | "chronic"
        | "firejail" | "rlwrap" => &[],
        "setsid" => &[],
        "caffeinate" => &["-t", "-w"],
        "fakeroot" => &["-l", "-s", "-i", "--lib", "--faked"],
        "dumb-init" => &["-r", "--rewrite"],
        "tini" => &["-p", "-e"],
        "xvfb-run" => &[
            "-n",
            "-s",
            "-f",
            "-e",
            "-p",
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
        ],
        "torsocks" | "proxychains" | "proxychains4" => &["-f", "-u", "-p", "-a", "-P"],
        "setpriv" => &[
            "--reuid",
            "--regid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--selinux-label",
            "--apparmor-profile",
            "--pdeathsig",
            "--rlimit",
        ],
        "cgexec" => &["-g"],
        "proot" => &[
            "-r", "-b", "-w", "-q", "-k", "-v", "--rootfs", "--bind", "--cwd",
        ],
        "strace" => &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-P", "-X", "-O", "-S", "-U",
        ],
        "ltrace" => &[
            "-o", "-e", "-p", "-s", "-u", "-n", "-l", "-a", "-A", "-D", "-F", "-x",
        ],
        "valgrind" => &[],
        "perf" => &[
            "-e", "-o", "-p", "-t", "-F", "-c", "-C", "-G", "--event", "--output", "--pid",
        ],
        "systemd-run" => &[
            "-p",
            "-u",
            "-E",
            "-M",
            "-H",
            "--property",
            "--unit",
            "--description",
            "--slice",
            "--setenv",
            "--uid",
            "--gid",
            "--working-directory",
        ],
        "watchexec" => &[
            "-e",
            "-w",
            "-i",
            "-s",
            "-d",
            "--exts",
            "--watch",
            "--ignore",
            "--signal",
            "--debounce",
            "--shell",
        ],
        "conda" | "mamba" | "micromamba" => &["-n", "-p", "--name", "--prefix", "--cwd"],
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" => &[
            "--with",
            "--python",
            "-p",
            "--project",
            "--directory",
            "--env",
            "-e",
            "--extra",
            "--group",
            "--package",
            "--index",
            "--index-url",
            "--env-file",
        ],
        _ => return None,
    })
}

impl Walker<'_> {
    /// Records `call` after peeling wrappers; follows whatever it runs.
    pub(super) fn invoke(&mut self, mut call: Call, ctx: &mut Ctx, depth: usize) {
        let mut path: Option<String> = None;
        loop {
            let Some(first) = call.argv.first().cloned() else {
                return;
            };
            let raw = match &first.arg {
                Arg::Lit(s) => s.clone(),
                Arg::Dyn { .. } => break,
            };
            // A program word that is a glob (`/???/r?`, `r[m]`): bash runs the first match, or
            // the word itself when nothing matches. Judge every reading.
            if let Some(pattern) = &first.pattern {
                self.program_glob(pattern, &call, ctx, depth);
                return;
            }
            let prog = base_name(&raw);
            if raw.contains('/') && path.is_none() {
                path = Some(raw.clone());
                if self.program_path(&raw, &call, ctx, depth) {
                    return;
                }
            }
            call.argv[0] = Word::lit(prog.clone());
            let rest: Vec<Word> = call.argv[1..].to_vec();
            let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
            // Wrappers: peel and go round again.
            let skip: Option<usize> = match prog.as_str() {
                "env" => {
                    if self.env_wrapper(&mut call, ctx, depth) {
                        continue;
                    }
                    break;
                }
                "command" => {
                    if matches!(lits.first(), Some(Some("-v" | "-V"))) {
                        break; // a lookup, not a run
                    }
                    Some(skip_options(&rest, &[]))
                }
                "sudo" | "doas" if rest.is_empty() || only_options(&rest) => {
                    call.wrappers.push(prog.clone());
                    call.argv.truncate(1);
                    break;
                }
                "timeout" => Some(
                    skip_options(&rest, &["-s", "-k", "--signal", "--kill-after"])
                        .saturating_add(1),
                ),
                "chrt" => {
                    let n = skip_options(&rest, &["-T", "-P", "-D"]);
                    // The priority, unless `-p` or `-m` (which take no command).
                    Some(n + 1)
                }
                "taskset" => {
                    let n = skip_options(&rest, &[]);
                    Some(n + 1)
                }
                "flock" => {
                    if let Some(i) = lits
                        .iter()
                        .position(|a| matches!(a, Some("-c" | "--command")))
                    {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    Some(
                        skip_options(&rest, &["-w", "-E", "--timeout", "--conflict-exit-code"]) + 1,
                    )
                }
                "nice" => {
                    let mut n = skip_options(&rest, &["-n", "--adjustment"]);
                    // `nice -5 cmd`: an old-style adjustment.
                    if n == 0
                        && lits
                            .first()
                            .copied()
                            .flatten()
                            .is_some_and(|a| a.starts_with('-') && a[1..].parse::<i32>().is_ok())
                    {
                        n = 1;
                    }
                    Some(n)
                }
                "gosu" | "su-exec" => Some(1),
                "faketime" => Some(skip_options(&rest, &[]) + 1),
                "gdb" => match lits.iter().position(|a| *a == Some("--args")) {
                    Some(i) => Some(i + 1),
                    None => break,
                },
                "perf" => {
                    // `perf stat|record|trace [opts] [--] cmd`
                    match lits.first() {
                        Some(Some("stat" | "record" | "trace")) => Some(
                            1 + skip_options(&rest[1..], wrapper_options("perf").unwrap_or(&[])),
                        ),
                        _ => break,
                    }
                }
                "valgrind" => Some(skip_options(&rest, &[])),
                "systemd-run" => {
                    call.wrappers.push("systemd-run".into());
                    let n = skip_options(&rest, wrapper_options("systemd-run").unwrap_or(&[]));
                    let inner = rest[n..].to_vec();
                    let mut later = ctx.child(Origin::Later("systemd-run"));
                    self.push_plain(&call, ctx);
                    self.invoke(self.call_with(inner, &call), &mut later, depth + 1);
                    return;
                }
                "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" => match lits.first() {
                    Some(Some("run")) => {
                        Some(1 + skip_options(&rest[1..], wrapper_options("uv").unwrap_or(&[])))
                    }
                    _ => break,
                },
                "bundle" | "pnpm" | "yarn" | "npm" | "bun"
                    if matches!(lits.first(), Some(Some("exec" | "dlx" | "x"))) =>
                {
                    if let Some(i) = lits.iter().position(|a| matches!(a, Some("-c" | "--call"))) {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    Some(
                        1 + skip_options(
                            &rest[1..],
                            &["-p", "--package", "--filter", "-C", "--dir"],
                        ),
                    )
                }
                "npx" | "pnpx" | "bunx" => {
                    if let Some(i) = lits.iter().position(|a| matches!(a, Some("-c" | "--call"))) {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    Some(skip_options(&rest, &["-p", "--package"]))
                }
                "direnv" if lits.first() == Some(&Some("exec")) => Some(2),
                "nix" if matches!(lits.first(), Some(Some("develop" | "shell"))) => {
                    match lits
                        .iter()
                        .position(|a| matches!(a, Some("-c" | "--command")))
                    {
                        Some(i) => Some(i + 1),
                        None => break,
                    }
                }
                "nix-shell" => {
                    if let Some(i) = lits
                        .iter()
                        .position(|a| matches!(a, Some("--run" | "--command")))
                    {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    break;
                }
                "conda" | "mamba" | "micromamba" if lits.first() == Some(&Some("run")) => {
                    Some(1 + skip_options(&rest[1..], wrapper_options("conda").unwrap_or(&[])))
                }
                "mise" | "rtx" | "asdf" | "devbox"
                    if matches!(lits.first(), Some(Some("exec" | "x" | "run"))) =>
                {
                    match lits.iter().position(|a| *a == Some("--")) {
                        Some(i) => Some(i + 1),
                        None if prog == "asdf" || prog == "devbox" => Some(1),
                        None => break,
                    }
                }
                "runuser" | "su" | "sg" => {
                    if let Some(i) = lits
                        .iter()
                        .position(|a| matches!(a, Some("-c" | "--command")))
                    {
                        call.wrappers.push(prog.clone());
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    if prog == "sg" {
                        // `sg group command`: the command is a string run by /bin/sh.
                        self.shell_string(&rest, 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    match lits.iter().position(|a| *a == Some("--")) {
                        Some(i) => Some(i + 1),
                        None if prog == "runuser" => Some(skip_options(
                            &rest,
                            &["-u", "-g", "-G", "--user", "--group"],
                        )),
                        None => break,
                    }
                }
                "pkexec" => Some(skip_options(&rest, &["--user"])),
                "bwrap" => Some(bwrap_skip(&rest)),
                "watch" => {
                    let n = skip_options(&rest, &["-n", "-d", "--interval", "-q", "--equexit"]);
                    if lits.iter().any(|a| matches!(a, Some("-x" | "--exec"))) {
                        Some(n)
                    } else {
                        // `watch 'cmd'`: the rest, joined, is run by `sh -c`.
                        let text = join_lits(&rest[n..]);
                        call.wrappers.push("watch".into());
                        self.run_text(text, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                }
                "entr" => {
                    let n = skip_options(&rest, &[]);
                    if lits
                        .iter()
                        .take(n)
                        .any(|a| a.is_some_and(|a| a.starts_with('-') && a.contains('s')))
                    {
                        let text = join_lits(&rest[n..]);
                        self.run_text(text, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    Some(n)
                }
                "watchexec" => match lits.iter().position(|a| *a == Some("--")) {
                    Some(i) => Some(i + 1),
                    None => Some(skip_options(
                        &rest,
                        wrapper_options("watchexec").unwrap_or(&[]),
                    )),
                },
                "nodemon" => {
                    if let Some(i) = lits.iter().position(|a| matches!(a, Some("-x" | "--exec"))) {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    break;
                }
                "hyperfine" => {
                    // Each operand is a command run by a shell.
                    let mut i = 0;
                    while i < rest.len() {
                        match rest[i].arg.lit() {
                            Some(a) if a.starts_with('-') => {
                                i += if matches!(
                                    a,
                                    "-w" | "-r"
                                        | "-m"
                                        | "-M"
                                        | "-p"
                                        | "-c"
                                        | "-n"
                                        | "-s"
                                        | "-S"
                                        | "--warmup"
                                        | "--runs"
                                        | "--prepare"
                                        | "--cleanup"
                                        | "--export-json"
                                        | "--export-markdown"
                                        | "--shell"
                                ) {
                                    2
                                } else {
                                    1
                                };
                                if matches!(a, "-p" | "-c" | "--prepare" | "--cleanup") {
                                    self.shell_string(
                                        &rest,
                                        i - 1,
                                        &call,
                                        ctx,
                                        depth,
                                        ctx.origin.clone(),
                                    );
                                }
                            }
                            _ => {
                                self.shell_string(&rest, i, &call, ctx, depth, ctx.origin.clone());
                                i += 1;
                            }
                        }
                    }
                    self.push_plain(&call, ctx);
                    return;
                }
                "xargs" => {
                    let n = skip_options(&rest, XARGS_VALUE_OPTS);
                    call.names = self.xargs_names(&rest[..n], &call, ctx);
                    let replace = xargs_replace(&rest[..n]);
                    call.wrappers.push("xargs".into());
                    call.argv.drain(..=n.min(call.argv.len() - 1));
                    if call.argv.is_empty() {
                        call.argv.push(Word::lit("echo"));
                    }
                    // `-I{}`: each input line replaces the string inside the arguments — a
                    // file under a listed folder, a known word, or something unknown (and a
                    // shell script built from it is computed).
                    if let Some(r) = replace {
                        let with: Option<String> = match &call.names {
                            Names::Under {
                                root: Arg::Lit(root),
                                ..
                            } => Some(format!("{}/{{}}", root.trim_end_matches('/'))),
                            Names::Known(ws) if ws.len() == 1 => Some(ws[0].clone()),
                            _ => None,
                        };
                        for w in call.argv.iter_mut() {
                            if let Arg::Lit(s) = &w.arg
                                && s.contains(&r)
                            {
                                *w = match &with {
                                    Some(x) => Word::lit(s.replace(&r, x)),
                                    None => Word {
                                        arg: Arg::Dyn {
                                            raw: s.clone(),
                                            programs: vec!["xargs".into()],
                                        },
                                        pattern: None,
                                    },
                                };
                            }
                        }
                    }
                    continue;
                }
                "parallel" => {
                    self.parallel(&rest, &call, ctx, depth);
                    return;
                }
                "screen" => {
                    self.screen(&rest, &call, ctx, depth);
                    return;
                }
                "tmux" => {
                    self.tmux(&rest, &call, ctx, depth);
                    return;
                }
                "script" => {
                    if let Some(i) = lits.iter().position(|a| {
                        a.is_some_and(|a| {
                            a == "-c"
                                || a == "--command"
                                || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c'))
                        })
                    }) {
                        self.shell_string(&rest, i + 1, &call, ctx, depth, ctx.origin.clone());
                        return;
                    }
                    break;
                }
                "trap" => {
                    if let Some(w) = rest
                        .iter()
                        .find(|w| w.arg.lit().is_none_or(|s| !s.starts_with('-')))
                    {
                        let w = w.clone();
                        let mut sub = ctx.clone();
                        self.code_word(&w, &call, &mut sub, depth, ctx.origin.clone());
                    }
                    return;
                }
                "chroot" | "nsenter" => {
                    // What runs in another root cannot be placed.
                    self.push_computed(format!("{prog} …"), vec![], &call, ctx);
                    return;
                }
                "unshare" => Some(skip_options(
                    &rest,
                    &[
                        "-S",
                        "-G",
                        "-R",
                        "-w",
                        "--setuid",
                        "--setgid",
                        "--root",
                        "--wd",
                        "--map-user",
                        "--map-group",
                    ],
                )),
                _ => wrapper_options(&prog).map(|o| skip_options(&rest, o)),
            };
            match skip {
                Some(n) => {
                    call.wrappers.push(prog);
                    let n = (n + 1).min(call.argv.len());
                    call.argv.drain(..n);
                    if call.argv.is_empty() {
                        if call
                            .wrappers
                            .last()
                            .is_some_and(|w| w == "sudo" || w == "doas")
                        {
                            call.argv.push(Word::lit("sudo"));
                            call.wrappers.pop();
                            call.wrappers.push("sudo".into());
                            break;
                        }
                        return;
                    }
                }
                None => break,
            }
        }
        self.program(call, path, ctx, depth);
    }

    /// The program after wrappers: builtins that change the shell, programs that run code,
    /// and everything else recorded as it is.
    fn program(&mut self, mut call: Call, path: Option<String>, ctx: &mut Ctx, depth: usize) {
        let Some(first) = call.argv.first().cloned() else {
            return;
        };
        let name = match &first.arg {
            Arg::Lit(p) => base_name(p),
            Arg::Dyn { raw, programs } => {
                // `eval "$(ssh-agent -s)"` and the like are handled by `eval`; a computed
                // program is judged by the rules.
                self.push_computed(raw.clone(), programs.clone(), &call, ctx);
                return;
            }
        };
        call.argv[0] = Word::lit(name.clone());
        let rest: Vec<Word> = call.argv[1..].to_vec();
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        match name.as_str() {
            "cd" | "pushd" => {
                let target = rest
                    .iter()
                    .find(|a| a.arg.lit().is_none_or(|s| !s.starts_with('-') || s == "-"));
                let before = ctx.cwd.clone();
                self.push_invocation(&call, path, ctx);
                if name == "pushd" {
                    ctx.dirs.push(before.clone());
                }
                let cdpath = call.env.iter().any(|(n, _)| n == "CDPATH");
                ctx.cwd = if cdpath
                    && target
                        .is_some_and(|w| w.arg.lit().is_some_and(|s| !s.starts_with(['/', '.'])))
                {
                    Cwd::unknown()
                } else {
                    self.cd_target(target, ctx)
                };
                ctx.oldpwd = before;
                return;
            }
            "popd" => {
                self.push_invocation(&call, path, ctx);
                let before = ctx.cwd.clone();
                ctx.cwd = ctx.dirs.pop().unwrap_or_else(Cwd::unknown);
                ctx.oldpwd = before;
                return;
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let export = name == "export"
                    || lits
                        .iter()
                        .any(|a| a.is_some_and(|a| a.starts_with('-') && a.contains('x')));
                let mut printed =
                    lits.is_empty() || lits.iter().all(|a| a.is_some_and(|a| a.starts_with('-')));
                for w in &rest {
                    match &w.arg {
                        Arg::Lit(a) if a.starts_with('-') => {}
                        Arg::Lit(a) => {
                            let (n, v) = match a.split_once('=') {
                                Some((n, v)) => {
                                    (n.trim_end_matches('+'), Some(Val::Known(v.to_string())))
                                }
                                None => (a.as_str(), None),
                            };
                            if let Some(v) = v {
                                self.assigned_var(n, &v, ctx, depth);
                                ctx.set(n, v);
                            }
                            if export {
                                ctx.exported.insert(n.to_string());
                            }
                        }
                        Arg::Dyn { raw, .. } => {
                            let n = raw.split('=').next().unwrap_or("").to_string();
                            if !n.is_empty() && !n.contains('$') {
                                ctx.set(&n, Val::Unknown);
                                if export {
                                    ctx.exported.insert(n);
                                }
                            }
                            printed = false;
                        }
                    }
                }
                if printed {
                    // `export -p`, `declare -x`: the environment, printed.
                    self.push_invocation(&call, path, ctx);
                }
                return;
            }
            "unset" => {
                for a in lits.iter().flatten().filter(|a| !a.starts_with('-')) {
                    ctx.vars.insert(a.to_string(), Val::Known(String::new()));
                }
                return;
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                for a in lits.iter().flatten().filter(|a| !a.starts_with('-')) {
                    ctx.set(a, Val::Unknown);
                }
                self.push_invocation(&call, path, ctx);
                return;
            }
            "shopt" => {
                if lits.contains(&Some("-s")) && lits.contains(&Some("cdable_vars")) {
                    ctx.cdable_vars = true;
                }
                return;
            }
            "set" => {
                // `set -- a b`: new positional parameters.
                if let Some(i) = lits.iter().position(|a| *a == Some("--")) {
                    let mut p = vec![
                        ctx.positional
                            .as_ref()
                            .and_then(|p| p.first().cloned())
                            .unwrap_or_else(|| "bash".into()),
                    ];
                    p.extend(rest[i + 1..].iter().map(|w| w.arg.display().to_string()));
                    ctx.positional = Some(p);
                } else if lits.is_empty() {
                    self.push_invocation(&call, path, ctx);
                }
                return;
            }
            "alias" => {
                for a in lits.iter().flatten() {
                    if let Some((n, v)) = a.split_once('=') {
                        self.aliases.insert(n.to_string(), v.to_string());
                    }
                }
                if rest.iter().any(|w| w.arg.lit().is_none()) {
                    self.push_computed("alias …".into(), vec![], &call, ctx);
                }
                return;
            }
            "unalias" => {
                for a in lits.iter().flatten() {
                    self.aliases.remove(*a);
                }
                return;
            }
            "source" | "." => {
                if let Some(script) = rest.first() {
                    let script = script.clone();
                    self.push_invocation(&call, path, ctx);
                    // `source /dev/stdin <<< '…'`: the script is the input.
                    if script.arg.lit().is_some_and(|s| {
                        matches!(s, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0")
                    }) {
                        let c = Call {
                            argv: vec![],
                            wrappers: vec![],
                            env: vec![],
                            stdin: call.stdin.clone(),
                            upstream: call.upstream.clone(),
                            names: Names::None,
                        };
                        let saved = ctx.origin.clone();
                        self.shell_stdin_here(&c, ctx, depth);
                        ctx.origin = saved;
                    } else {
                        self.run_script(&script, &rest[1..], ctx, depth, true);
                    }
                }
                return;
            }
            "eval" => {
                self.eval(&rest, &call, ctx, depth);
                return;
            }
            "let" => return,
            "find" => {
                let idx = self.push_invocation(&call, path, ctx);
                self.find_exec(&rest, idx, &call, ctx, depth);
                return;
            }
            "git" => {
                let idx = self.push_invocation(&call, path, ctx);
                self.git(&rest, idx, &call, ctx, depth);
                return;
            }
            "patch" => {
                let idx = self.push_invocation(&call, path, ctx);
                let file = option_value_of(&rest, &["-i", "--input"]);
                let source = match (file, &call.stdin) {
                    (Some(f), _) => self.locate(&f, ctx).map(PatchSource::File),
                    (None, Stdin::File(w)) => w
                        .arg
                        .lit()
                        .and_then(|f| self.locate(f, ctx))
                        .map(PatchSource::File),
                    (None, Stdin::Text(Arg::Lit(t))) => Some(PatchSource::Text(t.clone())),
                    _ => Some(PatchSource::Unknown("the patch on standard input".into())),
                };
                if let Some(s) = source {
                    self.patch_writes(idx, s, ctx);
                }
                return;
            }
            "sed" | "gsed" => {
                let idx = self.push_invocation(&call, path, ctx);
                let inv = self.out.invocations[idx].clone();
                let mut scripts = super::sed_scripts(&inv);
                // `sed -f FILE`: the script is in a file, read like any code.
                let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
                for (k, a) in lits.iter().enumerate() {
                    let file = match a {
                        Some("-f" | "--file") => lits.get(k + 1).copied().flatten(),
                        Some(x) if x.starts_with("--file=") => Some(&x["--file=".len()..]),
                        _ => None,
                    };
                    if let Some(f) = file.and_then(|f| self.locate(f, ctx)) {
                        match self.file_content(&f) {
                            Content::Text(t) => scripts.push(t),
                            Content::Missing => {}
                            _ => self.out.opaque.push(Opaque {
                                what: format!("sed -f {}", f.display()),
                                why: "its script cannot be read".into(),
                                downloaded: false,
                                origin: ctx.origin.clone(),
                            }),
                        }
                    }
                }
                for script in scripts {
                    for cmd in super::sed_commands(&script) {
                        match cmd {
                            super::SedCmd::Exec(c) => {
                                let mut sub = ctx.child(ctx.origin.clone());
                                self.line(&c, &mut sub, depth + 1);
                            }
                            super::SedCmd::Write(f) => self.out.writes.push(super::Redirect {
                                target: Word::lit(f),
                                cwd: ctx.cwd.clone(),
                                by: Some(idx),
                                origin: ctx.origin.clone(),
                            }),
                            super::SedCmd::Read(f) => self.out.reads.push(super::Redirect {
                                target: Word::lit(f),
                                cwd: ctx.cwd.clone(),
                                by: Some(idx),
                                origin: ctx.origin.clone(),
                            }),
                            _ => {}
                        }
                    }
                }
                return;
            }
            "make" | "gmake" => {
                self.push_invocation(&call, path, ctx);
                // In each folder it may run in.
                let cwds: Vec<PathBuf> = ctx.cwd.paths().to_vec();
                if cwds.len() < 2 {
                    self.make(&rest, ctx, depth);
                }
                for c in cwds.iter().filter(|_| cwds.len() > 1) {
                    let mut one = ctx.clone();
                    one.cwd = Cwd::at(c);
                    self.make(&rest, &mut one, depth);
                }
                return;
            }
            "just" => {
                self.push_invocation(&call, path, ctx);
                self.just(&rest, ctx, depth);
                return;
            }
            "npm" | "yarn" | "pnpm" | "bun" => {
                self.push_invocation(&call, path, ctx);
                self.package_scripts(&name, &rest, ctx, depth);
                return;
            }
            "ssh" => {
                self.ssh(&rest, &call, path, ctx, depth);
                return;
            }
            "docker" | "podman" | "nerdctl" => {
                self.container(&rest, &call, path, ctx, depth);
                return;
            }
            "kubectl" | "oc" if lits.first() == Some(&Some("exec")) => {
                self.push_invocation(&call, path, ctx);
                if let Some(i) = lits.iter().position(|a| *a == Some("--")) {
                    let inner = rest[i + 1..].to_vec();
                    let mut remote = ctx.child(Origin::Remote("a pod".into()));
                    remote.cwd = Cwd::unknown();
                    self.invoke(self.call_with(inner, &call), &mut remote, depth + 1);
                }
                return;
            }
            "at" | "batch" => {
                self.push_invocation(&call, path, ctx);
                self.at(&rest, &call, ctx, depth);
                return;
            }
            "crontab" => {
                self.push_invocation(&call, path, ctx);
                self.crontab(&rest, &call, ctx, depth);
                return;
            }
            "vim" | "nvim" | "vi" | "ex" | "view" | "gvim" => {
                let idx = self.push_invocation(&call, path, ctx);
                self.option_code(&name, &rest, idx, ctx, depth);
                for (i, a) in lits.iter().enumerate() {
                    let cmd = match a {
                        Some("-c" | "--cmd") => lits.get(i + 1).copied().flatten(),
                        Some(x) if x.starts_with('+') => Some(&x[1..]),
                        _ => None,
                    };
                    if let Some(c) = cmd
                        && let Some(at) = c.find('!')
                    {
                        let text = c[at + 1..].to_string();
                        let mut sub = ctx.clone();
                        self.line(&text, &mut sub, depth + 1);
                    }
                }
                return;
            }
            n if SHELLS.contains(&n)
                || n == "busybox"
                    && lits
                        .first()
                        .is_some_and(|a| a.is_some_and(|a| SHELLS.contains(&a))) =>
            {
                if n == "busybox" {
                    call.wrappers.push("busybox".into());
                    call.argv.remove(0);
                    self.program(call, path, ctx, depth);
                    return;
                }
                self.shell(&rest, &call, path, ctx, depth);
                return;
            }
            "busybox" | "toybox" if rest.first().is_some() => {
                call.wrappers.push(name.clone());
                call.argv.remove(0);
                self.invoke(call, ctx, depth);
                return;
            }
            "python" | "python2" | "python3"
                if lits.first() == Some(&Some("-m")) && rest.len() > 1 =>
            {
                // `python -m twine upload`: the module is the program.
                call.wrappers.push(name.clone());
                call.argv.drain(..2);
                self.invoke(call, ctx, depth);
                return;
            }
            _ => {}
        }
        let idx = self.push_invocation(&call, path, ctx);
        self.note_downloads(&self.out.invocations[idx].clone());
        self.option_code(&name, &rest, idx, ctx, depth);
    }

    /// Commands handed over as option values (`tar --to-command`, `ssh -o ProxyCommand`).
    fn option_code(&mut self, name: &str, rest: &[Word], idx: usize, ctx: &mut Ctx, depth: usize) {
        for text in option_commands(name, rest) {
            let mut sub = ctx.child(ctx.origin.clone());
            match text {
                Some(t) => self.line(&t, &mut sub, depth + 1),
                None => self.out.opaque.push(Opaque {
                    what: crate::text::clip(&self.out.invocations[idx].display(), 120),
                    why: "it runs a command given in a form Forge cannot read".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                }),
            }
        }
    }

    /// Records the call as it is; returns its index.
    pub(super) fn push_invocation(
        &mut self,
        call: &Call,
        path: Option<String>,
        ctx: &Ctx,
    ) -> usize {
        let program = match &call.argv[0].arg {
            Arg::Lit(p) => Arg::Lit(base_name(p)),
            d => d.clone(),
        };
        self.push(Invocation {
            program,
            path,
            args: call.argv[1..].to_vec(),
            wrappers: call.wrappers.clone(),
            cwd: ctx.cwd.clone(),
            upstream: call.upstream.clone(),
            names: call.names.clone(),
            env: call.env.clone(),
            stdin: call.stdin.clone(),
            origin: ctx.origin.clone(),
        })
    }

    fn push_plain(&mut self, call: &Call, ctx: &Ctx) {
        self.push_invocation(call, None, ctx);
    }

    /// A command whose program is computed at run time (`bash -c "$X"`, a script read from a
    /// pipe, `chroot …`): the rules judge it as its most dangerous reading.
    pub(super) fn push_computed(
        &mut self,
        raw: String,
        programs: Vec<String>,
        call: &Call,
        ctx: &Ctx,
    ) {
        self.push(Invocation {
            program: Arg::Dyn { raw, programs },
            path: None,
            args: vec![],
            wrappers: call.wrappers.clone(),
            cwd: ctx.cwd.clone(),
            upstream: call.upstream.clone(),
            names: call.names.clone(),
            env: call.env.clone(),
            stdin: call.stdin.clone(),
            origin: ctx.origin.clone(),
        });
    }

    /// A new call with the same surroundings and another argument vector.
    fn call_with(&self, argv: Vec<Word>, like: &Call) -> Call {
        Call {
            argv,
            wrappers: like.wrappers.clone(),
            env: like.env.clone(),
            stdin: Stdin::None,
            upstream: vec![],
            names: Names::None,
        }
    }

    /// `/???/r?`, `r[m]`, `/bin/r*`: every program the pattern reaches, on disk or among the
    /// names rules care about.
    fn program_glob(&mut self, pattern: &str, call: &Call, ctx: &mut Ctx, depth: usize) {
        let cwd = ctx
            .cwd
            .paths()
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut names: Vec<String> = super::shell_glob_matches(pattern, &cwd)
            .into_iter()
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        let base = pattern.rsplit('/').next().unwrap_or(pattern);
        for k in KNOWN_PROGRAMS {
            if super::expand::component_could_match(base, k)
                && !names.iter().any(|n| base_name(n) == k)
            {
                names.push(k.to_string());
            }
        }
        if names.is_empty() {
            self.push_computed(pattern.to_string(), vec![], call, ctx);
            return;
        }
        for n in names.into_iter().take(16) {
            let mut argv = call.argv.clone();
            argv[0] = Word::lit(n);
            let c = Call {
                argv,
                wrappers: call.wrappers.clone(),
                env: call.env.clone(),
                stdin: call.stdin.clone(),
                upstream: call.upstream.clone(),
                names: call.names.clone(),
            };
            let mut sub = ctx.clone();
            self.invoke(c, &mut sub, depth + 1);
        }
    }

    /// A program run by path (`./deploy.sh`, `scripts/x`, `/usr/bin/rm`). A script in the
    /// project or the temp folder is read and walked; one elsewhere is unknowable; binaries
    /// and system programs go on by name. Returns whether the call was handled.
    fn program_path(&mut self, raw: &str, call: &Call, ctx: &mut Ctx, depth: usize) -> bool {
        let Some(p) = self.locate(raw, ctx) else {
            return false;
        };
        let system = [
            "/usr/", "/bin/", "/sbin/", "/opt/", "/nix/", "/snap/", "/lib/",
        ]
        .iter()
        .any(|d| p.starts_with(d));
        if system {
            return false;
        }
        match self.file_content(&p) {
            Content::Missing => false,
            Content::Text(t) if t.starts_with("\u{7f}ELF") || t.contains('\0') => false,
            Content::Text(t) => {
                let interp = shebang(&t);
                match interp.as_deref() {
                    None => {}
                    Some(s) if SHELLS.contains(&s) => {}
                    Some(other) => {
                        // A script in another language: recorded as that interpreter running
                        // the file, which the rules judge by where the file lives.
                        let mut argv =
                            vec![Word::lit(other.to_string()), Word::lit(raw.to_string())];
                        argv.extend(call.argv[1..].iter().cloned());
                        let c = Call {
                            argv,
                            wrappers: call.wrappers.clone(),
                            env: call.env.clone(),
                            stdin: call.stdin.clone(),
                            upstream: call.upstream.clone(),
                            names: call.names.clone(),
                        };
                        self.push_invocation(&c, Some(raw.to_string()), ctx);
                        return true;
                    }
                }
                self.push_invocation(call, Some(raw.to_string()), ctx);
                let script = Word::lit(raw.to_string());
                let args = call.argv[1..].to_vec();
                self.run_script(&script, &args, ctx, depth, false);
                true
            }
            Content::RepoDiff => {
                self.push_invocation(call, Some(raw.to_string()), ctx);
                self.out.opaque.push(Opaque {
                    what: raw.to_string(),
                    why: "it is the output of `git diff`, written earlier on this line".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                true
            }
            Content::Downloaded => {
                self.out.opaque.push(Opaque {
                    what: raw.to_string(),
                    why: "it was downloaded earlier on this line".into(),
                    downloaded: true,
                    origin: ctx.origin.clone(),
                });
                true
            }
            Content::Unknown(why) => {
                self.push_invocation(call, Some(raw.to_string()), ctx);
                self.out.opaque.push(Opaque {
                    what: raw.to_string(),
                    why,
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
                true
            }
        }
    }

    /// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [cmd]`. Returns whether a
    /// command follows (the call now starts with it).
    fn env_wrapper(&mut self, call: &mut Call, ctx: &mut Ctx, depth: usize) -> bool {
        let mut i = 1;
        let mut chdir: Option<Option<String>> = None;
        while i < call.argv.len() {
            let w = call.argv[i].clone();
            let Some(a) = w.arg.lit().map(str::to_string) else {
                break;
            };
            // `-S STRING`, `-SSTRING`, `--split-string=STRING`: the string is split into
            // words that replace it, then parsing goes on.
            let split = if a == "-S" || a == "--split-string" {
                let v = call
                    .argv
                    .get(i + 1)
                    .and_then(|w| w.arg.lit())
                    .map(str::to_string);
                call.argv.drain(i..(i + 2).min(call.argv.len()));
                Some(v)
            } else if let Some(v) = a.strip_prefix("--split-string=") {
                call.argv.remove(i);
                Some(Some(v.to_string()))
            } else if a.starts_with("-S") && !a.starts_with("--") {
                call.argv.remove(i);
                Some(Some(a[2..].to_string()))
            } else {
                None
            };
            if let Some(v) = split {
                match v {
                    Some(s) => {
                        let s = env_s_vars(&s, |n| self.var(n, ctx));
                        let words: Vec<Word> =
                            split_string(&s).into_iter().map(Word::lit).collect();
                        for (k, w) in words.into_iter().enumerate() {
                            call.argv.insert(i + k, w);
                        }
                    }
                    None => {
                        call.argv.insert(
                            i,
                            Word {
                                arg: dyn_arg("ENV_S"),
                                pattern: None,
                            },
                        );
                    }
                }
                continue;
            }
            if a == "-C" || a == "--chdir" {
                chdir = Some(
                    call.argv
                        .get(i + 1)
                        .and_then(|w| w.arg.lit())
                        .map(str::to_string),
                );
                i += 2;
                continue;
            }
            if let Some(d) = a.strip_prefix("--chdir=") {
                chdir = Some(Some(d.to_string()));
                i += 1;
                continue;
            }
            if a.starts_with("-C") && a.len() > 2 && !a.starts_with("--") {
                chdir = Some(Some(a[2..].to_string()));
                i += 1;
                continue;
            }
            if a == "-u" || a == "--unset" {
                i += 2;
                continue;
            }
            if a == "--" {
                i += 1;
                break;
            }
            if a.starts_with('-') {
                i += 1;
                continue;
            }
            if let Some((n, v)) = a.split_once('=')
                && !n.is_empty()
            {
                let val = Val::Known(v.to_string());
                self.assigned_var(n, &val, ctx, depth);
                call.env.push((n.to_string(), Arg::Lit(v.to_string())));
                i += 1;
                continue;
            }
            break;
        }
        if let Some(d) = chdir {
            ctx.cwd = match (d, ctx.cwd.paths().first()) {
                (Some(d), Some(c)) => Cwd::at(crate::guard::paths::normalize(&c.join(d))),
                _ => Cwd::unknown(),
            };
        }
        if i >= call.argv.len() {
            // `env` alone prints the environment.
            call.argv.truncate(1);
            return false;
        }
        call.wrappers.push("env".into());
        call.argv.drain(..i);
        true
    }

    /// A variable set by `env NAME=…` or `export NAME=…`: the walker's own check for values
    /// that git or bash run as commands.
    fn assigned_var(&mut self, name: &str, v: &Val, ctx: &mut Ctx, depth: usize) {
        self.assigned(name, v, ctx, depth);
    }

    fn cd_target(&self, target: Option<&Word>, ctx: &Ctx) -> Cwd {
        let Some(w) = target else {
            return Cwd::at(
                self.var("HOME", ctx)
                    .map(PathBuf::from)
                    .unwrap_or_else(|| self.env.home.clone()),
            );
        };
        match &w.arg {
            Arg::Lit(s) if s == "-" => ctx.oldpwd.clone(),
            Arg::Lit(s) => {
                let s = s.as_str();
                let cdpath = ctx
                    .vars
                    .get("CDPATH")
                    .is_some_and(|v| v != &Val::Known(String::new()));
                let plain = !s.starts_with('/')
                    && !s.starts_with("./")
                    && !s.starts_with("../")
                    && s != "."
                    && s != "..";
                if cdpath && plain {
                    return Cwd::unknown();
                }
                let mut out = Cwd::unknown();
                let mut first = true;
                for c in ctx.cwd.paths() {
                    let p = crate::guard::paths::normalize(&c.join(s));
                    let next = Cwd::at(p.clone());
                    out = if first { next } else { out.either(&next) };
                    first = false;
                    // `shopt -s cdable_vars`: a folder that does not exist may name a variable.
                    if ctx.cdable_vars && plain && !p.is_dir() {
                        out = match self.var(s, ctx) {
                            Some(v) => {
                                out.either(&Cwd::at(crate::guard::paths::normalize(&c.join(v))))
                            }
                            None => Cwd::unknown(),
                        };
                    }
                }
                out
            }
            Arg::Dyn { .. } => Cwd::unknown(),
        }
    }

    /// `eval ARGS`: the joined arguments run as a line. `eval "$(ssh-agent -s)"` and other
    /// programs that print environment settings are trusted to do only that.
    fn eval(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        if rest.iter().all(|a| a.arg.lit().is_some()) {
            let s: Vec<&str> = rest.iter().filter_map(|a| a.arg.lit()).collect();
            let text = s.join(" ");
            self.line(&text, ctx, depth + 1);
            return;
        }
        let programs: Vec<String> = rest
            .iter()
            .flat_map(|a| match &a.arg {
                Arg::Dyn { programs, .. } => programs.clone(),
                Arg::Lit(_) => vec![],
            })
            .collect();
        let env_printer = !programs.is_empty()
            && rest.iter().all(|a| match &a.arg {
                Arg::Dyn { raw, programs } => {
                    !programs.is_empty()
                        && programs.iter().all(|p| ENV_PRINTERS.contains(&p.as_str()))
                        && raw.trim_matches('"').starts_with("$(")
                }
                Arg::Lit(_) => true,
            });
        if env_printer {
            return;
        }
        self.push_computed("eval …".into(), programs, call, ctx);
    }

    /// Code given as a word (`trap 'cmd' EXIT`, `bash -c 'cmd'`): known text is walked,
    /// computed text is a computed program.
    fn code_word(&mut self, w: &Word, call: &Call, ctx: &mut Ctx, depth: usize, origin: Origin) {
        match &w.arg {
            Arg::Lit(code) => {
                let code = code.clone();
                let saved = std::mem::replace(&mut ctx.origin, origin);
                self.line(&code, ctx, depth + 1);
                ctx.origin = saved;
            }
            Arg::Dyn { raw, programs } => {
                self.push_computed(raw.clone(), programs.clone(), call, ctx);
            }
        }
    }

    /// `rest[i]` is a shell command string run in a new shell.
    fn shell_string(
        &mut self,
        rest: &[Word],
        i: usize,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
        origin: Origin,
    ) {
        self.push_plain(call, ctx);
        if let Some(w) = rest.get(i) {
            let w = w.clone();
            let mut sub = ctx.child(origin.clone());
            sub.origin = origin.clone();
            self.code_word(&w, call, &mut sub, depth, origin);
        }
    }

    /// Shell text (already joined), run in a new shell.
    fn run_text(
        &mut self,
        text: Option<String>,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
        origin: Origin,
    ) {
        self.push_plain(call, ctx);
        match text {
            Some(t) => {
                let mut sub = ctx.child(origin);
                self.line(&t, &mut sub, depth + 1);
            }
            None => self.push_computed("(computed command)".into(), vec![], call, ctx),
        }
    }

    /// `bash [options] [-c STRING | SCRIPT | < stdin]`.
    fn shell(
        &mut self,
        rest: &[Word],
        call: &Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        // `bash $OPTS "…"`: options computed at run time may include `-c` (a computed word
        // with more after it; a last one is the script, `bash <(…)`).
        let n = rest.len();
        if let Some(d) = rest
            .iter()
            .enumerate()
            .take_while(|(_, a)| {
                a.arg
                    .lit()
                    .is_none_or(|s| s.starts_with('-') || s.starts_with('+'))
            })
            .find(|(i, a)| a.arg.lit().is_none() && i + 1 < n)
            .map(|(_, a)| a)
        {
            let programs = match &d.arg {
                Arg::Dyn { programs, .. } => programs.clone(),
                Arg::Lit(_) => vec![],
            };
            self.push_computed(d.arg.display().to_string(), programs, call, ctx);
            return;
        }
        self.push_invocation(call, path, ctx);
        let mut i = 0;
        let mut reads_stdin = false;
        while i < rest.len() {
            let Some(a) = rest[i].arg.lit() else { break };
            if a == "--" {
                i += 1;
                break;
            }
            if !(a.starts_with('-') || a.starts_with('+')) || a == "-" {
                break;
            }
            if a.starts_with("--") {
                i += if matches!(a, "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if a[1..].contains('c') && a.starts_with('-') {
                // `bash -c -- 'script'`: `--` ends the options, the script follows.
                let mut j = i + 1;
                if rest.get(j).and_then(|w| w.arg.lit()) == Some("--") {
                    j += 1;
                }
                if let Some(w) = rest.get(j) {
                    let w = w.clone();
                    let mut sub = ctx.child(ctx.origin.clone());
                    let mut positional: Vec<String> = rest[j + 1..]
                        .iter()
                        .map(|w| w.arg.display().to_string())
                        .collect();
                    if positional.is_empty() {
                        positional.push("bash".into());
                    }
                    sub.positional = Some(positional);
                    self.code_word(&w, call, &mut sub, depth, ctx.origin.clone());
                }
                return;
            }
            if a[1..].contains('s') {
                reads_stdin = true;
            }
            i += if a == "-o" || a == "-O" || a == "+o" || a == "+O" {
                2
            } else {
                1
            };
        }
        let script = if reads_stdin { None } else { rest.get(i) };
        let stdin_path = |w: &Word| {
            w.arg
                .lit()
                .is_some_and(|s| matches!(s, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-"))
        };
        match script {
            None => self.shell_stdin(call, ctx, depth),
            Some(w) if stdin_path(w) => self.shell_stdin(call, ctx, depth),
            Some(w) => {
                let w = w.clone();
                let args = rest[i + 1..].to_vec();
                self.run_script(&w, &args, ctx, depth, false);
            }
        }
    }

    /// `source` of standard input: the text runs in this shell.
    fn shell_stdin_here(&mut self, call: &Call, ctx: &mut Ctx, depth: usize) {
        match &call.stdin {
            Stdin::Text(Arg::Lit(text)) => {
                let text = text.clone();
                self.line(&text, ctx, depth + 1);
            }
            _ => self.shell_stdin(call, ctx, depth),
        }
    }

    /// A shell reading its script from standard input.
    fn shell_stdin(&mut self, call: &Call, ctx: &mut Ctx, depth: usize) {
        match &call.stdin {
            Stdin::Text(Arg::Lit(text)) => {
                let text = text.clone();
                let mut sub = ctx.child(ctx.origin.clone());
                self.line(&text, &mut sub, depth + 1);
            }
            Stdin::Text(Arg::Dyn { raw, programs }) => {
                self.push_computed(raw.clone(), programs.clone(), call, ctx);
            }
            Stdin::Pipe => {
                let programs: Vec<String> = call
                    .upstream
                    .iter()
                    .map(|&i| self.out.invocations[i].program.display().to_string())
                    .collect();
                let raw = format!("{} | sh", programs.join(" | "));
                self.push_computed(raw, programs, call, ctx);
            }
            Stdin::File(w) => {
                let w = w.clone();
                self.run_script(&w, &[], ctx, depth, false);
            }
            Stdin::None => {}
        }
    }

    /// `find ROOT … -exec cmd {} ;`: the nested command, with `{}` standing for files under
    /// ROOT; `-execdir` runs it in each file's folder.
    fn find_exec(&mut self, args: &[Word], _idx: usize, call: &Call, ctx: &mut Ctx, depth: usize) {
        let roots: Vec<Arg> = args
            .iter()
            .take_while(|a| {
                a.arg
                    .lit()
                    .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
            })
            .map(|a| a.arg.clone())
            .collect();
        let root = roots.first().cloned().unwrap_or(Arg::Lit(".".into()));
        let filtered = find_filtered(args);
        let mut i = 0;
        while i < args.len() {
            let is_exec = args[i]
                .arg
                .lit()
                .is_some_and(|s| matches!(s, "-exec" | "-execdir" | "-ok" | "-okdir"));
            if !is_exec {
                i += 1;
                continue;
            }
            let mut nested = Vec::new();
            i += 1;
            while i < args.len() {
                let a = &args[i];
                if a.arg.lit().is_some_and(|s| s == ";" || s == "+") {
                    break;
                }
                let replaced = match (&a.arg, &root) {
                    (Arg::Lit(s), Arg::Lit(r)) if s.contains("{}") => {
                        Word::lit(s.replace("{}", &format!("{}/{{}}", r.trim_end_matches('/'))))
                    }
                    (Arg::Lit(s), Arg::Dyn { .. }) if s.contains("{}") => Word {
                        arg: Arg::Dyn {
                            raw: s.clone(),
                            programs: vec![],
                        },
                        pattern: None,
                    },
                    _ => a.clone(),
                };
                nested.push(replaced);
                i += 1;
            }
            if !nested.is_empty() {
                let mut w = call.wrappers.clone();
                w.push("find".into());
                let c = Call {
                    argv: nested,
                    wrappers: w,
                    env: call.env.clone(),
                    stdin: Stdin::None,
                    upstream: vec![],
                    names: Names::Under {
                        root: root.clone(),
                        cwd: ctx.cwd.clone(),
                        filtered,
                    },
                };
                let mut sub = ctx.clone();
                self.invoke(c, &mut sub, depth + 1);
            }
            i += 1;
        }
    }

    /// Names `xargs` appends, from its input: known words, files under a folder a listing
    /// stage names, or unknown.
    fn xargs_names(&self, opts: &[Word], call: &Call, ctx: &Ctx) -> Names {
        let lits: Vec<Option<&str>> = opts.iter().map(|w| w.arg.lit()).collect();
        if lits
            .iter()
            .any(|a| a.is_some_and(|a| a == "-a" || a.starts_with("--arg-file")))
        {
            return Names::Unknown;
        }
        if let Stdin::Text(Arg::Lit(t)) = &call.stdin {
            return Names::Known(t.split_whitespace().map(str::to_string).collect());
        }
        let Some(&last) = call.upstream.last() else {
            return Names::Unknown;
        };
        let up = &self.out.invocations[last];
        listing(up).unwrap_or_else(|| {
            let _ = ctx;
            Names::Unknown
        })
    }

    /// `parallel CMD ::: ARGS` (a template, like xargs) or `parallel ::: CMD…` (commands).
    fn parallel(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let sep = rest
            .iter()
            .position(|w| w.arg.lit().is_some_and(|s| s.starts_with(":::")));
        let start = rest
            .iter()
            .take_while(|w| w.arg.lit().is_some_and(|s| s.starts_with('-')))
            .count();
        let (cmd, inputs) = match sep {
            Some(s) => (&rest[start.min(s)..s], &rest[s + 1..]),
            None => (&rest[start..], &rest[rest.len()..]),
        };
        if cmd.is_empty() {
            for w in inputs {
                let w = w.clone();
                let mut sub = ctx.child(ctx.origin.clone());
                self.code_word(&w, call, &mut sub, depth, ctx.origin.clone());
            }
            if sep.is_none() {
                self.push_computed("parallel (commands from input)".into(), vec![], call, ctx);
            }
            return;
        }
        let names = if sep.is_some() && inputs.iter().all(|w| w.arg.lit().is_some()) {
            Names::Known(
                inputs
                    .iter()
                    .filter_map(|w| w.arg.lit().map(str::to_string))
                    .collect(),
            )
        } else {
            Names::Unknown
        };
        let text = join_lits(cmd);
        let mut c = self.call_with(vec![], call);
        c.names = names;
        c.wrappers.push("parallel".into());
        match text {
            Some(t) => {
                let t = t.replace("{}", "{}");
                let mut sub = ctx.child(ctx.origin.clone());
                // The template is a command line; `{}` stands for each input.
                self.line(&t, &mut sub, depth + 1);
            }
            None => self.push_computed("parallel …".into(), vec![], call, ctx),
        }
    }

    /// `screen -dm CMD…`, `screen -X stuff 'keys'`.
    fn screen(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if let Some(i) = lits.iter().position(|a| *a == Some("-X")) {
            if lits.get(i + 1) == Some(&Some("stuff"))
                && let Some(Some(keys)) = lits.get(i + 2)
            {
                let text = keys
                    .replace("^M", "\n")
                    .replace("\\n", "\n")
                    .replace("\\r", "\n");
                let mut later = ctx.child(Origin::Later("screen"));
                self.line(&text, &mut later, depth + 1);
            }
            return;
        }
        let mut i = 0;
        while i < rest.len() {
            match lits[i] {
                Some("-Logfile") => i += 2,
                // A cluster whose last letter takes a value: `-dmS name`.
                Some(a)
                    if a.starts_with('-')
                        && a.len() > 1
                        && "SctTehps".contains(a.chars().last().unwrap_or(' ')) =>
                {
                    i += 2
                }
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        if i < rest.len() {
            let inner = rest[i..].to_vec();
            let mut later = ctx.child(Origin::Later("screen"));
            self.invoke(self.call_with(inner, call), &mut later, depth + 1);
        }
    }

    /// `tmux new -d 'cmd'`, `tmux split-window 'cmd'`, `tmux send-keys 'cmd' Enter`,
    /// `tmux run-shell 'cmd'`: commands a tmux server (maybe started outside this session)
    /// runs.
    fn tmux(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        let Some(sub) = lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')))
        else {
            return;
        };
        let verb = lits[sub].unwrap_or("");
        let args = &rest[sub + 1..];
        let alits = &lits[sub + 1..];
        let mut i = 0;
        while i < args.len() {
            match alits[i] {
                Some(a) if a.starts_with('-') && a.len() == 2 && "tscnFeEw".contains(&a[1..]) => {
                    i += 2
                }
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        let operands = &args[i..];
        let text = match verb {
            "send-keys" | "send" => {
                let keys: Option<Vec<String>> = operands
                    .iter()
                    .map(|w| match w.arg.lit() {
                        Some("Enter" | "C-m" | "KPEnter") => Some("\n".to_string()),
                        Some(k) => Some(k.to_string()),
                        None => None,
                    })
                    .collect();
                keys.map(|v| v.join(" "))
            }
            "new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw"
            | "run-shell" | "run" | "respawn-pane" | "respawn-window" => {
                if operands.is_empty() {
                    return;
                }
                join_lits(operands)
            }
            _ => return,
        };
        let mut later = ctx.child(Origin::Later("tmux"));
        match text {
            Some(t) => self.line(&t, &mut later, depth + 1),
            None => self.push_computed("tmux (computed keys)".into(), vec![], call, &later),
        }
    }

    /// `at TIME` / `batch`: the job from stdin or `-f FILE`, run later.
    fn at(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if lits
            .iter()
            .any(|a| matches!(a, Some("-l" | "-r" | "-d" | "-c")))
        {
            return;
        }
        let mut later = ctx.child(Origin::Later("at"));
        if let Some(i) = lits.iter().position(|a| *a == Some("-f")) {
            if let Some(w) = rest.get(i + 1) {
                let w = w.clone();
                self.run_script(&w, &[], &mut later, depth, false);
            }
            return;
        }
        let c = Call {
            argv: vec![],
            wrappers: call.wrappers.clone(),
            env: call.env.clone(),
            stdin: call.stdin.clone(),
            upstream: call.upstream.clone(),
            names: Names::None,
        };
        self.shell_stdin(&c, &mut later, depth);
    }

    /// `crontab FILE` / `crontab -`: each job's command, run later.
    fn crontab(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if lits
            .iter()
            .any(|a| matches!(a, Some("-l" | "-e" | "-r" | "-i")))
            && !lits.contains(&Some("-"))
        {
            return;
        }
        let file = lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')));
        let text = match file {
            Some(i) => {
                let Some(p) = rest[i].arg.lit().and_then(|f| self.locate(f, ctx)) else {
                    return;
                };
                match self.file_content(&p) {
                    Content::Text(t) => Some(t),
                    Content::Missing => return,
                    _ => None,
                }
            }
            None => match &call.stdin {
                Stdin::Text(Arg::Lit(t)) => Some(t.clone()),
                _ => None,
            },
        };
        let mut later = ctx.child(Origin::Later("cron"));
        later.cwd = Cwd::at(self.env.home.clone());
        match text {
            Some(t) => {
                for line in t.lines() {
                    let l = line.trim();
                    if l.is_empty() || l.starts_with('#') {
                        continue;
                    }
                    let fields: Vec<&str> = l.split_whitespace().collect();
                    let cmd_at = if l.starts_with('@') { 1 } else { 5 };
                    if fields.len() <= cmd_at || (cmd_at == 5 && fields[0].contains('=')) {
                        continue;
                    }
                    let cmd = fields[cmd_at..].join(" ");
                    self.line(&cmd, &mut later, depth + 1);
                }
            }
            None => self.push_computed(
                "crontab (jobs Forge cannot read)".into(),
                vec![],
                call,
                &later,
            ),
        }
    }

    /// `ssh [options] HOST [COMMAND…]`: the command runs on another machine — judged as if it
    /// ran here (the host may be this one).
    fn ssh(
        &mut self,
        rest: &[Word],
        call: &Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        let idx = self.push_invocation(call, path, ctx);
        self.option_code("ssh", rest, idx, ctx, depth);
        const VALUE: &str = "bcDEeFIiJLlmOopQRSWw";
        let mut i = 0;
        while i < rest.len() {
            match rest[i].arg.lit() {
                Some(a) if a.starts_with('-') && a.len() >= 2 => {
                    let last = a.chars().last().unwrap_or(' ');
                    i += if a.len() == 2 && VALUE.contains(last) {
                        2
                    } else {
                        1
                    };
                }
                _ => break,
            }
        }
        let Some(host) = rest.get(i) else { return };
        let host = host.arg.display().to_string();
        let cmd = &rest[i + 1..];
        let mut remote = ctx.child(Origin::Remote(host));
        remote.cwd = Cwd::at(self.env.home.clone());
        if cmd.is_empty() {
            // A script on stdin (`ssh host < x.sh`, `ssh host bash -s <<EOF`).
            if !matches!(call.stdin, Stdin::None | Stdin::Pipe) {
                let c = Call {
                    argv: vec![],
                    wrappers: vec![],
                    env: vec![],
                    stdin: call.stdin.clone(),
                    upstream: vec![],
                    names: Names::None,
                };
                self.shell_stdin(&c, &mut remote, depth);
            }
            return;
        }
        match join_lits(cmd) {
            Some(t) => self.line(&t, &mut remote, depth + 1),
            None => self.push_computed("ssh … (computed command)".into(), vec![], call, &remote),
        }
    }

    /// `docker run [options] IMAGE [CMD…]`, `docker exec CONTAINER CMD…`, `docker compose run
    /// SERVICE CMD…`: the container's command, with paths under bind mounts mapped to the host
    /// (the rules judge the mounts themselves); paths elsewhere are the container's own.
    fn container(
        &mut self,
        rest: &[Word],
        call: &Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        self.push_invocation(call, path, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        let (verb_at, verb) = match lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')))
        {
            Some(i) => (i, lits[i].unwrap_or("")),
            None => return,
        };
        let mut at = verb_at + 1;
        let (run, exec) = match verb {
            "run" | "create" => (true, false),
            "exec" => (false, true),
            "container" if matches!(lits.get(at), Some(Some("run" | "exec"))) => {
                at += 1;
                (lits[at - 1] == Some("run"), lits[at - 1] == Some("exec"))
            }
            "compose" | "compose-v2" => {
                match lits[at..]
                    .iter()
                    .position(|a| matches!(a, Some("run" | "exec")))
                {
                    Some(p) => {
                        at += p + 1;
                        (false, true)
                    }
                    None => return,
                }
            }
            _ => return,
        };
        // Options, then the image (or container, or service), then the command.
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        let mut workdir: Option<String> = None;
        let base = ctx.cwd.one().map(Path::to_path_buf);
        while at < rest.len() {
            let Some(a) = lits[at] else { break };
            if !a.starts_with('-') {
                break;
            }
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (a, None),
            };
            let takes = CONTAINER_VALUE_OPTS.contains(&flag);
            let value = match (&inline, takes) {
                (Some(v), _) => Some(v.clone()),
                (None, true) => lits.get(at + 1).copied().flatten().map(str::to_string),
                _ => None,
            };
            match flag {
                "-v" | "--volume" => {
                    if let Some(v) = &value
                        && let Some((src, dst)) = bind(v, "")
                        && let Some(host) = host_path(&src, &base, &self.env.home)
                    {
                        mounts.push((dst, host));
                    }
                }
                "--mount" => {
                    if let Some(v) = &value {
                        let mut src = None;
                        let mut dst = None;
                        for kv in v.split(',') {
                            match kv.split_once('=') {
                                Some(("source" | "src", s)) => src = Some(s.to_string()),
                                Some(("target" | "dst" | "destination", d)) => {
                                    dst = Some(d.to_string())
                                }
                                _ => {}
                            }
                        }
                        if let (Some(s), Some(d)) = (src, dst)
                            && let Some(host) = host_path(&s, &base, &self.env.home)
                        {
                            mounts.push((d, host));
                        }
                    }
                }
                "-w" | "--workdir" => workdir = value.clone(),
                _ => {}
            }
            at += if takes && inline.is_none() { 2 } else { 1 };
        }
        let _ = run;
        let _ = exec;
        // The image / container / service.
        at += 1;
        if at >= rest.len() {
            return;
        }
        let inner: Vec<Word> = rest[at..].to_vec();
        let origin = Origin::Container(mounts);
        let scratch = self.env.temp.join(".forge-container");
        let mut inside = ctx.child(origin.clone());
        inside.cwd = Cwd::at(PathBuf::from(
            origin.host_path(workdir.as_deref().unwrap_or("/"), &scratch),
        ));
        inside
            .vars
            .insert("HOME".into(), Val::Known("/root".into()));
        let c = Call {
            argv: inner,
            wrappers: vec![],
            env: vec![],
            stdin: call.stdin.clone(),
            upstream: vec![],
            names: Names::None,
        };
        self.invoke(c, &mut inside, depth + 1);
    }

    /// git runs code too: `git -c alias.x='!cmd' x`, `git config alias.x '!cmd'`, `git
    /// submodule foreach CMD`, `git bisect run CMD…`, `git rebase --exec CMD`, `git
    /// filter-branch --*-filter CMD`; and `git apply`/`git am` change the files of a patch.
    fn git(&mut self, rest: &[Word], idx: usize, call: &Call, ctx: &mut Ctx, depth: usize) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        // Global options, and the folder `-C` moves to.
        let mut i = 0;
        let mut cwd = ctx.cwd.clone();
        while i < lits.len() {
            match lits[i] {
                Some("-C") => {
                    cwd = match (lits.get(i + 1).copied().flatten(), cwd.one()) {
                        (Some(d), Some(c)) => Cwd::at(crate::guard::paths::normalize(&c.join(d))),
                        _ => Cwd::unknown(),
                    };
                    i += 2;
                }
                Some(
                    "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
                    | "--exec-path",
                ) => i += 2,
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        // Aliases given on the spot: `!cmd` aliases run a shell command.
        for (k, a) in lits.iter().enumerate() {
            if *a == Some("-c")
                && let Some(Some(kv)) = lits.get(k + 1)
                && let Some((key, value)) = kv.split_once('=')
                && key.to_ascii_lowercase().starts_with("alias.")
                && let Some(cmd) = value.strip_prefix('!')
            {
                let mut sub = ctx.child(ctx.origin.clone());
                self.line(cmd, &mut sub, depth + 1);
            }
        }
        let Some(Some(sub)) = lits.get(i).copied() else {
            return;
        };
        let sub_rest = &rest[i + 1..];
        let sl: Vec<Option<&str>> = sub_rest.iter().map(|w| w.arg.lit()).collect();
        let mut sub_ctx = ctx.child(ctx.origin.clone());
        sub_ctx.cwd = cwd.clone();
        match sub {
            "config" => {
                // `git config alias.x '!cmd'`, `git config core.sshCommand 'cmd'`: planted
                // commands, judged now as what they run.
                let ops: Vec<&str> = sl
                    .iter()
                    .flatten()
                    .filter(|a| !a.starts_with('-'))
                    .copied()
                    .collect();
                if let [key, value, ..] = ops.as_slice() {
                    let k = key.to_ascii_lowercase();
                    let cmd = if k.starts_with("alias.") {
                        value.strip_prefix('!')
                    } else if k == "core.sshcommand"
                        || k == "core.pager"
                        || k == "core.editor"
                        || k == "core.fsmonitor"
                        || k == "sequence.editor"
                        || k == "diff.external"
                        || k == "core.askpass"
                        || k == "gpg.program"
                        || (k.starts_with("filter.")
                            && (k.ends_with(".clean")
                                || k.ends_with(".smudge")
                                || k.ends_with(".process")))
                        || (k.starts_with("merge.") && k.ends_with(".driver"))
                        || (k.starts_with("diff.")
                            && (k.ends_with(".textconv") || k.ends_with(".command")))
                        || k.starts_with("credential.") && k.ends_with("helper")
                    {
                        Some(value.trim_start_matches('!'))
                    } else {
                        None
                    };
                    if let Some(c) = cmd {
                        self.line(c, &mut sub_ctx, depth + 1);
                    }
                }
            }
            "submodule" if sl.first() == Some(&Some("foreach")) => {
                let ops: Vec<&Word> = sub_rest[1..]
                    .iter()
                    .filter(|w| w.arg.lit().is_none_or(|s| !s.starts_with("--")))
                    .collect();
                if let Some(w) = ops.first() {
                    let w = (*w).clone();
                    self.code_word(&w, call, &mut sub_ctx, depth, ctx.origin.clone());
                }
            }
            "bisect" if sl.first() == Some(&Some("run")) => {
                let inner = sub_rest[1..].to_vec();
                self.invoke(self.call_with(inner, call), &mut sub_ctx, depth + 1);
            }
            "rebase" => {
                for (k, a) in sl.iter().enumerate() {
                    let cmd = match a {
                        Some("-x" | "--exec") => sub_rest.get(k + 1).cloned(),
                        Some(x) if x.starts_with("--exec=") => {
                            Some(Word::lit(&x["--exec=".len()..]))
                        }
                        _ => None,
                    };
                    if let Some(w) = cmd {
                        let mut c2 = sub_ctx.clone();
                        self.code_word(&w, call, &mut c2, depth, ctx.origin.clone());
                    }
                }
            }
            "filter-branch" => {
                for (k, a) in sl.iter().enumerate() {
                    if a.is_some_and(|a| a.ends_with("-filter"))
                        && let Some(w) = sub_rest.get(k + 1)
                    {
                        let w = w.clone();
                        let mut c2 = sub_ctx.clone();
                        self.code_word(&w, call, &mut c2, depth, ctx.origin.clone());
                    }
                }
            }
            "apply" | "am" => {
                if sl.iter().any(|a| {
                    matches!(
                        a,
                        Some(
                            "--check"
                                | "--stat"
                                | "--numstat"
                                | "--summary"
                                | "--abort"
                                | "--skip"
                                | "--continue"
                                | "--quit"
                        )
                    )
                }) {
                    return;
                }
                let files: Vec<&Word> = sub_rest
                    .iter()
                    .filter(|w| w.arg.lit().is_none_or(|s| !s.starts_with('-')))
                    .collect();
                let mut c = ctx.clone();
                c.cwd = cwd.clone();
                if files.is_empty() {
                    let source = match &call.stdin {
                        Stdin::File(w) => w
                            .arg
                            .lit()
                            .and_then(|f| self.locate(f, ctx))
                            .map(PatchSource::File),
                        Stdin::Text(Arg::Lit(t)) => Some(PatchSource::Text(t.clone())),
                        Stdin::None => None,
                        _ => Some(PatchSource::Unknown("the patch on standard input".into())),
                    };
                    if let Some(s) = source {
                        self.patch_writes(idx, s, &c);
                    }
                }
                for f in files {
                    let source = match f.arg.lit() {
                        Some(p) => self.locate(p, &c).map(PatchSource::File),
                        None => Some(PatchSource::Unknown(f.arg.display().to_string())),
                    };
                    if let Some(s) = source {
                        self.patch_writes(idx, s, &c);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The replace string of `xargs -I R` / `-iR` / `--replace[=R]`.
fn xargs_replace(opts: &[Word]) -> Option<String> {
    let lits: Vec<&str> = opts.iter().filter_map(|w| w.arg.lit()).collect();
    for (i, a) in lits.iter().enumerate() {
        if *a == "-I" {
            return lits.get(i + 1).map(|s| s.to_string());
        }
        if let Some(r) = a.strip_prefix("-I").filter(|r| !r.is_empty()) {
            return Some(r.to_string());
        }
        if *a == "-i" || *a == "--replace" {
            return Some("{}".into());
        }
        if let Some(r) = a
            .strip_prefix("-i")
            .or_else(|| a.strip_prefix("--replace="))
        {
            return Some(r.to_string());
        }
    }
    None
}

/// Shell commands a program runs from its options (`None`: one Forge cannot read).
fn option_commands(name: &str, rest: &[Word]) -> Vec<Option<String>> {
    let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
    let mut out = Vec::new();
    // `--opt VALUE` / `--opt=VALUE` / `-o VALUE`.
    let mut value = |opts: &[&str], out: &mut Vec<Option<String>>| {
        for (i, a) in lits.iter().enumerate() {
            let Some(a) = a else { continue };
            for o in opts {
                if a == o {
                    out.push(lits.get(i + 1).copied().flatten().map(str::to_string));
                } else if let Some(v) = a
                    .strip_prefix(&format!("{o}="))
                    .filter(|_| o.starts_with("--"))
                {
                    out.push(Some(v.to_string()));
                }
            }
        }
    };
    match name {
        "tar" | "gtar" | "bsdtar" => {
            value(
                &[
                    "--to-command",
                    "--use-compress-program",
                    "-I",
                    "--rsh-command",
                    "--info-script",
                    "-F",
                    "--new-volume-script",
                ],
                &mut out,
            );
            for a in lits.iter().flatten() {
                if let Some(v) = a.strip_prefix("--checkpoint-action=") {
                    if let Some(cmd) = v.strip_prefix("exec=") {
                        out.push(Some(cmd.to_string()));
                    }
                }
            }
        }
        "zip" => value(&["-TT", "--unzip-command"], &mut out),
        "rsync" => value(&["-e", "--rsh", "--rsync-path"], &mut out),
        "ssh" | "scp" | "sftp" => {
            for (i, a) in lits.iter().enumerate() {
                let opt = match a {
                    Some("-o") => lits.get(i + 1).copied().flatten(),
                    Some(x) if x.starts_with("-o") && x.len() > 2 => Some(&x[2..]),
                    _ => None,
                };
                if let Some(o) = opt {
                    let (k, v) = o.split_once(['=', ' ']).unwrap_or((o, ""));
                    if matches!(
                        k.to_ascii_lowercase().as_str(),
                        "proxycommand" | "localcommand" | "knownhostscommand" | "remotecommand"
                    ) {
                        out.push(Some(v.trim().to_string()));
                    }
                }
            }
            if name != "ssh" {
                value(&["-S"], &mut out);
            }
        }
        "man" => value(&["-P", "--pager", "--html"], &mut out),
        "git" if lits.contains(&Some("difftool")) => value(&["-x", "--extcmd"], &mut out),
        "gdb" => {
            let mut cmds = Vec::new();
            value(&["-ex", "--eval-command", "-iex"], &mut cmds);
            for c in cmds.into_iter().flatten() {
                if let Some(s) = c.strip_prefix("shell ").or_else(|| c.strip_prefix('!')) {
                    out.push(Some(s.to_string()));
                }
            }
        }
        "tcpdump" => value(&["-z"], &mut out),
        "fzf" => {
            value(&["--preview"], &mut out);
            let mut binds = Vec::new();
            value(&["--bind"], &mut binds);
            for b in binds.into_iter().flatten() {
                if let Some(at) = b.find("execute(") {
                    out.push(Some(b[at + 8..].trim_end_matches(')').to_string()));
                }
            }
        }
        "psql" | "mysql" | "mariadb" | "sqlite3" => {
            for a in lits.iter().flatten() {
                for esc in ["\\!", ".shell ", ".system ", "system "] {
                    if let Some(at) = a.find(esc) {
                        out.push(Some(
                            a[at + esc.len()..].trim_start_matches('!').to_string(),
                        ));
                    }
                }
            }
        }
        "vim" | "nvim" | "vi" | "ex" | "view" => {
            for a in lits.iter().flatten() {
                if a.contains("system(")
                    || a.contains("systemlist(")
                    || a.contains("jobstart(")
                    || a.contains("termopen(")
                {
                    out.push(None);
                }
            }
        }
        _ => {}
    }
    out
}

/// Programs whose output is environment settings for `eval` (`eval "$(ssh-agent -s)"`).
const ENV_PRINTERS: [&str; 14] = [
    "ssh-agent",
    "direnv",
    "opam",
    "pyenv",
    "rbenv",
    "nodenv",
    "brew",
    "fnm",
    "zoxide",
    "starship",
    "dircolors",
    "keychain",
    "mise",
    "conda",
];

const XARGS_VALUE_OPTS: &[&str] = &[
    "-I",
    "-i",
    "-n",
    "-P",
    "-L",
    "-l",
    "-d",
    "-E",
    "-e",
    "-s",
    "-a",
    "--max-args",
    "--max-procs",
    "--delimiter",
    "--arg-file",
    "--replace",
    "--max-lines",
    "--eof",
    "--max-chars",
    "--process-slot-var",
];

const CONTAINER_VALUE_OPTS: &[&str] = &[
    "-v",
    "--volume",
    "--mount",
    "-e",
    "--env",
    "--env-file",
    "-w",
    "--workdir",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "-u",
    "--user",
    "-l",
    "--label",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "--pull",
    "--restart",
    "--add-host",
    "--device",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--tmpfs",
    "--ulimit",
    "--log-driver",
    "--log-opt",
    "-h",
    "--hostname",
    "--ipc",
    "--pid",
    "--uts",
    "--userns",
    "--cgroupns",
    "--gpus",
    "-a",
    "--attach",
    "--cidfile",
    "--dns",
    "--volumes-from",
    "--link",
    "--expose",
    "--health-cmd",
    "--label-file",
    "--stop-signal",
    "--shm-size",
    "--runtime",
    "--group-add",
    "--mac-address",
    "--ip",
    "--ip6",
    "--cgroup-parent",
    "-f",
    "--file",
    "--project-name",
    "--profile",
    "--env-file",
    "--detach-keys",
    "--init-path",
    "--isolation",
    "--network-alias",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--blkio-weight",
    "--cpu-shares",
    "-c",
];

/// `SRC:DST[:opts]` of `-v`: host source and container target, for bind mounts (a named
/// volume has no `/` and is skipped).
fn bind(v: &str, _: &str) -> Option<(String, String)> {
    let mut parts = v.splitn(3, ':');
    let src = parts.next()?.to_string();
    let dst = parts.next()?.to_string();
    (src.starts_with('/') || src.starts_with('.') || src.starts_with('~') || src.starts_with('$'))
        .then_some((src, dst))
}

fn host_path(src: &str, base: &Option<PathBuf>, home: &Path) -> Option<PathBuf> {
    if let Some(rest) = src.strip_prefix('~') {
        return Some(home.join(rest.trim_start_matches('/')));
    }
    if src.starts_with('/') {
        return Some(PathBuf::from(src));
    }
    base.as_ref()
        .map(|b| crate::guard::paths::normalize(&b.join(src)))
}

/// `/usr/bin/rm` → `rm`; also strips a leading `\` used to bypass aliases.
pub(super) fn base_name(p: &str) -> String {
    let p = p.trim_start_matches('\\');
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// The interpreter a `#!` line names (`#!/usr/bin/env python3` → `python3`).
fn shebang(text: &str) -> Option<String> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let prog = base_name(words.next()?);
    if prog == "env" {
        return words.find(|w| !w.starts_with('-')).map(base_name);
    }
    Some(prog)
}

/// How many leading arguments are options (and the values of `with_value` options).
pub(super) fn skip_options(args: &[Word], with_value: &[&str]) -> usize {
    let mut i = 0;
    while i < args.len() {
        let Some(a) = args[i].arg.lit() else { break };
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

fn only_options(args: &[Word]) -> bool {
    args.iter()
        .all(|w| w.arg.lit().is_some_and(|a| a.starts_with('-')))
}

fn bwrap_skip(args: &[Word]) -> usize {
    const TWO: [&str; 11] = [
        "--bind",
        "--ro-bind",
        "--dev-bind",
        "--bind-try",
        "--ro-bind-try",
        "--dev-bind-try",
        "--symlink",
        "--setenv",
        "--chmod",
        "--file",
        "--bind-data",
    ];
    let mut i = 0;
    while i < args.len() {
        let Some(a) = args[i].arg.lit() else { break };
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with("--") {
            break;
        }
        i += if TWO.contains(&a) {
            3
        } else if a.starts_with("--unshare")
            || a.starts_with("--share")
            || matches!(
                a,
                "--die-with-parent"
                    | "--new-session"
                    | "--as-pid-1"
                    | "--clearenv"
                    | "--disable-userns"
                    | "--assert-userns-disabled"
            )
        {
            1
        } else {
            2
        };
    }
    i
}

/// `-o V`, `--opt V`, `--opt=V` of a list of names.
fn option_value_of(args: &[Word], names: &[&str]) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        let Some(s) = a.arg.lit() else { continue };
        if names.contains(&s) {
            return args
                .get(i + 1)
                .and_then(|w| w.arg.lit())
                .map(str::to_string);
        }
        for n in names {
            if let Some(v) = s.strip_prefix(&format!("{n}=")) {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// Literal words joined by spaces (how `ssh`, `watch` and `tmux` build a command string).
fn join_lits(words: &[Word]) -> Option<String> {
    let v: Option<Vec<&str>> = words.iter().map(|w| w.arg.lit()).collect();
    v.map(|v| v.join(" "))
}

/// `env -S` expands `${NAME}` (only that form; no `~`, no `$NAME`) before splitting; an
/// unknown variable stays as written.
fn env_s_vars(s: &str, var: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                match var(name) {
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&rest[at..at + 3 + end]),
                }
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// `env -S`'s splitting: whitespace separates, quotes group, backslash escapes.
fn split_string(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (Some(q), c) if c == q => quote = None,
            (q, '\\') if q != Some('\'') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    has = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (_, c) => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

/// Whether a `find` narrows its files by name or path (`-name '*.pyc'`); `-type f` alone or
/// `-name '*'` does not.
pub fn find_filtered(args: &[Word]) -> bool {
    const NAME_TESTS: [&str; 8] = [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-regex",
        "-iregex",
        "-wholename",
        "-iwholename",
    ];
    args.windows(2).any(|w| {
        w[0].arg.lit().is_some_and(|t| NAME_TESTS.contains(&t))
            && w[1]
                .arg
                .lit()
                .is_some_and(|p| !matches!(p, "*" | "**" | ".*" | "*.*" | "./*" | "**/*"))
    }) || args.iter().any(|w| {
        matches!(
            w.arg.lit(),
            Some(
                "-newer"
                    | "-mtime"
                    | "-mmin"
                    | "-size"
                    | "-empty"
                    | "-user"
                    | "-perm"
                    | "-links"
                    | "-inum"
                    | "-samefile"
            )
        )
    })
}

/// What a listing command names (for `… | xargs cmd`).
fn listing(up: &Invocation) -> Option<Names> {
    let args: Vec<Option<&str>> = up.lit_args().collect();
    let ops: Vec<&Word> = up
        .args
        .iter()
        .filter(|w| w.arg.lit().is_none_or(|s| !s.starts_with('-')))
        .collect();
    match up.name()? {
        "find" | "fd" | "fdfind" => {
            let root = if up.name() == Some("find") {
                up.args
                    .iter()
                    .take_while(|a| {
                        a.arg
                            .lit()
                            .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
                    })
                    .map(|a| a.arg.clone())
                    .next()
                    .unwrap_or(Arg::Lit(".".into()))
            } else {
                Arg::Lit(".".into())
            };
            let filtered = if up.name() == Some("find") {
                find_filtered(&up.args)
            } else {
                !ops.is_empty() || args.iter().any(|a| matches!(a, Some("-e" | "--extension")))
            };
            Some(Names::Under {
                root,
                cwd: up.cwd.clone(),
                filtered,
            })
        }
        "ls" => Some(Names::Under {
            root: ops
                .first()
                .map(|w| w.arg.clone())
                .unwrap_or(Arg::Lit(".".into())),
            cwd: up.cwd.clone(),
            filtered: ops.iter().any(|w| w.glob()),
        }),
        "git" => {
            let sub = args
                .iter()
                .flatten()
                .find(|a| !a.starts_with('-'))
                .copied()?;
            match sub {
                "ls-files" | "diff" | "status" | "grep" | "ls-tree" => Some(Names::Under {
                    root: Arg::Lit(".".into()),
                    cwd: up.cwd.clone(),
                    filtered: sub != "ls-files"
                        || args
                            .iter()
                            .flatten()
                            .filter(|a| !a.starts_with('-'))
                            .count()
                            > 1,
                }),
                _ => None,
            }
        }
        "grep" | "rg" | "ag" | "ack" => Some(Names::Under {
            root: Arg::Lit(".".into()),
            cwd: up.cwd.clone(),
            filtered: !args.contains(&Some("--files")),
        }),
        "echo" | "printf" => Some(Names::Known(
            up.args
                .iter()
                .filter_map(|w| w.arg.lit().map(str::to_string))
                .collect(),
        )),
        "pgrep" | "pidof" | "lsof" | "jobs" => None,
        _ => None,
    }
}

#[allow(dead_code)]
fn is_downloader_name(p: &str) -> bool {
    is_downloader(p)
}

#[cfg(test)]
mod tests {
    use super::super::{Analysis, analyze};
    use super::*;

    fn run(line: &str) -> Analysis {
        analyze(line, Path::new("/repo"), Path::new("/home/u"))
    }

    fn last_prog(line: &str) -> (String, Vec<String>) {
        let a = run(line);
        let i = a
            .invocations
            .iter()
            .rev()
            .find(|i| i.name() == Some("rm"))
            .or(a.invocations.last())
            .unwrap_or_else(|| panic!("{line}: nothing"));
        (
            i.program.display().to_string(),
            i.args.iter().map(|w| w.arg.display().to_string()).collect(),
        )
    }

    #[test]
    fn wrappers_are_peeled() {
        for line in [
            "sudo -u root rm -rf /",
            "env -i FOO=1 rm -rf /",
            "command rm -rf /",
            "command -p rm -rf /",
            "builtin command rm -rf /",
            "nohup nice -n 5 timeout 10 rm -rf /",
            "nice -5 rm -rf /",
            "exec -a foo rm -rf /",
            "time -p rm -rf /",
            "strace -f -o /dev/null -e trace=none rm -rf /",
            "ltrace rm -rf /",
            "valgrind --leak-check=full rm -rf /",
            "gdb -batch -ex run --args rm -rf /",
            "perf stat -e cycles -- rm -rf /",
            "ionice -c3 rm -rf /",
            "taskset -c 0 rm -rf /",
            "chrt -i 0 rm -rf /",
            "stdbuf -oL rm -rf /",
            "fakeroot rm -rf /",
            "faketime '2020-01-01' rm -rf /",
            "xvfb-run -a rm -rf /",
            "dbus-run-session -- rm -rf /",
            "runuser -u nobody -- rm -rf /",
            "uv run rm -rf /",
            "poetry run rm -rf /",
            "bundle exec rm -rf /",
            "pnpm exec rm -rf /",
            "npm exec -- rm -rf /",
            "direnv exec . rm -rf /",
            "nix develop -c rm -rf /",
            "conda run -n base rm -rf /",
            "timeout -s9 10 rm -rf /",
            "timeout --preserve-status 5 rm -rf /",
            "setpriv --reuid=1000 rm -rf /",
            "gosu nobody rm -rf /",
            "firejail rm -rf /",
            "dumb-init rm -rf /",
            "tini -- rm -rf /",
            "watchexec -- rm -rf /",
            "mise exec -- rm -rf /",
            "chronic rm -rf /",
            "caffeinate -i rm -rf /",
            "env --split-string='rm -rf /'",
            "env -S'rm -rf /'",
            "env -S 'rm -rf /'",
            "busybox rm -rf /",
        ] {
            let (p, args) = last_prog(line);
            assert_eq!(p, "rm", "{line}");
            assert_eq!(args.last().map(String::as_str), Some("/"), "{line}");
        }
    }

    #[test]
    fn strings_that_run_as_code_are_walked() {
        for line in [
            "bash -c 'rm -rf /'",
            "bash -c -- 'rm -rf /'",
            "sh -ec 'rm -rf /'",
            "su -c 'rm -rf /'",
            "sg users -c 'rm -rf /'",
            "flock /tmp/l -c 'rm -rf /'",
            "watch -n 1 'rm -rf /'",
            "nix-shell --run 'rm -rf /'",
            "script -qc 'rm -rf /'",
            "trap 'rm -rf /' EXIT",
            "screen -dm bash -c 'rm -rf /'",
            "screen -dmS w rm -rf /",
            "tmux new -d 'rm -rf /'",
            "tmux send-keys -t 0 'rm -rf /' Enter",
            "ssh host 'rm -rf /'",
            "ssh -p 22 -o X=y host rm -rf /",
            "echo 'rm -rf /' | at now",
            "at now <<< 'rm -rf /'",
            "echo '* * * * * rm -rf /' | crontab -",
            "git submodule foreach 'rm -rf /'",
            "git bisect run sh -c 'rm -rf /'",
            "git rebase --exec 'rm -rf /' HEAD~1",
            "git -c alias.x='!rm -rf /' x",
            "git config alias.x '!rm -rf /'",
            "bash /dev/stdin <<< 'rm -rf /'",
            "echo 'rm -rf /' | bash",
            "bash <<'EOF'\nrm -rf /\nEOF",
            "source <(echo 'rm -rf /')",
            "eval 'rm -rf /'",
            "GIT_SSH_COMMAND='rm -rf /' git fetch",
            "export PAGER='rm -rf /'; git log",
            "vim -c '!rm -rf /' x",
            "parallel ::: 'rm -rf /'",
            "hyperfine 'rm -rf /'",
        ] {
            let a = run(line);
            assert!(
                a.invocations
                    .iter()
                    .any(|i| i.name() == Some("rm") && i.lit_args().any(|x| x == Some("/"))),
                "{line}: {:?}",
                a.invocations
                    .iter()
                    .map(|i| i.display())
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn docker_maps_bind_mounts_to_the_host() {
        let a = run("docker run -v ~:/h alpine rm -rf /h");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        let scratch = Path::new("/tmp/.forge-container");
        assert_eq!(
            rm.origin.host_path(rm.args[1].arg.lit().unwrap(), scratch),
            "/home/u"
        );
        let a = run("docker run --rm -v /:/host busybox sh -c 'rm -rf /host/etc'");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert_eq!(
            rm.origin.host_path(rm.args[1].arg.lit().unwrap(), scratch),
            "/etc"
        );
        // A path no mount covers is the container's own.
        let a = run("docker run --rm alpine rm -rf /etc");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert!(
            rm.origin
                .host_path("/etc", scratch)
                .starts_with("/tmp/.forge-container/")
        );
    }

    #[test]
    fn xargs_names_come_from_the_listing() {
        let a = run("find . -name '*.o' | xargs rm -f");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert!(
            matches!(&rm.names, Names::Under { filtered: true, .. }),
            "{:?}",
            rm.names
        );
        assert_eq!(rm.wrappers, ["xargs"]);
        let a = run("git ls-files | xargs rm -f");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert!(matches!(
            &rm.names,
            Names::Under {
                filtered: false,
                ..
            }
        ));
        let a = run("echo a b | xargs rm");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert_eq!(rm.names, Names::Known(vec!["a".into(), "b".into()]));
        let a = run("cat list | xargs rm");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert_eq!(rm.names, Names::Unknown);
    }

    #[test]
    fn program_globs_are_read_every_way() {
        for line in ["/???/r? -rf /", "r[m] -rf /", "/usr/bin/r[l-n] -rf /"] {
            let a = run(line);
            assert!(
                a.invocations.iter().any(|i| i.name() == Some("rm")),
                "{line}: {:?}",
                a.invocations
                    .iter()
                    .map(|i| i.display())
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn env_split_string() {
        assert_eq!(split_string("rm -rf '/a b'"), ["rm", "-rf", "/a b"]);
        assert_eq!(split_string(r#"a\ b "c d""#), ["a b", "c d"]);
    }
}
