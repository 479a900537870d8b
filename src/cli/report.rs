use std::path::PathBuf;

use forge::error::{EXIT_OK, Error, Result};
use forge::report::{self, Format};

#[derive(clap::Args)]
#[command(
    about = "Parse a test report or captured runner output and show the cases Forge sees",
    long_about = "Parses a file the way `forge verify` would: a report a runner wrote (JUnit XML, Jest or \
Vitest JSON) or a runner's captured output (cargo test, nextest, pytest, go test -json, TAP). Use it to \
choose the `report:` setting of a command.",
    after_help = "Examples:\n  cargo test 2>&1 | tee out.txt; forge report out.txt\n  forge report target/junit.xml --format junit --json"
)]
pub struct Args {
    /// The report or captured output.
    file: PathBuf,
    /// The format (default: detected).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    format: Format,
    #[arg(long)]
    json: bool,
}

fn parse_format(s: &str) -> std::result::Result<Format, String> {
    s.parse()
}

pub fn run(args: Args) -> Result<i32> {
    let r = report::parse_file(&args.file, args.format).map_err(|e| Error::usage(e.to_string()))?;
    if args.json {
        let mut v = serde_json::to_value(&r).map_err(|e| Error::usage(e.to_string()))?;
        v["counts"] = serde_json::to_value(r.counts()).unwrap_or_default();
        super::print_json(&v);
        return Ok(EXIT_OK);
    }
    // One buffered writer: a report can list hundreds of thousands of cases.
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let c = r.counts();
    let fmt = r.format.map_or("none".to_string(), |f| f.to_string());
    let xfailed = if c.xfailed > 0 {
        format!(", {} xfailed", c.xfailed)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}: {} passed, {} failed, {} skipped{xfailed} ({fmt})",
        args.file.display(),
        c.passed,
        c.failed,
        c.skipped
    );
    if let Some(e) = &r.infra_error {
        let _ = writeln!(out, "infrastructure error:\n  {}", e.replace('\n', "\n  "));
    }
    if let Some(e) = &r.incomplete {
        let _ = writeln!(out, "incomplete: {e}");
    }
    for t in r.failing() {
        let _ = writeln!(out, "FAILED {}", t.name);
        if let Some(m) = &t.message {
            for l in m.lines() {
                let _ = writeln!(out, "    {l}");
            }
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = out.flush();
    // Freeing every case one by one only delays the exit.
    std::mem::forget(r);
    Ok(EXIT_OK)
}
