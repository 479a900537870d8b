//! The starting states a docs console block names with `setup=NAME`. Each makes a folder in a
//! fresh scratch folder (`<tmp>` in the docs) and sets the folder the block's commands run in.
//! A setup is what the doc's prose says the reader starts from: keep the two in step.

use super::Scratch;

pub struct Setup {
    pub name: &'static str,
    /// What the folder holds, in words (listed when a block names an unknown setup).
    pub what: &'static str,
    pub make: fn(&mut Scratch),
}

pub const SETUPS: &[Setup] = &[
    Setup {
        name: "empty",
        what: "an empty folder, <tmp>/work",
        make: empty,
    },
    Setup {
        name: "git",
        what: "a git repository with one commit (a README) and no Forge config, <tmp>/shop",
        make: git,
    },
    Setup {
        name: "cargo",
        what: "a small committed cargo library with one test and no Forge config, <tmp>/myproject",
        make: cargo,
    },
    Setup {
        name: "shop",
        what: "the verify sample shop (a pricing bug, a TAP suite, change `checkout` with three scenarios, commands test and lint), committed, <tmp>/shop",
        make: shop,
    },
    Setup {
        name: "shop-transcript",
        what: "the verify sample shop, with a Claude Code session transcript (tests/fixtures/spend/claude-transcript.jsonl) as t.jsonl, <tmp>/shop",
        make: shop_transcript,
    },
    Setup {
        name: "no-cases",
        what: "a repository whose one test command, `python3 -c \"import sys; sys.exit(0)\"` (report: pytest), runs no test, <tmp>/shop",
        make: no_cases,
    },
    Setup {
        name: "unrecognised",
        what: "a repository whose one test command, `echo all good` (report: auto), prints no runner's output, <tmp>/shop",
        make: unrecognised,
    },
    Setup {
        name: "budget",
        what: "a repository with `budget: {change: {usd: 0.045}, warn_at: 0.8}` and two agents' records beside it: out.json (`claude -p --output-format json`) and events.jsonl (`codex exec --json`), <tmp>/shop",
        make: budget,
    },
    Setup {
        name: "budget-limits",
        what: "a repository whose commented budget limits are $5.00 a change and $2.00 a session, with a Claude Code session's transcripts (main agent and a subagent) in transcripts/, <tmp>/shop",
        make: budget_limits,
    },
    Setup {
        name: "run-shop",
        what: "the `forge demo` run shop: src/cart.sh, a TAP suite, the scripted agent (cheating once as red and once as green) for every role, committed, <tmp>/shop",
        make: run_shop,
    },
    Setup {
        name: "run-shop-stuck",
        what: "the run shop, with a scripted green agent whose change never passes the checks, committed, <tmp>/shop",
        make: run_shop_stuck,
    },
    Setup {
        name: "run-shop-interrupted",
        what: "the run shop after `forge run discount --goal \"members get 10% off\"` was killed by its own red agent (the scripted agent's `kill-in-red`): slice `member-discount` interrupted in its red phase, its test written, <tmp>/shop",
        make: run_shop_interrupted,
    },
    Setup {
        name: "guard-shop",
        what: "a `forge init`'d repository, committed, with scripts/clean.sh (deletes ~/.cache/shop) and tools/wipe.py (removes build/ with shutil), and a deploy script of the person's outside it, ~/bin/deploy.sh, <tmp>/shop",
        make: guard_shop,
    },
    Setup {
        name: "guard-relaxed",
        what: "the guard shop, whose committed .forge/config.yaml relaxes the default policy: an allow rule for `git reset --hard` that relaxes git-reset-hard, and `unparseable` lowered to ask; not trusted, <tmp>/shop",
        make: guard_relaxed,
    },
    Setup {
        name: "app",
        what: "a git repository with app.txt (`v1`) and `forge init`'s files in one commit, <tmp>/app",
        make: app,
    },
    Setup {
        name: "fixtures",
        what: "<tmp>/work with the repository's tests/fixtures/ (read only)",
        make: fixtures,
    },
];

pub fn find(name: &str) -> Option<&'static Setup> {
    SETUPS.iter().find(|s| s.name == name)
}

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn empty(s: &mut Scratch) {
    s.cwd = s.root().join("work");
    std::fs::create_dir_all(&s.cwd).expect("create work");
}

/// A repository as `git init` leaves it, with the person's identity and a first commit.
fn repo(s: &mut Scratch, name: &str) {
    s.cwd = s.root().join(name);
    std::fs::create_dir_all(&s.cwd).expect("create repository");
    s.git(&["init", "-q", "-b", "main"]);
}

fn commit(s: &Scratch, message: &str) {
    s.git(&["add", "-A"]);
    s.git(&["commit", "-qm", message]);
}

