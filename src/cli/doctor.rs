use forge::doctor::{self, Context, Status};
use forge::error::{EXIT_GATE, EXIT_OK, Result};

#[derive(clap::Args)]
#[command(
    about = "Check that this checkout is ready: git, the config, the test runners and agents on PATH, the agent hooks",
    long_about = "Checks git and the repository, that .forge/config.yaml is valid, that every verify and agent \
command's programs are on PATH (and that `python -m X` can import X), and for each agent whose hooks are wired \
(project and user settings) that every event is wired and that the installed PreToolUse hook really runs and \
denies `rm -rf /` (run on a scratch folder, so nothing is recorded). Each problem comes with how to fix it.",
    after_help = "Exit codes: 0 nothing is broken (the last line counts the warnings, if any), 1 something is broken, 2 usage error.\n\nExamples:\n  forge doctor\n  forge doctor --json"
)]
pub struct Args {
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let ctx = Context::gather(&super::cwd()?, &forge::repo::home());
    let findings = doctor::run(&ctx);
    let broken = findings.iter().filter(|f| f.status == Status::Fail).count();
    if args.json {
        super::print_json(&serde_json::json!({"ok": broken == 0, "checks": findings}));
    } else {
        for f in &findings {
            let flag = match f.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{flag}  {:<7} {}", f.check, f.message);
            if let Some(fix) = &f.fix {
                println!("      {:<7} fix: {fix}", "");
            }
        }
        let warned = findings.iter().filter(|f| f.status == Status::Warn).count();
        if broken == 0 && warned == 0 {
            println!("Nothing is broken.");
        } else if broken == 0 {
            println!(
                "{warned} warning(s): Forge runs, but not every control is in force (see the warn lines)."
            );
        } else {
            println!("{broken} problem(s): fix them and run `forge doctor` again.");
        }
    }
    Ok(if broken == 0 { EXIT_OK } else { EXIT_GATE })
}
