//! Agent tool calls as the guard sees them, whatever each agent calls its tools: a shell
//! command, files written, files read, a URL fetched — and for MCP tools (`mcp__server__tool`),
//! whatever commands, paths and URLs their input carries, found by the input's keys (`mcp.rs`).

use serde_json::Value;

use crate::guard::mcp::{is_http, mcp, only_reads};
use crate::guard::paths::file_url_paths;
use crate::text::shell_quote;

/// A tool call as the guard judges it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// Shell command lines.
    pub commands: Vec<String>,
    /// Files written (Write, Edit, MultiEdit, NotebookEdit, apply_patch; Gemini write_file,
    /// replace; MCP tools that write).
    pub written: Vec<String>,
    /// Files or folders read (Read, Grep, Glob, LS; MCP tools that read).
    pub read: Vec<String>,
    /// URLs fetched (WebFetch, MCP fetchers).
    pub urls: Vec<String>,
    /// The folder an MCP tool says it runs in (its first `cwd`, `workdir`, …): relative paths
    /// and commands are judged there.
    pub cwd: Option<String>,
    /// Every folder the input names as the one it works in.
    pub folders: Vec<String>,
    /// Values an MCP tool that writes may take as paths, by their shape alone (a path-shaped
    /// value under a key that does not say what it holds, a name beside a `cwd`): judged where
    /// they land, but not against a phase's scope — `text/plain` may be a MIME type.
    pub maybe_written: Vec<String>,
    /// A file in each folder a writing MCP tool works in (`<cwd>/_`), judged where it lands
    /// (a tool working in `.git/` writes there) but not as a file of the change.
    pub placeholders: Vec<String>,
    /// What Forge cannot judge in the call — an interactive shell started, input typed into a
    /// running process, code in a language the input does not say — each a reason a person
    /// decides (red team, round 14).
    pub unjudged: Vec<String>,
    /// Why an MCP tool destroys what its server holds — a database's tables, a cluster's
    /// resources, a forge's repositories — beyond git and the sandbox: each asked about
    /// (red team, round 17).
    pub destroys: Vec<String>,
    /// Command lines that are one reading of code in a language the input does not say: judged
    /// as commands, but a line that does not parse is no finding.
    pub readings: Vec<String>,
    /// File-selecting patterns (`glob`, `include`, Gemini's `paths`) and the folder each is
    /// taken in (the call's folder when `None`); `true` when the tool reads the files' contents,
    /// not only their names (red team, round 14: `Grep {"glob": ".env"}` printed the file).
    pub patterns: Vec<(Option<String>, String, bool)>,
    /// The folders a content search reads in whole (Grep with no `glob`, `include` or `type`;
    /// the call's folder when `None`): a secret anywhere below is read. Red team, round 15:
    /// `Grep {"pattern": "PRIVATE KEY", "path": "~"}` printed `~/.ssh/id_ed25519`, ripgrep
    /// searching hidden files as Claude Code runs it.
    pub searches: Vec<Option<String>>,
    /// The exclusions (`!…`) among a search's globs, split as Claude Code splits `glob`.
    pub exclusions: Vec<String>,
    /// One-word values under keys that say nothing (`{"name": "server.key"}`): judged by name
    /// as files of the session's folder and of the project (red team, round 14).
    pub names: Vec<String>,
    /// The tool is a server's (MCP, or one Forge does not know): a relative path may be taken
    /// from the project's root or any folder between it and the session's (red team, round
    /// 14: serena resolves `relative_path` against the project it activated), and `$HOME`,
    /// `${HOME}`, `%USERPROFILE%` expanded as servers that call `expandvars` do.
    pub server: bool,
}

/// The canonical tool name used by project rules (`tool: Write`).
pub fn canonical_tool(name: &str) -> &str {
    match name {
        "Bash" | "run_shell_command" | "shell" | "exec_command" | "local_shell" => "Bash",
        "Write" | "write_file" | "create_file" => "Write",
        "Edit" | "replace" | "edit_file" | "MultiEdit" | "apply_patch" => "Edit",
        "NotebookEdit" => "NotebookEdit",
        // Claude Code's `NotebookRead`, Codex's `view_image` (red team, round 14).
        "Read" | "read_file" | "read_many_files" | "NotebookRead" | "view_image" => "Read",
        "Grep" | "grep_search" | "search_file_content" => "Grep",
        "Glob" | "glob" => "Glob",
        "LS" | "list_directory" => "LS",
        "WebFetch" | "web_fetch" => "WebFetch",
        other => other,
    }
}

