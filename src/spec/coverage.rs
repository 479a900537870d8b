//! Scenario coverage: which test results prove which scenarios.
//!
//! A scenario is covered only by a test that ran and passed in this verify, tied to it either
//! by carrying the scenario's id in its name or by an `@scenario` marker on its definition. A
//! marker ties to exactly the test it sits on (and the tests nested in it), identified the way
//! its runner names it: file, class and function for pytest; crate root file and module path
//! for Rust (libtest and nextest); file and `describe` path for Jest and Vitest; the `>` path
//! for TAP; the test and its subtests for Go.

use serde::Serialize;

use super::{Marker, Scenario};
use crate::report::{Format, Status, TestCase};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Coverage {
    /// Covered by a test, and no covering test failed.
    Covered,
    /// A covering test failed.
    Failing,
    /// No test covers it (or its only covering tests were skipped).
    Uncovered,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioStatus {
    pub change: String,
    pub id: String,
    pub title: String,
    pub status: Coverage,
    /// What proves the status: the covering tests, the markers, or why it is uncovered.
    pub evidence: Vec<String>,
    /// The spec file and line of its `#### Scenario:` heading.
    pub file: String,
    pub line: usize,
}

/// A test result and the report format it was read from (which says how it names tests).
#[derive(Debug, Clone, Copy)]
pub struct Tested<'a> {
    pub format: Option<Format>,
    pub case: &'a TestCase,
}

