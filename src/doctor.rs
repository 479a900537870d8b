//! `forge doctor`: is this checkout ready for Forge? Each check looks at one thing a person
//! would otherwise find out the hard way (an agent session that runs with no guard, a verify
//! that fails with exit 127) and says how to fix what it finds.
//!
//! A check is one entry in [`CHECKS`]: a name and a function from the [`Context`] to its
//! findings. Adding one is adding an entry.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Config;
use crate::hooks::{Agent, install};
use crate::repo::{CONFIG_FILE, Project};

/// What the checks look at, gathered once.
pub struct Context {
    pub cwd: PathBuf,
    /// The git work tree the folder is in, if any.
    pub git_root: Option<PathBuf>,
    /// The Forge project (the folder with `.forge/config.yaml`), if any.
    pub project: Option<Project>,
    /// The project's config, or why it cannot be used.
    pub config: Option<Result<Config, String>>,
    pub home: PathBuf,
}

impl Context {
    pub fn gather(cwd: &Path, home: &Path) -> Context {
        let project = Project::discover(cwd).ok();
        let config = project
            .as_ref()
            .map(|p| Config::load(&p.config_path()).map_err(|e| e.to_string()));
        Context {
            cwd: cwd.to_path_buf(),
            git_root: crate::git::repo_root(cwd).ok(),
            project,
            config,
            home: home.to_path_buf(),
        }
    }

    /// Where the project's settings and commands live: the Forge project, else the git root.
    fn root(&self) -> Option<&Path> {
        self.project
            .as_ref()
            .map(|p| p.root.as_path())
            .or(self.git_root.as_deref())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Worth knowing; nothing is broken.
    Warn,
    /// Broken: `forge doctor` exits 1.
    Fail,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub status: Status,
    pub message: String,
    /// What to do about it (for warn and fail).
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &'static str, message: impl Into<String>) -> Finding {
        Finding {
            check,
            status: Status::Ok,
            message: message.into(),
            fix: None,
        }
    }

