//! From a [`Request`](super::Request) and the facts of the machine ([`Layout`]) to a [`Plan`]:
//! absolute paths for every place of the profile table, and how each is enforced — a Landlock
//! grant, a read-only bind (a control file inside a writable folder), a pinned folder (an
//! ancestor of one, so it cannot be renamed away), a hidden secret (a secret inside a writable
//! folder). Pure: the file system is only read through [`Layout`] and the `exists` oracle, so every
//! rule is testable without a kernel.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use super::profile::{self, Access, Place, Profile};

/// Device files every profile may use; all other devices are raw devices, never opened.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Where agent clients keep working trees of the project inside it (Claude Code's
/// `isolation: "worktree"` subagents: `.claude/worktrees/agent-…/`). Each folder below one is a
/// working tree of the project, not agent config: writable like the project, with its own
/// control files ([`PROJECT_CONTROL`], its `.git` file) read-only, by the guard and the sandbox
/// alike.
pub const AGENT_WORKTREES: &[&str] = &[".claude/worktrees"];

/// The agents' worktrees that exist in `project` (folders, not links: a link there could lead
/// anywhere, and stays the agent config it lies in).
pub fn agent_worktrees(project: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for w in AGENT_WORKTREES {
        let Ok(entries) = std::fs::read_dir(project.join(w)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Forge's and the agents' control folders at the repository root.
/// `.mcp.json` and `.vscode/` hold what a client or an editor starts outside any sandbox (MCP
/// servers, tasks run when the folder opens); so do JetBrains' `.idea/` (run configurations an
/// IDE tool runs), Cursor's `.cursor/` (its `mcp.json`), Zed's `.zed/` (tasks, language
/// servers) and `.devcontainer/` (commands run when the container is built) (red team, round
/// 14).
pub const PROJECT_CONTROL: &[&str] = &[
    ".forge",
    ".tmp/.forge",
    ".claude",
    ".codex",
    ".gemini",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".cursor",
    ".zed",
    ".devcontainer",
];
/// Tool configs at the root of a working tree that make code run on the person's *next*
/// command, outside any sandbox, when a command rewrote them (issue 34, point 5): cargo's
/// `.cargo/` (`runner = "true"` makes every `cargo test` pass; `rustc-wrapper`; the whole
/// folder, since `.cargo/config` beats `.cargo/config.toml`), rustup's toolchain files, npm's,
/// yarn's and pnpm's (`script-shell`, `yarnPath`, `.pnpmfile.cjs`), mise's and asdf's (tasks,
/// `[env]`, tools by path), git hook managers' (lefthook, pre-commit) and CI's workflows (run
/// on the next push with the CI's secrets). Only config a tool reads by itself: a `Makefile`
/// or a test is project code the person reviews. Control files in every profile; the session
/// may write those `sandbox.session_writable` names. A missing one cannot be bound (no
/// placeholder: an empty `rust-toolchain.toml` stops rustup): the hook puts aside what a
/// session's command made of them (docs/sandbox.md, "Tool configs").
pub const TOOL_CONFIG: &[&str] = &[
    ".cargo",
    "rust-toolchain",
    "rust-toolchain.toml",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".mise.toml",
    "mise.toml",
    ".mise.local.toml",
    "mise.local.toml",
    ".tool-versions",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".pre-commit-config.yaml",
    ".github/workflows",
    ".gitlab-ci.yml",
    // direnv runs it on the person's next `cd` into the project, once they allowed it.
    ".envrc",
];

/// The [`TOOL_CONFIG`] names a profile keeps read-only: all of them, but for the session the
/// ones `writable` (`sandbox.session_writable`) lets it change.
pub fn tool_config<'a>(
    profile: Profile,
    writable: &'a [String],
) -> impl Iterator<Item = &'static str> + 'a {
    TOOL_CONFIG
        .iter()
        .copied()
        .filter(move |t| profile != Profile::Session || !writable.iter().any(|w| w == t))
}

/// Control files in git's common folder (shared by worktrees).
pub const GIT_CONTROL: &[&str] = &["config", "hooks", "info", "modules"];
/// The clients' own settings, instructions and hooks under home: a red, green or review agent
/// may write its client's state folder, but what the *next* session of that client would run
/// outside any sandbox (hooks, MCP servers, commands) stays read-only where it exists.
pub const CLIENT_CONTROL: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/CLAUDE.md",
    ".claude/agents",
    ".claude/commands",
    ".claude/skills",
    ".claude/plugins",
    ".claude/hooks",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".codex/AGENTS.md",
    ".codex/rules",
    ".gemini/settings.json",
    ".gemini/GEMINI.md",
    ".gemini/extensions",
];
/// The clients' settings files among [`CLIENT_CONTROL`]: they can hold the client's keys
/// (`"env": {"ANTHROPIC_AUTH_TOKEN": …}`, `apiKeyHelper`). A session's commands have no use for
/// them (the client runs outside, and reads them itself), so the session hides them; where a
/// client runs inside (red, green, review), the other clients' get a redacted view (redact.rs).
pub const CLIENT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/config.toml",
    ".gemini/settings.json",
];
/// Control folders Forge creates, empty, where they are missing inside a writable folder (a
/// missing file cannot be bound, and an empty one may not be valid for its reader).
const PLACEHOLDER_NAMES: &[&str] = &[
    ".forge", ".claude", ".codex", ".gemini", "hooks", "info", "modules",
];

/// An agent client, whose state folders and one credential file a red, green or review sandbox
/// lets it use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    Claude,
    Codex,
    Gemini,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::Claude, Client::Codex, Client::Gemini];

    pub fn as_str(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The client a shell command line starts, from its first word (`claude -p …`,
    /// `/usr/local/bin/codex exec …`); `None` for anything else.
    pub fn from_command(command: &str) -> Option<Client> {
        let first = command.split_whitespace().next()?;
        let name = first.rsplit('/').next()?;
        Client::parse(name)
    }

    /// The files holding the client's credentials, relative to home (Claude Code keeps an API
    /// key in `~/.claude.json` too). The client's own stay readable to it; every other
    /// client's, and all of them in a session, are secrets.
    pub fn credentials(self) -> &'static [&'static str] {
        match self {
            Client::Claude => &[".claude/.credentials.json", ".claude.json"],
            Client::Codex => &[".codex/auth.json"],
            Client::Gemini => &[".gemini/oauth_creds.json"],
        }
    }
}