/// The keys of a file tool's input that name the file it writes: all the guard reads of a
/// Write, Edit or NotebookEdit call (not `apply_patch`, whose patch text names its files).
const WRITTEN_KEYS: [&str; 5] = [
    "file_path",
    "path",
    "notebook_path",
    "absolute_path",
    "filePath",
];

/// The only keys of `name`'s input that [`classify_tool`] reads, for a tool whose other keys
/// are data it never judges (a Write's `content`, an Edit's `new_string`): the hook leaves the
/// rest unparsed, so a 10 MB Write costs no copy of its content (BENCHMARKS.md §8). `None`:
/// the whole input may matter.
pub fn judged_keys(name: &str) -> Option<&'static [&'static str]> {
    match canonical_tool(name) {
        "Write" | "Edit" | "NotebookEdit" if name != "apply_patch" => Some(&WRITTEN_KEYS),
        _ => None,
    }
}

/// Reads the tool input the way each agent writes it. Input Forge cannot understand for a tool
/// it must judge is an error (the caller denies).
pub fn classify_tool(name: &str, input: &Value) -> std::result::Result<ToolCall, String> {
    let field = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
    };
    let mut call = ToolCall::default();
    match canonical_tool(name) {
        "Bash" => {
            let cmd = field(&["command", "cmd"]).or_else(|| {
                // Codex's shell tool may send argv as an array.
                input.get("command").and_then(|v| v.as_array()).map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .map(shell_quote)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            });
            call.commands
                .push(cmd.ok_or_else(|| format!("{name} input has no `command` string"))?);
        }
        "Write" | "Edit" | "NotebookEdit" => {
            if name == "apply_patch" {
                // Every key that may hold the patch, and every string in it: only the first of
                // `command`, `patch`, `input` was read, so a benign `patch` beside an `input`
                // adding `.git/hooks/pre-commit` passed (red team, round 14).
                let texts: Vec<&str> = ["command", "patch", "input"]
                    .iter()
                    .filter_map(|k| input.get(*k))
                    .flat_map(|v| match v {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
                        _ => Vec::new(),
                    })
                    .collect();
                if texts.is_empty() {
                    return Err("apply_patch input has no patch text".to_string());
                }
                call.written = texts.iter().flat_map(|t| patch_paths(t)).collect();
                // The patch's paths are taken in its `workdir`, as Codex applies them.
                if let Some(w) = field(&["workdir", "cwd"]) {
                    call.cwd = Some(w.clone());
                    call.folders.push(w);
                }
                return Ok(call);
            }
            // Every key that names a file, not the first found: a decoy `file_path` beside the
            // `notebook_path` NotebookEdit writes was judged instead of it (red team, round 12).
            call.written = WRITTEN_KEYS
                .iter()
                .filter_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
                .collect();
            if call.written.is_empty() {
                return Err(format!("{name} input has no `file_path`"));
            }
        }
        "Read" | "Grep" | "Glob" | "LS" => {
            call.read = [
                "file_path",
                "path",
                "absolute_path",
                "dir_path",
                "notebook_path",
            ]
            .iter()
            .filter_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string))
            .collect();
            if let Some(arr) = input.get("paths").and_then(|v| v.as_array()) {
                call.read
                    .extend(arr.iter().filter_map(|v| v.as_str()).map(str::to_string));
            }
            selectors(name, input, &mut call);
            // Narrowed by a pattern that selects (`*.rs`; not `!*.md`, which only leaves out,
            // nor `""`, which ripgrep is not given), split as Claude Code splits `glob` (on
            // spaces and commas), or by a type of source code ([`CODE_TYPES`]).
            let selects = |v: &Value| -> bool {
                let words: Vec<&str> = match v {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                words
                    .iter()
                    .flat_map(|w| glob_words(w))
                    .any(|w| !w.starts_with('!'))
            };
            let selected = ["glob", "include"]
                .iter()
                .any(|k| input.get(*k).is_some_and(selects))
                || input
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| CODE_TYPES.contains(&t.trim()));
            call.exclusions = ["glob", "include"]
                .iter()
                .filter_map(|k| input.get(*k).and_then(Value::as_str))
                .flat_map(glob_words)
                .filter(|w| w.starts_with('!'))
                .collect();
            if canonical_tool(name) == "Grep" && !selected {
                call.searches.push(
                    ["path", "dir_path", "absolute_path"]
                        .iter()
                        .find_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string)),
                );
            }
        }
        "WebFetch" => {
            let url = field(&["url"]);
            // A `file:` URL is read as Node reads it (red team, round 13: `FILE://…/.env`).
            if let Some(paths) = url.as_deref().and_then(file_url_paths) {
                call.read.extend(paths);
            }
            call.urls.extend(url);
            // Gemini's `web_fetch` fetches the URLs its prompt names (red team, round 14).
            if let Some(prompt) = field(&["prompt"]) {
                call.urls.extend(urls_in(&prompt));
            }
        }
        _ if name.starts_with("mcp__") => {
            call.server = true;
            mcp(name, input, &mut call, !only_reads(name))?
        }
        // Claude Code's and Codex's readers of an MCP server's resources: the `uri` is read.
        "ReadMcpResourceTool" | "read_mcp_resource" => {
            call.server = true;
            mcp(name, input, &mut call, false)?
        }
        // Gemini's `save_memory` appends its `fact` to `~/.gemini/GEMINI.md`, the instructions
        // every later session follows (red team, round 14).
        "save_memory" => call.written.push("~/.gemini/GEMINI.md".into()),
        // The clients' own tools that name no file, command or URL of the machine.
        "Task"
        | "Agent"
        | "TodoWrite"
        | "TodoRead"
        | "WebSearch"
        | "ExitPlanMode"
        | "BashOutput"
        | "KillShell"
        | "KillBash"
        | "ListMcpResourcesTool"
        | "AskUserQuestion"
        | "SlashCommand"
        | "Skill"
        | "update_plan"
        | "web_search"
        | "google_web_search"
        | "write_todos"
        | "list_mcp_resources"
        | "list_mcp_resource_templates" => {}
        // Any other tool is judged as a server's, a writer (red team, round 14: `NotebookRead`,
        // `view_image`, Codex's `write_stdin` passed unjudged).
        _ => {
            call.server = true;
            mcp(name, input, &mut call, true)?
        }
    }
    Ok(call)
}

