use std::path::PathBuf;

use forge::error::{EXIT_GATE, EXIT_OK, Error, Result};
use forge::repo::Project;
use forge::timeline::{self, Filter};

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    about = "The session timeline: every verdict, breaker move, guard decision and hook event, attributed",
    long_about = "Reads every session's .forge/sessions/<session>/timeline.jsonl, merged in time order. \
Each line is an event in a SHA-256 hash chain; `forge timeline verify` checks every chain.",
    after_help = "Examples:\n  forge timeline\n  forge timeline --change checkout --kind verify\n  forge timeline --since 2h\n  forge timeline --since yesterday --until today --kind guard\n  forge timeline --since \"2026-11-30 09:00\" --json\n  forge timeline verify\n  forge timeline --html timeline.html\n\nTimes (--since, --until): a date (2026-11-30, local midnight), a local time (09:00 today, 2026-11-30 09:00), an RFC 3339 time (2026-11-30T09:00:00Z), a span back from now (90s, 30m, 2h, 3d, 1w, 1h30m), or today / yesterday / now. --since is inclusive, --until exclusive."
)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    #[arg(long)]
    change: Option<String>,
    #[arg(long)]
    session: Option<String>,
    /// verify, breaker, guard, tool, hook, budget, note, gate, run, agent or repair.
    #[arg(long)]
    kind: Option<String>,
    /// Only events at or after this time (2026-11-30, 09:00, 2h, yesterday, an RFC 3339 time).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only events before this time (same forms as --since).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    #[arg(long)]
    json: bool,
    /// Write one self-contained HTML page (no network) instead.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Add a note to the timeline (a person's remark, attributed like any event).
    #[command(
        after_help = "Examples:\n  forge timeline note \"reviewed the failing discount test with Ada\" --change checkout"
    )]
    Note {
        text: String,
        #[arg(long)]
        change: Option<String>,
    },
    /// Check every session's hash chain; exit 1 naming the first bad line.
    #[command(after_help = "Examples:\n  forge timeline verify\n  forge timeline verify --json")]
    Verify {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    if let Some(Sub::Note { text, change }) = &args.command {
        let rec = timeline::Recorder::for_cli(&project);
        let e = rec.record(change.as_deref(), "note", serde_json::json!({"text": text}))?;
        println!("Noted in {} (seq {}).", project.rel(&rec.path()), e.seq);
        return Ok(EXIT_OK);
    }
    if let Some(Sub::Verify { json }) = args.command {
        let mut reports = Vec::new();
        for f in timeline::files(&project.root)? {
            reports.push(timeline::verify_file(&f)?);
        }
        let bad = reports.iter().filter(|r| r.error.is_some()).count();
        if json {
            super::print_json(&reports);
        } else {
            if reports.is_empty() {
                println!("No timelines yet.");
            }
            for r in &reports {
                let rel = project.rel(std::path::Path::new(&r.path));
                match &r.error {
                    None if r.repaired.is_empty() => {
                        println!("ok    {rel}: {} events, chain intact", r.events)
                    }
                    None => println!(
                        "ok    {rel}: {} events, chain intact; torn line(s) {:?} repaired",
                        r.events, r.repaired
                    ),
                    Some((line, msg)) => println!("BAD   {rel}:{line}: {msg}"),
                }
            }
        }
        return Ok(if bad > 0 { EXIT_GATE } else { EXIT_OK });
    }
    if let Some(kind) = &args.kind
        && !timeline::is_kind(kind)
    {
        let kinds: Vec<String> = timeline::KINDS
            .iter()
            .map(|(k, what)| format!("  {k:<8} {what}"))
            .collect();
        return Err(Error::usage(format!(
            "--kind `{kind}` is not a kind of event; the kinds are:\n{}",
            kinds.join("\n")
        )));
    }
    let now = jiff::ZonedDateTime::now();
    let when = |flag: &str, v: &Option<String>| -> Result<Option<jiff::Timestamp>> {
        v.as_deref()
            .map(|t| {
                forge::timeline_when::parse(t, &now)
                    .map_err(|e| Error::usage(format!("{flag} {e}")))
            })
            .transpose()
    };
    let filter = Filter {
        change: args.change,
        session: args.session,
        kind: args.kind,
        since: when("--since", &args.since)?,
        until: when("--until", &args.until)?,
    };
    if args.json {
        // The stored lines are the JSON: printed as they are, merged in time order.
        use std::io::Write;
        let lines = timeline::read_lines(&project.root, &filter)?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
        let _ = out.write_all(b"[");
        for (i, e) in lines.iter().enumerate() {
            if i > 0 {
                let _ = out.write_all(b",\n");
            }
            let _ = out.write_all(e.line.as_bytes());
        }
        let _ = out.write_all(b"]\n");
        let _ = out.flush();
        std::mem::forget(lines);
        return Ok(EXIT_OK);
    }
    let events = timeline::read(&project.root, &filter)?;
    if let Some(path) = args.html {
        let page = forge::timeline_html::render(&events);
        std::fs::write(&path, page)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
        println!("Wrote {} ({} events).", path.display(), events.len());
        return Ok(EXIT_OK);
    }
    if events.is_empty() {
        println!("No events.");
    }
    for e in &events {
        println!(
            "{}  {:<24} {:<22} {:<8} {:<14} {}",
            &e.ts[..e.ts.len().min(19)],
            forge::text::clip(&e.session, 24),
            forge::text::clip(&e.actor, 22),
            e.kind,
            e.change.as_deref().unwrap_or("-"),
            timeline::summary(e)
        );
    }
    Ok(EXIT_OK)
}
