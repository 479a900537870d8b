use std::path::PathBuf;
use std::time::Duration;

use forge::error::{EXIT_OK, EXIT_USAGE, Error, Result};
use forge::hooks::{self, Agent, Event, install};
use forge::repo::Project;

#[derive(clap::Args, Debug, PartialEq, Eq)]
#[command(
    about = "Answer one hook call from an agent (its stdin/stdout protocol); agents run this, not people",
    long_about = "Called by an agent's hook system with the hook payload on stdin. AGENT is claude, codex or gemini; \
EVENT is pre-tool-use, post-tool-use, stop, session-start, subagent-start or subagent-stop (or the agent's own event name). \
PreToolUse runs the guard; Stop runs `forge verify --change <active change>` (with no active change, \
`forge verify` of all changes, counted by the breaker `all-changes`) and blocks the stop on FAIL until the \
breaker opens — while subagents the session started still run, a FAIL blocks without being counted; \
SubagentStart and SubagentStop (and the Agent tool's background launch) keep that list; SessionStart tells the agent what Stop will verify, with the scenarios. \
Malformed, oversized or never-ending input is denied: the hook fails closed.",
    after_help = "Examples:\n  echo '{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf /\"},\"cwd\":\".\"}' | forge hook claude pre-tool-use\n  forge hook claude stop < payload.json"
)]
pub struct HookArgs {
    /// claude, codex or gemini.
    agent: String,
    /// pre-tool-use, post-tool-use, stop, session-start, subagent-start, subagent-stop (or PreToolUse, BeforeTool, AfterAgent, …).
    event: String,
}

impl HookArgs {
    /// `forge hook AGENT EVENT` read without building clap's command tree: the hook starts on
    /// every tool call an agent makes, and clap's tree of every subcommand is a good part of a
    /// start. Exactly two plain words; anything else (`--help`, a third word) goes to clap.
    pub fn parse_simple(mut argv: impl Iterator<Item = std::ffi::OsString>) -> Option<HookArgs> {
        let plain = |a: std::ffi::OsString| {
            a.into_string()
                .ok()
                .filter(|s| !s.is_empty() && !s.starts_with('-'))
        };
        let agent = plain(argv.next()?)?;
        let event = plain(argv.next()?)?;
        argv.next().is_none().then_some(HookArgs { agent, event })
    }
}

/// How long a PreToolUse decision may take before the watchdog denies.
const DECISION_DEADLINE: Duration = Duration::from_secs(5);
/// Memory a PreToolUse decision may use before it is denied (a parser runaway).
const DECISION_MEMORY: usize = 512 * 1024 * 1024;

pub fn hook(args: HookArgs) -> Result<i32> {
    let (Some(agent), Some(event)) = (Agent::parse(&args.agent), Event::parse(&args.event)) else {
        eprintln!(
            "forge: error: unknown hook `{} {}`: agent is claude|codex|gemini, event is pre-tool-use|post-tool-use|stop|session-start|subagent-start|subagent-stop",
            args.agent, args.event
        );
        // Exit 2 blocks a tool call in every agent: a mistyped hook must not fail open.
        return Ok(EXIT_USAGE);
    };
    let input = hooks::read_bounded(
        std::io::stdin().lock(),
        hooks::MAX_INPUT,
        hooks::STDIN_DEADLINE,
    );
    if event == Event::PreToolUse {
        super::watchdog::arm(DECISION_DEADLINE, DECISION_MEMORY);
    }
    let cwd = super::cwd()?;
    let out = hooks::handle(agent, event, input, &cwd);
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    Ok(out.exit)
}

#[derive(clap::Subcommand)]
#[command(
    about = "Wire Forge into an agent's hooks (claude, codex, gemini), remove it, or show what is wired"
)]
pub enum HooksCommand {
    /// Merge Forge's hooks into the agent's settings (idempotent; your own hooks are kept).
    #[command(
        after_help = "Examples:\n  forge hooks install claude            # .claude/settings.json\n  forge hooks install codex             # .codex/hooks.json (trust the project and its hooks in Codex)\n  forge hooks install gemini --global   # ~/.gemini/settings.json\n  forge hooks install claude --bin /usr/local/bin/forge"
    )]
    Install {
        agent: String,
        /// The user's settings instead of the project's.
        #[arg(long)]
        global: bool,
        /// The forge binary the hooks call (default: `forge`, looked up on the agent's PATH, so a
        /// committed settings file works for everyone; a missing binary blocks every call).
        #[arg(long)]
        bin: Option<String>,
        /// Gemini only: also add the project to Gemini's trusted folders
        /// (~/.gemini/trustedFolders.json), which it needs to run project hooks at all. Say it
        /// only when you trust the project.
        #[arg(long)]
        trust: bool,
    },
    /// Remove only Forge's entries from the agent's settings.
    #[command(
        after_help = "Examples:\n  forge hooks uninstall claude\n  forge hooks uninstall gemini --global"
    )]
    Uninstall {
        agent: String,
        #[arg(long)]
        global: bool,
    },
    /// Show which agents have Forge's hooks wired, in the project and for the user.
    #[command(after_help = "Examples:\n  forge hooks status\n  forge hooks status --json")]
    Status {
        #[arg(long)]
        json: bool,
    },
}

fn parse_agent(s: &str) -> Result<Agent> {
    Agent::parse(s)
        .ok_or_else(|| Error::usage(format!("unknown agent `{s}`: use claude, codex or gemini")))
}