/// Decides each scenario's coverage from the markers and the test results.
///
/// A case is linked to a scenario when its name contains the id as whole words (compared
/// without case and punctuation, so `test_guest_pays_by_card` and `TestGuestPaysByCard` both
/// name `guest-pays-by-card`), or when a marker for the scenario ties to it. Any linked case
/// failing makes the scenario failing; a passing one makes it covered; skipped or xfailed ones
/// leave it uncovered, and so does a marker whose test no result names — it did not run, or
/// the report names no cases (a command that was not found, a runner's quiet summary).
pub fn coverage(
    scenarios: &[Scenario],
    markers: &[Marker],
    cases: &[Tested<'_>],
) -> Vec<ScenarioStatus> {
    let case_tokens: Vec<Vec<String>> = cases.iter().map(|c| tokens(&c.case.name)).collect();
    scenarios
        .iter()
        .map(|s| {
            let id_tokens: Vec<String> =
                s.id.split('-')
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect();
            let mine: Vec<&Marker> = markers
                .iter()
                .filter(|m| m.id == s.id && m.change.as_ref().is_none_or(|c| *c == s.change))
                .collect();
            let mut linked: Vec<&TestCase> = Vec::new();
            for (t, toks) in cases.iter().zip(&case_tokens) {
                // Whole words in order: `card` is not covered by `discard`.
                let by_name = !id_tokens.is_empty()
                    && toks
                        .windows(id_tokens.len())
                        .any(|w| w == id_tokens.as_slice());
                if by_name || mine.iter().any(|m| ties(m, *t)) {
                    linked.push(t.case);
                }
            }
            let mut evidence = Vec::new();
            let failed: Vec<&&TestCase> = linked
                .iter()
                .filter(|c| c.status == Status::Failed)
                .collect();
            let passed = linked.iter().filter(|c| c.status == Status::Passed).count();
            let status = if !failed.is_empty() {
                evidence.extend(failed.iter().map(|c| format!("failing test: {}", c.name)));
                Coverage::Failing
            } else if passed > 0 {
                evidence.extend(
                    linked
                        .iter()
                        .filter(|c| c.status == Status::Passed)
                        .map(|c| format!("passing test: {}", c.name)),
                );
                Coverage::Covered
            } else if !linked.is_empty() {
                evidence.push(format!(
                    "its tests did not pass (skipped or expected to fail): {}",
                    linked
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                Coverage::Uncovered
            } else if let Some(m) = mine.iter().find(|m| m.test.is_some()) {
                let what = format!(
                    "the test marked at {}:{} (`{}`)",
                    m.file,
                    m.line,
                    m.test.as_deref().unwrap_or("")
                );
                evidence.push(if cases.is_empty() {
                    format!(
                        "{what} cannot be seen to pass: no test report of this verify names test cases (a command failed, or its report format names none)"
                    )
                } else {
                    format!("{what} did not run: no test result names it")
                });
                Coverage::Uncovered
            } else if let Some(m) = mine.first() {
                evidence.push(m.describe());
                Coverage::Uncovered
            } else {
                evidence.push(format!(
                    "no test names it: mark one with `@scenario {}/{}`",
                    s.change, s.id
                ));
                Coverage::Uncovered
            };
            ScenarioStatus {
                change: s.change.clone(),
                id: s.id.clone(),
                title: s.title.clone(),
                status,
                evidence,
                file: s.file.clone(),
                line: s.line,
            }
        })
        .collect()
}

/// Whether `m` sits on the test `t` is (or on a group containing it).
fn ties(m: &Marker, t: Tested<'_>) -> bool {
    let Some(test) = m.test.as_deref() else {
        return false;
    };
    let want: Vec<&str> = m
        .scope
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(test))
        .collect();
    let case = t.case;
    let file_ok = |f: Option<&str>| f.is_none_or(|f| same_file(f, &m.file));
    match t.format {
        Some(Format::Pytest) => {
            let mut parts = case.name.split("::");
            let file = parts.next().unwrap_or("");
            let path: Vec<&str> = parts.map(strip_params).collect();
            same_file(file, &m.file) && extends(&path, &want)
        }
        Some(Format::Junit) => junit_ties(case, m, &want),
        Some(Format::Libtest | Format::Nextest) => {
            let Some(root) = case.file.as_deref() else {
                return false;
            };
            let Some(mut path) = rust_modules(&m.file, root) else {
                return false;
            };
            path.extend(want.iter().map(|s| s.to_string()));
            let case_path: Vec<&str> = case.name.split("::").collect();
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            extends(&case_path, &path)
        }
        Some(Format::JestJson | Format::VitestJson) => {
            file_ok(case.file.as_deref()) && extends(&js_path(case), &want)
        }
        Some(Format::Vitest | Format::Jest | Format::Mocha | Format::Tap) => {
            let path: Vec<&str> = case.name.split(" > ").collect();
            file_ok(case.file.as_deref()) && extends(&path, &want)
        }
        Some(Format::GoJson) => {
            let path: Vec<&str> = case.name.split('/').collect();
            m.scope.is_empty() && extends(&path, &[test])
        }
        _ => false,
    }
}

/// `path` is `prefix` or a test nested in it.
fn extends(path: &[&str], prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path[..prefix.len()] == *prefix
}

/// `test_x[param-1]` → `test_x`.
fn strip_params(s: &str) -> &str {
    s.split('[').next().unwrap_or(s)
}

/// A Jest/Vitest case as describe titles and its own title. The reporters' `fullName` joins
/// them with spaces; the parser keeps the describe titles apart in `suite` (`a > b`).
fn js_path(case: &TestCase) -> Vec<&str> {
    match case.suite.as_deref() {
        Some(suite) if !suite.is_empty() => {
            let mut path: Vec<&str> = suite.split(" > ").collect();
            let prefix = path.join(" ");
            let title = case
                .name
                .strip_prefix(&prefix)
                .map(str::trim_start)
                .unwrap_or(&case.name);
            path.push(title);
            path
        }
        _ => vec![case.name.as_str()],
    }
}

/// JUnit from pytest (`classname="tests.test_x.TestA"`, `name="test_b[1]"`), from Vitest
/// (`classname` the file, `name="a > b"`) or from jest-junit (`classname` = `name` = the
/// space-joined path).
fn junit_ties(case: &TestCase, m: &Marker, want: &[&str]) -> bool {
    let Some(classname) = case.suite.as_deref() else {
        return false;
    };
    let name = case
        .name
        .strip_prefix(&format!("{classname}."))
        .unwrap_or(&case.name);
    if name.contains(" > ") {
        let path: Vec<&str> = name.split(" > ").collect();
        return same_file(classname, &m.file) && extends(&path, want);
    }
    // jest-junit writes the describe titles and the title joined by spaces, twice, and no
    // file: only the whole name can be compared.
    if classname == case.name {
        return case.name == want.join(" ");
    }
    // pytest: the module's dotted path, then classes.
    let module = m
        .file
        .trim_end_matches(".py")
        .trim_start_matches("./")
        .replace('/', ".");
    let mut path: Vec<&str> = classname.split('.').collect();
    path.push(strip_params(name));
    let module_parts: Vec<&str> = module.split('.').collect();
    // The classname starts with the module's path from pytest's rootdir: a suffix of the file.
    (1..=module_parts.len()).any(|k| {
        let tail = &module_parts[module_parts.len() - k..];
        path.len() > k && path[..k] == *tail && extends(&path[k..], want)
    })
}

/// The module path of a Rust source file inside the crate whose root libtest names
/// (`src/lib.rs`, `tests/refunds.rs`): `src/cart.rs` → `cart`, `src/a/mod.rs` → `a`, the root
/// itself → none; `None` when the file is not part of that crate. Paths may carry a workspace
/// member's folder in front (`crates/shop/src/cart.rs`).
fn rust_modules(file: &str, root: &str) -> Option<Vec<String>> {
    let file = file.trim_start_matches("./");
    let root = root.trim_start_matches("./");
    if same_file(file, root) {
        return Some(Vec::new());
    }
    let (root_dir, root_name) = root.rsplit_once('/').unwrap_or(("", root));
    let segments: Vec<&str> = file.split('/').collect();
    let dir: Vec<&str> = root_dir.split('/').filter(|s| !s.is_empty()).collect();
    // Where the root's folder starts in the file's path (the last place, for nested crates).
    let start = (0..=segments.len().saturating_sub(dir.len() + 1))
        .rev()
        .find(|&i| segments[i..i + dir.len()] == *dir)?;
    let rel = &segments[start + dir.len()..];
    let stem = root_name.trim_end_matches(".rs");
    let rel: Vec<&str> = match stem {
        // A library or binary root: every file beside it but the other roots.
        "lib" | "main" => {
            if rel.first() == Some(&"bin") || rel == ["main.rs"] || rel == ["lib.rs"] {
                return None;
            }
            rel.to_vec()
        }
        // An integration test or a `src/bin/x.rs`: only its own folder.
        _ => {
            if rel.first() != Some(&stem) {
                return None;
            }
            rel[1..].to_vec()
        }
    };
    let mut modules: Vec<String> = rel
        .iter()
        .map(|s| s.trim_end_matches(".rs").to_string())
        .collect();
    if modules.last().is_some_and(|m| m == "mod" || m == "main") {
        modules.pop();
    }
    Some(modules)
}

/// The words of a test name, lowercase: split at punctuation and at camelCase humps, so
/// `TestGuestPaysByCard`, `test_guest_pays_by_card` and `guest pays by card` share
/// `guest pays by card`.
pub(crate) fn tokens(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Report files may be absolute, relative to a sub-folder, or the crate root of a unit test
/// binary; compare by path suffix.
fn same_file(report_file: &str, marker_file: &str) -> bool {
    let r = report_file.trim_start_matches("./");
    let m = marker_file.trim_start_matches("./");
    r == m || r.ends_with(&format!("/{m}")) || m.ends_with(&format!("/{r}"))
}
