//! `forge init`: a commented `.forge/config.yaml` for the project's test runner, and a
//! `.gitignore` that keeps Forge's local state out of git.

use std::path::Path;

use crate::error::{Error, Result};
use crate::repo::{CONFIG_FILE, Project};
use crate::state::{TEMP_PREFIX, write_atomic};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// What was recognised, for the message (`cargo`, `pytest`, …).
    pub kind: &'static str,
    pub test: String,
    pub report: &'static str,
    pub report_path: Option<&'static str>,
    /// The lint command for this kind of project, written enabled only when `lint_seen_in`.
    pub lint: Option<String>,
    /// Where the project itself already runs that lint (a CI workflow, a Makefile, the lint's
    /// own config): then verify runs it too. Otherwise the line is written commented out, so a
    /// crate whose tests pass does not FAIL its first verify on a lint it never enforced.
    pub lint_seen_in: Option<String>,
    /// The test command's program, when it is not found here (`cargo` on a machine without
    /// Rust): the config is still written, and `forge init` says what to install or change.
    pub missing: Option<String>,
}

/// Recognises the project's test runner from its manifest files, with a command that runs on
/// this machine (its programs looked up on `PATH`).
pub fn detect(root: &Path) -> Option<Detected> {
    detect_with(root, &|p| crate::exec::which(p).is_some())
}

/// The Python that runs the project's tests here: the project's own virtualenv, else `python3`,
/// else `python` (many systems have no `python`, some no `python3`).
fn python_for(root: &Path, has: &dyn Fn(&str) -> bool) -> String {
    for venv in [".venv/bin/python", "venv/bin/python"] {
        if root.join(venv).is_file() {
            return venv.to_string();
        }
    }
    if !has("python3") && has("python") {
        "python".to_string()
    } else {
        "python3".to_string()
    }
}

/// [`detect`] with `has` telling which programs are on `PATH`.
pub fn detect_with(root: &Path, has: &dyn Fn(&str) -> bool) -> Option<Detected> {
    let mut d = detect_kind(root, has)?;
    let program = d.test.split_whitespace().next().unwrap_or_default();
    let found = if program.contains('/') {
        root.join(program).is_file()
    } else {
        has(program)
    };
    if !found {
        d.missing = Some(program.to_string());
    }
    Some(d)
}

fn detect_kind(root: &Path, has: &dyn Fn(&str) -> bool) -> Option<Detected> {
    if root.join("Cargo.toml").is_file() {
        return Some(Detected {
            kind: "cargo",
            test: "cargo test".into(),
            report: "libtest",
            report_path: None,
            lint: Some("cargo clippy --all-targets -- -D warnings".into()),
            lint_seen_in: lint_seen_in(root, "clippy", &["clippy.toml", ".clippy.toml"])
                .or_else(|| clippy_lints_in_manifest(root)),
            missing: None,
        });
    }
    if root.join("go.mod").is_file() {
        return Some(Detected {
            kind: "go",
            test: "go test -json ./...".into(),
            report: "go-json",
            report_path: None,
            lint: Some("go vet ./...".into()),
            lint_seen_in: lint_seen_in(
                root,
                "go vet",
                &[
                    ".golangci.yml",
                    ".golangci.yaml",
                    ".golangci.toml",
                    ".golangci.json",
                ],
            ),
            missing: None,
        });
    }
    if let Ok(pkg) = std::fs::read_to_string(root.join("package.json")) {
        if pkg.contains("\"vitest\"") {
            return Some(Detected {
                kind: "vitest",
                // The JSON on standard output, not a report file: a file under `.tmp/.forge/`
                // cannot be written inside the sandbox (Forge's own state is read-only there),
                // and one elsewhere would be an untracked file in the working tree.
                test: "npx vitest run --reporter=json".into(),
                report: "vitest-json",
                report_path: None,
                lint: None,
                lint_seen_in: None,
                missing: None,
            });
        }
        if pkg.contains("\"jest\"") {
            return Some(Detected {
                kind: "jest",
                test: "npx jest --json".into(),
                report: "jest-json",
                report_path: None,
                lint: None,
                lint_seen_in: None,
                missing: None,
            });
        }
        return Some(Detected {
            kind: "npm",
            test: "npm test".into(),
            report: "auto",
            report_path: None,
            lint: None,
            lint_seen_in: None,
            missing: None,
        });
    }
    let python = [
        "pyproject.toml",
        "pytest.ini",
        "setup.cfg",
        "tox.ini",
        "setup.py",
        "conftest.py",
    ];
    if python.iter().any(|f| root.join(f).is_file()) || root.join("tests/conftest.py").is_file() {
        return Some(Detected {
            kind: "pytest",
            test: format!("{} -m pytest -rA", python_for(root, has)),
            report: "pytest",
            report_path: None,
            lint: None,
            lint_seen_in: None,
            missing: None,
        });
    }
    None
}

