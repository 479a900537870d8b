//! The default policy: what an agent may not do, judged on the parsed commands. Each rule has a
//! stable id (a project rule relaxes a default by naming it) and a reason that says what to do
//! instead.

use std::path::{Path, PathBuf};

use super::paths::{Paths, Place, secret_kind};
use super::shell::{Analysis, Arg, Invocation, Word};
use super::{Decision, Finding};

/// Every default rule id, with a one-line summary (README table, `forge guard rules`).
pub const DEFAULT_RULES: &[(&str, Decision, &str)] = &[
    (
        "unparseable",
        Decision::Deny,
        "a command line that cannot be parsed is judged as its most dangerous reading",
    ),
    (
        "dynamic-program",
        Decision::Deny,
        "a program name computed at run time (`$(echo rm)`, `bash -c \"$X\"`)",
    ),
    (
        "rm-repo",
        Decision::Deny,
        "recursive or mass delete of the repository itself, an ancestor of it, `.git` or `.forge`",
    ),
    (
        "rm-outside-repo",
        Decision::Deny,
        "recursive delete outside the repository (the system temp folder is allowed)",
    ),
    (
        "rm-unknown-target",
        Decision::Deny,
        "recursive delete of a path computed at run time",
    ),
    (
        "find-delete",
        Decision::Deny,
        "`find … -delete` of everything under the repository or outside it",
    ),
    (
        "git-force-push",
        Decision::Deny,
        "`git push --force`/`-f`/`+refspec`/`--mirror`, deleting remote branches",
    ),
    (
        "git-reset-hard",
        Decision::Deny,
        "`git reset --hard` discards uncommitted work",
    ),
    (
        "git-clean",
        Decision::Deny,
        "`git clean -f` deletes untracked files",
    ),
    (
        "git-discard",
        Decision::Deny,
        "`git checkout -- .` / `git restore .` discards every uncommitted change",
    ),
    (
        "git-stash-clear",
        Decision::Deny,
        "`git stash clear` drops every stash",
    ),
    (
        "git-delete-main",
        Decision::Deny,
        "deleting the main/master branch",
    ),
    (
        "git-history-rewrite",
        Decision::Deny,
        "`git rebase`, `filter-branch`, `filter-repo`, `reflog expire`, `update-ref -d`",
    ),
    (
        "git-amend",
        Decision::Ask,
        "`git commit --amend` rewrites the last commit",
    ),
    (
        "no-verify",
        Decision::Deny,
        "`--no-verify` skips the project's commit and push hooks",
    ),
    (
        "disk-wreck",
        Decision::Deny,
        "`dd` to a device, `mkfs`, partitioning, writes to `/dev/…`",
    ),
    (
        "permissions-wreck",
        Decision::Deny,
        "recursive `chmod`/`chown` outside the repository or of it as a whole",
    ),
    ("fork-bomb", Decision::Deny, "a function that spawns itself"),
    (
        "kill-everything",
        Decision::Deny,
        "`kill -9 -1`, `killall5`: every process of the user",
    ),
    (
        "shutdown",
        Decision::Deny,
        "shutdown, reboot, halt, poweroff",
    ),
    (
        "pipe-to-shell",
        Decision::Deny,
        "running downloaded code (`curl … | sh`, `bash <(wget …)`)",
    ),
    (
        "publish",
        Decision::Deny,
        "publishing (`cargo publish`, `npm publish`, `twine upload`, `docker push`, …)",
    ),
    (
        "secrets",
        Decision::Deny,
        "reading or copying secrets (`.env` but not `.env.example`, `~/.ssh`, cloud credentials, `/etc/shadow`)",
    ),
    ("secrets-write", Decision::Ask, "overwriting a secrets file"),
    (
        "write-outside-repo",
        Decision::Deny,
        "writing outside the repository (dotfiles, `/etc`, other projects); the temp folder is allowed",
    ),
    (
        "write-unknown-target",
        Decision::Ask,
        "writing to a path computed at run time",
    ),
    (
        "forge-state",
        Decision::Deny,
        "any agent write to `.forge/`, `.tmp/.forge/` or `.git/`",
    ),
    (
        "agent-config",
        Decision::Deny,
        "editing an agent's settings (`.claude/`, `.codex/`, `.gemini/`), where Forge's hooks are wired",
    ),
    (
        "human-only",
        Decision::Deny,
        "commands for a person: `forge verify --reset-breaker`, `forge hooks`, `forge change use`, raising a budget",
    ),
    (
        "privilege",
        Decision::Ask,
        "`sudo`/`doas`: runs as another user",
    ),
    (
        "inline-code",
        Decision::Ask,
        "inline interpreter code that deletes, writes or runs commands (`python -c`, `perl -e`, `node -e`, `awk '…system(…)'`)",
    ),
    (
        "phase-red-scope",
        Decision::Deny,
        "during a run's red phase, writes outside the slice's test areas",
    ),
    (
        "phase-green-scope",
        Decision::Deny,
        "during a run's green phase, writes to tests or outside the slice's code areas",
    ),
];

