//! Red team, round 17: MCP tools that destroy what their server holds — a git server's reset,
//! force push, branch deletion and clean; a database server's `DROP`/`TRUNCATE`/`FLUSHALL`; a
//! cluster's or a cloud's deletions — were allowed, since the guard read only the paths,
//! commands and URLs of an MCP input. Inputs are the servers' own schemas (the reference
//! `mcp-server-git`, `@cyanheads/git-mcp-server`, `@modelcontextprotocol/server-postgres`,
//! `mcp-server-sqlite`, Supabase's, `mcp-server-kubernetes`, `mongodb-mcp-server`).

use super::super::*;
use super::classes::{Repo, repo};
use super::round_14::{allowed, denied};
use serde_json::{Value, json};

/// Every call is decided by `rule` (asked about or denied as the rule says).
fn by_rule(r: &Repo, rule: &str, calls: &[(&str, Value)]) {
    let wrong: Vec<String> = calls
        .iter()
        .map(|(tool, input)| (tool, input, r.guard().check_tool(tool, input, &r.root)))
        .filter(|(_, _, res)| res.decision == Decision::Allow || res.rule != rule)
        .map(|(tool, input, res)| {
            format!(
                "{tool} {input} → {} [{}] {}",
                res.decision.as_str(),
                res.rule,
                res.reason
            )
        })
        .collect();
    assert!(wrong.is_empty(), "not caught by {rule}: {wrong:#?}");
}

/// A git server's call is judged as the git command it runs.
#[test]
fn a_git_servers_calls_are_judged_as_the_git_commands_they_run() {
    let r = repo(&[]);
    by_rule(
        &r,
        "git-reset-hard",
        &[(
            "mcp__git__git_reset",
            json!({"path": ".", "mode": "hard", "target": "HEAD~3"}),
        )],
    );
    by_rule(
        &r,
        "git-force-push",
        &[
            (
                "mcp__git__git_push",
                json!({"path": ".", "remote": "origin", "branch": "main", "force": true}),
            ),
            (
                "mcp__git__git_push",
                json!({"branch": "main", "remote": "origin", "force": true}),
            ),
        ],
    );
    by_rule(
        &r,
        "git-delete-main",
        &[(
            "mcp__git__git_branch",
            json!({"path": ".", "operation": "delete", "name": "main"}),
        )],
    );
    by_rule(
        &r,
        "git-clean",
        &[("mcp__git__git_clean", json!({"path": ".", "force": true}))],
    );
    by_rule(
        &r,
        "git-stash-clear",
        &[("mcp__git__git_stash", json!({"path": ".", "mode": "clear"}))],
    );
    denied(
        &r,
        Some("no-verify"),
        &[(
            "mcp__git__git_commit",
            json!({"path": ".", "message": "wip", "noVerify": true}),
        )],
    );
    allowed(
        &r,
        &[
            ("mcp__git__git_status", json!({"repo_path": "."})),
            ("mcp__git__git_reset", json!({"repo_path": "."})),
            (
                "mcp__git__git_add",
                json!({"repo_path": ".", "files": ["src/lib.rs"]}),
            ),
            (
                "mcp__git__git_commit",
                json!({"repo_path": ".", "message": "feat: parse the header"}),
            ),
            (
                "mcp__git__git_create_branch",
                json!({"repo_path": ".", "branch_name": "feat", "base_branch": "main"}),
            ),
            (
                "mcp__git__git_checkout",
                json!({"repo_path": ".", "branch_name": "feat"}),
            ),
            (
                "mcp__git__git_log",
                json!({"repo_path": ".", "max_count": 5}),
            ),
        ],
    );
}

/// What a database, a cluster or a cloud loses is asked about, as `psql -c 'DROP …'` and
/// `kubectl delete` are.
#[test]
fn tools_that_destroy_what_their_server_holds_are_asked_about() {
    let r = repo(&[]);
    by_rule(
        &r,
        "destroy-external",
        &[
            ("mcp__postgres__query", json!({"sql": "DROP TABLE users"})),
            (
                "mcp__sqlite__write_query",
                json!({"query": "DELETE FROM users"}),
            ),
            (
                "mcp__supabase__execute_sql",
                json!({"project_id": "abc", "query": "select 1; truncate accounts"}),
            ),
            (
                "mcp__kubernetes__kubectl_delete",
                json!({"resourceType": "namespace", "name": "prod"}),
            ),
            (
                "mcp__kubernetes__kubectl_delete",
                json!({"resourceType": "deployment", "manifest": "k8s/deploy.yaml"}),
            ),
            (
                "mcp__kubernetes__kubectl_generic",
                json!({"command": "delete", "resourceType": "pod", "name": "web"}),
            ),
            ("mcp__mongodb__drop-database", json!({"database": "prod"})),
            ("mcp__redis__execute", json!({"command": "FLUSHALL"})),
            (
                "mcp__github__delete_repository",
                json!({"owner": "acme", "repo": "api"}),
            ),
        ],
    );
    allowed(
        &r,
        &[
            (
                "mcp__postgres__query",
                json!({"sql": "SELECT * FROM users"}),
            ),
            (
                "mcp__postgres__query",
                json!({"sql": "DELETE FROM sessions WHERE expires < now()"}),
            ),
            (
                "mcp__github__search_code",
                json!({"query": "DELETE FROM users"}),
            ),
            (
                "mcp__filesystem__write_file",
                json!({"path": "migrations/002_drop.sql", "content": "DROP TABLE old;"}),
            ),
            (
                "mcp__kubernetes__kubectl_get",
                json!({"resourceType": "pods", "namespace": "default"}),
            ),
            (
                "mcp__serena__delete_memory",
                json!({"memory_file_name": "notes"}),
            ),
            (
                "mcp__desktop-commander__execute_command",
                json!({"command": "grep -rn 'DELETE FROM' src"}),
            ),
        ],
    );
}
