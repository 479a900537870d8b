//! Changes, their scenarios, and which tests cover them.
//!
//! A change's requirements and scenarios are written in the OpenSpec syntax
//! (`### Requirement:`, `#### Scenario: <title>`); a scenario's id is its slugged title. They are
//! read from `.forge/changes/<change>/spec.md` and from an OpenSpec tree
//! (`openspec/changes/<change>/specs/**/spec.md`). A test covers a scenario by naming
//! `@scenario <change>/<id>` in a comment next to it, or by carrying the id in its name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::repo::Project;
use crate::report::{Status, TestCase};
use crate::text::{normalize, slug};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scenario {
    pub change: String,
    pub id: String,
    pub title: String,
    pub requirement: String,
    pub file: String,
    pub line: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub name: String,
    /// `forge` for `.forge/changes/`, `openspec` for an OpenSpec tree.
    pub sources: Vec<&'static str>,
    pub spec_files: Vec<String>,
}

/// Every change known to the project, by name. A change present in both trees is one change.
pub fn list_changes(project: &Project) -> Result<Vec<Change>> {
    let mut by_name: BTreeMap<String, Change> = BTreeMap::new();
    let forge_dir = project.changes_dir();
    for name in subdirs(&forge_dir)? {
        let spec = forge_dir.join(&name).join("spec.md");
        let entry = by_name.entry(name.clone()).or_insert_with(|| Change {
            name,
            sources: vec![],
            spec_files: vec![],
        });
        entry.sources.push("forge");
        if spec.is_file() {
            entry.spec_files.push(project.rel(&spec));
        }
    }
    let os_dir = project.root.join("openspec/changes");
    for name in subdirs(&os_dir)? {
        if name == "archive" {
            continue;
        }
        let mut files = Vec::new();
        collect_specs(&os_dir.join(&name).join("specs"), &mut files);
        if files.is_empty() {
            continue;
        }
        files.sort();
        let entry = by_name.entry(name.clone()).or_insert_with(|| Change {
            name,
            sources: vec![],
            spec_files: vec![],
        });
        entry.sources.push("openspec");
        entry
            .spec_files
            .extend(files.iter().map(|f| project.rel(f)));
    }
    Ok(by_name.into_values().collect())
}

fn subdirs(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(format!("cannot list {}", dir.display()), e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

fn collect_specs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let p = e.path();
        if p.is_dir() {
            collect_specs(&p, out);
        } else if p.file_name().is_some_and(|n| n == "spec.md") {
            out.push(p);
        }
    }
}

/// The scenarios of one change (`Some`) or of every change (`None`).
pub fn scenarios(project: &Project, change: Option<&str>) -> Result<Vec<Scenario>> {
    let mut all = Vec::new();
    for c in list_changes(project)? {
        if change.is_some_and(|want| want != c.name) {
            continue;
        }
        for f in &c.spec_files {
            let path = project.root.join(f);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            all.extend(parse_spec(&text, &c.name, f));
        }
    }
    Ok(all)
}

/// Reads the `### Requirement:` / `#### Scenario:` headings of one spec file.
pub fn parse_spec(text: &str, change: &str, file: &str) -> Vec<Scenario> {
    let mut out: Vec<Scenario> = Vec::new();
    let mut requirement = String::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(r) = heading(t, 3, "Requirement:") {
            requirement = r.to_string();
        } else if let Some(title) = heading(t, 4, "Scenario:") {
            let id = slug(title);
            if id.is_empty() || out.iter().any(|s| s.id == id) {
                continue;
            }
            out.push(Scenario {
                change: change.to_string(),
                id,
                title: title.to_string(),
                requirement: requirement.clone(),
                file: file.to_string(),
                line: i + 1,
            });
        }
    }
    out
}

fn heading<'a>(line: &'a str, level: usize, label: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(&"#".repeat(level))?;
    let rest = rest.strip_prefix(' ')?.trim_start();
    let rest = rest.strip_prefix(label)?;
    let title = rest.trim();
    (!title.is_empty()).then_some(title)
}