pub fn rule_decision(id: &str) -> Decision {
    DEFAULT_RULES
        .iter()
        .find(|(r, _, _)| *r == id)
        .map(|(_, d, _)| *d)
        .unwrap_or(Decision::Deny)
}

fn finding(rule: &'static str, reason: String) -> Finding {
    Finding {
        decision: rule_decision(rule),
        rule: rule.to_string(),
        reason,
    }
}

const SHELLS: [&str; 12] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php",
];
const DOWNLOADERS: [&str; 6] = ["curl", "wget", "fetch", "aria2c", "http", "https"];

/// What a write or read touches, for the checks below.
pub struct Target<'a> {
    pub word: &'a Word,
    pub cwd: Option<&'a Path>,
}

pub struct Judge<'a> {
    pub paths: &'a Paths,
    /// Symlinks made earlier in the same command line (`ln -s ~ h; rm -rf h/`): link → target.
    links: Vec<(PathBuf, PathBuf)>,
    pub findings: Vec<Finding>,
    /// Paths this call writes, resolved (for project path rules and phase scope).
    pub written: Vec<PathBuf>,
}

impl<'a> Judge<'a> {
    pub fn new(paths: &'a Paths) -> Self {
        Judge {
            paths,
            links: Vec::new(),
            findings: Vec::new(),
            written: Vec::new(),
        }
    }

    /// A path as the command sees it, through links made earlier on the same line.
    fn resolve(&self, raw: &str, cwd: &Path) -> PathBuf {
        let p = self.paths.resolve(raw, cwd);
        for (link, target) in self.links.iter().rev() {
            if let Ok(rest) = p.strip_prefix(link) {
                return if rest.as_os_str().is_empty() {
                    target.clone()
                } else {
                    target.join(rest)
                };
            }
        }
        p
    }

    pub fn analysis(&mut self, a: &Analysis) {
        for p in &a.problems {
            self.findings.push(finding(
                "unparseable",
                format!("Forge cannot judge this command safely ({p}); write it as plain commands without computed parts"),
            ));
        }
        if a.fork_bomb {
            self.findings.push(finding(
                "fork-bomb",
                "this defines a function that spawns copies of itself".into(),
            ));
        }
        for w in &a.writes {
            self.write(
                &Target {
                    word: &w.target,
                    cwd: w.cwd.as_deref(),
                },
                "redirects output to",
            );
        }
        for r in &a.reads {
            self.read(&Target {
                word: &r.target,
                cwd: r.cwd.as_deref(),
            });
        }
        for inv in &a.invocations {
            self.invocation(inv);
        }
    }

