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

mod coverage;
mod markers;

pub use coverage::{Coverage, ScenarioStatus, Tested, coverage};
pub use markers::{Marker, markers_in, scan_markers};

use crate::error::{Error, Result};
use crate::repo::Project;
use crate::text::slug;

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

    /// The test a marker on the line above `def` names, in file `file`.
    fn marked(def: &str, file: &str) -> Option<String> {
        markers(&format!("# @scenario c/x\n{def}\n"), file)[0]
            .test
            .clone()
    }

    #[test]
    fn markers_find_tests_in_bats_shell_rspec_junit_kotlin_phpunit_and_exunit() {
        // bats
        assert_eq!(
            marked("@test \"refund raises the balance\" {", "t.bats").as_deref(),
            Some("refund raises the balance")
        );
        // Shell functions, both spellings.
        assert_eq!(
            marked("test_refund() {", "t.sh").as_deref(),
            Some("test_refund")
        );
        assert_eq!(
            marked("test_refund () {", "t.sh").as_deref(),
            Some("test_refund")
        );
        assert_eq!(
            marked("function test_refund {", "t.sh").as_deref(),
            Some("test_refund")
        );
        // RSpec
        assert_eq!(
            marked("  it \"raises the balance\" do", "refund_spec.rb").as_deref(),
            Some("raises the balance")
        );
        assert_eq!(
            marked("describe 'Refund' do", "refund_spec.rb").as_deref(),
            Some("Refund")
        );
        // JUnit and Kotlin
        assert_eq!(
            marked("    @Test void raisesTheBalance() {", "RefundTest.java").as_deref(),
            Some("raisesTheBalance")
        );
        assert_eq!(
            marked(
                "    @Test\n    public void raisesTheBalance() {",
                "RefundTest.java"
            )
            .as_deref(),
            Some("raisesTheBalance")
        );
        assert_eq!(
            marked("    @Test fun raisesTheBalance() {", "RefundTest.kt").as_deref(),
            Some("raisesTheBalance")
        );
        assert_eq!(
            marked(
                "    @Test fun `refund raises the balance`() {",
                "RefundTest.kt"
            )
            .as_deref(),
            Some("refund raises the balance")
        );
        // PHPUnit
        assert_eq!(
            marked(
                "    public function testRefundRaises(): void",
                "RefundTest.php"
            )
            .as_deref(),
            Some("testRefundRaises")
        );
        // ExUnit
        assert_eq!(
            marked("  test \"refund raises the balance\" do", "refund_test.exs").as_deref(),
            Some("refund raises the balance")
        );
        assert_eq!(
            marked(
                "  test \"refund raises\", %{conn: conn} do",
                "refund_test.exs"
            )
            .as_deref(),
            Some("refund raises")
        );
        // A shell `test` command is not a test definition, nor is a call.
        assert_eq!(marked("test \"$a\" = b && echo ok", "t.sh"), None);
        assert_eq!(marked("check \"guest pays\" 1 1", "t.sh"), None);
        // Markers stacked on one test both sit on it; a marker on a line of code does not
        // borrow the test below the next marker.
        let m = markers("# @scenario c/a\n# @scenario c/b\ndef test_x():\n", "t.py");
        assert_eq!(
            (m[0].test.as_deref(), m[1].test.as_deref()),
            (Some("test_x"), Some("test_x"))
        );
        let m = markers(
            "# @scenario c/a\ncheck 1 1\n# @scenario c/b\ntest_b() {\n",
            "t.sh",
        );
        assert_eq!(
            (m[0].test.as_deref(), m[1].test.as_deref()),
            (None, Some("test_b"))
        );
        // Where both spellings could apply, the JS call decides as before.
        assert_eq!(
            marked("it('pays', function named() {})", "a.js").as_deref(),
            Some("pays")
        );
    }

    #[test]
    fn a_marker_is_described_the_same_by_the_listing_and_by_coverage() {
        let on_nothing = &markers("# @scenario c/x\ncheck \"pays\" 1 1\n", "t.sh")[0];
        assert!(
            on_nothing.describe().starts_with(
                "marked at t.sh:1, not on a test Forge can identify: it ties to nothing"
            ),
            "{}",
            on_nothing.describe()
        );
        let scenario = Scenario {
            change: "c".into(),
            id: "x".into(),
            title: "x".into(),
            requirement: String::new(),
            file: "spec.md".into(),
            line: 1,
        };
        let cov = coverage(&[scenario], std::slice::from_ref(on_nothing), &[]);
        assert_eq!(cov[0].evidence, [on_nothing.describe()]);
        let on_test = &markers("# @scenario c/x\ntest_pays() {\n", "t.sh")[0];
        assert_eq!(on_test.describe(), "marked at t.sh:1 on test test_pays");
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
        // The groups around the test, by indentation.
        let py = "class TestA:
    def test_x(self):
        pass

class TestB:
    # @scenario c/x
    @pytest.mark.slow
    def test_x(self):
        pass
";
        assert_eq!(markers(py, "t.py")[0].scope, ["TestB"]);
        let js = "describe('cart', () => {
  describe('old', () => {
    it('x', () => {});
  });
  describe('refunds', () => {
    // @scenario c/x
    it('raises', () => {});
  });
});
";
        let m = &markers(js, "a.test.js")[0];
        assert_eq!(
            (m.scope.clone(), m.test.as_deref()),
            (vec!["cart".to_string(), "refunds".into()], Some("raises"))
        );
        let rs = "#[cfg(test)]
