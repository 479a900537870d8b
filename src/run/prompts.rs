//! The prompt each role gets: what it must do, the slice, the rules the gates will check, and
//! the feedback of its last attempt. Plain Markdown, so any agent can read it from
//! `$FORGE_PROMPT_FILE`. The gates, not the prompts, enforce the rules: a prompt only saves an
//! honest agent a wasted attempt.

use std::fmt::Write as _;

use super::Run;
use super::state::Slice;
use crate::verify::CommandResult;

fn feedback_section(o: &mut String, feedback: Option<&str>) {
    if let Some(f) = feedback {
        let _ = write!(
            o,
            "\n## Your last attempt was rejected\n\nForge's gates rejected it for this reason (any disallowed change was reverted):\n\n```\n{}\n```\n",
            crate::text::clip(f, 6000)
        );
    }
}

fn slice_section(o: &mut String, s: &Slice) {
    let _ = write!(
        o,
        "## Slice `{}`: {}\n\n- expected red failure: {}\n- test areas (red may change only these): {}\n- code areas (green may change only these): {}\n- focused command: `{}`\n",
        s.id,
        s.title,
        s.expected_red_failure,
        s.test_areas.join(", "),
        s.code_areas.join(", "),
        s.focused_command
    );
    if !s.related_checks.is_empty() {
        let _ = writeln!(o, "- related checks: `{}`", s.related_checks.join("`, `"));
    }
}

pub(super) fn planner(run: &Run, tracked: &[String], feedback: Option<&str>) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "# Forge run `{}` — role: planner (read-only)\n\nGoal: {}\n\nPlan this goal as an ordered list of small TDD slices. Each slice will get one failing test (red), then the code that makes it pass (green). Do not change any file of the repository: planning is read-only, and Forge reverts whatever you change.\n\nWrite your plan as JSON to `$FORGE_OUTPUT`:\n\n```json\n{{\"slices\": [{{\"id\": \"member-discount\", \"title\": \"members get 10% off\", \"depends_on\": [],\n  \"test_areas\": [\"tests/\"], \"code_areas\": [\"src/\"],\n  \"focused_command\": \"cargo test --test cart\", \"report\": \"auto\",\n  \"related_checks\": [\"cargo clippy -- -D warnings\"],\n  \"expected_red_failure\": \"member total is 95, expected 90\", \"milestone\": false}}]}}\n```\n\nRules the planning-output gate checks: ids are lowercase words joined by `-` and unique; `depends_on` names only earlier slices; `test_areas` and `code_areas` are repository-relative globs (`tests/`, `src/**/*.rs`), never the whole repository, and no file may be in both; `focused_command` runs the slice's tests in a few seconds; `report` is a test report format ({}).\n",
        run.meta.slug,
        run.meta.goal,
        crate::report::names()
    );
    let _ = write!(
        o,
        "\nConfigured full checks (run at milestones and at the end):\n"
    );
    for c in &run.config.verify.commands {
        let _ = writeln!(o, "- {}: `{}`", c.name, c.run);
    }
    let _ = write!(o, "\nTracked files ({}):\n", tracked.len());
    for f in tracked.iter().take(300) {
        let _ = writeln!(o, "- {f}");
    }
    if tracked.len() > 300 {
        let _ = writeln!(o, "- … and {} more", tracked.len() - 300);
    }
    feedback_section(&mut o, feedback);
    o
}

pub(super) fn red(run: &Run, s: &Slice, attempt: u32, feedback: Option<&str>) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "# Forge run `{}` — role: red (attempt {attempt} of {})\n\nGoal of the run: {}\n\n",
        run.meta.slug,
        super::RED_ATTEMPTS,
        run.meta.goal
    );
    slice_section(&mut o, s);
    let _ = write!(
        o,
        "\nWrite exactly one new test that fails because the behaviour is missing. Rules the gates check:\n\n1. Change only files in the test areas ({}). Production code changes are reverted.\n2. Do not commit; Forge makes the commits.\n3. After your change, `{}` must show exactly one failing test case — not a compile, import, syntax or setup error, and not two failures.\n4. A verifier then checks that the failure is the intended one: {}.\n\nIn a compiled language (Rust, Go, Java, Kotlin, TypeScript), a test that calls a function that does not exist yet is a valid red: it fails to compile, only in your test file. Then add exactly one test, do not write a stub in the code, and let every compile error be a name that does not exist yet (`cannot find function`, `undefined:`, `cannot find symbol`, `has no exported member`): any other compile error (syntax, types, an import of a library the project does not use) is rejected as infrastructure.\n",
        s.test_areas.join(", "),
        s.focused_command,
        s.expected_red_failure
    );
    feedback_section(&mut o, feedback);
    o
}

