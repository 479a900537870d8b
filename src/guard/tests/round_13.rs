//! Red team, round 13: file and MCP tools run in the client's process, outside the sandbox, so
//! the guard is their only wall — and each of these spellings of a path got past it. One test
//! per hole; each lists the spellings that must be caught and the everyday calls beside them
//! that must pass.

use super::super::*;
use super::classes::{Repo, repo};
use serde_json::{Value, json};

fn judged(r: &Repo, tool: &str, input: &Value) -> GuardResult {
    r.guard().check_tool(tool, input, &r.root)
}

/// Every call is flagged (deny or ask); the message lists every one that was not.
fn flagged(r: &Repo, calls: &[(&str, Value)]) {
    let missed: Vec<String> = calls
        .iter()
        .filter(|(tool, input)| judged(r, tool, input).decision == Decision::Allow)
        .map(|(tool, input)| format!("{tool} {input}"))
        .collect();
    assert!(missed.is_empty(), "allowed: {missed:#?}");
}

/// Every call is denied by `rule`.
fn denied_by(r: &Repo, rule: &str, calls: &[(&str, Value)]) {
    let wrong: Vec<String> = calls
        .iter()
        .filter_map(|(tool, input)| {
            let res = judged(r, tool, input);
            (res.decision != Decision::Deny || res.rule != rule)
                .then(|| format!("{tool} {input} → {} [{}]", res.decision.as_str(), res.rule))
        })
        .collect();
    assert!(wrong.is_empty(), "not denied by {rule}: {wrong:#?}");
}

/// Every call is allowed.
fn allowed(r: &Repo, calls: &[(&str, Value)]) {
    let wrong: Vec<String> = calls
        .iter()
        .filter_map(|(tool, input)| {
            let res = judged(r, tool, input);
            (res.decision != Decision::Allow)
                .then(|| format!("{tool} {input} → [{}] {}", res.rule, res.reason))
        })
        .collect();
    assert!(wrong.is_empty(), "flagged: {wrong:#?}");
}

/// Hole 3: a tool name with a read verb beside a verb Forge does not list was taken to read;
/// so were names with non-ASCII letters and a last `__` segment that reads.
#[test]
fn round_13_a_tool_reads_only_when_every_word_of_its_name_says_so() {
    let r = repo(&[]);
    let root = r.root.display().to_string();
    let git_config = json!({"path": format!("{root}/.git/config"), "content": "[core]"});
    let calls: Vec<(&str, Value)> = [
        "mcp__x__read_then_overwrite",
        "mcp__x__get_or_make",
        "mcp__x__fetch_and_store",
        "mcp__x__searchAndFormat",
        "mcp__x__read_wr\u{0456}te",
        "mcp__srv__write_file__read",
        "mcp__x__readOrCreate",
        "mcp__x__list_and_prune",
        "mcp__x__get-and-sync",
        "mcp__x__\u{0433}et_file",
        "mcp__x__read_file\u{200b}s",
        "mcp__x__",
        "mcp__x",
    ]
    .iter()
    .map(|t| (*t, git_config.clone()))
    .collect();
    flagged(&r, &calls);
    // Read-only tools of everyday servers read a control file without a finding.
    let reads: Vec<(&str, Value)> = [
        "mcp__filesystem__read_file",
        "mcp__filesystem__read_text_file",
        "mcp__filesystem__read_media_file",
        "mcp__filesystem__read_multiple_files",
        "mcp__filesystem__list_directory",
        "mcp__filesystem__list_directory_with_sizes",
        "mcp__filesystem__directory_tree",
        "mcp__filesystem__search_files",
        "mcp__filesystem__get_file_info",
        "mcp__github__get_file_contents",
        "mcp__serena__find_file",
        "mcp__serena__list_dir",
        "mcp__jetbrains__get_file_text_by_path",
        "mcp__x__readFile",
        "mcp__x__get-document",
    ]
    .iter()
    .map(|t| (*t, json!({"path": format!("{root}/.git/config")})))
    .collect();
    allowed(&r, &reads);
    allowed(
        &r,
        &[(
            "mcp__context7__get-library-docs",
            json!({"context7CompatibleLibraryID": "/rust-lang/rust", "topic": "fs::remove_dir_all"}),
        )],
    );
}