/// Files where a project says which checks it runs: CI workflows, make and just recipes,
/// pre-commit hooks.
fn check_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = [
        "Makefile",
        "makefile",
        "GNUmakefile",
        "justfile",
        "Justfile",
        ".justfile",
        ".gitlab-ci.yml",
        ".pre-commit-config.yaml",
        "Taskfile.yml",
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    if let Ok(entries) = std::fs::read_dir(root.join(".github/workflows")) {
        let mut ws: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
            .collect();
        ws.sort();
        files.extend(ws);
    }
    files
}

/// Where the project already runs a lint: one of its own config files (`own_config`) exists,
/// or a CI/make/just file mentions `word`. The file's path relative to `root`, for the message.
fn lint_seen_in(root: &Path, word: &str, own_config: &[&str]) -> Option<String> {
    if let Some(f) = own_config.iter().find(|f| root.join(f).is_file()) {
        return Some(f.to_string());
    }
    check_files(root)
        .into_iter()
        .find(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(word)))
        .map(|f| f.strip_prefix(root).unwrap_or(&f).display().to_string())
}

/// `[lints.clippy]` (or the workspace's, or a `clippy = …` key of a `[lints]` table) in
/// Cargo.toml: the crate configures clippy, so it means to pass it.
fn clippy_lints_in_manifest(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let mut in_lints = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']').trim();
            if matches!(table, "lints.clippy" | "workspace.lints.clippy")
                || table.starts_with("lints.clippy.")
                || table.starts_with("workspace.lints.clippy.")
            {
                return Some("Cargo.toml".into());
            }
            in_lints = matches!(table, "lints" | "workspace.lints");
        } else if in_lints && (line.starts_with("clippy") || line.starts_with("clippy.")) {
            return Some("Cargo.toml".into());
        }
    }
    None
}

