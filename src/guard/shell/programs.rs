//! What a program does once the wrappers are off: builtins that change the shell (`cd`,
//! `pushd`, `export`, `alias`, `shopt`), programs that run code given as a string, a file or
//! their input (shells, `eval`, `source`, `trap`, `find -exec`, `parallel`, `git`'s
//! embedded commands, options such as `tar --to-command`), and programs run by path or glob.

use std::path::PathBuf;

use super::embedded::option_commands;
use super::sources::{Content, PatchSource};
use super::walk::{Ctx, Val, Walker};
use super::wrappers::{Call, KNOWN_PROGRAMS, SHELLS, base_name, find_filtered, join_lits};
use super::{Arg, Cwd, Invocation, Names, Opaque, Origin, Stdin, Word};

impl Walker<'_> {
    /// The program after wrappers: builtins that change the shell, programs that run code,
    /// and everything else recorded as it is.
    pub(super) fn program(
        &mut self,
        mut call: Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
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
                let flag = |c: char| {
                    lits.iter()
                        .flatten()
                        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
                };
                // `declare -n r=HOME`: `$r` is `$HOME`; `declare -a a=(…)`: an array, whose
                // words Forge does not keep.
                let (nameref, array) = (flag('n'), flag('a') || flag('A'));
                for w in &rest {
                    match &w.arg {
                        Arg::Lit(a) if a.starts_with('-') => {}
                        Arg::Lit(a) => {
                            let (n, v) = match a.split_once('=') {
                                Some((n, v)) if nameref => (
                                    n.trim_end_matches('+'),
                                    Some(self.var(v, ctx).map_or(Val::Unknown, Val::Known)),
                                ),
                                Some((n, v)) if array || v.starts_with('(') => {
                                    (n.trim_end_matches('+'), Some(Val::Unknown))
                                }
                                Some((n, v)) => {
                                    (n.trim_end_matches('+'), Some(Val::Known(v.to_string())))
                                }
                                None if nameref => (a.as_str(), Some(Val::Unknown)),
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
                                let v = if n == "PATH" {
                                    super::walk::path_prefix(raw)
                                } else {
                                    Val::Unknown
                                };
                                ctx.set(&n, v);
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
                self.option_code("git", &rest, idx, ctx, depth);
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
            // Codex CLI's patch tool as a shell command (`apply_patch <<'EOF'` or the patch as
            // its argument): Codex applies it itself, so what it writes is what the patch's
            // `*** Add File:`/`Update`/`Delete`/`Move to:` headers name, taken in the folder the
            // command runs in (red team, round 15: `.forge/` written through it passed).
            "apply_patch" | "applypatch" => {
                let idx = self.push_invocation(&call, path, ctx);
                let text = match (rest.first().map(|w| &w.arg), &call.stdin) {
                    (Some(Arg::Lit(t)), _) => Some(t.clone()),
                    (None, Stdin::Text(Arg::Lit(t))) => Some(t.clone()),
                    _ => None,
                };
                let Some(text) = text else {
                    self.out.opaque.push(Opaque {
                        what: "apply_patch".into(),
                        why: "its patch comes from a source Forge cannot read".into(),
                        downloaded: false,
                        origin: ctx.origin.clone(),
                    });
                    return;
                };
                // Codex takes `..` on the text of a path, before the disk (red team, round 15:
                // through a link `l` → `b/c`, `l/../.forge/x` is the project's `.forge/x` to it),
                // and newer versions expand a leading `~`: each path is judged as written, with
                // `..` taken lexically from every folder the command may run in, and from home.
                for f in crate::guard::tools::patch_paths(&text) {
                    let mut readings = vec![f.clone()];
                    for c in ctx.cwd.paths() {
                        readings.push(
                            crate::guard::paths::logical(&c.join(&f))
                                .display()
                                .to_string(),
                        );
                    }
                    if let Some(rest) = f.strip_prefix("~/").or((f == "~").then_some("")) {
                        readings.push(self.env.home.join(rest).display().to_string());
                    }
                    readings.dedup();
                    for r in readings {
                        self.out.writes.push(super::Redirect {
                            target: Word::lit(r),
                            cwd: ctx.cwd.clone(),
                            by: Some(idx),
                            origin: ctx.origin.clone(),
                        });
                    }
                }
                return;
            }
            // Every program in a folder, none of them named on the line.
            // `--test`/`--list` only print what would run.
            "run-parts"
                if !rest
                    .iter()
                    .any(|w| matches!(w.arg.lit(), Some("--test" | "--list"))) =>
            {
                self.push_invocation(&call, path, ctx);
                let dir = rest
                    .iter()
                    .filter_map(|w| w.arg.lit())
                    .rfind(|a| !a.starts_with('-'))
                    .unwrap_or("?")
                    .to_string();
                self.out.opaque.push(Opaque {
                    what: format!("run-parts {dir}"),
                    why: "it runs every program in a folder".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
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
                // `make -f /dev/stdin <<< '…'`, `make -f - < x.mk`: the makefile is the input.
                let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
                let from_input = lits.iter().enumerate().any(|(k, a)| {
                    let v = match a {
                        Some("-f" | "--file" | "--makefile") => lits.get(k + 1).copied().flatten(),
                        Some(x) if x.starts_with("--file=") || x.starts_with("--makefile=") => {
                            x.split_once('=').map(|(_, v)| v)
                        }
                        Some(x) if x.starts_with("-f") && x.len() > 2 => Some(&x[2..]),
                        _ => None,
                    };
                    v.is_some_and(|v| {
                        matches!(v, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-")
                    })
                });
                if from_input {
                    let content = match &call.stdin {
                        Stdin::Text(Arg::Lit(t)) => Content::Text(t.clone()),
                        Stdin::File(w) => match w.arg.lit().and_then(|f| self.locate(f, ctx)) {
                            Some(f) => self.file_content(&f),
                            None => Content::Unknown("its makefile is a computed file".into()),
                        },
                        _ => Content::Unknown("its makefile is read from its input".into()),
                    };
                    for name in ["/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"] {
                        self.files.insert(PathBuf::from(name), content.clone());
                    }
                    for c in &cwds {
                        self.files.insert(c.join("-"), content.clone());
                    }
                }
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
            "busybox" | "toybox" if !rest.is_empty() => {
                call.wrappers.push(name.clone());
                call.argv.remove(0);
                self.invoke(call, ctx, depth);
                return;
            }
            "python" | "python2" | "python3"
                if lits.first() == Some(&Some("-m"))
                    && rest.len() > 1
                    && !self.local_module(lits.get(1).copied().flatten(), ctx) =>
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

    /// Whether `python -m NAME` runs a module of the folder it runs in (`NAME.py`,
    /// `NAME/__main__.py`, on disk or written earlier on the line): then it is that file's
    /// code, judged as such, not a program named NAME.
    fn local_module(&self, name: Option<&str>, ctx: &Ctx) -> bool {
        let Some(name) = name.filter(|n| !n.contains('/')) else {
            return false;
        };
        let rel = name.replace('.', "/");
        ctx.cwd.paths().iter().any(|c| {
            [
                c.join(format!("{rel}.py")),
                c.join(&rel).join("__main__.py"),
            ]
            .iter()
            .any(|p| {
                crate::guard::paths::is_file(p)
                    || self.files.contains_key(&crate::guard::paths::real(p))
            })
        })
    }

    /// Commands handed over as option values (`tar --to-command`, `ssh -o ProxyCommand`).
    pub(super) fn option_code(
        &mut self,
        name: &str,
        rest: &[Word],
        idx: usize,
        ctx: &mut Ctx,
        depth: usize,
    ) {
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

    pub(super) fn push_plain(&mut self, call: &Call, ctx: &Ctx) {
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
    pub(super) fn call_with(&self, argv: Vec<Word>, like: &Call) -> Call {
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
    pub(super) fn program_glob(&mut self, pattern: &str, call: &Call, ctx: &mut Ctx, depth: usize) {
        let cwd = ctx
            .cwd
            .paths()
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut names: Vec<String> = super::shell_glob_matches(pattern, &cwd)
            .into_iter()
            .filter(|p| crate::guard::paths::is_file(p))
            .map(|p| p.display().to_string())
            .collect();
        let base = pattern.rsplit('/').next().unwrap_or(pattern);
        for k in KNOWN_PROGRAMS {
            if super::pattern::component_could_match(base, k)
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
    pub(super) fn program_path(
        &mut self,
        raw: &str,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
    ) -> bool {
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
        let real = crate::guard::paths::real(&p);
        let not_yet = !self.files.contains_key(&real)
            && !self.files.contains_key(&p)
            && crate::guard::paths::symlink_metadata(&p).is_none();
        // …unless a command earlier on the line may have put it there (`tar xf k.tar &&
        // ./payload`): then its content is unknowable.
        if not_yet && !super::sources::script_extension(raw) && self.replacer.is_none() {
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

    pub(super) fn cd_target(&self, target: Option<&Word>, ctx: &Ctx) -> Cwd {
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
                    let p = crate::guard::paths::logical(&c.join(s));
                    let next = Cwd::at(p.clone());
                    out = if first { next } else { out.either(&next) };
                    first = false;
                    // `shopt -s cdable_vars`: a folder that does not exist may name a variable.
                    if ctx.cdable_vars && plain && !crate::guard::paths::is_dir(&p) {
                        out = match self.var(s, ctx) {
                            Some(v) => {
                                out.either(&Cwd::at(crate::guard::paths::logical(&c.join(v))))
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
    pub(super) fn eval(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
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
    pub(super) fn code_word(
        &mut self,
        w: &Word,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
        origin: Origin,
    ) {
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
    pub(super) fn shell_string(
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
    pub(super) fn run_text(
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
    pub(super) fn shell(
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
                // `--rcfile FILE` (an interactive shell) runs FILE first, as `source` would.
                if matches!(a, "--rcfile" | "--init-file") {
                    // In the new shell: its `cd` and variables stay there.
                    if let Some(f) = rest.get(i + 1) {
                        let f = f.clone();
                        let mut sub = ctx.child(ctx.origin.clone());
                        self.run_script(&f, &[], &mut sub, depth, true);
                    }
                    i += 2;
                } else {
                    i += 1;
                }
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
    pub(super) fn shell_stdin_here(&mut self, call: &Call, ctx: &mut Ctx, depth: usize) {
        match &call.stdin {
            Stdin::Text(Arg::Lit(text)) => {
                let text = text.clone();
                self.line(&text, ctx, depth + 1);
            }
            _ => self.shell_stdin(call, ctx, depth),
        }
    }

    /// A shell reading its script from standard input.
    pub(super) fn shell_stdin(&mut self, call: &Call, ctx: &mut Ctx, depth: usize) {
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
    pub(super) fn find_exec(
        &mut self,
        args: &[Word],
        _idx: usize,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
    ) {
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
            // `-exec {} \;` (the program is each file found) or `-exec bash {} \;` (a shell or
            // an interpreter runs each one): code no one has read.
            let program = args.get(i).and_then(|a| a.arg.lit()).unwrap_or("");
            let runs_found = program.contains("{}")
                || (is_code_runner(&base_name(program))
                    && args[i + 1..]
                        .iter()
                        .take_while(|a| a.arg.lit().is_none_or(|s| s != ";" && s != "+"))
                        .any(|a| a.arg.lit().is_some_and(|s| s.contains("{}"))));
            if runs_found {
                self.out.opaque.push(Opaque {
                    what: format!("find {}", root.display()),
                    why: "it runs each file it finds as a program".into(),
                    downloaded: false,
                    origin: ctx.origin.clone(),
                });
            }
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

    /// `parallel CMD ::: ARGS` (a template, like xargs) or `parallel ::: CMD…` (commands).
    pub(super) fn parallel(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let sep = rest
            .iter()
            .position(|w| w.arg.lit().is_some_and(|s| s.starts_with(":::")));
        let start = super::wrappers::skip_options(rest, PARALLEL_VALUE_OPTS);
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
        let Some(t) = join_lits(cmd) else {
            self.push_computed("parallel …".into(), vec![], call, ctx);
            return;
        };
        let opts: Vec<&str> = rest[..start].iter().filter_map(|w| w.arg.lit()).collect();
        let replace = opts
            .iter()
            .position(|o| *o == "-I")
            .and_then(|i| rest.get(i + 1).and_then(|w| w.arg.lit()))
            .unwrap_or("{}");
        let pipe = opts.iter().any(|o| o.starts_with("--pipe"));
        // Each input is a line of its own: appended to the template, or put where `{}` (and
        // `{.}`, `{/}`, `{//}`, `{/.}`) stand. Inputs Forge cannot know (`::::` files, more
        // than one source, standard input) are a value computed at run time.
        let more_sources = inputs
            .iter()
            .any(|w| w.arg.lit().is_some_and(|s| s.starts_with(":::")));
        let known: Vec<Option<String>> = match sep {
            Some(s) if rest[s].arg.lit() == Some(":::") && !more_sources => inputs
                .iter()
                .take(32)
                .map(|w| w.arg.lit().map(str::to_string))
                .collect(),
            None => match &call.stdin {
                Stdin::Text(Arg::Lit(text)) => {
                    text.lines().take(32).map(|l| Some(l.into())).collect()
                }
                _ => vec![None],
            },
            _ => vec![None],
        };
        for input in if pipe { vec![None] } else { known } {
            let line = if pipe {
                t.clone()
            } else {
                parallel_line(&t, replace, input.as_deref())
            };
            let mut sub = ctx.child(ctx.origin.clone());
            self.line(&line, &mut sub, depth + 1);
        }
    }
}

/// One command line of `parallel TEMPLATE ::: INPUT`: the input (quoted; unknown, a variable
/// no one set) replaces the replacement strings, or is appended when there are none.
fn parallel_line(template: &str, replace: &str, input: Option<&str>) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let val = |f: fn(&std::path::Path) -> Option<String>| match input {
        Some(i) => quote(&f(std::path::Path::new(i)).unwrap_or_else(|| i.to_string())),
        None => "\"$__forge_parallel_input\"".to_string(),
    };
    let whole = val(|p| Some(p.to_string_lossy().into_owned()));
    let forms: [(String, String); 5] = [
        (
            "{//}".into(),
            val(|p| p.parent().map(|d| d.to_string_lossy().into_owned())),
        ),
        (
            "{/.}".into(),
            val(|p| p.file_stem().map(|d| d.to_string_lossy().into_owned())),
        ),
        (
            "{/}".into(),
            val(|p| p.file_name().map(|d| d.to_string_lossy().into_owned())),
        ),
        (
            "{.}".into(),
            val(|p| Some(p.with_extension("").to_string_lossy().into_owned())),
        ),
        (replace.to_string(), whole.clone()),
    ];
    if !forms.iter().any(|(k, _)| template.contains(k.as_str())) {
        return format!("{template} {whole}");
    }
    let mut out = template.to_string();
    for (k, v) in &forms {
        out = out.replace(k.as_str(), v);
    }
    out
}

/// GNU parallel's options that take a value as the next word.
const PARALLEL_VALUE_OPTS: &[&str] = &[
    "-j",
    "--jobs",
    "-P",
    "--max-procs",
    "-S",
    "--sshlogin",
    "-a",
    "--arg-file",
    "--delay",
    "--timeout",
    "--joblog",
    "--results",
    "--tmpdir",
    "-N",
    "-n",
    "--max-args",
    "-L",
    "--max-lines",
    "--colsep",
    "-C",
    "-d",
    "--delimiter",
    "--halt",
    "--retries",
    "--workdir",
    "--wd",
    "-I",
    "--env",
    "--memfree",
    "--load",
    "--nice",
    "--tagstring",
    "--tag-string",
    "-E",
    "--block",
    "--sshloginfile",
    "--slf",
];

/// Programs whose output is environment settings for `eval` (`eval "$(ssh-agent -s)"`).
pub(super) const ENV_PRINTERS: [&str; 14] = [
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

/// The interpreter a `#!` line names (`#!/usr/bin/env python3` → `python3`).
pub(super) fn shebang(text: &str) -> Option<String> {
    let first = text.lines().next()?.strip_prefix("#!")?;
    let mut words = first.split_whitespace();
    let prog = base_name(words.next()?);
    if prog == "env" {
        return words.find(|w| !w.starts_with('-')).map(base_name);
    }
    Some(prog)
}

/// `-o V`, `--opt V`, `--opt=V` of a list of names.
pub(super) fn option_value_of(args: &[Word], names: &[&str]) -> Option<String> {
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

/// Programs that run a file named as an argument as code: shells and interpreters.
pub fn is_code_runner(name: &str) -> bool {
    SHELLS.contains(&name)
        || super::INTERPRETERS.contains(&name)
        || matches!(
            name,
            "source" | "." | "Rscript" | "java" | "osascript" | "pwsh"
        )
}

#[cfg(test)]
mod tests {
    use super::super::{Analysis, analyze};

    use std::path::Path;

    fn run(line: &str) -> Analysis {
        analyze(line, Path::new("/repo"), Path::new("/home/u"))
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
}