/// Whether JavaScript calls `c` white space (`\s`, and what `trim()` removes): Unicode's
/// spaces and line ends and the byte-order mark U+FEFF, but not U+0085, which Rust's
/// `char::is_whitespace` counts. Claude Code trims paths and splits globs the JavaScript way.
pub fn js_space(c: char) -> bool {
    c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}')
}

/// The globs Claude Code's Grep makes of its `glob`: split on white space (JavaScript's
/// `/\s+/`), then each word on commas unless it holds braces (`*.{ts,tsx}` stays whole).
pub fn glob_words(glob: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in glob.split(js_space).filter(|w| !w.is_empty()) {
        if w.contains('{') && w.contains('}') {
            out.push(w.to_string());
        } else {
            out.extend(w.split(',').filter(|p| !p.is_empty()).map(str::to_string));
        }
    }
    out
}

/// The `http(s)://` URLs in free text, each up to a space, quote or bracket.
fn urls_in(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("http") {
        let start = at + i;
        let rest = &text[start..];
        if is_http(rest) {
            let end = rest
                .find(|c: char| c.is_whitespace() || "\"'<>()[]{}`".contains(c))
                .unwrap_or(rest.len());
            out.push(rest[..end].trim_end_matches(['.', ',', ';']).to_string());
        }
        at = start + 4;
    }
    out
}

/// The file-selecting patterns of a search or listing tool: Claude Code's `Grep.glob` and
/// `Glob.pattern`, Gemini's `include`, `glob.pattern` and `read_many_files.paths`, each in the
/// folder the call names (`path`, `dir_path`).
/// ripgrep file types (`Grep {"type": …}`) that select source code only. Any other type counts
/// as no narrowing: `yaml`, `json`, `toml`, `xml`, `ini`, `config`, `txt` and `sh` are the
/// formats credentials are kept in (`~/.config/gh/hosts.yml`, `~/.docker/config.json`,
/// `~/.cargo/credentials.toml`, `~/.config/age/keys.txt`, `.zshrc`), and a type ripgrep does not
/// know is not one Forge can read.
const CODE_TYPES: [&str; 30] = [
    "py",
    "python",
    "rust",
    "js",
    "ts",
    "typescript",
    "go",
    "c",
    "cpp",
    "java",
    "kotlin",
    "swift",
    "ruby",
    "php",
    "cs",
    "scala",
    "haskell",
    "elixir",
    "erlang",
    "clojure",
    "dart",
    "lua",
    "zig",
    "ocaml",
    "r",
    "julia",
    "css",
    "html",
    "md",
    "markdown",
];

