//! Before any slice: the clean start, the planner's document, and the test harness no agent
//! may change.

use serde_json::{Value, json};

use super::{CLEAN_START, GateResult, in_areas, is_forge_path};
use crate::report::Format;

/// Fails on any non-Forge file that is modified, staged, untracked or conflicted.
pub fn clean_start(dirty: &[String]) -> GateResult {
    let dirty: Vec<&String> = dirty.iter().filter(|p| !is_forge_path(p)).collect();
    if dirty.is_empty() {
        GateResult::pass(CLEAN_START, json!({"reason": "working tree clean"}))
    } else {
        let shown: Vec<&str> = dirty.iter().take(10).map(|s| s.as_str()).collect();
        GateResult::fail(
            CLEAN_START,
            json!({"reason": format!("{} file(s) modified, staged or untracked: {}{}", dirty.len(), shown.join(", "), if dirty.len() > 10 { ", …" } else { "" }), "files": dirty}),
            true,
            "commit, stash or remove these files (`git status`), then `forge run --resume <slug>`",
        )
    }
}

// ---------------------------------------------------------------------------------------------
// planning-output

/// Checks the planner's `state.json` document field by field. On success, the slices in order,
/// their free text made inert (titles reach terminals and commit messages). `tracked` (the
/// repository's files) finds areas that claim the same file as test and code; `harness` (see
/// [`harness_files`], for the configured commands) and each slice's own command scripts may be
/// in no code area. `links`: the tree's links and those on the areas' paths, with their
/// targets: no area is reached through one ([`super::area_links`]).
pub fn planning_output(
    doc: &Value,
    tracked: &[String],
    links: &[(String, Vec<u8>)],
    harness: &Harness,
    envs: &[String],
) -> Result<Vec<super::super::state::Slice>, Vec<String>> {
    let mut problems = Vec::new();
    let Some(slices) = doc.get("slices") else {
        return Err(vec!["state.json has no `slices` array".into()]);
    };
    let Some(slices) = slices.as_array() else {
        return Err(vec!["`slices` is not an array".into()]);
    };
    if slices.is_empty() {
        return Err(vec!["`slices` is empty: plan at least one slice".into()]);
    }
    let mut seen: Vec<String> = Vec::new();
    for (i, s) in slices.iter().enumerate() {
        let at = |k: &str| format!("slices[{i}].{k}");
        let Some(obj) = s.as_object() else {
            problems.push(format!("slices[{i}] is not an object"));
            continue;
        };
        let text = |k: &str, problems: &mut Vec<String>| -> Option<String> {
            match obj.get(k) {
                None => {
                    problems.push(format!("`{}` is missing", at(k)));
                    None
                }
                Some(Value::String(v)) if !v.trim().is_empty() => Some(v.clone()),
                Some(Value::String(_)) => {
                    problems.push(format!("`{}` is empty", at(k)));
                    None
                }
                Some(_) => {
                    problems.push(format!("`{}` must be a string", at(k)));
                    None
                }
            }
        };
        let list = |k: &str, problems: &mut Vec<String>| -> Option<Vec<String>> {
            match obj.get(k) {
                None => {
                    problems.push(format!("`{}` is missing", at(k)));
                    None
                }
                Some(Value::Array(a)) => {
                    let mut out = Vec::new();
                    for (j, v) in a.iter().enumerate() {
                        match v.as_str() {
                            Some(s) if !s.trim().is_empty() => out.push(s.to_string()),
                            _ => problems
                                .push(format!("`{}[{j}]` must be a non-empty string", at(k))),
                        }
                    }
                    Some(out)
                }
                Some(_) => {
                    problems.push(format!("`{}` must be an array of strings", at(k)));
                    None
                }
            }
        };
        let id = text("id", &mut problems);
        text("title", &mut problems);
        let focused = text("focused_command", &mut problems);
        text("expected_red_failure", &mut problems);
        let deps = list("depends_on", &mut problems);
        let tests = list("test_areas", &mut problems);
        let code = list("code_areas", &mut problems);
        let checks = list("related_checks", &mut problems);
        if let Some(r) = obj.get("report")
            && serde_json::from_value::<Format>(r.clone()).is_err()
        {
            problems.push(format!(
                "`{}` is not a report format (one of {})",
                at("report"),
                crate::report::names()
            ));
        }
        if let Some(m) = obj.get("milestone")
            && !m.is_boolean()
        {
            problems.push(format!("`{}` must be true or false", at("milestone")));
        }
        if let Some(id) = &id {
            if crate::repo::validate_change_name(id).is_err() {
                problems.push(format!(
                    "`{}` ({id}) must use lowercase letters, digits and `-`",
                    at("id")
                ));
            }
            if seen.contains(id) {
                problems.push(format!("`{}`: slice id `{id}` is used twice", at("id")));
            }
        }
        if let Some(deps) = &deps {
            let all_ids: Vec<&str> = slices
                .iter()
                .filter_map(|s| s.get("id").and_then(|v| v.as_str()))
                .collect();
            for d in deps {
                if Some(d) == id.as_ref() {
                    problems.push(format!(
                        "`{}`: slice `{d}` depends on itself",
                        at("depends_on")
                    ));
                } else if !all_ids.contains(&d.as_str()) {
                    problems.push(format!(
                        "`{}`: unknown slice id `{d}` (known: {})",
                        at("depends_on"),
                        all_ids.join(", ")
                    ));
                } else if !seen.contains(d) {
                    problems.push(format!(
                        "`{}`: `{d}` comes later in the plan; order slices so that dependencies come first",
                        at("depends_on")
                    ));
                }
            }
        }
        for (k, areas) in [("test_areas", &tests), ("code_areas", &code)] {
            let Some(areas) = areas else { continue };
            if areas.is_empty() {
                problems.push(format!(
                    "`{}` is empty: name the files this slice may change",
                    at(k)
                ));
            }
            for a in areas {
                if let Some(why) = ambiguous_area(a) {
                    problems.push(format!("`{}`: `{a}` {why}", at(k)));
                }
                let root = super::area_root(a);
                if let Some(e) = envs.iter().find(|e| {
                    let e = e.trim_end_matches('/');
                    root == e || root.starts_with(&format!("{e}/"))
                }) {
                    problems.push(format!(
                        "`{}`: `{a}` is inside {e}, an environment the checks run with (git ignores it, so no gate sees a change there); name tracked folders",
                        at(k)
                    ));
                }
            }
        }
        if let (Some(t), Some(c)) = (&tests, &code) {
            for a in t {
                if c.contains(a) {
                    problems.push(format!(
                        "slices[{i}]: `{a}` is both a test area and a code area; red and green must own different files"
                    ));
                }
            }
            if let Some(f) = tracked.iter().find(|f| in_areas(t, f) && in_areas(c, f)) {
                problems.push(format!(
                    "slices[{i}]: {f} is in a test area and in a code area; narrow the areas so each file has one owner"
                ));
            }
            for p in super::area_links(t, c, links) {
                problems.push(format!("slices[{i}]: {p}"));
            }
        }
        for (k, cmd) in [("focused_command", focused.as_ref())] {
            if let Some(c) = cmd
                && c.contains('\n')
            {
                problems.push(format!("`{}` spans several lines; give one command", at(k)));
            }
        }
        if let Some(code) = &code {
            // The slice's focused command runs its tests; related checks are linters and the
            // like, which read code rather than run the tests.
            let own: Vec<&str> = focused.iter().map(String::as_str).collect();
            for f in harness.files(tracked, &own) {
                if in_areas(code, &f) {
                    problems.push(format!(
                        "`{}` covers {f}, part of the test harness (it runs the checks): no agent may change it; narrow the code areas{}",
                        at("code_areas"),
                        " (or name it under `run.harness_editable` in .forge/config.yaml)"
                    ));
                }
            }
        }
        if let Some(checks) = &checks {
            for (j, c) in checks.iter().enumerate() {
                if c.contains('\n') {
                    problems.push(format!(
                        "`{}[{j}]` spans several lines; give one command",
                        at("related_checks")
                    ));
                }
            }
        }
        if let Some(id) = id {
            seen.push(id);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut out =
        serde_json::from_value::<Vec<super::super::state::Slice>>(Value::Array(slices.clone()))
            .map_err(|e| vec![format!("slices do not parse: {e}")])?;
    for s in &mut out {
        s.title = crate::text::inert(&s.title, 200);
        s.expected_red_failure = crate::text::inert(&s.expected_red_failure, 500);
    }
    Ok(out)
}

/// The test harness: the files that run the checks. An agent that could change them could make
/// any test "pass" (a `conftest.py` hook that rewrites outcomes, a `package.json` test script
/// that exits 0, a `runner = "true"` in `.cargo/config.toml`), so none may — unless the
/// project names a file as editable (`run.harness_editable`).
#[derive(Debug, Default, Clone)]
pub struct Harness {
    /// The configured verify commands.
    pub commands: Vec<String>,
    /// Globs of harness files agents may change after all.
    pub editable: Vec<String>,
}

/// What each kind of runner reads besides the tests, wherever it lies: file names (or paths
/// ending so, `.cargo/config.toml`), one row per runner, so the files of a runner not known yet
/// are one row. pytest 9 reads `pytest.toml` and the dotted `.pytest.toml` / `.pytest.ini` too.
const HARNESS: &[(&str, &[&str])] = &[
    (
        "pytest",
        &[
            "conftest.py",
            "pytest.ini",
            ".pytest.ini",
            "pytest.toml",
            ".pytest.toml",
            "tox.ini",
            "setup.cfg",
            "pyproject.toml",
            "noxfile.py",
        ],
    ),
    (
        "node",
        &[
            "package.json",
            ".npmrc",
            ".yarnrc",
            ".yarnrc.yml",
            "bunfig.toml",
            "deno.json",
            "deno.jsonc",
            ".mocharc.js",
            ".mocharc.cjs",
            ".mocharc.json",
            ".mocharc.yml",
            ".mocharc.yaml",
            ".babelrc",
        ],
    ),
    (
        "cargo",
        &[
            "Cargo.toml",
            ".cargo/config.toml",
            ".cargo/config",
            "build.rs",
            "rust-toolchain",
            "rust-toolchain.toml",
        ],
    ),
    ("go", &["go.mod", "go.work"]),
    (
        "make",
        &[
            "Makefile",
            "makefile",
            "GNUmakefile",
            "justfile",
            "Taskfile.yml",
        ],
    ),
    (
        "jvm, php, ruby",
        &[
            "phpunit.xml",
            "Rakefile",
            ".rspec",
            "build.gradle",
            "build.gradle.kts",
        ],
    ),
];

/// Config files named by a prefix (`jest.config.ts`, `vitest.config.mjs`, `babel.config.js`).
const HARNESS_PREFIXES: &[&str] = &[
    "jest.config.",
    "vitest.config.",
    "karma.conf.",
    "playwright.config.",
    "babel.config.",
];

/// Whether `path` (repository-relative) is a file some runner reads as its configuration.
pub fn is_harness_name(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    HARNESS.iter().flat_map(|(_, names)| names.iter()).any(|h| {
        if h.contains('/') {
            path == *h || path.ends_with(&format!("/{h}"))
        } else {
            base == *h
        }
    }) || HARNESS_PREFIXES.iter().any(|p| base.starts_with(p))
}

impl Harness {
    /// The tracked harness files: every file with a harness name (or a `jest.config.*` /
    /// `vitest.config.*` / `karma.conf.*`), and every tracked file a command names (`sh
    /// tests/run.sh`, `./scripts/test`, `python runtests.py`) — the verify commands' and
    /// `extra` (a slice's own commands) — minus the editable ones.
    pub fn files(&self, tracked: &[String], extra: &[&str]) -> Vec<String> {
        let named: Vec<String> = self
            .commands
            .iter()
            .map(String::as_str)
            .chain(extra.iter().copied())
            .flat_map(run_scripts)
            .collect();
        let mut out: Vec<String> = tracked
            .iter()
            .filter(|f| is_harness_name(f) || named.iter().any(|n| n == *f))
            .filter(|f| !in_areas(&self.editable, f))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// The files a command line runs as a program: the first word of each command when it is a
/// path (`./scripts/test`), or the script an interpreter is given (`sh tests/run.sh`, `python
/// runtests.py`). A file a command merely reads (`sh -n src/cart.sh` checks its syntax) is
/// counted too when it comes right after the interpreter: the harness errs on the safe side.
/// `python -m pytest` looks for its module in the working folder before anywhere else, so a
/// `pytest.py` (or `pytest/` package) there would run in the runner's place (red team, issue
/// 31): those names are the command's program too.
fn run_scripts(line: &str) -> Vec<String> {
    const INTERPRETERS: [&str; 12] = [
        "sh", "bash", "dash", "zsh", "python", "python3", "node", "ruby", "perl", "php", "deno",
        "bun",
    ];
    let mut out = Vec::new();
    for cmd in line.split([';', '&', '|', '\n']) {
        let words: Vec<&str> = cmd
            .split_whitespace()
            .map(|w| w.trim_matches(['\'', '"', '(', ')', '`']))
            .skip_while(|w| w.contains('=') && !w.starts_with('-'))
            .collect();
        let Some(first) = words.first() else { continue };
        let first = first.trim_start_matches("./");
        let prog = first.rsplit('/').next().unwrap_or(first);
        if INTERPRETERS.contains(&prog) || prog.starts_with("python") {
            if let Some(script) = words[1..].iter().find(|w| !w.starts_with('-')) {
                out.push(script.trim_start_matches("./").to_string());
            }
            if let Some(k) = words.iter().position(|w| *w == "-m")
                && let Some(module) = words.get(k + 1)
            {
                let top = module.split('.').next().unwrap_or(module);
                for f in ["{}.py", "{}/__init__.py", "{}/__main__.py"] {
                    out.push(f.replace("{}", top));
                }
            }
        } else if first.contains('/') || words[0].starts_with("./") {
            out.push(first.to_string());
        }
    }
    out
}

/// Why an area glob cannot bound an agent, if it cannot.
fn ambiguous_area(a: &str) -> Option<&'static str> {
    let t = a.trim().trim_start_matches("./");
    if t.is_empty() || matches!(t, "." | "*" | "**" | "**/*" | "/" | "*/**" | "**/") {
        return Some("matches the whole repository");
    }
    if a.starts_with('/') || a.starts_with('~') {
        return Some("must be relative to the repository root");
    }
    if t.split('/').any(|s| s == "..") {
        return Some("leaves the repository (`..`)");
    }
    if is_forge_path(t) || t == ".git" || t.starts_with(".git/") || t.starts_with(".tmp/") {
        return Some("is Forge's or git's own state, which no agent may change");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slice(id: &str, deps: &[&str]) -> Value {
        json!({"id": id, "title": "T", "depends_on": deps, "test_areas": ["tests/"],
               "code_areas": ["src/"], "focused_command": "sh tests/run.sh",
               "related_checks": [], "expected_red_failure": "x"})
    }

    #[test]
    fn clean_start_passes_on_forge_files_only_and_fails_on_others() {
        assert!(clean_start(&[".forge/config.yaml".into()]).passed());
        let r = clean_start(&[".forge/x".into(), "src/a.rs".into()]);
        assert!(!r.passed() && r.blocks);
        assert_eq!(r.evidence["files"], json!(["src/a.rs"]));
    }

    #[test]
    fn the_harness_is_found_and_kept_out_of_code_areas() {
        let tracked: Vec<String> = [
            "src/cart.sh",
            "tests/run.sh",
            "tests/conftest.py",
            "package.json",
            "web/jest.config.js",
            "Cargo.toml",
            "scripts/test",
            "pytest.py",
            "unittest/__init__.py",
            "src/pytest.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let h = Harness {
            commands: vec!["sh tests/run.sh".into()],
            editable: vec!["Cargo.toml".into()],
        };
        assert_eq!(
            h.files(&tracked, &["A=1 ./scripts/test --fast && sh -n src/x"]),
            [
                "package.json",
                "scripts/test",
                "tests/conftest.py",
                "tests/run.sh",
                "web/jest.config.js"
            ]
        );
        // A module in the working folder named like the one `python -m` runs takes its place.
        assert_eq!(
            h.files(
                &tracked,
                &[".venv/bin/python3.12 -m pytest -rA; python -m unittest.main"]
            ),
            [
                "package.json",
                "pytest.py",
                "tests/conftest.py",
                "tests/run.sh",
                "unittest/__init__.py",
                "web/jest.config.js"
            ]
        );
        let mut s = slice("a", &[]);
        s["code_areas"] = json!(["src/", "tests/"]);
        s["test_areas"] = json!(["spec/"]);
        let e = planning_output(&json!({"slices": [s]}), &tracked, &[], &h, &[]).unwrap_err();
        assert!(
            e.iter()
                .any(|p| p.contains("tests/run.sh") && p.contains("harness")),
            "{e:?}"
        );
    }

    /// Red team of issue 31: a planner named the virtual environment as a code area, and green
    /// put an import hook in its `site-packages`, which git ignores.
    #[test]
    fn no_area_lies_in_an_environment_the_checks_run_with() {
        let mut s = slice("a", &[]);
        s["code_areas"] = json!(["src/", ".venv/lib/**"]);
        let envs = [".venv".to_string(), "web/node_modules".to_string()];
        let e = planning_output(
            &json!({"slices": [s]}),
            &[],
            &[],
            &Harness::default(),
            &envs,
        )
        .unwrap_err();
        assert!(
            e.iter()
                .any(|p| p.contains("`.venv/lib/**` is inside .venv, an environment")),
            "{e:?}"
        );
        let mut s = slice("a", &[]);
        s["code_areas"] = json!(["web/"]);
        assert!(
            planning_output(
                &json!({"slices": [s]}),
                &[],
                &[],
                &Harness::default(),
                &envs
            )
            .is_ok()
        );
    }

    #[test]
    fn planning_output_accepts_a_good_plan_and_names_every_problem() {
        let ok = json!({"slices": [slice("a", &[]), slice("b", &["a"])]});
        let s = planning_output(&ok, &[], &[], &Harness::default(), &[]).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].depends_on, vec!["a"]);

        let dangling = json!({"slices": [slice("a", &["zzz"])]});
        let e = planning_output(&dangling, &[], &[], &Harness::default(), &[]).unwrap_err();
        assert!(e[0].contains("unknown slice id `zzz`"), "{e:?}");

        let later = json!({"slices": [slice("a", &["b"]), slice("b", &[])]});
        let e = planning_output(&later, &[], &[], &Harness::default(), &[]).unwrap_err();
        assert!(e[0].contains("comes later"), "{e:?}");

        let mut missing = slice("a", &[]);
        missing
            .as_object_mut()
            .unwrap()
            .remove("expected_red_failure");
        missing.as_object_mut().unwrap().remove("code_areas");
        let e = planning_output(
            &json!({"slices": [missing]}),
            &[],
            &[],
            &Harness::default(),
            &[],
        )
        .unwrap_err();
        assert!(
            e.iter()
                .any(|p| p.contains("slices[0].expected_red_failure` is missing")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|p| p.contains("slices[0].code_areas` is missing")),
            "{e:?}"
        );

        let mut broad = slice("a", &[]);
        broad["code_areas"] = json!(["**"]);
        broad["test_areas"] = json!(["../elsewhere/"]);
        let e = planning_output(
            &json!({"slices": [broad]}),
            &[],
            &[],
            &Harness::default(),
            &[],
        )
        .unwrap_err();
        assert!(e.iter().any(|p| p.contains("whole repository")), "{e:?}");
        assert!(
            e.iter().any(|p| p.contains("leaves the repository")),
            "{e:?}"
        );

        let mut overlap = slice("a", &[]);
        overlap["test_areas"] = json!(["src/**/*_test.rs"]);
        let e = planning_output(
            &json!({"slices": [overlap]}),
            &["src/cart_test.rs".into()],
            &[],
            &Harness::default(),
            &[],
        )
        .unwrap_err();
        assert!(
            e[0].contains("src/cart_test.rs is in a test area and in a code area"),
            "{e:?}"
        );

        let mut cmd = slice("a", &[]);
        cmd["focused_command"] = json!("  ");
        cmd["report"] = json!("xml");
        let e = planning_output(
            &json!({"slices": [cmd]}),
            &[],
            &[],
            &Harness::default(),
            &[],
        )
        .unwrap_err();
        assert!(
            e.iter().any(|p| p.contains("focused_command` is empty")),
            "{e:?}"
        );
        assert!(e.iter().any(|p| p.contains("not a report format")), "{e:?}");

        let twice = json!({"slices": [slice("a", &[]), slice("a", &[])]});
        assert!(
            planning_output(&twice, &[], &[], &Harness::default(), &[]).unwrap_err()[0]
                .contains("used twice")
        );
        assert!(
            planning_output(&json!({"slices": []}), &[], &[], &Harness::default(), &[]).is_err()
        );
        assert!(planning_output(&json!({}), &[], &[], &Harness::default(), &[]).is_err());
    }

    /// Every row of the harness table is recognised, at the top and in a folder below.
    #[test]
    fn every_harness_entry_is_a_harness_file() {
        for (runner, names) in HARNESS {
            for n in *names {
                for path in [n.to_string(), format!("pkg/{n}")] {
                    let h = Harness::default().files(std::slice::from_ref(&path), &[]);
                    assert_eq!(h, std::slice::from_ref(&path), "{runner}: {path}");
                }
            }
        }
        for p in ["jest.config.ts", "web/vitest.config.mjs", "babel.config.js"] {
            assert!(is_harness_name(p), "{p}");
        }
        for p in [
            "tests/test_x.py",
            "src/pytest_helpers.py",
            "docs/pyproject.md",
        ] {
            assert!(!is_harness_name(p), "{p}");
        }
    }
}
