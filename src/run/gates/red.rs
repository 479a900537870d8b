//! Red: the one failing case, the verifier's answer checked against what Forge saw, and the
//! evidence any check's report must carry before it can pass.

use serde::Serialize;
use serde_json::Value;

use crate::report::compile::Diagnostic;
use crate::report::{Report, Status};

#[derive(Debug, Clone, PartialEq)]
pub enum RedOutcome {
    /// Exactly one failing test case: a red.
    One {
        case: String,
        message: Option<String>,
    },
    /// The command does not compile, and only because red's test names what does not exist
    /// yet: the red of new API in a compiled language. `case` is the one test red added; no
    /// case ran, so the cases that passed before are checked again only at green.
    NewApi { case: String, message: String },
    /// The command passes: the already-green path (coverage review).
    AlreadyGreen,
    /// Not a red: infrastructure, syntax, import or setup; several failures; or no case found.
    NotRed(String),
}

/// Classifies the focused command's run after red: exit status and the parsed report, and
/// what Forge read of a compile that failed (`None` where nothing was read).
pub fn classify_red(
    exit_ok: bool,
    timed_out: bool,
    report: &Report,
    report_error: Option<&str>,
    unbuilt: Option<&Unbuilt>,
) -> RedOutcome {
    if timed_out {
        return RedOutcome::NotRed("the focused command timed out".into());
    }
    if let Some(u) = unbuilt
        && !exit_ok
        && report.counts().failed == 0
        && !u.diagnostics.is_empty()
    {
        return match new_api(u) {
            Ok((case, message)) => RedOutcome::NewApi { case, message },
            Err(why) => RedOutcome::NotRed(why),
        };
    }
    if let Some(e) = &report.infra_error {
        return RedOutcome::NotRed(format!(
            "infrastructure, syntax, import or setup failure (not a red): {}",
            crate::text::clip(e, 300)
        ));
    }
    if let Some(e) = &report.incomplete {
        return RedOutcome::NotRed(format!("the test report is incomplete: {e}"));
    }
    let failing: Vec<_> = report.failing().collect();
    let failed = report.counts().failed;
    match (failed, exit_ok) {
        (0, true) => RedOutcome::AlreadyGreen,
        (0, false) => RedOutcome::NotRed(match report_error {
            Some(e) => format!("the focused command failed and no failing test case could be identified: {e}"),
            None => "the focused command failed but no failing test case could be identified (infrastructure, syntax, import or setup?)".into(),
        }),
        (1, _) if failing.len() == 1 => RedOutcome::One {
            case: failing[0].name.clone(),
            message: failing[0].message.clone(),
        },
        (1, _) => RedOutcome::NotRed(
            "one test failed but the report does not name it; use a report format that names cases".into(),
        ),
        (n, _) => RedOutcome::NotRed(format!(
            "{n} test cases fail ({}); red must add exactly one failing test",
            failing.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A focused command that did not compile, as Forge saw it after red.
#[derive(Debug, Clone, Copy)]
pub struct Unbuilt<'a> {
    /// Every error the compiler printed ([`crate::report::compile::diagnostics`]).
    pub diagnostics: &'a [Diagnostic],
    /// The files red changed, repository-relative.
    pub red_files: &'a [String],
    /// The tests red added, by name, per file; `None` for a file whose language Forge cannot
    /// read tests from ([`crate::report::compile::tests_added`]).
    pub added: &'a [(String, Option<Vec<String>>)],
}

const NOT_A_RED: &str = "infrastructure, syntax, import or setup failure (not a red)";

/// The red of new API: in a compiled language a test of a function that does not exist yet
/// cannot fail any other way than by not compiling, and red may not add a stub. It is the one
/// red failure when every error the compiler printed lies in a file red changed and says only
/// that a name does not exist (`E0425`, `undefined: X`, `cannot find symbol`, `TS2305`…), and
/// red added exactly one test, which is the case: green must make it compile and then pass by
/// that name. Any other compile error (syntax, types, a file red did not touch, a crate the
/// project does not depend on) stays infrastructure. `Ok((case, message))`, or why not.
pub fn new_api(u: &Unbuilt) -> Result<(String, String), String> {
    for d in u.diagnostics {
        let at = match (&d.file, d.line) {
            (Some(f), Some(l)) => format!("{f}:{l}"),
            (Some(f), None) => f.clone(),
            (None, _) => {
                return Err(format!(
                    "{NOT_A_RED}: the compiler's error `{}` points at no file",
                    crate::text::clip(&d.header, 200)
                ));
            }
        };
        let file = d.file.as_deref().unwrap_or_default();
        if !u
            .red_files
            .iter()
            .any(|r| crate::report::same_path(file, r))
        {
            return Err(format!(
                "{NOT_A_RED}: the compile error `{}` is in {at}, a file red did not change",
                crate::text::clip(&d.header, 200)
            ));
        }
        if !d.missing {
            return Err(format!(
                "{NOT_A_RED}: the compile error `{}` at {at} is not a name that does not exist yet (only a test that calls what does not exist yet may fail to compile)",
                crate::text::clip(&d.header, 200)
            ));
        }
    }
    let unknown: Vec<&str> = u
        .added
        .iter()
        .filter(|(_, a)| a.is_none())
        .map(|(f, _)| f.as_str())
        .collect();
    let added: Vec<&str> = u
        .added
        .iter()
        .filter_map(|(_, a)| a.as_ref())
        .flatten()
        .map(String::as_str)
        .collect();
    match added.as_slice() {
        [one] => {
            let headers: Vec<&str> = u.diagnostics.iter().map(|d| d.header.as_str()).collect();
            Ok((
                one.to_string(),
                crate::text::clip(
                    &format!("does not compile yet: {}", headers.join("; ")),
                    600,
                ),
            ))
        }
        [] => Err(format!(
            "the test does not compile because it names what does not exist yet, but Forge finds no test red added{}: it cannot name the failing case",
            if unknown.is_empty() {
                String::new()
            } else {
                format!(
                    " (it cannot read tests from {}: Rust, Go, Java, Kotlin and TypeScript only)",
                    unknown.join(", ")
                )
            }
        )),
        many => Err(format!(
            "{} tests added ({}) and none compiles: a red that does not compile must add exactly one test",
            many.len(),
            many.join(", ")
        )),
    }
}

/// What a check's report must show before the check can pass: no evidence is no pass.
#[derive(Debug, Default, Clone)]
pub struct Expect<'a> {
    /// The report must name at least one case (a test command's; not a linter's).
    pub cases: bool,
    /// This case (the verified red one) must be reported passing, by name.
    pub passing: Option<&'a str>,
    /// Every case that passed at the pre-red baseline must be reported again, and passing —
    /// not skipped, not missing (at red, `except` the new failing case).
    pub baseline: &'a [String],
    pub except: Option<&'a str>,
}

/// The problems with a report as evidence, empty when it is enough. `detected`: whether a
/// report format was recognised at all.
pub fn case_evidence(report: &Report, detected: bool, want: &Expect) -> Vec<String> {
    let mut problems = Vec::new();
    if want.cases && report.cases.is_empty() {
        let c = report.counts();
        problems.push(if !detected {
            "no test case in the report: the output has no test report Forge recognises (nothing shows a test ran)".to_string()
        } else if c.passed + c.failed + c.skipped > 0 {
            "the report counts cases but names none: Forge cannot see which tests ran (pytest: -rA or -v)".to_string()
        } else {
            "no test case in the report: nothing shows a test ran".to_string()
        });
        return problems;
    }
    if let Some(name) = want.passing {
        match case_status(report, name) {
            Some(Status::Passed) => {}
            Some(s) => problems.push(format!(
                "the verified red case `{name}` is reported {}, not passing",
                format!("{s:?}").to_lowercase()
            )),
            None => problems.push(format!(
                "the verified red case `{name}` is not among the reported cases"
            )),
        }
    }
    let mut lost: Vec<String> = Vec::new();
    for b in want.baseline {
        if Some(b.as_str()) == want.except {
            continue;
        }
        let st: Vec<Status> = report
            .cases
            .iter()
            .filter(|c| c.name == *b)
            .map(|c| c.status)
            .collect();
        if st.is_empty() {
            lost.push(format!("{b} (missing)"));
        } else if !st.contains(&Status::Passed) {
            lost.push(format!("{b} ({})", format!("{:?}", st[0]).to_lowercase()));
        }
    }
    if !lost.is_empty() {
        problems.push(format!(
            "{} case(s) that passed before red are no longer reported passing: {}",
            lost.len(),
            lost.join(", ")
        ));
    }
    problems
}

/// What the run's base (its starting commit: the person's code and tests) reported for one
/// verify command: the measure that command is held to with the tests as they were before the
/// run, which are the base's tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BaseCases {
    /// Whether the base's run is evidence at all: it exited 0, in time, with a report Forge
    /// recognised, complete and without an infrastructure error.
    pub clean: bool,
    /// The cases it reported passing, named or only counted.
    pub passed: u64,
}

impl BaseCases {
    pub fn of(report: &Report, exit_ok: bool, report_error: Option<&str>) -> BaseCases {
        BaseCases {
            clean: exit_ok
                && report.format.is_some()
                && report.infra_error.is_none()
                && report.incomplete.is_none()
                && report_error.is_none(),
            passed: report.counts().passed,
        }
    }
}

/// The problem with a passing check's report on the tests as they were before the run, held
/// to what the base reported for the same command; `None` when it is enough. `absolute` is
/// `forge verify`'s own no-evidence reason for the report, if it has one.
///
/// Those tests are the base's, so the base is the measure, not "at least one case": a project
/// with no test yet reports none there, and its first slice must be able to land (issue 29).
/// What the rule exists for stays: code that hides the suite as it was shows fewer passing
/// cases than the base did, or none, or no report Forge recognises where the base's was
/// recognised. A base that did not run cleanly is no measure: then `absolute` decides.
pub fn against_base(report: &Report, absolute: Option<String>, base: &BaseCases) -> Option<String> {
    if !base.clean {
        return absolute;
    }
    let passed = report.counts().passed;
    if report.format.is_none() {
        return Some(
            "no test runner's output was recognised, though it was on the run's base".into(),
        );
    }
    (passed < base.passed).then(|| {
        format!(
            "{passed} passing case(s), fewer than the {} it reports on the run's base",
            base.passed
        )
    })
}

/// The coverage reviewer's answer for an already-green test.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    pub valid: bool,
    pub high_quality: bool,
    pub useful: bool,
    pub reason: String,
}

