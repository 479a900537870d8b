//! Agent tool calls as the guard sees them, whatever each agent calls its tools: a shell
//! command, files written, files read, a URL fetched — and for MCP tools (`mcp__server__tool`),
//! whatever commands, paths and URLs their input carries, found by the input's keys.

use serde_json::Value;

use crate::guard::paths::{file_url_paths, fold};

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
            let url = field(&["url"]);
            // A `file:` URL is read as Node reads it (red team, round 13: `FILE://…/.env`).
            if let Some(paths) = url.as_deref().and_then(file_url_paths) {
                call.read.extend(paths);
            }
            call.urls.extend(url);
        }
        _ if name.starts_with("mcp__") => mcp(name, input, &mut call)?,
        _ => {}
    }
    Ok(call)
}

/// Keys whose string value is a shell command. Every list of keys is compared with the key
/// folded ([`fold`]): a server may match keys without case (Go's `encoding/json` takes
/// `Command`, even `ſcript`, for `script`).
const COMMAND_KEYS: [&str; 8] = [
    "command",
    "cmd",
    "script",
    "shell",
    "bash",
    "commandline",
    "command_line",
    "shell_command",
];
/// Keys whose string value is the folder the tool works in.
const FOLDER_KEYS: [&str; 5] = [
    "cwd",
    "workdir",
    "working_directory",
    "workingdirectory",
    "working_dir",
];
/// Keys whose string value is a file or folder without saying so; so is any key whose name holds
/// `path`, `file`, `dir` or `folder` (`relative_path`, `pathInProject`, `output_file`,
/// `target_dir`).
const PATH_KEYS: [&str; 11] = [
    "source",
    "destination",
    "dest",
    "target",
    "root",
    "output",
    "location",
    "src",
    "dst",
    "from",
    "to",
];
/// Last words of keys whose string value is a URL (`url`, `resourceUri`, `target_url`).
const URL_WORDS: [&str; 8] = [
    "url", "uri", "urls", "uris", "href", "link", "links", "endpoint",
];
/// Words of keys whose value is text — written into a file, searched for, sent, shown — or
/// names to leave out, never a file the tool acts on: `content`, `oldText`, `new_string`,
/// `excludePatterns`, an issue's `title`. A path-shaped value under any other key is taken as a
/// path (`// b` in an edit's `newText` is code). A trailing `s` is ignored. The first four mean
/// contents even after a path word (`file_content`).
const DATA_WORDS: [&str; 30] = [
    "content",
    "text",
    "body",
    "data",
    "message",
    "description",
    "title",
    "comment",
    "summary",
    "note",
    "string",
    "regex",
    "pattern",
    "query",
    "q",
    "search",
    "needle",
    "replacement",
    "repl",
    "selector",
    "xpath",
    "code",
    "function",
    "expression",
    "prompt",
    "instruction",
    "thought",
    "observation",
    "exclude",
    "ignore",
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
/// The longest file name a file system takes: a longer value is no bare name.
const NAME_MAX: usize = 255;

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

/// What a key says its string value is. A key that says nothing (`value`, `name`) passes on
/// what its parent's key said: `{"path": {"value": "…"}}` is a path (red team, round 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folder,
    Command,
    Url,
    Path,
    Data,
    Unsaid,
}

fn key_kind(k: &str) -> Kind {
    let folded = fold(k);
    let key = folded.as_str();
    // Words as written (`pathInProject`), letters outside ASCII folded (`ſource`).
    let spelled: String = k
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                fold(&c.to_string())
            }
        })
        .collect();
    let words = name_words(&spelled);
    let data = |w: &String| one_of(w, &DATA_WORDS);
    if FOLDER_KEYS.contains(&key) {
        Kind::Folder
    } else if COMMAND_KEYS.contains(&key) {
        Kind::Command
    } else if words
        .last()
        .is_some_and(|w| URL_WORDS.contains(&w.as_str()))
    {
        Kind::Url
    // A last word that means contents wins over path words: `file_content` is content,
    // `content_path` a path, `filename_pattern` a path too.
    } else if words.last().is_some_and(|w| one_of(w, &DATA_WORDS[..4])) {
        Kind::Data
    } else if PATH_KEYS.contains(&key)
        || ["path", "file", "dir", "folder"]
            .iter()
            .any(|w| key.contains(w))
    {
        Kind::Path
    } else if words.iter().any(data) {
        Kind::Data
    } else {
        Kind::Unsaid
    }
}

