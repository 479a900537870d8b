//! A person's way out: allow-once exceptions, user-level rules and decisions, and trust in a
//! clone's relaxing rules.

use super::super::*;

struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    user: PathBuf,
}

fn setup() -> Setup {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/guard-unit");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(&base).unwrap();
    let d = dir.path().canonicalize().unwrap();
    let root = d.join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    Setup {
        root,
        home: d.join("home"),
        user: d.join("home/.config/forge"),
        _dir: dir,
    }
}

impl Setup {
    fn guard(&self, project: Option<&GuardConfig>) -> Guard {
        Guard::for_project_in(&self.root, &self.home, project.cloned(), &self.user).unwrap()
    }
}

#[test]
fn an_allow_once_exception_lets_exactly_one_call_through_once() {
    let s = setup();
    let line = "git push --force origin feature/x";
    assert_eq!(
        s.guard(None).check_command(line, &s.root).decision,
        Decision::Deny
    );
    exceptions::grant(
        &s.user,
        &s.root,
        "Bash",
        line,
        "human:ada",
        std::time::Duration::from_secs(600),
    )
    .unwrap();
    // Another call is not covered.
    assert_eq!(
        s.guard(None)
            .check_command("git push --force origin main", &s.root)
            .decision,
        Decision::Deny
    );
    let r = s.guard(None).check_command(line, &s.root);
    assert_eq!((r.decision, r.rule.as_str()), (Decision::Allow, ALLOW_ONCE));
    assert!(
        r.reason.contains("human:ada") && r.reason.contains("git-force-push"),
        "{}",
        r.reason
    );
    // Used up.
    assert_eq!(
        s.guard(None).check_command(line, &s.root).decision,
        Decision::Deny
    );
    // Tool calls too, by their exact input.
    let input = serde_json::json!({"file_path": "/etc/hosts", "content": "x"});
    exceptions::grant(
        &s.user,
        &s.root,
        "Write",
        &tools::exact_call("Write", &input),
        "human:ada",
        std::time::Duration::from_secs(600),
    )
    .unwrap();
    assert_eq!(
        s.guard(None).check_tool("Write", &input, &s.root).rule,
        ALLOW_ONCE
    );
    // A guard built without the person's folder (tests, tools) never consults it.
    exceptions::grant(
        &s.user,
        &s.root,
        "Bash",
        line,
        "human:ada",
        std::time::Duration::from_secs(600),
    )
    .unwrap();
    assert_eq!(
        Guard::new(&s.root, &s.home, None, None)
            .check_command(line, &s.root)
            .decision,
        Decision::Deny
    );
}

#[test]
fn granting_an_exception_is_a_command_agents_may_not_run() {
    let s = setup();
    for l in [
        "forge guard allow-once -- 'rm -rf ~'",
        "forge guard trust",
        "forge guard lift",
        "echo '{}' > ~/.config/forge/allow-once.json",
    ] {
        assert_eq!(
            s.guard(None).check_command(l, &s.root).decision,
            Decision::Deny,
            "{l}"
        );
    }
}

#[test]
fn user_rules_and_decisions_apply_beside_the_projects() {
    let s = setup();
    std::fs::create_dir_all(&s.user).unwrap();
    std::fs::write(
        s.user.join("guard.yaml"),
        "rules:\n  - {id: no-kubectl, decision: deny, reason: not from agents, program: kubectl}\ndecisions:\n  unparseable: ask\n  dynamic-program: ask\n",
    )
    .unwrap();
    let g = s.guard(None);
    let r = g.check_command("kubectl get pods", &s.root);
    assert_eq!(
        (r.decision, r.rule.as_str()),
        (Decision::Deny, "no-kubectl")
    );
    assert_eq!(
        g.check_command("echo 'unterminated", &s.root).decision,
        Decision::Ask
    );
    assert_eq!(
        g.check_command("$(cat cmd) -rf x", &s.root).decision,
        Decision::Ask
    );
    // `forge guard rules` shows what the person added, with where it comes from.
    let added = g.added();
    assert!(
        added
            .iter()
            .any(|(from, id, d, _)| *from == "user" && id == "no-kubectl" && *d == Decision::Deny),
        "{added:?}"
    );
    assert!(
        added
            .iter()
            .any(|(from, id, _, _)| *from == "decisions" && id == "unparseable"),
        "{added:?}"
    );
    // A broken user file fails closed, naming it.
    std::fs::write(s.user.join("guard.yaml"), "decisions:\n  nope: ask\n").unwrap();
    let e = Guard::for_project_in(&s.root, &s.home, None, &s.user)
        .err()
        .unwrap();
    assert!(e.contains("guard.yaml") && e.contains("nope"), "{e}");
}

#[test]
fn relaxing_project_rules_apply_only_once_a_person_trusts_them() {
    let s = setup();
    let cfg: GuardConfig = serde_saphyr::from_str(
        "rules:\n  - {decision: allow, reason: scratch, program: git, args: [reset, --hard], relaxes: [git-reset-hard]}\n  - {id: no-prod, decision: deny, reason: prod, program: kubectl}\ndecisions:\n  git-amend: allow\n",
    )
    .unwrap();
    let line = "git reset --hard HEAD";
    let g = s.guard(Some(&cfg));
    assert_eq!(
        g.check_command(line, &s.root).decision,
        Decision::Deny,
        "ignored until trusted"
    );
    assert_eq!(
        g.check_command("git commit --amend", &s.root).decision,
        Decision::Ask
    );
    assert_eq!(g.untrusted().len(), 2, "{:?}", g.untrusted());
    // Rules that only add restrictions apply at once.
    assert_eq!(g.check_command("kubectl get pods", &s.root).rule, "no-prod");
    trust::trust(&s.user, &s.root, &cfg.relaxing_fingerprint(), "human:ada").unwrap();
    let g = s.guard(Some(&cfg));
    assert_eq!(g.check_command(line, &s.root).decision, Decision::Allow);
    assert_eq!(
        g.check_command("git commit --amend", &s.root).decision,
        Decision::Allow
    );
    assert!(g.untrusted().is_empty());
    // A change to the relaxing parts needs trusting again.
    let mut changed = cfg.clone();
    changed.rules[0].relaxes.push("git-clean".into());
    let g = s.guard(Some(&changed));
    assert_eq!(g.check_command(line, &s.root).decision, Decision::Deny);
}

#[test]
fn a_deny_offers_a_paste_ready_allow_once_command_and_its_shape_when_too_long() {
    let s = setup();
    let r = s.guard(None).check_command("git reset --hard", &s.root);
    assert_eq!(
        r.allow_once.as_deref(),
        Some("forge guard allow-once -- 'git reset --hard'")
    );
    assert!(r.message().ends_with(
        " — if the person wants it anyway: forge guard allow-once -- 'git reset --hard'"
    ));
    // A large file's content is not repeated into the reason.
    let big = serde_json::json!({"file_path": "/etc/motd", "content": "x".repeat(5000)});
    let r = s.guard(None).check_tool("Write", &big, &s.root);
    assert_eq!(r.decision, Decision::Deny);
    assert_eq!(
        r.allow_once.as_deref(),
        Some("forge guard allow-once --tool Write --input '<the exact tool input as JSON>'")
    );
    // An allow offers none.
    let r = s.guard(None).check_command("ls", &s.root);
    assert_eq!((r.decision, r.allow_once), (Decision::Allow, None));
}
