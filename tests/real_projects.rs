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
    PROJECTS, inflection_script, init_with_agent, pytest_available, python_project, site_packages,
};
use common::shop::{git_out, subjects};
use common::{Repo, copy_dir};
use serde_json::json;

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
    // Every slice, not only the last, passed the clean room.
    for id in ["kebabize", "possessive"] {
        assert!(
            o.stdout.contains(&format!("✓ [{id} w1 a1] clean-room")),
            "{}",
            o.stdout
        );
    }
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
    let baseline = gate_files(&r, "kebabize-pre-red-baseline").join("\n");
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
    // The Stop hook verifies with `forge init`'s command inside the session sandbox, where
    // Forge's own `.tmp/.forge/` is read-only: the report comes on standard output, so the
    // finished work lets the agent stop.
    let stop = json!({"session_id": "s1", "transcript_path": "/dev/null",
        "cwd": r.path().display().to_string(), "permission_mode": "default",
        "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "done", "background_tasks": [], "session_crons": []});
    let o = r.hook("claude", "stop", stop.to_string().as_bytes());
    assert_eq!(o.code, 0, "{o:?}");
    assert!(!o.stdout.contains("\"block\""), "{o:?}");
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

/// Issue 31: red adds, beside its verified test, a module the suite loads that patches the
/// product at collection time — but only once green's code carries a marker — and green adds
/// just the marker. Every check that runs the whole suite passes; the clean room (the base, the
/// code, the verified test and nothing else) does not: the verified case fails there, green is
/// told, and only a real implementation lands.
#[test]
fn a_module_red_added_that_patches_the_product_is_caught_by_the_clean_room() {
    if !pytest_available("a_module_red_added_that_patches_the_product_is_caught_by_the_clean_room")
    {
        return;
    }
    let r = python_project("inflection");
    let mut script = inflection_script();
    script["slices"] = json!([script["slices"][0].clone()]);
    script["red"]["kebabize"]
        .as_array_mut()
        .unwrap()
        .push(json!({"path": "test_zz_patch.py", "create":
            "import inflection\n\nif hasattr(inflection, \"_kebab_ready\"):\n    inflection.kebabize = lambda word: \"device-type\"\n"}));
    script["green"]["kebabize@1"] =
        json!([{"path": "inflection/__init__.py", "append": "\n_kebab_ready = True\n"}]);
    init_with_agent(&r, &script);
    let o = r.forge(&["run", "words", "--goal", "kebab case"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains("✓ [kebabize w1 a1] green-checks")
            && o.stdout.contains("✗ [kebabize w1 a1] clean-room — the verified case `test_kebabize.py::test_kebabize_splits_camel_case` does not pass with only the code and the verified test"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("✓ [kebabize w1 a2] clean-room"),
        "{}",
        o.stdout
    );
    assert!(r.read("inflection/__init__.py").contains("def kebabize"));
}

/// Issue 31, red team (a9): the verified test file itself rebinds the function under test once
/// the name exists. At red it fails honestly (no `kebabize` yet); green adds any function of that
/// name and every check passes — the clean room too, since the patch ships inside the verified
/// test, and without the code the test fails on the missing name. With every function the slice
/// added made to fail, the verified case still passes: the test does not depend on the code.
/// The slice ends there (green's attempts cannot fix a test), in both waves, and nothing lands.
#[test]
fn a_verified_test_that_rebinds_the_code_under_test_lands_nothing() {
    if !pytest_available("a_verified_test_that_rebinds_the_code_under_test_lands_nothing") {
        return;
    }
    let r = python_project("inflection");
    let mut script = inflection_script();
    script["slices"] = json!([script["slices"][0].clone()]);
    script["red"]["kebabize"] = json!([{"path": "test_kebabize.py", "create":
        "import inflection\n\nif hasattr(inflection, \"kebabize\"):\n    inflection.kebabize = lambda word: \"device-type\"\n\n\ndef test_kebabize_splits_camel_case():\n    assert inflection.kebabize(\"DeviceType\") == \"device-type\"\n"}]);
    script["green"]["kebabize"] = json!([{"path": "inflection/__init__.py", "append":
        "\n\ndef kebabize(word):\n    return word\n"}]);
    init_with_agent(&r, &script);
    let head = git_out(&r, &["rev-parse", "HEAD"]);
    let o = r.forge(&["run", "words", "--goal", "kebab case"]);
    assert_ne!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let caught = "clean-room — the verified case `test_kebabize.py::test_kebabize_splits_camel_case` passes even with every function the slice added or changed made to fail (inflection/__init__.py: kebabize): the test does not depend on the code";
    assert!(
        o.stdout.contains(&format!("✗ [kebabize w1 a1] {caught}"))
            && o.stdout.contains(&format!("✗ [kebabize w2 a1] {caught}")),
        "{}",
        o.stdout
    );
    // Green was not asked again within a wave: a test cannot be fixed by code.
    assert!(!o.stdout.contains("[kebabize w1 a2]"), "{}", o.stdout);
    assert_eq!(git_out(&r, &["rev-parse", "HEAD"]), head);
    assert!(!r.read("inflection/__init__.py").contains("def kebabize"));
}

/// Issue 31, red team (fresh round, A7): green binds the name with a lambda (no `def`), and the
/// verified test swaps in a real implementation built from the package's own functions
/// whenever the name exists. The stub witness rebinds the name itself to fail — not every other
/// function of the file, which would make the test fail for the wrong reason — and the test
/// still passes: it does not depend on green's code. Nothing lands.
#[test]
fn a_test_that_swaps_in_its_own_implementation_of_a_bound_name_lands_nothing() {
    if !pytest_available(
        "a_test_that_swaps_in_its_own_implementation_of_a_bound_name_lands_nothing",
    ) {
        return;
    }
    let r = python_project("inflection");
    let mut script = inflection_script();
    script["slices"] = json!([script["slices"][0].clone()]);
    script["red"]["kebabize"] = json!([{"path": "test_kebabize.py", "create":
        "import inflection\n\nif hasattr(inflection, \"kebabize\"):\n    inflection.kebabize = lambda w: inflection.dasherize(inflection.underscore(w))\n\n\ndef test_kebabize_splits_camel_case():\n    assert inflection.kebabize(\"DeviceType\") == \"device-type\"\n"}]);
    script["green"]["kebabize"] = json!([{"path": "inflection/__init__.py", "append":
        "\n\nkebabize = lambda word: word\n"}]);
    init_with_agent(&r, &script);
    let head = git_out(&r, &["rev-parse", "HEAD"]);
    let o = r.forge(&["run", "words", "--goal", "kebab case"]);
    assert_ne!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout.contains(
            "made to fail (inflection/__init__.py: kebabize): the test does not depend on the code"
        ),
        "{}",
        o.stdout
    );
    assert_eq!(git_out(&r, &["rev-parse", "HEAD"]), head);
}

/// Issue 31, red team: green's area reached the project's virtual environment (a root-level
/// glob grants the project's root), and green put an import hook (`.pth`) in its
/// `site-packages` that fixes a stub — calling the stub first, so the stub witness fails with
/// it. Git ignores the environment, so no snapshot saw the hook, and every check ran it. The
/// environments the checks run with are read-only for the run's agents: the write fails, the
/// attempt with it, and only a real implementation lands.
#[test]
fn an_agent_cannot_plant_an_import_hook_in_the_checks_environment() {
    if !pytest_available("an_agent_cannot_plant_an_import_hook_in_the_checks_environment") {
        return;
    }
    let r = python_project("inflection");
    let hook = format!("{}/zz_forge_hook.pth", site_packages(&r));
    let mut script = inflection_script();
    script["slices"] = json!([script["slices"][0].clone()]);
    script["slices"][0]["code_areas"] = json!(["inflection/", "*.pth"]);
    script["green"]["kebabize@1"] = json!([
        {"path": &hook, "create":
            "import inflection; inflection.kebabize = (lambda orig: (lambda w: (orig(w), 'device-type')[1]))(inflection.kebabize)\n"},
        {"path": "inflection/__init__.py", "append": "\n\ndef kebabize(word):\n    return word\n"}
    ]);
    init_with_agent(&r, &script);
    let o = r.forge(&["run", "words", "--goal", "kebab case"]);
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(!Path::new(&hook).exists(), "the hook was planted");
    let code = r.read("inflection/__init__.py");
    assert!(
        code.contains("return dasherize(underscore(word))")
            && !code.contains("def kebabize(word):\n    return word\n"),
        "{}",
        o.stdout
    );
}

/// Two slices on a real crate (semver 1.0.26 from crates.io; the scenario is shared with
/// bench/clean_room.sh) with `forge init`'s config
/// (`cargo test`): a new method through a new test file, and another appended to the crate's
/// own `tests/test_version.rs` — each red failing to compile on the missing method only.
fn semver_script() -> serde_json::Value {
    serde_json::from_str(include_str!("fixtures/run/semver_script.json")).unwrap()
}

/// A real Rust crate (semver, vendored) with `forge init`'s config unchanged but the agent: a
/// new method through a new test file and one appended to the crate's own test file; both land,
/// the crate's suite passes on a fresh clone, and no checkout is left behind.
#[test]
fn a_real_rust_crate_lands_new_api_through_a_new_and_an_existing_test_file() {
    let r = Repo::bare();
    copy_dir(&Path::new(PROJECTS).join("semver"), r.path());
    r.write(".gitignore", "/target\n");
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: import the crate"]);
    init_with_agent(&r, &semver_script());
    let out = r
        .forge_cmd(&["run", "bumps", "--goal", "bump a version"])
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("Run `bumps` DONE: 2 slice(s)"), "{stdout}");
    assert_eq!(
        subjects(&r)[..2],
        [
            "feat(bump-minor): Version::bump_minor gives the next minor release",
            "feat(bump-patch): Version::bump_patch gives the next patch release"
        ]
    );
    let clone = tempfile::tempdir().unwrap();
    let ok = Command::new("git")
        .args(["clone", "-q", r.path().to_str().unwrap(), "c"])
        .current_dir(clone.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let t = Command::new("cargo")
        .args(["test", "-q"])
        .current_dir(clone.path().join("c"))
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert!(t.status.success(), "{t:?}");
    assert_no_temp_left(&r);
}