/// Facts of the machine a plan needs, gathered once by [`Layout::probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The repository root, canonical.
    pub project: PathBuf,
    pub home: PathBuf,
    /// The repository's own git folder (`.git`, or a worktree's folder under the main one).
    pub git_dir: Option<PathBuf>,
    /// Git's common folder (objects, refs, config, hooks): the same as `git_dir` except in a
    /// linked worktree.
    pub git_common: Option<PathBuf>,
    /// `.git` is a file (a linked worktree or a submodule): it is a control file itself.
    pub git_file: bool,
    /// The folders of the repository's linked worktrees (`<common>/worktrees/*`).
    pub linked_worktrees: Vec<PathBuf>,
    /// Every `core.hooksPath` set in the config git reads here (the user's, the repository's,
    /// the worktrees', what they include), absolute: where git runs hooks from (husky's
    /// `.husky/_`), control folders like `.git/hooks`. All of them, not git's winner: which one
    /// wins depends on where git runs.
    pub hooks_paths: Vec<PathBuf>,
    /// `extensions.worktreeConfig` is on: git reads each worktree's `config.worktree`, so a
    /// missing one is created empty and kept read-only.
    pub worktree_config: bool,
    /// Every other config file git reads here: the system's and the user's (where git's
    /// environment names them, see [`GitEnv`]) and what any of them includes (`include.path`,
    /// `includeIf.*.path`), wherever they lie.
    pub git_includes: Vec<PathBuf>,
    /// Top-level `.env*` files of the project (not `.example`, `.sample`, `.template`).
    pub env_files: Vec<PathBuf>,
    /// The system's temporary folder (`$TMPDIR` or `/tmp`).
    pub system_tmp: PathBuf,
    /// Files the layout was read from (`.git` as a file, git's config files, `commondir`,
    /// worktrees' `gitdir`) and folders it listed (the project, `worktrees/`): what a reused
    /// plan must see unchanged, besides the entries on the way to its paths (`keeper.rs`).
    pub read: Vec<PathBuf>,
    pub listed: Vec<PathBuf>,
    /// Where the control files under home that are links (a dotfiles repository's
    /// `~/.gitconfig`, `~/.claude/settings.json`) lead: home is read-only, their targets may not
    /// be (red team, round 15: a `.gitconfig` linked into the project was written inside and
    /// the person's next `git` ran its `core.fsmonitor`).
    pub linked_control: Vec<PathBuf>,
}

impl Layout {
    /// Reads the few facts a plan needs: where git keeps its files, the project's `.env` files.
    /// No process is started (`git rev-parse` would cost more than the whole sandbox).
    pub fn probe(project: &Path, home: &Path) -> std::io::Result<Layout> {
        Layout::probe_in(project, home, &GitEnv::current())
    }

    /// [`Layout::probe`] with git's environment given.
    pub fn probe_in(project: &Path, home: &Path, git_env: &GitEnv) -> std::io::Result<Layout> {
        let project = project.canonicalize()?;
        let dot_git = project.join(".git");
        let mut read = Vec::new();
        let mut listed = vec![project.clone()];
        let (git_dir, git_file) = match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => (Some(dot_git), false),
            Ok(m) if m.is_file() => {
                read.push(dot_git.clone());
                let text = std::fs::read_to_string(&dot_git).unwrap_or_default();
                let dir = text
                    .lines()
                    .find_map(|l| l.strip_prefix("gitdir:"))
                    .map(|d| project.join(d.trim()));
                (dir.and_then(|d| d.canonicalize().ok()), true)
            }
            _ => (None, false),
        };
        let git_common = git_dir.as_ref().map(|d| {
            if !is_linked_worktree_dir(d) {
                // A `.git` folder, or a submodule's under `.git/modules/`, is git's common
                // folder itself. Git writes `commondir` only in a linked worktree's folder
                // (`<common>/worktrees/<name>/`); one anywhere else was planted to move where git
                // finds its config and hooks, and the plan must not follow it.
                return d.clone();
            }
            read.push(d.join("commondir"));
            std::fs::read_to_string(d.join("commondir"))
                .ok()
                .and_then(|c| d.join(c.trim()).canonicalize().ok())
                .unwrap_or_else(|| d.clone())
        });
        let mut env_files = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&project) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_ascii_lowercase();
                if is_env_secret(&name)
                    && e.file_type()
                        .is_ok_and(|t| hidden_entry(&project, &e.path(), t, &name))
                {
                    env_files.push(e.path());
                }
            }
        }
        env_files.sort();
        listed.extend(git_common.as_ref().map(|c| c.join("worktrees")));
        let linked_worktrees: Vec<PathBuf> = git_common
            .as_ref()
            .and_then(|c| std::fs::read_dir(c.join("worktrees")).ok())
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        let facts = git_config_files(git_common.as_deref(), home, git_env);
        // A relative `core.hooksPath` is relative to each worktree git runs in: this one, and
        // every linked worktree (one inside the project is as writable as the project).
        let worktree_roots: Vec<PathBuf> = std::iter::once(project.clone())
            .chain(linked_worktrees.iter().filter_map(|w: &PathBuf| {
                // `worktree.useRelativePaths` writes it relative to this folder.
                read.push(w.join("gitdir"));
                let gitdir = std::fs::read_to_string(w.join("gitdir")).ok()?;
                let gitdir = w.join(gitdir.trim());
                let gitdir = lexical_no_climb(&gitdir).unwrap_or(gitdir);
                Some(gitdir.parent()?.to_path_buf())
            }))
            .collect();
        let mut hooks_paths = Vec::new();
        for h in facts.hooks_paths {
            if let Some(rest) = h.strip_prefix("~/") {
                hooks_paths.push(home.join(rest));
            } else if Path::new(&h).is_absolute() {
                hooks_paths.push(PathBuf::from(&h));
            } else {
                hooks_paths.extend(worktree_roots.iter().map(|w| w.join(&h)));
            }
        }
        // As written and as the kernel resolves them: a path named through a link
        // (`~/link/.githooks` with `~/link` → the project) is the project's.
        let as_resolved = |v: Vec<PathBuf>| -> Vec<PathBuf> {
            let mut out = Vec::new();
            for p in v {
                let r = resolved(&p);
                push_unique(&mut out, p);
                push_unique(&mut out, r);
            }
            out
        };
        let hooks_paths = as_resolved(hooks_paths);
        let git_includes = as_resolved(facts.outer.into_iter().chain(facts.includes).collect());
        read.extend(facts.read);
        listed.extend(facts.listed);
        let mut linked_control = Vec::new();
        for p in user_git_configs(home, git_env)
            .into_iter()
            .chain(CLIENT_CONTROL.iter().map(|c| home.join(c)))
        {
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                let target = p.canonicalize().unwrap_or_else(|_| resolved(&p));
                read.push(p);
                push_unique(&mut linked_control, target);
            }
        }
        let system_tmp = system_tmp();
        Ok(Layout {
            project,
            home: home.to_path_buf(),
            git_dir,
            git_common,
            git_file,
            linked_worktrees,
            hooks_paths,
            worktree_config: facts.worktree_config,
            git_includes,
            env_files,
            system_tmp,
            read,
            listed,
            linked_control,
        })
    }

    /// The default private TMPDIR of a profile in this project:
    /// `<system tmp>/forge-sandbox-<uid>/<project name>-<hash>/<profile>`.
    pub fn default_tmpdir(&self, profile: Profile) -> PathBuf {
        default_tmpdir(&self.project, &self.system_tmp, profile)
    }
}

/// A linked worktree's own folder, `<common>/worktrees/<name>`: the one place git writes a
/// `commondir`.
pub fn is_linked_worktree_dir(d: &Path) -> bool {
    d.parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "worktrees")
}

impl Layout {
    /// A `commondir` in git's common folder, where git never writes one: planted to make git
    /// read its config and hooks elsewhere.
    pub fn planted_commondir(&self) -> Option<PathBuf> {
        let c = self.git_common.as_ref()?.join("commondir");
        std::fs::symlink_metadata(&c).ok().map(|_| c)
    }
}

