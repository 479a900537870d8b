//! `forge run` on real open-source projects, as a person starts it: `forge init`'s config
//! unchanged but for the agent command, the project's own ignored environment (a `.venv`) in
//! the working tree, and an honest scripted agent (tests/fixtures/run/project_agent.py) that
//! adds a new function through a new test file and another through an existing one. Each run
//! must land every slice, leave the project's suite green on a fresh clone, and leave no
//! checkout in the temp folder.
//!
//! The projects are vendored under tests/fixtures/projects/ (each with its licence and where it
//! came from). Needs python3 with pytest (CI installs it); skipped, saying why, without it
//! unless FORGE_REQUIRE_PYTEST=1.

mod common;

use std::path::Path;
use std::process::Command;

use common::projects::{
    PROJECTS, inflection_script, init_with_agent, pytest_available, python_project,
};
use common::{Repo, copy_dir};
use serde_json::json;

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

/// `npm ci` of the vendored project's lock into the repository: its `node_modules`, as a
/// person's checkout has it. `false` (the test is skipped, saying why) where npm or the
/// registry is not at hand, unless FORGE_REQUIRE_NODE=1 (CI sets it).
fn npm_ci(r: &Repo, test: &str) -> bool {
    let o = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefer-offline"])
        .current_dir(r.path())
        .output();
    let why = match o {
        Ok(o) if o.status.success() => return true,
        Ok(o) => format!("npm ci failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => format!("npm is not at hand: {e}"),
    };
    if std::env::var("FORGE_REQUIRE_NODE").is_ok_and(|v| v == "1") {
        panic!("{test}: {why}, and FORGE_REQUIRE_NODE=1");
    }
    eprintln!("\n==== SKIPPED: {test}: {why} ====\n");
    false
}

fn slugify_script(focused: &str) -> serde_json::Value {
    json!({
        "slices": [
            {"id": "from-parts", "title": "slugify.fromParts joins parts into one slug",
             "depends_on": [], "test_areas": ["test/"], "code_areas": ["slugify.js"],
             "focused_command": focused, "report": "jest", "related_checks": [],
             "expected_red_failure": "slugify.fromParts is not a function"},
            {"id": "is-slug", "title": "slugify.isSlug tells a slug from other text",
             "depends_on": ["from-parts"], "test_areas": ["test/"], "code_areas": ["slugify.js"],
             "focused_command": focused, "report": "jest", "related_checks": [],
             "expected_red_failure": "slugify.isSlug is not a function"}
        ],
        "red": {
            "from-parts": [{"path": "test/parts.test.js", "create":
                "const slugify = require('../slugify')\n\ntest('fromParts joins parts into one slug', () => {\n  expect(slugify.fromParts(['Hello', 'big World'])).toBe('Hello-big-World')\n})\n"}],
            "is-slug": [{"path": "test/slugify.test.js", "append":
                "\ntest('isSlug tells a slug from other text', () => {\n  expect(slugify.isSlug('foo-bar')).toBe(true)\n  expect(slugify.isSlug('foo bar')).toBe(false)\n})\n"}]
        },
        "verifier": {
            "from-parts": {"failing_case": "fromParts joins parts into one slug",
                           "excerpt_contains": "is not a function"},
            "is-slug": {"failing_case": "isSlug tells a slug from other text",
                        "excerpt_contains": "is not a function"}
        },
        "green": {
            "from-parts": [{"path": "slugify.js", "replace": ["  return replace\n}))",
                "  replace.fromParts = function (parts, options) {\n    return replace(parts.join(' '), options)\n  }\n\n  return replace\n}))"]}],
            "is-slug": [{"path": "slugify.js", "replace": ["  return replace\n}))",
                "  replace.isSlug = function (string) {\n    return replace(string) === string\n  }\n\n  return replace\n}))"]}]
        }
    })
}

/// A Node package with its `node_modules` and jest: `forge init` writes `npx jest` with a JSON
/// report, which runs in the checks' checkout only because `node_modules` is shown there.
#[test]
fn node_package_with_node_modules_and_jest_lands_every_slice() {
    let test = "node_package_with_node_modules_and_jest_lands_every_slice";
    let r = Repo::bare();
    copy_dir(&Path::new(PROJECTS).join("slugify"), r.path());
    r.write(".gitignore", "node_modules/\n");
    if !npm_ci(&r, test) {
        return;
    }
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: import the project"]);
    init_with_agent(&r, &slugify_script("npx jest --verbose"));
    let config = r.read(".forge/config.yaml");
    assert!(config.contains("npx jest --json"), "{config}");
    let o = r.forge(&[
        "run",
        "slugs",
        "--goal",
        "slugs from parts, and a slug test",
    ]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Run `slugs` DONE: 2 slice(s)"),
        "{}",
        o.stdout
    );
    assert_eq!(
        subjects(&r)[..2],
        [
            "feat(is-slug): slugify.isSlug tells a slug from other text",
            "feat(from-parts): slugify.fromParts joins parts into one slug"
        ]
    );
    assert_clone_suite_passes(&r, &["node_modules/.bin/jest"]);
    assert_no_temp_left(&r);
}

/// A Python project with no test yet — the first slice of TDD — lands: pytest's "no tests ran"
/// (exit 5) on the base is a suite of zero cases, and the base is the measure, not "at least one".
#[test]
fn a_python_project_with_no_test_yet_lands_its_first_slice() {
    if !pytest_available("a_python_project_with_no_test_yet_lands_its_first_slice") {
        return;
    }
    let r = python_project("inflection");
    r.git(&["rm", "-q", "test_inflection.py"]);
    r.git(&["commit", "-qm", "chore: start without tests"]);
    let mut script = inflection_script();
    script["slices"] = json!([script["slices"][0].clone()]);
    script["slices"][0]["focused_command"] =
        json!(".venv/bin/python -m pytest -rA test_kebabize.py");
    init_with_agent(&r, &script);
    let o = r.forge(&["run", "words", "--goal", "kebab case"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("Run `words` DONE: 1 slice(s)"),
        "{}",
        o.stdout
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
}