    fn bad(
        check: &'static str,
        status: Status,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check,
            status,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

pub struct Check {
    pub name: &'static str,
    pub run: fn(&Context) -> Vec<Finding>,
}

/// Every check, in the order they are reported.
pub const CHECKS: &[Check] = &[
    Check {
        name: "git",
        run: check_git,
    },
    Check {
        name: "config",
        run: check_config,
    },
    Check {
        name: "runner",
        run: check_runners,
    },
    Check {
        name: "hooks",
        run: check_hooks,
    },
    Check {
        name: "sandbox",
        run: check_sandbox,
    },
];

/// Runs every check.
pub fn run(ctx: &Context) -> Vec<Finding> {
    CHECKS.iter().flat_map(|c| (c.run)(ctx)).collect()
}

fn check_git(ctx: &Context) -> Vec<Finding> {
    let runs = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        return vec![Finding::bad(
            "git",
            Status::Fail,
            "git is not on PATH: Forge reads and commits through it",
            "install git (Debian/Ubuntu: `apt-get install git`)",
        )];
    }
    match &ctx.git_root {
        Some(root) => vec![Finding::ok("git", format!("repository {}", root.display()))],
        None => vec![Finding::bad(
            "git",
            Status::Fail,
            format!("{} is not in a git repository", ctx.cwd.display()),
            "run Forge in your repository (or `git init` one)",
        )],
    }
}

/// The kernel wall under the guard, for the project's `sandbox.mode`: a person learns here, not
/// from a refused run, that `require` cannot be met, or that `auto` gives less than it could.
fn check_sandbox(ctx: &Context) -> Vec<Finding> {
    use crate::sandbox::{self, Mode};
    let mode = match &ctx.config {
        Some(Ok(c)) => c.sandbox.mode,
        _ => Mode::default(),
    };
    let level = sandbox::level();
    let line = sandbox::in_force(mode, &level);
    let fix = || {
        if level.landlock_abi == 0 {
            "boot a Linux ≥ 6.12 whose `lsm=` list includes landlock (`cat /sys/kernel/security/lsm`)"
        } else if level.landlock_abi < 6 {
            "a Linux ≥ 6.12 (Landlock ABI 6) adds signal and socket scoping"
        } else {
            "allow unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu `kernel.apparmor_restrict_unprivileged_userns=0`), or run Forge as root in a container"
        }
    };
    let finding = match mode {
        Mode::Off => Finding::bad(
            "sandbox",
            Status::Warn,
            line,
            "set `sandbox.mode: auto` in .forge/config.yaml to put agents' commands in the kernel sandbox",
        ),
        _ if level.full() => Finding::ok("sandbox", line),
        Mode::Require => Finding::bad("sandbox", Status::Fail, line, fix()),
        _ => Finding::bad("sandbox", Status::Warn, line, fix()),
    };
    vec![finding]
}

fn check_config(ctx: &Context) -> Vec<Finding> {
    match (&ctx.project, &ctx.config) {
        (Some(p), Some(Ok(c))) => {
            let mut parts = vec![format!(
                "{} verify command(s), breaker at {} failure(s)",
                c.verify.commands.len(),
                c.breaker.max_failures
            )];
            let b = &c.budget;
            if b.change.usd.is_some()
                || b.session.usd.is_some()
                || b.change.tokens.is_some()
                || b.session.tokens.is_some()
            {
                parts.push("budget limits set".into());
            }
            if c.agents.missing().is_empty() {
                parts.push("agents for every role of `forge run`".into());
            }
            vec![Finding::ok(
                "config",
                format!("{} is valid: {}", p.rel(&p.config_path()), parts.join(", ")),
            )]
        }
        (Some(_), Some(Err(e))) => vec![Finding::bad(
            "config",
            Status::Fail,
            e.clone(),
            format!("edit {CONFIG_FILE} where the message points"),
        )],
        _ => vec![Finding::bad(
            "config",
            Status::Fail,
            format!("no {CONFIG_FILE} in {} or above", ctx.cwd.display()),
            "run `forge init` in the repository root",
        )],
    }
}

/// The programs a shell command line starts: the first word of each simple command (after
/// variable assignments and `env`), skipping what the shell computes at run time.
pub fn programs(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for segment in split_commands(line) {
        let mut words = shell_words(&segment).into_iter().peekable();
        while words.peek().is_some_and(|w| {
            is_assignment(w) || matches!(w.as_str(), "env" | "exec" | "command" | "nohup" | "time")
        }) {
            let w = words.next().unwrap_or_default();
            if w == "env" {
                while words
                    .peek()
                    .is_some_and(|a| a.starts_with('-') || is_assignment(a))
                {
                    words.next();
                }
            }
        }
        let mut words = words.skip_while(|w| {
            w.starts_with(['>', '<'])
                || w.trim_start_matches(|c: char| c.is_ascii_digit())
                    .starts_with(['>', '<'])
        });
        if let Some(p) = words.next()
            && !p.contains(['$', '`', '*', '?', '('])
            && !matches!(
                p.as_str(),
                "(" | "{" | "!" | "if" | "then" | "else" | "fi" | "for" | "do" | "done" | "while"
            )
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The simple commands of a line, split at unquoted `;`, `&&`, `||`, `|`, `&` and newlines.
fn split_commands(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.last_mut().unwrap().push(c);
            }
            (Some(_), c) => out.last_mut().unwrap().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.last_mut().unwrap().push(c);
            }
            (None, '\\') => {
                out.last_mut().unwrap().push(c);
                if let Some(n) = chars.next() {
                    out.last_mut().unwrap().push(n);
                }
            }
            // `>&2`, `2>&1`, `&>log`: a redirection, not a separator.
            (None, '&')
                if out.last().unwrap().ends_with(['>', '<']) || chars.peek() == Some(&'>') =>
            {
                out.last_mut().unwrap().push(c);
            }
            (None, ';' | '|' | '&' | '\n') => {
                while chars.peek().is_some_and(|n| matches!(n, '|' | '&')) {
                    chars.next();
                }
                out.push(String::new());
            }
            (None, c) => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// Words of one simple command, quotes removed.
fn shell_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                }
                in_word = false;
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Where `sh` finds `program` when run in `root` (builtins and functions included), or `None`.
fn find_program(root: &Path, program: &str) -> Option<String> {
    let o = Command::new("sh")
        .arg("-c")
        .arg("command -v -- \"$1\"")
        .arg("sh")
        .arg(program)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// For `python -m pytest …`: whether that Python can import the module.
fn python_module(root: &Path, line: &str) -> Option<(String, String, bool)> {
    let words = shell_words(split_commands(line).first()?);
    let at = words.iter().position(|w| w == "-m")?;
    let python = words.get(at.checked_sub(1)?)?;
    if !python.rsplit('/').next()?.starts_with("python") {
        return None;
    }
    let module = words.get(at + 1)?.clone();
    let ok = Command::new(python)
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)",
            &module,
        ])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    Some((python.clone(), module, ok))
}

