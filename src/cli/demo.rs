//! `forge demo`: builds a small sample repository in a temp folder and tours Forge on it by
//! running this very binary, so what it prints is exactly what a person would see. The default
//! tour is a full two-slice `forge run` with a scripted agent (the first thing a new user runs);
//! `forge demo verify` walks through verify, scenario coverage and the circuit breaker.

use std::path::{Path, PathBuf};
use std::process::Command;

use forge::error::{EXIT_OK, Error, Result};

#[derive(clap::Args)]
#[command(
    about = "Tour Forge on a sample repository: a gated red/green run, or verify and the breaker",
    after_help = "Examples:\n  forge demo             # a two-slice `forge run` with a scripted agent that cheats twice\n  forge demo verify      # verify, scenario coverage and the circuit breaker\n  forge demo --keep      # leave the sample repository to explore"
)]
pub struct Args {
    /// Which tour: `run` (the slice loop) or `verify` (verify and the breaker).
    #[arg(value_enum, default_value = "run")]
    tour: Which,
    /// Keep the sample repository and print its path.
    #[arg(long)]
    keep: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Which {
    Run,
    Verify,
}

/// The scripted agent and the sample shop are the ones the end-to-end tests drive, so the demo
/// shows exactly what is tested.
const AGENT: &str = include_str!("../../tests/fixtures/run/agent.sh");
const SHOP_CART: &str = include_str!("../../tests/fixtures/run/shop/src/cart.sh");
const SHOP_RUNNER: &str = include_str!("../../tests/fixtures/run/shop/tests/run.sh");
const SHOP_CARD_TEST: &str = include_str!("../../tests/fixtures/run/shop/tests/card_test.sh");

fn run_config(agent: &Path) -> String {
    format!(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      timeout: 30\n      report: tap\nagents:\n  default:\n    # A scripted stand-in for claude -p / codex exec: it plays every role, and cheats\n    # on its first try as red (edits production code) and as green (weakens the test).\n    command: CHEAT='edit-code edit-test' sh {}\n    timeout: 60\n# The kernel sandbox would refuse both cheats' writes before any gate sees them (red may\n# write only tests, green no test); off here so the tour shows the gates, the second wall.\nsandbox:\n  mode: off\n",
        agent.display()
    )
}

pub fn run(args: Args) -> Result<i32> {
    match args.tour {
        Which::Run => run_tour(args.keep),
        Which::Verify => verify_tour(args.keep),
    }
}

fn run_tour(keep: bool) -> Result<i32> {
    let exe = std::env::current_exe().map_err(|e| Error::io("cannot find the forge binary", e))?;
    let tmp = tempfile::Builder::new()
        .prefix("forge-demo-")
        .tempdir()
        .map_err(|e| Error::io("cannot create a temp folder", e))?;
    let dir = tmp.path().join("shop");
    let agent = tmp.path().join("agents/agent.sh");
    let tour = Tour {
        exe,
        dir: dir.clone(),
    };
    say(
        "A sample shop (a shell pricing function, a TAP test suite) and a scripted agent that plays planner, red, verifier and green.",
    );
    tour.write("src/cart.sh", SHOP_CART)?;
    tour.write("tests/run.sh", SHOP_RUNNER)?;
    tour.write("tests/card_test.sh", SHOP_CARD_TEST)?;
    std::fs::create_dir_all(agent.parent().unwrap_or(tmp.path()))
        .and_then(|_| std::fs::write(&agent, AGENT))
        .map_err(|e| Error::io(format!("cannot write {}", agent.display()), e))?;
    tour.git(&["init", "-q", "-b", "main"])?;
    tour.git(&["config", "user.name", "Demo Person"])?;
    tour.git(&["config", "user.email", "demo@example.com"])?;
    tour.forge_quiet(&["init"])?;
    let config = run_config(&agent);
    tour.write(".forge/config.yaml", &config)?;
    say("The agents are commands (.forge/config.yaml):");
    for l in config.lines() {
        println!("    {l}");
    }
    tour.git(&["add", "-A"])?;
    tour.git(&["commit", "-qm", "chore: sample shop"])?;

    say(
        "Forge drives the loop; every step is a gate that code proves. Watch the two cheats get caught, reverted and sent back:",
    );
    tour.forge(&[
        "run",
        "shop",
        "--goal",
        "members get 10% off; receipts name the amount",
    ])?;
    say(
        "One conventional commit per slice, each holding its test and its code — no checkpoint, no cheat left:",
    );
    tour.show("git", &["log", "--oneline", "--stat", "--format=%h %s"])?;
    say("The run's report: each slice, its gates, attempts, cost and commit.");
    tour.forge(&["run", "--status", "shop"])?;
    finish(tmp, keep)
}

fn finish(tmp: tempfile::TempDir, keep: bool) -> Result<i32> {
    if keep {
        let kept = tmp.keep();
        say(&format!(
            "The sample repository is kept at {}",
            kept.display()
        ));
    } else {
        say(
            "Done. Run `forge demo --keep` to explore the sample repository afterwards (`forge demo verify` tours the breaker).",
        );
    }
    Ok(EXIT_OK)
}

const CART_BUGGY: &str = r#"# The shop's pricing rules.
total() { # amount, payment
  case "$2" in
    card)   echo $(( $1 + $1 * 2 / 100 )) ;;   # 2% card fee
    member) echo $(( $1 - $1 / 20 )) ;;        # 10% member discount (bug: takes 5%)
  esac
}
"#;

