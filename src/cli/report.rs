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
    let c = r.counts();
    let fmt = r.format.map_or("none".to_string(), |f| f.to_string());
    println!(
        "{}: {} passed, {} failed, {} skipped ({fmt})",
        args.file.display(),
        c.passed,
        c.failed,
        c.skipped
    );
    if let Some(e) = &r.infra_error {
        println!("infrastructure error:\n  {}", e.replace('\n', "\n  "));
    }
    for t in r.failing() {
        println!("FAILED {}", t.name);
        if let Some(m) = &t.message {
            for l in m.lines() {
                println!("    {l}");
            }
        }
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    Ok(EXIT_OK)
}
