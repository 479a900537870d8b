//! Compile diagnostics, for the one red that cannot fail any other way: in a compiled language
//! a test of a function that does not exist yet does not compile, and red may not add a stub.
//! This file reads what a compiler printed (every error line, where it points, whether it only
//! says a name does not exist) and which tests a source file declares; whether that makes a red
//! is for the gate (`run::gates::red::new_api`) to judge.
//!
//! What Forge knows per language is one row of [`LANGS`], with examples a unit test checks:
//! the codes or messages that mean "no such name", the words that make such an error a setup
//! error after all (a crate not linked), and how a test is declared.
//!
//! Output shapes read (all from real runs or the compilers' documented formats):
//! - rustc/cargo: `error[E0425]: cannot find function …` then ` --> tests/x.rs:3:5` (and
//!   `--message-format short`: `tests/x.rs:3:5: error[E0425]: …`);
//! - go: `./x_test.go:5:2: undefined: Kebab` under a `# pkg` line, plain or as `-json`
//!   `build-output` events (Go 1.24+);
//! - javac (and Gradle): `X.java:5: error: cannot find symbol`; Maven:
//!   `[ERROR] /abs/X.java:[5,25] cannot find symbol`;
//! - kotlinc: `X.kt:5:9: error: unresolved reference …`; Gradle: `e: file:///abs/X.kt:5:9
//!   Unresolved reference …`;
//! - tsc: `x.test.ts(1,10): error TS2305: …`, `x.test.ts:1:10 - error TS2305: …` (ts-jest).

/// One error a compiler printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file it points at, as printed (relative, `./x`, or absolute); `None` when it points
    /// nowhere (a linker error, a tool's own error).
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The error line as printed, trimmed.
    pub header: String,
    /// Whether it says only that a name does not exist yet: a `missing` row of its file's
    /// language matches, and no `setup` word appears in it.
    pub missing: bool,
}

/// What a compiler says when a name does not exist.
#[derive(Debug, Clone, Copy)]
enum Says {
    /// An error code (`E0425`, `TS2305`).
    Code(&'static str),
    /// Words the message contains (compared lowercase).
    Words(&'static str),
}

/// How a language declares a test, so that the test red added can be named.
#[derive(Debug, Clone, Copy)]
enum Declares {
    /// An attribute or annotation line holding `mark`, then the function: `#[test]` then
    /// `fn name`, `@Test` then `void name(`/`fun name(`.
    Marked {
        mark: &'static str,
        keyword: Option<&'static str>,
    },
    /// A function whose name has a prefix: `func TestName(`.
    Prefixed {
        keyword: &'static str,
        prefix: &'static str,
    },
    /// A call that names the test with a string: `it("…", …)`, `test('…', …)`.
    Called(&'static [&'static str]),
}

struct Lang {
    /// For the examples' test, which reads it and `examples`.
    #[cfg_attr(not(test), allow(dead_code))]
    name: &'static str,
    exts: &'static [&'static str],
    missing: &'static [Says],
    /// Words (lowercase) anywhere in the diagnostic that make a missing name a setup error: a
    /// library the project does not depend on is not new API a green could add.
    setup: &'static [&'static str],
    /// Whether an error line of this compiler says `error` itself; Go's say only where.
    says_error: bool,
    declares: Declares,
    /// Real diagnostics and whether each is a missing name (checked by a test).
    #[cfg_attr(not(test), allow(dead_code))]
    examples: &'static [(&'static str, bool)],
}

