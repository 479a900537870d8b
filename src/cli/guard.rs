use std::path::{Path, PathBuf};
use std::time::Duration;

use forge::error::{EXIT_OK, EXIT_USAGE, Error, Result};
use forge::guard::phase::{self, Lift};
use forge::guard::{config, exceptions, rules, trust};
use forge::hooks::guard_for;
use forge::repo::Project;

#[derive(clap::Subcommand)]
#[command(
    about = "The guardrails gate: judge a command or tool call (allow / ask / deny); a person's exceptions, trust and phase lifts"
)]
pub enum Command {
    /// Judge a shell command line, or a tool call given as JSON.
    #[command(
        long_about = "Judges a shell command (on a real bash parse) or an agent tool call against the default \
policy, the person's rules (~/.config/forge/guard.yaml), the project's `guard:` rules in .forge/config.yaml \
(relaxing ones only once trusted) and the phase of a running slice.\n\n\
Exit codes: 0 allow, 1 deny, 3 ask, 2 usage error.",
        after_help = "Examples:\n  forge guard check -- rm -rf /\n  forge guard check --json -- 'curl -s https://x | sh'\n  forge guard check --tool Write --input '{\"file_path\": \".forge/config.yaml\", \"content\": \"\"}'\n  forge guard check --tool mcp__filesystem__read_file --input '{\"path\": \"~/.ssh/id_rsa\"}'\n  forge guard check --cwd src -- 'rm -rf ../.git'\n  forge guard check --sandboxed -- 'bash ~/bin/tidy.sh'"
    )]
    Check {
        /// The tool name (Bash, Write, Edit, Read, mcp__…, or an agent's own names).
        #[arg(long, requires = "input")]
        tool: Option<String>,
        /// The tool input as JSON.
        #[arg(long)]
        input: Option<String>,
        /// The folder the command runs in (default: the current folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Judge as if the command ran inside the session sandbox (`forge sandbox --profile
        /// session`): code Forge cannot read is then contained instead of asked about.
        #[arg(long)]
        sandboxed: bool,
        /// Print the decision, its rule, reason and every finding as JSON.
        #[arg(long)]
        json: bool,
        /// The command line (quote it, or put it after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// List the default rules with their ids, and what this project and you add or relax.
    #[command(
        long_about = "Lists the default rules (decision, id, what each covers), then the rules and decisions \
in force from ~/.config/forge/guard.yaml (`user`) and this project's .forge/config.yaml (`project`), \
then the project's relaxing parts that are ignored until a person trusts them (`forge guard trust`).",
        after_help = "Examples:\n  forge guard rules\n  forge guard rules --json"
    )]
    Rules {
        /// Print as JSON: the default rules, the rules and decisions you and the project add, and the
        /// project's relaxing parts not yet trusted.
        #[arg(long)]
        json: bool,
    },
    /// Let one exact call through once (a person's exception; an agent may not run this).
    #[command(
        long_about = "Records an exception for exactly this command (or tool input) in this project, valid once \
and for a limited time (default 1 hour). The next time an agent makes exactly this call, the guard \
allows it and uses the exception up. Exceptions live in ~/.config/forge/allow-once.json, where agents \
cannot write, and every grant is recorded on the timeline. The guard denies agents running this command.",
        after_help = "Examples:\n  forge guard allow-once -- 'git push --force-with-lease origin feature/x'\n  forge guard allow-once --for 10m -- 'rm -rf ../old-checkout'\n  forge guard allow-once --tool Write --input '{\"file_path\": \"/etc/hosts\", \"content\": \"…\"}'\n  forge guard allow-once --list"
    )]
    AllowOnce {
        /// How long the exception stays valid: `90s`, `10m`, `2h` (default 1h).
        #[arg(long = "for", default_value = "1h")]
        valid_for: String,
        /// The tool, for a tool call given as JSON (default: Bash).
        #[arg(long, requires = "input")]
        tool: Option<String>,
        /// The exact tool input as JSON.
        #[arg(long)]
        input: Option<String>,
        /// The project folder (default: the current folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// List the exceptions still valid instead of adding one.
        #[arg(long)]
        list: bool,
        /// The exact command line the agent will run (quote it, or put it after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Trust the relaxing rules of this project's committed config (a person's act).
    #[command(
        long_about = "A committed .forge/config.yaml can relax the default policy (`relaxes:` in an allow rule, a \
decision lowered under `decisions:`). In a cloned repository that is someone else's choice, so those parts \
are shown and ignored until a person trusts them here. Trust covers the relaxing parts exactly as they are \
now: if they change, they are ignored again until trusted again. Recorded on the timeline; stored in \
~/.config/forge/trust.json. The guard denies agents running this command.",
        after_help = "Examples:\n  forge guard trust --show\n  forge guard trust\n  forge guard trust --revoke"
    )]
    Trust {
        /// Show what would be trusted, and whether it is, without changing anything.
        #[arg(long)]
        show: bool,
        /// Withdraw trust.
        #[arg(long, conflicts_with = "show")]
        revoke: bool,
        /// The project folder (default: the current folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Lift the phase scope of an interrupted `forge run` (a person's act).
    #[command(
        long_about = "While a `forge run` slice is in a phase, agents may write only that phase's files — also after \
the `forge run` driving it was killed: an agent that kills its driver stays in scope. A person lifts the scope \
by resuming the run (`forge run --resume <slug>`), by letting it finish, or with this command, which lifts \
the scope of the run in its present state (recorded on the timeline); if the run is resumed and moves on, \
its scope applies again. Refused while a `forge run` drives the run.",
        after_help = "Examples:\n  forge guard lift --show\n  forge guard lift"
    )]
    Lift {
        /// Show the phase in force without lifting it.
        #[arg(long)]
        show: bool,
        /// The project folder (default: the current folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
}

