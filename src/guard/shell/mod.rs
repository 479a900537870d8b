//! What a shell command line would run, as data: brush-parser's bash parse walked into the
//! commands it starts ([`Invocation`]), the files its redirections write and read, and what
//! could not be known. Nothing here judges; `rules/` does.
//!
//! - `walk.rs` follows the parse: lists, pipelines, compound commands, functions, aliases, the
//!   working folder and variables through all of them;
//! - `expand.rs` performs bash's word expansions (quotes, `$'…'`, braces, `~`, variables and
//!   substitutions whose value is known, globs matched against the disk);
//! - `wrappers.rs` peels wrappers (`sudo`, `env -S`, `strace`, `nohup`, `ssh`, `docker run`,
//!   `xargs`, `find -exec`, …) down to the command they run;
//! - `sources.rs` reads the code a command runs from a file — a script, a Makefile recipe, an
//!   npm script, a patch — when it is in the project or the temp folder (bounded reads).
//!
//! Whatever cannot be known statically is marked so the rules can judge its most dangerous
//! reading: a program name computed at run time ([`Arg::Dyn`]), a folder lost to a `cd`
//! ([`Cwd::unknown`]), code in a file Forge cannot read ([`Opaque`]).

/// Shells and interpreters: programs that run code handed to them, from their input or from a
/// file named on the line.
pub const INTERPRETERS: [&str; 16] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "python2", "perl", "ruby",
    "node", "php", "lua", "deno", "bun",
];

mod elsewhere;
mod embedded;
mod expand;
mod launchers;
mod make;
mod pattern;
mod programs;
mod sed;
mod sources;
mod walk;
mod wrappers;

use std::path::{Path, PathBuf};

pub(crate) use expand::user_home;
pub use expand::{PARENT_PID, ansi_c, expand_braces};
pub(crate) use pattern::component_could_match;
pub(crate) use pattern::glob_match;
pub use pattern::shell_glob_matches;
pub use programs::is_code_runner;
pub use sed::{SedCmd, sed_commands, sed_executes, sed_scripts};
pub use sources::{Content, MAX_SOURCE, read_code_file};
pub use wrappers::find_filtered;

/// Longest command line analysed; longer ones are refused unread.
pub const MAX_LINE: usize = 64 * 1024;
/// Deepest nesting of `bash -c`, `eval`, substitutions, scripts and recipes followed.
pub(crate) const MAX_DEPTH: usize = 12;

/// One argument as the command would receive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Known exactly (quotes removed, known expansions done).
    Lit(String),
    /// Computed at run time. `programs` are the commands run to compute it, if any.
    Dyn { raw: String, programs: Vec<String> },
}

impl Arg {
    pub fn lit(&self) -> Option<&str> {
        match self {
            Arg::Lit(s) => Some(s),
            Arg::Dyn { .. } => None,
        }
    }

    /// The text to show a person.
    pub fn display(&self) -> &str {
        match self {
            Arg::Lit(s) => s,
            Arg::Dyn { raw, .. } => raw,
        }
    }
}

/// One argument after expansion, with whether bash would glob it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub arg: Arg,
    /// The glob pattern (quoted special characters escaped with `\`) when the word has
    /// unquoted `*`, `?` or `[`; bash replaces it with the matching files, or keeps it as it
    /// is when nothing matches.
    pub pattern: Option<String>,
}

impl Word {
    /// A word known exactly, with no glob to expand.
    pub fn lit(s: impl Into<String>) -> Word {
        Word {
            arg: Arg::Lit(s.into()),
            pattern: None,
        }
    }

    pub fn glob(&self) -> bool {
        self.pattern.is_some()
    }
}

/// The folder a command runs in: one path, or a few when it depends on which branch ran
/// (`cd a || cd b`); none when it cannot be known (`cd "$X"`). Relative paths in an unknown
/// folder are unknown — never assumed to be the project.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cwd(Vec<PathBuf>);

/// Most candidate folders kept before the folder counts as unknown.
const MAX_CWDS: usize = 4;

impl Cwd {
    pub fn at(p: impl Into<PathBuf>) -> Cwd {
        Cwd(vec![p.into()])
    }

