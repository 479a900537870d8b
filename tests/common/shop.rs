//! The sample shop run by `forge run` with the scripted agent (tests/fixtures/run/agent.sh):
//! the fixture, and the questions the run tests ask of its result.

use super::{Output, Repo, copy_dir, forge_bin};
use serde_json::Value;

pub const RUN_FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run");
pub const CLAUDE_RESULT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/spend/claude-p-result.json"
);

/// The shop's config: the sample's verify command and the scripted agent. Without the kernel
/// sandbox unless `extra` configures it: each cheat must be caught by the run's own gates
/// alone — the first wall holds on a machine with no sandbox. The sandbox tests
/// (tests/run_sandboxed.rs) give the second wall its own proof.
pub fn agents_yaml(cheat: &str, extra: &str) -> String {
    let extra = if extra.contains("sandbox:") {
        extra.to_string()
    } else {
        format!("{extra}sandbox:\n  mode: off\n")
    };
    let cmd = format!(
        "CHEAT='{cheat}' FORGE_BIN='{}' CLAUDE_RESULT='{CLAUDE_RESULT}' sh {RUN_FIX}/agent.sh",
        forge_bin().display()
    );
    format!(
        "verify:\n  commands:\n    - name: test\n      run: sh tests/run.sh\n      timeout: 30\n      report: tap\nagents:\n  default:\n    command: {}\n    timeout: 30\n{extra}",
        serde_json::to_string(&cmd).unwrap()
    )
}

/// The sample shop, committed, with the scripted agent playing every role.
pub fn shop(cheat: &str) -> Repo {
    shop_with(cheat, "")
}

pub fn shop_with(cheat: &str, extra_config: &str) -> Repo {
    let r = Repo::bare();
    copy_dir(&std::path::Path::new(RUN_FIX).join("shop"), r.path());
    r.config(&agents_yaml(cheat, extra_config));
    r.write(".gitignore", ".tmp/.forge/\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: sample shop"]);
    r
}

pub fn run(r: &Repo) -> Output {
    r.forge(&[
        "run",
        "shop",
        "--goal",
        "members get 10% off; receipts name the amount",
    ])
}

pub fn status(r: &Repo) -> Value {
    let o = r.forge(&["run", "--status", "shop", "--json"]);
    assert_eq!(o.code, 0, "{o:?}");
    o.json()
}

pub fn slice<'a>(st: &'a Value, id: &str) -> &'a Value {
    st["slices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no slice {id}"))
}

pub fn gates_of(st: &Value, id: &str) -> Vec<(String, String)> {
    slice(st, id)["forge"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["gate"].as_str().unwrap().to_string(),
                g["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn has_gate(st: &Value, id: &str, gate: &str, status: &str) -> bool {
    gates_of(st, id)
        .iter()
        .any(|(g, s)| g == gate && s == status)
}

pub fn subjects(r: &Repo) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(r.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

pub fn git_out(r: &Repo, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(r.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn n(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// The last gate result file named `gate` for `slice`.
pub fn gate_file(r: &Repo, slice: &str, gate: &str) -> Value {
    let dir = r.path().join(".tmp/.forge/runs/shop/gates");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(&format!("-{slice}-{gate}.json")))
        .collect();
    names.sort();
    let last = names
        .last()
        .unwrap_or_else(|| panic!("no {gate} result for {slice}"));
    serde_json::from_slice(&std::fs::read(dir.join(last)).unwrap()).unwrap()
}

/// A clean clone of HEAD passes the project's tests: what landed holds everything the checks
/// ran on (and nothing that only the working tree had).
pub fn assert_clean_clone_passes(r: &Repo) {
    let clone = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("git")
        .args(["clone", "-q", r.path().to_str().unwrap(), "c"])
        .current_dir(clone.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let o = std::process::Command::new("sh")
        .arg("tests/run.sh")
        .current_dir(clone.path().join("c"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "a clean clone fails: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

pub fn assert_landed_cleanly(r: &Repo) {
    assert_eq!(
        subjects(r),
        vec![
            "feat(receipt): a receipt names the amount paid",
            "feat(member-discount): members get 10% off",
            "chore: sample shop",
        ]
    );
    assert_eq!(
        git_out(r, &["status", "--porcelain", "--", ".", ":!.forge"]),
        ""
    );
    // The finished code passes the project's own tests.
    let o = std::process::Command::new("sh")
        .arg("tests/run.sh")
        .current_dir(r.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_clean_clone_passes(r);
}

/// The run of CHEAT `check-edits-candidate`: the check whose code under test rewrote and
/// deleted files of its own candidate failed, was named to green, and nothing of it landed.
#[allow(dead_code)]
pub fn assert_check_edit_caught(r: &Repo) {
    let p2 = r.read(".tmp/.forge/runs/shop/prompts/member-discount-green-w1-a2.md");
    assert!(
        p2.contains(
            "the candidate's own files in the check's checkout (src/notes.txt, tests/card_test.sh)"
        ),
        "{p2}"
    );
    assert!(!git_out(r, &["log", "-p"]).contains("edited by the code under test"));
    assert_landed_cleanly(r);
}