fn folder(cwd: Option<PathBuf>) -> Result<PathBuf> {
    let base = super::cwd()?;
    Ok(match cwd {
        Some(c) if c.is_absolute() => c,
        Some(c) => base.join(c),
        None => base,
    })
}

/// Records a person's guard act on the timeline, when the folder is a Forge project. Besides
/// `event`, each carries the `decision`/`rule`/`tool`/`target` fields the timeline's table
/// view shows for guard events (`allow-once [granted] Bash: git push -f …`).
fn record(cwd: &Path, data: serde_json::Value) {
    match Project::discover(cwd) {
        Ok(p) => forge::timeline::Recorder::for_cli(&p).record_or_warn(None, "guard", data),
        Err(_) => eprintln!(
            "forge: note: {} is not a Forge project (no .forge/config.yaml); nothing recorded on a timeline",
            cwd.display()
        ),
    }
}

fn actor(cwd: &Path) -> String {
    Project::discover(cwd)
        .map(|p| forge::timeline::Recorder::for_cli(&p).actor)
        .unwrap_or_else(|_| format!("human:{}", std::env::var("USER").unwrap_or_default()))
}

/// `90s`, `10m`, `2h`, `1d`.
fn parse_duration(s: &str) -> Option<Duration> {
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = n.parse().ok()?;
    let per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => return None,
    };
    // At most a year: an exception is for one call soon, not a standing rule.
    n.checked_mul(per)
        .filter(|s| (1..=366 * 86400).contains(s))
        .map(Duration::from_secs)
}