fn check_runners(ctx: &Context) -> Vec<Finding> {
    let (Some(root), Some(Ok(config))) = (ctx.root(), &ctx.config) else {
        return vec![];
    };
    let mut lines: Vec<(String, String)> = config
        .verify
        .commands
        .iter()
        .map(|c| (format!("verify command `{}`", c.name), c.run.clone()))
        .collect();
    for role in crate::run::agent::Role::ALL {
        if let Some(a) = config.agents.for_role(role) {
            let what = format!("agent command for {}", role.name());
            if !lines.iter().any(|(_, run)| run == &a.command) {
                lines.push((what, a.command.clone()));
            }
        }
    }
    let mut out = Vec::new();
    for (what, line) in lines {
        if line.contains(crate::init::PLACEHOLDER) {
            out.push(Finding::bad(
                "runner",
                Status::Fail,
                format!("{what} is still the placeholder `forge init` wrote (no test runner was recognised)"),
                format!("set `run:` to your test command in {CONFIG_FILE}"),
            ));
            continue;
        }
        let progs = programs(&line);
        let missing: Vec<&String> = progs
            .iter()
            .filter(|p| find_program(root, p).is_none())
            .collect();
        if !missing.is_empty() {
            out.push(Finding::bad(
                "runner",
                Status::Fail,
                format!(
                    "{what}: {} not found on PATH (`{}`)",
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    crate::text::clip_words(&line, 80)
                ),
                format!(
                    "install it, or change that command in {CONFIG_FILE} to one that runs here"
                ),
            ));
            continue;
        }
        if let Some((python, module, false)) = python_module(root, &line) {
            out.push(Finding::bad(
                "runner",
                Status::Fail,
                format!("{what}: `{python}` cannot import `{module}`"),
                format!(
                    "`{python} -m pip install {module}` (or your project's way: uv, poetry, a venv)"
                ),
            ));
            continue;
        }
        out.push(Finding::ok(
            "runner",
            format!(
                "{what}: {}",
                if progs.is_empty() {
                    "nothing to look up".to_string()
                } else {
                    progs
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                        + " found"
                }
            ),
        ));
    }
    out
}

/// A PreToolUse payload Forge must deny, in `agent`'s protocol, placed in `cwd` (a folder
/// outside any Forge project, so nothing is recorded on a timeline).
fn probe_payload(agent: Agent, cwd: &Path) -> Value {
    let (event, tool) = match agent {
        Agent::Gemini => ("BeforeTool", "run_shell_command"),
        _ => ("PreToolUse", "Bash"),
    };
    json!({"session_id": "forge-doctor", "cwd": cwd, "hook_event_name": event,
           "tool_name": tool, "tool_input": {"command": "rm -rf /"}})
}