mod tests {
    mod inner {
        // @scenario c/x
        #[test]
        fn t() {}
    }
}
";
        assert_eq!(markers(rs, "src/a.rs")[0].scope, ["tests", "inner"]);
    }

    use crate::report::{Format, Status, TestCase};

    fn case(name: &str, status: Status, file: Option<&str>) -> TestCase {
        TestCase {
            name: name.into(),
            status,
            file: file.map(str::to_string),
            suite: None,
            message: None,
        }
    }

    /// Coverage of `scen` by cases all read from one report format.
    fn cover(
        scen: &[Scenario],
        marks: &[Marker],
        format: Format,
        cases: &[TestCase],
    ) -> Vec<ScenarioStatus> {
        let tested: Vec<Tested<'_>> = cases
            .iter()
            .map(|case| Tested {
                format: Some(format),
                case,
            })
            .collect();
        coverage(scen, marks, &tested)
    }

    fn scenario(id: &str) -> Scenario {
        Scenario {
            change: "c".into(),
            id: id.into(),
            title: id.into(),
            requirement: String::new(),
            file: "spec.md".into(),
            line: 1,
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
            "#[cfg(test)]\nmod tests {\n    // @scenario checkout/refund-raises-on-gateway-error\n    #[test]\n    fn refund_errors() {}\n}\n",
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
        let cov = cover(&scen, &marks, Format::Libtest, &cases);
        assert_eq!(cov[0].status, Coverage::Covered);
        assert_eq!(cov[1].status, Coverage::Failing);
        assert_eq!(cov[2].status, Coverage::Uncovered);
        assert!(cov[2].evidence[0].contains("@scenario checkout/member-gets-discount"));
    }

    #[test]
    fn go_subtests_belong_to_their_test_and_skips_cover_nothing() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let cases = vec![
            case("TestGuestPaysByCard/visa", Status::Passed, None),
            case("test_refund_raises_on_gateway_error", Status::Skipped, None),
        ];
        let cov = cover(&scen, &[], Format::GoJson, &cases);
        assert_eq!(cov[0].status, Coverage::Covered);
        assert_eq!(cov[1].status, Coverage::Uncovered);
        // A marker on the parent: a failing subtest fails the scenario.
        let marks = markers(
            "// @scenario c/visa\nfunc TestCharge(t *testing.T) {}\n",
            "pay_test.go",
        );
        let cases = vec![
            case("TestCharge/visa", Status::Passed, None),
            case("TestCharge/amex", Status::Failed, None),
            case("TestChargeBack", Status::Passed, None),
        ];
        let cov = cover(&[scenario("visa")], &marks, Format::GoJson, &cases);
        assert_eq!(cov[0].status, Coverage::Failing);
        assert_eq!(cov[0].evidence, ["failing test: TestCharge/amex"]);
    }

    #[test]
    fn a_marked_test_that_no_result_names_covers_nothing() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        // A command that failed before naming any case (exit 127): nothing is covered.
        let marks = markers(
            "// @scenario checkout/guest-pays-by-card\n#[test]\nfn pays() {}\n",
            "tests/checkout.rs",
        );
        let cov = cover(&scen[..1], &marks, Format::Libtest, &[]);
        assert_eq!(cov[0].status, Coverage::Uncovered);
        assert!(
            cov[0].evidence[0].contains("cannot be seen to pass"),
            "{:?}",
            cov[0].evidence
        );
        // A marker on no test Forge can identify covers nothing either.
        let marks = markers(
            "# @scenario checkout/guest-pays-by-card\necho 'ok 1 - visa'\n",
            "t/run.sh",
        );
        let cases = vec![case("visa", Status::Passed, None)];
        let cov = cover(&scen[..1], &marks, Format::Tap, &cases);
        assert_eq!(cov[0].status, Coverage::Uncovered);
        assert!(
            cov[0].evidence[0].contains("not on a test Forge can identify"),
            "{:?}",
            cov[0].evidence
        );
    }

    #[test]
    fn names_match_on_whole_words_and_marked_tests_must_run() {
        let scen = vec![scenario("card")];
        let cases = vec![case("unrelated_discard_thing", Status::Passed, None)];
        assert_eq!(
            cover(&scen, &[], Format::Libtest, &cases)[0].status,
            Coverage::Uncovered
        );
        let cases = vec![case("tests::pays_by_card", Status::Passed, None)];
        assert_eq!(
            cover(&scen, &[], Format::Libtest, &cases)[0].status,
            Coverage::Covered
        );
        assert_eq!(
            coverage::tokens("TestGuestPaysByCard/visa"),
            ["test", "guest", "pays", "by", "card", "visa"]
        );
        // A marker on something that never ran as a test covers nothing.
        let marks = markers(
            "// @scenario c/card\nfn not_a_test_at_all() {}\n",
            "src/lib.rs",
        );
        let cases = vec![case("tests::other", Status::Passed, Some("src/lib.rs"))];
        let cov = cover(&scen, &marks, Format::Libtest, &cases);
        assert_eq!(cov[0].status, Coverage::Uncovered);
        assert!(
            cov[0].evidence[0].contains("did not run"),
            "{:?}",
            cov[0].evidence
        );
    }

    #[test]
    fn junit_cases_tie_by_each_producers_naming() {
        let scen = vec![scenario("zebra")];
        let junit = |name: &str, classname: &str| TestCase {
            name: if name == classname {
                name.to_string()
            } else {
                format!("{classname}.{name}")
            },
            status: Status::Passed,
            file: None,
            suite: Some(classname.to_string()),
            message: None,
        };
        let py = markers(
            "class TestA:\n    # @scenario c/zebra\n    def test_b(self):\n        pass\n",
            "tests/test_x.py",
        );
        for (case, want) in [
            (junit("test_b[1]", "tests.test_x.TestA"), Coverage::Covered),
            (junit("test_b", "test_x.TestA"), Coverage::Covered),
            (junit("test_b", "tests.test_x.TestB"), Coverage::Uncovered),
            (junit("test_b", "tests.test_y.TestA"), Coverage::Uncovered),
        ] {
            let got = cover(&scen, &py, Format::Junit, std::slice::from_ref(&case))[0].status;
            assert_eq!(got, want, "{case:?}");
        }
        let js = markers(
            "describe('cart', () => {\n  // @scenario c/zebra\n  it('adds', () => {});\n});\n",
            "fail/cart.test.js",
        );
        for (case, want) in [
            (junit("cart > adds", "fail/cart.test.js"), Coverage::Covered),
            (
                junit("cart > adds", "other/cart.test.js"),
                Coverage::Uncovered,
            ),
            (junit("cart adds", "cart adds"), Coverage::Covered),
            (junit("cart adds up", "cart adds up"), Coverage::Uncovered),
        ] {
            let got = cover(&scen, &js, Format::Junit, std::slice::from_ref(&case))[0].status;
            assert_eq!(got, want, "{case:?}");
        }
    }

    #[test]
    fn marker_for_another_change_does_not_cover() {
        let scen = parse_spec(SPEC, "checkout", "spec.md");
        let marks = markers(
            "// @scenario billing/guest-pays-by-card\nfn t() {}\n",
            "a.rs",
        );
        let cases = vec![case("t", Status::Passed, Some("a.rs"))];
        assert_eq!(
            cover(&scen[..1], &marks, Format::Libtest, &cases)[0].status,
            Coverage::Uncovered
        );
    }
}
