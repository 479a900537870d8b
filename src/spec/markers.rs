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

impl Marker {
    /// What this marker ties to, in the words both `forge change scenarios` and verify's
    /// coverage use: one place decides, so a listing cannot call a marker fine that verify
    /// then finds tied to nothing.
    pub fn describe(&self) -> String {
        match &self.test {
            Some(t) => format!("marked at {}:{} on test {t}", self.file, self.line),
            None => format!(
                "marked at {}:{}, not on a test Forge can identify: it ties to nothing; put it on the line above the test's definition ({MARKABLE})",
                self.file, self.line
            ),
        }
    }
}

/// The definitions a marker can sit on, as a person reads them in advice.
pub const MARKABLE: &str = "fn, def, func, fun, void, function, name() {, class, mod, it/test/describe/context, bats @test";

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
            let found = test_name_in(before)
                .map(|t| (i, t))
                .or_else(|| definition_below(&lines, i));
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

/// The test definition a marker on line `at` sits above: the first within 12 lines — unless
/// code that defines nothing comes first and then another marker, which then is the one above
/// that definition (a marker on a line of shell must not borrow the next marker's test).
/// Markers stacked directly on one definition all sit on it.
fn definition_below(lines: &[&str], at: usize) -> Option<(usize, String)> {
    let mut code_between = false;
    for (k, l) in lines[at + 1..].iter().take(12).enumerate() {
        if let Some(t) = test_name_in(l) {
            return Some((at + 1 + k, t));
        }
        if l.contains("@scenario") {
            if code_between {
                return None;
            }
            continue;
        }
        let t = l.trim_start();
        let comment =
            t.starts_with("//") || t.starts_with('#') || t.starts_with("/*") || t.starts_with('*');
        if !t.is_empty() && !comment && !t.starts_with('@') {
            code_between = true;
        }
    }
    None
}

/// The name a test definition on this line gives: `fn name`, `def name`, `func Name`,
/// `it("name"`, `test('name'`; RSpec's and ExUnit's `it "name" do`, `test "name" do`; bats'
/// `@test "name" {`; JUnit's `void name(`, Kotlin's `fun name(` (or `` fun `a name`( ``),
/// PHPUnit's and shell's `function name`, a shell function `name() {`.
fn test_name_in(line: &str) -> Option<String> {
    let t = line.trim_start();
    if t.starts_with("//") || t.starts_with('#') && !t.starts_with("#[") {
        return None;
    }
    if let Some(after) = t.strip_prefix("@test ") {
        return quoted(after.trim_start());
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
    // RSpec and ExUnit blocks: `it "name" do`, `test "name" do`, `describe "x" do`. The line
    // must start with the word, so shell's `test "$a" = b` inside a function is not one.
    for word in ["it ", "test ", "describe ", "context ", "specify "] {
        if let Some(after) = t.strip_prefix(word)
            && (t.trim_end().ends_with(" do") || t.contains(" do |") || t.contains(", do:"))
            && let Some(name) = quoted(after.trim_start())
        {
            return Some(name);
        }
    }
    // JUnit (`@Test void total()`, `public void testTotal()`), Kotlin (`fun total()`,
    // `` fun `total is summed`() ``), PHPUnit and shell (`function testTotal()`,
    // `function check {`).
    for kw in ["void ", "fun ", "function "] {
        if let Some(pos) = find_word(t, kw) {
            let after = t[pos + kw.len()..].trim_start();
            if let Some(body) = after.strip_prefix('`') {
                if let Some(end) = body.find('`') {
                    return Some(body[..end].to_string());
                }
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            if !name.is_empty() {
                return Some(name);
            }
        }
    }
    // A shell function: `name() {` or `name () {`, at the start of the line.
    let name: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    if !name.is_empty() {
        let rest = t[name.len()..].trim_start();
        if let Some(body) = rest.strip_prefix("()")
            && (body.trim_start().starts_with('{') || body.trim().is_empty())
        {
            return Some(name);
        }
    }
    None
}

/// The text of a leading `"…"` or `'…'` string.
fn quoted(s: &str) -> Option<String> {
    let q = s.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = &s[1..];
    body.find(q).map(|end| body[..end].to_string())
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