/// What a plan needs from git's config files.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GitConfigFacts {
    /// Every `core.hooksPath` value, as written.
    pub hooks_paths: Vec<String>,
    pub worktree_config: bool,
    /// `include.path` and `includeIf.*.path` values, resolved (see [`git_config_files`]).
    pub includes: Vec<PathBuf>,
    /// The system's and the user's config files, as git's environment names them.
    pub outer: Vec<PathBuf>,
    /// Every file it tried to read, and the `worktrees/` folder it listed.
    pub read: Vec<PathBuf>,
    pub listed: Vec<PathBuf>,
}

/// `core.hooksPath`, `extensions.worktreeConfig` and the include paths of one git config file's
/// text (git's syntax: `[section]` or `[section "sub"]` headers, possibly followed by a key on
/// the same line; case-insensitive keys; quoted values; `#` and `;` comments).
pub fn git_config_facts(text: &str) -> (Option<String>, bool, Vec<String>) {
    let mut section = String::new();
    let mut hooks = None;
    let mut worktree = false;
    let mut includes = Vec::new();
    for line in text.lines() {
        let mut l = line.trim();
        if l.starts_with('#') || l.starts_with(';') || l.is_empty() {
            continue;
        }
        if let Some(h) = l.strip_prefix('[') {
            let Some((header, rest)) = h.split_once(']') else {
                continue;
            };
            let name = header.trim();
            section = match name.split_once([' ', '"']) {
                Some((sec, _)) => sec.to_ascii_lowercase(),
                None => name.to_ascii_lowercase(),
            };
            // `includeIf "gitdir:…"` and `include` both carry `path`.
            if section == "includeif" {
                section = "include".into();
            }
            l = rest.trim();
            if l.is_empty() {
                continue;
            }
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let v = v.trim();
        let v = v
            .split([';', '#'])
            .next()
            .unwrap_or(v)
            .trim()
            .trim_matches('"');
        match (section.as_str(), k.trim().to_ascii_lowercase().as_str()) {
            ("core", "hookspath") => hooks = Some(v.to_string()),
            ("extensions", "worktreeconfig") => {
                worktree = matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1")
            }
            ("include", "path") => includes.push(v.to_string()),
            _ => {}
        }
    }
    (hooks, worktree, includes)
}

/// The facts of every git config file git may read here — the system's and the user's (as
/// [`GitEnv::config_files`] finds them), the settings of git's environment, the repository's
/// (`<common>/config`), the worktrees' `config.worktree` — following includes as deep as git
/// does (10 levels). A relative include is relative to the file that names it, `~/` to home.
pub fn git_config_files(common: Option<&Path>, home: &Path, env: &GitEnv) -> GitConfigFacts {
    let mut facts = GitConfigFacts {
        outer: env.config_files(home),
        ..GitConfigFacts::default()
    };
    let mut queue: Vec<(PathBuf, u8)> = facts.outer.iter().map(|p| (p.clone(), 0)).collect();
    for (key, value) in env.settings() {
        match key.as_str() {
            "core.hookspath" => facts.hooks_paths.push(value),
            "extensions.worktreeconfig" => facts.worktree_config |= is_true(&value),
            // Git refuses a relative include from the environment: it has no file to be
            // relative to.
            k if k.ends_with(".path")
                && (k.starts_with("include.") || k.starts_with("includeif.")) =>
            {
                let p = match value.strip_prefix("~/") {
                    Some(rest) => home.join(rest),
                    None => PathBuf::from(&value),
                };
                if p.is_absolute() {
                    let p = lexical_no_climb(&p).unwrap_or(p);
                    facts.includes.push(p.clone());
                    queue.push((p, 1));
                }
            }
            _ => {}
        }
    }
    if let Some(c) = common {
        queue.push((c.join("config"), 0));
        queue.push((c.join("config.worktree"), 0));
        facts.listed.push(c.join("worktrees"));
        if let Ok(rd) = std::fs::read_dir(c.join("worktrees")) {
            for e in rd.flatten() {
                queue.push((e.path().join("config.worktree"), 0));
            }
        }
    }
    let mut i = 0;
    while i < queue.len() && i < 256 {
        let (file, depth) = queue[i].clone();
        i += 1;
        facts.read.push(file.clone());
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let (hooks, worktree, includes) = git_config_facts(&text);
        facts.hooks_paths.extend(hooks);
        facts.worktree_config |= worktree;
        for inc in includes {
            let p = match inc.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => file.parent().unwrap_or(Path::new("/")).join(inc),
            };
            let p = lexical_no_climb(&p).unwrap_or(p);
            facts.includes.push(p.clone());
            if depth < 10 {
                queue.push((p, depth + 1));
            }
        }
    }
    facts
}

/// Git's spellings of true.
fn is_true(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1")
}

/// Git's environment, as far as its config goes: `XDG_CONFIG_HOME` and every `GIT_CONFIG*`
/// variable. The person's own `git` in this project runs in the environment the agent was
/// started from, which is this process's; a command in the sandbox cannot change it for them.
/// Red team, round 15: a `GIT_CONFIG_GLOBAL` naming a file in the project, or a system config
/// whose `core.hooksPath` is a project folder, could be written from inside.
#[derive(Debug, Default, Clone, PartialEq, Eq, Hash)]
pub struct GitEnv(pub Vec<(OsString, OsString)>);

impl GitEnv {
    pub fn current() -> GitEnv {
        let mut vars: Vec<_> = std::env::vars_os()
            .filter(|(k, _)| {
                k.as_encoded_bytes().starts_with(b"GIT_CONFIG") || k == "XDG_CONFIG_HOME"
            })
            .collect();
        vars.sort();
        GitEnv(vars)
    }

    fn get(&self, name: &str) -> Option<&OsStr> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_os_str())
    }

    fn text(&self, name: &str) -> Option<String> {
        self.get(name).map(|v| v.to_string_lossy().into_owned())
    }

    /// The config files git reads before the repository's, in git's order: the system's
    /// (`$GIT_CONFIG_SYSTEM`, else `/etc/gitconfig`, and `/usr/local/etc/gitconfig` for a git
    /// built under `/usr/local`; none with `GIT_CONFIG_NOSYSTEM`), then the user's
    /// (`$GIT_CONFIG_GLOBAL` alone, else `~/.gitconfig` and the XDG one). An empty name is no
    /// file; a relative one is relative to the working folder, as for git.
    pub fn config_files(&self, home: &Path) -> Vec<PathBuf> {
        let named = |v: &OsStr| -> Option<PathBuf> {
            (!v.is_empty()).then(|| std::path::absolute(v).unwrap_or_else(|_| PathBuf::from(v)))
        };
        let mut out = Vec::new();
        if !self
            .text("GIT_CONFIG_NOSYSTEM")
            .is_some_and(|v| is_true(&v))
        {
            match self.get("GIT_CONFIG_SYSTEM") {
                Some(v) => out.extend(named(v)),
                None => {
                    out.extend(["/etc/gitconfig", "/usr/local/etc/gitconfig"].map(PathBuf::from))
                }
            }
        }
        match self.get("GIT_CONFIG_GLOBAL") {
            Some(v) => out.extend(named(v)),
            None => out.extend(user_git_configs(home, self)),
        }
        out
    }

    /// The settings git's environment adds: `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` and
    /// `GIT_CONFIG_VALUE_<n>`, and `GIT_CONFIG_PARAMETERS` (what `git -c key=value` passes to
    /// the programs it runs). Keys lower-cased.
    pub fn settings(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let count = self
            .text("GIT_CONFIG_COUNT")
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(0);
        for i in 0..count.min(1024) {
            if let (Some(k), Some(v)) = (
                self.text(&format!("GIT_CONFIG_KEY_{i}")),
                self.text(&format!("GIT_CONFIG_VALUE_{i}")),
            ) {
                out.push((k.to_ascii_lowercase(), v));
            }
        }
        if let Some(params) = self.text("GIT_CONFIG_PARAMETERS") {
            out.extend(
                config_parameters(&params)
                    .into_iter()
                    .map(|(k, v)| (k.to_ascii_lowercase(), v)),
            );
        }
        out
    }
}