pub fn run(cmd: Command) -> Result<i32> {
    match cmd {
        Command::Rules { json } => rules_cmd(json),
        Command::Check {
            tool,
            input,
            cwd,
            sandboxed,
            json,
            command,
        } => {
            let cwd = folder(cwd)?;
            let (guard, _) = guard_for(&cwd)?;
            // A check never uses up a person's allow-once exception.
            let guard = guard.sandboxed(sandboxed).without_exceptions();
            for u in &guard.untrusted() {
                eprintln!(
                    "forge: note: ignored until a person trusts it (`forge guard trust`): {u}"
                );
            }
            let result = match (tool, input) {
                (Some(tool), Some(input)) => {
                    if !command.is_empty() {
                        return Err(Error::usage(
                            "give either --tool/--input or a command line, not both",
                        ));
                    }
                    let v: serde_json::Value = serde_json::from_str(&input)
                        .map_err(|e| Error::usage(format!("--input is not JSON: {e}")))?;
                    guard.check_tool(&tool, &v, &cwd)
                }
                (None, None) => {
                    if command.is_empty() {
                        eprintln!(
                            "forge: error: give a command line: forge guard check -- <command>"
                        );
                        return Ok(EXIT_USAGE);
                    }
                    guard.check_command(&command.join(" "), &cwd)
                }
                _ => {
                    return Err(Error::usage(
                        "--input needs --tool (and --tool needs --input)",
                    ));
                }
            };
            if json {
                super::print_json(&result);
            } else {
                println!(
                    "{} [{}] {}{}",
                    result.decision.as_str(),
                    result.rule,
                    result.reason,
                    result.way_out()
                );
            }
            Ok(result.decision.exit_code())
        }
        Command::AllowOnce {
            valid_for,
            tool,
            input,
            cwd,
            list,
            command,
        } => {
            let cwd = folder(cwd)?;
            let dir = config::user_dir(&forge::repo::home());
            if !list {
                person_only("allow-once")?;
            }
            if list {
                let grants = exceptions::list(&dir);
                if grants.is_empty() {
                    println!("No allow-once exceptions.");
                }
                for g in grants {
                    println!(
                        "{}  {}  until {}  {}",
                        g.root.display(),
                        g.tool,
                        g.expires_at,
                        g.call
                    );
                }
                return Ok(EXIT_OK);
            }
            let ttl = parse_duration(&valid_for).ok_or_else(|| {
                Error::usage(format!(
                    "--for {valid_for}: give a duration such as 90s, 10m, 2h or 1d (at most 366d)"
                ))
            })?;
            let (tool, call) = match (tool, input) {
                (Some(t), Some(i)) => {
                    if !command.is_empty() {
                        return Err(Error::usage(
                            "give either --tool/--input or a command line, not both",
                        ));
                    }
                    let v: serde_json::Value = serde_json::from_str(&i)
                        .map_err(|e| Error::usage(format!("--input is not JSON: {e}")))?;
                    let canon = forge::guard::canonical_tool(&t).to_string();
                    (canon, forge::guard::tools::exact_call(&t, &v))
                }
                (None, None) if !command.is_empty() => ("Bash".to_string(), command.join(" ")),
                _ => {
                    return Err(Error::usage(
                        "give the exact command after `--` (or --tool and --input), e.g. forge guard allow-once -- 'git push --force origin x'",
                    ));
                }
            };
            let (guard, _) = guard_for(&cwd)?;
            let by = actor(&cwd);
            let g = exceptions::grant(&dir, &guard.paths.root, &tool, &call, &by, ttl)?;
            record(
                &cwd,
                serde_json::json!({"event": "allow-once-granted", "decision": "allow-once", "rule": "granted", "tool": g.tool, "target": forge::text::clip(&g.call, 300), "call": forge::text::clip(&g.call, 300), "expires_at": g.expires_at}),
            );
            println!(
                "Allowed once, until {}, in {}: {} `{}`",
                g.expires_at,
                g.root.display(),
                g.tool,
                g.call
            );
            Ok(EXIT_OK)
        }
        Command::Trust { show, revoke, cwd } => {
            if !show {
                person_only("trust")?;
            }
            trust_cmd(show, revoke, folder(cwd)?)
        }
        Command::Lift { show, cwd } => {
            if !show {
                person_only("lift")?;
            }
            lift_cmd(show, folder(cwd)?)
        }
    }
}

/// A person's acts refuse to run where the environment says an agent runs them — a second
/// line behind the guard, which denies agents these commands (`human-only`) however they are
/// spelled. An agent could clear these variables; the guard is what stops it.
fn person_only(what: &str) -> Result<()> {
    let agent = ["CLAUDECODE", "GEMINI_CLI", "CODEX_SANDBOX", "FORGE_ROLE"]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
        .map(str::to_string)
        .or_else(|| {
            std::env::var("FORGE_ACTOR")
                .ok()
                .filter(|a| a.starts_with("agent:"))
                .map(|a| format!("FORGE_ACTOR={a}"))
        });
    match agent {
        Some(v) => Err(Error::usage(format!(
            "`forge guard {what}` is a person's act, and this looks like an agent's session ({v} is set): run it in your own terminal"
        ))),
        None => Ok(()),
    }
}

