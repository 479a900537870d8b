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
        after_help = "Examples:\n  forge hooks install claude            # .claude/settings.json\n  forge hooks install codex --trust     # .codex/hooks.json, and Codex records your trust in them\n  forge hooks install gemini --global   # ~/.gemini/settings.json\n  forge hooks install claude --bin /usr/local/bin/forge"
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
        /// Gemini and Codex: also record that you trust the project, which each needs to run
        /// its hooks at all. Gemini: the project goes into ~/.gemini/trustedFolders.json. Codex:
        /// Codex itself (`codex app-server`, so `codex` must be on PATH) records the trust of the
        /// project and of Forge's hooks as they are now in $CODEX_HOME/config.toml, as its
        /// `/hooks` review does. Say it only when you trust the project.
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

/// After `forge hooks install codex`: with `--trust`, has Codex record the person's trust in the
/// project and in Forge's hooks; without, says what Codex would skip (it says nothing itself).
/// `updated`: the events whose hooks this install changed, which Codex no longer trusts.
fn codex_trust(
    path: &std::path::Path,
    global: bool,
    trust: bool,
    updated: &[String],
) -> Result<()> {
    use forge::hooks::codex_trust::{self, Skip};
    let home = forge::repo::home();
    let project = root()?;
    let codex_home = install::codex_home(&home);
    let config = codex_trust::config_file(&codex_home);
    let scope = (!global).then_some(project.as_path());
    let handlers = install::forge_handlers(path, Agent::Codex)?;
    let skips = codex_trust::skips(&codex_home, scope, path, &handlers);
    let flag = if global { " --global" } else { "" };
    if !trust {
        if !skips.is_empty() {
            println!(
                "Codex runs a project's hooks only in a trusted project, and each hook only once you trusted it; it skips the others without a word. Here:"
            );
            for s in &skips {
                let (what, _) = s.explain(&project, global);
                println!("  - {what}");
            }
            println!(
                "Run `forge hooks install codex{flag} --trust` to have Codex record your trust (only when you trust this project), or review the hooks with `/hooks` in Codex; `codex exec --dangerously-bypass-hook-trust` runs them for one run only."
            );
        } else if !updated.is_empty() {
            println!(
                "Codex trusted Forge's hooks as they were: it skips the changed ones ({}) without a word until you trust them again: `forge hooks install codex{flag} --trust`, or `/hooks` in Codex.",
                updated.join(", ")
            );
        }
        return Ok(());
    }
    if let Some(s) = skips
        .iter()
        .find(|s| matches!(s, Skip::HooksOff { .. } | Skip::Unreadable { .. }))
    {
        let (what, fix) = s.explain(&project, global);
        return Err(Error::usage(format!(
            "Forge's hooks are wired in {}, but trusting them would not make Codex run them: {what}. Fix: {fix}",
            path.display()
        )));
    }
    let Some(codex) = forge::exec::which("codex") else {
        return Err(Error::usage(format!(
            "`--trust` for codex has Codex itself record the trust (`codex app-server`), and `codex` is not on PATH. Forge's hooks are wired in {}, but Codex skips them until they are trusted: put `codex` on PATH and run `forge hooks install codex{flag} --trust` again, or run `codex` here and trust the project and the hooks (`/hooks`).",
            path.display()
        )));
    };
    let done = codex_trust::trust(&codex, &codex_home, &project, scope, path, &handlers)
        .map_err(|why| {
            Error::usage(format!(
                "Codex ({}) did not record the trust of Forge's hooks: {why}. They are wired in {}; review them with `/hooks` in Codex.",
                codex.display(),
                path.display()
            ))
        })?;
    if done.project {
        println!(
            "Trusted {} for Codex in {}.",
            project.display(),
            config.display()
        );
    }
    if done.hooks.is_empty() {
        println!(
            "Forge's hooks in {} are already trusted for Codex in {}.",
            path.display(),
            config.display()
        );
    } else {
        println!(
            "Trusted Forge's {} hooks for Codex in {} (recorded by Codex itself, as its `/hooks` review does; a change to them needs this again).",
            done.hooks.join(", "),
            config.display()
        );
    }
    for s in skips.iter().filter(|s| matches!(s, Skip::Disabled { .. })) {
        let (what, fix) = s.explain(&project, global);
        println!("Note: {what}: {fix}.");
    }
    Ok(())
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

/// After `forge hooks install gemini` in a project: the CLI's local telemetry on, so the hooks
/// book the calls no chat recording holds (the model router's), and its file kept out of git.
/// A user-wide install sets none: a relative file would be opened in every folder Gemini runs
/// in, and the CLI dies without a word where that folder is missing.
fn gemini_telemetry(project: &std::path::Path, settings: &std::path::Path) -> Result<()> {
    match install::install_gemini_telemetry(settings)? {
        install::Telemetry::Added => println!(
            "Turned on Gemini's local telemetry in {} (to {}, prompts left out): the hooks book the model calls the chat recording does not hold, such as the model router's, from it.",
            settings.display(),
            forge::budget::TELEMETRY_FILE
        ),
        install::Telemetry::Already => {}
        install::Telemetry::Theirs(v) => println!(
            "Note: {} has telemetry settings of its own ({v}), left as they are: the model calls the chat recording does not hold (the model router's) are not booked. For Forge to book them, set `\"telemetry\": {}` there.",
            settings.display(),
            install::gemini_telemetry()
        ),
    }
    let added =
        forge::init::ensure_gitignore(project, &[forge::budget::TELEMETRY_FILE.to_string()])?;
    if !added.is_empty() {
        println!("Added to .gitignore: {}", added.join(", "));
    }
    Ok(())
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
            if trust && agent == Agent::Claude {
                return Err(Error::usage(
                    "`--trust` is for gemini and codex (their trust records); claude needs no such entry from Forge",
                ));
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
                Agent::Codex => codex_trust(&path, global, trust, &c.updated)?,
                Agent::Gemini => {
                    let home = forge::repo::home();
                    let project = root()?;
                    if !global {
                        gemini_telemetry(&project, &path)?;
                    }
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