const LANGS: &[Lang] = &[
    Lang {
        name: "rust",
        exts: &["rs"],
        missing: &[
            Says::Code("E0412"),
            Says::Code("E0422"),
            Says::Code("E0425"),
            Says::Code("E0432"),
            Says::Code("E0433"),
            Says::Code("E0599"),
        ],
        setup: &[
            "unlinked crate",
            "undeclared crate",
            "module or crate",
            "cargo add",
        ],
        says_error: true,
        declares: Declares::Marked {
            mark: "test",
            keyword: Some("fn"),
        },
        examples: &[
            (
                "error[E0425]: cannot find function `kebab` in crate `words`\n --> tests/new_fn.rs:8:23",
                true,
            ),
            (
                "error[E0599]: no method named `kebab` found for struct `Words` in the current scope\n --> tests/new_fn.rs:9:22",
                true,
            ),
            (
                "error[E0432]: unresolved import `words::case`\n --> tests/new_fn.rs:2:12",
                true,
            ),
            (
                "error[E0432]: unresolved import `serde`\n --> tests/new_fn.rs:1:5\n  |\n1 | use serde::Serialize;\n  |     ^^^^^ use of unresolved module or unlinked crate `serde`",
                false,
            ),
            (
                "error[E0308]: mismatched types\n --> tests/new_fn.rs:4:25",
                false,
            ),
            (
                "error: no rules expected `\"a-b\"`\n --> tests/new_fn.rs:3:38",
                false,
            ),
        ],
    },
    Lang {
        name: "go",
        exts: &["go"],
        missing: &[Says::Words("undefined: "), Says::Words(" undefined (type ")],
        setup: &[],
        says_error: false,
        declares: Declares::Prefixed {
            keyword: "func",
            prefix: "Test",
        },
        examples: &[
            ("# m\n./checkout_test.go:12:12: undefined: ChargeCard", true),
            (
                "# m\n./kebab_test.go:7:4: w.Shout undefined (type Words has no field or method Shout)",
                true,
            ),
            (
                "# m\n./kebab_test.go:7:4: cannot use 1 (untyped int constant) as string value in argument to Kebab",
                false,
            ),
            (
                "# m\n./kebab_test.go:3:1: syntax error: non-declaration statement outside function body",
                false,
            ),
        ],
    },
    Lang {
        name: "java",
        exts: &["java"],
        missing: &[Says::Words("cannot find symbol")],
        setup: &[],
        says_error: true,
        declares: Declares::Marked {
            mark: "@Test",
            keyword: None,
        },
        examples: &[
            (
                "src/test/java/demo/WordsTest.java:5: error: cannot find symbol",
                true,
            ),
            (
                "[ERROR] /w/src/test/java/demo/WordsTest.java:[5,25] cannot find symbol",
                true,
            ),
            (
                "src/test/java/demo/WordsTest.java:2: error: package demo.util does not exist",
                false,
            ),
            (
                "src/test/java/demo/WordsTest.java:8: error: incompatible types: String cannot be converted to int",
                false,
            ),
        ],
    },
    Lang {
        name: "kotlin",
        exts: &["kt", "kts"],
        missing: &[Says::Words("unresolved reference")],
        setup: &[],
        says_error: true,
        declares: Declares::Marked {
            mark: "@Test",
            keyword: Some("fun"),
        },
        examples: &[
            (
                "e: file:///w/src/test/kotlin/WordsTest.kt:5:20 Unresolved reference 'kebab'.",
                true,
            ),
            (
                "e: /w/src/test/kotlin/WordsTest.kt: (5, 20): Unresolved reference: kebab",
                true,
            ),
            (
                "src/test/kotlin/WordsTest.kt:5:20: error: unresolved reference: kebab",
                true,
            ),
            (
                "e: file:///w/src/test/kotlin/WordsTest.kt:5:20 Type mismatch: inferred type is Int but String was expected",
                false,
            ),
        ],
    },
    Lang {
        name: "typescript",
        exts: &["ts", "tsx", "mts", "cts"],
        missing: &[
            Says::Code("TS2304"),
            Says::Code("TS2305"),
            Says::Code("TS2339"),
            Says::Code("TS2551"),
            Says::Code("TS2724"),
        ],
        setup: &[],
        says_error: true,
        declares: Declares::Called(&["it", "test"]),
        examples: &[
            (
                "tests/kebab.test.ts(1,10): error TS2305: Module '\"../src/words\"' has no exported member 'kebab'.",
                true,
            ),
            (
                "    tests/kebab.test.ts:4:18 - error TS2339: Property 'kebab' does not exist on type 'Words'.",
                true,
            ),
            (
                "tests/kebab.test.ts(4,18): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.",
                false,
            ),
            (
                "tests/kebab.test.ts(1,23): error TS2307: Cannot find module 'lodash' or its corresponding type declarations.",
                false,
            ),
        ],
    },
];

