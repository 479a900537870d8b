//! `forge verify`: loads the config, calls [`forge::verify`], shows progress, renders the
//! result (text, JSON, GitHub annotations, JUnit XML) and lets the breaker or `--strict`
//! choose the exit code.

mod progress;

use std::io::IsTerminal;
use std::path::PathBuf;

use forge::breaker;
use forge::config::Config;
use forge::counted;
use forge::error::{EXIT_GATE, EXIT_OK, Error, Result};
use forge::git;
use forge::repo::{Project, validate_change_name};
use forge::verify::{self, Style, Verdict};

/// `--color`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when the output is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// `--format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// The readable report.
    #[default]
    Text,
    /// One JSON object (the same as `--json`).
    Json,
    /// The readable report plus GitHub Actions `::error` annotations for every failure.
    Github,
}

#[derive(clap::Args, Debug, PartialEq)]
#[command(
    about = "Run the configured commands and scenario coverage; print `Verdict: PASS|FAIL`",
    long_about = "Runs every command in .forge/config.yaml `verify.commands` (with its timeout), parses each \
test report, checks scenario coverage (of --change, or of all changes), and prints a report ending in \
`Verdict: PASS` or `Verdict: FAIL`. Name commands to run only those (no scenario coverage then).\n\n\
While it runs, each command's line appears on stdout as it ends; stderr says when each starts (a \
spinner with the elapsed time when stderr is a terminal). --quiet drops the progress, not the report.\n\n\
Bare `forge verify` is a reporter: it exits 0 even on FAIL; --strict (or --gate) exits 1 on FAIL, for CI. With \
--change the circuit breaker counts consecutive FAILs of that change in \
.forge/changes/<change>/verify-attempts.yaml: it exits 0 while the streak builds and 1 at the threshold \
(CIRCUIT OPEN) and while open. A PASS closes it; so does --reset-breaker, a person's act.",
    after_help = "Examples:\n  forge verify\n  forge verify lint                 # only the command named `lint`\n  forge verify --change checkout\n  forge verify --change checkout --max-failures 5\n  forge verify --change checkout --json | jq .breaker\n  forge verify --strict --format github --junit forge-junit.xml   # in CI\n  forge verify --reset-breaker --change checkout   # after a person has intervened\n\nExit codes: 0 PASS, or FAIL below the threshold (or without --change and --strict); 1 CIRCUIT OPEN, or FAIL with --strict; 2 usage, config or state error."
)]
pub struct Args {
    /// Run only these commands (by `name` in .forge/config.yaml); scenario coverage is skipped.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// The change to verify: scenario coverage of that change only, counted by its breaker.
    #[arg(long, value_name = "CHANGE")]
    change: Option<String>,
    /// Consecutive failures that open the circuit (overrides `breaker.max_failures`).
    #[arg(long, value_name = "N", requires = "change", value_parser = clap::value_parser!(u32).range(1..))]
    max_failures: Option<u32>,
    /// Clear the change's breaker after a person intervened (keeps total_attempts).
    #[arg(long, requires = "change", conflicts_with_all = ["names", "strict", "junit"])]
    reset_breaker: bool,
    /// Exit 1 on FAIL (a CI gate); bare verify exits 0 on FAIL.
    #[arg(long, visible_alias = "gate")]
    strict: bool,
    /// Print one JSON object instead of the text report (same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// The report's form.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
    /// Also write the result as JUnit XML to this file (for CI test dashboards); its folder must
    /// exist.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// No progress lines or spinner on stderr (the report is unchanged).
    #[arg(long, short)]
    quiet: bool,
    /// Colour: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
}

