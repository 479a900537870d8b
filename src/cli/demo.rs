//! `forge demo`: builds a small sample repository in a temp folder and walks through verify,
//! scenario coverage and the circuit breaker by running this very binary, so what it prints is
//! exactly what a person would see.

use std::path::PathBuf;
use std::process::Command;

use forge::error::{EXIT_OK, Error, Result};

#[derive(clap::Args)]
#[command(
    about = "Tour Forge on a sample repository: verify, scenario coverage, the circuit breaker",
    after_help = "Examples:\n  forge demo\n  forge demo --keep    # leave the sample repository to explore"
)]
pub struct Args {
    /// Keep the sample repository and print its path.
    #[arg(long)]
    keep: bool,
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

pub fn run(args: Args) -> Result<i32> {
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

    if args.keep {
        let kept = tmp.keep();
        say(&format!(
            "The sample repository is kept at {}",
            kept.display()
        ));
    } else {
        say("Done. Run `forge demo --keep` to explore the sample repository afterwards.");
    }
    Ok(EXIT_OK)
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
        println!(
            "\n$ forge {}",
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let out = Command::new(&self.exe)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| Error::io(format!("cannot run {}", self.exe.display()), e))?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        let err = String::from_utf8_lossy(&out.stderr);
        for l in err.lines() {
            println!("{l}");
        }
        println!("# exit {}", out.status.code().unwrap_or(-1));
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
