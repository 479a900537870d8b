//! The stub witness of the clean room (issue 31, red team: a verified test that rebinds the
//! function under test once green's code names it). A test that passes against the base's code
//! proves nothing, and the clean room already says so; but a test can fail on the base only
//! because a name is missing and then pass whatever green's code does — it patches the
//! function itself when the name appears. The invariant that catches every such test, whatever
//! its trick: **with each function the slice added or changed made to fail, the verified case
//! must fail.** A test that still passes does not depend on the code it claims to test.
//!
//! Pure text in, text out: per language, where a function's body is, so it can be replaced by
//! a body that fails. Only what can be found reliably from the text is stubbed (Python's `def`,
//! shell functions); a language without a row is not stubbed and the witness does not apply.

/// How one language's functions are found and made to fail.
struct Language {
    /// File name endings it applies to.
    ends: &'static [&'static str],
    /// The functions of a file: where each sits and what its body is.
    functions: fn(&[&str]) -> Vec<Function>,
    /// The body that fails, for a function whose body is indented by `indent`.
    fail: fn(&Function, &str) -> String,
    /// The names a file binds at its top level other than by a function (`kebabize = lambda w:
    /// w`, `RATE = 2`), each with the text that binds it.
    bindings: fn(&[&str]) -> Vec<(String, String)>,
    /// What rebinds such a name to something that fails, appended to the file.
    fail_binding: fn(&str) -> String,
}

/// Python: the stub raises an exception that is not an `Exception`, so neither the code around
/// it (`except Exception:`) nor a broad `pytest.raises(Exception)` can take it for a pass.
/// Shell: a function that prints nothing and fails.
const LANGUAGES: &[Language] = &[
    Language {
        ends: &[".py"],
        functions: python_functions,
        fail: |_, indent| format!("{indent}{PY_RAISE}\n"),
        bindings: python_bindings,
        fail_binding: |name| format!("\n\ndef {name}(*_a, **_k):\n    {PY_RAISE}\n"),
    },
    Language {
        ends: &[".sh", ".bash", ".bats"],
        functions: shell_functions,
        fail: |f, indent| format!("{indent}{}() {{ return 97; }}\n", f.name),
        bindings: |_| Vec::new(),
        fail_binding: |_| String::new(),
    },
];

/// Python's failing body: an exception that is not an `Exception`.
const PY_RAISE: &str =
    "raise type(\"ForgeStub\", (BaseException,), {})(\"forge: the slice's code, made to fail\")";

/// One function in a file, by byte offsets into its text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    /// Its name with the names of the classes and functions it sits in (`Cart.total`).
    name: String,
    /// Where its text starts: a decorator, or the definition.
    start: usize,
    /// What stays up to here (Python: the header up to its colon and line end; shell:
    /// nothing of it), and what goes from here to `end`, replaced by the failing body.
    keep: usize,
    end: usize,
    /// The indentation the failing body takes.
    indent: String,
    /// Nested in another function (not a class): stubbed with its outer one, never alone.
    nested: bool,
}

impl Function {
    fn text<'a>(&self, text: &'a str) -> &'a str {
        &text[self.start..self.end]
    }
}

/// Where each line starts, and where the text ends, as byte offsets.
fn offsets(lines: &[&str]) -> Vec<usize> {
    let mut at = vec![0];
    for l in lines {
        at.push(at.last().unwrap() + l.len());
    }
    at
}