/// `GIT_CONFIG_PARAMETERS`' pairs: shell single-quoted words (a `'` inside written `'\''`),
/// each `'key'='value'` (git ≥ 2.31) or `'key=value'`, separated by spaces.
fn config_parameters(s: &str) -> Vec<(String, String)> {
    let mut chars = s.chars().peekable();
    // One word: quoted runs, and the `\'` and `\!` git writes between them.
    let word = |chars: &mut std::iter::Peekable<std::str::Chars>| -> String {
        let mut w = String::new();
        loop {
            match chars.peek() {
                Some('\'') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                        w.push(c);
                    }
                }
                Some('\\') => {
                    chars.next();
                    w.extend(chars.next());
                }
                _ => return w,
            }
        }
    };
    let mut out = Vec::new();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return out;
        }
        let key = word(&mut chars);
        if chars.peek() == Some(&'=') {
            chars.next();
            out.push((key, word(&mut chars)));
        } else if let Some((k, v)) = key.split_once('=') {
            out.push((k.to_string(), v.to_string()));
        } else if key.is_empty() {
            chars.next(); // not git's format: step over a character rather than stop
        }
    }
}

/// The user's own git config files: `~/.gitconfig` and the XDG one.
fn user_git_configs(home: &Path, env: &GitEnv) -> [PathBuf; 2] {
    let xdg = env
        .get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    [home.join(".gitconfig"), xdg.join("git/config")]
}

/// The system's temporary folder: `$TMPDIR` when absolute, else `/tmp`.
pub fn system_tmp() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// `<system tmp>/forge-sandbox-<uid>/<project name>-<hash>/<profile>`: private to the user, the
/// project (canonical path) and the profile. The hook computes it too, to place its `cwd` file.
pub fn default_tmpdir(project: &Path, system_tmp: &Path, profile: Profile) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    project.hash(&mut h);
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    // SAFETY: getuid(2) cannot fail and touches no memory.
    let uid = unsafe { nix::libc::getuid() };
    system_tmp
        .join(format!("forge-sandbox-{uid}"))
        .join(format!("{name}-{:08x}", h.finish() as u32))
        .join(profile.as_str())
}