/// Lines at the start of a line that close a compile without being a diagnostic of their own.
const SUMMARIES: &[&str] = &[
    "error: could not compile ",
    "error: aborting due to ",
    // cargo-nextest, after cargo's own errors.
    "error: command `",
];

fn lang_of(path: &str) -> Option<&'static Lang> {
    let ext = path.rsplit_once('.')?.1;
    LANGS.iter().find(|l| l.exts.contains(&ext))
}

/// Every error diagnostic in a command's output (ANSI stripped). `go test -json` events are
/// read for their `build-output`; test output is never a diagnostic.
pub fn diagnostics(output: &str) -> Vec<Diagnostic> {
    let mut r = Reader::default();
    for line in output.lines() {
        let t = line.trim();
        if t.starts_with('{') {
            r.close();
            let v = serde_json::from_str::<serde_json::Value>(t).ok();
            match v
                .as_ref()
                .filter(|v| v.get("Action").and_then(|a| a.as_str()) == Some("build-output"))
            {
                Some(v) => {
                    for l in v
                        .get("Output")
                        .and_then(|o| o.as_str())
                        .unwrap_or("")
                        .lines()
                    {
                        r.line(l);
                    }
                }
                None => r.go_build = false,
            }
            continue;
        }
        r.line(line);
    }
    r.close();
    r.out
}

#[derive(Default)]
struct Reader {
    out: Vec<Diagnostic>,
    /// A rustc diagnostic being read: its index and text so far (its location comes on a later
    /// ` --> ` line, its cause words further down).
    block: Option<(usize, String, bool)>,
    /// Inside a Go build's output (after `# pkg`), where a located line is an error.
    go_build: bool,
}

impl Reader {
    fn line(&mut self, line: &str) {
        let t = line.trim();
        if line.starts_with("error[") || line.starts_with("error:") {
            self.close();
            self.go_build = false;
            if SUMMARIES.iter().any(|s| line.starts_with(s)) {
                return;
            }
            self.out.push(Diagnostic {
                file: None,
                line: None,
                header: t.to_string(),
                missing: false,
            });
            self.block = Some((self.out.len() - 1, t.to_string(), true));
            return;
        }
        // rustc ends a diagnostic with a blank line; its location is the line right after
        // the header (a later ` --> ` belongs to a note).
        if let Some((idx, text, first)) = &mut self.block {
            if !t.is_empty() && !line.starts_with("warning") {
                if std::mem::take(first)
                    && let Some(loc) = t.strip_prefix("--> ")
                {
                    let d = &mut self.out[*idx];
                    match split_location(loc.trim()) {
                        Some((file, l, _)) => {
                            d.file = Some(file);
                            d.line = Some(l);
                        }
                        None => d.file = Some(loc.trim().to_string()),
                    }
                } else if text.len() < 4000 {
                    text.push('\n');
                    text.push_str(line);
                }
                return;
            }
            self.close();
        }
        if is_go_build_header(t) {
            self.go_build = true;
            return;
        }
        match self.located(t) {
            Some(d) => self.out.push(d),
            // Go's build output ends at the first line that is neither a diagnostic nor its
            // indented continuation (`FAIL pkg [build failed]`).
            None if !line.starts_with([' ', '\t']) => self.go_build = false,
            None => {}
        }
    }