/// `new` with every function that differs from `old` (or is not in it) made to fail; when no
/// function differs but the file changed, every function of `new`. Returns the text and the
/// names stubbed; `None` when the language has no row or nothing could be stubbed.
pub fn stub_changed(path: &str, old: Option<&str>, new: &str) -> Option<(String, Vec<String>)> {
    let lang = LANGUAGES
        .iter()
        .find(|l| l.ends.iter().any(|e| path.ends_with(e)))?;
    let found = (lang.functions)(&new.split_inclusive('\n').collect::<Vec<_>>());
    let old = old.unwrap_or("");
    let old_fns = (lang.functions)(&old.split_inclusive('\n').collect::<Vec<_>>());
    let before: std::collections::HashMap<&str, &str> = old_fns
        .iter()
        .map(|f| (f.name.as_str(), f.text(old)))
        .collect();
    let outer: Vec<&Function> = found.iter().filter(|f| !f.nested).collect();
    let mut chosen: Vec<&Function> = outer
        .iter()
        .copied()
        .filter(|f| {
            // A nested function that changed changes its outer one's text too.
            before.get(f.name.as_str()) != Some(&f.text(new))
        })
        .collect();
    // A name bound otherwise (`kebabize = lambda w: w`) that is new or changed is rebound to
    // something that fails, at the end of the file (red team of issue 31, A7).
    let old_bound: std::collections::HashMap<String, String> =
        (lang.bindings)(&old.split_inclusive('\n').collect::<Vec<_>>())
            .into_iter()
            .collect();
    let rebound: Vec<String> = (lang.bindings)(&new.split_inclusive('\n').collect::<Vec<_>>())
        .into_iter()
        .filter(|(n, t)| !n.starts_with("__") && old_bound.get(n) != Some(t))
        .map(|(n, _)| n)
        .collect();
    // A change outside any function or binding (an import, a class attribute): every function
    // of the file.
    if chosen.is_empty() && rebound.is_empty() && old != new {
        chosen = outer;
    }
    if chosen.is_empty() && rebound.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(new.len());
    let mut at = 0;
    let mut names = Vec::new();
    for f in chosen {
        let kept = &new[at..f.keep];
        out.push_str(kept);
        if !kept.is_empty() && !kept.ends_with('\n') {
            // A one-line `def f(x): return x`: the body goes, the header ends its line.
            let n = out.trim_end().len();
            out.truncate(n);
            out.push('\n');
        }
        out.push_str(&(lang.fail)(f, &f.indent));
        at = f.end;
        names.push(f.name.clone());
    }
    out.push_str(&new[at..]);
    for n in rebound {
        out.push_str(&(lang.fail_binding)(&n));
        names.push(n);
    }
    Some((out, names))
}

/// The names of the functions (not nested in another) that `new` adds or changes against
/// `old`, in a language with a row; empty otherwise.
pub fn changed_functions(path: &str, old: Option<&str>, new: &str) -> Vec<String> {
    let Some(lang) = LANGUAGES
        .iter()
        .find(|l| l.ends.iter().any(|e| path.ends_with(e)))
    else {
        return Vec::new();
    };
    let old = old.unwrap_or("");
    let old_fns = (lang.functions)(&old.split_inclusive('\n').collect::<Vec<_>>());
    let before: std::collections::HashMap<&str, &str> = old_fns
        .iter()
        .map(|f| (f.name.as_str(), f.text(old)))
        .collect();
    (lang.functions)(&new.split_inclusive('\n').collect::<Vec<_>>())
        .into_iter()
        .filter(|f| !f.nested && before.get(f.name.as_str()) != Some(&f.text(new)))
        .map(|f| f.name)
        .collect()
}

/// The names Python binds at a file's top level by assignment (`name = …`, `name: T = …`),
/// each with its statement's text.
fn python_bindings(lines: &[&str]) -> Vec<(String, String)> {
    let info = python_lines(lines);
    let mut out = Vec::new();
    for i in 0..lines.len() {
        if !info[i].starts || info[i].indent != 0 {
            continue;
        }
        let name = word(lines[i]);
        if name.is_empty() || name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            continue;
        }
        let rest = lines[i][name.len()..].trim_start();
        let assigns = match rest.strip_prefix(':') {
            Some(annotated) => annotated.contains('=') && !annotated.contains("=="),
            None => rest.starts_with('=') && !rest.starts_with("=="),
        };
        if !assigns {
            continue;
        }
        // To the next statement, without the blank lines and comments before it: code
        // appended after the last binding of a file does not change that binding.
        let next = (i + 1..lines.len())
            .find(|&k| info[k].starts)
            .unwrap_or(lines.len());
        let end = (i + 1..next)
            .rev()
            .find(|&k| !info[k].blank && !lines[k].trim().is_empty())
            .map_or(i + 1, |k| k + 1);
        out.push((name, lines[i..end].concat()));
    }
    out
}