pub fn read_review(v: &Value) -> Result<Review, String> {
    let b = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_bool())
            .ok_or_else(|| format!("`{k}` must be true or false"))
    };
    let reason = v
        .get("reason")
        .and_then(|x| x.as_str())
        .filter(|s| !s.trim().is_empty())
        .ok_or("`reason` must be a non-empty string")?;
    Ok(Review {
        valid: b("valid")?,
        high_quality: b("high_quality")?,
        useful: b("useful")?,
        reason: reason.to_string(),
    })
}

/// The evidence the verifier's answer is checked against: what Forge saw itself.
pub struct RedEvidence<'a> {
    pub command: &'a str,
    pub failing_case: &'a str,
    /// The focused command's output (ANSI stripped).
    pub output: &'a str,
}

/// Checks the verifier's answer field by field; the problems, empty when it passes.
pub fn check_verifier(v: &Value, seen: &RedEvidence) -> Vec<String> {
    let mut problems = Vec::new();
    if !v.is_object() {
        return vec!["the answer is not a JSON object".into()];
    }
    let s = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(str::trim)
            .filter(|x| !x.is_empty())
    };
    match v.get("verdict").and_then(|x| x.as_str()) {
        Some("intended") => {}
        Some("not-intended") => problems.push(format!(
            "the verifier says the failure is not the intended missing behaviour{}",
            s("expected_behavior")
                .map(|e| format!(" (expected: {e})"))
                .unwrap_or_default()
        )),
        Some(other) => problems.push(format!(
            "`verdict` is `{other}`; it must be `intended` or `not-intended`"
        )),
        None => problems.push("`verdict` is missing".into()),
    }
    match s("command") {
        None => problems.push("`command` is missing: cite the command that was run".into()),
        Some(c)
            if squash(c) != squash(seen.command) && !squash(c).contains(&squash(seen.command)) =>
        {
            problems.push(format!(
                "`command` cites `{c}`, but the focused command is `{}`",
                seen.command
            ))
        }
        Some(_) => {}
    }
    match s("failing_case") {
        None => problems.push("`failing_case` is missing: cite the failing test case".into()),
        Some(c) if !same_case(c, seen.failing_case) => problems.push(format!(
            "`failing_case` cites `{c}`, but the case that failed is `{}`",
            seen.failing_case
        )),
        Some(_) => {}
    }
    match s("error_excerpt") {
        None => problems.push("`error_excerpt` is missing: quote the error from the output".into()),
        Some(e) => {
            let out = squash(seen.output);
            let quoted = e
                .lines()
                .map(squash)
                .filter(|l| l.len() >= 4)
                .any(|l| out.contains(&l));
            if !quoted {
                problems.push(format!(
                    "`error_excerpt` ({}) does not appear in the focused command's output; quote it",
                    crate::text::clip(e, 120)
                ));
            }
        }
    }
    if s("expected_behavior").is_none() {
        problems.push("`expected_behavior` is missing: say what behaviour the test expects".into());
    }
    match v.get("rejected_causes").and_then(|x| x.as_array()) {
        Some(a) if !a.is_empty() && a.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty())) => {}
        _ => problems.push(
            "`rejected_causes` must list why other causes (setup, typo, wrong import…) were rejected".into(),
        ),
    }
    problems
}