fn selectors(name: &str, input: &Value, call: &mut ToolCall) {
    let strings = |k: &str| -> Vec<String> {
        match input.get(k) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    let canon = canonical_tool(name);
    let base = ["path", "dir_path", "absolute_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()).map(str::to_string));
    // Claude Code's Grep hands ripgrep each word of its `glob` as a glob of its own (red team,
    // round 15: `"*.rs .env"` selected `.env`, judged as one pattern that matched nothing).
    let mut pats: Vec<String> = match canon {
        "Grep" => strings("glob").iter().flat_map(|g| glob_words(g)).collect(),
        _ => strings("glob"),
    };
    pats.extend(strings("include"));
    if canon == "Glob" {
        pats.extend(strings("pattern"));
    }
    if name == "read_many_files" {
        pats.extend(strings("paths"));
    }
    for p in pats {
        call.patterns.push((base.clone(), p, canon != "Glob"));
    }
}

/// Files named by a Codex `apply_patch` envelope.
pub(crate) fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            // Codex reads a header with the spaces around it trimmed.
            .find_map(|p| l.trim().strip_prefix(p.trim_end()))
            .map(|s| s.trim().to_string())
        })
        .collect()
}

/// The exact call a person's allow-once exception names: the command for shell tools, the
/// whole input otherwise.
pub fn exact_call(tool: &str, input: &Value) -> String {
    if canonical_tool(tool) == "Bash"
        && let Ok(c) = classify_tool(tool, input)
        && let Some(cmd) = c.commands.first()
    {
        return cmd.clone();
    }
    input.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the hook parses of a file tool's input (its judged keys) is all the guard reads:
    /// the same call either way; a tool that reads more keys has none.
    #[test]
    fn a_file_tool_is_judged_on_its_judged_keys_alone() {
        for (tool, input) in [
            (
                "Write",
                json!({"file_path": "/p/.git/hooks/x", "content": "rm -rf ~"}),
            ),
            (
                "write_file",
                json!({"file_path": "a", "content": "x", "path": "/etc/x"}),
            ),
            (
                "Edit",
                json!({"filePath": "/p/a", "old_string": "a", "new_string": "b"}),
            ),
            (
                "MultiEdit",
                json!({"file_path": "/p/a", "edits": [{"new_string": "b"}]}),
            ),
            (
                "NotebookEdit",
                json!({"notebook_path": "/p/n.ipynb", "new_source": "x"}),
            ),
            (
                "replace",
                json!({"absolute_path": "/p/a", "new_string": "y"}),
            ),
            ("create_file", json!({"content": "no path"})),
        ] {
            let keys = judged_keys(tool).unwrap_or_else(|| panic!("{tool}"));
            let judged: serde_json::Map<String, Value> = input
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(
                classify_tool(tool, &Value::Object(judged)),
                classify_tool(tool, &input),
                "{tool}"
            );
        }
        for tool in [
            "apply_patch",
            "Bash",
            "Read",
            "Grep",
            "mcp__fs__write_file",
            "Agent",
            "x",
        ] {
            assert_eq!(judged_keys(tool), None, "{tool}");
        }
    }

    #[test]
    fn mcp_inputs_are_read_by_their_keys() {
        let c = classify_tool(
            "mcp__filesystem__write_file",
            &json!({"path": "/x/.forge/config.yaml", "content": "rm -rf ~"}),
        )
        .unwrap();
        assert_eq!(c.written, ["/x/.forge/config.yaml"]);
        assert!(c.commands.is_empty(), "content is data");
        let c = classify_tool(
            "mcp__filesystem__read_multiple_files",
            &json!({"paths": ["/a", "/b"]}),
        )
        .unwrap();
        assert_eq!(c.read, ["/a", "/b"]);
        let c = classify_tool(
            "mcp__docker__run",
            &json!({"args": {"command": "rm -rf ~", "cwd": "/r"}}),
        )
        .unwrap();
        assert_eq!(c.commands, ["rm -rf ~"]);
        assert_eq!(c.cwd.as_deref(), Some("/r"));
        let c = classify_tool("mcp__fetch__fetch", &json!({"url": "file:///etc/shadow"})).unwrap();
        assert_eq!(c.read, ["/etc/shadow"], "a file URL is a path");
        let c = classify_tool(
            "mcp__filesystem__move_file",
            &json!({"source": "/r/.git", "destination": "/tmp/g"}),
        )
        .unwrap();
        assert_eq!(c.written, ["/r/.git", "/tmp/g"]);
    }
}
