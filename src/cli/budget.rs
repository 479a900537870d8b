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
        /// claude-json, codex-json, gemini-json, or a session's running record read
        /// incrementally (only what was added since the last call, a hook's included):
        /// claude-transcript, gemini-chat or codex-rollout; followed by the file.
        #[arg(long, num_args = 2, value_names = ["FORMAT", "FILE"])]
        from: Vec<String>,
    },
    /// The price table: the built-in rows and their date, what .forge/config.yaml adds or
    /// overrides, and what a model with no row is priced at.
    #[command(after_help = "Examples:\n  forge budget prices\n  forge budget prices --json")]
    Prices {
        #[arg(long)]
        json: bool,
    },
    /// Set a limit in .forge/config.yaml (a person's act, recorded on the timeline; refused to agents).
    #[command(
        after_help = "LIMIT is change.usd, change.tokens, session.usd, session.tokens or warn_at; VALUE a number, or `none` for no limit.\nOnly that value changes in .forge/config.yaml: comments and layout stay.\n\nExamples:\n  forge budget set change.usd 5\n  forge budget set session.tokens 3000000\n  forge budget set warn_at 0.9\n  forge budget set change.usd none"
    )]
    Set {
        /// change.usd, change.tokens, session.usd, session.tokens or warn_at.
        limit: String,
        /// A number ≥ 0, or `none`.
        value: String,
    },
    /// Raise a limit by an amount (a person's act, recorded on the timeline; refused to agents).
    #[command(
        after_help = "LIMIT is change.usd, change.tokens, session.usd or session.tokens.\n\nExamples:\n  forge budget raise change.usd 2        # $5.00 → $7.00\n  forge budget raise session.tokens 500000"
    )]
    Raise {
        /// change.usd, change.tokens, session.usd or session.tokens.
        limit: String,
        /// How much to add (> 0).
        by: String,
    },
}

/// `forge budget set|raise`: refused when an agent's session runs it (see `forge::caller` for
/// what that rests on), else one value changed in place and the act put on the timeline.
fn change_limit(project: &Project, verb: &str, limit: &str, value: &str) -> Result<i32> {
    if let Some(m) = forge::caller::agent_marker() {
        eprintln!(
            "forge: refused: `forge budget {verb}` is a person's act, and this looks like an agent's session ({}={} is set by {}). A person runs it in their own terminal.",
            m.variable,
            forge::text::clip_words(&m.value, 40),
            m.agent
        );
        return Ok(EXIT_GATE);
    }
    let key = budget::LimitKey::parse(limit)?;
    let number = |v: &str| -> Result<f64> {
        v.trim_start_matches('$')
            .parse::<f64>()
            .map_err(|_| Error::usage(format!("`{v}` is not a number")))
    };
    let new = if verb == "raise" {
        budget::NewValue::Raise(number(value)?)
    } else if matches!(value, "none" | "null") {
        budget::NewValue::Set(None)
    } else {
        budget::NewValue::Set(Some(number(value)?))
    };
    let c = budget::change_limit(project, key, new, |text| {
        Config::parse(text).map(|c| c.budget)
    })?;
    let rec = forge::timeline::Recorder::for_cli(project);
    let number = |v: Option<f64>| match v {
        Some(t) if c.key.is_tokens() => serde_json::json!(t as u64),
        v => serde_json::json!(v),
    };
    rec.record(
        None,
        "budget",
        serde_json::json!({"event": "limits-changed", "by": verb, "key": c.key.name(), "from": number(c.from), "to": number(c.to)}),
    )?;
    budget::remember_limits(project, &c.budget);
    let how = match new {
        budget::NewValue::Raise(by) => format!(" (raised by {})", c.key.show(Some(by))),
        budget::NewValue::Set(_) => String::new(),
    };
    println!(
        "budget.{}: {} → {}{how}. Written to {} (only that value changed); recorded on the timeline as {}.",
        c.key.name(),
        c.key.show(c.from),
        c.key.show(c.to),
        forge::repo::CONFIG_FILE,
        rec.actor
    );
    Ok(EXIT_OK)
}