/// The config file's text: commented, so a person can adjust it without reading docs.
pub fn config_text(d: Option<&Detected>) -> String {
    let mut s = String::from(
        "# Forge configuration. `forge doctor` checks it; `forge help` lists the commands.\n\
         # `forge verify` runs every command below, parses its test report, checks the\n\
         # scenario coverage of the change, and prints `Verdict: PASS` or `Verdict: FAIL`.\n\
         verify:\n  commands:\n",
    );
    match d {
        Some(d) => {
            s.push_str(&format!("    # detected: {}\n", d.kind));
            s.push_str(&format!(
                "    - name: test\n      run: {}\n",
                yaml_str(&d.test)
            ));
            s.push_str(
                "      timeout: 600        # seconds; the whole process group is killed after\n",
            );
            // Every format the report parser reads, from its own list: the comment cannot drift.
            let formats: Vec<&str> = crate::report::Format::ALL
                .iter()
                .map(|f| f.name())
                .collect();
            s.push_str(&format!(
                "      report: {:<13}# {}\n",
                d.report,
                formats.join(" | ")
            ));
            match d.report_path {
                Some(p) => s.push_str(&format!("      report_path: {p}   # the report file the command writes\n")),
                None => s.push_str("      report_path: null   # the report file, for junit / *-json formats that write one\n"),
            }
            match (&d.lint, &d.lint_seen_in) {
                (Some(l), Some(seen)) => s.push_str(&format!(
                    "    # lint: the project already runs it ({seen})\n    - name: lint\n      run: {}\n      report: none\n",
                    yaml_str(l)
                )),
                (Some(l), None) => s.push_str(&format!(
                    "    # lint: nothing in this project runs it yet; uncomment the three lines to verify it too\n    # - name: lint\n    #   run: {}\n    #   report: none\n",
                    yaml_str(l)
                )),
                (None, _) => {}
            }
        }
        None => {
            s.push_str(
                "    # No test runner was recognised: replace this with your test command.\n",
            );
            s.push_str(&format!(
                "    - name: test\n      run: \"echo '{PLACEHOLDER}' >&2; exit 1\"\n"
            ));
            s.push_str("      timeout: 600\n      report: auto\n");
        }
    }
    s.push_str(
        "breaker:\n  # Consecutive FAILs of `forge verify --change <c>` that open the circuit.\n  max_failures: 3\n",
    );
    s.push_str(concat!(
        "# The agents `forge run` drives (planner, red, verifier, green, coverage_reviewer, or\n",
        "# default for all). Each reads its prompt from $FORGE_PROMPT_FILE; see `forge run --help`.\n",
        "# With a USD budget limit, $FORGE_BUDGET_LEFT_USD holds the dollars left: Claude Code stops there.\n",
        "# agents:\n",
        "#   default:\n",
        "#     command: claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --session-id \"$FORGE_AGENT_SESSION\" ${FORGE_BUDGET_LEFT_USD:+--max-budget-usd \"$FORGE_BUDGET_LEFT_USD\"} --output-format json --permission-mode acceptEdits\n",
        "#     resume_command: claude -p \"$(cat \"$FORGE_PROMPT_FILE\")\" --resume \"$FORGE_AGENT_SESSION\" ${FORGE_BUDGET_LEFT_USD:+--max-budget-usd \"$FORGE_BUDGET_LEFT_USD\"} --output-format json --permission-mode acceptEdits\n",
        "#     timeout: 1800\n",
    ));
    s
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// What the test command says when no runner was recognised; `forge doctor` looks for it.
pub const PLACEHOLDER: &str = "edit .forge/config.yaml: set verify.commands";

/// Lines `forge init` makes sure `.gitignore` has.
pub const GITIGNORE_LINES: [&str; 1] = [".tmp/.forge/"];

#[derive(Debug, Clone)]
pub struct InitOutcome {
    pub config_written: bool,
    pub detected: Option<Detected>,
    pub gitignore_added: Vec<String>,
}

/// Writes the config (refusing to overwrite one unless `force`) and the `.gitignore` lines.
pub fn init(root: &Path, force: bool) -> Result<InitOutcome> {
    let project = Project::at(root);
    let config = project.config_path();
    let detected = detect(root);
    let exists = config.exists();
    if exists && !force {
        return Err(Error::usage(format!(
            "{} already exists; edit it, or re-run with `forge init --force` to replace it",
            CONFIG_FILE
        )));
    }
    write_atomic(&config, config_text(detected.as_ref()).as_bytes())?;
    std::fs::create_dir_all(project.changes_dir()).map_err(|e| {
        Error::io(
            format!("cannot create {}", project.changes_dir().display()),
            e,
        )
    })?;
    let temp_glob = format!(".forge/**/{TEMP_PREFIX}*");
    let wanted: Vec<String> = GITIGNORE_LINES
        .iter()
        .map(|s| s.to_string())
        .chain([temp_glob])
        .collect();
    let added = ensure_gitignore(root, &wanted)?;
    Ok(InitOutcome {
        config_written: true,
        detected,
        gitignore_added: added,
    })
}

/// Appends the missing `lines` to `.gitignore`, keeping what is there byte for byte.
pub fn ensure_gitignore(root: &Path, lines: &[String]) -> Result<Vec<String>> {
    let path = root.join(".gitignore");
    let current = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(format!("cannot read {}", path.display()), e)),
    };
    let have: Vec<&str> = current.lines().map(str::trim).collect();
    let missing: Vec<String> = lines
        .iter()
        .filter(|l| !have.contains(&l.as_str()) && !have.contains(&l.trim_end_matches('/')))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(missing);
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Forge: local run state, logs and interrupted writes\n");
    for l in &missing {
        text.push_str(l);
        text.push('\n');
    }
    write_atomic(&path, text.as_bytes())?;
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn every_generated_config_parses() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut kinds = vec![];
        for (file, body) in [
            ("Cargo.toml", "[package]"),
            ("go.mod", "module x"),
            ("package.json", "{\"devDependencies\": {\"vitest\": \"3\"}}"),
            ("package.json", "{\"devDependencies\": {\"jest\": \"29\"}}"),
            ("package.json", "{}"),
            ("pyproject.toml", ""),
        ] {
            let sub = d.join(kinds.len().to_string());
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(file), body).unwrap();
            let det = detect(&sub).unwrap();
            Config::parse(&config_text(Some(&det))).unwrap_or_else(|e| panic!("{}: {e}", det.kind));
            kinds.push(det.kind);
        }
        assert_eq!(kinds, ["cargo", "go", "vitest", "jest", "npm", "pytest"]);
        assert!(!config_text(None).contains("http"), "no placeholder URL");
        assert!(detect(&d.join("none-such")).is_none());
        Config::parse(&config_text(None)).unwrap();
    }

    /// A lint is verified only where the project already runs it; otherwise it is written
    /// commented out, and a config with it uncommented still parses.
    #[test]
    fn the_lint_is_enabled_only_where_the_project_runs_it() {
        let seen = |files: &[(&str, &str)]| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
            for (f, body) in files {
                let p = dir.path().join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, body).unwrap();
            }
            let d = detect_with(dir.path(), &|_| true).unwrap();
            let text = config_text(Some(&d));
            Config::parse(&text).unwrap();
            let enabled = text.contains("\n    - name: lint\n");
            assert_eq!(enabled, d.lint_seen_in.is_some(), "{text}");
            if !enabled {
                assert!(
                    text.contains("\n    # - name: lint\n    #   run: \"cargo clippy"),
                    "{text}"
                );
                let on = text
                    .replace("    # - name: lint", "    - name: lint")
                    .replace("    #   ", "      ");
                let c = Config::parse(&on).unwrap();
                assert_eq!(c.verify.commands.len(), 2);
            }
            d.lint_seen_in
        };
        assert_eq!(seen(&[]), None);
        assert_eq!(seen(&[("README.md", "run cargo clippy")]), None);
        assert_eq!(seen(&[("Makefile", "test:\n\tcargo test\n")]), None);
        assert_eq!(
            seen(&[(
                ".github/workflows/ci.yml",
                "- run: cargo clippy -- -D warnings\n"
            )])
            .as_deref(),
            Some(".github/workflows/ci.yml")
        );
        assert_eq!(
            seen(&[("Makefile", "lint:\n\tcargo clippy\n")]).as_deref(),
            Some("Makefile")
        );
        assert_eq!(
            seen(&[("justfile", "lint:\n  cargo clippy\n")]).as_deref(),
            Some("justfile")
        );
        assert_eq!(seen(&[("clippy.toml", "")]).as_deref(), Some("clippy.toml"));
        assert_eq!(
            seen(&[(".clippy.toml", "")]).as_deref(),
            Some(".clippy.toml")
        );
        for manifest in [
            "[package]\nname = \"x\"\n[lints.clippy]\npedantic = \"warn\"\n",
            "[workspace.lints.clippy]\nall = \"deny\"\n",
            "[lints]\nclippy.all = \"deny\"\n",
            "[lints]\nclippy = { all = \"deny\" }\n",
        ] {
            assert_eq!(
                seen(&[("Cargo.toml", manifest)]).as_deref(),
                Some("Cargo.toml"),
                "{manifest}"
            );
        }
        assert_eq!(
            seen(&[("Cargo.toml", "[lints.rust]\nunsafe_code = \"forbid\"\n")]),
            None
        );
        // Go: `go vet` where CI runs it or golangci-lint is configured.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
        assert_eq!(
            detect_with(dir.path(), &|_| true).unwrap().lint_seen_in,
            None
        );
        std::fs::write(dir.path().join(".golangci.yml"), "").unwrap();
        assert_eq!(
            detect_with(dir.path(), &|_| true)
                .unwrap()
                .lint_seen_in
                .as_deref(),
            Some(".golangci.yml")
        );
    }

    #[test]
    fn the_report_comment_lists_every_format_the_parser_reads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        let text = config_text(Some(&detect(dir.path()).unwrap()));
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("report: "))
            .unwrap();
        let listed: Vec<&str> = line
            .split_once('#')
            .unwrap()
            .1
            .split(" | ")
            .map(str::trim)
            .collect();
        for f in crate::report::Format::ALL {
            assert!(listed.contains(&f.name()), "{} missing: {line}", f.name());
        }
        for name in ["jest", "vitest", "mocha"] {
            assert!(listed.contains(&name), "{line}");
        }
    }

    #[test]
    fn the_test_command_names_a_python_this_machine_has() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("pyproject.toml"), "").unwrap();
        let with =
            |progs: &'static [&'static str]| detect_with(d, &|p| progs.contains(&p)).unwrap();
        assert_eq!(with(&["python3"]).test, "python3 -m pytest -rA");
        assert_eq!(with(&["python"]).test, "python -m pytest -rA");
        assert_eq!(with(&["python", "python3"]).test, "python3 -m pytest -rA");
        let none = with(&[]);
        assert_eq!(none.missing.as_deref(), Some("python3"), "{none:?}");
        assert!(with(&["python3"]).missing.is_none());
        // The project's own virtualenv wins.
        std::fs::create_dir_all(d.join(".venv/bin")).unwrap();
        std::fs::write(d.join(".venv/bin/python"), "").unwrap();
        let v = with(&[]);
        assert_eq!(v.test, ".venv/bin/python -m pytest -rA");
        assert!(v.missing.is_none());
    }

    #[test]
    fn init_refuses_to_overwrite_and_gitignore_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(".gitignore"), "target").unwrap();
        let o = init(d, false).unwrap();
        assert_eq!(o.gitignore_added.len(), 2);
        let e = init(d, false).unwrap_err().to_string();
        assert!(e.contains("--force"), "{e}");
        let o = init(d, true).unwrap();
        assert!(o.gitignore_added.is_empty());
        let gi = std::fs::read_to_string(d.join(".gitignore")).unwrap();
        assert!(gi.starts_with("target\n"));
        assert_eq!(gi.matches(".tmp/.forge/").count(), 1);
    }
}
