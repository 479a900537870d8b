use forge::config::Config;
use forge::error::{EXIT_GATE, EXIT_OK, EXIT_USAGE, Error, Result};
use forge::repo::Project;
use forge::run::{self, Outcome, state};

#[derive(clap::Args)]
#[command(
    about = "Drive agents through the red/green slice loop, every step proven by a deterministic gate",
    long_about = "Runs the TDD slice loop: a read-only planner writes ordered slices; then per slice the \
pre-red baseline, a red agent writes one failing test (red file-scope, single-red-failure), a verifier \
confirms the failure (verified-red), Forge makes a temporary checkpoint commit (red checkpoint), a green \
agent makes it pass (green file-scope, green checks, milestone checks), and Forge makes one conventional \
commit whose parent is the slice's START_SHA (final ancestry). A failed gate is recovered (reverted, \
undone, reset) and its reason goes back to the same agent; red gets 5 attempts, then the retry wave uses \
new agents for 5 more; after that Forge stops and reports.\n\nAgents are commands from .forge/config.yaml \
`agents.<role>.command` (planner, red, verifier, green, coverage_reviewer, or default), run in the \
repository root with FORGE_ROLE, FORGE_PROMPT_FILE, FORGE_RUN_DIR, FORGE_SLICE, FORGE_ATTEMPT, \
FORGE_OUTPUT and FORGE_AGENT_SESSION. Everything the run writes is under .tmp/.forge/runs/<slug>/.",
    after_help = "Examples:\n  forge run member-discount --goal \"members get 10% off\"\n  forge run --resume member-discount     # after a kill, or after a person fixed what stopped it\n  forge run --resume member-discount --retry receipt   # a slice whose retries ran out\n  forge run --resume member-discount --accept receipt  # land an already-green test as coverage\n  forge run --status member-discount\n  forge run --status member-discount --json | jq '.slices[].forge.status'\n  forge run --status                     # every run\n\nConfig:\n  agents:\n    default:\n      command: claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --session-id \"$FORGE_AGENT_SESSION\" --output-format json\n      resume_command: claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --resume \"$FORGE_AGENT_SESSION\" --output-format json\n      timeout: 1800\n\nExit codes: 0 every slice landed; 1 the run stopped (a gate, the retry policy, the budget or the breaker) and a person decides; 2 usage, config or state error."
)]
pub struct Args {
    /// The run's name (lowercase letters, digits, `-`); also the change its budget and breaker count.
    #[arg(value_name = "SLUG")]
    slug: Option<String>,
    /// What the run should achieve (starts a new run).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["resume", "status"])]
    goal: Option<String>,
    /// Continue a run from its saved state.
    #[arg(long, value_name = "SLUG", conflicts_with_all = ["status", "slug"])]
    resume: Option<String>,
    /// With --resume: give a failed slice (retries exhausted) a fresh first wave — a person's call.
    #[arg(long, value_name = "SLICE", requires = "resume")]
    retry: Option<String>,
    /// With --resume: land a slice whose test passed before any code change (already green) as
    /// test-only coverage — a person's call, since nothing shows that test can fail.
    #[arg(long, value_name = "SLICE", requires = "resume")]
    accept: Option<String>,
    /// Show a run's slices, gates, attempts, cost and commits (every run without SLUG).
    #[arg(long, value_name = "SLUG", num_args = 0..=1, default_missing_value = "", conflicts_with = "slug")]
    status: Option<String>,
    /// JSON instead of text (progress lines go to stderr).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    if let Some(slug) = &args.status {
        return status(&project, slug, args.json);
    }
    let loaded = Config::load(&project.config_path())?;
    let config = run::Settings {
        verify: &loaded.verify,
        agents: &loaded.agents,
        run: &loaded.run,
        budget: &loaded.budget,
        breaker: &loaded.breaker,
        sandbox: &loaded.sandbox,
    };
    let json = args.json;
    // A reader that went away (`forge run … | head`) must not end the run: a failed write is
    // dropped here, and the run's log (`run.log` in its folder) keeps every line.
    let mut print = |line: &str| {
        use std::io::Write;
        let _ = if json {
            writeln!(std::io::stderr(), "{line}")
        } else {
            writeln!(std::io::stdout(), "{line}")
        };
    };
    let (slug, outcome) = match (&args.resume, &args.slug, &args.goal) {
        (Some(slug), _, _) => (
            slug.clone(),
            run::resume(
                &project,
                config,
                slug,
                run::PersonSays {
                    retry: args.retry.as_deref(),
                    accept: args.accept.as_deref(),
                },
                &mut print,
            )?,
        ),
        (None, Some(slug), Some(goal)) => (
            slug.clone(),
            run::start(&project, config, slug, goal, &mut print)?,
        ),
        (None, Some(slug), None) => {
            return Err(Error::usage(format!(
                "`forge run {slug}` needs --goal \"…\" to start, or use `forge run --resume {slug}` / `forge run --status {slug}`"
            )));
        }
        (None, None, _) => {
            return Err(Error::usage(
                "name the run: `forge run <slug> --goal \"…\"`, `forge run --resume <slug>` or `forge run --status [<slug>]`",
            ));
        }
    };
    if json {
        let (meta, st) = run::status(&project, &slug)?;
        super::print_json(&serde_json::json!({"run": meta, "slices": st.slices}));
    }
    Ok(match outcome {
        Outcome::Done => EXIT_OK,
        Outcome::Stopped(_) => EXIT_GATE,
        Outcome::Setup(_) => EXIT_USAGE,
    })
}