    /// A diagnostic on one line that says where it is.
    fn located(&self, t: &str) -> Option<Diagnostic> {
        let (body, marked) = match t.strip_prefix("[ERROR] ").or_else(|| t.strip_prefix("e: ")) {
            Some(b) => (b, true),
            None => (t.strip_prefix("vet: ").unwrap_or(t), false),
        };
        let body = body.strip_prefix("file://").unwrap_or(body);
        let (file, line, rest) = split_location(body)?;
        let lang = lang_of(&file)?;
        let said_error = rest.starts_with("error");
        if rest.starts_with("warning") || rest.starts_with("note") {
            return None;
        }
        let is_error = marked
            || said_error
            || (!lang.says_error && self.go_build && lang.exts.contains(&"go"));
        if !is_error {
            return None;
        }
        let mut d = Diagnostic {
            file: Some(file),
            line: Some(line),
            header: t.to_string(),
            missing: false,
        };
        d.missing = says_missing(lang, &rest, &rest);
        Some(d)
    }

    fn close(&mut self) {
        if let Some((idx, text, _)) = self.block.take() {
            let d = &mut self.out[idx];
            let header = d.header.clone();
            d.missing = d
                .file
                .as_deref()
                .and_then(lang_of)
                .is_some_and(|lang| says_missing(lang, &header, &text));
        }
    }
}

/// Whether `header` (the error line, code and message) says a name does not exist, in `lang`,
/// and nothing in `text` (the whole diagnostic) makes it a setup error.
fn says_missing(lang: &Lang, header: &str, text: &str) -> bool {
    let lower = header.to_lowercase();
    let code = error_code(header);
    let says = lang.missing.iter().any(|s| match s {
        Says::Code(c) => code == Some(*c),
        Says::Words(w) => lower.contains(&w.to_lowercase()),
    });
    let text = text.to_lowercase();
    says && !lang.setup.iter().any(|w| text.contains(w))
}

/// `# example.com/m [example.com/m.test]`, `# example.com/m`: the line Go opens a package's
/// build output with.
fn is_go_build_header(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("# ") else {
        return false;
    };
    !rest.is_empty()
        && rest.split_once(' ').is_none_or(|(pkg, b)| {
            !pkg.is_empty() && b.starts_with('[') && b.ends_with(']') && !b[1..].contains(' ')
        })
}

/// `E0425` of `error[E0425]: …`, `TS2305` of `error TS2305: …`.
fn error_code(s: &str) -> Option<&str> {
    if let Some(i) = s.find("error[") {
        let rest = &s[i + 6..];
        return rest.split_once(']').map(|(c, _)| c);
    }
    let i = s.find("error TS")?;
    let rest = &s[i + 6..];
    let end = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// `path:L[:C]…`, `path(L,C)…`, `path:[L,C]…`, `path: (L, C)…` at the start of `s`, where
/// `path` has no space and ends in a known source extension; the rest after the location
/// and its separator (`: `, ` - `, ` `).
fn split_location(s: &str) -> Option<(String, u32, String)> {
    let cut = s.char_indices().find_map(|(i, c)| {
        (matches!(c, ':' | '(') && lang_of(&s[..i]).is_some() && !s[..i].contains(' ')).then_some(i)
    })?;
    let path = &s[..cut];
    let after = &s[cut..];
    let after = after
        .strip_prefix(": (")
        .or_else(|| after.strip_prefix(":["))
        .or_else(|| after.strip_prefix('('))
        .or_else(|| after.strip_prefix(':'))?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let line = digits.parse::<u32>().ok()?;
    // Skip the column and the closing bracket, whatever their shape, up to the message.
    let rest = after[digits.len()..]
        .trim_start_matches(|c: char| c.is_ascii_digit() || ":,) ]".contains(c))
        .trim_start_matches("- ")
        .trim_start_matches(": ")
        .trim();
    Some((path.to_string(), line, rest.to_string()))
}

/// The tests `source` (the file at `path`) declares, by name; `None` when Forge does not
/// know how tests are declared in its language.
pub fn tests_declared(path: &str, source: &str) -> Option<Vec<String>> {
    let lang = lang_of(path)?;
    let mut names = Vec::new();
    match lang.declares {
        Declares::Marked { mark, keyword } => {
            let mut marked = false;
            for line in source.lines() {
                let mut t = line.trim();
                if t.is_empty() || t.starts_with("//") {
                    continue;
                }
                if t.starts_with("#[") || t.starts_with('@') {
                    let attr_end = attribute_end(t);
                    let attr = &t[..attr_end];
                    if is_mark(attr, mark) {
                        marked = true;
                    }
                    t = t[attr_end..].trim();
                    if t.is_empty() {
                        continue;
                    }
                }
                if marked && let Some(n) = declared_name(t, keyword) {
                    names.push(n);
                }
                marked = false;
            }
        }
        Declares::Prefixed { keyword, prefix } => {
            for line in source.lines() {
                if let Some(rest) = line.strip_prefix(keyword).and_then(|r| r.strip_prefix(' '))
                    && rest.starts_with(prefix)
                {
                    let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                    if rest[name.len()..].starts_with('(') {
                        names.push(name);
                    }
                }
            }
        }
        Declares::Called(calls) => {
            for line in source.lines() {
                for call in calls {
                    names.extend(called_names(line, call));
                }
            }
        }
    }
    Some(names)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the attribute or annotation that opens `t` ends: after its `]`, or after the
/// annotation's name and arguments.
fn attribute_end(t: &str) -> usize {
    if t.starts_with("#[") {
        let mut depth = 0;
        for (i, c) in t.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        return t.len();
    }
    let name_end = 1 + t[1..]
        .find(|c: char| !(is_ident(c) || c == '.'))
        .unwrap_or(t.len() - 1);
    if t[name_end..].starts_with('(') {
        let mut depth = 0;
        for (i, c) in t[name_end..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return name_end + i + 1;
                    }
                }
                _ => {}
            }
        }
        return t.len();
    }
    name_end
}