/// Where each line stands in Python's tokens: whether a statement starts on it, its
/// indentation, and whether it is blank or only a comment.
struct PyLine {
    starts: bool,
    indent: usize,
    blank: bool,
}

/// Reads Python's lines as the tokenizer would, as far as statements go: brackets, strings
/// (triple-quoted ones across lines) and backslash continuations join lines into one.
fn python_lines(lines: &[&str]) -> Vec<PyLine> {
    let mut out = Vec::with_capacity(lines.len());
    let mut depth: i32 = 0;
    let mut triple: Option<&str> = None;
    let mut joined = false;
    for line in lines {
        let starts = depth == 0 && triple.is_none() && !joined;
        let body = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - body.len();
        let t = body.trim_end();
        let blank = t.is_empty() || t.starts_with('#');
        joined = false;
        let b = line.as_bytes();
        let mut k = 0;
        while k < b.len() {
            if let Some(q) = triple {
                if b[k..].starts_with(q.as_bytes()) {
                    triple = None;
                    k += 3;
                } else {
                    k += if b[k] == b'\\' { 2 } else { 1 };
                }
                continue;
            }
            match b[k] {
                b'#' => break,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = (depth - 1).max(0),
                b'\\' if b[k + 1..].iter().all(u8::is_ascii_whitespace) => joined = true,
                q @ (b'"' | b'\'') => {
                    let three = if q == b'"' { "\"\"\"" } else { "'''" };
                    if b[k..].starts_with(three.as_bytes()) {
                        triple = Some(three);
                        k += 3;
                        continue;
                    }
                    k += 1;
                    while k < b.len() && b[k] != q && b[k] != b'\n' {
                        k += if b[k] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            k += 1;
        }
        out.push(PyLine {
            starts: starts && !blank,
            indent,
            blank: blank && starts,
        });
    }
    out
}

/// Python's functions (`def`, `async def`), named through their classes and functions.
fn python_functions(lines: &[&str]) -> Vec<Function> {
    let info = python_lines(lines);
    let at = offsets(lines);
    // Open scopes: (indent, name, is a function).
    let mut scopes: Vec<(usize, String, bool)> = Vec::new();
    let mut out = Vec::new();
    let mut decorators: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        if !info[i].starts {
            continue;
        }
        let indent = info[i].indent;
        while scopes.last().is_some_and(|s| s.0 >= indent) {
            scopes.pop();
        }
        let t = l.trim_start();
        if t.starts_with('@') {
            decorators.get_or_insert(i);
            continue;
        }
        let first = decorators.take().unwrap_or(i);
        let (name, is_fn) = if let Some(r) = t.strip_prefix("def ").or(t.strip_prefix("async def "))
        {
            (word(r), true)
        } else if let Some(r) = t.strip_prefix("class ") {
            (word(r), false)
        } else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let qual = scopes
            .iter()
            .map(|s| s.1.as_str())
            .chain([name.as_str()])
            .collect::<Vec<_>>()
            .join(".");
        let nested = scopes.iter().any(|s| s.2);
        scopes.push((indent, name, is_fn));
        if !is_fn {
            continue;
        }
        // The header ends on the first line after which no bracket is open; its colon is the
        // first at bracket depth 0.
        let mut h = i;
        while python_colon(&lines[i..=h].concat()).is_none() && h + 1 < lines.len() {
            h += 1;
        }
        let header = lines[i..=h].concat();
        let Some(colon) = python_colon(&header) else {
            continue;
        };
        let rest = header[colon + 1..].trim();
        let one_line = !rest.is_empty() && !rest.starts_with('#');
        // The body: up to the next statement at the definition's indentation or less, without
        // the blank lines and comments before it.
        let mut end = h + 1;
        let mut k = h + 1;
        while k < lines.len() && !(info[k].starts && info[k].indent <= indent) {
            if !info[k].blank {
                end = k + 1;
            }
            k += 1;
        }
        let body_indent = (h + 1..end)
            .find(|&k| info[k].starts)
            .map(|k| lines[k][..info[k].indent].to_string())
            .unwrap_or_else(|| format!("{}    ", &l[..indent]));
        out.push(Function {
            name: qual,
            start: at[first],
            keep: if one_line {
                at[i] + colon + 1
            } else {
                at[h + 1]
            },
            end: at[if one_line { h + 1 } else { end }],
            indent: body_indent,
            nested,
        });
    }
    out
}

/// The byte offset of a `def` header's colon: the first `:` at bracket depth 0, outside
/// strings.
fn python_colon(header: &str) -> Option<usize> {
    let b = header.as_bytes();
    let mut depth = 0;
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b':' if depth == 0 => return Some(k),
            b'#' => {
                while k < b.len() && b[k] != b'\n' {
                    k += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                k += 1;
                while k < b.len() && b[k] != q {
                    k += if b[k] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        k += 1;
    }
    None
}

/// The identifier at the start of `s`.
fn word(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Shell functions (`name() {`, `function name {`, `function name() {`): the body runs to the
/// first line that closes it at the definition's own indentation or less.
fn shell_functions(lines: &[&str]) -> Vec<Function> {
    let at = offsets(lines);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let head = t.strip_prefix("function ").unwrap_or(t);
        let name = word_sh(head);
        let after = head[name.len()..].trim_start();
        let after = after.strip_prefix("()").unwrap_or(after).trim_start();
        let is_def = !name.is_empty()
            && after.starts_with('{')
            && (t.starts_with("function ") || head[name.len()..].trim_start().starts_with("()"));
        if !is_def {
            i += 1;
            continue;
        }
        let one_line = after.trim_end().ends_with('}') && after.trim_end().len() > 1;
        let end = if one_line {
            i + 1
        } else {
            match (i + 1..lines.len()).find(|&k| {
                let x = lines[k];
                let xt = x.trim_start();
                xt.starts_with('}') && x.len() - xt.len() <= indent
            }) {
                Some(k) => k + 1,
                None => {
                    i += 1;
                    continue;
                }
            }
        };
        // The whole definition is replaced, its indentation kept.
        out.push(Function {
            name: name.to_string(),
            start: at[i],
            keep: at[i],
            end: at[end],
            indent: l[..indent].to_string(),
            nested: false,
        });
        i = end;
    }
    out
}

fn word_sh(s: &str) -> &str {
    let n = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == ':' || c == '.'))
        .unwrap_or(s.len());
    &s[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAISE: &str = PY_RAISE;

    #[test]
    fn a_new_python_function_is_made_to_fail_and_the_rest_stays() {
        let old = "import re\n\n\ndef dasherize(w):\n    return w.replace('_', '-')\n";
        let new = format!(
            "{old}\n\n@cache\ndef kebabize(word: str) -> dict[str, int]:\n    \"\"\"Doc.\n\nstill doc\n\"\"\"\n    return dasherize(word)\n\nX = 1\n"
        );
        let (out, names) = stub_changed("inflection/__init__.py", Some(old), &new).unwrap();
        assert_eq!(names, ["kebabize", "X"]);
        assert_eq!(
            out,
            format!(
                "{old}\n\n@cache\ndef kebabize(word: str) -> dict[str, int]:\n    {RAISE}\n\nX = 1\n\n\ndef X(*_a, **_k):\n    {RAISE}\n"
            )
        );
    }

    #[test]
    fn a_changed_method_one_liner_and_multiline_header() {
        let old = "class Cart:\n    def total(self):\n        return 1\n\n    def size(self):\n        return 0\n";
        let new = "class Cart:\n    def total(self):\n        return 2\n\n    def size(self):\n        return 0\n\ndef f(a,\n      b=(1,\n         2)):  # c\n    return a\n\ndef g(x): return x\n";
        let (out, names) = stub_changed("m.py", Some(old), new).unwrap();
        assert_eq!(names, ["Cart.total", "f", "g"]);
        assert_eq!(
            out,
            format!(
                "class Cart:\n    def total(self):\n        {RAISE}\n\n    def size(self):\n        return 0\n\ndef f(a,\n      b=(1,\n         2)):  # c\n    {RAISE}\n\ndef g(x):\n    {RAISE}\n"
            )
        );
    }

    #[test]
    fn a_nested_change_stubs_its_outer_function_once() {
        let old = "def outer():\n    def inner():\n        return 1\n    return inner()\n";
        let new = "def outer():\n    def inner():\n        return 2\n    return inner()\n";
        let (out, names) = stub_changed("m.py", Some(old), new).unwrap();
        assert_eq!(names, ["outer"]);
        assert_eq!(out, format!("def outer():\n    {RAISE}\n"));
    }

    #[test]
    fn a_change_outside_any_function_stubs_every_function_of_the_file() {
        let old = "import re\n\ndef price(x):\n    return x * 2\n";
        let new = "import re, os\n\ndef price(x):\n    return x * 2\n";
        let (out, names) = stub_changed("m.py", Some(old), new).unwrap();
        assert_eq!(names, ["price"]);
        assert!(
            out.starts_with("import re, os\n") && out.contains(RAISE),
            "{out}"
        );
        // Nothing to stub: an unchanged file; a language with no row.
        assert_eq!(stub_changed("m.py", Some(old), old), None);
        assert_eq!(stub_changed("lib.rs", None, "fn f() {}\n"), None);
    }

    /// Red team of issue 31 (A7): green binds the name with a lambda; the stub must reach it,
    /// not every other function of the file.
    #[test]
    fn a_name_bound_otherwise_is_rebound_to_fail() {
        let old = "def underscore(w):\n    return w\n\nRATE = 1\n__all__ = ['underscore']\n";
        let new = "def underscore(w):\n    return w\n\nRATE = 2\nkebabize = lambda word: (\n    word)\n__all__ = ['underscore', 'kebabize']\nif X == 1:\n    pass\n";
        let (out, names) = stub_changed("m.py", Some(old), new).unwrap();
        assert_eq!(names, ["RATE", "kebabize"]);
        assert_eq!(
            out,
            format!(
                "{new}\n\ndef RATE(*_a, **_k):\n    {RAISE}\n\n\ndef kebabize(*_a, **_k):\n    {RAISE}\n"
            )
        );
    }

    #[test]
    fn code_appended_after_the_last_binding_leaves_it_as_it_was() {
        let old = "RATE = 1\n";
        let new = "RATE = 1\n\n\ndef kebabize(w):\n    return w\n";
        let (_, names) = stub_changed("m.py", Some(old), new).unwrap();
        assert_eq!(names, ["kebabize"]);
    }

    #[test]
    fn strings_and_brackets_do_not_start_statements() {
        let new = "def f():\n    s = \"\"\"\ndef fäke('älä'):\n\"\"\"\n    d = {\n'k': 1}\n    return s\n\ndef g():\n    pass\n";
        let found = python_functions(&new.split_inclusive('\n').collect::<Vec<_>>());
        let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["f", "g"]);
        assert!(found[0].text(new).ends_with("    return s\n"), "{found:?}");
    }

    #[test]
    fn the_functions_a_change_adds_or_changes_are_named() {
        let old = "total() {\n  echo 100\n}\nnow() { date; }\n";
        let new = "total() {\n  echo 90\n}\nnow() { date; }\nreceipt() { echo paid; }\n";
        assert_eq!(
            changed_functions("src/cart.sh", Some(old), new),
            ["total", "receipt"]
        );
        assert!(changed_functions("src/lib.rs", None, "fn f() {}\n").is_empty());
    }

    #[test]
    fn shell_functions_are_replaced_whole() {
        let old = "total() {\n  echo 100\n}\n";
        let new = "total() {\n  echo 100\n}\n\nfunction discount {\n  if x; then\n    echo 90\n  fi\n}\nmember() { echo yes; }\nrun \"$@\"\n";
        let (out, names) = stub_changed("src/shop.sh", Some(old), new).unwrap();
        assert_eq!(names, ["discount", "member"]);
        assert_eq!(
            out,
            "total() {\n  echo 100\n}\n\ndiscount() { return 97; }\nmember() { return 97; }\nrun \"$@\"\n"
        );
    }
}
