//! Landing: the red checkpoint and the final ancestry of the slice's one commit.

use serde_json::json;

use super::{FINAL_ANCESTRY, GateResult, RED_CHECKPOINT, in_areas};

/// The red checkpoint: directly on START_SHA, holding exactly the verified test change.
pub fn red_checkpoint(
    start_sha: &str,
    parent: Option<&str>,
    files: &[String],
    red_tests: &[String],
    test_areas: &[String],
) -> GateResult {
    let mut reasons = Vec::new();
    if parent != Some(start_sha) {
        reasons.push(format!(
            "the checkpoint's parent is {}, not START_SHA {start_sha}",
            parent.unwrap_or("(none)")
        ));
    }
    let outside: Vec<&String> = files.iter().filter(|f| !in_areas(test_areas, f)).collect();
    if !outside.is_empty() {
        reasons.push(format!(
            "the checkpoint includes non-test files: {}",
            outside
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if files != red_tests {
        reasons.push(format!(
            "the checkpoint holds {files:?}, not the verified test change {red_tests:?}"
        ));
    }
    let reason = if reasons.is_empty() {
        format!(
            "temporary commit on START_SHA with only {}",
            files.join(", ")
        )
    } else {
        reasons.join("; ")
    };
    let evidence =
        json!({"reason": reason, "start_sha": start_sha, "parent": parent, "files": files});
    if reasons.is_empty() {
        GateResult::pass(RED_CHECKPOINT, evidence)
    } else {
        GateResult::fail(
            RED_CHECKPOINT,
            evidence,
            false,
            "reset to START_SHA and retry the slice",
        )
    }
}

/// What the final ancestry gate looks at.
pub struct Final<'a> {
    pub start_sha: &'a str,
    pub commit: &'a str,
    pub parent: Option<&'a str>,
    pub message: &'a str,
    pub files: &'a [String],
    pub red_tests: &'a [String],
    pub code_files: &'a [String],
    /// Whether the checkpoint commit is reachable from the final commit.
    pub checkpoint_in_history: bool,
    /// Whether the verified red tests in the commit are byte-identical to the checkpoint's.
    pub red_tests_identical: bool,
    /// Whether the pre-commit verification this commit needs passed (all configured commands
    /// at final completion and milestones; the focused and related checks otherwise).
    pub verified_before_commit: bool,
}

pub fn final_ancestry(f: &Final) -> GateResult {
    let mut reasons = Vec::new();
    if f.parent != Some(f.start_sha) {
        reasons.push(format!(
            "HEAD^1 is {}, not START_SHA {}",
            f.parent.unwrap_or("(none)"),
            f.start_sha
        ));
    }
    if !is_conventional(f.message) {
        reasons.push(format!(
            "the commit message `{}` is not a conventional commit",
            f.message.lines().next().unwrap_or("")
        ));
    }
    let missing: Vec<&String> = f
        .red_tests
        .iter()
        .chain(f.code_files)
        .filter(|p| !f.files.contains(p))
        .collect();
    if !missing.is_empty() {
        reasons.push(format!("the commit lacks {missing:?}"));
    }
    let extra: Vec<&String> = f
        .files
        .iter()
        .filter(|p| !f.red_tests.contains(p) && !f.code_files.contains(p))
        .collect();
    if !extra.is_empty() {
        reasons.push(format!(
            "the commit holds files that are neither the verified test nor green's code: {extra:?}"
        ));
    }
    if f.red_tests.is_empty() {
        reasons.push("the commit has no verified test".into());
    }
    if f.code_files.is_empty() {
        reasons.push("the commit has no implementation".into());
    }
    if f.checkpoint_in_history {
        reasons.push("the temporary checkpoint commit remains in history".into());
    }
    if !f.red_tests_identical {
        reasons.push("the verified red tests differ from the red checkpoint's".into());
    }
    if !f.verified_before_commit {
        reasons.push("no passing verification was recorded before the commit".into());
    }
    let reason = if reasons.is_empty() {
        format!(
            "one conventional commit on START_SHA {} with {}",
            &f.start_sha[..f.start_sha.len().min(10)],
            f.files.join(", ")
        )
    } else {
        reasons.join("; ")
    };
    let evidence = json!({
        "reason": reason,
        "commit": f.commit, "parent": f.parent, "start_sha": f.start_sha,
        "message": f.message, "files": f.files,
    });
    if reasons.is_empty() {
        GateResult::pass(FINAL_ANCESTRY, evidence)
    } else {
        GateResult::fail(
            FINAL_ANCESTRY,
            evidence,
            true,
            "stop completion and review the commit graph (`git log --oneline --graph`)",
        )
    }
}

/// `type(scope)!: subject` with a known type.
pub fn is_conventional(message: &str) -> bool {
    let first = message.lines().next().unwrap_or("");
    let Some((head, subject)) = first.split_once(": ") else {
        return false;
    };
    let head = head.trim_end_matches('!');
    let ty = head.split('(').next().unwrap_or("");
    let scope_ok = match head.find('(') {
        Some(i) => head.ends_with(')') && head.len() > i + 2,
        None => true,
    };
    const TYPES: [&str; 11] = [
        "feat", "fix", "test", "refactor", "perf", "docs", "chore", "build", "ci", "style",
        "revert",
    ];
    TYPES.contains(&ty) && scope_ok && !subject.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_and_final_ancestry_pass_and_fail() {
        let t = vec!["tests/a.sh".to_string()];
        let areas = vec!["tests/".to_string()];
        assert!(red_checkpoint("s", Some("s"), &t, &t, &areas).passed());
        assert!(!red_checkpoint("s", Some("x"), &t, &t, &areas).passed());
        let with_code = vec!["src/a.sh".to_string(), "tests/a.sh".to_string()];
        assert!(!red_checkpoint("s", Some("s"), &with_code, &t, &areas).passed());

        let code = vec!["src/a.sh".to_string()];
        let mut f = Final {
            start_sha: "s",
            commit: "c",
            parent: Some("s"),
            message: "feat(a): members get 10% off",
            files: &with_code,
            red_tests: &t,
            code_files: &code,
            checkpoint_in_history: false,
            red_tests_identical: true,
            verified_before_commit: true,
        };
        assert!(final_ancestry(&f).passed());
        f.parent = Some("sneaky");
        let r = final_ancestry(&f);
        assert!(!r.passed() && r.blocks && r.reason().contains("HEAD^1"));
        f.parent = Some("s");
        f.checkpoint_in_history = true;
        assert!(final_ancestry(&f).reason().contains("checkpoint"));
        f.checkpoint_in_history = false;
        f.message = "members get 10% off";
        assert!(!final_ancestry(&f).passed());
        f.message = "feat: x";
        f.verified_before_commit = false;
        assert!(!final_ancestry(&f).passed());
        f.verified_before_commit = true;
        let sneaked = vec![
            "src/a.sh".to_string(),
            "src/other.sh".to_string(),
            "tests/a.sh".to_string(),
        ];
        f.files = &sneaked;
        assert!(
            final_ancestry(&f)
                .reason()
                .contains("neither the verified test")
        );
        f.files = &with_code;
        f.red_tests_identical = false;
        assert!(
            final_ancestry(&f)
                .reason()
                .contains("differ from the red checkpoint")
        );
    }

    #[test]
    fn conventional_messages() {
        assert!(is_conventional("feat(cart): member discount\n\nbody"));
        assert!(is_conventional("fix!: x"));
        assert!(!is_conventional("wip"));
        assert!(!is_conventional("feat(): x"));
        assert!(!is_conventional("feature: x"));
    }
}