/// Whether the attribute `attr` marks a test: Rust's `#[test]`, `#[tokio::test]`,
/// `#[rstest]` (not `#[cfg(test)]`); JUnit's `@Test`, `@org.junit.jupiter.api.Test`.
fn is_mark(attr: &str, mark: &str) -> bool {
    if let Some(inner) = attr.strip_prefix("#[") {
        let path: String = inner
            .chars()
            .take_while(|c| is_ident(*c) || *c == ':')
            .collect();
        let last = path.rsplit("::").next().unwrap_or("");
        return last == mark || last.ends_with(mark) && !path.starts_with("cfg");
    }
    let name: String = attr
        .chars()
        .take_while(|c| is_ident(*c) || *c == '.' || *c == '@')
        .collect();
    name == mark || name.ends_with(&format!(".{}", &mark[1..]))
}

/// The function a declaration line names: `pub async fn name(`, `fun \`a name\`(`, `void
/// name(`.
fn declared_name(t: &str, keyword: Option<&str>) -> Option<String> {
    let rest = match keyword {
        Some(k) => {
            let i = t
                .match_indices(k)
                .find(|(i, _)| {
                    (*i == 0 || t[..*i].ends_with(' ')) && t[i + k.len()..].starts_with(' ')
                })?
                .0;
            t[i + k.len()..].trim_start()
        }
        None => {
            let open = t.find('(')?;
            let before = t[..open].trim_end();
            let start = before
                .rfind(|c: char| !is_ident(c))
                .map(|i| i + 1)
                .unwrap_or(0);
            return Some(before[start..].to_string()).filter(|n| !n.is_empty());
        }
    };
    if let Some(q) = rest.strip_prefix('`') {
        return q.split_once('`').map(|(n, _)| n.to_string());
    }
    let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
    (!name.is_empty()).then_some(name)
}

/// The names of `call("…", …)` calls in `line` (not `xit(`, not `.test(`).
fn called_names(line: &str, call: &str) -> Vec<String> {
    let mut out = Vec::new();
    let pat = format!("{call}(");
    for (i, _) in line.match_indices(&pat) {
        let prev = line[..i].chars().next_back();
        if prev.is_some_and(|c| is_ident(c) || c == '.') {
            continue;
        }
        let rest = line[i + pat.len()..].trim_start();
        let Some(q) = rest.chars().next().filter(|c| "'\"`".contains(*c)) else {
            continue;
        };
        if let Some((name, _)) = rest[1..].split_once(q) {
            out.push(name.to_string());
        }
    }
    out
}