/// A run recorded as running whose folder lock nobody holds: its driver was killed.
fn interrupted(project: &Project, meta: &state::RunMeta) -> bool {
    meta.status == state::RunStatus::Running
        && matches!(
            forge::state::try_lock_dir(&state::run_dir(project, &meta.slug)),
            Ok(Some(_))
        )
}

fn status(project: &Project, slug: &str, json: bool) -> Result<i32> {
    if slug.is_empty() {
        let runs = state::list(project)?;
        if json {
            let runs: Vec<serde_json::Value> = runs
                .iter()
                .map(|m| {
                    let mut v = serde_json::to_value(m).unwrap_or_default();
                    v["interrupted"] = interrupted(project, m).into();
                    v
                })
                .collect();
            super::print_json(&runs);
        } else if runs.is_empty() {
            println!("No runs yet. Start one with `forge run <slug> --goal \"…\"`.");
        } else {
            for m in &runs {
                let status = if interrupted(project, m) {
                    "interrupted".to_string()
                } else {
                    format!("{:?}", m.status).to_lowercase()
                };
                // The run folder is within an agent's reach: what it holds is shown inert.
                println!(
                    "{:<24} {:<11} {}  {}",
                    forge::text::inert(&m.slug, 100),
                    status,
                    forge::text::inert(&m.started_at, 40),
                    forge::text::inert(&m.goal, 60)
                );
            }
        }
        return Ok(EXIT_OK);
    }
    let (meta, st) = run::status(project, slug)?;
    let interrupted = interrupted(project, &meta);
    if json {
        super::print_json(&serde_json::json!({
            "run": meta, "slices": st.slices, "current": st.current, "interrupted": interrupted,
        }));
        return Ok(EXIT_OK);
    }
    // The run folder is within an agent's reach: what it holds is shown inert.
    let inert = |t: &str| forge::text::inert(t, 300);
    println!("Run `{}` — {}", inert(&meta.slug), inert(&meta.goal));
    println!(
        "Status: {}{}{}",
        format!("{:?}", meta.status).to_lowercase(),
        if interrupted {
            " — interrupted: no `forge run` is driving it; continue with `forge run --resume`"
        } else {
            ""
        },
        meta.stop_reason
            .as_ref()
            .map(|r| format!(" — {}", forge::text::printable(r)))
            .unwrap_or_default()
    );
    println!("Started {} from {}", meta.started_at, short(&meta.base_sha));
    for g in &meta.gates {
        println!(
            "  {} {:<20} a{}  {}",
            if g.status == "pass" { "✓" } else { "✗" },
            inert(&g.gate),
            g.attempt,
            inert(&g.file)
        );
    }
    if !meta.planned {
        println!(
            "Planning: not accepted yet ({} planner attempt(s))",
            meta.planner_attempts
        );
    }
    let mut total = 0.0;
    for s in &st.slices {
        let Some(p) = &s.forge else { continue };
        total += p.cost_usd;
        println!();
        println!(
            "{} {} — {}",
            match p.status {
                state::SliceStatus::Done | state::SliceStatus::Covered => "✓",
                state::SliceStatus::Failed => "✗",
                state::SliceStatus::Running => "…",
                state::SliceStatus::Pending => "·",
            },
            inert(&s.id),
            inert(&s.title)
        );
        println!(
            "    status {}, wave {}, red attempts {}, green attempts {}, cost ${:.4} ({} tokens){}",
            format!("{:?}", p.status).to_lowercase(),
            p.wave,
            p.red_attempts_total,
            p.green_attempts_total,
            p.cost_usd,
            p.tokens,
            p.commit
                .as_ref()
                .map(|c| format!(", commit {}", short(c)))
                .unwrap_or_default()
        );
        if !s.depends_on.is_empty() {
            println!("    depends on {}", s.depends_on.join(", "));
        }
        if let Some(f) = &p.failure {
            println!("    failure: {}", forge::text::printable(f));
        }
        for g in &p.gates {
            println!(
                "    {} {:<20} w{} a{}  {}",
                if g.status == "pass" { "✓" } else { "✗" },
                inert(&g.gate),
                g.wave,
                g.attempt,
                inert(&g.file)
            );
        }
    }
    println!();
    if meta.planned {
        println!("{}.", state::landed_summary(&st));
    }
    println!(
        "Total cost ${total:.4}. Gate results: .tmp/.forge/runs/{}/gates/; agent logs: .tmp/.forge/runs/{}/agents/",
        meta.slug, meta.slug
    );
    Ok(EXIT_OK)
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(10)]
}
