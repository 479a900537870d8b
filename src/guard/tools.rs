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
            let p = field(&[
                "file_path",
                "path",
                "notebook_path",
                "absolute_path",
                "filePath",
            ])
            .ok_or_else(|| format!("{name} input has no `file_path`"))?;
            call.written.push(p);
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
        _ if name.starts_with("mcp__") => mcp(name, input, &mut call),
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
/// Keys whose string value is a file or folder.
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
/// Verbs in an MCP tool's name that mean it changes what its paths name.
const WRITE_VERBS: [&str; 20] = [
    "write", "edit", "create", "move", "rename", "delete", "remove", "mkdir", "put", "patch",
    "append", "save", "upload", "insert", "replace", "update", "copy", "apply", "set", "touch",
];

/// Nodes of an MCP input looked at, at most (inputs are small; this bounds a hostile one).
const MAX_NODES: usize = 2000;

fn mcp(name: &str, input: &Value, call: &mut ToolCall) {
    let tool = name
        .rsplit("__")
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let writes = WRITE_VERBS.iter().any(|v| tool.contains(v));
    let runs = [
        "exec", "run", "shell", "terminal", "command", "bash", "spawn", "process",
    ]
    .iter()
    .any(|v| name.to_ascii_lowercase().contains(v));
    let mut budget = MAX_NODES;
    walk(input, None, writes, call, 0, &mut budget);
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
}

fn walk(
    v: &Value,
    key: Option<&str>,
    writes: bool,
    call: &mut ToolCall,
    depth: usize,
    budget: &mut usize,
) {
    if depth > 8 || *budget == 0 {
        return;
    }
    *budget -= 1;
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                walk(x, Some(k), writes, call, depth + 1, budget);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, key, writes, call, depth + 1, budget);
            }
        }
        Value::String(s) => {
            let Some(k) = key else { return };
            if k == "cwd" || k == "workdir" || k == "working_directory" {
                call.cwd = Some(s.clone());
            } else if COMMAND_KEYS.contains(&k) {
                call.commands.push(s.clone());
            } else if URL_KEYS.contains(&k) || s.starts_with("file://") {
                call.urls.push(s.clone());
            } else if PATH_KEYS.contains(&k) {
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