fn root() -> Result<PathBuf> {
    let cwd = super::cwd()?;
    Ok(match Project::discover(&cwd) {
        Ok(p) => p.root,
        Err(_) => forge::git::repo_root(&cwd)?,
    })
}

/// Whether the hooks' binary runs here: a bare name is looked up on `PATH`, a path must be an
/// executable file.
fn runs_here(bin: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    if bin.contains('/') {
        std::fs::metadata(bin).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    } else {
        forge::exec::which(bin).is_some()
    }
}

pub fn hooks(cmd: HooksCommand) -> Result<i32> {
    match cmd {
        HooksCommand::Install {
            agent,
            global,
            bin,
            trust,
        } => {
            let agent = parse_agent(&agent)?;
            if trust && agent != Agent::Gemini {
                return Err(Error::usage(format!(
                    "`--trust` is for gemini (its trusted folders); {} needs no such entry from Forge",
                    agent.name()
                )));
            }
            let path = install::settings_path(agent, &root()?, global, &forge::repo::home());
            let bin = bin.unwrap_or_else(|| install::DEFAULT_BIN.to_string());
            let c = install::install(&path, agent, &bin)?;
            if !c.events.is_empty() {
                println!(
                    "Wired Forge into {} ({}): {}",
                    agent.name(),
                    path.display(),
                    c.events.join(", ")
                );
            }
            if !c.updated.is_empty() {
                println!(
                    "Updated Forge's hooks in {} to call `{bin}` (failing closed when it is missing): {}",
                    path.display(),
                    c.updated.join(", ")
                );
            }
            if !c.written {
                println!(
                    "Forge is already wired into {} ({}); nothing changed.",
                    agent.name(),
                    path.display()
                );
            }
            if !runs_here(&bin) {
                println!(
                    "Note: `{bin}` does not run here, so until it does every hook call is blocked (the hooks fail closed): put Forge on PATH, or name it with `--bin <path to forge>`."
                );
            }
            match agent {
                Agent::Codex => println!(
                    "Codex runs project hooks only in a trusted project, and each hook once trusted: review them in Codex (or run `codex exec --dangerously-bypass-hook-trust` in automation)."
                ),
                Agent::Gemini => {
                    let home = forge::repo::home();
                    let project = root()?;
                    if trust {
                        let file = forge::hooks::client_skip::gemini_trusted_folders(&home);
                        if forge::hooks::client_skip::gemini_trust(&home, &project)? {
                            println!(
                                "Trusted {} for Gemini in {}.",
                                project.display(),
                                file.display()
                            );
                        } else {
                            println!(
                                "{} is already trusted for Gemini in {}.",
                                project.display(),
                                file.display()
                            );
                        }
                    } else if let Err(why) = forge::hooks::client_skip::gemini_trusts(
                        &home,
                        &project,
                        std::env::var(forge::hooks::client_skip::GEMINI_TRUST_ENV)
                            .ok()
                            .as_deref(),
                    ) {
                        println!(
                            "Gemini runs project hooks only in a trusted folder, and this one is not ({why}): without trust Gemini runs with no Forge hook at all. Trust it in Gemini, or run `forge hooks install gemini --trust`; never start Gemini with `--skip-trust`, which runs no project hook."
                        );
                    }
                }
                Agent::Claude => {}
            }
            Ok(EXIT_OK)
        }
        HooksCommand::Uninstall { agent, global } => {
            let agent = parse_agent(&agent)?;
            let path = install::settings_path(agent, &root()?, global, &forge::repo::home());
            let c = install::uninstall(&path, agent)?;
            if c.written {
                println!(
                    "Removed Forge's hooks from {}: {}",
                    path.display(),
                    c.events.join(", ")
                );
            } else {
                println!("No Forge hooks in {}; nothing changed.", path.display());
            }
            Ok(EXIT_OK)
        }
        HooksCommand::Status { json } => {
            let root = root()?;
            let mut rows = Vec::new();
            for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
                for global in [false, true] {
                    let path = install::settings_path(agent, &root, global, &forge::repo::home());
                    let wired = install::status(&path, agent);
                    rows.push((agent, global, path, wired));
                }
            }
            if json {
                let v: Vec<_> = rows
                    .iter()
                    .map(|(a, g, p, w)| match w {
                        Ok(w) => serde_json::json!({"agent": a.name(), "scope": if *g {"user"} else {"project"}, "path": p, "events": w.iter().map(|(e, c)| serde_json::json!({"event": e, "command": c})).collect::<Vec<_>>()}),
                        Err(e) => serde_json::json!({"agent": a.name(), "scope": if *g {"user"} else {"project"}, "path": p, "error": e.to_string()}),
                    })
                    .collect();
                super::print_json(&v);
            } else {
                for (a, g, p, w) in &rows {
                    let scope = if *g { "user" } else { "project" };
                    match w {
                        Ok(w) if w.is_empty() => {
                            println!("{:7} {:8} not wired      {}", a.name(), scope, p.display())
                        }
                        Ok(w) => println!(
                            "{:7} {:8} wired: {}  {}",
                            a.name(),
                            scope,
                            w.iter()
                                .map(|(e, _)| e.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                            p.display()
                        ),
                        Err(e) => println!("{:7} {:8} UNREADABLE   {e}", a.name(), scope),
                    }
                }
            }
            Ok(EXIT_OK)
        }
    }
}