impl Args {
    fn output(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.format
        }
    }

    /// The arguments after `verify`, read without clap for the common forms: command names,
    /// `--json`, `--strict`/`--gate`, `--quiet`/`-q`, `--change NAME`, `--max-failures N` (with
    /// `--change`), `--format F`, `--color WHEN` and `--junit PATH` (values inline after `=` or
    /// as the next argument), each at most once. Verify runs on every agent step and building
    /// clap's command tree costs more than the rest of the start-up. `None` for anything else
    /// — help, `--reset-breaker`, repeated or unknown flags, values clap might read
    /// differently — which then goes to clap, so every message and exit code stays clap's.
    pub fn parse_simple<'a>(mut args: impl Iterator<Item = &'a str>) -> Option<Args> {
        let mut out = Args {
            names: Vec::new(),
            change: None,
            max_failures: None,
            reset_breaker: false,
            strict: false,
            json: false,
            format: OutputFormat::Text,
            junit: None,
            quiet: false,
            color: ColorChoice::Auto,
        };
        let (mut format_seen, mut color_seen) = (false, false);
        // A value clap reads as given: not empty, not something it could take for a flag.
        let plain = |v: &str| {
            !v.is_empty()
                && !v.starts_with('-')
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./+@".contains(&b))
        };
        while let Some(arg) = args.next() {
            if !arg.starts_with('-') {
                if !plain(arg) {
                    return None;
                }
                out.names.push(arg.to_string());
                continue;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None => (arg, None),
            };
            let mut value = || match inline {
                Some(v) => Some(v),
                None => args.next(),
            };
            match flag {
                "--json" if inline.is_none() && !out.json && !format_seen => out.json = true,
                "--strict" | "--gate" if inline.is_none() && !out.strict => out.strict = true,
                "--quiet" | "-q" if inline.is_none() && !out.quiet => out.quiet = true,
                "--change" if out.change.is_none() => {
                    let v = value()?;
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
                    let v = value()?;
                    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    match v.parse::<u32>() {
                        Ok(n) if n >= 1 => out.max_failures = Some(n),
                        _ => return None,
                    }
                }
                "--format" if !format_seen && !out.json => {
                    format_seen = true;
                    out.format = match value()? {
                        "text" => OutputFormat::Text,
                        "json" => OutputFormat::Json,
                        "github" => OutputFormat::Github,
                        _ => return None,
                    };
                }
                "--color" if !color_seen => {
                    color_seen = true;
                    out.color = match value()? {
                        "auto" => ColorChoice::Auto,
                        "always" => ColorChoice::Always,
                        "never" => ColorChoice::Never,
                        _ => return None,
                    };
                }
                "--junit" if out.junit.is_none() => {
                    let v = value()?;
                    if !plain(v) {
                        return None;
                    }
                    out.junit = Some(PathBuf::from(v));
                }
                _ => return None,
            }
        }
        // `--max-failures` needs `--change`: clap says so.
        if out.max_failures.is_some() && out.change.is_none() {
            return None;
        }
        Some(out)
    }
}