pub(super) fn verifier(
    run: &Run,
    s: &Slice,
    case: &str,
    res: &CommandResult,
    new_api: bool,
) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "# Forge run `{}` — role: verifier (read-only)\n\n",
        run.meta.slug
    );
    slice_section(&mut o, s);
    let _ = write!(
        o,
        "\nThe red agent added a test. `{}` now {}. Its output ends with:\n\n```\n{}\n```\n\nDecide whether this failure is the intended missing behaviour ({}) rather than a setup error, a typo or a wrong expectation. Do not change any file. Write your answer as JSON to `$FORGE_OUTPUT`:\n\n```json\n{{\"verdict\": \"intended\", \"command\": \"{}\", \"failing_case\": \"{case}\",\n \"error_excerpt\": \"<a line quoted from the output>\", \"expected_behavior\": \"<what the test expects>\",\n \"rejected_causes\": [\"<why it is not a setup error>\", \"<why it is not a typo>\"]}}\n```\n\nUse `\"verdict\": \"not-intended\"` if the failure is not the missing behaviour. Forge checks each field against what it saw: the command, the case that failed (cite `failing_case` exactly as written above, whole: a shorter or longer name is another case), and that the excerpt is quoted from the output.\n",
        s.focused_command,
        if new_api {
            format!(
                "does not compile, only because the one test red added, `{case}`, names what does not exist yet (in a compiled language, the red of a new function or type): cite `{case}` as the failing case and quote a compiler error line"
            )
        } else {
            format!("fails with exactly one failing case: `{case}`")
        },
        crate::text::clip(&super::checks::tail_lines(&res.tail, 60), 8000),
        s.expected_red_failure,
        s.focused_command.replace('"', "\\\"")
    );
    o
}

pub(super) fn reviewer(run: &Run, s: &Slice, tests: &[String], res: &CommandResult) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "# Forge run `{}` — role: coverage reviewer (read-only)\n\n",
        run.meta.slug
    );
    slice_section(&mut o, s);
    let _ = write!(
        o,
        "\nThe red agent's new test in {} already passes: `{}` succeeds, so the behaviour seems implemented. Judge the test: is it valid (it tests what it claims), high quality (clear, not brittle, not trivially true), and useful (it adds behaviour coverage the suite lacked)? Do not change any file. Write JSON to `$FORGE_OUTPUT`:\n\n```json\n{{\"valid\": true, \"high_quality\": true, \"useful\": true, \"reason\": \"<one paragraph>\"}}\n```\n\nIf all three are true, Forge commits the test alone as coverage and moves on; otherwise red tries again.\n\nOutput of the command:\n\n```\n{}\n```\n",
        tests.join(", "),
        s.focused_command,
        crate::text::clip(&super::checks::tail_lines(&res.tail, 40), 6000)
    );
    o
}

pub(super) fn green(run: &Run, s: &Slice, attempt: u32, feedback: Option<&str>) -> String {
    let p = s.progress();
    let mut o = String::new();
    let _ = write!(
        o,
        "# Forge run `{}` — role: green (attempt {attempt} of {})\n\nGoal of the run: {}\n\n",
        run.meta.slug,
        super::GREEN_ATTEMPTS,
        run.meta.goal
    );
    slice_section(&mut o, s);
    let _ = write!(
        o,
        "\nThe verified failing test is `{}` in {}. Make it pass by changing code (if it does not compile yet because it names what does not exist, add that). Rules the gates check:\n\n1. Change only files in the code areas ({}). Test, spec and fixture changes are reverted; the verified tests must stay byte-identical.\n2. Do not commit; Forge makes one commit with the test and your change.\n3. `{}`{} must pass.\n",
        p.failing_case.clone().unwrap_or_default(),
        p.red_tests.join(", "),
        s.code_areas.join(", "),
        s.focused_command,
        if s.related_checks.is_empty() {
            String::new()
        } else {
            format!(" and `{}`", s.related_checks.join("`, `"))
        }
    );
    if run.config.sandbox.mode != crate::sandbox::Mode::Off {
        let net = &run.config.sandbox.network;
        if net.loopback_only(crate::sandbox::Profile::Check) {
            o.push_str("4. The checks run without a network (only their own `127.0.0.1`): use what the project already has; a dependency that must be downloaded fails them.\n");
        } else if let crate::sandbox::config::Net::Allow(hosts) =
            net.of(crate::sandbox::Profile::Check)
        {
            let _ = writeln!(
                o,
                "4. The checks reach only their own `127.0.0.1` and, through a proxy, {} (`sandbox.network.check.allow`): a dependency from anywhere else fails them.",
                if hosts.is_empty() {
                    "no host".to_string()
                } else {
                    format!("`{}`", hosts.join("`, `"))
                }
            );
        }
    }
    feedback_section(&mut o, feedback);
    o
}