fn out_file(path: &Path) -> Result<std::fs::File, String> {
    std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// How long the probe may take (an installed hook has 30 s in the agent).
const PROBE_DEADLINE: Duration = Duration::from_secs(10);

/// Runs an installed PreToolUse hook command as the agent would (`sh -c`, in the project) on
/// the probe payload; `Ok` when it answered with a deny.
fn probe(command: &str, agent: Agent, root: &Path) -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a scratch folder: {e}"))?;
    // The payload comes from a file, not a pipe: a hook that exits without reading it must
    // not kill this process with SIGPIPE.
    let payload = scratch.path().join("payload.json");
    std::fs::write(&payload, probe_payload(agent, scratch.path()).to_string())
        .map_err(|e| format!("cannot write {}: {e}", payload.display()))?;
    let stdin = std::fs::File::open(&payload).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(out_file(&scratch.path().join("stdout"))?))
        .stderr(Stdio::from(out_file(&scratch.path().join("stderr"))?))
        .spawn()
        .map_err(|e| format!("cannot start `sh`: {e}"))?;
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if started.elapsed() > PROBE_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer within {} s", PROBE_DEADLINE.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let read = |name: &str| std::fs::read(scratch.path().join(name)).unwrap_or_default();
    let (out, err) = (read("stdout"), read("stderr"));
    let stdout = String::from_utf8_lossy(&out);
    let answer: Option<Value> = serde_json::from_str(stdout.trim()).ok();
    let denied = answer.as_ref().is_some_and(|v| {
        v.pointer("/hookSpecificOutput/permissionDecision") == Some(&json!("deny"))
            || v.get("decision") == Some(&json!("deny"))
    });
    if denied {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&err);
    Err(format!(
        "exit {}, {}",
        status
            .code()
            .map_or("by a signal".into(), |c| c.to_string()),
        crate::text::clip_words(
            stderr
                .trim()
                .lines()
                .next()
                .or(stdout.trim().lines().next())
                .unwrap_or("no output"),
            120
        )
    ))
}

fn check_hooks(ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut wired_any = false;
    let mut wired: Vec<Agent> = Vec::new();
    for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
        for global in [false, true] {
            let scope = if global { "user" } else { "project" };
            let Some(root) = (if global {
                Some(ctx.home.as_path())
            } else {
                ctx.root()
            }) else {
                continue;
            };
            let path = install::settings_path(agent, root, global, &ctx.home);
            let who = format!("{} ({scope})", agent.name());
            let events = match install::status(&path, agent) {
                Ok(e) => e,
                Err(e) => {
                    out.push(Finding::bad(
                        "hooks",
                        Status::Fail,
                        format!("{who}: {e}"),
                        format!(
                            "fix {} by hand, then `forge hooks install {}`",
                            path.display(),
                            agent.name()
                        ),
                    ));
                    continue;
                }
            };
            if events.is_empty() {
                continue;
            }
            wired_any = true;
            if !wired.contains(&agent) {
                wired.push(agent);
            }
            let flag = if global { " --global" } else { "" };
            let reinstall = format!("`forge hooks install {}{flag}`", agent.name());
            let missing: Vec<&str> = crate::hooks::Event::installed(agent)
                .iter()
                .map(|e| e.native(agent))
                .filter(|n| !events.iter().any(|(e, _)| e == n))
                .collect();
            if !missing.is_empty() {
                // Without the guard or the Stop hook a control is off; without a newer event
                // (SubagentStart/SubagentStop, wired since a later release) only a refinement.
                let essential = [crate::hooks::Event::PreToolUse, crate::hooks::Event::Stop]
                    .iter()
                    .any(|e| missing.contains(&e.native(agent)));
                out.push(Finding::bad(
                    "hooks",
                    if essential {
                        Status::Fail
                    } else {
                        Status::Warn
                    },
                    format!(
                        "{who}: {} not wired in {}",
                        missing.join(", "),
                        path.display()
                    ),
                    format!("run {reinstall}"),
                ));
                continue;
            }
            let pre = crate::hooks::Event::PreToolUse.native(agent);
            let Some((_, command)) = events.iter().find(|(e, _)| e == pre) else {
                continue;
            };
            let run_in = if global {
                ctx.root().unwrap_or(&ctx.cwd)
            } else {
                root
            };
            match probe(command, agent, run_in) {
                Ok(()) => out.push(Finding::ok(
                    "hooks",
                    format!("{who}: {} wired; the {pre} hook runs and denies `rm -rf /`", events.iter().map(|(e, _)| e.as_str()).collect::<Vec<_>>().join(", ")),
                )),
                Err(why) => out.push(Finding::bad(
                    "hooks",
                    Status::Fail,
                    format!("{who}: the {pre} hook `{command}` does not guard: {why}"),
                    format!("run {reinstall} (add `--bin <path to forge>` when `forge` is not on the agent's PATH)"),
                )),
            }
        }
    }
    if wired_any && let Some(project) = &ctx.project {
        out.push(stop_target(project));
    }
    out.extend(client_skips(ctx, &wired));
    if !wired_any {
        out.push(Finding::bad(
            "hooks",
            Status::Warn,
            "no agent has Forge's hooks: agent sessions run without the guard, the budget or the Stop-hook verify",
            "`forge hooks install claude` (or codex, gemini)",
        ));
    }
    out
}

