//! Agent tool calls as the guard sees them, whatever each agent calls its tools: a shell
//! command, files written, files read, a URL fetched — and for MCP tools (`mcp__server__tool`),
//! whatever commands, paths and URLs their input carries, found by the input's keys.

use serde_json::Value;

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
    /// A folder an MCP tool says it runs in.
    pub cwd: Option<String>,
}

/// The canonical tool name used by project rules (`tool: Write`).
pub fn canonical_tool(name: &str) -> &str {
    match name {
        "Bash" | "run_shell_command" | "shell" | "exec_command" | "local_shell" => "Bash",
        "Write" | "write_file" | "create_file" => "Write",
        "Edit" | "replace" | "edit_file" | "MultiEdit" | "apply_patch" => "Edit",
        "NotebookEdit" => "NotebookEdit",
        "Read" | "read_file" | "read_many_files" => "Read",
        "Grep" | "grep_search" | "search_file_content" => "Grep",
        "Glob" | "glob" => "Glob",
        "LS" | "list_directory" => "LS",
        "WebFetch" | "web_fetch" => "WebFetch",
        other => other,
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
                let patch = field(&["command", "patch", "input"])
                    .ok_or_else(|| "apply_patch input has no patch text".to_string())?;
                call.written = patch_paths(&patch);
                return Ok(call);
            }
            // Every key that names a file, not the first found: a decoy `file_path` beside the
            // `notebook_path` NotebookEdit writes was judged instead of it (red team, round 12).
            call.written = [
                "file_path",
                "path",
                "notebook_path",
                "absolute_path",
                "filePath",
            ]
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
        }
        "WebFetch" => {
            call.urls.extend(field(&["url"]));
        }
        _ if name.starts_with("mcp__") => mcp(name, input, &mut call)?,
        _ => {}
    }
    Ok(call)
}

/// Keys whose string value is a shell command.
const COMMAND_KEYS: [&str; 8] = [
    "command",
    "cmd",
    "script",
    "shell",
    "bash",
    "commandLine",
    "command_line",
    "shell_command",
];
/// Keys whose string value is a file or folder; so is any key naming a path, file, folder or
/// directory in other words (`relative_path`, `pathInProject`, `output_file`, `target_dir`).
const PATH_KEYS: [&str; 28] = [
    "path",
    "file",
    "file_path",
    "filePath",
    "filepath",
    "filename",
    "fileName",
    "file_name",
    "paths",
    "files",
    "source",
    "destination",
    "dest",
    "target",
    "directory",
    "dir",
    "folder",
    "root",
    "output",
    "outputPath",
    "output_path",
    "input_path",
    "inputPath",
    "location",
    "src",
    "dst",
    "from",
    "to",
];
/// Keys whose string value is a URL.
const URL_KEYS: [&str; 7] = [
    "url",
    "uri",
    "href",
    "endpoint",
    "link",
    "urls",
    "target_url",
];
/// Words in an MCP tool's name that mean it only reads.
const READ_VERBS: [&str; 22] = [
    "read", "get", "list", "search", "find", "view", "show", "stat", "info", "query", "fetch",
    "grep", "glob", "tree", "cat", "head", "tail", "diff", "status", "describe", "inspect",
    "count",
];
/// Words beside a read verb that say what a read-only tool reads, or how — nouns and small
/// words, no verbs: `read_text_file`, `list_directory_with_sizes`, `get-library-docs`,
/// `get_file_text_by_path`. Only the words of everyday read-only servers that take paths
/// (filesystem, git, serena, JetBrains, GitHub, context7): a read-only tool named otherwise is
/// judged as a writer, which matters only for the paths it names outside the project or in
/// control folders, and for a running slice's scope.
const READ_NOUNS: [&str; 45] = [
    "file",
    "files",
    "dir",
    "dirs",
    "directory",
    "directories",
    "folder",
    "folders",
    "path",
    "paths",
    "content",
    "contents",
    "text",
    "media",
    "image",
    "document",
    "documents",
    "doc",
    "docs",
    "page",
    "pages",
    "resource",
    "resources",
    "issue",
    "issues",
    "library",
    "symbol",
    "symbols",
    "definition",
    "definitions",
    "references",
    "referencing",
    "overview",
    "problems",
    "commits",
    "repository",
    "git",
    "pattern",
    "multiple",
    "sizes",
    "with",
    "by",
    "in",
    "for",
    "of",
];

/// Values of an MCP input looked at, and the depth, at most (inputs are small; this bounds a
/// hostile one). Past either, the input is refused, not read in part: what followed 2,000
/// padding values was never looked at (red team, round 12).
const MAX_NODES: usize = 20_000;
const MAX_DEPTH: usize = 32;

