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
    after_help = "Examples:\n  forge timeline\n  forge timeline --change checkout --kind verify\n  forge timeline --since 2026-11-30T00:00:00Z --json\n  forge timeline verify\n  forge timeline --html timeline.html"
)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    #[arg(long)]
    change: Option<String>,
    #[arg(long)]
    session: Option<String>,
    /// verify, breaker, guard, tool, hook, budget, repair, …
    #[arg(long)]
    kind: Option<String>,
    /// Only events at or after this RFC 3339 time.
    #[arg(long)]
    since: Option<String>,
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
    if let Some(since) = &args.since
        && since.parse::<jiff::Timestamp>().is_err()
    {
        return Err(Error::usage(format!(
            "--since `{since}` is not an RFC 3339 time (e.g. 2026-11-30T09:00:00Z)"
        )));
    }
    let filter = Filter {
        change: args.change,
        session: args.session,
        kind: args.kind,
        since: args.since,
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
