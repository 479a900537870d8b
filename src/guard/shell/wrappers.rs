//! From an argument vector to the commands it runs: wrappers peeled (`sudo`, `env -S`, `strace
//! -f`, `nohup`, `timeout`, `uv run`, …) down to the program; shell builtins that change the
//! shell (`cd`, `pushd`, `export`, `alias`, `shopt`); and programs that run code given to them
//! as a string or a file: shells (`bash -c`, a script, stdin), `eval`, `source`, `trap`,
//! `find -exec`, `xargs`, `ssh`, `docker run`, `at`, `crontab`, `screen`, `tmux`, `watch`,
//! `git` (aliases, `submodule foreach`, `rebase --exec`, patches), `make`, `npm` and friends.

use super::launchers::{ARGS_AFTER_DASHES, Start, launcher};
use super::sources::is_downloader;
use super::walk::{Ctx, Val, Walker, dyn_arg};
use super::{Arg, Cwd, Invocation, Names, Origin, Stdin, Word};

/// A command about to run.
pub(super) struct Call {
    pub argv: Vec<Word>,
    pub wrappers: Vec<String>,
    pub env: Vec<(String, Arg)>,
    pub stdin: Stdin,
    pub upstream: Vec<usize>,
    pub names: Names,
}

pub(super) const SHELLS: [&str; 9] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash",
];