const CART_FIXED: &str = r#"# The shop's pricing rules.
total() { # amount, payment
  case "$2" in
    card)   echo $(( $1 + $1 * 2 / 100 )) ;;   # 2% card fee
    member) echo $(( $1 - $1 / 10 )) ;;        # 10% member discount
  esac
}
receipt() { echo "paid $1"; }
"#;

const TESTS: &str = r#"#!/bin/sh
# A tiny TAP test suite, so the demo needs nothing but a shell.
. ./src/cart.sh
n=0; failed=0
check() { # name, got, want
  n=$((n + 1))
  if [ "$2" = "$3" ]; then echo "ok $n - $1"; else
    echo "not ok $n - $1"; echo "  ---"; echo "  message: 'expected $3, got $2'"; echo "  ..."
    failed=1
  fi
}
echo "TAP version 13"
# @scenario checkout/guest-pays-by-card
check "guest pays by card" "$(total 100 card)" "102"
# @scenario checkout/member-gets-discount
check "member gets discount" "$(total 100 member)" "90"
"#;

const RECEIPT_TEST: &str = r#"# @scenario checkout/guest-gets-a-receipt
check "guest gets a receipt" "$(receipt 102)" "paid 102"
"#;

const TESTS_END: &str = "echo \"1..$n\"\nexit $failed\n";

const CONFIG: &str = "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      timeout: 30\n      report: tap\nbreaker:\n  max_failures: 3\n";