/// Whether to colour a stream: `--color`, then `NO_COLOR` (set and not empty: no colour), a
/// dumb terminal, and whether the stream is a terminal at all.
fn use_color(choice: ColorChoice, is_tty: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            is_tty
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        }
    }
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    let config = Config::load_cached(&project.config_path(), &project.tmp_dir().join("cache"))?;
    let output = args.output();
    if args.reset_breaker {
        let change = args.change.as_deref().expect("clap requires --change");
        return reset(
            &project,
            change,
            config.breaker.max_failures,
            output == OutputFormat::Json,
        );
    }
    // Ctrl-C ends the running command and reports, rather than killing Forge under it.
    forge::exec::stop_on_interrupt();
    let max_failures = args.max_failures.unwrap_or(config.breaker.max_failures);
    // Fail closed before spending minutes on tests: a breaker file that does not parse stops here.
    if let Some(c) = &args.change {
        validate_change_name(c)?;
        breaker::load(&project, c)?;
    }
    // A report that cannot be written is a usage error found before the suite runs, not after.
    let junit = args.junit.as_deref().map(junit_target).transpose()?;
    let stdout_tty = std::io::stdout().is_terminal();
    let stderr_tty = std::io::stderr().is_terminal();
    let out_style = Style {
        color: use_color(args.color, stdout_tty),
    };
    let err_style = Style {
        color: use_color(args.color, stderr_tty),
    };
    let text = (output != OutputFormat::Json).then(|| {
        let selected: Vec<&str> = config
            .verify
            .commands
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| args.names.is_empty() || args.names.iter().any(|a| a == n))
            .collect();
        let names: Vec<String> = selected.iter().map(|n| n.to_string()).collect();
        progress::TextStream {
            header: verify::header(
                selected.len(),
                config.verify.commands.len(),
                args.change.as_deref(),
                &names,
            ),
            width: verify::name_width(selected.iter().copied()),
            style: out_style,
        }
    });
    let place = verify::walled_place(&project, config.verify.sandbox_mode(config.sandbox.mode))?;
    let mut live = progress::Live::new(
        text,
        stdout_tty,
        stderr_tty,
        args.quiet,
        err_style,
        project.root.clone(),
    );
    let report = verify::run_with(
        &project,
        &config.verify,
        verify::Request {
            change: args.change.as_deref(),
            only: &args.names,
            place: Some(&place),
        },
        &mut live,
    )?;
    live.finish_header();
    drop(live);
    let outcome = counted::verdict(
        &project,
        args.change.as_deref(),
        counted::Verified::Report(&report),
        max_failures,
        Some(&forge::timeline::Recorder::for_cli(&project)),
    )?;
    if output == OutputFormat::Json {
        let mut v = serde_json::to_value(&report)
            .map_err(|e| Error::usage(format!("cannot encode the report: {e}")))?;
        v["breaker"] = match &outcome {
            Some(o) => serde_json::json!({
                "consecutive_failures": o.state.consecutive_failures,
                "max_failures": o.max_failures,
                "open": o.state.open,
                "total_attempts": o.state.total_attempts,
                "last_verdict": o.state.last_verdict,
                "message": o.line(),
            }),
            None => serde_json::Value::Null,
        };
        super::print_json(&v);
    } else {
        let mut end = String::new();
        if output == OutputFormat::Github {
            end.push_str(&verify::github_annotations(&report, &project.root));
        }
        end.push_str(&report.render_end(out_style));
        if let Some(o) = &outcome {
            end.push_str(&o.line());
            end.push('\n');
        }
        print!("{end}");
    }
    if let Some(path) = &junit {
        junit_target(path)?;
        forge::state::write_atomic(path, verify::junit_xml(&report).as_bytes())?;
    }
    if let Some(o) = &outcome
        && o.state.open
    {
        eprintln!(
            "forge: the circuit is open: stop retrying and get a person to look at change \"{}\"; after intervening they run: forge verify --reset-breaker --change {}",
            o.change, o.change
        );
    }
    let breaker_code = outcome.as_ref().map_or(EXIT_OK, |o| o.exit_code());
    let strict_code = if args.strict && report.verdict == Verdict::Fail {
        EXIT_GATE
    } else {
        EXIT_OK
    };
    Ok(breaker_code.max(strict_code))
}

/// Where `--junit` writes, checked: its folder must exist and take a new file. Forge creates
/// no folder for it, so a mistyped path is an error rather than a stray tree.
fn junit_target(path: &std::path::Path) -> Result<std::path::PathBuf> {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        super::cwd()?.join(path)
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("/"),
    };
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "--junit {}: the folder {} does not exist; create it first (Forge does not create folders for the report)",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::usage(format!(
            "--junit {} is a folder: name the XML file to write in it",
            path.display()
        )));
    }
    tempfile::tempfile_in(&dir).map_err(|e| {
        Error::usage(format!(
            "--junit {}: cannot write in {} ({e})",
            path.display(),
            dir.display()
        ))
    })?;
    Ok(path)
}

fn reset(project: &Project, change: &str, max_failures: u32, json: bool) -> Result<i32> {
    // A reset of a change that does not exist would create its folder: refuse, like verify.
    verify::check_change_exists(project, change)?;
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
