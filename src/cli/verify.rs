use forge::breaker;
use forge::config::Config;
use forge::error::{EXIT_OK, Error, Result};
use forge::git;
use forge::repo::{Project, validate_change_name};
use forge::verify;

#[derive(clap::Args, Debug, PartialEq)]
#[command(
    about = "Run the configured commands and scenario coverage; print `Verdict: PASS|FAIL`",
    long_about = "Runs every command in .forge/config.yaml `verify.commands` (with its timeout), parses each \
test report, checks scenario coverage (of --change, or of all changes), and prints a report ending in \
`Verdict: PASS` or `Verdict: FAIL`.\n\nBare `forge verify` is a reporter: it exits 0 even on FAIL. With \
--change the circuit breaker counts consecutive FAILs of that change in \
.forge/changes/<change>/verify-attempts.yaml: it exits 0 while the streak builds and 1 at the threshold \
(CIRCUIT OPEN) and while open. A PASS closes it; so does --reset-breaker, a person's act.",
    after_help = "Examples:\n  forge verify\n  forge verify --change checkout\n  forge verify --change checkout --max-failures 5\n  forge verify --change checkout --json | jq .breaker\n  forge verify --reset-breaker --change checkout   # after a person has intervened\n\nExit codes: 0 PASS, or FAIL below the threshold (or without --change); 1 CIRCUIT OPEN; 2 usage, config or state error."
)]
pub struct Args {
    /// The change to verify: scenario coverage of that change only, counted by its breaker.
    #[arg(long, value_name = "CHANGE")]
    change: Option<String>,
    /// Consecutive failures that open the circuit (overrides `breaker.max_failures`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_failures: Option<u32>,
    /// Clear the change's breaker after a person intervened (keeps total_attempts).
    #[arg(long, requires = "change")]
    reset_breaker: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// The arguments after `verify`, read without clap for the common forms: `--json`,
    /// `--change NAME` / `--change=NAME` and `--max-failures N` / `--max-failures=N`, each at
    /// most once. Verify runs on every agent step and building clap's command tree costs more
    /// than the rest of the start-up. `None` for anything else — help, `--reset-breaker`,
    /// repeated or unknown flags, values clap might read differently — which then goes to clap,
    /// so every message and exit code stays clap's.
    pub fn parse_simple<'a>(mut args: impl Iterator<Item = &'a str>) -> Option<Args> {
        let mut out = Args {
            change: None,
            max_failures: None,
            reset_breaker: false,
            json: false,
        };
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None => (arg, None),
            };
            match flag {
                "--json" if inline.is_none() && !out.json => out.json = true,
                "--change" if out.change.is_none() => {
                    let v = match inline {
                        Some(v) => v,
                        None => args.next()?,
                    };
                    // Plain change names only; anything clap could take for a flag goes to clap.
                    if v.is_empty()
                        || !v
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        || v.starts_with('-')
                    {
                        return None;
                    }
                    out.change = Some(v.to_string());
                }
                "--max-failures" if out.max_failures.is_none() => {
                    let v = match inline {
                        Some(v) => v,
                        None => args.next()?,
                    };
                    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    match v.parse::<u32>() {
                        Ok(n) if n >= 1 => out.max_failures = Some(n),
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        Some(out)
    }
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    let config = Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))?;
    if args.reset_breaker {
        let change = args.change.as_deref().expect("clap requires --change");
        return reset(&project, change, config.breaker.max_failures, args.json);
    }
    let max_failures = args.max_failures.unwrap_or(config.breaker.max_failures);
    // Fail closed before spending minutes on tests: a breaker file that does not parse stops here.
    if let Some(c) = &args.change {
        validate_change_name(c)?;
        breaker::load(&project, c)?;
    }
    let report = verify::run(&project, &config, args.change.as_deref())?;
    let outcome = match &args.change {
        Some(c) => Some(breaker::record(&project, c, report.verdict, max_failures)?),
        None => None,
    };
    let rec = forge::timeline::Recorder::for_cli(&project);
    forge::timeline::record_verify(&rec, &report, outcome.as_ref());
    if args.json {
        let mut v = serde_json::to_value(&report)
            .map_err(|e| Error::usage(format!("cannot encode the report: {e}")))?;
        if let Some(o) = &outcome {
            v["breaker"] = serde_json::json!({
                "consecutive_failures": o.state.consecutive_failures,
                "max_failures": o.max_failures,
                "open": o.state.open,
                "total_attempts": o.state.total_attempts,
                "last_verdict": o.state.last_verdict,
                "message": o.line(),
            });
        }
        super::print_json(&v);
    } else {
        print!("{}", report.render_text());
        if let Some(o) = &outcome {
            println!("{}", o.line());
        }
    }
    if let Some(o) = &outcome
        && o.state.open
    {
        eprintln!(
            "forge: the circuit is open: stop retrying and get a person to look at change \"{}\"; after intervening they run: forge verify --reset-breaker --change {}",
            o.change, o.change
        );
    }
    Ok(outcome.map_or(EXIT_OK, |o| o.exit_code()))
}

fn reset(project: &Project, change: &str, max_failures: u32, json: bool) -> Result<i32> {
    validate_change_name(change)?;
    let by = git::user_name(&project.root)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into());
    let at = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| jiff::Timestamp::now().to_string());
    let r = breaker::reset(project, change, &by, &at)?;
    let rec = forge::timeline::Recorder::for_cli(project);
    rec.record_or_warn(
        Some(change),
        "breaker",
        serde_json::json!({
            "event": "reset",
            "by": by,
            "before": r.before.as_ref().map(|b| serde_json::json!({"consecutive_failures": b.consecutive_failures, "open": b.open})),
            "unreadable": r.unreadable,
            "consecutive_failures": 0,
            "open": false,
            "total_attempts": r.after.total_attempts,
            "max_failures": max_failures,
        }),
    );
    if json {
        super::print_json(&r);
        return Ok(EXIT_OK);
    }
    let was = match (&r.before, &r.unreadable) {
        (_, Some(e)) => format!("the old state was unreadable ({e}); total_attempts restarts at 0"),
        (Some(b), None) => format!(
            "was {} consecutive failure(s){}; total_attempts kept: {}",
            b.consecutive_failures,
            if b.open { ", circuit open" } else { "" },
            b.total_attempts
        ),
        (None, None) => "there was no breaker state yet".to_string(),
    };
    println!("Breaker: reset for change \"{change}\" by {by} at {at} — {was}.");
    Ok(EXIT_OK)
}