/// The tests `after` declares that `before` (the same file before red; `None` for a new
/// file) did not; `None` when Forge does not know the file's language.
pub fn tests_added(path: &str, before: Option<&str>, after: &str) -> Option<Vec<String>> {
    let mut old = before
        .map(|b| tests_declared(path, b))
        .unwrap_or(Some(Vec::new()))?;
    let mut added = Vec::new();
    for n in tests_declared(path, after)? {
        match old.iter().position(|o| *o == n) {
            Some(k) => {
                old.remove(k);
            }
            None => added.push(n),
        }
    }
    Some(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/reports")
                .join(rel),
        )
        .unwrap()
    }

    fn missing(d: &[Diagnostic]) -> Vec<bool> {
        d.iter().map(|d| d.missing).collect()
    }

    #[test]
    fn every_row_s_examples_hold() {
        for lang in LANGS {
            for (text, want) in lang.examples {
                let d = diagnostics(text);
                assert_eq!(d.len(), 1, "{}: {text}: {d:?}", lang.name);
                assert!(d[0].file.is_some(), "{}: {text}: {d:?}", lang.name);
                assert_eq!(d[0].missing, *want, "{}: {text}", lang.name);
            }
        }
    }

    /// cargo 1.95: a test that names seven kinds of item that do not exist.
    #[test]
    fn cargo_names_each_missing_item_where_it_is() {
        let d = diagnostics(&fixture("compile/cargo-new-api.txt"));
        assert_eq!(d.len(), 7, "{d:?}");
        assert!(d.iter().all(|d| d.missing), "{d:?}");
        assert!(
            d.iter()
                .all(|d| d.file.as_deref() == Some("tests/new_fn.rs")),
            "{d:?}"
        );
        assert_eq!(
            (d[2].header.as_str(), d[2].line),
            (
                "error[E0425]: cannot find function `kebab` in crate `words`",
                Some(8)
            )
        );
        // The older fixture: the missing function is called from src/lib.rs.
        let d = diagnostics(&fixture("libtest/compile-error.txt"));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].file.as_deref(), Some("src/lib.rs"));
        // nextest adds its own summary line, which is no diagnostic.
        assert_eq!(diagnostics(&fixture("nextest/compile-error.txt")), d);
    }

    #[test]
    fn cargo_errors_that_are_not_a_missing_name() {
        let d = diagnostics(&fixture("compile/cargo-syntax-error.txt"));
        assert_eq!(missing(&d), [false], "{d:?}");
        assert_eq!(d[0].file.as_deref(), Some("tests/new_fn.rs"));
        // A mismatch and a missing argument beside the missing function; the note's
        // ` --> src/lib.rs` is not where the error is.
        let d = diagnostics(&fixture("compile/cargo-missing-and-type-error.txt"));
        assert_eq!(missing(&d), [true, false, false], "{d:?}");
        assert!(
            d.iter()
                .all(|d| d.file.as_deref() == Some("tests/new_fn.rs"))
        );
        // A crate the project does not depend on is setup, though rustc says E0432.
        let d = diagnostics(&fixture("compile/cargo-unlinked-crate.txt"));
        assert_eq!(missing(&d), [false, true], "{d:?}");
        // An error that points nowhere.
        let d = diagnostics(
            "error: linking with `cc` failed: exit status: 1\n  |\n  = note: ld: cannot find -lfoo\n",
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].file, None);
        // Warnings are no errors.
        assert!(diagnostics("warning: unused variable: `x`\n --> tests/a.rs:3:9\n").is_empty());
        // `--message-format short`.
        let d = diagnostics(
            "tests/new_fn.rs:3:23: error[E0425]: cannot find function `kebab` in crate `words`\n",
        );
        assert_eq!(missing(&d), [true]);
        assert_eq!(d[0].line, Some(3));
    }

    /// go 1.27 (`build-output` events) and go 1.19 (plain lines under `-json`), captured.
    #[test]
    fn go_build_output_plain_and_json() {
        for f in [
            "go-json/build-failure.jsonl",
            "go-json/go1.19-build-failure.jsonl",
        ] {
            let d = diagnostics(&fixture(f));
            assert_eq!(d.len(), 1, "{f}: {d:?}");
            assert_eq!(d[0].file.as_deref(), Some("./checkout_test.go"));
            assert_eq!(d[0].line, Some(12));
            assert!(d[0].missing, "{f}");
        }
        // A test's log line that looks located is no diagnostic outside a build's output.
        let out = "=== RUN   TestFee\n    fee_test.go:10: undefined: nothing, just a log\n--- PASS: TestFee (0.00s)\nPASS\n";
        assert!(diagnostics(out).is_empty());
        let json = r#"{"Action":"output","Package":"m","Test":"TestFee","Output":"    fee_test.go:10: undefined: x\n"}"#;
        assert!(diagnostics(json).is_empty());
    }

    /// javac 17, captured.
    #[test]
    fn javac_cannot_find_symbol() {
        let d = diagnostics(&fixture("compile/javac-new-method.txt"));
        assert_eq!(missing(&d), [true, true], "{d:?}");
        assert_eq!(
            d[0].file.as_deref(),
            Some("src/test/java/demo/WordsTest.java")
        );
        let d = diagnostics(&fixture("compile/javac-cannot-find-symbol.txt"));
        assert_eq!(missing(&d), [false, true, true, false], "{d:?}");
        let d = diagnostics(&fixture("compile/javac-no-junit.txt"));
        assert_eq!(missing(&d), [false, true], "{d:?}");
    }

    #[test]
    fn the_tests_a_file_declares() {
        let rust = "use words::Words;\n\n#[cfg(test)]\nfn helper() {}\n\n#[test]\n#[should_panic]\nfn kebab_joins_words() {}\n\n#[tokio::test]\nasync fn async_one() {}\n\n// #[test]\nfn not_a_test() {}\n";
        assert_eq!(
            tests_declared("tests/new_fn.rs", rust).unwrap(),
            ["kebab_joins_words", "async_one"]
        );
        let go = "package m\n\nfunc TestKebab(t *testing.T) {}\nfunc helper() {}\nfunc TestMain(m *testing.M) {}\n";
        assert_eq!(
            tests_declared("kebab_test.go", go).unwrap(),
            ["TestKebab", "TestMain"]
        );
        let java = "class WordsTest {\n    @Test\n    void kebabJoinsWords() {}\n    @org.junit.jupiter.api.Test public void shouts() {}\n    @DisplayName(\"x\")\n    void helper() {}\n}\n";
        assert_eq!(
            tests_declared("src/test/java/WordsTest.java", java).unwrap(),
            ["kebabJoinsWords", "shouts"]
        );
        let kt = "class WordsTest {\n    @Test\n    fun `kebab joins words`() {}\n    @Test fun shouts() {}\n}\n";
        assert_eq!(
            tests_declared("WordsTest.kt", kt).unwrap(),
            ["kebab joins words", "shouts"]
        );
        let ts = "describe('words', () => {\n  it('kebab joins words', () => {});\n  test(\"shouts\", () => {});\n  xit('skipped', () => {});\n});\n";
        assert_eq!(
            tests_declared("tests/words.test.ts", ts).unwrap(),
            ["kebab joins words", "shouts"]
        );
        assert_eq!(
            tests_declared("test_words.py", "def test_x(): pass\n"),
            None
        );
        // Added: what the file after red declares that it did not before.
        let before = "#[test]\nfn adds() {}\n";
        let after = "#[test]\nfn adds() {}\n\n#[test]\nfn kebab() {}\n";
        assert_eq!(
            tests_added("tests/a.rs", Some(before), after).unwrap(),
            ["kebab"]
        );
        assert_eq!(
            tests_added("tests/a.rs", None, after).unwrap(),
            ["adds", "kebab"]
        );
    }
}
