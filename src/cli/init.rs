use forge::error::{EXIT_OK, Result};
use forge::repo::CONFIG_FILE;

#[derive(clap::Args)]
#[command(
    about = "Write a commented .forge/config.yaml for this project and ignore Forge's local state in git",
    long_about = "Detects the project's test runner (cargo, go, vitest, jest, npm, pytest) and writes a \
commented .forge/config.yaml with its test command and report format (and its lint command, enabled \
only where the project's CI, Makefile, justfile or lint config already runs it), creates \
.forge/changes/, and adds .tmp/.forge/ to .gitignore. Run it in the repository root.",
    after_help = "Examples:\n  forge init\n  forge init --force    # replace an existing config"
)]
pub struct Args {
    /// Replace an existing .forge/config.yaml.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let cwd = super::cwd()?;
    // Prefer the repository root; a folder outside git works too.
    let root = forge::git::repo_root(&cwd).unwrap_or(cwd);
    let o = forge::init::init(&root, args.force)?;
    match &o.detected {
        Some(d) => println!(
            "Wrote {CONFIG_FILE} for a {} project (test: `{}`, report: {}).",
            d.kind, d.test, d.report
        ),
        None => println!(
            "Wrote {CONFIG_FILE}; no test runner was recognised: set `verify.commands` in it."
        ),
    }
    if let Some(program) = o.detected.as_ref().and_then(|d| d.missing.as_deref()) {
        println!(
            "Note: `{program}` is not on PATH here: install it, or change `run:` in {CONFIG_FILE} to a command that runs on this machine (`forge doctor` checks it)."
        );
    }
    if let Some(d) = &o.detected
        && let Some(lint) = &d.lint
    {
        match &d.lint_seen_in {
            Some(seen) => println!("Lint: `{lint}` (the project already runs it: {seen})."),
            None => println!(
                "Lint: `{lint}` is written commented out (nothing in this project runs it yet): uncomment it in {CONFIG_FILE} to verify it too."
            ),
        }
    }
    if !o.gitignore_added.is_empty() {
        println!("Added to .gitignore: {}", o.gitignore_added.join(", "));
    }
    println!("Next:");
    for (command, what) in [
        ("forge verify", "check the project now"),
        (
            "forge hooks install claude",
            "verify when the agent stops, guard its tools (or codex, gemini)",
        ),
        (
            "forge change new <name>",
            "describe a change and its scenarios",
        ),
        (
            "forge change use <name>",
            "make the Stop hook verify that change (else: all changes)",
        ),
        (
            "forge verify --change <name>",
            "verify one change, guarded by the circuit breaker",
        ),
    ] {
        println!("  {command:<31}  {what}");
    }
    Ok(EXIT_OK)
}