/// `create_new_file`, `createNewFile` and `create-new-file` all give `create`, `new`, `file`.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if (!c.is_ascii_alphanumeric() || (c.is_ascii_uppercase() && prev_lower)) && !cur.is_empty()
        {
            words.push(std::mem::take(&mut cur));
        }
        if c.is_ascii_alphanumeric() {
            cur.push(c.to_ascii_lowercase());
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Whether an MCP tool (`mcp__server__tool`) only reads, by its name: every word of the part
/// after the server is a read verb or one of [`READ_NOUNS`], and one is a verb. Anything else
/// writes (red team, round 13): a word Forge does not know may be a verb (`read_then_overwrite`,
/// `get_or_make`, `fetch_and_store`, `searchAndFormat`); a letter outside ASCII splits or hides
/// a word (`read_wrіte` with a Cyrillic `і`); and the tool is all that follows the server, not
/// the last `__` segment (`mcp__srv__write_file__read`).
fn only_reads(name: &str) -> bool {
    let Some(tool) = name.splitn(3, "__").nth(2) else {
        return false;
    };
    if !tool.is_ascii() {
        return false;
    }
    let words = name_words(tool);
    let verb = |w: &String| READ_VERBS.contains(&w.as_str());
    words.iter().any(verb)
        && words
            .iter()
            .all(|w| verb(w) || READ_NOUNS.contains(&w.as_str()))
}

fn is_path_key(k: &str) -> bool {
    PATH_KEYS.contains(&k) || {
        let l = k.to_ascii_lowercase();
        ["path", "file", "dir", "folder"]
            .iter()
            .any(|w| l.contains(w))
    }
}

fn mcp(name: &str, input: &Value, call: &mut ToolCall) -> std::result::Result<(), String> {
    match input {
        Value::Object(_) => {}
        // A tool without parameters: nothing to judge.
        Value::Null => return Ok(()),
        _ => return Err(format!("{name} input is not a JSON object")),
    }
    let writes = !only_reads(name);
    let runs = [
        "exec", "run", "shell", "terminal", "command", "bash", "spawn", "process",
    ]
    .iter()
    .any(|v| name.to_ascii_lowercase().contains(v));
    let mut budget = MAX_NODES;
    if !walk(input, None, writes, call, 0, &mut budget) {
        return Err(format!(
            "{name} input is larger or deeper than Forge reads ({MAX_NODES} values, depth {MAX_DEPTH})"
        ));
    }
    // `{"command": "rm", "args": ["-rf", "~"]}` or `{"argv": [...]}` of a tool that runs
    // programs: the whole argument vector is the command.
    if runs && let Some(o) = input.as_object() {
        let argv = |k: &str| -> Option<Vec<String>> {
            o.get(k)?
                .as_array()?
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect()
        };
        let args = argv("args")
            .or_else(|| argv("arguments"))
            .or_else(|| argv("argv"));
        let program = ["command", "cmd", "program", "executable"]
            .iter()
            .find_map(|k| o.get(*k).and_then(|v| v.as_str()));
        if let Some(args) = args {
            let mut words: Vec<String> = program.map(|p| vec![p.to_string()]).unwrap_or_default();
            words.extend(args);
            // Judged as if the server ran it through a shell, its most dangerous reading.
            let line = words.join(" ");
            call.commands.retain(|c| Some(c.as_str()) != program);
            call.commands.push(line);
        }
    }
    Ok(())
}

/// Collects what `v` names into `call`; false when the input is past the bounds (nothing
/// after that point was looked at).
fn walk(
    v: &Value,
    key: Option<&str>,
    writes: bool,
    call: &mut ToolCall,
    depth: usize,
    budget: &mut usize,
) -> bool {
    if depth > MAX_DEPTH || *budget == 0 {
        return false;
    }
    *budget -= 1;
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if !walk(x, Some(k), writes, call, depth + 1, budget) {
                    return false;
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                if !walk(x, key, writes, call, depth + 1, budget) {
                    return false;
                }
            }
        }
        Value::String(s) => {
            let Some(k) = key else { return true };
            if k == "cwd" || k == "workdir" || k == "working_directory" {
                call.cwd = Some(s.clone());
            } else if COMMAND_KEYS.contains(&k) {
                call.commands.push(s.clone());
            } else if URL_KEYS.contains(&k) || s.starts_with("file://") {
                call.urls.push(s.clone());
            } else if is_path_key(k) {
                if writes {
                    call.written.push(s.clone());
                } else {
                    call.read.push(s.clone());
                }
            } else if s.starts_with("http://") || s.starts_with("https://") {
                call.urls.push(s.clone());
            }
        }
        _ => {}
    }
    true
}

/// Files named by a Codex `apply_patch` envelope.
fn patch_paths(patch: &str) -> Vec<String> {
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

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
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

    #[test]
    fn a_tool_reads_only_when_every_word_of_its_name_says_so() {
        for name in [
            "mcp__filesystem__read_text_file",
            "mcp__filesystem__list_directory_with_sizes",
            "mcp__github__get_file_contents",
            "mcp__context7__get-library-docs",
            "mcp__x__readFile",
            "mcp__fetch__fetch",
        ] {
            assert!(only_reads(name), "{name}");
        }
        for name in [
            "mcp__x__read_then_overwrite",
            "mcp__x__searchAndFormat",
            "mcp__x__read_wr\u{0456}te",
            "mcp__srv__write_file__read",
            "mcp__x__file_issue",
            "mcp__x__",
            "mcp__x",
            "read_file",
        ] {
            assert!(!only_reads(name), "{name}");
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
        assert_eq!(c.urls, ["file:///etc/shadow"]);
        let c = classify_tool(
            "mcp__filesystem__move_file",
            &json!({"source": "/r/.git", "destination": "/tmp/g"}),
        )
        .unwrap();
        assert_eq!(c.written, ["/r/.git", "/tmp/g"]);
    }
}
