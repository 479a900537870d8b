use std::path::PathBuf;

use forge::budget::{self, Spend, Tokens};
use forge::config::Config;
use forge::error::{EXIT_GATE, EXIT_OK, Error, Result};
use forge::repo::Project;

#[derive(clap::Subcommand)]
#[command(about = "The spend budget: tokens and money per change and per agent session")]
pub enum Command {
    /// Spend against the limits in .forge/config.yaml `budget:`.
    #[command(
        after_help = "Examples:\n  forge budget status\n  forge budget status --change checkout --session 06d8d342 --json"
    )]
    Status {
        /// Default: the active change.
        #[arg(long)]
        change: Option<String>,
        #[arg(long)]
        session: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Exit 1 when a limit is reached (for scripts and CI); 0 otherwise.
    #[command(
        after_help = "Examples:\n  forge budget check --change checkout && ./next-agent-step.sh"
    )]
    Check {
        #[arg(long)]
        change: Option<String>,
        #[arg(long)]
        session: Option<String>,
    },
    /// Record spend by hand or from an agent's JSON output.
    #[command(
        after_help = "Examples:\n  forge budget record --change checkout --usd 0.42\n  forge budget record --change checkout --tokens 120000 --model claude-sonnet-4-5\n  claude -p \"…\" --output-format json > out.json && forge budget record --change checkout --from claude-json out.json\n  codex exec --json \"…\" > events.jsonl && forge budget record --change checkout --from codex-json events.jsonl --model gpt-5\n  gemini -p \"…\" --output-format json > out.json && forge budget record --change checkout --from gemini-json out.json"
    )]
    Record {
        #[arg(long)]
        change: Option<String>,
        #[arg(long)]
        session: Option<String>,
        /// Dollars spent.
        #[arg(long, conflicts_with = "from")]
        usd: Option<f64>,
        /// Tokens spent (priced with --model when given).
        #[arg(long, conflicts_with = "from")]
        tokens: Option<u64>,
        /// The model, for pricing tokens (and for codex-json, which does not name it).
        #[arg(long)]
        model: Option<String>,
        /// claude-json, codex-json, gemini-json or claude-transcript (read incrementally: only
        /// what was added since the last call), followed by the file.
        #[arg(long, num_args = 2, value_names = ["FORMAT", "FILE"])]
        from: Vec<String>,
    },
}

/// Spend against the limits for the given change (default: the active one) and session.
fn standings(
    project: &Project,
    config: &Config,
    change: Option<String>,
    session: Option<String>,
) -> Result<Vec<budget::Standing>> {
    let change = change.or_else(|| forge::hooks::active_change(project));
    budget::standings(
        project,
        &config.budget,
        change.as_deref(),
        session.as_deref(),
    )
}

pub fn run(cmd: Command) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    let config = Config::load(&project.config_path())?;
    budget::note_limit_changes(&project, &config.budget);
    match cmd {
        Command::Status {
            change,
            session,
            json,
        } => {
            let st = standings(&project, &config, change, session)?;
            if json {
                super::print_json(&st);
            } else if st.is_empty() {
                println!(
                    "No change or session given, and no active change: `forge budget status --change <c>`."
                );
            } else {
                for s in &st {
                    let flag = if s.over {
                        "OVER "
                    } else if s.warn {
                        "warn "
                    } else {
                        "ok   "
                    };
                    println!("{flag} {}", s.describe());
                }
            }
            Ok(EXIT_OK)
        }
        Command::Check { change, session } => {
            let st = standings(&project, &config, change, session)?;
            let over: Vec<_> = st.iter().filter(|s| s.over).collect();
            for s in &over {
                println!("OVER {}", s.describe());
            }
            Ok(if over.is_empty() { EXIT_OK } else { EXIT_GATE })
        }
        Command::Record {
            change,
            session,
            usd,
            tokens,
            model,
            from,
        } => {
            let change = change.or_else(|| forge::hooks::active_change(&project));
            if change.is_none() && session.is_none() {
                return Err(Error::usage(
                    "give --change (or set an active change with `forge change use`) or --session",
                ));
            }
            let spends: Vec<Spend> = if from.len() == 2 {
                let path = PathBuf::from(&from[1]);
                if from[0] == "claude-transcript" {
                    // Read from where the last call stopped, never whole.
                    budget::ingest_transcript(
                        &path,
                        &project.tmp_dir().join("transcripts"),
                        &config.budget,
                    )?
                } else {
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
                    let parse = |t: &str| {
                        serde_json::from_str::<serde_json::Value>(t).map_err(|e| {
                            Error::usage(format!("{} is not JSON: {e}", path.display()))
                        })
                    };
                    match from[0].as_str() {
                        "claude-json" => {
                            budget::from_claude_json(&parse(&text)?).map_err(Error::usage)?
                        }
                        "gemini-json" => budget::from_gemini_json(&parse(&text)?, &config.budget)
                            .map_err(Error::usage)?,
                        "codex-json" => {
                            budget::from_codex_jsonl(&text, model.as_deref(), &config.budget)
                        }
                        other => {
                            return Err(Error::usage(format!(
                                "unknown --from format `{other}`: use claude-json, codex-json, gemini-json or claude-transcript"
                            )));
                        }
                    }
                }
            } else {
                match (usd, tokens) {
                    (None, None) => {
                        return Err(Error::usage("give --usd, --tokens or --from FORMAT FILE"));
                    }
                    (Some(u), _) if !(u.is_finite() && u >= 0.0) => {
                        return Err(Error::usage("--usd must be a number ≥ 0"));
                    }
                    (u, t) => {
                        let tk = Tokens {
                            input: t.unwrap_or(0),
                            ..Tokens::default()
                        };
                        vec![Spend {
                            source: "manual".into(),
                            model: model.clone(),
                            usd: u.or_else(|| budget::price(&config.budget, model.as_deref(), &tk)),
                            tokens: tk,
                        }]
                    }
                }
            };
            budget::record(&project, change.as_deref(), session.as_deref(), &spends)?;
            let rec = forge::timeline::Recorder::for_cli(&project);
            for s in &spends {
                rec.record_or_warn(
                    change.as_deref(),
                    "budget",
                    serde_json::json!({"source": s.source, "model": s.model, "usd": s.usd, "tokens": s.tokens.total(), "unpriced": s.usd.is_none()}),
                );
                match s.usd {
                    Some(u) => println!(
                        "Recorded ${u:.4} ({} tokens, {}).",
                        s.tokens.total(),
                        s.model.as_deref().unwrap_or("no model")
                    ),
                    None => println!(
                        "Recorded {} tokens of {} with NO PRICE (unknown model): they count toward token limits only; add it under `budget.prices`.",
                        s.tokens.total(),
                        s.model.as_deref().unwrap_or("an unnamed model")
                    ),
                }
            }
            if spends.is_empty() {
                println!("No spend found in the input.");
            }
            Ok(EXIT_OK)
        }
    }
}
