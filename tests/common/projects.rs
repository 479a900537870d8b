//! Real open-source projects vendored under tests/fixtures/projects/, set up as a person's
//! checkout has them (their own environment, ignored by git), and the scripted agent that plays
//! every role of `forge run` on them (tests/fixtures/run/project_agent.py).

use std::path::Path;
use std::process::Command;

use super::{Repo, copy_dir};

pub const PROJECTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/projects");
pub const AGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/run/project_agent.py"
);

pub fn pytest_available(test: &str) -> bool {
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
pub fn python_project(name: &str) -> Repo {
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
    let site = site_packages(&r);
    std::fs::write(
        Path::new(&site).join(format!("__editable__.{name}.pth")),
        format!("{}\n", r.path().display()),
    )
    .unwrap();
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: import the project"]);
    r
}

/// The `site-packages` folder of the project's `.venv`.
pub fn site_packages(r: &Repo) -> String {
    let site = Command::new(r.path().join(".venv/bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&site.stdout).trim().to_string()
}

/// The scripted agent's command, playing from `script` (written beside the repository).
pub fn scripted_agent(r: &Repo, script: &serde_json::Value) -> String {
    let script_path = r.dir.path().join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    format!("PROJECT_SCRIPT='{}' python3 {AGENT}", script_path.display())
}

/// `forge init`, then `agents` (YAML of the `agents:` section's entries) — the one thing a
/// person adds — committed.
pub fn init_with_agents(r: &Repo, agents: &str) {
    let o = r.forge(&["init"]);
    assert_eq!(o.code, 0, "{o:?}");
    let mut config = r.read(".forge/config.yaml");
    config.push_str(&format!("\nagents:\n{agents}"));
    r.config(&config);
    r.git(&["add", "-A"]);
    r.git(&["commit", "-qm", "chore: forge"]);
}

/// [`init_with_agents`] with the scripted agent as every role.
pub fn init_with_agent(r: &Repo, script: &serde_json::Value) {
    let cmd = scripted_agent(r, script);
    init_with_agents(
        r,
        &format!(
            "  default:\n    command: {}\n    timeout: 120\n",
            serde_json::to_string(&cmd).unwrap()
        ),
    );
}

/// Two slices on inflection: `kebabize` through a new test file, `possessive` appended to the
/// existing one; each a new function, red failing at run time on the missing name.
pub fn inflection_script() -> serde_json::Value {
    let focused = ".venv/bin/python -m pytest -rA";
    serde_json::json!({
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
