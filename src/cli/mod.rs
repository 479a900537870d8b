//! Command-line interface: parses arguments and maps each subcommand onto the library.

mod budget;
mod change;
mod completions;
mod demo;
mod doctor;
mod guard;
mod hooks;
mod init;
mod report;
mod run;
mod sandbox;
mod status;
mod timeline;
mod undo;
mod verify;
pub mod watchdog;

use clap::{Parser, Subcommand};

use forge::error::{EXIT_USAGE, Error};

/// `0.1.0 (1a2b3c4d5e 2026-11-30)`: the commit comes from `build.rs`.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("FORGE_VERSION_SUFFIX"));

#[derive(Parser)]
#[command(
    name = "forge",
    version = VERSION,
    about = "Deterministic controls around AI coding agents: verify + circuit breaker, spend budget, guardrails, timeline, agent hooks, and a gated red/green run loop.",
    after_help = "Examples:\n  forge init                          write .forge/config.yaml for this project\n  forge change new checkout           scaffold .forge/changes/checkout/spec.md\n  forge verify                        run tests + lint + scenario coverage (reporter, exit 0)\n  forge verify --change checkout      the same, counted by the circuit breaker\n  forge run fix-discount --goal ..   drive agents through the gated red/green loop\n  forge demo                          a two-minute tour on a sample repository\n  forge doctor                        check git, config, test runners and agent hooks\n\nExit codes: 0 ok (and bare verify even on FAIL), 1 a gate refuses (circuit open, run stopped), 2 usage/config/state error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Init(init::Args),
    Verify(verify::Args),
    #[command(subcommand)]
    Change(change::Command),
    Report(report::Args),
    #[command(subcommand)]
    Guard(guard::Command),
    Hook(hooks::HookArgs),
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    Demo(demo::Args),
    Timeline(timeline::Args),
    #[command(subcommand)]
    Budget(budget::Command),
    Status(status::Args),
    Run(run::Args),
    Doctor(doctor::Args),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
    Sandbox(sandbox::Args),
    Undo(undo::Args),
}

pub fn main() -> i32 {
    // Die quietly on a closed pipe (`forge report x | head`), like other Unix tools, instead of
    // panicking in `println!` — except `forge run`, which drives agents and must never end
    // because its reader did (`forge run … | head`): it ignores the signal, drops the failed
    // writes, and keeps every line in the run's log.
    // One thread starts every command: containment may end all of Forge's children.
    forge::exec::sole_spawner();
    let run = std::env::args_os().nth(1).is_some_and(|a| a == "run");
    let disposition = if run {
        nix::libc::SIG_IGN
    } else {
        nix::libc::SIG_DFL
    };
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe {
        nix::libc::signal(nix::libc::SIGPIPE, disposition);
    }
    if let Some(args) = simple_verify() {
        return finish(verify::run(args));
    }
    if let Some(args) = simple_sandbox() {
        return finish(sandbox::run(args));
    }
    if let Some(args) = simple_hook() {
        return finish(hooks::hook(args));
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Init(a) => init::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Change(c) => change::run(c),
        Command::Report(a) => report::run(a),
        Command::Guard(c) => guard::run(c),
        Command::Hook(a) => hooks::hook(a),
        Command::Hooks(c) => hooks::hooks(c),
        Command::Demo(a) => demo::run(a),
        Command::Timeline(a) => timeline::run(a),
        Command::Budget(c) => budget::run(c),
        Command::Status(a) => status::run(a),
        Command::Run(a) => run::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
        Command::Sandbox(a) => sandbox::run(a),
        Command::Undo(a) => undo::run(a),
    };
    finish(result)
}

/// `forge verify` with plain arguments, recognised without building clap's command tree (see
/// [`verify::Args::parse_simple`]); `None` sends everything else through clap.
fn simple_verify() -> Option<verify::Args> {
    let mut argv = std::env::args_os().skip(1);
    if argv.next()? != "verify" {
        return None;
    }
    let rest: Vec<std::ffi::OsString> = argv.collect();
    let rest: Vec<&str> = rest.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    verify::Args::parse_simple(rest.into_iter())
}

/// `forge sandbox` with the arguments its callers produce, read without clap (see
/// [`sandbox::Args::parse_simple`]).
fn simple_sandbox() -> Option<sandbox::Args> {
    let mut argv = std::env::args_os().skip(1);
    if argv.next()? != "sandbox" {
        return None;
    }
    sandbox::Args::parse_simple(argv)
}