fn git(s: &mut Scratch) {
    repo(s, "shop");
    s.write("README.md", "# shop\n");
    commit(s, "chore: start");
}

fn app(s: &mut Scratch) {
    repo(s, "app");
    s.write("app.txt", "v1\n");
    s.forge(&["init"]);
    commit(s, "chore: start");
}

fn cargo(s: &mut Scratch) {
    repo(s, "myproject");
    s.write(
        "Cargo.toml",
        "[package]\nname = \"myproject\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    s.write(".gitignore", "/target\n");
    s.write(
        "src/lib.rs",
        "/// The price after a member's 10% discount, in cents.\npub fn member_price(cents: u64) -> u64 {\n    cents - cents / 10\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn members_get_ten_percent_off() {\n        assert_eq!(super::member_price(100), 90);\n    }\n}\n",
    );
    commit(s, "chore: start");
}

const CART_BUGGY: &str = "# The shop's pricing rules.\ntotal() { # amount, payment\n  case \"$2\" in\n    card)   echo $(( $1 + $1 * 2 / 100 )) ;;   # 2% card fee\n    member) echo $(( $1 - $1 / 20 )) ;;        # 10% member discount (bug: takes 5%)\n  esac\n}\n";

const SHOP_TESTS: &str = "#!/bin/sh\n# A tiny TAP test suite, so the sample needs nothing but a shell.\n. ./src/cart.sh\nn=0; failed=0\ncheck() { # name, got, want\n  n=$((n + 1))\n  if [ \"$2\" = \"$3\" ]; then echo \"ok $n - $1\"; else\n    echo \"not ok $n - $1\"; echo \"  ---\"; echo \"  message: 'expected $3, got $2'\"; echo \"  ...\"\n    failed=1\n  fi\n}\necho \"TAP version 13\"\n# @scenario checkout/guest-pays-by-card\ncheck \"guest pays by card\" \"$(total 100 card)\" \"102\"\n# @scenario checkout/member-gets-discount\ncheck \"member gets discount\" \"$(total 100 member)\" \"90\"\necho \"1..$n\"\nexit $failed\n";

/// The config docs/verify.md shows.
pub const SHOP_CONFIG: &str = "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\n    - name: lint\n      run: sh -n tests/run.sh\n      report: none\n";

fn shop(s: &mut Scratch) {
    repo(s, "shop");
    s.write("src/cart.sh", CART_BUGGY);
    s.write("tests/run.sh", SHOP_TESTS);
    s.forge(&["init"]);
    s.write(".forge/config.yaml", SHOP_CONFIG);
    s.forge(&[
        "change",
        "new",
        "checkout",
        "--scenario",
        "guest pays by card",
        "--scenario",
        "member gets discount",
        "--scenario",
        "guest gets a receipt",
    ]);
    commit(s, "chore: sample shop");
}

fn shop_transcript(s: &mut Scratch) {
    shop(s);
    std::fs::copy(
        format!("{SPEND}/claude-transcript.jsonl"),
        s.cwd.join("t.jsonl"),
    )
    .expect("copy the transcript");
}

/// A committed repository whose only verify command is `test: run` read as `report`.
fn one_command(s: &mut Scratch, run: &str, report: &str) {
    repo(s, "shop");
    s.forge(&["init"]);
    s.write(
        ".forge/config.yaml",
        &format!(
            "verify:\n  commands:\n    - name: test\n      run: {run}\n      report: {report}\n"
        ),
    );
    commit(s, "chore: start");
}

fn no_cases(s: &mut Scratch) {
    one_command(s, "'python3 -c \"import sys; sys.exit(0)\"'", "pytest");
}

fn unrecognised(s: &mut Scratch) {
    one_command(s, "echo all good", "auto");
}

const SPEND: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spend");

fn budget(s: &mut Scratch) {
    one_command(s, "sh tests/run.sh", "tap");
    s.write(
        ".forge/config.yaml",
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\nbudget:\n  change: { usd: 0.045 }\n  warn_at: 0.8\n",
    );
    commit(s, "chore: budget");
    for (from, to) in [
        ("claude-p-result.json", "out.json"),
        ("codex-exec.jsonl", "events.jsonl"),
    ] {
        std::fs::copy(format!("{SPEND}/{from}"), s.cwd.join(to)).expect("copy a spend fixture");
    }
}

fn budget_limits(s: &mut Scratch) {
    one_command(s, "sh tests/run.sh", "tap");
    s.write(
        ".forge/config.yaml",
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      report: tap\nbudget:\n  change:  { usd: 5.00, tokens: null }     # per change, across sessions\n  session: { usd: 2.00 }                   # per agent session\n  warn_at: 0.8\n",
    );
    commit(s, "chore: budget");
    let session = "0b8b9da3-7a02-4252-bc16-461e8db8eb36";
    let from = format!("{SPEND}/claude-subagents");
    let to = s.cwd.join("transcripts");
    std::fs::create_dir_all(to.join(format!("{session}/subagents"))).expect("create transcripts");
    for f in [
        format!("{session}.jsonl"),
        format!("{session}/subagents/agent-a2101cd273551b528.jsonl"),
        format!("{session}/subagents/agent-a2101cd273551b528.meta.json"),
    ] {
        std::fs::copy(format!("{from}/{f}"), to.join(&f)).expect("copy a transcript");
    }
}

fn run_shop(s: &mut Scratch) {
    shop_with_agent(s, "edit-code edit-test");
}

fn run_shop_stuck(s: &mut Scratch) {
    shop_with_agent(s, "fail-checks");
}

fn run_shop_interrupted(s: &mut Scratch) {
    shop_with_agent(s, "kill-in-red");
    // The red agent writes its test, then kills the `forge run` driving it (SIGKILL).
    let o = s
        .process(&s.forge.display().to_string())
        .args(["run", "discount", "--goal", "members get 10% off"])
        .output()
        .expect("run forge");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&o.status),
        Some(9),
        "setup: the red agent should have killed `forge run`: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The shop `forge demo` runs, with tests/fixtures/run/agent.sh misbehaving as `cheat` says.
fn shop_with_agent(s: &mut Scratch, cheat: &str) {
    repo(s, "shop");
    let fixture = format!("{MANIFEST}/tests/fixtures/run");
    for f in ["src/cart.sh", "tests/run.sh", "tests/card_test.sh"] {
        let text = std::fs::read_to_string(format!("{fixture}/shop/{f}")).expect("shop fixture");
        s.write(f, &text);
    }
    let agent = s.root().join("agents/agent.sh");
    std::fs::create_dir_all(agent.parent().expect("agents")).expect("create agents");
    std::fs::copy(format!("{fixture}/agent.sh"), &agent).expect("copy agent");
    s.forge(&["init"]);
    s.write(
        ".forge/config.yaml",
        &format!(
            "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      timeout: 30\n      report: tap\nagents:\n  default:\n    # A scripted stand-in for claude -p / codex exec: it plays every role.\n    command: CHEAT='{cheat}' sh {}\n    timeout: 60\n# The kernel sandbox would refuse both cheats' writes before any gate sees them (red may\n# write only tests, green no test); off here so the tour shows the gates, the second wall.\nsandbox:\n  mode: off\n",
            agent.display()
        ),
    );
    commit(s, "chore: sample shop");
}

fn fixtures(s: &mut Scratch) {
    empty(s);
    std::fs::create_dir_all(s.cwd.join("tests")).expect("create tests");
    std::os::unix::fs::symlink(
        format!("{MANIFEST}/tests/fixtures"),
        s.cwd.join("tests/fixtures"),
    )
    .expect("link fixtures");
}

/// The clean-up script docs/guard.md judges: it deletes a folder of HOME, outside the project.
const CLEAN_SH: &str = "#!/bin/sh\n# Clears the shop's build cache.\nrm -rf ~/.cache/shop\n";

/// A project code file that changes files: the guard asks about it (outside the sandbox).
const WIPE_PY: &str =
    "import shutil\n\n# Starts the build over.\nshutil.rmtree(\"build\", ignore_errors=True)\n";

fn guard_shop(s: &mut Scratch) {
    repo(s, "shop");
    s.write("scripts/clean.sh", CLEAN_SH);
    s.write("tools/wipe.py", WIPE_PY);
    s.forge(&["init"]);
    commit(s, "chore: start");
    // The person's own script, outside the project: Forge does not read it.
    let deploy = s.root().join("home/bin/deploy.sh");
    std::fs::create_dir_all(deploy.parent().expect("bin")).expect("create ~/bin");
    std::fs::write(
        deploy,
        "#!/bin/sh\nrsync -a dist/ shop@example.com:/srv/shop/\n",
    )
    .expect("write ~/bin/deploy.sh");
}

/// The guard section docs/guard.md's trust section shows.
const RELAXING_GUARD: &str = "guard:\n  rules:\n    - decision: allow\n      reason: the scratch branch is disposable\n      program: git\n      args: [reset, --hard]\n      relaxes: [git-reset-hard]\n  decisions:\n    unparseable: ask\n";

fn guard_relaxed(s: &mut Scratch) {
    guard_shop(s);
    let config = s.cwd.join(".forge/config.yaml");
    let text = std::fs::read_to_string(&config).expect("read the config");
    std::fs::write(&config, format!("{text}{RELAXING_GUARD}")).expect("write the config");
    commit(s, "chore: a disposable scratch branch");
}