/// `.env`, `.env.local`, `.env.production` are secrets; `.env.example` and friends are not. So
/// are direnv's `.envrc` and `.envrc.local`, which export the same tokens into every shell that
/// enters the folder (red team, round 13). Names in any case: on a case-insensitive file system
/// `.ENV` is `.env`. The guard refuses reading what this names, in any folder.
pub fn is_env_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [".env", ".envrc"].iter().any(|stem| {
        name.strip_prefix(stem)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    }) && ![".example", ".sample", ".template", ".dist", ".defaults"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Folders the search for secrets in the project does not enter: git's own, and the big ones
/// tools make and fill (dependencies, build output, virtual environments), where no person keeps
/// a credential and a walk would cost the most. A link is never followed.
const UNSEARCHED: [&str; 8] = [
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".direnv",
];

/// How many entries the search for secrets in the project looks at, at most: a checkout of
/// 100,000 files is listed in well under a second, and a plan is made once per session. Past
/// it the sandbox refuses to start rather than leave what it did not look at readable (red
/// team, round 15: half a million hard links to one file hid `services/api/.env` from a search
/// that stopped at its limit).
const SEARCH_LIMIT: usize = 1_000_000;

/// Every entry of the project whose name says it holds credentials
/// ([`crate::secrets::file_name_kind`]: `config/.env`, `deploy/.pgpass`, `keys/id_ed25519`),
/// at any depth but in [`UNSEARCHED`] folders and Forge's own ([`hidden_entry`] says which
/// are hidden): the sandbox hides each one, as it hides the home folder's. Red team, round 15:
/// `grep -rn TOKEN .` in a session printed `config/.env`, only the project's top-level `.env`
/// files being hidden. Found when the plan is made: a file made later is hidden from the next
/// plan on (docs/sandbox.md). `Err` with the number of entries looked at when the search
/// stopped at [`SEARCH_LIMIT`].
pub fn project_secrets(project: &Path) -> Result<Vec<PathBuf>, usize> {
    project_secrets_within(project, SEARCH_LIMIT)
}

/// [`project_secrets`], looking at `limit` entries at most.
fn project_secrets_within(project: &Path, limit: usize) -> Result<Vec<PathBuf>, usize> {
    let mut out = Vec::new();
    let mut folders = vec![project.to_path_buf()];
    // Forge's own run state: checkouts of the project's commits, caches.
    let forge_tmp = project.join(crate::repo::TMP_DIR);
    let mut looked = 0;
    while let Some(dir) = folders.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            looked += 1;
            if looked > limit {
                return Err(limit);
            }
            let Ok(t) = e.file_type() else { continue };
            let raw = e.file_name();
            let b = raw.as_encoded_bytes();
            // Every name `file_name_kind` knows begins with `.`, `_` or `id_`: the others are
            // passed over without a copy (the walk costs ~0.6 µs an entry).
            if matches!(b.first(), Some(b'.' | b'_' | b'i' | b'I')) {
                let name = raw.to_string_lossy().to_ascii_lowercase();
                let p = e.path();
                if hidden_entry(project, &p, t, &name) {
                    out.push(p);
                    continue;
                }
            }
            // By its exact name: on a case-sensitive disk `Target/` is not cargo's.
            if t.is_dir() && !UNSEARCHED.iter().any(|u| u.as_bytes() == b) {
                let p = e.path();
                if p != forge_tmp {
                    folders.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether the project's entry `path`, named `lower` (in lower case), of type `t` (not
/// followed), is a secret the sandbox hides: a file named as credentials; a folder named as an
/// environment file (`.env/`) unless it is a Python virtual environment (`pyvenv.cfg`: `python
/// -m venv .env` is a common spelling); a link so named when it leads to a file of the project
/// or home that is itself named as credentials (`apps/api/.env` → `../../.env.shared`, or
/// `envs/prod.env`). Only
/// that: the cover is put on what the link leads to, so a link an agent made must not choose
/// it (red team, round 15: `.env.d → src` hid the sources, `src/.env → ..` stopped every
/// command, `.env.proc → /proc` covered `/proc`).
pub fn hidden_entry(project: &Path, path: &Path, t: std::fs::FileType, lower: &str) -> bool {
    if crate::secrets::file_name_kind(lower).is_none() {
        return false;
    }
    if t.is_file() {
        return true;
    }
    if t.is_dir() {
        return is_env_secret(lower) && !path.join("pyvenv.cfg").exists();
    }
    if !t.is_symlink() {
        return false;
    }
    let Ok(target) = path.canonicalize() else {
        return false;
    };
    // `.env → envs/prod.env` is the common spelling of a link to a secret's file.
    let named = target
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|n| crate::secrets::file_name_kind(&n).is_some() || n.ends_with(".env"));
    named
        && std::fs::metadata(&target).is_ok_and(|m| m.is_file())
        && (target.starts_with(project) || target.starts_with(crate::repo::home()))
}

/// What a plan was read from, beyond its request and the environment: the entries on the way
/// to each of its paths, the folders whose listing it used, the files it read and the links it
/// followed. `keeper.rs` reuses a plan while all of it is as it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Basis {
    /// Each folder on the way to a path of the plan, with its entries on the way.
    pub entries: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Folders whose whole listing the plan used (the project's `.env` files).
    pub listed: Vec<PathBuf>,
    /// Files read, and links followed: their contents or targets.
    pub read: Vec<PathBuf>,
}

impl Basis {
    /// The basis of a plan of `paths` (each with every folder on its way), with the folders
    /// `listed` and the files `read`.
    pub fn of<'a>(
        paths: impl IntoIterator<Item = &'a Path>,
        listed: Vec<PathBuf>,
        read: Vec<PathBuf>,
    ) -> Basis {
        use std::collections::HashMap;
        let mut at: HashMap<std::ffi::OsString, usize> = HashMap::new();
        let mut entries: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
        let mut known: std::collections::HashSet<std::ffi::OsString> = Default::default();
        let read_paths: Vec<PathBuf> = read.clone();
        for p in paths.into_iter().map(Path::to_path_buf).chain(read_paths) {
            for child in p.ancestors() {
                let Some(dir) = child.parent() else { break };
                if !known.insert(child.as_os_str().to_owned()) {
                    break; // its own way up is known already
                }
                let i = *at.entry(dir.as_os_str().to_owned()).or_insert_with(|| {
                    entries.push((dir.to_path_buf(), Vec::new()));
                    entries.len() - 1
                });
                entries[i].1.push(child.to_path_buf());
            }
        }
        Basis {
            entries,
            listed,
            read,
        }
    }
}

/// What a sandbox is asked to allow, in the caller's words (globs, `~/…`), before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wants {
    pub profile: Profile,
    /// Writable areas: globs relative to the project (`tests/**`) or absolute folders.
    pub write: Vec<String>,
    pub answer: Option<PathBuf>,
    pub tmpdir: Option<PathBuf>,
    pub caches: Vec<String>,
    pub client: Option<Client>,
    pub client_state: Vec<String>,
    pub secrets: Vec<String>,
    /// The caller's `PATH` folders: those inside a writable folder stay read-only, since what
    /// lies there runs by name outside the sandbox too (the client's `git`, a person's shell).
    pub path: Vec<PathBuf>,
    /// Folders kept read-only wherever they lie (absolute): the checks' environments.
    pub keep_read_only: Vec<PathBuf>,
    /// What under home the profile may read besides its other places ([`super::allow`]):
    /// the rest of home is a hole.
    pub home_read: Vec<PathBuf>,
    /// [`TOOL_CONFIG`] names the session may write (`sandbox.session_writable`).
    pub session_writable: Vec<String>,
}

/// Everything the enforcement needs, as absolute paths.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// Each place's paths, for explanations and [`Plan::place_of`].
    pub places: Vec<(Place, PathBuf)>,
    /// Landlock: folders and files the profile may write (they exist).
    pub write: Vec<PathBuf>,
    /// Landlock: paths no rule may cover for reading (secrets, raw devices), unless under a
    /// writable folder — those are in `hide`.
    pub holes: Vec<PathBuf>,
    /// Landlock: read grants inside holes (the own credential, the usable devices).
    pub read_inside_holes: Vec<PathBuf>,
    /// Mount namespace: control files inside writable folders, bound read-only onto themselves.
    pub read_only: Vec<PathBuf>,
    /// Mount namespace: folders between a writable folder and a control file, bound onto
    /// themselves so they cannot be renamed away (a mount point cannot be moved or removed).
    pub pin: Vec<PathBuf>,
    /// Mount namespace: secrets inside writable folders, covered by an empty read-only file.
    pub hide: Vec<PathBuf>,
    /// Control folders to create, empty, before binding (so an agent cannot create them), and
    /// to remove once no namespace binds them (sweep.rs).
    pub placeholders: Vec<PathBuf>,
    /// Control files to create, empty, before binding: `config.worktree` where git reads it.
    /// Removed likewise.
    pub placeholder_files: Vec<PathBuf>,
    /// Folders that do not exist yet — writable areas, a client's state folders — created
    /// before the sandbox starts.
    pub create_areas: Vec<PathBuf>,
    /// Writable paths that lie inside a read-only bind and are bound writable again after it.
    pub rebind_writable: Vec<PathBuf>,
    /// The private TMPDIR (created by the launcher, mode 0700).
    pub tmpdir: PathBuf,
    /// Problems that make the plan impossible to enforce as written (a control file that is a
    /// symbolic link inside a writable folder).
    pub problems: Vec<String>,
    /// What makes the walls a pretence, in any `sandbox.mode`: a control file or a secret with
    /// a second name the plan does not know (a hard link). The sandbox refuses to start.
    #[serde(default)]
    pub refusals: Vec<String>,
    /// `/dev` is replaced by a private one holding only [`DEVICES`] (mount namespace).
    pub private_dev: bool,
    /// Mount namespace: config files the profile reads that hold a credential, each covered by
    /// a read-only copy with it redacted (redact.rs).
    #[serde(default)]
    pub views: Vec<super::redact::View>,
}

impl Plan {
    /// The place `path` belongs to: the place with the longest path that contains it (ties go
    /// to the more specific place of [`Place::ALL`]). `System` when nothing else contains it.
    pub fn place_of(&self, path: &Path) -> Place {
        let mut best: Option<(usize, Place)> = None;
        for (place, p) in &self.places {
            if within(path, p) {
                let len = p.as_os_str().len();
                let better = match best {
                    None => true,
                    Some((l, bp)) => len > l || (len == l && *place < bp),
                };
                if better {
                    best = Some((len, *place));
                }
            }
        }
        best.map(|(_, p)| p).unwrap_or(Place::System)
    }

    /// What `profile` may do with `path` — the same answer the kernel gives.
    pub fn access(&self, profile: Profile, path: &Path) -> Access {
        profile::access(profile, self.place_of(path))
    }

    pub fn can_write(&self, profile: Profile, path: &Path) -> bool {
        self.access(profile, path) == Access::Write
    }

    pub fn can_read(&self, profile: Profile, path: &Path) -> bool {
        self.access(profile, path) >= Access::Read
    }

