//! What an MCP server's tool does beyond the files its input names. A git server's call is the
//! `git` command it runs, judged by the same rules as that command typed in a shell; a
//! database server's statement may drop data; a tool named for destroying (`kubectl_delete`,
//! `drop-database`, `terminate_instances`), or told to (`{"operation": "delete"}`), destroys
//! what its server holds. Red team, round 17: `git_reset {"mode": "hard"}`, `git_push {"force":
//! true}`, `query {"sql": "DROP TABLE users"}` and `kubectl_delete` were all allowed, since the
//! guard read only the paths, commands and URLs of an MCP input.
//!
//! A tool's name comes from the server (and the server's from the person's MCP config), never
//! from the agent: what a name says is evidence. The input is the agent's, so it is read for
//! what it asks, not trusted to say it is harmless.

use serde_json::{Map, Value};

use crate::guard::mcp::{name_words, one_of};
use crate::guard::rules::system::drops_data;
use crate::text::shell_quote;

/// Verbs of tool names (and of an input's `operation`) that destroy what the server holds.
const DESTROY_VERBS: [&str; 21] = [
    "drop",
    "delete",
    "remove",
    "destroy",
    "purge",
    "truncate",
    "wipe",
    "terminate",
    "uninstall",
    "flush",
    "flushall",
    "flushdb",
    "prune",
    "erase",
    "evict",
    "unpublish",
    "deprovision",
    "decommission",
    "rm",
    "del",
    "kill",
];
/// Nouns beside a destroying verb that name what lives in the project or the server's own
/// notes: `delete_file`, `remove_lines`, serena's `delete_memory`, the memory server's
/// `delete_entities`. Their paths are judged as files (and git brings them back); anything
/// else a destroying tool names (`branch`, `repository`, `namespace`, `instances`) is asked.
const LOCAL_NOUNS: [&str; 18] = [
    "file",
    "dir",
    "directory",
    "directorie",
    "folder",
    "path",
    "line",
    "text",
    "symbol",
    "content",
    "memory",
    "memorie",
    "entity",
    "entitie",
    "observation",
    "relation",
    "cell",
    "git",
];
/// Keys whose string value says what the tool does (`{"operation": "delete"}`,
/// `{"command": "delete", "resourceType": "namespace"}`, `{"method": "DELETE"}`).
const ACTION_KEYS: [&str; 9] = [
    "operation",
    "op",
    "action",
    "verb",
    "mode",
    "method",
    "command",
    "subcommand",
    "type",
];
/// Words of keys whose string value is a database statement.
const STATEMENT_WORDS: [&str; 5] = ["sql", "query", "querie", "statement", "stmt"];
/// Servers whose `command` is a database's, by words of the server's name.
const DATABASE_SERVERS: [&str; 9] = [
    "redis", "valkey", "keydb", "sql", "postgres", "mongo", "database", "db", "memcache",
];
/// Words of tool names that search text rather than run it (`search_code {"query": …}`).
const SEARCH_WORDS: [&str; 4] = ["search", "find", "grep", "lookup"];
/// Keys naming the repository a git server works in: `git -C` of the line.
const REPO_KEYS: [&str; 10] = [
    "path",
    "repo_path",
    "repopath",
    "repository",
    "repo",
    "repository_path",
    "cwd",
    "directory",
    "working_dir",
    "workdir",
];
/// Keys of a git server's input that are the commit message.
const MESSAGE_KEYS: [&str; 4] = ["message", "msg", "commit_message", "commitmessage"];

/// The server and the tool of `mcp__server__tool`.
fn split(name: &str) -> Option<(&str, &str)> {
    let mut parts = name.splitn(3, "__");
    (parts.next()? == "mcp").then_some(())?;
    Some((parts.next()?, parts.next()?))
}