    pub fn unknown() -> Cwd {
        Cwd(Vec::new())
    }

    pub fn is_known(&self) -> bool {
        !self.0.is_empty()
    }

    /// Every folder it may be; empty when unknown.
    pub fn paths(&self) -> &[PathBuf] {
        &self.0
    }

    /// The folder when there is exactly one.
    pub fn one(&self) -> Option<&Path> {
        match self.0.as_slice() {
            [p] => Some(p),
            _ => None,
        }
    }

    /// Either of two folders (after branches that may or may not have run).
    pub fn either(&self, other: &Cwd) -> Cwd {
        if !self.is_known() || !other.is_known() {
            return Cwd::unknown();
        }
        let mut v = self.0.clone();
        for p in &other.0 {
            if !v.contains(p) {
                v.push(p.clone());
            }
        }
        v.sort();
        if v.len() > MAX_CWDS {
            Cwd::unknown()
        } else {
            Cwd(v)
        }
    }
}

/// Where a command's text came from, for messages and for rules that depend on it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Origin {
    /// The command line itself.
    #[default]
    Line,
    /// A shell script Forge read (run by path, by a shell, or sourced).
    Script(PathBuf),
    /// A Makefile recipe.
    Make { file: PathBuf, target: String },
    /// A `package.json` script (npm, yarn, pnpm, bun).
    Package { file: PathBuf, script: String },
    /// Runs on another machine (`ssh host '…'`): its paths are that machine's.
    Remote(String),
    /// Runs in a container: paths under its bind mounts (container path, host path) are the
    /// host's; any other path is the container's own.
    Container(Vec<(String, PathBuf)>),
    /// Runs later, outside this session (`at`, `crontab`, a tmux pane).
    Later(&'static str),
}

impl Origin {
    /// ` (in scripts/x.sh)` and the like, for messages; empty for the line itself.
    pub fn suffix(&self, root: &Path) -> String {
        let rel = |p: &Path| {
            p.strip_prefix(root)
                .map(|r| r.display().to_string())
                .unwrap_or_else(|_| p.display().to_string())
        };
        match self {
            Origin::Line => String::new(),
            Origin::Script(p) => format!(" (in {})", rel(p)),
            Origin::Make { file, target } => format!(" (recipe `{target}` of {})", rel(file)),
            Origin::Package { file, script } => {
                format!(" (script `{script}` of {})", rel(file))
            }
            Origin::Remote(h) => format!(" (on {h})"),
            Origin::Container(_) => " (in a container)".into(),
            Origin::Later(how) => format!(" (run later by {how})"),
        }
    }
}

impl Origin {
    /// A path as the host sees it: inside a container, through its bind mounts; a container
    /// path no mount covers becomes a path under `scratch` (the container's own files).
    pub fn host_path(&self, raw: &str, scratch: &Path) -> String {
        let Origin::Container(mounts) = self else {
            return raw.to_string();
        };
        if !raw.starts_with('/') {
            return raw.to_string();
        }
        let best = mounts
            .iter()
            .filter(|(dst, _)| {
                let d = dst.trim_end_matches('/');
                raw == d || raw.starts_with(&format!("{d}/")) || d.is_empty()
            })
            .max_by_key(|(dst, _)| dst.len());
        match best {
            Some((dst, host)) => {
                let tail = raw[dst.trim_end_matches('/').len()..].trim_start_matches('/');
                if tail.is_empty() {
                    host.display().to_string()
                } else {
                    host.join(tail).display().to_string()
                }
            }
            None => scratch
                .join(raw.trim_start_matches('/'))
                .display()
                .to_string(),
        }
    }
}

/// Names a command receives at run time (`xargs`, `find -exec … {}`), as far as known.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Names {
    /// No names are appended.
    #[default]
    None,
    /// Exactly these (`echo a b | xargs rm`).
    Known(Vec<String>),
    /// Files under a folder (`find ROOT …`, `git ls-files`, `ls`): `filtered` when a name or
    /// path test narrows them.
    Under { root: Arg, cwd: Cwd, filtered: bool },
    /// Whatever the input says.
    Unknown,
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Stdin {
    #[default]
    None,
    /// An earlier pipeline stage.
    Pipe,
    /// A here-document or here-string, literal or computed.
    Text(Arg),
    /// `< file`.
    File(Word),
}

