//! `@scenario` markers: where they are, and which test each one sits on.

use serde::Serialize;

use crate::error::Result;
use crate::repo::Project;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Marker {
    /// `None` for a bare `@scenario <id>`, which marks that id in any change.
    pub change: Option<String>,
    pub id: String,
    pub file: String,
    pub line: usize,
    /// The test the marker annotates, when it can be read off the following lines: a
    /// function, a JS test title, or a group (Python class, `describe` title, Rust module),
    /// which then covers the tests inside it.
    pub test: Option<String>,
    /// What the test sits in, outermost first: Python classes, `describe` titles, inline Rust
    /// modules. With the file it names exactly one test.
    pub scope: Vec<String>,
}

const MARKER: &[u8] = b"@scenario";

/// Files that document rather than test: a marker in prose proves nothing.
const DOC_EXTENSIONS: [&str; 5] = ["md", "markdown", "rst", "txt", "adoc"];

/// Finds every `@scenario` marker in the project's files, honouring `.gitignore` and skipping
/// hidden folders (`.git`, `.forge`, `.tmp`), OpenSpec specs and documentation files.
pub fn scan_markers(project: &Project) -> Result<Vec<Marker>> {
    let finder = memchr::memmem::Finder::new(MARKER);
    let mut markers = Vec::new();
    let walker = ignore::WalkBuilder::new(&project.root)
        .hidden(true)
        .git_ignore(true)
        .require_git(false)
        .parents(false)
        .build();
    let openspec = project.root.join("openspec");
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if path.starts_with(&openspec)
            || path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| DOC_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        if finder.find(&bytes).is_none() {
            continue;
        }
        let rel = project.rel(path);
        markers_in(&bytes, &rel, &mut markers);
    }
    markers.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(markers)
}

/// Markers in one file's bytes.
pub fn markers_in(bytes: &[u8], file: &str, out: &mut Vec<Marker>) {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let mut rest = *line;
        while let Some(pos) = rest.find("@scenario") {
            let after = &rest[pos + MARKER.len()..];
            rest = after;
            if !after.starts_with([' ', '\t', ':']) {
                continue;
            }
            let token: String = after
                .trim_start_matches([' ', '\t', ':'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
                .collect();
            let token = token.trim_end_matches(['.', '/']);
            if token.is_empty() {
                continue;
            }
            let (change, id) = match token.rsplit_once('/') {
                Some((c, id)) => (Some(c.to_string()), id.to_string()),
                None => (None, token.to_string()),
            };
            if id.is_empty() {
                continue;
            }
            let before = &line[..line.len() - after.len() - MARKER.len()];
            let found = test_name_in(before).map(|t| (i, t)).or_else(|| {
                lines[i + 1..]
                    .iter()
                    .take(12)
                    .enumerate()
                    .find_map(|(k, l)| test_name_in(l).map(|t| (i + 1 + k, t)))
            });
            let (test, scope) = match found {
                Some((at, t)) => (Some(t), scope_of(&lines, at, file)),
                None => (None, Vec::new()),
            };
            out.push(Marker {
                change,
                id,
                file: file.to_string(),
                line: i + 1,
                test,
                scope,
            });
        }
    }
}

/// The name a test definition on this line gives: `fn name`, `def name`, `func Name`,
/// `it("name"`, `test('name'`.
fn test_name_in(line: &str) -> Option<String> {
    let t = line.trim_start();
    if t.starts_with("//") || t.starts_with('#') && !t.starts_with("#[") {
        return None;
    }
    for kw in ["fn ", "def ", "func ", "class ", "mod "] {
        if let Some(pos) = find_word(t, kw) {
            let after = t[pos + kw.len()..].trim_start();
            // `func (r *T) Name(` — a method: skip the receiver.
            let after = if kw == "func " && after.starts_with('(') {
                after
                    .split_once(')')
                    .map(|(_, r)| r.trim_start())
                    .unwrap_or(after)
            } else {
                after
            };
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                return Some(name);
            }
        }
    }
    for call in [
        "it(",
        "test(",
        "it.only(",
        "test.only(",
        "it.skip(",
        "test.skip(",
        "describe(",
        "describe.only(",
        "describe.skip(",
    ] {
        if let Some(pos) = find_word(t, call) {
            let after = t[pos + call.len()..].trim_start();
            let quote = after.chars().next()?;
            if matches!(quote, '"' | '\'' | '`') {
                let body = &after[1..];
                if let Some(end) = body.find(quote) {
                    return Some(body[..end].to_string());
                }
            }
        }
    }
    None
}

/// Position of `word` in `s` where it starts a word (not inside an identifier).
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(word) {
        let at = from + p;
        let prev = s[..at].chars().last();
        if prev.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The groups enclosing the definition on line `at`, outermost first, read by indentation
/// (as formatters lay code out): Python `class`, JS `describe(…)`, Rust inline `mod`.
fn scope_of(lines: &[&str], at: usize, file: &str) -> Vec<String> {
    let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
    let kind = match ext {
        "py" => "class ",
        "rs" => "mod ",
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => "describe(",
        _ => return Vec::new(),
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut threshold = indent(lines[at]);
    let mut out = Vec::new();
    for l in lines[..at].iter().rev() {
        if threshold == 0 {
            break;
        }
        let t = l.trim_start();
        if t.is_empty() || indent(l) >= threshold {
            continue;
        }
        // Comments, decorators and attributes sit beside a definition, not around it.
        if t.starts_with('#')
            || t.starts_with("//")
            || t.starts_with('@')
            || t.starts_with('*')
            || t.starts_with("/*")
        {
            continue;
        }
        threshold = indent(l);
        if let Some(pos) = find_word(t, kind)
            && let Some(name) = test_name_in(&t[pos..])
        {
            out.push(name);
        }
    }
    out.reverse();
    out
}