/// The `git` command line a git server's tool runs (`git_reset {"path": ".", "mode": "hard"}`
/// is `git -C . reset --hard`), for the shell's git rules to judge; `None` for a tool of
/// another server. A tool is git's when its name starts with `git` or its server is named
/// `git` (`mcp__git__reset`). Its input becomes, in order: `-C` the repository; the subcommand
/// from the name's other words (`cherry_pick` → `cherry-pick`); an `operation`/`mode` as git
/// spells it (`reset --hard`, `branch --delete`, `stash drop`); every `true` flag in kebab case
/// (`forceWithLease` → `--force-with-lease`, `noVerify` → `--no-verify`); the message as `-m`;
/// other strings as operands; lists after `--`. Reading more than the server does only asks
/// more: a flag the server ignores is still judged.
pub(super) fn git_line(name: &str, input: &Map<String, Value>) -> Option<String> {
    let (server, tool) = split(name)?;
    let words = name_words(tool);
    let git_server = name_words(server).iter().any(|w| w == "git");
    let sub_words = match words.split_first() {
        Some((first, rest)) if first == "git" => rest,
        _ if git_server => &words[..],
        _ => return None,
    };
    if sub_words.is_empty() {
        return None;
    }
    let sub = sub_words.join("-");
    let mut line = vec!["git".to_string()];
    let (mut op, mut flags, mut operands, mut lists) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut repo = None;
    for (k, v) in input {
        let key = k.to_ascii_lowercase();
        let kebab = name_words(k).join("-");
        match v {
            Value::String(s) if REPO_KEYS.contains(&key.as_str()) && repo.is_none() => {
                repo = Some(s.clone());
            }
            Value::String(s) if MESSAGE_KEYS.contains(&key.as_str()) => {
                flags.extend(["-m".to_string(), s.clone()]);
            }
            Value::String(s) if ACTION_KEYS.contains(&key.as_str()) => {
                let s = s.to_ascii_lowercase();
                match (sub.as_str(), s.as_str()) {
                    ("reset", m) => flags.push(format!("--{m}")),
                    ("branch" | "tag", "delete" | "remove" | "del" | "rm") => {
                        flags.push("--delete".into());
                    }
                    ("branch" | "tag", "rename" | "move") => flags.push("--move".into()),
                    ("branch" | "tag", _) => {}
                    (_, m) => op.push(m.to_string()),
                }
            }
            // The remote before the branch, as git takes them, whatever the input's order.
            Value::String(s) if key == "remote" => operands.insert(0, s.clone()),
            Value::String(s) => operands.push(s.clone()),
            Value::Bool(true) if !kebab.is_empty() => flags.push(format!("--{kebab}")),
            Value::Array(a) => lists.extend(a.iter().filter_map(|x| x.as_str()).map(String::from)),
            _ => {}
        }
    }
    if let Some(r) = repo {
        line.extend(["-C".to_string(), r]);
    }
    line.push(sub);
    line.extend(op);
    line.extend(flags);
    line.extend(operands);
    if !lists.is_empty() {
        line.push("--".into());
        line.extend(lists);
    }
    Some(
        line.iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Why an MCP tool destroys what its server holds, if it does: reasons a person decides.
pub(super) fn destroys(name: &str, input: &Value) -> Vec<String> {
    let Some((server, tool)) = split(name) else {
        return Vec::new();
    };
    let words = name_words(tool);
    let mut out = Vec::new();
    let destroy = |w: &str| one_of(w, &DESTROY_VERBS);
    let local = words
        .iter()
        .all(|w| destroy(w) || one_of(w, &LOCAL_NOUNS) || matches!(w.as_str(), "by" | "from"));
    if let Some(verb) = words.iter().find(|w| destroy(w))
        && !local
    {
        out.push(format!(
            "`{name}` is {server}'s tool to {verb} what the server holds, outside the repository and beyond what git or a sandbox can restore; a person should run it"
        ));
    }
    let searches = words.iter().any(|w| one_of(w, &SEARCH_WORDS));
    let git = git_line(name, &Map::new()).is_some();
    let lower = server.to_ascii_lowercase();
    let database = DATABASE_SERVERS.iter().any(|d| lower.contains(d));
    let mut seen = 0usize;
    walk(input, None, &mut seen, &mut |key, s| {
        let action = ACTION_KEYS.contains(&key.to_ascii_lowercase().as_str());
        // A database server's `command` is a statement (`{"command": "FLUSHALL"}`); elsewhere
        // a command is a shell's, judged as one (`grep -rn 'DELETE FROM' src` drops nothing).
        let statement = !searches
            && (name_words(key).iter().any(|w| one_of(w, &STATEMENT_WORDS)) || database && action);
        if statement && let Some(what) = drops_data(s) {
            out.push(format!(
                "`{name}` runs `{}`, which {what}, beyond what git or a sandbox can restore; a person should run it",
                s.trim()
            ));
        }
        // One verb (`{"command": "delete"}`), not a command line: `rm`, `kill` and `del` are
        // programs, judged as commands are.
        let mut told = s.split_whitespace();
        let verb = told.next().unwrap_or("").to_ascii_lowercase();
        let one_word = told.next().is_none() || !key.eq_ignore_ascii_case("command");
        if !git
            && action
            && one_word
            && destroy(&verb)
            && !matches!(verb.as_str(), "rm" | "del" | "kill")
        {
            out.push(format!(
                "`{name}` is told to `{}` (`{key}`) what {server} holds, outside the repository and beyond what git or a sandbox can restore; a person should run it",
                s.trim()
            ));
        }
    });
    out
}

/// Every string of `v` with the key it is under (an array's items under its key), within the
/// bounds the MCP walk holds to.
fn walk(v: &Value, key: Option<&str>, seen: &mut usize, f: &mut dyn FnMut(&str, &str)) {
    *seen += 1;
    if *seen > 20_000 {
        return;
    }
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                walk(x, Some(k), seen, f);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, key, seen, f);
            }
        }
        Value::String(s) => f(key.unwrap_or(""), s),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(name: &str, input: Value) -> Option<String> {
        git_line(name, input.as_object().unwrap())
    }

    #[test]
    fn a_git_servers_call_is_the_git_command_it_runs() {
        for (name, input, want) in [
            (
                "mcp__git__git_reset",
                json!({"path": ".", "mode": "hard", "target": "HEAD~3"}),
                "git -C . reset --hard 'HEAD~3'",
            ),
            (
                "mcp__git__git_push",
                json!({"path": "/r", "remote": "origin", "branch": "main", "forceWithLease": true}),
                "git -C /r push --force-with-lease origin main",
            ),
            (
                "mcp__git__git_branch",
                json!({"path": ".", "operation": "delete", "name": "main"}),
                "git -C . branch --delete main",
            ),
            (
                "mcp__git__git_stash",
                json!({"path": ".", "mode": "clear"}),
                "git -C . stash clear",
            ),
            (
                "mcp__git__git_commit",
                json!({"repo_path": ".", "message": "feat: x y", "noVerify": true}),
                "git -C . commit -m 'feat: x y' --no-verify",
            ),
            (
                "mcp__git__git_add",
                json!({"repo_path": ".", "files": ["a b", "c"]}),
                "git -C . add -- 'a b' c",
            ),
            (
                "mcp__vcs__git_cherry_pick",
                json!({"commit": "abc"}),
                "git cherry-pick abc",
            ),
            (
                "mcp__git__reset",
                json!({"mode": "keep"}),
                "git reset --keep",
            ),
        ] {
            assert_eq!(line(name, input).as_deref(), Some(want), "{name}");
        }
        assert_eq!(line("mcp__github__delete_branch", json!({})), None);
        assert_eq!(line("mcp__postgres__query", json!({})), None);
        assert_eq!(line("mcp__git__git", json!({})), None);
    }

    #[test]
    fn tools_that_destroy_are_named_or_told_so() {
        for (name, input) in [
            (
                "mcp__kubernetes__kubectl_delete",
                json!({"resourceType": "namespace", "name": "prod"}),
            ),
            ("mcp__mongodb__drop-database", json!({"database": "prod"})),
            (
                "mcp__aws__terminate_instances",
                json!({"InstanceIds": ["i-1"]}),
            ),
            ("mcp__postgres__query", json!({"sql": "DROP TABLE users"})),
            (
                "mcp__supabase__execute_sql",
                json!({"project_id": "p", "query": "select 1; delete from accounts"}),
            ),
            (
                "mcp__kubernetes__kubectl_generic",
                json!({"command": "delete", "resourceType": "pod", "name": "web"}),
            ),
            (
                "mcp__http__request",
                json!({"url": "http://localhost:9200/_all", "method": "DELETE"}),
            ),
            ("mcp__redis__execute", json!({"command": "FLUSHALL"})),
        ] {
            assert!(!destroys(name, &input).is_empty(), "{name} {input}");
        }
        for (name, input) in [
            (
                "mcp__postgres__query",
                json!({"sql": "SELECT * FROM users"}),
            ),
            (
                "mcp__postgres__query",
                json!({"sql": "DELETE FROM users WHERE id = 3"}),
            ),
            (
                "mcp__github__search_code",
                json!({"query": "DELETE FROM users"}),
            ),
            ("mcp__filesystem__delete_file", json!({"path": "src/a.rs"})),
            (
                "mcp__serena__delete_memory",
                json!({"memory_file_name": "x"}),
            ),
            (
                "mcp__filesystem__write_file",
                json!({"path": "m/001.sql", "content": "DROP TABLE old;"}),
            ),
            (
                "mcp__git__git_branch",
                json!({"path": ".", "operation": "delete", "name": "feature"}),
            ),
            ("mcp__git__git_rm", json!({"files": ["a"]})),
        ] {
            assert!(destroys(name, &input).is_empty(), "{name} {input}");
        }
    }
}
