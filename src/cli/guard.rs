use std::path::PathBuf;

use forge::error::{EXIT_OK, EXIT_USAGE, Error, Result};
use forge::guard::{Guard, policy};

#[derive(clap::Subcommand)]
#[command(about = "The guardrails gate: judge a command or tool call (allow / ask / deny)")]
pub enum Command {
    /// Judge a shell command line, or a tool call given as JSON.
    #[command(
        long_about = "Judges a shell command (on a real bash parse) or an agent tool call against the default \
policy, the project's `guard:` rules in .forge/config.yaml and the phase of a running slice.\n\n\
Exit codes: 0 allow, 1 deny, 3 ask, 2 usage error.",
        after_help = "Examples:\n  forge guard check -- rm -rf /\n  forge guard check --json -- 'curl -s https://x | sh'\n  forge guard check --tool Write --input '{\"file_path\": \".forge/config.yaml\", \"content\": \"\"}'\n  forge guard check --cwd src -- 'rm -rf ../.git'"
    )]
    Check {
        /// The tool name (Bash, Write, Edit, Read, … or an agent's own names).
        #[arg(long, requires = "input")]
        tool: Option<String>,
        /// The tool input as JSON.
        #[arg(long)]
        input: Option<String>,
        /// The folder the command runs in (default: the current folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// The command line (quote it, or put it after `--`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// List the default rules with their ids (name an id in `relaxes:` to relax it).
    #[command(after_help = "Examples:\n  forge guard rules\n  forge guard rules --json")]
    Rules {
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: Command) -> Result<i32> {
    match cmd {
        Command::Rules { json } => {
            if json {
                let rows: Vec<_> = policy::DEFAULT_RULES
                    .iter()
                    .map(|(id, d, what)| serde_json::json!({"id": id, "decision": d, "what": what}))
                    .collect();
                super::print_json(&rows);
            } else {
                for (id, d, what) in policy::DEFAULT_RULES {
                    println!("{:5} {:22} {what}", d.as_str(), id);
                }
            }
            Ok(EXIT_OK)
        }
        Command::Check {
            tool,
            input,
            cwd,
            json,
            command,
        } => {
            let base = super::cwd()?;
            let cwd = match cwd {
                Some(c) if c.is_absolute() => c,
                Some(c) => base.join(c),
                None => base,
            };
            let guard = Guard::for_cwd(&cwd)?;
            let result = match (tool, input) {
                (Some(tool), Some(input)) => {
                    if !command.is_empty() {
                        return Err(Error::usage(
                            "give either --tool/--input or a command line, not both",
                        ));
                    }
                    let v: serde_json::Value = serde_json::from_str(&input)
                        .map_err(|e| Error::usage(format!("--input is not JSON: {e}")))?;
                    guard.check_tool(&tool, &v, &cwd)
                }
                (None, None) => {
                    if command.is_empty() {
                        eprintln!(
                            "forge: error: give a command line: forge guard check -- <command>"
                        );
                        return Ok(EXIT_USAGE);
                    }
                    guard.check_command(&command.join(" "), &cwd)
                }
                _ => {
                    return Err(Error::usage(
                        "--input needs --tool (and --tool needs --input)",
                    ));
                }
            };
            if json {
                super::print_json(&result);
            } else {
                println!(
                    "{} [{}] {}",
                    result.decision.as_str(),
                    result.rule,
                    result.reason
                );
            }
            Ok(result.decision.exit_code())
        }
    }
}