/// The text of a new change's `spec.md`, with the given scenario titles (or one placeholder).
pub fn scaffold(change: &str, scenarios: &[String]) -> String {
    let mut s = format!(
        "# Change: {change}\n\n## Why\n<What problem this change solves, in a sentence or two.>\n\n## Requirements\n\n\
         ### Requirement: <the behaviour, named>\n\
         The system SHALL <do something a test can observe>.\n"
    );
    let titles: Vec<&str> = if scenarios.is_empty() {
        vec!["<short title — its slug becomes the scenario id>"]
    } else {
        scenarios.iter().map(String::as_str).collect()
    };
    for t in titles {
        s.push_str(&format!(
            "\n#### Scenario: {t}\n- **GIVEN** <a starting state>\n- **WHEN** <an action>\n- **THEN** <an observable outcome>\n"
        ));
    }
    s.push_str(&format!(
        "\n<!-- A test covers a scenario by naming it in a comment: `@scenario {change}/<id>`,\n     or by carrying the id in its name. `forge verify --change {change}` checks them. -->\n"
    ));
    s
}

/// Creates `.forge/changes/<change>/spec.md`; refuses to overwrite.
pub fn new_change(project: &Project, change: &str, scenarios: &[String]) -> Result<PathBuf> {
    crate::repo::validate_change_name(change)?;
    let path = project.change_dir(change).join("spec.md");
    if path.exists() {
        return Err(Error::usage(format!(
            "{} already exists; edit it, or pick another name",
            project.rel(&path)
        )));
    }
    crate::state::write_atomic(&path, scaffold(change, scenarios).as_bytes())?;
    Ok(path)
}

/// One `@scenario` marker found in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// `None` for a bare `@scenario <id>`, which marks that id in any change.
    pub change: Option<String>,
    pub id: String,
    pub file: String,
    pub line: usize,
    /// The test the marker annotates, when it can be read off the following lines.
    pub test: Option<String>,
}

const MARKER: &[u8] = b"@scenario";

/// Files that document rather than test: a marker in prose proves nothing.
const DOC_EXTENSIONS: [&str; 5] = ["md", "markdown", "rst", "txt", "adoc"];

/// Finds every `@scenario` marker in the project's files, honouring `.gitignore` and skipping
/// hidden folders (`.git`, `.forge`, `.tmp`), OpenSpec specs and documentation files.
pub fn scan_markers(project: &Project) -> Result<Vec<Marker>> {
    let finder = memchr::memmem::Finder::new(MARKER);
    let mut markers = Vec::new();
    let walker = ignore::WalkBuilder::new(&project.root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .parents(false)
        .build();
    let openspec = project.root.join("openspec");
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if path.starts_with(&openspec)
            || path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| DOC_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        if finder.find(&bytes).is_none() {
            continue;
        }
        let rel = project.rel(path);
        markers_in(&bytes, &rel, &mut markers);
    }
    markers.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(markers)
}