/// Hole 5: control and secret names in another case. On a case-insensitive file system (macOS,
/// Windows, a case-folding ext4 folder) `.GIT/config` is `.git/config`.
#[test]
fn round_13_control_and_secret_names_in_any_case() {
    let r = repo(&[("lib/sub/.git", "gitdir: ../../.git/modules/sub\n")]);
    let root = r.root.display().to_string();
    let home = r.home.display().to_string();
    let write = |rel: &str| {
        (
            "Write",
            json!({"file_path": format!("{root}/{rel}"), "content": "x"}),
        )
    };
    flagged(
        &r,
        &[
            write(".FORGE/config.yaml"),
            write(".GIT/config"),
            write(".Git/hooks/pre-commit"),
            write(".Claude/settings.json"),
            write(".CODEX/config.toml"),
            write(".MCP.JSON"),
            write(".VSCode/tasks.json"),
            write(".TMP/.Forge/runs/x/state.json"),
            // Unicode case folding: `ı` upper-cases to `I`, `ſ` to `S`.
            write(".g\u{0131}t/config"),
            write(".v\u{017f}code/tasks.json"),
            write("lib/sub/.GIT"),
            (
                "mcp__filesystem__write_file",
                json!({"path": ".Forge/config.yaml", "content": "x"}),
            ),
            ("Bash", json!({"command": "echo '[core]' >> .GIT/config"})),
        ],
    );
    denied_by(
        &r,
        "secrets",
        &[
            ("Read", json!({"file_path": format!("{root}/.ENV")})),
            ("Read", json!({"file_path": format!("{root}/.Env.Local")})),
            ("Read", json!({"file_path": format!("{home}/.SSH/config")})),
            (
                "Read",
                json!({"file_path": format!("{home}/.AWS/credentials")}),
            ),
            ("Read", json!({"file_path": format!("{home}/.NETRC")})),
            ("Bash", json!({"command": "cat ~/.Ssh/config"})),
            (
                "Read",
                json!({"file_path": format!("{}/.ssh/config", home.to_uppercase())}),
            ),
        ],
    );
    allowed(
        &r,
        &[
            write(".github/workflows/ci.yml"),
            write(".GITHUB/x.yml"),
            write(".gitignore"),
            write(".Gitattributes"),
            write("src/Git/lib.rs"),
            write("docs/.Forge-notes.md"),
            ("Read", json!({"file_path": format!("{root}/.ENV.example")})),
        ],
    );
}

/// Hole 7: `.envrc` (direnv) often exports secrets; it is one like `.env`.
#[test]
fn round_13_envrc_is_a_secret() {
    let r = repo(&[
        (".envrc", "export TOKEN=1\n"),
        (".envrc.local", "export TOKEN=2\n"),
        (".envrc.example", "export TOKEN=\n"),
    ]);
    let root = r.root.display().to_string();
    denied_by(
        &r,
        "secrets",
        &[
            ("Read", json!({"file_path": format!("{root}/.envrc")})),
            ("Read", json!({"file_path": format!("{root}/.envrc.local")})),
            ("Read", json!({"file_path": format!("{root}/.ENVRC")})),
            ("mcp__fs__read_file", json!({"path": ".envrc"})),
            ("Bash", json!({"command": "cat .envrc"})),
            ("Bash", json!({"command": "grep TOKEN services/api/.envrc"})),
        ],
    );
    allowed(
        &r,
        &[
            (
                "Read",
                json!({"file_path": format!("{root}/.envrc.example")}),
            ),
            ("Bash", json!({"command": "direnv status"})),
        ],
    );
}