/// Whitespace collapsed, for comparing quoted text and commands.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a cited test name names the case that failed: the same identity, exactly — file and
/// full name as Forge's report names the case (a pytest node id whole, a TAP path with its
/// groups, a libtest module path), never a suffix or a substring: a decoy case whose name ends
/// with the verified one is another case (issue 31). Only Gradle's JUnit `()` after a method name
/// is the same identity (`kebabJoinsWords()` for the source's `kebabJoinsWords`).
pub fn same_case(cited: &str, actual: &str) -> bool {
    let bare = |s: &str| {
        let s = s.trim();
        s.strip_suffix("()").unwrap_or(s).to_string()
    };
    bare(cited) == bare(actual)
}

/// How the case named `case` fared in one report, by [`same_case`]; `None` when no case of that
/// name ran. The same name twice is two cases (a tape test's assertions, a parametrized test
/// named alike): it passes only when every one of them passes.
pub fn case_status(report: &Report, case: &str) -> Option<Status> {
    let mut found = report.cases.iter().filter(|c| same_case(case, &c.name));
    let first = found.next()?.status;
    Some(found.fold(first, |s, c| {
        if c.status == Status::Passed {
            s
        } else {
            c.status
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TestCase;
    use serde_json::json;

    fn report_with(cases: &[(&str, Status)]) -> Report {
        report(cases)
    }

    fn report(cases: &[(&str, Status)]) -> Report {
        Report {
            cases: cases
                .iter()
                .map(|(n, s)| TestCase {
                    name: n.to_string(),
                    status: *s,
                    file: None,
                    suite: None,
                    message: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn no_evidence_is_no_pass() {
        use Status::*;
        let base = vec!["a".to_string(), "b".to_string()];
        let want = Expect {
            cases: true,
            passing: Some("new"),
            baseline: &base,
            except: None,
        };
        let good = report(&[("a", Passed), ("b", Passed), ("new", Passed)]);
        assert!(case_evidence(&good, true, &want).is_empty());
        assert!(case_evidence(&report(&[]), true, &want)[0].contains("no test case"));
        assert!(case_evidence(&report(&[]), false, &want)[0].contains("recognises"));
        let p = case_evidence(
            &report(&[("a", Passed), ("b", Skipped), ("new", Passed)]),
            true,
            &want,
        );
        assert!(p[0].contains("b (skipped)"), "{p:?}");
        let p = case_evidence(&report(&[("a", Passed), ("new", Passed)]), true, &want);
        assert!(p[0].contains("b (missing)"), "{p:?}");
        let p = case_evidence(
            &report(&[("a", Passed), ("b", Passed), ("new", Skipped)]),
            true,
            &want,
        );
        assert!(p[0].contains("reported skipped"), "{p:?}");
        let p = case_evidence(&report(&[("a", Passed), ("b", Passed)]), true, &want);
        assert!(p[0].contains("not among"), "{p:?}");
        // At red, the new failing case is the one exception.
        let red = Expect {
            cases: true,
            passing: None,
            baseline: &base,
            except: Some("b"),
        };
        assert!(case_evidence(&report(&[("a", Passed), ("b", Failed)]), true, &red).is_empty());
    }

    /// Issue 29: the tests as they were before the run are the base's; a base with no test
    /// yet is the measure, not "at least one case".
    #[test]
    fn before_the_run_the_base_is_the_measure() {
        use Status::*;
        let tap = |cases: &[(&str, Status)]| Report {
            format: Some(crate::report::Format::Tap),
            ..report(cases)
        };
        let none = "no test case in the report".to_string();
        // A project with no test yet: its runner, configured, reports none on the base.
        let empty = BaseCases::of(&tap(&[]), true, None);
        assert_eq!(
            empty,
            BaseCases {
                clean: true,
                passed: 0
            }
        );
        assert_eq!(against_base(&tap(&[]), Some(none.clone()), &empty), None);
        // Where the base had cases, fewer (or none) still fail.
        let one = BaseCases::of(&tap(&[("guest pays by card", Passed)]), true, None);
        let p = against_base(&tap(&[]), Some(none.clone()), &one).unwrap();
        assert_eq!(
            p,
            "0 passing case(s), fewer than the 1 it reports on the run's base"
        );
        let two = BaseCases::of(&tap(&[("a", Passed), ("b", Passed)]), true, None);
        assert!(against_base(&tap(&[("a", Passed), ("b", Skipped)]), None, &two).is_some());
        assert!(against_base(&tap(&[("a", Passed)]), None, &two).is_some());
        assert_eq!(
            against_base(&tap(&[("a", Passed), ("b", Passed)]), None, &two),
            None
        );
        // Unnamed cases count too (pytest's summary line).
        let mut counted = tap(&[]);
        counted.unnamed.passed = 2;
        assert_eq!(against_base(&counted, None, &two), None);
        // Output no runner's report is recognised in, where the base's was, is no evidence.
        assert!(against_base(&report(&[]), Some(none.clone()), &empty).is_some());
        // A base that did not run cleanly is no measure: `forge verify`'s own rule decides.
        for broken in [
            BaseCases::of(&tap(&[]), false, None),
            BaseCases::of(&report(&[]), true, None),
            BaseCases::of(&tap(&[]), true, Some("no tap results found in the output")),
        ] {
            assert!(!broken.clean);
            assert_eq!(
                against_base(&tap(&[]), Some(none.clone()), &broken),
                Some(none.clone())
            );
            assert_eq!(against_base(&tap(&[("a", Passed)]), None, &broken), None);
        }
        let mut infra = tap(&[]);
        infra.infra_error = Some("ImportError".into());
        assert!(!BaseCases::of(&infra, true, None).clean);
    }

    #[test]
    fn single_red_failure_tells_one_failure_from_everything_else() {
        use Status::*;
        let one = report(&[("adds", Passed), ("member discount", Failed)]);
        assert!(
            matches!(classify_red(false, false, &one, None, None), RedOutcome::One { case, .. } if case == "member discount")
        );
        let two = report(&[("a", Failed), ("b", Failed)]);
        assert!(
            matches!(classify_red(false, false, &two, None, None), RedOutcome::NotRed(m) if m.contains("2 test cases fail"))
        );
        let green = report(&[("a", Passed)]);
        assert_eq!(
            classify_red(true, false, &green, None, None),
            RedOutcome::AlreadyGreen
        );
        let mut infra = report(&[]);
        infra.infra_error = Some("error[E0432]: unresolved import `crate::cart`".into());
        assert!(
            matches!(classify_red(false, false, &infra, None, None), RedOutcome::NotRed(m) if m.contains("infrastructure"))
        );
        assert!(
            matches!(classify_red(false, false, &report(&[]), None, None), RedOutcome::NotRed(m) if m.contains("no failing test case"))
        );
        assert!(
            matches!(classify_red(false, true, &one, None, None), RedOutcome::NotRed(m) if m.contains("timed out"))
        );
    }

    /// Issue 29: a test of a new function in a compiled language fails by not compiling; that
    /// is the red when every error is a missing name in red's file and red added one test.
    /// Real cargo 1.95 and go outputs (tests/fixtures/reports/).
    #[test]
    fn a_test_of_new_api_that_does_not_compile_is_the_one_red() {
        use crate::report::compile::diagnostics;
        use crate::report::{Format, parse_bytes};
        let fixture = |rel: &str| {
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/reports")
                    .join(rel),
            )
            .unwrap()
        };
        let red = vec!["tests/new_fn.rs".to_string()];
        let one = vec![(
            "tests/new_fn.rs".to_string(),
            Some(vec!["kebab_joins_words".to_string()]),
        )];
        let judge = |rel: &str, red: &[String], added: &[(String, Option<Vec<String>>)]| {
            let out = fixture(rel);
            let report = parse_bytes(out.as_bytes(), Format::Auto).unwrap();
            let d = diagnostics(&out);
            let u = Unbuilt {
                diagnostics: &d,
                red_files: red,
                added,
            };
            classify_red(false, false, &report, None, Some(&u))
        };
        for f in ["compile/cargo-new-fn.txt", "compile/cargo-new-api.txt"] {
            match judge(f, &red, &one) {
                RedOutcome::NewApi { case, message } => {
                    assert_eq!(case, "kebab_joins_words");
                    assert!(
                        message.starts_with("does not compile yet: error[E04"),
                        "{message}"
                    );
                }
                other => panic!("{f}: {other:?}"),
            }
        }
        let not_red = |o: RedOutcome, want: &str| match o {
            RedOutcome::NotRed(why) => assert!(why.contains(want), "{why}"),
            other => panic!("{other:?}"),
        };
        let infra = "infrastructure, syntax, import or setup failure (not a red)";
        // Each neighbour stays infrastructure.
        for f in [
            "compile/cargo-syntax-error.txt",
            "compile/cargo-missing-and-type-error.txt",
            "compile/cargo-unlinked-crate.txt",
        ] {
            not_red(judge(f, &red, &one), infra);
            not_red(
                judge(f, &red, &one),
                "is not a name that does not exist yet",
            );
        }
        // A missing name in a file red did not change.
        let elsewhere = vec!["tests/other.rs".to_string()];
        not_red(
            judge("compile/cargo-new-fn.txt", &elsewhere, &one),
            "a file red did not change",
        );
        not_red(
            judge("libtest/compile-error.txt", &red, &one),
            "src/lib.rs:17, a file red did not change",
        );
        // Red must add exactly one test, which Forge can name.
        let two = vec![(
            "tests/new_fn.rs".to_string(),
            Some(vec!["a".to_string(), "b".to_string()]),
        )];
        not_red(
            judge("compile/cargo-new-fn.txt", &red, &two),
            "2 tests added (a, b)",
        );
        not_red(
            judge("compile/cargo-new-fn.txt", &red, &[]),
            "finds no test red added",
        );
        let unknown = vec![("tests/new_fn.rs".to_string(), None)];
        not_red(
            judge("compile/cargo-new-fn.txt", &red, &unknown),
            "cannot read tests from tests/new_fn.rs",
        );
        // Go: the package with red's test does not build; another package's tests pass.
        let go_red = vec!["checkout_test.go".to_string()];
        let go_one = vec![(
            "checkout_test.go".to_string(),
            Some(vec!["TestChargeCard".to_string()]),
        )];
        for f in [
            "go-json/build-failure.jsonl",
            "go-json/go1.19-build-failure.jsonl",
        ] {
            assert!(
                matches!(judge(f, &go_red, &go_one), RedOutcome::NewApi { case, .. } if case == "TestChargeCard"),
                "{f}"
            );
        }
        // Without what Forge read of the compile, or when a case failed, the old rules hold.
        let out = fixture("compile/cargo-new-fn.txt");
        let report = parse_bytes(out.as_bytes(), Format::Auto).unwrap();
        not_red(classify_red(false, false, &report, None, None), infra);
        let d = diagnostics(&out);
        let u = Unbuilt {
            diagnostics: &d,
            red_files: &red,
            added: &one,
        };
        let failing = report_with(&[("adds", Status::Failed)]);
        assert!(matches!(
            classify_red(false, false, &failing, None, Some(&u)),
            RedOutcome::One { .. }
        ));
        assert!(matches!(
            classify_red(false, true, &report, None, Some(&u)),
            RedOutcome::NotRed(_)
        ));
    }

    #[test]
    fn the_verifier_is_checked_field_by_field_against_what_failed() {
        let seen = RedEvidence {
            command: "sh tests/run.sh",
            failing_case: "member gets discount",
            output: "ok 1 - guest pays\nnot ok 2 - member gets discount\n  message: 'expected 90, got 95'\n",
        };
        let good = json!({"verdict": "intended", "command": "sh tests/run.sh",
            "failing_case": "member gets discount", "error_excerpt": "expected 90, got 95",
            "expected_behavior": "members pay 10% less", "rejected_causes": ["not a setup error: other tests pass"]});
        assert!(check_verifier(&good, &seen).is_empty());
        let mut wrong_case = good.clone();
        wrong_case["failing_case"] = json!("guest pays");
        let p = check_verifier(&wrong_case, &seen);
        assert!(
            p[0].contains("but the case that failed is `member gets discount`"),
            "{p:?}"
        );
        let mut made_up = good.clone();
        made_up["error_excerpt"] = json!("assertion failed: total == 90");
        assert!(check_verifier(&made_up, &seen)[0].contains("does not appear"));
        let mut no = good.clone();
        no["verdict"] = json!("not-intended");
        assert!(check_verifier(&no, &seen)[0].contains("not the intended"));
        let thin = json!({"verdict": "intended"});
        assert_eq!(check_verifier(&thin, &seen).len(), 5);
        let mut cmd = good.clone();
        cmd["command"] = json!("cargo test");
        assert!(check_verifier(&cmd, &seen)[0].contains("focused command is"));
    }

    /// Issue 31: identity, not a suffix: a decoy case whose name ends with the verified one is
    /// another case, whatever boundary the suffix starts at.
    #[test]
    fn case_names_match_exactly() {
        assert!(same_case("tests::adds", "tests::adds"));
        assert!(same_case(" tests::adds ", "tests::adds"));
        assert!(!same_case("adds", "tests::adds"));
        assert!(!same_case("tests::adds", "adds"));
        assert!(!same_case("test_adds", "tests/test_cart.py::test_adds"));
        assert!(!same_case(
            "tests/test_cart.py::test_adds",
            "tests/x/tests/test_cart.py::test_adds"
        ));
        for decoy in [
            "decoy:adds",
            "decoy.adds",
            "decoy/adds",
            "decoy adds",
            "decoy > adds",
        ] {
            assert!(!same_case("adds", decoy), "{decoy}");
        }
        assert!(!same_case("adds", "tests::subtracts"));
        assert!(!same_case("dds", "tests::adds"));
        // Gradle's JUnit XML names `kebabJoinsWords()`; the source declares `kebabJoinsWords`.
        assert!(same_case("kebabJoinsWords", "kebabJoinsWords()"));
        assert!(!same_case("kebabJoinsWords", "CartTest.kebabJoinsWords()"));
    }

    #[test]
    fn the_verified_case_passes_only_by_its_own_name_and_every_twin_with_it() {
        use Status::*;
        let want = Expect {
            cases: true,
            passing: Some("member discount > should be strictly equal"),
            baseline: &[],
            except: None,
        };
        let decoy = report(&[
            ("old member discount > should be strictly equal", Passed),
            ("member discount > should be strictly equal", Failed),
        ]);
        let p = case_evidence(&decoy, true, &want);
        assert!(p[0].contains("reported failed"), "{p:?}");
        let only_decoy = report(&[("x > member discount > should be strictly equal", Passed)]);
        let p = case_evidence(&only_decoy, true, &want);
        assert!(p[0].contains("not among"), "{p:?}");
        // Two assertions of one tape test share a name: both must pass.
        let twins = report(&[
            ("member discount > should be strictly equal", Passed),
            ("member discount > should be strictly equal", Failed),
        ]);
        assert!(!case_evidence(&twins, true, &want).is_empty());
        let both = report(&[
            ("member discount > should be strictly equal", Passed),
            ("member discount > should be strictly equal", Passed),
        ]);
        assert!(case_evidence(&both, true, &want).is_empty());
    }
}