/// Markers in one file's bytes.
pub fn markers_in(bytes: &[u8], file: &str, out: &mut Vec<Marker>) {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let mut rest = *line;
        while let Some(pos) = rest.find("@scenario") {
            let after = &rest[pos + MARKER.len()..];
            rest = after;
            if !after.starts_with([' ', '\t', ':']) {
                continue;
            }
            let token: String = after
                .trim_start_matches([' ', '\t', ':'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
                .collect();
            let token = token.trim_end_matches(['.', '/']);
            if token.is_empty() {
                continue;
            }
            let (change, id) = match token.rsplit_once('/') {
                Some((c, id)) => (Some(c.to_string()), id.to_string()),
                None => (None, token.to_string()),
            };
            if id.is_empty() {
                continue;
            }
            let before = &line[..line.len() - after.len() - MARKER.len()];
            let test = test_name_in(before)
                .or_else(|| lines[i + 1..].iter().take(12).find_map(|l| test_name_in(l)));
            out.push(Marker {
                change,
                id,
                file: file.to_string(),
                line: i + 1,
                test,
            });
        }
    }
}

/// The name a test definition on this line gives: `fn name`, `def name`, `func Name`,
/// `it("name"`, `test('name'`.
fn test_name_in(line: &str) -> Option<String> {
    let t = line.trim_start();
    if t.starts_with("//") || t.starts_with('#') && !t.starts_with("#[") {
        return None;
    }
    for kw in ["fn ", "def ", "func "] {
        if let Some(pos) = find_word(t, kw) {
            let after = t[pos + kw.len()..].trim_start();
            // `func (r *T) Name(` — a method: skip the receiver.
            let after = if kw == "func " && after.starts_with('(') {
                after
                    .split_once(')')
                    .map(|(_, r)| r.trim_start())
                    .unwrap_or(after)
            } else {
                after
            };
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                return Some(name);
            }
        }
    }
    for call in [
        "it(",
        "test(",
        "it.only(",
        "test.only(",
        "it.skip(",
        "test.skip(",
    ] {
        if let Some(pos) = find_word(t, call) {
            let after = t[pos + call.len()..].trim_start();
            let quote = after.chars().next()?;
            if matches!(quote, '"' | '\'' | '`') {
                let body = &after[1..];
                if let Some(end) = body.find(quote) {
                    return Some(body[..end].to_string());
                }
            }
        }
    }
    None
}