/// Programs whose name a glob or a brace in the program word could reach: the ones rules care
/// about. A program word that is a pattern is judged as every one of these it matches.
pub(super) const KNOWN_PROGRAMS: [&str; 40] = [
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
            // A `PATH` set on the line that puts a folder of the project or the temp folder
            // first: a bare name may run a file there (`export PATH=/tmp/x:$PATH; git …`).
            if !raw.contains('/')
                && path.is_none()
                && let Some(found) = self.on_line_path(&raw, &call, ctx)
            {
                path = Some(found.clone());
                if self.program_path(&found, &call, ctx, depth) {
                    return;
                }
            }
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
                _ => match launcher(&prog) {
                    Some(l) => {
                        if l.judged_too {
                            self.push_plain(&call, ctx);
                        }
                        match l.command_at(&rest) {
                            Start::At(n) => Some(n),
                            Start::ShellString(i, from) => {
                                let mut text = rest.to_vec();
                                if from > 0
                                    && let Some(a) = text[i].arg.lit()
                                {
                                    text[i] = Word::lit(a[from..].to_string());
                                }
                                call.wrappers.push(prog.clone());
                                self.shell_string(&text, i, &call, ctx, depth, ctx.origin.clone());
                                return;
                            }
                            Start::ShellArgs(i) => {
                                // The words are bash's own (`-c CMD`): bash runs them.
                                call.wrappers.push(prog.clone());
                                let mut argv = vec![Word::lit("bash")];
                                argv.extend_from_slice(&rest[i..]);
                                call.argv = argv;
                                continue;
                            }
                            Start::None if l.judged_too => return,
                            Start::None => break,
                        }
                    }
                    None => wrapper_options(&prog).map(|o| skip_options(&rest, o)),
                },
            };
            match skip {
                Some(n) => {
                    // `uv run x.py` (and poetry's, pdm's…) runs the file with Python.
                    let python_file = matches!(
                        prog.as_str(),
                        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye"
                    ) && call
                        .argv
                        .get(n + 1)
                        .and_then(|w| w.arg.lit())
                        .is_some_and(|a| a.ends_with(".py"));
                    call.wrappers.push(prog);
                    let n = (n + 1).min(call.argv.len());
                    call.argv.drain(..n);
                    if python_file {
                        call.argv.insert(0, Word::lit("python3"));
                    }
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
        if let Some(inner) = after_dashes(&call.argv) {
            let inner = self.call_with(inner, &call);
            let mut sub = ctx.child(ctx.origin.clone());
            self.invoke(inner, &mut sub, depth + 1);
        }
        self.program(call, path, ctx, depth);
    }

    /// The file a bare program name runs when the line set `PATH` (for the command or the
    /// shell) to folders in the project or the temp folder that hold it.
    fn on_line_path(&self, name: &str, call: &Call, ctx: &Ctx) -> Option<String> {
        let set = call
            .env
            .iter()
            .rev()
            .find(|(n, _)| n == "PATH")
            .and_then(|(_, v)| v.lit().map(str::to_string))
            .or_else(|| match ctx.vars.get("PATH") {
                Some(Val::Known(p)) => Some(p.clone()),
                _ => None,
            })?;
        for dir in set.split(':').filter(|d| !d.is_empty()) {
            let d = std::path::Path::new(dir);
            let inside = d.starts_with(&self.env.root) || d.starts_with(&self.env.temp);
            let candidate = d.join(name);
            if crate::guard::paths::is_file(&candidate) || self.files.contains_key(&candidate) {
                return inside.then(|| candidate.display().to_string());
            }
            if !inside
                && crate::guard::paths::is_dir(d)
                && (d.starts_with("/usr") || d.starts_with("/bin"))
            {
                // A system folder earlier on the path: the ordinary program wins.
                continue;
            }
        }
        None
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
                (Some(d), Some(c)) => Cwd::at(crate::guard::paths::logical(&c.join(d))),
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
    pub(super) fn assigned_var(&mut self, name: &str, v: &Val, ctx: &mut Ctx, depth: usize) {
        self.assigned(name, v, ctx, depth);
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

/// `/usr/bin/rm` → `rm`; also strips a leading `\` used to bypass aliases.
pub(super) fn base_name(p: &str) -> String {
    let p = p.trim_start_matches('\\');
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// The command after `--` of a program Forge does not know (`foo --bar -- rm -rf ~`): the
/// words from a name the rules know on, unless the program is known to take plain arguments
/// there ([`ARGS_AFTER_DASHES`]) or is one the walker follows itself.
fn after_dashes(argv: &[Word]) -> Option<Vec<Word>> {
    let prog = argv.first()?.arg.lit()?;
    let i = argv.iter().position(|w| w.arg.lit() == Some("--"))?;
    let next = base_name(argv.get(i + 1)?.arg.lit()?);
    let name = prog.rsplit('/').next().unwrap_or(prog);
    (KNOWN_PROGRAMS.contains(&next.as_str())
        && !KNOWN_PROGRAMS.contains(&name)
        && !SHELLS.contains(&name)
        && !ARGS_AFTER_DASHES.contains(&name))
    .then(|| argv[i + 1..].to_vec())
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

/// Literal words joined by spaces (how `ssh`, `watch` and `tmux` build a command string).
pub(super) fn join_lits(words: &[Word]) -> Option<String> {
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
/// `-name '*'` does not. A test under `!`/`-not` selects all but what it names (`! -name
/// '*.lock'` is nearly everything), so it narrows nothing; with `-o`, every alternative must
/// narrow (`-name '*.pyc' -o -type f -delete` deletes every file).
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
    const OTHER_TESTS: [&str; 10] = [
        "-newer",
        "-mtime",
        "-mmin",
        "-size",
        "-empty",
        "-user",
        "-perm",
        "-links",
        "-inum",
        "-samefile",
    ];
    let narrows = |alt: &[Word]| {
        let lit = |k: usize| alt.get(k).and_then(|w| w.arg.lit());
        (0..alt.len()).any(|k| {
            let negated = k > 0 && matches!(lit(k - 1), Some("!" | "-not"));
            let Some(t) = lit(k) else { return false };
            !negated
                && (NAME_TESTS.contains(&t)
                    && lit(k + 1)
                        .is_some_and(|p| !matches!(p, "*" | "**" | ".*" | "*.*" | "./*" | "**/*"))
                    || OTHER_TESTS.contains(&t))
        })
    };
    args.split(|w| matches!(w.arg.lit(), Some("-o" | "-or" | ",")))
        .all(narrows)
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
    use std::path::Path;

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
    fn env_split_string() {
        assert_eq!(split_string("rm -rf '/a b'"), ["rm", "-rf", "/a b"]);
        assert_eq!(split_string(r#"a\ b "c d""#), ["a b", "c d"]);
    }
}