fn rules_cmd(json: bool) -> Result<i32> {
    let cwd = super::cwd()?;
    let guard = guard_for(&cwd).ok().map(|(g, _)| g);
    if json {
        let rows: Vec<_> = rules::DEFAULT_RULES
            .iter()
            .map(|r| serde_json::json!({"id": r.id, "decision": r.decision, "what": r.summary}))
            .collect();
        let added: Vec<_> = guard
            .as_ref()
            .map(|g| g.added())
            .unwrap_or_default()
            .into_iter()
            .map(|(from, id, d, what)| serde_json::json!({"from": from, "id": id, "decision": d, "what": what}))
            .collect();
        let untrusted = guard.as_ref().map(|g| g.untrusted()).unwrap_or_default();
        super::print_json(
            &serde_json::json!({"rules": rows, "added": added, "untrusted": untrusted}),
        );
    } else {
        for r in rules::DEFAULT_RULES {
            println!("{:5} {:22} {}", r.decision.as_str(), r.id, r.summary);
        }
        if let Some(g) = guard {
            for (from, id, d, what) in g.added() {
                println!("{:5} {:22} {from}: {what}", d.as_str(), id);
            }
            for u in &g.untrusted() {
                println!("ignored until trusted (`forge guard trust`): {u}");
            }
        }
    }
    Ok(EXIT_OK)
}

fn trust_cmd(show: bool, revoke: bool, cwd: PathBuf) -> Result<i32> {
    let project = Project::discover(&cwd).map_err(|_| {
        Error::usage(format!(
            "{} is not a Forge project (no .forge/config.yaml): there is nothing to trust",
            cwd.display()
        ))
    })?;
    let config = forge::config::Config::load(&project.config_path())?;
    let root = forge::guard::paths::real(&project.root);
    let dir = config::user_dir(&forge::repo::home());
    let relaxing = config.guard.relaxing();
    let fp = config.guard.relaxing_fingerprint();
    if revoke {
        trust::untrust(&dir, &root)?;
        record(
            &cwd,
            serde_json::json!({"event": "trust-revoked", "decision": "trust", "rule": "revoked", "tool": "config", "target": root.display().to_string()}),
        );
        println!(
            "Trust withdrawn for {}: its relaxing rules are ignored.",
            root.display()
        );
        return Ok(EXIT_OK);
    }
    if relaxing.is_empty() {
        println!(
            "{} relaxes no default rule: nothing needs trusting.",
            project.config_path().display()
        );
        return Ok(EXIT_OK);
    }
    let trusted = trust::is_trusted(&dir, &root, &fp);
    println!(
        "{} relaxes the default policy:",
        project.config_path().display()
    );
    for r in &relaxing {
        println!("  - {r}");
    }
    if show {
        println!(
            "{}",
            if trusted {
                "Trusted: these apply."
            } else {
                "Not trusted: these are ignored until a person runs `forge guard trust`."
            }
        );
        return Ok(EXIT_OK);
    }
    let by = actor(&cwd);
    trust::trust(&dir, &root, &fp, &by)?;
    record(
        &cwd,
        serde_json::json!({"event": "trust", "decision": "trust", "rule": "granted", "tool": "config", "target": relaxing.join("; "), "fingerprint": fp, "relaxing": relaxing}),
    );
    println!("Trusted by {by}: these apply until they change.");
    Ok(EXIT_OK)
}

fn lift_cmd(show: bool, cwd: PathBuf) -> Result<i32> {
    let root = Project::discover(&cwd)
        .map(|p| p.root)
        .unwrap_or_else(|_| cwd.clone());
    if show {
        match phase::load_phase(&root).map_err(Error::usage)? {
            None => println!("No run phase is in force."),
            Some(p) => println!(
                "Run `{}` slice `{}` is in its {} phase ({}).",
                p.run,
                if p.slice.is_empty() { "-" } else { &p.slice },
                p.phase,
                if p.driven {
                    "a `forge run` drives it"
                } else {
                    "interrupted: its scope stays until a person resumes or lifts it"
                }
            ),
        }
        return Ok(EXIT_OK);
    }
    match phase::lift(&root).map_err(Error::usage)? {
        Lift::Nothing => {
            println!("No run phase is in force: nothing to lift.");
            Ok(EXIT_OK)
        }
        Lift::Driven(p) => {
            eprintln!(
                "forge: error: run `{}` is being driven by a `forge run`; its scope lifts when it finishes or stops",
                p.run
            );
            Ok(EXIT_USAGE)
        }
        Lift::Lifted(p) => {
            record(
                &cwd,
                serde_json::json!({"event": "phase-lifted", "decision": "lift", "rule": format!("phase-{}", p.phase), "tool": "run", "target": format!("{} {}", p.run, p.slice), "run": p.run, "slice": p.slice, "phase": p.phase}),
            );
            println!(
                "Lifted the {} phase scope of interrupted run `{}`; `forge run --resume {}` brings it back.",
                p.phase, p.run, p.run
            );
            Ok(EXIT_OK)
        }
    }
}