/// Spend against the limits for the given change (default: the active one) and session.
fn standings(
    project: &Project,
    config: &Config,
    change: Option<String>,
    session: Option<String>,
) -> Result<Vec<budget::Standing>> {
    // A change named by hand must exist: a typo would otherwise read as a ledger with no
    // spend ("ok"), which is a wrong answer, not an empty one.
    if let Some(c) = &change {
        forge::verify::check_change_exists(project, c)?;
    }
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
        Command::Set { limit, value } => change_limit(&project, "set", &limit, &value),
        Command::Raise { limit, by } => change_limit(&project, "raise", &limit, &by),
        Command::Prices { json } => {
            prices(&config.budget, json);
            Ok(EXIT_OK)
        }
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
            // Recording spend on a new name starts that change's ledger (and so the change):
            // unlike reading one, it is not a typo's silent wrong answer.
            let change = change.or_else(|| forge::hooks::active_change(&project));
            if change.is_none() && session.is_none() {
                return Err(Error::usage(
                    "give --change (or set an active change with `forge change use`) or --session",
                ));
            }
            let spends: Vec<Spend> = if from.len() == 2 {
                let path = PathBuf::from(&from[1]);
                // A session's running record: read from where the last call (a hook's or this
                // command's) stopped, never whole.
                let running = match from[0].as_str() {
                    "claude-transcript" => Some(budget::ingest_transcript as budget::ReadRecord),
                    "gemini-chat" => Some(budget::ingest_chat as budget::ReadRecord),
                    "codex-rollout" => Some(budget::ingest_rollout as budget::ReadRecord),
                    _ => None,
                };
                if let Some(read) = running {
                    read(
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
                        "claude-json" => budget::from_claude_json(&parse(&text)?, &config.budget)
                            .map_err(Error::usage)?,
                        "gemini-json" => budget::from_gemini_json(&parse(&text)?, &config.budget)
                            .map_err(Error::usage)?,
                        "codex-json" => {
                            budget::from_codex_jsonl(&text, model.as_deref(), &config.budget)
                        }
                        other => {
                            return Err(Error::usage(format!(
                                "unknown --from format `{other}`: use claude-json, codex-json, gemini-json, claude-transcript, gemini-chat or codex-rollout"
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
                        let (usd, estimate) = match u {
                            Some(u) => (u, None),
                            None => budget::price(&config.budget, model.as_deref(), &tk),
                        };
                        vec![Spend {
                            source: "manual".into(),
                            model: model.clone(),
                            usd,
                            estimate,
                            tokens: tk,
                        }]
                    }
                }
            };
            let notices = budget::record(&project, change.as_deref(), session.as_deref(), &spends)?;
            let rec = forge::timeline::Recorder::for_cli(&project);
            for s in &spends {
                rec.record_or_warn(
                    change.as_deref(),
                    "budget",
                    serde_json::json!({"source": s.source, "model": s.model, "usd": s.usd, "tokens": s.tokens.total(), "estimated": s.estimate}),
                );
                println!(
                    "Recorded ${:.4} ({} tokens, {}{}{}).",
                    s.usd,
                    s.tokens.total(),
                    s.model.as_deref().unwrap_or("no model"),
                    if s.source.ends_with("-subagent") {
                        ", subagents"
                    } else {
                        ""
                    },
                    match &s.estimate {
                        Some(e) => format!(", ESTIMATED at the price of `{}`", e.like),
                        None => String::new(),
                    }
                );
            }
            // Named once per project, with the lines that price it.
            for n in &notices {
                eprintln!("forge: warning: {}", n.hint());
                rec.record_or_warn(change.as_deref(), "budget", n.event());
            }
            if spends.is_empty() {
                println!("No spend found in the input.");
            }
            Ok(EXIT_OK)
        }
    }
}

/// `forge budget prices`: the table in force, row by row, with where each row comes from.
fn prices(b: &budget::BudgetConfig, json: bool) {
    use budget::prices::{FAMILIES, TABLE, dearest, merged};
    let rows = merged(b);
    let source = |k: &str| match (
        TABLE.iter().find(|r| r.model == k),
        b.prices.contains_key(k),
    ) {
        (Some(_), true) => "config (overrides built-in)",
        (None, _) => "config",
        _ => "built-in",
    };
    let families: Vec<(&str, &str)> = FAMILIES
        .iter()
        .filter_map(|f| dearest(&rows, Some(f)).map(|(k, _)| (f.name, k.as_str())))
        .collect();
    let all = dearest(&rows, None).map_or("", |(k, _)| k.as_str());
    // Rates as a person wrote them: 0.1 × 6 is 0.6, not 0.6000000000000001.
    let round = |x: f64| (x * 1e9).round() / 1e9;
    let full = |p: &budget::Price| {
        (
            round(p.cache_write.unwrap_or(p.input * 1.25)),
            round(p.cache_write_1h.unwrap_or(p.input * 2.0)),
            round(p.cache_read.unwrap_or(p.input * 0.1)),
        )
    };
    if json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|(k, p)| {
                let (w, w1h, r) = full(p);
                let built_in = TABLE.iter().find(|r| r.model == k).map(|r| {
                    serde_json::json!({"input": r.input, "output": r.output, "cache_write": r.cache_write, "cache_write_1h": r.cache_write_1h, "cache_read": r.cache_read})
                });
                serde_json::json!({"model": k, "input": p.input, "output": p.output, "cache_write": w, "cache_write_1h": w1h, "cache_read": r, "source": source(k), "built_in": built_in})
            })
            .collect();
        let fam: serde_json::Map<String, serde_json::Value> = families
            .iter()
            .map(|(f, k)| (f.to_string(), serde_json::json!(k)))
            .collect();
        super::print_json(
            &serde_json::json!({"as_of": budget::AS_OF, "unit": "USD per million tokens", "rows": rows, "families": fam, "dearest": all}),
        );
        return;
    }
    println!(
        "Prices in USD per million tokens: the built-in table of {}, with budget.prices from .forge/config.yaml. A model takes the row of the longest prefix of its name.",
        budget::AS_OF
    );
    let mut lines = vec![[
        "model".to_string(),
        "input".into(),
        "output".into(),
        "cache write".into(),
        "cache write 1h".into(),
        "cache read".into(),
        "source".into(),
    ]];
    for (k, p) in &rows {
        let (w, w1h, r) = full(p);
        lines.push([
            k.clone(),
            p.input.to_string(),
            p.output.to_string(),
            w.to_string(),
            w1h.to_string(),
            r.to_string(),
            source(k).to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
    println!(
        "A model with no row is priced as the dearest row of its family ({}), else as the dearest of all (`{all}`); never free. Give it its own price under budget.prices.",
        families
            .iter()
            .map(|(f, k)| format!("{f}: `{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
