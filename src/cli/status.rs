use forge::breaker;
use forge::config::Config;
use forge::error::{EXIT_OK, Result};
use forge::repo::Project;
use forge::timeline::{self, Filter};

#[derive(clap::Args)]
#[command(
    about = "One screen for a person: active change, last verdict, breaker, spend, recent guard denials",
    after_help = "Examples:\n  forge status\n  forge status --json"
)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    let config = Config::load(&project.config_path())?;
    let change = forge::hooks::active_change(&project);
    let breaker_state = match &change {
        Some(c) => breaker::load(&project, c).map_err(|e| e.to_string()),
        None => Ok(None),
    };
    let spend = forge::budget::standings(&project, &config.budget, change.as_deref(), None)
        .map_err(|e| e.to_string());
    let denials = timeline::read(
        &project.root,
        &Filter {
            kind: Some("guard".into()),
            ..Filter::default()
        },
    )?
    .into_iter()
    .filter(|e| e.data.get("decision").and_then(|d| d.as_str()) == Some("deny"))
    .rev()
    .take(5)
    .collect::<Vec<_>>();
    // Without an active change, the last bare `forge verify` (recorded with no change) is the
    // one that speaks for the working tree; a change's verdict would be another question's.
    let last_verify = timeline::read(
        &project.root,
        &Filter {
            change: change.clone(),
            kind: Some("verify".into()),
            ..Filter::default()
        },
    )?
    .into_iter()
    .rev()
    .find(|e| change.is_some() || e.change.is_none());
    // An active change whose folder is gone (deleted, renamed, another branch): its breaker
    // and verdict would be a stale answer to a question nobody asks now.
    let known = forge::spec::list_changes(&project)?;
    let missing = change
        .as_ref()
        .filter(|c| !known.iter().any(|k| &k.name == *c));
    let runs = forge::run::state::list(&project).map_err(|e| e.to_string());
    let level = forge::sandbox::level();
    let sandbox = forge::sandbox::in_force(config.sandbox.mode, &level);
    if args.json {
        super::print_json(&serde_json::json!({
            "change": change,
            "last_verify": last_verify,
            "breaker": breaker_state.as_ref().ok(),
            "breaker_error": breaker_state.as_ref().err(),
            "spend": spend.as_ref().ok(),
            "spend_error": spend.as_ref().err(),
            "recent_denials": denials,
            "runs": runs.as_ref().ok(),
            "runs_error": runs.as_ref().err(),
            "sandbox": {"mode": config.sandbox.mode, "level": level, "full": level.full(), "in_force": sandbox},
        }));
        return Ok(EXIT_OK);
    }
    match (&change, missing) {
        (Some(c), Some(_)) => println!(
            "Active change: {c} — no such change now (known: {}); set one with `forge change use <name>`",
            if known.is_empty() {
                "none".to_string()
            } else {
                known
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        (Some(c), None) => println!("Active change: {c}"),
        (None, _) => println!("Active change: none (set one with `forge change use <name>`)"),
    }
    match (&last_verify, &change) {
        (Some(e), Some(_)) => println!("Last verify:   {} ({})", timeline::summary(e), e.ts),
        (Some(e), None) => println!(
            "Last verify:   {} ({}; a bare `forge verify`, no change: the breaker did not count it)",
            timeline::summary(e),
            e.ts
        ),
        (None, Some(_)) => println!("Last verify:   none recorded for this change"),
        (None, None) => println!("Last verify:   none recorded"),
    }
    match &breaker_state {
        Ok(Some(s)) if s.open => println!(
            "Breaker:       CIRCUIT OPEN after {} consecutive failures — a person must reset it",
            s.consecutive_failures
        ),
        Ok(Some(s)) => println!(
            "Breaker:       {}/{} consecutive failures, {} attempts",
            s.consecutive_failures, config.breaker.max_failures, s.total_attempts
        ),
        Ok(None) => println!("Breaker:       no attempts"),
        Err(e) => println!("Breaker:       UNREADABLE — {e}"),
    }
    match &spend {
        Ok(st) if st.is_empty() => println!("Spend:         -"),
        Ok(st) => {
            for s in st {
                println!(
                    "Spend:         {}{}",
                    s.describe(),
                    if s.over {
                        "  OVER LIMIT"
                    } else if s.warn {
                        "  (near limit)"
                    } else {
                        ""
                    }
                );
            }
        }
        Err(e) => println!("Spend:         UNREADABLE — {e}"),
    }
    if denials.is_empty() {
        println!("Guard:         no denials recorded");
    } else {
        println!("Guard denials (most recent first):");
        for e in &denials {
            println!(
                "  {}  {}",
                &e.ts[..e.ts.len().min(19)],
                timeline::summary(e)
            );
        }
    }
    match &runs {
        Ok(r) if r.is_empty() => println!("Runs:          none"),
        Ok(r) => {
            let m = &r[0];
            println!(
                "Runs:          {} — latest `{}`: {}{} (`forge run --status {}`)",
                r.len(),
                m.slug,
                format!("{:?}", m.status).to_lowercase(),
                m.stop_reason
                    .as_ref()
                    .map(|s| format!(
                        " — {}",
                        forge::text::clip_words(&forge::text::inert(s, 2000), 160)
                    ))
                    .unwrap_or_default(),
                m.slug
            );
        }
        Err(e) => println!("Runs:          UNREADABLE — {e}"),
    }
    println!("Sandbox:       {sandbox}");
    Ok(EXIT_OK)
}