/// Position of `word` in `s` where it starts a word (not inside an identifier).
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(word) {
        let at = from + p;
        let prev = s[..at].chars().last();
        if prev.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

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

/// Decides each scenario's coverage from the markers and the test results.
///
/// A test case is linked to a scenario when its name contains the id (compared without case and
/// punctuation, so `test_guest_pays_by_card` and `TestGuestPaysByCard` both name
/// `guest-pays-by-card`), or when a marker for the scenario sits on the test's definition.
/// Any linked case failing makes the scenario failing; a passing one makes it covered; only
/// skipped ones leave it uncovered. A marker whose test cannot be tied to a result (a runner that
/// prints no names) covers the scenario unless a failing case is reported in the marker's file.
pub fn coverage(
    scenarios: &[Scenario],
    markers: &[Marker],
    cases: &[TestCase],
) -> Vec<ScenarioStatus> {
    let case_tokens: Vec<Vec<String>> = cases.iter().map(|c| tokens(&c.name)).collect();
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
            for (case, toks) in cases.iter().zip(&case_tokens) {
                // Whole words in order: `card` is not covered by `discard`.
                let by_name = !id_tokens.is_empty()
                    && toks
                        .windows(id_tokens.len())
                        .any(|w| w == id_tokens.as_slice());
                let by_marker = mine.iter().any(|m| {
                    m.test.as_deref().is_some_and(|t| case_is_test(case, t))
                        && files_compatible(case, &m.file)
                });
                if by_name || by_marker {
                    linked.push(case);
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
                evidence.push("its tests were skipped".to_string());
                Coverage::Uncovered
            } else if let Some(m) = mine
                .iter()
                .find(|m| m.test.is_some())
                .filter(|_| !cases.is_empty())
            {
                // The runner names its tests, and none of them is the marked one: it did not
                // run (or is not a test at all).
                evidence.push(format!(
                    "the test marked at {}:{} (`{}`) did not run: no test result names it",
                    m.file,
                    m.line,
                    m.test.as_deref().unwrap_or("")
                ));
                Coverage::Uncovered
            } else if !mine.is_empty() {
                let failing_in_file: Vec<&TestCase> = cases
                    .iter()
                    .filter(|c| {
                        c.status == Status::Failed
                            && mine
                                .iter()
                                .any(|m| c.file.as_deref().is_some_and(|f| same_file(f, &m.file)))
                    })
                    .collect();
                if failing_in_file.is_empty() {
                    evidence.extend(
                        mine.iter()
                            .map(|m| format!("marked at {}:{}", m.file, m.line)),
                    );
                    Coverage::Covered
                } else {
                    evidence.extend(
                        failing_in_file
                            .iter()
                            .map(|c| format!("failing test in the marked file: {}", c.name)),
                    );
                    Coverage::Failing
                }
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

/// The words of a test name, lowercase: split at punctuation and at camelCase humps, so
/// `TestGuestPaysByCard`, `test_guest_pays_by_card` and `guest pays by card` share
/// `guest pays by card`.
fn tokens(name: &str) -> Vec<String> {
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

/// Whether a reported case is the test defined as `test` (a function name or a JS title).
fn case_is_test(case: &TestCase, test: &str) -> bool {
    let name = case.name.split('[').next().unwrap_or(&case.name); // pytest params
    let want = normalize(test);
    if want.is_empty() {
        return false;
    }
    let last = name.rsplit([':', '.', '/']).next().unwrap_or(name);
    if normalize(last) == want || normalize(name) == want {
        return true;
    }
    // Go subtests `TestA/case` belong to `TestA`; Jest full names end with the title.
    name.split('/')
        .next()
        .is_some_and(|first| normalize(first) == want)
        || name.ends_with(&format!(" {test}"))
        || name.ends_with(&format!(" > {test}"))
}

fn files_compatible(case: &TestCase, marker_file: &str) -> bool {
    match &case.file {
        Some(f) => same_file(f, marker_file),
        None => true,
    }
}

/// Report files may be absolute, relative to a sub-folder, or the crate root of a unit test
/// binary; compare by path suffix.
fn same_file(report_file: &str, marker_file: &str) -> bool {
    let r = report_file.trim_start_matches("./");
    let m = marker_file.trim_start_matches("./");
    r == m || r.ends_with(&format!("/{m}")) || m.ends_with(&format!("/{r}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "# Checkout\n\n### Requirement: Guest checkout\nThe system SHALL let a guest pay.\n\n#### Scenario: Guest pays by card\n- **WHEN** the guest pays\n- **THEN** an order is created\n\n```markdown\n#### Scenario: not real\n```\n\n#### Scenario: guest pays by card\n\n### Requirement: Refunds\n#### Scenario: Refund raises on gateway error\n";

    #[test]
    fn scaffold_parses_back_to_its_scenarios() {
        let text = scaffold(
            "checkout",
            &["Guest pays by card".into(), "Member gets discount".into()],
        );
        let ids: Vec<_> = parse_spec(&text, "checkout", "x")
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, ["guest-pays-by-card", "member-gets-discount"]);
    }

    #[test]
    fn spec_scenarios_are_slugged_deduplicated_and_skip_fences() {
        let s = parse_spec(SPEC, "checkout", ".forge/changes/checkout/spec.md");
        let ids: Vec<_> = s.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            ["guest-pays-by-card", "refund-raises-on-gateway-error"]
        );
        assert_eq!(s[0].requirement, "Guest checkout");
        assert_eq!(s[0].line, 6);
        assert_eq!(s[1].requirement, "Refunds");
    }

    fn markers(src: &str, file: &str) -> Vec<Marker> {
        let mut out = Vec::new();
        markers_in(src.as_bytes(), file, &mut out);
        out
    }

    #[test]
    fn markers_find_the_test_they_annotate() {
        let rust = "// @scenario checkout/guest-pays-by-card\n#[test]\nfn pays_with_visa() {}\n";
        let py =
            "def test_refund():  # @scenario checkout/refund-raises-on-gateway-error\n    pass\n";
        let go = "// @scenario guest-pays-by-card\nfunc TestVisa(t *testing.T) {}\n";
        let js = "  // @scenario checkout/guest-pays-by-card\n  it('pays by card', () => {})\n";
        assert_eq!(
            markers(rust, "a.rs")[0].test.as_deref(),
            Some("pays_with_visa")
        );
        assert_eq!(markers(rust, "a.rs")[0].change.as_deref(), Some("checkout"));
        assert_eq!(markers(py, "a.py")[0].test.as_deref(), Some("test_refund"));
        let g = &markers(go, "a.go")[0];
        assert_eq!(
            (g.change.as_deref(), g.id.as_str(), g.test.as_deref()),
            (None, "guest-pays-by-card", Some("TestVisa"))
        );
        assert_eq!(markers(js, "a.js")[0].test.as_deref(), Some("pays by card"));
        assert!(markers("email@scenario.com and @scenarios x", "x").is_empty());
    }

    fn case(name: &str, status: Status, file: Option<&str>) -> TestCase {
        TestCase {
            name: name.into(),
            status,
            file: file.map(str::to_string),
            suite: None,
            message: None,
        }
    }

    #[test]
    fn coverage_classes() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let extra = Scenario {
            id: "member-gets-discount".into(),
            title: "x".into(),
            ..scen[0].clone()
        };
        let scen = vec![scen[0].clone(), scen[1].clone(), extra];
        let marks = markers(
            "// @scenario checkout/refund-raises-on-gateway-error\nfn refund_errors() {}\n",
            "src/lib.rs",
        );
        let cases = vec![
            case(
                "tests::guest_pays_by_card",
                Status::Passed,
                Some("src/lib.rs"),
            ),
            case("tests::refund_errors", Status::Failed, Some("src/lib.rs")),
        ];
        let cov = coverage(&scen, &marks, &cases);
        assert_eq!(cov[0].status, Coverage::Covered);
        assert_eq!(cov[1].status, Coverage::Failing);
        assert_eq!(cov[2].status, Coverage::Uncovered);
        assert!(cov[2].evidence[0].contains("@scenario checkout/member-gets-discount"));
    }

    #[test]
    fn go_and_skipped_cases() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let cases = vec![
            case("TestGuestPaysByCard/visa", Status::Passed, None),
            case("test_refund_raises_on_gateway_error", Status::Skipped, None),
        ];
        let cov = coverage(&scen, &[], &cases);
        assert_eq!(cov[0].status, Coverage::Covered);
        assert_eq!(cov[1].status, Coverage::Uncovered);
    }

    #[test]
    fn marker_without_named_result_covers_unless_its_file_fails() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let marks = markers("# @scenario checkout/guest-pays-by-card\n", "t/checkout.t");
        assert_eq!(
            coverage(&scen[..1], &marks, &[])[0].status,
            Coverage::Covered
        );
        let failing = vec![case("other", Status::Failed, Some("t/checkout.t"))];
        assert_eq!(
            coverage(&scen[..1], &marks, &failing)[0].status,
            Coverage::Failing
        );
    }

    #[test]
    fn names_match_on_whole_words_and_marked_tests_must_run() {
        let scen = vec![Scenario {
            change: "c".into(),
            id: "card".into(),
            title: "card".into(),
            requirement: String::new(),
            file: "s".into(),
            line: 1,
        }];
        let cases = vec![case("unrelated_discard_thing", Status::Passed, None)];
        assert_eq!(coverage(&scen, &[], &cases)[0].status, Coverage::Uncovered);
        let cases = vec![case("tests::pays_by_card", Status::Passed, None)];
        assert_eq!(coverage(&scen, &[], &cases)[0].status, Coverage::Covered);
        assert_eq!(
            tokens("TestGuestPaysByCard/visa"),
            ["test", "guest", "pays", "by", "card", "visa"]
        );
        // A marker on something that never ran as a test covers nothing.
        let marks = markers(
            "// @scenario c/card\nfn not_a_test_at_all() {}\n",
            "src/lib.rs",
        );
        let cases = vec![case("tests::other", Status::Passed, Some("src/lib.rs"))];
        let cov = coverage(&scen, &marks, &cases);
        assert_eq!(cov[0].status, Coverage::Uncovered);
        assert!(
            cov[0].evidence[0].contains("did not run"),
            "{:?}",
            cov[0].evidence
        );
    }

    #[test]
    fn marker_for_another_change_does_not_cover() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let marks = markers("// @scenario billing/guest-pays-by-card\n", "a.rs");
        assert_eq!(
            coverage(&scen[..1], &marks, &[])[0].status,
            Coverage::Uncovered
        );
    }
}