fn verify_tour(keep: bool) -> Result<i32> {
    let exe = std::env::current_exe().map_err(|e| Error::io("cannot find the forge binary", e))?;
    let tmp = tempfile::Builder::new()
        .prefix("forge-demo-")
        .tempdir()
        .map_err(|e| Error::io("cannot create a temp folder", e))?;
    let dir = tmp.path().to_path_buf();
    let tour = Tour {
        exe,
        dir: dir.clone(),
    };

    say("A sample shop repository with a pricing bug, a TAP test suite and a change spec.");
    tour.write("src/cart.sh", CART_BUGGY)?;
    tour.write("tests/run.sh", &format!("{TESTS}{TESTS_END}"))?;
    tour.git(&["init", "-q", "-b", "main"])?;
    tour.git(&["config", "user.name", "Demo Person"])?;
    tour.git(&["config", "user.email", "demo@example.com"])?;
    tour.forge(&["init"])?;
    tour.write(".forge/config.yaml", CONFIG)?;
    say("The test command, its report format and the breaker's limit (.forge/config.yaml):");
    for l in CONFIG.lines() {
        println!("    {l}");
    }
    tour.forge(&[
        "change",
        "new",
        "checkout",
        "--scenario",
        "guest pays by card",
        "--scenario",
        "member gets discount",
        "--scenario",
        "guest gets a receipt",
    ])?;
    tour.git(&["add", "-A"])?;
    tour.git(&["commit", "-qm", "chore: sample shop"])?;

    say(
        "Bare verify is a reporter: it shows the failing case and the uncovered scenario, and exits 0.",
    );
    tour.forge(&["verify"])?;

    say("With --change the breaker counts consecutive failures. An agent retrying blindly:");
    for _ in 0..3 {
        tour.forge(&["verify", "--change", "checkout"])?;
    }
    say("The circuit is open: every further attempt exits 1 until a person steps in.");
    tour.forge(&["verify", "--change", "checkout"])?;
    println!("    .forge/changes/checkout/verify-attempts.yaml:");
    let state = std::fs::read_to_string(dir.join(".forge/changes/checkout/verify-attempts.yaml"))
        .map_err(|e| Error::io("cannot read the breaker state", e))?;
    for l in state.lines() {
        println!("      {l}");
    }

    say("A person fixes the discount, adds the missing receipt test, and clears the breaker.");
    tour.write("src/cart.sh", CART_FIXED)?;
    tour.write("tests/run.sh", &format!("{TESTS}{RECEIPT_TEST}{TESTS_END}"))?;
    tour.forge(&["verify", "--reset-breaker", "--change", "checkout"])?;
    tour.forge(&["verify", "--change", "checkout"])?;

    finish(tmp, keep)
}

struct Tour {
    exe: PathBuf,
    dir: PathBuf,
}

impl Tour {
    fn write(&self, rel: &str, text: &str) -> Result<()> {
        let p = self.dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
        }
        std::fs::write(&p, text).map_err(|e| Error::io(format!("cannot write {}", p.display()), e))
    }

    fn git(&self, args: &[&str]) -> Result<()> {
        forge::git::git(&self.dir, args).map(|_| ())
    }

    /// Runs `forge args…` in the sample repository and shows it as a terminal would.
    fn forge(&self, args: &[&str]) -> Result<()> {
        self.show_program(&self.exe, "forge", args)
    }

    /// Runs `forge args…` without showing it (setup steps).
    fn forge_quiet(&self, args: &[&str]) -> Result<()> {
        Command::new(&self.exe)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map(|_| ())
            .map_err(|e| Error::io(format!("cannot run {}", self.exe.display()), e))
    }

    /// Runs another program and shows it.
    fn show(&self, program: &str, args: &[&str]) -> Result<()> {
        self.show_program(Path::new(program), program, args)
    }

    fn show_program(&self, program: &Path, shown: &str, args: &[&str]) -> Result<()> {
        println!(
            "\n$ {shown} {}",
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        // One pipe for stdout and stderr, so the lines come in the order a terminal shows them.
        let cannot = |e| Error::io(format!("cannot run {}", program.display()), e);
        let (mut reader, writer) = std::io::pipe().map_err(cannot)?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&self.dir)
            .stdout(writer.try_clone().map_err(cannot)?)
            .stderr(writer)
            .spawn()
            .map_err(cannot)?;
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut out).map_err(cannot)?;
        let status = child.wait().map_err(cannot)?;
        print!("{}", String::from_utf8_lossy(&out));
        println!("# exit {}", status.code().unwrap_or(-1));
        Ok(())
    }
}

fn say(text: &str) {
    println!("\n## {text}");
}

fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=".contains(c))
    {
        s.to_string()
    } else {
        format!("\"{s}\"")
    }
}