    fn invocation(&mut self, inv: &Invocation) {
        let shown = inv.display();
        let name = match &inv.program {
            Arg::Dyn { programs, raw } => {
                if programs.iter().any(|p| DOWNLOADERS.contains(&p.as_str())) {
                    self.findings.push(finding(
                        "pipe-to-shell",
                        format!("`{raw}` runs code straight from the network; download the file, review it, then run it"),
                    ));
                } else {
                    self.findings.push(finding(
                        "dynamic-program",
                        format!("the program `{raw}` is computed at run time, so Forge cannot tell what runs; write the command out"),
                    ));
                }
                return;
            }
            Arg::Lit(n) => n.as_str(),
        };
        if inv.wrappers.iter().any(|w| w == "sudo" || w == "doas") {
            self.findings.push(finding(
                "privilege",
                format!("`{shown}` runs with sudo; a person should run it if it is needed"),
            ));
        }
        if SHELLS.contains(&name)
            && (inv.upstream.iter().any(|u| DOWNLOADERS.contains(&u.as_str()))
                || inv.args.iter().any(|a| {
                    matches!(&a.arg, Arg::Dyn { programs, .. } if programs.iter().any(|p| DOWNLOADERS.contains(&p.as_str())))
                }))
        {
            self.findings.push(finding(
                "pipe-to-shell",
                format!("`{}` runs code straight from the network; download the file, review it, then run it", inv.display()),
            ));
        }
        // `rsync --delete SRC DEST` empties DEST of everything SRC lacks: a recursive delete.
        if name == "rsync"
            && inv.lit_args().flatten().any(|a| a.starts_with("--delete"))
            && let Some(dest) = operands(&inv.args).last()
        {
            let as_rm = Invocation {
                program: Arg::Lit("rm".into()),
                args: vec![Word::lit("-r"), (*dest).clone()],
                ..inv.clone()
            };
            self.rm(&as_rm, "rm");
        }
        match name {
            "rm" | "rmdir" | "unlink" | "shred" | "rimraf" => self.rm(inv, name),
            "find" => self.find(inv),
            "git" => self.git(inv),
            "dd" => self.dd(inv),
            "mkfs" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "wipefs" | "mkswap" | "sgdisk"
            | "blkdiscard" => {
                self.findings.push(finding(
                    "disk-wreck",
                    format!("`{shown}` rewrites a disk or partition table"),
                ));
            }
            n if n.starts_with("mkfs.") => {
                self.findings.push(finding(
                    "disk-wreck",
                    format!("`{shown}` formats a file system"),
                ));
            }
            "chmod" | "chown" | "chgrp" => self.perms(inv, name),
            "kill" if inv.lit_args().any(|a| a == Some("-1")) => {
                self.findings.push(finding(
                    "kill-everything",
                    format!(
                        "`{shown}` signals every process you own; kill the one process by its pid"
                    ),
                ));
            }
            "killall5" => self.findings.push(finding(
                "kill-everything",
                format!("`{shown}` signals every process"),
            )),
            "shutdown" | "reboot" | "halt" | "poweroff" => {
                self.findings
                    .push(finding("shutdown", format!("`{shown}` stops the machine")));
            }
            "init" | "telinit" if inv.lit_args().any(|a| matches!(a, Some("0" | "6"))) => {
                self.findings
                    .push(finding("shutdown", format!("`{shown}` stops the machine")));
            }
            "systemctl"
                if inv.lit_args().any(|a| {
                    matches!(
                        a,
                        Some("poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate")
                    )
                }) =>
            {
                self.findings
                    .push(finding("shutdown", format!("`{shown}` stops the machine")));
            }
            "cargo" | "npm" | "pnpm" | "yarn" | "twine" | "gem" | "poetry" | "uv" | "docker"
            | "podman" | "flit" | "hatch" => {
                self.publish(inv, name);
            }
            "forge" => self.forge(inv),
            "python" | "python3" | "python2" | "perl" | "ruby" | "node" | "php" | "awk"
            | "gawk" | "deno" | "bun" => self.inline_code(inv, name),
            _ => {}
        }
        self.operands(inv, name);
        // Record the link only after judging the `ln` itself (its own path is a write).
        // A relative target is relative to the link's folder, as the kernel reads it.
        if name == "ln"
            && has_flag(&inv.args, 's', &["--symbolic"])
            && let Some(cwd) = inv.cwd.as_deref()
        {
            let ops = operands(&inv.args);
            if let (Some(t), Some(l)) = (
                ops.first().and_then(|w| w.arg.lit()),
                ops.get(1).and_then(|w| w.arg.lit()),
            ) {
                let link = self.resolve(l, cwd);
                let base = link
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| cwd.to_path_buf());
                let target = self.resolve(t, &base);
                self.links.push((link, target));
            }
        }
    }

    /// Write and read operands of the common file commands.
    fn operands(&mut self, inv: &Invocation, name: &str) {
        let ops = operands(&inv.args);
        let writes: Vec<&Word> = match name {
            "touch" | "mkdir" | "truncate" | "tee" | "rm" | "rmdir" | "unlink" | "shred" => {
                ops.clone()
            }
            "chmod" | "chown" | "chgrp" => ops.iter().skip(1).copied().collect(),
            // `mv` deletes its sources as surely as it writes its destination.
            "mv" => ops.clone(),
            "cp" | "install" | "ln" | "rsync" => {
                let t = option_value(&inv.args, &["-t", "--target-directory"]);
                match t {
                    Some(t) => vec![t],
                    None => ops.last().copied().into_iter().collect(),
                }
            }
            "git" => git_written(&inv.args),
            "patch" => ops.first().copied().into_iter().collect(),
            "sed" | "perl" if has_flag(&inv.args, 'i', &["--in-place"]) => {
                ops.iter().skip(1).copied().collect()
            }
            "curl" => option_value(&inv.args, &["-o", "--output"])
                .into_iter()
                .collect(),
            "wget" => option_value(
                &inv.args,
                &["-O", "--output-document", "-P", "--directory-prefix"],
            )
            .into_iter()
            .collect(),
            "tar" => option_value(&inv.args, &["-C", "--directory"])
                .into_iter()
                .collect(),
            "unzip" => option_value(&inv.args, &["-d"]).into_iter().collect(),
            _ => vec![],
        };
        let verb = match name {
            "rm" | "rmdir" | "unlink" | "shred" => "deletes",
            "mv" => "moves files to",
            "cp" | "install" | "rsync" => "copies files to",
            _ => "writes",
        };
        let copies = matches!(name, "cp" | "mv" | "install" | "ln" | "rsync");
        for (i, w) in writes.iter().enumerate() {
            // Recursive deletes were judged by `rm`; a plain delete is an ordinary write.
            // A copy into an existing folder (`cp x /tmp/`) writes a file inside it.
            let last = i + 1 == writes.len();
            if copies
                && last
                && let Some(raw) = w.arg.lit()
                && (raw.ends_with('/')
                    || inv
                        .cwd
                        .as_deref()
                        .is_some_and(|c| self.resolve(raw, c).is_dir()))
            {
                let inner = Word {
                    arg: Arg::Lit(format!("{}/_", raw.trim_end_matches('/'))),
                    glob: false,
                    brace: false,
                };
                self.write(
                    &Target {
                        word: &inner,
                        cwd: inv.cwd.as_deref(),
                    },
                    verb,
                );
                continue;
            }
            self.write(
                &Target {
                    word: w,
                    cwd: inv.cwd.as_deref(),
                },
                verb,
            );
        }
        // `… | xargs rm -f`: the files written are whatever the input names.
        let writer = matches!(
            name,
            "rm" | "rmdir"
                | "unlink"
                | "shred"
                | "truncate"
                | "touch"
                | "mv"
                | "cp"
                | "chmod"
                | "chown"
                | "tee"
        );
        if writer && inv.dynamic_tail {
            self.findings.push(finding(
                "write-unknown-target",
                format!(
                    "`{}` changes files named by its input at run time; list them explicitly",
                    inv.display()
                ),
            ));
        }
        if matches!(
            name,
            "echo" | "printf" | ":" | "true" | "false" | "test" | "["
        ) {
            return;
        }
        let is_write = |w: &Word| writes.iter().any(|x| std::ptr::eq(*x, w));
        let data = data_args(inv, name);
        for w in inv.args.iter() {
            if is_write(w) || data.iter().any(|d| std::ptr::eq(*d, w)) {
                continue;
            }
            self.read(&Target {
                word: w,
                cwd: inv.cwd.as_deref(),
            });
        }
    }

    /// A path the command writes (redirect, `cp` destination, `touch`, …).
    pub fn write(&mut self, t: &Target, verb: &str) {
        let raw = match &t.word.arg {
            Arg::Lit(s) => s.as_str(),
            Arg::Dyn { raw, .. } => {
                self.findings.push(finding(
                    "write-unknown-target",
                    format!("this {verb} `{raw}`, a path computed at run time; write the path out so it can be checked"),
                ));
                return;
            }
        };
        let Some(cwd) = t.cwd else {
            self.findings.push(finding(
                "write-unknown-target",
                format!("this {verb} `{raw}` after a `cd` to a folder computed at run time"),
            ));
            return;
        };
        let path = self.resolve(raw, cwd);
        self.written.push(path.clone());
        // Placeholders stand for "a file in this folder" (`cp x dir/`, `find DIR -exec … {}`):
        // name the folder in messages.
        let shown_path = match path.file_name().and_then(|n| n.to_str()) {
            Some("_") | Some("{}") => path.parent().map(|p| format!("a file in {}", p.display())),
            _ => None,
        };
        let shown = shown_path.unwrap_or_else(|| path.display().to_string());
        match self.paths.place(&path) {
            Place::InRepo(_) | Place::Temp | Place::NullDevice | Place::RepoRoot => {
                if let Some(kind) = secret_kind(&path, &self.paths.home) {
                    self.findings.push(finding("secrets-write", format!("this {verb} {shown}, {kind}")));
                }
            }
            Place::Git => self.findings.push(finding(
                "forge-state",
                format!("this {verb} {shown} inside .git/; use git commands instead of editing its files"),
            )),
            Place::ForgeState | Place::ForgeRunState => self.findings.push(finding(
                "forge-state",
                format!("this {verb} {shown}, Forge's own state: agents may not change it; ask the person"),
            )),
            Place::AgentConfig => self.findings.push(finding(
                "agent-config",
                format!("this {verb} {shown}, the agent settings where Forge's hooks are wired; ask the person"),
            )),
            Place::Device => self.findings.push(finding(
                "disk-wreck",
                format!("this {verb} the device {shown}"),
            )),
            Place::RepoAncestor | Place::Outside => self.findings.push(finding(
                "write-outside-repo",
                format!("this {verb} {shown}, outside the repository {}; keep changes inside it (the temp folder is fine)", self.paths.root.display()),
            )),
        }
    }

    /// An operand the command may read: secrets may not be read or copied.
    pub fn read(&mut self, t: &Target) {
        let Arg::Lit(raw) = &t.word.arg else { return };
        // `--file=.env`, `@.env` (curl data) name files too.
        let raw = raw.rsplit_once('=').map_or(raw.as_str(), |(_, v)| v);
        let raw = raw.strip_prefix('@').unwrap_or(raw);
        if raw.is_empty() || raw.starts_with('-') {
            return;
        }
        let Some(cwd) = t.cwd else { return };
        let path = self.resolve(raw, cwd);
        let mut hits = vec![path.clone()];
        if t.word.glob {
            hits.extend(glob_matches(&path));
        }
        for p in hits {
            if let Some(kind) = secret_kind(&p, &self.paths.home) {
                self.findings.push(finding(
                    "secrets",
                    format!("this reads {}, {kind}; agents may not read or copy secrets (use the `.example` file or ask the person)", p.display()),
                ));
                return;
            }
        }
    }

    fn rm(&mut self, inv: &Invocation, name: &str) {
        let recursive = name == "rimraf"
            || (name == "rm" && has_flag(&inv.args, 'r', &["--recursive"]))
            || has_flag(&inv.args, 'R', &[]);
        if !recursive {
            return;
        }
        let shown = inv.display();
        let ops = operands(&inv.args);
        if ops.is_empty() && inv.dynamic_tail {
            self.findings.push(finding(
                "rm-unknown-target",
                format!(
                    "`{}` deletes recursively whatever its input names; list the paths explicitly",
                    inv.display()
                ),
            ));
        }
        for w in ops {
            let raw = match &w.arg {
                Arg::Lit(s) => s.as_str(),
                Arg::Dyn { .. } => {
                    self.findings.push(finding(
                        "rm-unknown-target",
                        format!(
                            "`{shown}` deletes a path computed at run time; write the path out"
                        ),
                    ));
                    continue;
                }
            };
            let Some(cwd) = inv.cwd.as_deref() else {
                self.findings.push(finding(
                    "rm-unknown-target",
                    format!("`{shown}` after a `cd` to a folder computed at run time"),
                ));
                continue;
            };
            // A glob deletes what its folder holds: `*` in the root is the repository's content.
            let target = if w.glob { glob_dir(raw) } else { raw };
            let path = self.resolve(target, cwd);
            let whole = w.glob;
            match self.paths.place(&path) {
                Place::RepoRoot => self.findings.push(finding(
                    "rm-repo",
                    format!(
                        "`{shown}` deletes the {}repository {}; delete only the files you mean",
                        if whole { "contents of the " } else { "" },
                        path.display()
                    ),
                )),
                Place::RepoAncestor => self.findings.push(finding(
                    "rm-repo",
                    format!(
                        "`{shown}` deletes {}, which contains the repository",
                        path.display()
                    ),
                )),
                Place::Git | Place::ForgeState | Place::ForgeRunState => {
                    self.findings.push(finding(
                        "rm-repo",
                        format!(
                            "`{shown}` deletes {}, the repository's history or Forge's state",
                            path.display()
                        ),
                    ))
                }
                Place::Outside | Place::Device => self.findings.push(finding(
                    "rm-outside-repo",
                    format!(
                        "`{shown}` deletes {}, outside the repository {}; delete only inside it",
                        path.display(),
                        self.paths.root.display()
                    ),
                )),
                Place::InRepo(_) | Place::Temp | Place::NullDevice | Place::AgentConfig => {}
            }
        }
    }

    fn find(&mut self, inv: &Invocation) {
        let args: Vec<Option<&str>> = inv.lit_args().collect();
        if !args.contains(&Some("-delete")) {
            return;
        }
        let roots: Vec<&Word> = inv
            .args
            .iter()
            .take_while(|a| {
                a.arg
                    .lit()
                    .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
            })
            .collect();
        const FILTERS: [&str; 14] = [
            "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-mtime", "-mmin",
            "-size", "-newer", "-empty", "-user", "-perm",
        ];
        let filtered = args.iter().any(|a| a.is_some_and(|a| FILTERS.contains(&a)));
        let roots: Vec<Word> = if roots.is_empty() {
            vec![Word::lit(".")]
        } else {
            roots.into_iter().cloned().collect()
        };
        for r in &roots {
            let (Some(raw), Some(cwd)) = (r.arg.lit(), inv.cwd.as_deref()) else {
                self.findings.push(finding(
                    "find-delete",
                    format!(
                        "`{}` deletes under a path computed at run time",
                        inv.display()
                    ),
                ));
                continue;
            };
            let path = self.resolve(raw, cwd);
            let bad = match self.paths.place(&path) {
                Place::RepoRoot => !filtered,
                Place::RepoAncestor
                | Place::Outside
                | Place::Git
                | Place::ForgeState
                | Place::ForgeRunState
                | Place::Device => true,
                _ => false,
            };
            if bad {
                self.findings.push(finding(
                    "find-delete",
                    format!("`{}` deletes files under {}; limit it to a folder inside the repository and a `-name` pattern", inv.display(), path.display()),
                ));
            }
        }
    }

    fn git(&mut self, inv: &Invocation) {
        // Skip global options: `git -C dir -c k=v --no-pager sub …`.
        let args: Vec<Option<&str>> = inv.lit_args().collect();
        let mut i = 0;
        while i < args.len() {
            match args[i] {
                Some("-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") => i += 2,
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        if args.windows(2).any(|w| {
            w[0] == Some("-c")
                && w[1].is_some_and(|v| v.to_ascii_lowercase().starts_with("core.hookspath"))
        }) {
            self.findings.push(finding(
                "no-verify",
                format!(
                    "`{}` switches off the project's git hooks; fix what they report instead",
                    inv.display()
                ),
            ));
        }
        // `git -c alias.x='reset --hard' x`: the subcommand is defined on the spot.
        if args
            .windows(2)
            .any(|w| w[0] == Some("-c") && w[1].is_some_and(|v| v.starts_with("alias.")))
            || args
                .iter()
                .any(|a| a.is_some_and(|a| a.starts_with("--config-env=alias.")))
        {
            self.findings.push(finding(
                "dynamic-program",
                format!("`{}` defines a git alias inline, so the command run is hidden; write the git command out", inv.display()),
            ));
        }
        let Some(Some(sub)) = args.get(i).copied() else {
            return;
        };
        let rest: Vec<Option<&str>> = args[i + 1..].to_vec();
        let has = |f: &str| rest.contains(&Some(f));
        let short = |c: char| {
            rest.iter().any(|a| {
                a.is_some_and(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
            })
        };
        let shown = inv.display();
        if has("--no-verify") || (sub == "commit" && short('n')) {
            self.findings.push(finding(
                "no-verify",
                format!("`{shown}` skips the project's git hooks; fix what they report instead"),
            ));
        }
        match sub {
            "push" => {
                let force = has("--force")
                    || has("--force-with-lease")
                    || rest.iter().any(|a| {
                        a.is_some_and(|a| {
                            a.starts_with("--force-with-lease=")
                                || a.starts_with("--force-if-includes")
                        })
                    })
                    || short('f')
                    || has("--mirror")
                    || has("--delete")
                    || short('d')
                    || rest.iter().any(|a| {
                        a.is_some_and(|a| {
                            !a.starts_with('-') && (a.starts_with('+') || a.starts_with(':'))
                        })
                    });
                if force {
                    self.findings.push(finding("git-force-push", format!("`{shown}` rewrites or deletes remote history; push without force, or ask the person")));
                }
            }
            "reset" if has("--hard") || has("--merge") || has("--keep") => {
                self.findings.push(finding(
                    "git-reset-hard",
                    format!("`{shown}` discards uncommitted work; use `git stash` or commit first"),
                ));
            }
            "clean" => {
                let dry = has("-n") || has("--dry-run") || short('n');
                if !dry && (short('f') || has("--force")) {
                    self.findings.push(finding("git-clean", format!("`{shown}` deletes untracked files; run `git clean -n` and delete what you mean")));
                }
            }
            "checkout" | "restore" => {
                let everything = rest
                    .iter()
                    .any(|a| matches!(a, Some("." | ":/" | "*" | "./")));
                if everything || (sub == "checkout" && (has("-f") || has("--force"))) {
                    self.findings.push(finding("git-discard", format!("`{shown}` discards every uncommitted change; restore single files you changed yourself")));
                }
            }
            "config" if has("--global") || has("--system") => {
                self.findings.push(finding(
                    "write-outside-repo",
                    format!(
                        "`{shown}` changes git settings outside the repository; ask the person"
                    ),
                ));
            }
            "switch" if has("-f") || has("--force") || has("--discard-changes") => {
                self.findings.push(finding(
                    "git-discard",
                    format!("`{shown}` discards uncommitted changes; commit or stash first"),
                ));
            }
            "stash" if has("clear") => {
                self.findings.push(finding(
                    "git-stash-clear",
                    format!("`{shown}` drops every stash"),
                ));
            }
            "branch" => {
                let delete = has("-D") || has("-d") || has("--delete") || short('D');
                let main = rest.iter().any(|a| matches!(a, Some("main" | "master")));
                if delete && main {
                    self.findings.push(finding(
                        "git-delete-main",
                        format!("`{shown}` deletes the main branch"),
                    ));
                }
            }
            "rebase" | "filter-branch" | "filter-repo" | "replace" => {
                self.findings.push(finding(
                    "git-history-rewrite",
                    format!("`{shown}` rewrites history; ask the person"),
                ));
            }
            "reflog" if has("expire") || has("delete") => {
                self.findings.push(finding(
                    "git-history-rewrite",
                    format!("`{shown}` destroys the reflog"),
                ));
            }
            "update-ref" if has("-d") => {
                self.findings.push(finding(
                    "git-history-rewrite",
                    format!("`{shown}` deletes a ref"),
                ));
            }
            "commit" if has("--amend") => {
                self.findings.push(finding(
                    "git-amend",
                    format!("`{shown}` rewrites the last commit; make a new commit instead"),
                ));
            }
            _ => {}
        }
    }

    fn dd(&mut self, inv: &Invocation) {
        for a in inv.lit_args().flatten() {
            if let Some(of) = a.strip_prefix("of=") {
                let cwd = inv.cwd.clone().unwrap_or_else(|| self.paths.root.clone());
                let w = Word::lit(of.to_string());
                self.write(
                    &Target {
                        word: &w,
                        cwd: Some(&cwd),
                    },
                    "writes",
                );
            }
        }
    }

    fn perms(&mut self, inv: &Invocation, name: &str) {
        if !has_flag(&inv.args, 'R', &["--recursive"]) {
            return;
        }
        for w in operands(&inv.args).into_iter().skip(1) {
            let (Some(raw), Some(cwd)) = (w.arg.lit(), inv.cwd.as_deref()) else {
                self.findings.push(finding(
                    "permissions-wreck",
                    format!(
                        "`{}` changes permissions recursively under a path computed at run time",
                        inv.display()
                    ),
                ));
                continue;
            };
            let path = self
                .paths
                .resolve(if w.glob { glob_dir(raw) } else { raw }, cwd);
            if matches!(
                self.paths.place(&path),
                Place::RepoRoot | Place::RepoAncestor | Place::Outside | Place::Device | Place::Git
            ) {
                self.findings.push(finding(
                    "permissions-wreck",
                    format!("`{name} -R` on {} changes permissions of far more than your change; name the files", path.display()),
                ));
            }
        }
    }

    fn publish(&mut self, inv: &Invocation, name: &str) {
        let args: Vec<&str> = inv.lit_args().flatten().collect();
        let sub = args.iter().find(|a| !a.starts_with('-')).copied();
        let publishing = match name {
            "cargo" | "npm" | "pnpm" | "poetry" | "uv" | "flit" | "hatch" => sub == Some("publish"),
            "yarn" => sub == Some("publish") || (sub == Some("npm") && args.contains(&"publish")),
            "twine" => sub == Some("upload"),
            "gem" => sub == Some("push"),
            "docker" | "podman" => {
                sub == Some("push") || (sub == Some("image") && args.contains(&"push"))
            }
            _ => false,
        };
        if publishing {
            self.findings.push(finding(
                "publish",
                format!(
                    "`{}` publishes to a registry; releases are a person's decision",
                    inv.display()
                ),
            ));
        }
    }

    /// Code given inline to an interpreter is not parsed; code that reaches for the file system
    /// or a shell goes to a person.
    fn inline_code(&mut self, inv: &Invocation, name: &str) {
        let args: Vec<&Word> = inv.args.iter().collect();
        let code: Vec<&str> = if name.contains("awk") {
            operands(&inv.args)
                .first()
                .and_then(|w| w.arg.lit())
                .into_iter()
                .collect()
        } else {
            args.windows(2)
                .filter(|w| {
                    matches!(
                        w[0].arg.lit(),
                        Some("-c" | "-e" | "-E" | "--eval" | "-r" | "-p")
                    )
                })
                .filter_map(|w| w[1].arg.lit())
                .collect()
        };
        const RISKY: [&str; 14] = [
            "system",
            "exec",
            "spawn",
            "popen",
            "subprocess",
            "rmtree",
            "remove",
            "unlink",
            "rmSync",
            "rmdir",
            "writeFile",
            "chmod",
            "shutil",
            "child_process",
        ];
        for c in code {
            if let Some(hit) = RISKY.iter().find(|r| c.contains(*r)) {
                self.findings.push(finding(
                    "inline-code",
                    format!("`{}` runs inline {name} code that uses `{hit}`; Forge cannot judge it: put it in a file a person can review, or ask them", crate::text::clip(&inv.display(), 120)),
                ));
                return;
            }
        }
    }

    fn forge(&mut self, inv: &Invocation) {
        let args: Vec<&str> = inv.lit_args().flatten().collect();
        let human = match args.first().copied() {
            // Raising the threshold is as much a person's call as resetting the breaker.
            Some("verify") => {
                args.contains(&"--reset-breaker")
                    || args.iter().any(|a| a.starts_with("--max-failures"))
            }
            Some("hooks") => true,
            Some("change") => args.get(1) == Some(&"use"),
            Some("budget") => args
                .iter()
                .any(|a| matches!(*a, "raise" | "set" | "limit" | "reset")),
            Some("init") => args.contains(&"--force"),
            _ => false,
        };
        if human {
            self.findings.push(finding(
                "human-only",
                format!(
                    "`{}` is for the person supervising the agent: stop and ask them",
                    inv.display()
                ),
            ));
        }
    }
}

/// The paths a git command changes in the working tree (pathspecs of `rm`, `mv`, `checkout`,
/// `restore`, the folder of `clone` and `init`): `git rm .forge/…` is as much an edit of Forge's
/// state as `rm` is.
fn git_written(args: &[Word]) -> Vec<&Word> {
    let mut i = 0;
    while i < args.len() {
        match args[i].arg.lit() {
            Some("-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") => i += 2,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(|w| w.arg.lit()) else {
        return vec![];
    };
    let ops = operands(&args[i + 1..]);
    match sub {
        "rm" | "mv" | "checkout" | "restore" | "init" => ops,
        "clone" => ops.get(1).copied().into_iter().collect(),
        _ => vec![],
    }
}

/// Operands: arguments that are not options (everything after `--`).
fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut after_dashdash = false;
    for a in args {
        match a.arg.lit() {
            Some("--") if !after_dashdash => after_dashdash = true,
            Some(s) if !after_dashdash && s.starts_with('-') && s.len() > 1 => {}
            _ => out.push(a),
        }
    }
    out
}

/// Whether a short flag letter (in any cluster like `-rf`) or a long flag is present.
fn has_flag(args: &[Word], short: char, long: &[&str]) -> bool {
    args.iter()
        .filter_map(|a| a.arg.lit())
        .take_while(|a| *a != "--")
        .any(|a| {
            long.contains(&a)
                || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
        })
}

/// The value of an option given as `-o V`, `--opt V` or `--opt=V`.
fn option_value<'w>(args: &'w [Word], names: &[&str]) -> Option<&'w Word> {
    for (i, a) in args.iter().enumerate() {
        let Some(s) = a.arg.lit() else { continue };
        if names.contains(&s) {
            return args.get(i + 1);
        }
    }
    None
}

/// Arguments that are data, not files: messages, patterns, expressions.
fn data_args<'i>(inv: &'i Invocation, name: &str) -> Vec<&'i Word> {
    let mut out = Vec::new();
    let args = &inv.args;
    for (i, a) in args.iter().enumerate() {
        let Some(s) = a.arg.lit() else { continue };
        let takes_data = match name {
            "git" => matches!(s, "-m" | "--message" | "-e"),
            "grep" | "rg" | "egrep" | "fgrep" | "ag" => matches!(s, "-e" | "--regexp"),
            _ => false,
        };
        if takes_data && let Some(v) = args.get(i + 1) {
            out.push(v);
        }
    }
    // The first operand of grep-like tools and sed/awk scripts is a pattern.
    if matches!(
        name,
        "grep" | "rg" | "egrep" | "fgrep" | "ag" | "sed" | "awk" | "jq"
    ) && let Some(first) = operands(args).first()
    {
        out.push(first);
    }
    out
}