/// `forge hook AGENT EVENT`, read without clap (see [`hooks::HookArgs::parse_simple`]).
fn simple_hook() -> Option<hooks::HookArgs> {
    let mut argv = std::env::args_os().skip(1);
    if argv.next()? != "hook" {
        return None;
    }
    hooks::HookArgs::parse_simple(argv)
}

fn finish(result: forge::error::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e @ Error::Interrupted { .. }) => {
            eprintln!("forge: {e}");
            e.exit_code()
        }
        Err(e) => {
            eprintln!("forge: error: {e}");
            e.exit_code()
        }
    }
}

/// The folder the command runs in.
fn cwd() -> Result<std::path::PathBuf, Error> {
    std::env::current_dir().map_err(|e| Error::io("cannot read the current folder", e))
}

/// Prints a value as pretty JSON on stdout.
fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("forge: error: cannot encode JSON: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Command, sandbox, verify};

    /// The clap-free `forge hook` reader takes exactly what clap would make of two plain words,
    /// and leaves everything else to clap.
    #[test]
    fn simple_hook_args_agree_with_clap() {
        let accepted: &[&[&str]] = &[
            &["claude", "pre-tool-use"],
            &["codex", "PreToolUse"],
            &["gemini", "BeforeTool"],
            &["nosuch", "event"],
        ];
        for rest in accepted {
            let simple = super::hooks::HookArgs::parse_simple(rest.iter().map(|s| s.into()))
                .unwrap_or_else(|| panic!("{rest:?} should be read without clap"));
            let mut argv = vec!["forge", "hook"];
            argv.extend(rest.iter());
            match Cli::try_parse_from(argv).map(|c| c.command) {
                Ok(Command::Hook(a)) => assert_eq!(a, simple, "{rest:?}"),
                Ok(_) => panic!("{rest:?}: clap chose another command"),
                Err(e) => panic!("{rest:?}: clap rejects it: {e}"),
            }
        }
        let left_to_clap: &[&[&str]] = &[
            &[],
            &["claude"],
            &["--help"],
            &["claude", "--help"],
            &["claude", "pre-tool-use", "extra"],
            &["-h", "x"],
        ];
        for rest in left_to_clap {
            assert!(
                super::hooks::HookArgs::parse_simple(rest.iter().map(|s| s.into())).is_none(),
                "{rest:?} should go to clap"
            );
        }
    }

    /// Every argument list the clap-free `forge sandbox` reader accepts means exactly what clap
    /// makes of it; everything else is left to clap.
    #[test]
    fn simple_sandbox_args_agree_with_clap() {
        let accepted: &[&[&str]] = &[
            &["--", "true"],
            &[
                "--profile",
                "session",
                "--project",
                "/r",
                "--",
                "/bin/bash",
                "-c",
                "echo '--x' $1",
            ],
            &[
                "--profile",
                "red",
                "--project",
                "/r",
                "--write",
                "tests/**",
                "--write",
                "a/b",
                "--answer",
                "/r/o/a.json",
                "--tmpdir",
                "/t",
                "--client",
                "claude",
                "--cache",
                "~/.npm",
                "--mode",
                "require",
                "--contain",
                "--keep-read-only",
                ".venv",
                "--keep-read-only",
                "web/node_modules",
                "--",
                "sh",
                "-c",
                "x",
            ],
            &["--contain", "--carve-by-rules", "--", "sh", "--", "x"],
            &["--profile", "blue", "--", "true"],
            &[
                "--profile",
                "check",
                "--write",
                "/c",
                "--layer",
                "/c-layer",
                "--layer-keep",
                "target",
                "--layer-keep",
                "a/b",
                "--layer-env",
                ".venv",
                "--layer-env",
                "web/node_modules",
                "--layer-in-place",
                "--contain",
                "--",
                "true",
            ],
        ];
        let left_to_clap: &[&[&str]] = &[
            &[],
            &["--"],
            &["--help"],
            &["--explain"],
            &["--level", "--json"],
            &["--profile=red", "--", "true"],
            &["--profile", "red", "--profile", "green", "--", "true"],
            &["--contain", "--contain", "--", "true"],
            &["--profile", "--contain", "--", "true"],
            &["--profile", "", "--", "true"],
            &["--write"],
            &["--unknown", "--", "true"],
            &["--layer-keep", "target", "--", "true"],
            &["--layer-env", ".venv", "--", "true"],
            &["--layer-in-place", "--", "true"],
            &["--layer", "/a", "--layer", "/b", "--", "true"],
            &["true"],
            &["-p", "red", "--", "true"],
        ];
        for rest in accepted.iter().chain(left_to_clap) {
            let simple = sandbox::Args::parse_simple(rest.iter().map(std::ffi::OsString::from));
            if left_to_clap.contains(rest) {
                assert!(simple.is_none(), "{rest:?} should go to clap");
                continue;
            }
            let simple = simple.unwrap_or_else(|| panic!("{rest:?} should be read without clap"));
            let argv = ["forge", "sandbox"].iter().chain(rest.iter());
            match Cli::try_parse_from(argv) {
                Ok(Cli {
                    command: Command::Sandbox(a),
                }) => assert_eq!(a, simple, "{rest:?}"),
                Ok(_) => panic!("{rest:?}: clap chose another command"),
                Err(e) => panic!("{rest:?}: clap rejects it: {e}"),
            }
        }
    }

    /// Every argument list the clap-free reader accepts must mean exactly what clap makes of
    /// it; everything else must be left to clap.
    #[test]
    fn simple_verify_args_agree_with_clap() {
        let accepted: &[&[&str]] = &[
            &[],
            &["--json"],
            &["--change", "checkout"],
            &["--change=checkout"],
            &["--change", "a-1", "--json"],
            &[
                "--json",
                "--change",
                "guest-checkout",
                "--max-failures",
                "5",
            ],
            &["--max-failures=3", "--change=x"],
            &["--change", "x", "--max-failures", "1"],
            &["--change", "x", "--max-failures", "007"],
            &["--change", "x", "--max-failures", "4294967295"],
            &["test"],
            &["test", "lint"],
            &["lint", "--json", "unit_2"],
            &["extra"],
            &["--strict"],
            &["--gate"],
            &["--quiet"],
            &["-q"],
            &["--strict", "--quiet", "--change", "c"],
            &["--format", "github"],
            &["--format=json"],
            &["--format", "text"],
            &["--color", "never"],
            &["--color=always"],
            &["--color", "auto", "--format", "github", "--strict"],
            &["--junit", "target/forge.xml"],
            &["--junit=out/j.xml", "--gate"],
            &["--junit", "report.xml", "lint"],
        ];
        let left_to_clap: &[&[&str]] = &[
            &["--help"],
            &["-h"],
            &["--json", "--json"],
            &["--json=true"],
            &["--change"],
            &["--change", "--json"],
            &["--change", "-x"],
            &["--change", ""],
            &["--change="],
            &["--change", "Checkout"],
            &["--change", "a", "--change", "b"],
            &["--reset-breaker", "--change", "a"],
            &["--reset-breaker"],
            &["--max-failures", "1"],
            &["--max-failures", "0", "--change", "x"],
            &["--max-failures", "-1", "--change", "x"],
            &["--max-failures", "+5", "--change", "x"],
            &["--max-failures", "4294967296", "--change", "x"],
            &["--max-failures", "99999999999", "--change", "x"],
            &["--max-failures"],
            &["--"],
            &["--", "test"],
            &["--jso"],
            &["-j"],
            &["-qq"],
            &["--strict", "--gate"],
            &["--strict", "--strict"],
            &["--quiet", "-q"],
            &["--strict=yes"],
            &["--format", "xml"],
            &["--format"],
            &["--format", "json", "--format", "text"],
            &["--json", "--format", "json"],
            &["--format", "json", "--json"],
            &["--color", "sometimes"],
            &["--color"],
            &["--color", "never", "--color", "never"],
            &["--junit"],
            &["--junit", ""],
            &["--junit", "-x"],
            &["--junit", "a b.xml"],
            &["--junit", "a", "--junit", "b"],
            &["na me"],
            &["-"],
            &["t\u{e9}st"],
        ];
        for rest in accepted.iter().chain(left_to_clap) {
            let simple = verify::Args::parse_simple(rest.iter().copied());
            let argv = ["forge", "verify"].iter().chain(rest.iter());
            let clap = Cli::try_parse_from(argv);
            if left_to_clap.contains(rest) {
                assert!(simple.is_none(), "{rest:?} should go to clap");
                continue;
            }
            let simple = simple.unwrap_or_else(|| panic!("{rest:?} should be read without clap"));
            match clap {
                Ok(Cli {
                    command: Command::Verify(a),
                }) => assert_eq!(a, simple, "{rest:?}"),
                Ok(_) => panic!("{rest:?}: clap chose another command"),
                Err(e) => panic!("{rest:?}: clap rejects it: {e}"),
            }
        }
    }
}
