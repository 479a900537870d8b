//! MCP tools (`mcp__server__tool`) as the guard reads them: their inputs carry commands, paths
//! and URLs under keys each server names its own way, so the walk here goes by what a key's
//! words say (`cwd`, `file_content`, `target_url`) and by what a value looks like, within bounds.

use serde_json::Value;

use crate::guard::paths::{file_url_paths, fold};
use crate::guard::servers;
use crate::guard::tool_code::{self, Runs};
use crate::guard::tools::ToolCall;

/// Keys whose string value is a shell command. Every list of keys is compared with the key
/// folded ([`fold`]): a server may match keys without case (Go's `encoding/json` takes
/// `Command`, even `ſcript`, for `script`). Other keys are commands by their words
/// ([`COMMAND_WORDS`]).
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
/// Words of keys whose value is a command line (red team, round 14: `commands`, `cmds`,
/// `shellCommand`, `commandString`, `command_text`, `cmdline`, `cli_command` were data): a key
/// with one of them and ending in one of them or in [`COMMAND_ENDS`] (`command_description`
/// is text about a command). The last three only in a tool that runs what it is given
/// (`steps[].run`, `line`, `sh` of `mcp__shell__execute`): elsewhere they are ordinary words.
const COMMAND_WORDS: [&str; 10] = [
    "command",
    "cmd",
    "script",
    "shell",
    "bash",
    "commandline",
    "cmdline",
    "run",
    "line",
    "sh",
];
const COMMAND_ENDS: [&str; 3] = ["text", "string", "str"];
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
const PATH_KEYS: [&str; 10] = [
    "source",
    "destination",
    "dest",
    "target",
    "output",
    "location",
    "src",
    "dst",
    "from",
    "to",
];
/// Words of keys whose value is a folder other paths are taken in, like `cwd` (red team, round
/// 14: `{"root": R, "path": ".mcp.json"}` was judged in the session's folder): a first word
/// `workspace`, `project`, `base`, `root`, or a last word `root` or `dir` after another word
/// (`project_root`, `target_dir`).
const BASE_FIRST: [&str; 4] = ["workspace", "project", "base", "root"];
const BASE_LAST: [&str; 4] = ["root", "dir", "directory", "folder"];
/// Last words of keys whose string value is a URL (`url`, `resourceUri`, `target_url`).
const URL_WORDS: [&str; 8] = [
    "url", "uri", "urls", "uris", "href", "link", "links", "endpoint",
];
/// Words of keys whose value is text — written into a file, searched for, sent, shown — or
/// names to leave out, never a file the tool acts on: `content`, `oldText`, `new_string`,
/// `excludePatterns`, an issue's `title`. A path-shaped value under any other key is taken as a
/// path (`// b` in an edit's `newText` is code). A trailing `s` is ignored. The first four mean
/// contents even after a path word (`file_content`).
/// `field`, `form` and `library` (red team, round 14, false positives): a form's values and a
/// library's name (`/vercel/next.js`) are data.
const DATA_WORDS: [&str; 33] = [
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
    "field",
    "form",
    "library",
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
pub(super) fn name_words(name: &str) -> Vec<String> {
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
pub(super) fn only_reads(name: &str) -> bool {
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
    /// A path the tool reads its input from, even when it writes (`input_path`, `source`):
    /// a converter reading `.env` copies the secret (red team, round 14).
    Source,
    /// Code, in a tool that runs it, in the language the key names (if it does).
    Code(Option<&'static str>),
    Data,
    Unsaid,
}

/// Words of a path key that say the tool reads from it.
const SOURCE_WORDS: [&str; 5] = ["source", "src", "input", "from", "origin"];

fn key_kind(k: &str, runs: Runs) -> Kind {
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
    let command_words = if runs.executes {
        &COMMAND_WORDS[..]
    } else {
        &COMMAND_WORDS[..7]
    };
    let last = words.last().map(String::as_str).unwrap_or("");
    let named_path = ["path", "file", "dir", "folder"]
        .iter()
        .any(|w| key.contains(w));
    let pathish = PATH_KEYS.contains(&key) || named_path;
    let command = words.iter().any(|w| one_of(w, command_words))
        && (one_of(last, command_words) || COMMAND_ENDS.contains(&last))
        && !pathish;
    let base = words.len() > 1 && BASE_LAST.contains(&last)
        || words
            .first()
            .is_some_and(|w| BASE_FIRST.contains(&w.as_str()));
    if FOLDER_KEYS.contains(&key) {
        Kind::Folder
    } else if COMMAND_KEYS.contains(&key) || command {
        Kind::Command
    } else if URL_WORDS.contains(&last) {
        Kind::Url
    } else if base {
        Kind::Folder
    } else if let Some(lang) = tool_code::code_key(&words).filter(|_| runs.executes && !named_path)
    {
        Kind::Code(lang)
    // A last word that means contents wins over path words: `file_content` is content,
    // `content_path` a path, `filename_pattern` a path too.
    } else if one_of(last, &DATA_WORDS[..4]) {
        Kind::Data
    } else if pathish {
        if words.iter().any(|w| SOURCE_WORDS.contains(&w.as_str())) {
            Kind::Source
        } else {
            Kind::Path
        }
    } else if words.iter().any(data) {
        Kind::Data
    } else {
        Kind::Unsaid
    }
}

/// `w` is one of `list`, or its plural.
pub(super) fn one_of(w: &str, list: &[&str]) -> bool {
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
pub(super) fn is_http(s: &str) -> bool {
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

pub(super) fn mcp(
    name: &str,
    input: &Value,
    call: &mut ToolCall,
    writes: bool,
) -> std::result::Result<(), String> {
    match input {
        Value::Object(_) => {}
        // A tool without parameters: nothing to judge.
        Value::Null => return Ok(()),
        _ => return Err(format!("{name} input is not a JSON object")),
    }
    let words = name_words(name);
    let runs = Runs::of(&words);
    let spawns = runs.executes
        || [
            "exec", "run", "shell", "terminal", "command", "bash", "spawn", "process",
        ]
        .iter()
        .any(|v| name.to_ascii_lowercase().contains(v));
    let mut walk = Walk {
        writes,
        call,
        bare: Vec::new(),
        budget: MAX_NODES,
        runs,
        code: Vec::new(),
        remote: remote_repo(name, input),
    };
    if !walk.value(input, Kind::Unsaid, 0) {
        return Err(format!(
            "{name} input is larger or deeper than Forge reads ({MAX_NODES} values, depth {MAX_DEPTH})"
        ));
    }
    let (bare, code) = (
        std::mem::take(&mut walk.bare),
        std::mem::take(&mut walk.code),
    );
    // Bare names are judged by name where they may land (red team, round 14:
    // `{"name": "server.key"}`).
    call.names.extend(bare.iter().cloned());
    // A folder the tool works in, and the bare names beside it (`{"cwd": ".git", "name":
    // "config"}`): a tool that writes writes a file in that folder, one that reads reads there;
    // a name may be one in it (red team, round 13). A tool that runs a command is judged by the
    // command, in that folder.
    if !call.folders.is_empty() && call.commands.is_empty() && code.is_empty() {
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
    // `{"command": "sh", "args": ["-c", "rm -rf ~"]}`: the whole argument vector is the
    // command, judged as if the server ran it through a shell, its most dangerous reading.
    if let Some(o) = input.as_object()
        && let Some((line, program)) = tool_code::argv_line(o, spawns)
    {
        call.commands.retain(|c| Some(c) != program.as_ref());
        call.commands.push(line);
    }
    // A git server's call is the git command it runs; what a server's tool destroys beyond
    // the files it names is asked about (`servers.rs`).
    if let Some(o) = input.as_object()
        && let Some(line) = servers::git_line(name, o)
    {
        call.commands.push(line);
    }
    call.destroys.extend(servers::destroys(name, input));
    // Code the tool runs, written as the interpreter call that would run it.
    let lang = tool_code::sibling_lang(input).or(runs.lang);
    let mut judged = tool_code::Judged::default();
    for (own, text) in &code {
        tool_code::judge_code(text, own.or(lang), runs.feeds, &mut judged);
    }
    call.commands.extend(judged.commands);
    call.readings.extend(judged.readings);
    call.unjudged.extend(judged.unjudged);
    if runs.executes {
        for c in &call.commands {
            if tool_code::starts_interactive(c) {
                call.unjudged.push(format!(
                    "this starts `{c}`, which waits for input Forge will not see (what is typed into it later runs unjudged); a person decides"
                ));
            }
        }
        // An IDE's run configuration is a command line stored in the project
        // (`.idea/runConfigurations/`, `.vscode/launch.json`), which Forge does not read.
        if words
            .iter()
            .any(|w| one_of(w, &["configuration", "config", "task"]))
        {
            call.unjudged.push(format!(
                "`{name}` runs a configuration the IDE stores, whose command Forge does not read; a person decides"
            ));
        }
    }
    Ok(())
}

/// A forge's server (GitHub, GitLab, …) called with a remote repository (`owner` and `repo`,
/// or a GitLab `project_id`): its relative paths are files of that repository, not of this
/// machine (false positives of round 14: `create_or_update_file` of `.vscode/settings.json`,
/// `get_file_contents` of `.env.production` in someone's repository). The server's name comes
/// from the person's MCP config, not from the agent, so an input cannot claim it.
fn remote_repo(name: &str, input: &Value) -> bool {
    let server = name
        .strip_prefix("mcp__")
        .and_then(|r| r.split("__").next())
        .unwrap_or("")
        .to_ascii_lowercase();
    let forge = [
        "github",
        "gitlab",
        "gitea",
        "bitbucket",
        "forgejo",
        "codeberg",
    ]
    .iter()
    .any(|f| server.contains(f));
    let has = |keys: &[&str]| {
        keys.iter().any(|k| {
            input
                .get(*k)
                .and_then(|v| v.as_str())
                .is_some_and(|s| !s.trim().is_empty())
        })
    };
    forge
        && (has(&["owner", "org", "organization", "namespace"]) && has(&["repo", "repository"])
            || has(&["project_id", "projectId"]))
}

/// `/host/path:/in/container[:ro]`: the host's half of a mount (false positive of round 14:
/// `volumes: ["R:/app"]` was the path `R:/app`).
fn mount_host(s: &str) -> Option<&str> {
    let parts: Vec<&str> = s.split(':').collect();
    let opts_ok = parts
        .get(2)
        .is_none_or(|o| !o.contains('/') && !o.is_empty());
    (matches!(parts.len(), 2 | 3)
        && (parts[0].starts_with(['/', '~', '.']))
        && parts[1].starts_with('/')
        && opts_ok)
        .then_some(parts[0])
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
    /// What the tool's name says it runs.
    runs: Runs,
    /// Code the tool runs, with the language its key names.
    code: Vec<(Option<&'static str>, String)>,
    /// Relative paths are a remote repository's ([`remote_repo`]).
    remote: bool,
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
                    let own = if named {
                        Kind::Data
                    } else {
                        key_kind(k, self.runs)
                    };
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
            Kind::Code(lang) => {
                self.code.push((lang, s.to_string()));
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
            Kind::Path | Kind::Source => {
                if http {
                    self.call.urls.push(s.to_string());
                }
                self.path(s.to_string(), self.writes, false);
                if kind == Kind::Source && self.writes {
                    self.path(s.to_string(), false, false);
                }
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
    /// Trimmed too, as a server that tidies its input reads it (`" .git/config"`). A mount's
    /// host half only; a remote repository's relative paths not at all.
    fn path(&mut self, p: String, writes: bool, guessed: bool) {
        let p = mount_host(&p).map(str::to_string).unwrap_or(p);
        let trimmed = p.trim();
        if self.remote && !trimmed.starts_with(['/', '~']) {
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(key_kind(key, Runs::default()), kind, "{key}");
        }
    }
}