/// Existing files a glob in its last segment matches (`.env*` → `.env`, `.env.local`), at most a
/// few thousand entries of one folder.
fn glob_matches(pattern: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (
        pattern.parent(),
        pattern.file_name().and_then(|n| n.to_str()),
    ) else {
        return vec![];
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    entries
        .take(5000)
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                super::glob::matches(&classes_to_any(name), n)
                    && (!n.starts_with('.') || name.starts_with('.'))
            })
        })
        .map(|e| e.path())
        .collect()
}

/// `[abc]` → `?`: the glob matcher has no character classes, and for finding secrets matching
/// more is the safe side.
fn classes_to_any(pattern: &str) -> String {
    let mut out = String::new();
    let mut in_class = false;
    for c in pattern.chars() {
        match (c, in_class) {
            ('[', false) => {
                in_class = true;
                out.push('?');
            }
            (']', true) => in_class = false,
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

/// The folder part of a glob: `build/*.o` → `build`, `*` → `.`.
fn glob_dir(raw: &str) -> &str {
    let cut = raw.find(['*', '?', '[']).unwrap_or(raw.len());
    let prefix = &raw[..cut];
    match prefix.rfind('/') {
        Some(0) => "/",
        Some(i) => &raw[..i],
        None => ".",
    }
}
