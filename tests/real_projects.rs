//! `forge run` on real open-source projects, as a person starts it: `forge init`'s config
//! unchanged but for the agent command, the project's own ignored environment (a `.venv`) in
//! the working tree, and an honest scripted agent (tests/fixtures/run/project_agent.py) that
//! adds a new function through a new test file and another through an existing one. Each run
//! must land every slice, leave the project's suite green on a fresh clone, and leave no
//! checkout in the temp folder. A small Rust crate shows the same for a compiled language,
//! where the red of a new function is a test that does not compile yet.
//!
//! The projects are vendored under tests/fixtures/projects/ (each with its licence and where it
//! came from). Needs python3 with pytest (CI installs it); skipped, saying why, without it
//! unless FORGE_REQUIRE_PYTEST=1.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Repo, copy_dir};
use serde_json::json;

const PROJECTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/projects");
const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/run/project_agent.py"
);

fn pytest_available(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("FORGE_REQUIRE_PYTEST").is_ok_and(|v| v == "1") {
            panic!("{test}: python3 has no pytest, and FORGE_REQUIRE_PYTEST=1");
        }
        eprintln!("\n==== SKIPPED: {test}: python3 has no pytest ====\n");
    }
    ok
}

/// The vendored project `name`, committed, with a virtual environment of its own that git
/// ignores — made as `python3 -m venv` makes one, seeing the machine's pytest — and an
/// editable install of the project in it (the `.pth` file `pip install -e .` writes, which names
/// the working tree).
fn python_project(name: &str) -> Repo {
    let r = Repo::bare();
    copy_dir(&Path::new(PROJECTS).join(name), r.path());
    r.write(".gitignore", ".venv/\n__pycache__/\n.pytest_cache/\n");
    let ok = Command::new("python3")
        .args([
            "-m",
            "venv",
            "--system-site-packages",
            "--without-pip",
            ".venv",
        ])
        .current_dir(r.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "python3 -m venv failed");
    let site = Command::new(r.path().join(".venv/bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = String::from_utf8_lossy(&site.stdout).trim().to_string();
    std::fs::write(
        Path::new(&site).join(format!("__editable__.{name}.pth")),
        format!("{}\n", r.path().display()),
    )
    .unwrap();
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: import the project"]);
    r
}

/// `forge init`, then the scripted agent as every role: the one line a person adds.
fn init_with_agent(r: &Repo, script: &serde_json::Value) {
    let o = r.forge(&["init"]);
    assert_eq!(o.code, 0, "{o:?}");
    let script_path = r.dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let cmd = format!("PROJECT_SCRIPT='{}' python3 {AGENT}", script_path.display());
    let mut config = r.read(".forge/config.yaml");
    config.push_str(&format!(
        "\nagents:\n  default:\n    command: {}\n    timeout: 120\n",
        serde_json::to_string(&cmd).unwrap()
    ));
    r.config(&config);
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: forge"]);
}

fn subjects(r: &Repo) -> Vec<String> {
    let o = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(r.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A fresh clone of what landed passes the project's suite with the project's environment.
fn assert_clone_suite_passes(r: &Repo, cmd: &[&str]) {
    let clone = tempfile::tempdir().unwrap();
    let ok = Command::new("git")
        .args(["clone", "-q", r.path().to_str().unwrap(), "c"])
        .current_dir(clone.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let o = Command::new(r.path().join(cmd[0]))
        .args(&cmd[1..])
        .current_dir(clone.path().join("c"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the suite fails on a fresh clone: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Nothing of the run's checks is left in the temp folder Forge was given.
fn assert_no_temp_left(r: &Repo) {
    let left: Vec<String> = std::fs::read_dir(r.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("forge-check"))
        .collect();
    assert!(left.is_empty(), "left in the temp folder: {left:?}");
}

fn inflection_script() -> serde_json::Value {
    let focused = ".venv/bin/python -m pytest -rA";
    json!({
        "slices": [
            {"id": "kebabize", "title": "kebabize turns a word into kebab case",
             "depends_on": [], "test_areas": ["test_*.py"], "code_areas": ["inflection/"],
             "focused_command": focused, "report": "pytest", "related_checks": [],
             "expected_red_failure": "inflection has no kebabize yet (AttributeError)"},
            {"id": "possessive", "title": "possessive names what a word owns",
             "depends_on": ["kebabize"], "test_areas": ["test_*.py"],
             "code_areas": ["inflection/"], "focused_command": focused, "report": "pytest",
             "related_checks": [],
             "expected_red_failure": "inflection has no possessive yet (AttributeError)"}
        ],
        "red": {
            "kebabize": [{"path": "test_kebabize.py", "create":
                "import inflection\n\n\ndef test_kebabize_splits_camel_case():\n    assert inflection.kebabize(\"DeviceType\") == \"device-type\"\n"}],
            "possessive": [{"path": "test_inflection.py", "append":
                "\n\ndef test_possessive_of_a_name():\n    assert inflection.possessive(\"Ada\") == \"Ada's\"\n    assert inflection.possessive(\"James\") == \"James'\"\n"}]
        },
        "verifier": {
            "kebabize": {"failing_case": "test_kebabize.py::test_kebabize_splits_camel_case",
                         "excerpt_contains": "AttributeError"},
            "possessive": {"failing_case": "test_inflection.py::test_possessive_of_a_name",
                           "excerpt_contains": "AttributeError"}
        },
        "green": {
            "kebabize": [{"path": "inflection/__init__.py", "append":
                "\n\ndef kebabize(word: str) -> str:\n    \"\"\"Make a kebab-case word from a CamelCase one.\"\"\"\n    return dasherize(underscore(word))\n"}],
            "possessive": [{"path": "inflection/__init__.py", "append":
                "\n\ndef possessive(word: str) -> str:\n    \"\"\"The possessive form of a name.\"\"\"\n    return word + \"'\" if word.endswith(\"s\") else word + \"'s\"\n"}]
        }
    })
}

/// A Python package with its own `.venv`: `forge init` writes `.venv/bin/python -m pytest -rA`,
/// which the checks' clean checkout can start only because the environment is shown there.
#[test]
fn python_package_with_its_own_venv_lands_every_slice() {
    if !pytest_available("python_package_with_its_own_venv_lands_every_slice") {
        return;
    }
    let r = python_project("inflection");
    init_with_agent(&r, &inflection_script());
    assert!(
        r.read(".forge/config.yaml")
            .contains(".venv/bin/python -m pytest -rA"),
        "{}",
        r.read(".forge/config.yaml")
    );
    let o = r.forge(&["run", "words", "--goal", "kebab case and possessives"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Run `words` DONE: 2 slice(s)"),
        "{}",
        o.stdout
    );
    assert_eq!(
        subjects(&r)[..2],
        [
            "feat(possessive): possessive names what a word owns",
            "feat(kebabize): kebabize turns a word into kebab case"
        ]
    );
    assert_clone_suite_passes(
        &r,
        &[
            ".venv/bin/python",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
    );
    assert_no_temp_left(&r);
}

/// Without the environment (`run.check_envs: []`), `.venv/bin/python` cannot start in the
/// checks' checkout: that is Forge's setup, not an agent's failure — the run stops with exit 2
/// naming the command and the key to set, counts nothing against the breaker, and once the
/// person fixes the config a resume lands every slice.
#[test]
fn a_check_that_cannot_start_is_a_setup_error_and_the_run_resumes() {
    if !pytest_available("a_check_that_cannot_start_is_a_setup_error_and_the_run_resumes") {
        return;
    }
    let r = python_project("inflection");
    init_with_agent(&r, &inflection_script());
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}run:\n  check_envs: []\n"));
    r.git(&["commit", "-qam", "chore: no environments for the checks"]);
    let o = r.forge(&["run", "words", "--goal", "kebab case and possessives"]);
    assert_eq!(o.code, 2, "{}\n{}", o.stdout, o.stderr);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(
        all.contains("`.venv/bin/python -m pytest -rA` could not start in the checks' checkout")
            && all.contains("`run.check_envs`")
            && all.contains("forge run --resume words"),
        "{all}"
    );
    assert!(
        !r.exists(".forge/changes/words/verify-attempts.yaml"),
        "{all}"
    );
    assert_no_temp_left(&r);
    // The person lets the checks see the environment again, and resumes.
    r.config(&config);
    let o = r.forge(&["run", "--resume", "words"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Run `words` DONE: 2 slice(s)"),
        "{}",
        o.stdout
    );
}

/// A focused command that names the slice's new test file — what a person or a model writes —
/// cannot pass before red writes it: the pre-red baseline shows instead that the project's own
/// verify commands pass on the base, and the slice lands.
#[test]
fn a_focused_command_naming_the_new_test_file_lands() {
    if !pytest_available("a_focused_command_naming_the_new_test_file_lands") {
        return;
    }
    let r = python_project("inflection");
    let mut script = inflection_script();
    script["slices"][0]["focused_command"] =
        json!(".venv/bin/python -m pytest -rA test_kebabize.py");
    init_with_agent(&r, &script);
    let o = r.forge(&["run", "words", "--goal", "kebab case and possessives"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("✓ [kebabize w1 a0] pre-red-baseline"),
        "{}",
        o.stdout
    );
    let gates = r.path().join(".tmp/.forge/runs/words/gates");
    let baseline = std::fs::read_dir(&gates)
        .unwrap()
        .flatten()
        .find(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.contains("kebabize-pre-red-baseline")
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .unwrap();
    assert!(
        baseline.contains(
            "names test_kebabize.py, which red will write; the verify commands pass on START_SHA"
        ),
        "{baseline}"
    );
    assert!(
        o.stdout.contains("Run `words` DONE: 2 slice(s)"),
        "{}",
        o.stdout
    );
}

/// A small Rust crate, committed with its lock file: `words::add` and nothing else yet.
fn rust_crate() -> Repo {
    let r = Repo::bare();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"words\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    r.write(
        "Cargo.lock",
        "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"words\"\nversion = \"0.1.0\"\n",
    );
    r.write(".gitignore", "/target\n");
    r.write(
        "src/lib.rs",
        "//! Words.\n\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
    );
    r.write(
        "tests/add.rs",
        "#[test]\nfn adds() {\n    assert_eq!(words::add(1, 2), 3);\n}\n",
    );
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: a crate"]);
    r
}

/// One slice that adds `words::kebab` through a new test file; `red` is red's edits.
fn kebab_script(red: serde_json::Value) -> serde_json::Value {
    json!({
        "slices": [
            {"id": "kebab", "title": "kebab joins words with dashes", "depends_on": [],
             "test_areas": ["tests/"], "code_areas": ["src/"],
             "focused_command": "cargo test", "report": "auto", "related_checks": [],
             "expected_red_failure": "words has no kebab yet (cannot find function)"}
        ],
        "red": red,
        "verifier": {"kebab": {"failing_case": "kebab_joins_words",
                               "excerpt_contains": "cannot find function `kebab`"}},
        "green": {"kebab": [{"path": "src/lib.rs", "append":
            "\n/// The words of `s` joined with dashes.\npub fn kebab(s: &str) -> String {\n    s.split_whitespace().collect::<Vec<_>>().join(\"-\")\n}\n"}]}
    })
}

const NEW_FN_TEST: &str =
    "#[test]\nfn kebab_joins_words() {\n    assert_eq!(words::kebab(\"a b\"), \"a-b\");\n}\n";

/// `forge run` on the crate as `forge init` configures it (`cargo test`), with the checks'
/// `target/` kept between checks; the variable this suite's own build may set is not the
/// crate's.
fn run_words(r: &Repo, script: &serde_json::Value) -> common::Output {
    init_with_agent(r, script);
    let config = r.read(".forge/config.yaml");
    r.config(&format!("{config}run:\n  check_caches: [target]\n"));
    r.git(&["commit", "-qam", "chore: keep the checks' target"]);
    let out = r
        .forge_cmd(&["run", "words", "--goal", "kebab case"])
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    common::Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The gate results of the run `words`, as written, whose file name holds `part`.
fn gate_files(r: &Repo, part: &str) -> Vec<String> {
    let gates = r.path().join(".tmp/.forge/runs/words/gates");
    let mut names: Vec<_> = std::fs::read_dir(&gates)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(part))
        .map(|e| e.path())
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Issue 29: in a compiled language a test of a new function cannot fail any other way than by
/// not compiling, and red may not add a stub. Red's `tests/new_fn.rs` calls `words::kebab`,
/// which does not exist: the compile error, only in red's file and only a missing name, is the
/// one red; the verifier cites the test; green adds the function; the slice lands.
#[test]
fn a_rust_test_of_a_new_function_is_a_red_and_lands() {
    let r = rust_crate();
    let script =
        kebab_script(json!({"kebab": [{"path": "tests/new_fn.rs", "create": NEW_FN_TEST}]}));
    let o = run_words(&r, &script);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Run `words` DONE: 1 slice(s)"),
        "{}",
        o.stdout
    );
    let red = gate_files(&r, "single-red-failure").join("\n");
    assert!(
        red.contains("\"path\": \"new-api\"")
            && red.contains("\"failing_case\": \"kebab_joins_words\""),
        "{red}"
    );
    assert!(
        o.stdout.contains(
            "single-red-failure — one new test, which names what does not exist yet: kebab_joins_words"
        ),
        "{}",
        o.stdout
    );
    let verified = gate_files(&r, "verified-red").join("\n");
    assert!(verified.contains("\"status\": \"pass\""), "{verified}");
    assert_eq!(
        subjects(&r)[0],
        "feat(kebab): kebab joins words with dashes"
    );
    assert!(r.read("src/lib.rs").contains("pub fn kebab"));
    assert_no_temp_left(&r);
}

/// The neighbour: a red test with a syntax error also fails to compile, but that is
/// infrastructure, not a red — the gate says so to red, which fixes its test on the next
/// attempt.
#[test]
fn a_rust_test_that_does_not_parse_is_still_infrastructure() {
    let r = rust_crate();
    let broken =
        "#[test]\nfn kebab_joins_words() {\n    assert_eq!(words::kebab(\"a b\") \"a-b\");\n}\n";
    let script = kebab_script(json!({
        "kebab@1": [{"path": "tests/new_fn.rs", "create": broken}],
        "kebab": [{"path": "tests/new_fn.rs", "create": NEW_FN_TEST}]
    }));
    let o = run_words(&r, &script);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let red = gate_files(&r, "single-red-failure");
    assert!(red.len() >= 2, "{red:?}");
    assert!(
        red[0].contains("\"status\": \"fail\"")
            && red[0].contains("infrastructure, syntax, import or setup failure (not a red)")
            && red[0].contains("is not a name that does not exist yet"),
        "{}",
        red[0]
    );
    assert!(red[1].contains("\"path\": \"new-api\""), "{}", red[1]);
    assert!(
        o.stdout.contains("Run `words` DONE: 1 slice(s)"),
        "{}",
        o.stdout
    );
}