/// Warnings for wired clients that would not run Forge's hooks at all in this project (see
/// `hooks::client_skip`): a guard that does not run is no guard.
fn client_skips(ctx: &Context, wired: &[Agent]) -> Vec<Finding> {
    use crate::hooks::client_skip;
    let mut out = Vec::new();
    let Some(root) = ctx.root() else {
        return out;
    };
    for agent in wired {
        match agent {
            Agent::Gemini => {
                let env = std::env::var(client_skip::GEMINI_TRUST_ENV).ok();
                if let Err(why) = client_skip::gemini_trusts(&ctx.home, root, env.as_deref()) {
                    out.push(Finding::bad(
                        "hooks",
                        Status::Warn,
                        format!("gemini: this folder is not trusted ({why}), so Gemini CLI runs none of Forge's hooks here"),
                        format!("`forge hooks install gemini --trust` (or trust it in Gemini, or set {}=true); never `--skip-trust`, which runs no project hook", client_skip::GEMINI_TRUST_ENV),
                    ));
                }
            }
            Agent::Claude => {
                for f in client_skip::claude_hooks_disabled(&ctx.home, root) {
                    out.push(Finding::bad(
                        "hooks",
                        Status::Warn,
                        format!("claude: {} sets `disableAllHooks: true`, so Claude Code runs none of Forge's hooks", f.display()),
                        format!("remove `disableAllHooks` from {}", f.display()),
                    ));
                }
            }
            Agent::Codex => out.extend(codex_skips(ctx, root)),
        }
    }
    out
}

/// Codex CLI, for each of its hooks files that has Forge's hooks: what its own records say it
/// would skip (see `hooks::codex_trust`), and, when `codex` is on PATH and the records say
/// trusted, whether Codex still finds them as they were trusted.
fn codex_skips(ctx: &Context, root: &Path) -> Vec<Finding> {
    use crate::hooks::codex_trust::{self, AppServer, Skip};
    let codex_home = install::codex_home(&ctx.home);
    let config = codex_trust::config_file(&codex_home);
    let mut out = Vec::new();
    for global in [false, true] {
        let file = install::settings_path(Agent::Codex, root, global, &ctx.home);
        let Ok(handlers) = install::forge_handlers(&file, Agent::Codex) else {
            continue; // said by the wiring check
        };
        if handlers.is_empty() {
            continue;
        }
        let project = (!global).then_some(root);
        let mut skips = codex_trust::skips(&codex_home, project, &file, &handlers);
        let mut checked = "their hashes not compared: `codex` is not on PATH";
        if skips.is_empty()
            && let Some(codex) = crate::exec::which("codex")
        {
            checked = "Codex lists them as trusted";
            match AppServer::start(&codex, root).and_then(|mut s| s.hooks_list(root)) {
                Ok(listed) => {
                    let with = |status: &str| {
                        codex_trust::events_listed_as(&listed, &file, &handlers, status)
                    };
                    let modified = with("modified");
                    if !modified.is_empty() {
                        skips.push(Skip::Modified { events: modified });
                    }
                    let untrusted = with("untrusted");
                    if !untrusted.is_empty() {
                        skips.push(Skip::Untrusted {
                            events: untrusted,
                            file: config.clone(),
                        });
                    }
                }
                Err(why) => out.push(Finding::bad(
                    "hooks",
                    Status::Warn,
                    format!("codex: cannot ask Codex whether Forge's hooks in {} changed since they were trusted: {why}", file.display()),
                    "run `codex app-server` by hand to see why, or review the hooks with `/hooks` in Codex".to_string(),
                )),
            }
        }
        if skips.is_empty() {
            out.push(Finding::ok(
                "hooks",
                format!(
                    "codex: {}Forge's {} hooks in {} are trusted in {} ({checked})",
                    if global { "" } else { "the project and " },
                    handlers.len(),
                    file.display(),
                    config.display()
                ),
            ));
        }
        for s in skips {
            let (what, fix) = s.explain(root, global);
            out.push(Finding::bad(
                "hooks",
                Status::Warn,
                format!("codex: {what}"),
                fix,
            ));
        }
    }
    out
}