    /// Moves every secret from the read holes to the mount binds (`/dev` stays a hole): with a
    /// mount namespace, hiding a secret costs two mounts, while a hole splits its folder into a
    /// read rule per entry.
    pub fn hide_secrets_by_mount(&mut self) {
        let secrets: Vec<PathBuf> = self
            .holes
            .iter()
            .filter(|h| self.place_of(h) == Place::Secrets)
            .cloned()
            .collect();
        self.holes.retain(|h| !secrets.contains(h));
        // Each one covered even inside home's hole: Landlock below ABI 9 does not stop a
        // `connect()` to a socket there (Docker Desktop's `~/.docker/run/docker.sock`, an SSH
        // agent's or a ControlMaster's socket in `~/.ssh`), a cover does. Red team of issue 34.
        for s in secrets {
            push_unique(&mut self.hide, s);
        }
        self.hide = outermost(std::mem::take(&mut self.hide));
        // A private /dev holding only the usable devices replaces the raw-devices hole, so the
        // whole machine is one read rule and /dev one write rule.
        self.holes.retain(|h| h != Path::new("/dev"));
        self.read_inside_holes.retain(|p| !p.starts_with("/dev"));
        self.write.retain(|p| !p.starts_with("/dev"));
        self.write.insert(0, PathBuf::from("/dev"));
        self.private_dev = true;
    }

    /// Without a mount namespace: control files and secrets inside a writable folder are carved
    /// out with Landlock alone, by granting the folder's entries one by one (recursively around
    /// what must stay read-only) instead of the folder. What that cannot express is lost: new
    /// entries in a carved folder (a new file at the repository root, git's `index.lock` next to
    /// `.git/config`) cannot be created. docs/sandbox.md compares both ways.
    pub fn carve_by_rules(&mut self, list: &mut dyn FnMut(&Path) -> Vec<(PathBuf, bool)>) {
        let keep_out: Vec<PathBuf> = self
            .read_only
            .iter()
            .chain(self.hide.iter())
            .cloned()
            .collect();
        let mut write = Vec::new();
        // A writable folder inside another is granted with it (and must not undo a carve-out
        // of the outer one: `.git` inside the repository holds `.git/config`).
        let outer: Vec<PathBuf> = self
            .write
            .iter()
            .filter(|w| !self.write.iter().any(|o| w.starts_with(o) && *w != o))
            .cloned()
            .collect();
        for w in &outer {
            let inside: Vec<PathBuf> = keep_out
                .iter()
                .filter(|k| k.starts_with(w) && *k != w)
                .cloned()
                .collect();
            if inside.is_empty() {
                write.push(w.clone());
            } else {
                write.extend(cover(w, &inside, list));
            }
        }
        write.sort();
        write.dedup();
        self.write = write;
        let hidden = std::mem::take(&mut self.hide);
        for h in hidden {
            push_unique(&mut self.holes, h);
        }
        self.read_only.clear();
        self.pin.clear();
        self.placeholders.clear();
        self.placeholder_files.clear();
        self.rebind_writable.clear();
    }

    /// Whether enforcing the plan as written needs a private mount namespace (control files or
    /// secrets inside writable folders). Where one can be made it is always used: it also makes
    /// the rest of the machine read-only for metadata changes Landlock does not cover.
    pub fn needs_mounts(&self) -> bool {
        !(self.read_only.is_empty() && self.pin.is_empty() && self.hide.is_empty())
    }
}

/// `path` is `dir` or inside it — `Path::starts_with` on the bytes of two normalized absolute
/// paths, without splitting them into components (the plan asks this thousands of times).
pub fn within(path: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let d = if d.len() > 1 && d.ends_with(b"/") {
        &d[..d.len() - 1]
    } else {
        d
    };
    p.starts_with(d) && (p.len() == d.len() || p[d.len()] == b'/' || d == b"/")
}

/// `path` is inside `dir` and not `dir` itself (a trailing `/` on either is the same path).
pub fn inside(path: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let trim = |p: &Path| {
        let b = p.as_os_str().as_bytes();
        if b.len() > 1 && b.ends_with(b"/") {
            b.len() - 1
        } else {
            b.len()
        }
    };
    within(path, dir) && trim(path) > trim(dir)
}

/// `a == b` as paths. Two paths in the form `Path::components` gives back (no `//`, no `.`
/// after the start, no trailing `/`) are the same exactly when their bytes are; comparing
/// unequal paths component by component was a fifth of the plan's time.
pub fn same(a: &Path, b: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let plain = |p: &Path| {
        let b = p.as_os_str().as_bytes();
        let odd_end = (b.len() > 1 && b.ends_with(b"/")) || b.ends_with(b"/.");
        !odd_end
            && memchr::memmem::find(b, b"//").is_none()
            && memchr::memmem::find(b, b"/./").is_none()
    };
    if a.as_os_str() == b.as_os_str() {
        return true;
    }
    !(plain(a) && plain(b)) && a == b
}

/// `~/x` against `home`; absolute paths as they are.
/// A path `sandbox.secrets` names: `~/` from home, a relative one from the project's root
/// (not from whatever folder a command runs in).
pub fn configured_secret(p: &str, project: &Path, home: &Path) -> PathBuf {
    let p = expand_home(p, home);
    if p.is_relative() { project.join(p) } else { p }
}

pub fn expand_home(p: &str, home: &Path) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if p == "~" => home.to_path_buf(),
        None => PathBuf::from(p),
    }
}

/// The longest literal folder of an area glob: `tests/**` → `tests`, `tests/test_*.py` →
/// `tests`, `*.py` → `` (the root). A path without glob characters is kept whole. An
/// over-approximation: the run's scope gates judge the exact globs.
pub fn literal_prefix(glob: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let parts: Vec<&str> = glob.split('/').collect();
    for part in &parts {
        if part.contains(['*', '?', '[', '{']) {
            return out.join("/");
        }
        out.push(part);
    }
    out.join("/")
}