/// `w` is one of `list`, or its plural.
fn one_of(w: &str, list: &[&str]) -> bool {
    list.iter()
        .any(|d| w == *d || w.strip_suffix('s') == Some(*d))
}

/// A value that names a file whatever its key: absolute, from home, `./` or `../`, with a `/`
/// in it, or a dotfile (`.env`, `.git`). One line only: text is not a name.
fn path_shaped(s: &str) -> bool {
    !s.is_empty()
        && !s.contains('\n')
        && (s.starts_with('/')
            || s == "~"
            || s.starts_with("~/")
            || s.starts_with('.')
            || s.contains('/'))
}

/// `http://` or `https://`, in any case.
fn is_http(s: &str) -> bool {
    let starts = |p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    starts("http://") || starts("https://")
}

/// `https:`, `s3:`, `file:` (two letters at least: `C:` is a drive).
fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn mcp(name: &str, input: &Value, call: &mut ToolCall) -> std::result::Result<(), String> {
    match input {
        Value::Object(_) => {}
        // A tool without parameters: nothing to judge.
        Value::Null => return Ok(()),
        _ => return Err(format!("{name} input is not a JSON object")),
    }
    let runs = [
        "exec", "run", "shell", "terminal", "command", "bash", "spawn", "process",
    ]
    .iter()
    .any(|v| name.to_ascii_lowercase().contains(v));
    let mut walk = Walk {
        writes: !only_reads(name),
        call,
        bare: Vec::new(),
        budget: MAX_NODES,
    };
    if !walk.value(input, Kind::Unsaid, 0) {
        return Err(format!(
            "{name} input is larger or deeper than Forge reads ({MAX_NODES} values, depth {MAX_DEPTH})"
        ));
    }
    let (writes, bare) = (walk.writes, std::mem::take(&mut walk.bare));
    // A folder the tool works in, and the bare names beside it (`{"cwd": ".git", "name":
    // "config"}`): a tool that writes writes a file in that folder, one that reads reads there;
    // a name may be one in it (red team, round 13). A tool that runs a command is judged by the
    // command, in that folder.
    if !call.folders.is_empty() && call.commands.is_empty() {
        for f in call.folders.clone() {
            if writes {
                call.placeholders
                    .push(format!("{}/_", f.trim_end_matches('/')));
            } else {
                call.read.push(f);
            }
        }
        if writes {
            call.maybe_written.extend(bare);
        } else {
            call.read.extend(bare);
        }
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

/// One pass over an MCP input, collecting what its values name into `call`.
struct Walk<'a> {
    /// The tool writes what its paths name (else it only reads them).
    writes: bool,
    call: &'a mut ToolCall,
    /// One-line values under keys that say nothing, which are not path-shaped: names a folder
    /// of the input may hold.
    bare: Vec<String>,
    /// Values still to be looked at.
    budget: usize,
}

impl Walk<'_> {
    /// Collects what `v`, under a key of `kind`, names; false when the input is past the
    /// bounds (nothing after that point was looked at).
    fn value(&mut self, v: &Value, kind: Kind, depth: usize) -> bool {
        if depth > MAX_DEPTH || self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    // A key that is a path names a file, and its value is what goes in it:
                    // `{"files": {".git/config": "…"}}`.
                    let named = path_shaped(k) && matches!(kind, Kind::Path | Kind::Unsaid);
                    if named {
                        self.path(k.clone(), self.writes, kind != Kind::Path);
                    }
                    let own = if named { Kind::Data } else { key_kind(k) };
                    let kind = if own == Kind::Unsaid { kind } else { own };
                    if !self.value(x, kind, depth + 1) {
                        return false;
                    }
                }
            }
            Value::Array(a) => {
                for x in a {
                    if !self.value(x, kind, depth + 1) {
                        return false;
                    }
                }
            }
            Value::String(s) => self.string(s, kind),
            _ => {}
        }
        true
    }

    fn string(&mut self, s: &str, kind: Kind) {
        match kind {
            Kind::Folder => {
                self.call.cwd.get_or_insert_with(|| s.to_string());
                self.call.folders.push(s.to_string());
                return;
            }
            Kind::Command => {
                self.call.commands.push(s.to_string());
                return;
            }
            _ => {}
        }
        // A `file:` URL is a path, whatever its key (red team, round 13); under a data key it is
        // only read, as before.
        if let Some(paths) = file_url_paths(s) {
            let writes = self.writes && kind != Kind::Data;
            for p in paths {
                self.path(p, writes, false);
            }
            return;
        }
        let http = is_http(s);
        let scheme = has_scheme(s);
        match kind {
            // A URL key's value without a scheme is a path (`{"uri": ".git/config"}`); it stays
            // a URL too, for the metadata endpoints.
            Kind::Url => {
                self.call.urls.push(s.to_string());
                if !scheme {
                    self.path(s.to_string(), self.writes, false);
                }
            }
            Kind::Path => {
                if http {
                    self.call.urls.push(s.to_string());
                }
                self.path(s.to_string(), self.writes, false);
            }
            Kind::Data => {
                if http {
                    self.call.urls.push(s.to_string());
                }
            }
            _ => {
                if http {
                    self.call.urls.push(s.to_string());
                    return;
                }
                // Whatever the key (`name`, `document`, `key`): a path-shaped value is a path of
                // the tool (red team, round 13), and so is one after `=` (`--output=/x`).
                let t = s.trim();
                let after_eq = t.split_once('=').map(|(_, v)| v);
                let shaped: Vec<&str> = [t, after_eq.unwrap_or_default()]
                    .into_iter()
                    .filter(|p| path_shaped(p))
                    .collect();
                for p in &shaped {
                    self.path(p.to_string(), self.writes, true);
                }
                if shaped.is_empty() && !t.is_empty() && t.len() <= NAME_MAX && !t.contains('\n') {
                    self.bare.push(t.to_string());
                }
            }
        }
    }

    /// A path of the tool, written or read; `guessed` when only its shape says it is one.
    /// Trimmed too, as a server that tidies its input reads it (`" .git/config"`).
    fn path(&mut self, p: String, writes: bool, guessed: bool) {
        let trimmed = p.trim();
        let mut paths = vec![p.clone()];
        if trimmed != p && !trimmed.is_empty() {
            paths.push(trimmed.to_string());
        }
        let to = match (writes, guessed) {
            (true, false) => &mut self.call.written,
            (true, true) => &mut self.call.maybe_written,
            (false, _) => &mut self.call.read,
        };
        to.extend(paths);
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
    fn keys_say_what_their_values_are() {
        for (key, kind) in [
            ("cwd", Kind::Folder),
            ("WorkDir", Kind::Folder),
            ("Command", Kind::Command),
            ("\u{17f}cript", Kind::Command),
            ("resourceUri", Kind::Url),
            ("target_url", Kind::Url),
            ("file_content", Kind::Data),
            ("content_path", Kind::Path),
            ("pathInProject", Kind::Path),
            ("DESTINATION", Kind::Path),
            ("oldText", Kind::Data),
            ("excludePatterns", Kind::Data),
            ("name", Kind::Unsaid),
            ("value", Kind::Unsaid),
        ] {
            assert_eq!(key_kind(key), kind, "{key}");
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