/// What the Stop hook will verify, and a warning when it cannot: an active change that does not
/// exist (the hook errors and lets the agent stop) or a breaker already open (it lets the agent
/// stop without verifying).
fn stop_target(project: &Project) -> Finding {
    use crate::hooks::StopTarget;
    let target = StopTarget::of(project);
    let key = &target.breaker;
    if let Some(c) = &target.change
        && let Err(e) = crate::verify::check_change_exists(project, c)
    {
        return Finding::bad(
            "hooks",
            Status::Warn,
            format!(
                "the Stop hook cannot verify: the active change (FORGE_CHANGE or {}) is `{c}`, and {e}",
                project.rel(&crate::hooks::active_change_path(project))
            ),
            "`forge change use <name>` with an existing change, or `forge change use --clear` to verify all changes",
        );
    }
    match crate::breaker::load(project, key) {
        Ok(Some(s)) if s.open => {
            return Finding::bad(
                "hooks",
                Status::Warn,
                format!(
                    "the circuit breaker of `{key}` is open: the Stop hook lets the agent stop without verifying"
                ),
                format!("look at the failures, then `forge verify --reset-breaker --change {key}`"),
            );
        }
        Err(e) => {
            return Finding::bad(
                "hooks",
                Status::Warn,
                format!("the Stop hook cannot verify: {e}"),
                crate::breaker::recovery(key),
            );
        }
        _ => {}
    }
    Finding::ok(
        "hooks",
        match &target.change {
            Some(c) => format!("the Stop hook verifies change `{c}` (the active change)"),
            None => "the Stop hook verifies all changes (no change is active; `forge change use <name>` picks one)".to_string(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_the_first_words_of_each_simple_command() {
        assert_eq!(programs("cargo test"), ["cargo"]);
        assert_eq!(programs("python3 -m pytest -rA"), ["python3"]);
        assert_eq!(programs("cd web && npm test -- --ci"), ["cd", "npm"]);
        assert_eq!(
            programs("RUST_LOG=debug env -i A=1 cargo test | tee log; ./run.sh"),
            ["cargo", "tee", "./run.sh"]
        );
        assert_eq!(
            programs("\"my tool\" --x 'a;b' || echo failed"),
            ["my tool", "echo"]
        );
        assert_eq!(programs("$RUNNER test"), Vec::<String>::new());
        assert_eq!(programs("echo 'x' >&2; exit 1"), ["echo", "exit"]);
        assert_eq!(
            programs("make test 2>&1 &>/dev/null && >log ls"),
            ["make", "ls"]
        );
        assert_eq!(
            programs("claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --output-format json"),
            ["claude"]
        );
    }

    #[test]
    fn every_check_has_a_distinct_name() {
        let mut names: Vec<_> = CHECKS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CHECKS.len());
    }
}