/// `p` with every link on the way resolved, as the kernel would: the longest part that exists,
/// canonicalized, then the rest as written.
fn resolved(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = p;
    loop {
        if let Ok(real) = at.canonicalize() {
            let mut out = real;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// `a/./b/../c` → `a/c` without touching the file system; `None` when `..` climbs above the
/// start (an area may not leave the project). Unlike the guard's `paths::logical` (the
/// shell's view), which stops `..` at `/`.
pub fn lexical_no_climb(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Resolves `wants` on `layout`. `exists` answers whether a path exists, `is_dir` whether it is
/// a folder, `is_symlink` whether it is a symbolic link (all without following the last
/// component for `is_symlink`).
pub fn plan(
    wants: &Wants,
    layout: &Layout,
    exists: &dyn Fn(&Path) -> bool,
    is_dir: &dyn Fn(&Path) -> bool,
    is_symlink: &dyn Fn(&Path) -> bool,
) -> Result<Plan, String> {
    let home = &layout.home;
    let project = &layout.project;
    let profile = wants.profile;
    if project == Path::new("/") || project == home {
        return Err(format!(
            "the project folder is {}: a sandbox scoped to it would grant the whole {}; run it in a repository, or pass --project",
            project.display(),
            if project == home {
                "home folder"
            } else {
                "machine"
            }
        ));
    }
    let mut places: Vec<(Place, PathBuf)> = Vec::new();

    // Secrets.
    let mut secrets: Vec<PathBuf> = crate::secrets::HOME
        .iter()
        .map(|(s, _)| home.join(s))
        .collect();
    secrets.extend(crate::secrets::SYSTEM.iter().map(PathBuf::from));
    secrets.extend(
        Client::ALL
            .iter()
            .flat_map(|c| c.credentials())
            .map(|f| home.join(f)),
    );
    secrets.extend(
        wants
            .secrets
            .iter()
            .map(|s| configured_secret(s, project, home)),
    );
    secrets.extend(layout.env_files.iter().cloned());
    if profile == Profile::Session {
        secrets.extend(CLIENT_SETTINGS.iter().map(|c| home.join(c)));
    }
    let own: Vec<PathBuf> = match (profile.runs_client(), wants.client) {
        (true, Some(c)) => c.credentials().iter().map(|f| home.join(f)).collect(),
        _ => Vec::new(),
    };
    for s in &secrets {
        if !own.contains(s) {
            places.push((Place::Secrets, s.clone()));
        }
    }
    for o in &own {
        places.push((Place::OwnCredential, o.clone()));
    }

    // Control files.
    let mut hook_folders: Vec<PathBuf> = Vec::new();
    for h in &layout.hooks_paths {
        push_unique(&mut hook_folders, h.clone());
        // husky's `.husky/_` hooks run the scripts beside it (`.husky/pre-commit`).
        if h.file_name().is_some_and(|n| n == "_")
            && let Some(parent) = h.parent()
            && parent != project.as_path()
        {
            push_unique(&mut hook_folders, parent.to_path_buf());
        }
    }
    let mut control: Vec<PathBuf> = PROJECT_CONTROL.iter().map(|c| project.join(c)).collect();
    // Places whether they exist or not, so that a kept plan sees one made (its folder's entries
    // are the plan's basis); only one that exists is bound (see [`TOOL_CONFIG`]).
    let tools = |root: &Path| -> Vec<PathBuf> {
        tool_config(profile, &wants.session_writable)
            .map(|t| root.join(t))
            .collect()
    };
    control.extend(tools(project));
    // Agents' worktrees of the project: each its own working tree, with its own control files
    // (its `.git` file says where git's internals for it are).
    let worktrees = agent_worktrees(project);
    for wt in &worktrees {
        control.extend(PROJECT_CONTROL.iter().map(|c| wt.join(c)));
        control.extend(tools(wt));
        control.push(wt.join(".git"));
    }
    if let Some(common) = &layout.git_common {
        control.extend(GIT_CONTROL.iter().map(|c| common.join(c)));
        // What else moves where git finds its config and hooks, where it exists: the common
        // folder's worktree config and a planted `commondir`, and every linked worktree's
        // files — a session in one worktree must not redirect another's.
        control.push(common.join("config.worktree"));
        control.push(common.join("commondir"));
        control.extend(layout.git_includes.iter().cloned());
        control.extend(hook_folders.iter().cloned());
        for wt in &layout.linked_worktrees {
            if Some(wt) == layout.git_dir.as_ref() {
                continue; // this worktree's own, below
            }
            for f in ["config.worktree", "commondir", "gitdir"] {
                control.push(wt.join(f));
            }
        }
    }
    if let Some(gd) = &layout.git_dir
        && Some(gd) != layout.git_common.as_ref()
    {
        // A linked worktree's own folder: its config, and the two files that say where the
        // common folder (config, hooks) and the worktree are.
        for f in ["config.worktree", "commondir", "gitdir"] {
            control.push(gd.join(f));
        }
    }
    if layout.git_file {
        control.push(project.join(".git"));
    }
    control.extend(
        CLIENT_CONTROL
            .iter()
            .filter(|c| profile != Profile::Session || !CLIENT_SETTINGS.contains(c))
            .map(|c| home.join(c)),
    );
    control.extend(layout.linked_control.iter().cloned());
    control.extend(wants.path.iter().filter(|d| d.is_absolute()).cloned());
    control.extend(wants.keep_read_only.iter().cloned());
    // One place per path: the user's git config is both a config file and, as a link, a
    // linked control file.
    let mut seen: Vec<&PathBuf> = Vec::new();
    for c in &control {
        if !seen.contains(&c) {
            seen.push(c);
            places.push((Place::Control, c.clone()));
        }
    }

    // The answer: its folder (a client may write it through a temporary file and a rename).
    if let Some(a) = &wants.answer {
        if !a.is_absolute() {
            return Err(format!(
                "the answer file {} must be an absolute path",
                a.display()
            ));
        }
        let dir = a.parent().unwrap_or(a).to_path_buf();
        places.push((Place::Answer, dir));
    }

    // Writable areas.
    let mut create: Vec<PathBuf> = Vec::new();
    for area in &wants.write {
        let literal = literal_prefix(area);
        let abs = if Path::new(&literal).is_absolute() {
            lexical_no_climb(Path::new(&literal))
        } else {
            lexical_no_climb(Path::new(&literal)).map(|rel| project.join(rel))
        };
        let Some(mut abs) = abs else {
            return Err(format!("the writable area `{area}` leaves the project"));
        };
        if !Path::new(&literal).is_absolute() && !abs.starts_with(project) {
            return Err(format!("the writable area `{area}` leaves the project"));
        }
        // A literal file: its folder (editors replace files by rename). A literal path that
        // does not exist yet is a file when its name has an extension.
        let literal_file =
            literal == *area && !area.ends_with('/') && Path::new(area).extension().is_some();
        if (exists(&abs) && !is_dir(&abs)) || (!exists(&abs) && literal_file) {
            abs.pop();
        }
        // A folder that does not exist yet is created (empty) before the sandbox starts, so the
        // grant is that folder and not an ancestor of it.
        if !exists(&abs) {
            create.push(abs.clone());
        }
        places.push((Place::Areas, abs));
    }

    let tmpdir = wants
        .tmpdir
        .clone()
        .unwrap_or_else(|| layout.default_tmpdir(profile));
    places.push((Place::Tmpdir, tmpdir.clone()));
    // The folder every sandbox's TMPDIR lies in: a hole, with this one's granted inside it
    // (red team of issue 34: a session read another project's TMPDIR).
    if let Some(base) = layout
        .default_tmpdir(profile)
        .parent()
        .and_then(Path::parent)
    {
        places.push((Place::Sandboxes, base.to_path_buf()));
    }

    if profile.runs_client()
        && let Some(_c) = wants.client
    {
        for s in &wants.client_state {
            let p = expand_home(s, home);
            // A state folder the client has not made yet (a first run) is made for it: the
            // client could not, with home read-only. A missing state *file* is left to the client.
            if !exists(&p) && p.extension().is_none() {
                create.push(p.clone());
            }
            places.push((Place::ClientState, p));
        }
    }
    for c in &wants.caches {
        places.push((Place::Caches, expand_home(c, home)));
    }
    for r in &wants.home_read {
        places.push((Place::Toolchains, r.clone()));
    }
    if let Some(common) = &layout.git_common {
        places.push((Place::GitInternals, common.clone()));
    }
    if let Some(gd) = &layout.git_dir {
        places.push((Place::GitInternals, gd.clone()));
    }
    places.push((Place::Project, project.clone()));
    for wt in &worktrees {
        places.push((Place::Project, wt.clone()));
    }
    for d in DEVICES {
        places.push((Place::Devices, PathBuf::from(d)));
    }
    places.push((Place::RawDevices, PathBuf::from("/dev")));
    places.push((Place::Home, home.clone()));

    let mut plan = Plan {
        places,
        tmpdir,
        create_areas: create.clone(),
        ..Plan::default()
    };

    // Landlock write grants: every existing path of a writable place (the TMPDIR is created).
    for (place, p) in &plan.places {
        if profile::can_write(profile, *place)
            && (exists(p) || *place == Place::Tmpdir || create.contains(p))
        {
            push_unique(&mut plan.write, p.clone());
        }
    }
    plan.write.sort();
    plan.write.dedup();

    // A path is "inside a writable folder" when a write grant contains it.
    let under_write = |p: &Path| plan.write.iter().any(|w| inside(p, w));

    let mut holes = Vec::new();
    let mut hide = Vec::new();
    let mut read_only = Vec::new();
    let mut placeholders = Vec::new();
    let mut placeholder_files = Vec::new();
    let mut problems = Vec::new();
    for (place, p) in &plan.places {
        let access = profile::access(profile, *place);
        match (*place, access) {
            // Inside a writable folder (a check given `/tmp` itself) a cover would hide this
            // sandbox's own TMPDIR too: left as it is there.
            (Place::Sandboxes, _) if under_write(p) => {}
            (Place::Secrets, _)
            | (Place::RawDevices, _)
            | (Place::Home, Access::None)
            | (Place::Sandboxes, Access::None) => {
                if under_write(p) {
                    if exists(p) {
                        hide.push(p.clone());
                    }
                } else if exists(p) {
                    holes.push(p.clone());
                }
            }
            (Place::Control, _) => {
                if !under_write(p) {
                    continue;
                }
                // A link on the way (`.venv` → `venvs/py312`) can be swapped for another: the bind
                // holds the old target only.
                let link = std::iter::once(p.as_path())
                    .chain(p.ancestors().skip(1).take_while(|a| under_write(a)))
                    .find(|a| is_symlink(a));
                if let Some(link) = link {
                    problems.push(format!(
                        "{} is a symbolic link inside a writable folder, so Forge cannot keep {} read-only; replace it with the folder it points to",
                        link.display(),
                        p.display()
                    ));
                } else if exists(p) {
                    read_only.push(p.clone());
                } else if is_placeholder(p, project, layout.git_common.as_deref()) {
                    placeholders.push(p.clone());
                    read_only.push(p.clone());
                } else if (layout.worktree_config && p.ends_with("config.worktree"))
                    || layout.git_includes.contains(p)
                {
                    // An empty config is no config: git reads it as nothing.
                    placeholder_files.push(p.clone());
                    read_only.push(p.clone());
                } else if hook_folders.contains(p) {
                    // A hooks folder git would run from, not there yet (husky's `.husky/_` is
                    // ignored by git, so gone after `git clean`).
                    placeholders.push(p.clone());
                    read_only.push(p.clone());
                }
            }
            _ => {}
        }
    }
    // A PATH folder the command may write as a whole (the project root, put on PATH by direnv's
    // `PATH_add .`): it cannot be made read-only without the rest, so say it.
    for d in wants.path.iter().filter(|d| d.is_absolute()) {
        if plan.write.iter().any(|w| same(w, d)) {
            problems.push(format!(
                "{} is on PATH and writable in this sandbox: a program written there runs by name outside it (in the client, in your shell); take it off PATH",
                d.display()
            ));
        }
    }
    // Read grants inside holes: what the profile reads under home (the project, the toolchains,
    // the client's files, control files it may read), the usable devices. A secret inside one
    // stays out (`landlock.rs` covers each around the holes).
    let mut read_inside = Vec::new();
    for (place, p) in &plan.places {
        if profile::can_read(profile, *place)
            && !matches!(place, Place::Home | Place::System)
            && !plan.write.iter().any(|w| within(p, w))
            && exists(p)
            && holes.iter().any(|h| within(p, h))
        {
            read_inside.push(p.clone());
        }
    }
    let read_inside = outermost(read_inside);

    // Pins: every folder between a writable folder and a read-only bind or hidden secret.
    let mut pin = Vec::new();
    for target in read_only.iter().chain(hide.iter()) {
        if let Some(w) = plan
            .write
            .iter()
            .filter(|w| within(target, w))
            .min_by_key(|w| w.components().count())
        {
            let mut a = target.parent().map(Path::to_path_buf);
            while let Some(dir) = a {
                if !inside(&dir, w) {
                    break;
                }
                push_unique(&mut pin, dir.clone());
                a = dir.parent().map(Path::to_path_buf);
            }
        }
    }
    pin.sort_by(|a, b| (a.components().count(), a).cmp(&(b.components().count(), b)));
    let rebind_writable = plan
        .write
        .iter()
        .filter(|w| read_only.iter().any(|r| inside(w, r)))
        .cloned()
        .collect();

    plan.holes = holes;
    plan.read_inside_holes = read_inside;
    plan.read_only = read_only;
    plan.pin = pin;
    plan.hide = outermost(hide);
    plan.placeholders = placeholders;
    plan.placeholder_files = placeholder_files;
    plan.rebind_writable = rebind_writable;
    plan.problems = problems;
    Ok(plan)
}

/// Whether a missing control path is one of the folders Forge creates empty: the project's
/// control folders and git's `hooks/`, `info/`, `modules/` — never a file, nothing under home.
fn is_placeholder(p: &Path, project: &Path, git_common: Option<&Path>) -> bool {
    let named = p
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| PLACEHOLDER_NAMES.contains(&n));
    named
        && (p.parent() == Some(project)
            || p == project.join(".tmp/.forge")
            || p.parent() == git_common)
}

/// `paths` without those inside another of them: a folder's cover hides what is in it, and a
/// mount onto a path inside a covered folder fails (a socket in `~/.ssh`, an agent's socket in
/// its own `ssh-*` folder).
fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for p in paths {
        if !out.iter().any(|o| within(&p, o)) {
            out.push(p);
        }
    }
    out
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.iter().any(|x| same(x, &p)) {
        v.push(p);
    }
}

/// The paths that grant read access to everything under `root` except `holes`: `root` itself
/// when no hole is inside it, else the cover of each of its entries. `list` gives a folder's
/// entries as `(path, is_symlink)`; symbolic links are left out (what they point to is judged by
/// its own path), so a link into a hole grants nothing.
pub fn cover(
    root: &Path,
    holes: &[PathBuf],
    list: &mut dyn FnMut(&Path) -> Vec<(PathBuf, bool)>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    cover_into(root, holes, list, &mut out);
    out
}

fn cover_into(
    dir: &Path,
    holes: &[PathBuf],
    list: &mut dyn FnMut(&Path) -> Vec<(PathBuf, bool)>,
    out: &mut Vec<PathBuf>,
) {
    if holes.iter().any(|h| h == dir) {
        return;
    }
    if !holes.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    for (child, symlink) in list(dir) {
        if symlink {
            continue;
        }
        cover_into(&child, holes, list, out);
    }
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