/// One command the line would run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program, after wrappers; a literal is reduced to its base name (`/bin/rm` → `rm`).
    pub program: Arg,
    /// The program as written, when it was a path (`./deploy.sh`, `/usr/bin/rm`).
    pub path: Option<String>,
    pub args: Vec<Word>,
    /// Wrappers peeled off, outermost first (`sudo`, `env`, `xargs`, …).
    pub wrappers: Vec<String>,
    pub cwd: Cwd,
    /// Indexes (in [`Analysis::invocations`]) of the earlier stages of its pipeline, whose
    /// output it reads.
    pub upstream: Vec<usize>,
    /// Names appended at run time.
    pub names: Names,
    /// Variables in its environment that matter to rules (`GIT_SSH_COMMAND`, …): assignments
    /// before it, `env NAME=…`, and variables exported earlier on the line.
    pub env: Vec<(String, Arg)>,
    pub stdin: Stdin,
    pub origin: Origin,
}

impl Invocation {
    pub fn name(&self) -> Option<&str> {
        self.program.lit()
    }

    /// Literal arguments, with dynamic ones as `None`.
    pub fn lit_args(&self) -> impl Iterator<Item = Option<&str>> {
        self.args.iter().map(|w| w.arg.lit())
    }

    pub fn env_var(&self, name: &str) -> Option<&Arg> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The command as a person would write it, for messages.
    pub fn display(&self) -> String {
        let mut parts = vec![self.program.display().to_string()];
        parts.extend(self.args.iter().map(|a| a.arg.display().to_string()));
        crate::text::clip(&parts.join(" "), 200)
    }
}

/// A file written or read by a redirection (`>`, `>>`, `&>`, `<`).
#[derive(Debug, Clone)]
pub struct Redirect {
    pub target: Word,
    pub cwd: Cwd,
    /// The invocation whose output it is, when one command's.
    pub by: Option<usize>,
    pub origin: Origin,
}

/// Code Forge could not read and so cannot judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opaque {
    /// What runs, for the message (`scripts/x.sh`, `make deploy`).
    pub what: String,
    /// Why it cannot be read.
    pub why: String,
    /// A file a downloader wrote earlier on the same line, now run as code.
    pub downloaded: bool,
    pub origin: Origin,
}

#[derive(Debug, Default)]
pub struct Analysis {
    pub invocations: Vec<Invocation>,
    pub writes: Vec<Redirect>,
    pub reads: Vec<Redirect>,
    /// Why (part of) the line could not be understood.
    pub problems: Vec<String>,
    /// A function that calls itself in a pipeline or in the background: `:(){ :|:& };:`.
    pub fork_bomb: bool,
    pub opaque: Vec<Opaque>,
    /// Files the line writes, copies or downloads, with what is known of their content (by
    /// resolved path): an interpreter that runs one later on the line runs that content.
    pub files: std::collections::HashMap<std::path::PathBuf, Content>,
}

/// What the analysis needs to know about the world: HOME, the repository (for `git
/// rev-parse --show-toplevel`) and the temp folder (for `mktemp`).
#[derive(Debug, Clone)]
pub struct Env {
    pub home: PathBuf,
    pub root: PathBuf,
    pub temp: PathBuf,
}

/// Parses `line` as bash would, in `cwd`.
pub fn analyze_in(line: &str, cwd: &Path, env: &Env) -> Analysis {
    walk::analyze(line, cwd, env)
}

/// [`analyze_in`] knowing only HOME (the repository is taken to be `cwd`): for tests and
/// fuzzing.
pub fn analyze(line: &str, cwd: &Path, home: &Path) -> Analysis {
    let env = Env {
        home: home.to_path_buf(),
        root: cwd.to_path_buf(),
        temp: PathBuf::from("/tmp"),
    };
    analyze_in(line, cwd, &env)
}
