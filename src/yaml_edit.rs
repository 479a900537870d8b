//! One value of a YAML file changed in place: the rest of the file — comments, blank lines,
//! quoting, flow or block style, key order — stays byte for byte as the person wrote it.
//!
//! `forge budget set|raise` edits `.forge/config.yaml`, a file people write and comment. A
//! parse-and-reserialise would drop every comment, so the edit is textual: the YAML parser's
//! events give the byte span of the value (or of the mapping that should hold it), and only
//! that span changes. Every edit is checked by parsing the result: the file must say exactly
//! what it said before, except for the one value.

use std::ops::Range;

use granit_parser::{Event, Parser, Span, StructureStyle};
use serde_json::Value;

#[derive(Debug)]
enum Node {
    Map {
        flow: bool,
        entries: Vec<Entry>,
        /// The `}` of a flow mapping; an empty span where a block mapping ends.
        end: Range<usize>,
    },
    Seq {
        items: Vec<Node>,
        end: Range<usize>,
    },
    Scalar {
        value: String,
        span: Range<usize>,
    },
}

#[derive(Debug)]
struct Entry {
    key: Option<String>,
    key_col: usize,
    key_span: Range<usize>,
    value: Node,
}

impl Node {
    /// The last byte the node's own text reaches (comments after it excluded).
    fn extent(&self) -> usize {
        match self {
            Node::Map {
                flow: true, end, ..
            }
            | Node::Seq { end, .. }
                if !end.is_empty() =>
            {
                end.end
            }
            Node::Map { entries, end, .. } => entries
                .last()
                .map_or(end.start, |e| e.value.extent().max(e.key_span.end)),
            Node::Seq { items, end } => items.last().map_or(end.start, Node::extent),
            Node::Scalar { span, .. } => span.end,
        }
    }
}

fn byte(text: &str, m: granit_parser::Marker) -> usize {
    m.byte_offset().unwrap_or_else(|| {
        text.char_indices()
            .nth(m.index())
            .map_or(text.len(), |(i, _)| i)
    })
}

fn range(text: &str, s: &Span) -> Range<usize> {
    byte(text, s.start)..byte(text, s.end)
}

struct Reader<'t> {
    text: &'t str,
    events: std::iter::Peekable<Parser<'t, granit_parser::StrInput<'t>>>,
}

impl<'t> Reader<'t> {
    /// The next event that is part of the data (comments are only presentation).
    fn next(&mut self) -> Result<(Event<'t>, Span), String> {
        loop {
            match self.events.next() {
                Some(Ok((Event::Comment(..), _))) => continue,
                Some(Ok((e, s))) => return Ok((e, s)),
                Some(Err(e)) => return Err(e.to_string()),
                None => return Err("the YAML ends early".into()),
            }
        }
    }

    /// The node whose first event is `(e, s)`.
    fn node(&mut self, e: Event<'t>, s: Span, depth: usize) -> Result<Node, String> {
        if depth > 64 {
            return Err("nested too deeply".into());
        }
        match e {
            Event::Scalar(v, ..) => Ok(Node::Scalar {
                value: v.to_string(),
                span: range(self.text, &s),
            }),
            Event::MappingStart(style, ..) => {
                let mut entries = Vec::new();
                loop {
                    let (e, ks) = self.next()?;
                    if matches!(e, Event::MappingEnd) {
                        return Ok(Node::Map {
                            flow: style == StructureStyle::Flow,
                            entries,
                            end: range(self.text, &ks),
                        });
                    }
                    let key = match &e {
                        Event::Scalar(k, ..) => Some(k.to_string()),
                        _ => None,
                    };
                    let key_node = self.node(e, ks, depth + 1)?;
                    let (ve, vs) = self.next()?;
                    let value = self.node(ve, vs, depth + 1)?;
                    entries.push(Entry {
                        key,
                        key_col: ks.start.col(),
                        key_span: range(self.text, &ks).start..key_node.extent(),
                        value,
                    });
                }
            }
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    let (e, is) = self.next()?;
                    if matches!(e, Event::SequenceEnd) {
                        return Ok(Node::Seq {
                            items,
                            end: range(self.text, &is),
                        });
                    }
                    items.push(self.node(e, is, depth + 1)?);
                }
            }
            Event::Alias(..) => Ok(Node::Scalar {
                value: String::new(),
                span: range(self.text, &s),
            }),
            other => Err(format!("unexpected YAML event {other:?}")),
        }
    }
}

/// The document's root node; `None` for a file with no document (empty, or comments only).
fn parse(text: &str) -> Result<Option<Node>, String> {
    let mut r = Reader {
        text,
        events: Parser::new_from_str(text).peekable(),
    };
    loop {
        let (e, s) = r.next()?;
        match e {
            Event::StreamStart | Event::DocumentStart(..) => continue,
            Event::StreamEnd | Event::DocumentEnd => return Ok(None),
            e => return r.node(e, s, 0).map(Some),
        }
    }
}

fn is_null(value: &str) -> bool {
    matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// `{a: {b: v}}`-style text for the keys still missing under an existing key.
fn flow(keys: &[&str], value: &str) -> String {
    match keys {
        [] => value.to_string(),
        [k, rest @ ..] => format!("{{{k}: {}}}", flow(rest, value)),
    }
}

/// Block-style lines for the missing `keys`, the first at `indent`.
fn block(keys: &[&str], value: &str, indent: usize, nl: &str) -> String {
    let pad = " ".repeat(indent);
    match keys {
        [] => String::new(),
        [k] => format!("{pad}{k}: {value}{nl}"),
        [k, rest @ ..] => format!("{pad}{k}:{nl}{}", block(rest, value, indent + 2, nl)),
    }
}

/// `text` with the value at `path` (mapping keys from the root) set to `value`, a YAML scalar
/// as it should be written (`5`, `0.9`, `null`). Missing mappings on the way are created in the
/// style of the one that holds them. An error says why the edit cannot be made safely (the file
/// is then left for the person to edit).
pub fn set(text: &str, path: &[&str], value: &str) -> Result<String, String> {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let edited = match parse(text)? {
        None => {
            let mut t = text.to_string();
            if !t.is_empty() && !t.ends_with('\n') {
                t.push_str(nl);
            }
            t + &block(path, value, 0, nl)
        }
        Some(root) => edit(text, &root, path, 0, value, nl)?,
    };
    check(text, &edited, path, value)?;
    Ok(edited)
}

fn splice(text: &str, at: Range<usize>, with: &str) -> String {
    format!("{}{with}{}", &text[..at.start], &text[at.end..])
}

fn edit(
    text: &str,
    node: &Node,
    path: &[&str],
    depth: usize,
    value: &str,
    nl: &str,
) -> Result<String, String> {
    let here = path[..depth].join(".");
    let Some(key) = path.get(depth) else {
        return match node {
            Node::Scalar { span, .. } if span.is_empty() => {
                Ok(splice(text, span.clone(), &format!(" {value}")))
            }
            Node::Scalar { span, .. } => Ok(splice(text, span.clone(), value)),
            _ => Err(format!("`{here}` holds more than one value")),
        };
    };
    match node {
        Node::Map {
            flow: is_flow,
            entries,
            end,
        } => {
            if let Some(e) = entries.iter().rev().find(|e| e.key.as_deref() == Some(key)) {
                // A key with nothing after it (`tokens:`): the parser places the empty value at
                // the colon; it goes after it.
                if let Node::Scalar { value: v, span } = &e.value
                    && span.is_empty()
                {
                    let colon = text[e.key_span.end..]
                        .find(':')
                        .map_or(span.start, |i| e.key_span.end + i + 1);
                    let empty = Node::Scalar {
                        value: v.clone(),
                        span: colon..colon,
                    };
                    return edit(text, &empty, path, depth + 1, value, nl);
                }
                return edit(text, &e.value, path, depth + 1, value, nl);
            }
            let rest = &path[depth..];
            if *is_flow {
                let item = format!("{key}: {}", flow(&rest[1..], value));
                return Ok(match entries.last() {
                    Some(last) => {
                        let at = last.value.extent();
                        splice(text, at..at, &format!(", {item}"))
                    }
                    None => splice(text, end.start..end.start, &item),
                });
            }
            let Some(first) = entries.first() else {
                return Err(format!(
                    "`{here}` is an empty mapping Forge cannot place keys in"
                ));
            };
            // After the line that holds the mapping's last value (its comment included).
            let last = node.extent();
            let at = text[last..].find('\n').map_or(text.len(), |i| last + i + 1);
            let mut lines = block(rest, value, first.key_col, nl);
            if at == text.len() && !text.ends_with('\n') {
                lines = format!("{nl}{lines}");
            }
            Ok(splice(text, at..at, &lines))
        }
        Node::Scalar { value: v, span } if is_null(v) => {
            let mapping = flow(&path[depth..], value);
            if span.is_empty() {
                Ok(splice(text, span.clone(), &format!(" {mapping}")))
            } else {
                Ok(splice(text, span.clone(), &mapping))
            }
        }
        _ => Err(format!("`{here}` is not a mapping")),
    }
}

/// The edit must change exactly the one value: the old document with that value set must be
/// the new document.
fn check(old: &str, new: &str, path: &[&str], value: &str) -> Result<(), String> {
    let doc = |t: &str| -> Result<Value, String> {
        if t.trim().is_empty() || parse(t)?.is_none() {
            return Ok(Value::Null);
        }
        serde_saphyr::from_str::<Value>(t).map_err(|e| e.to_string())
    };
    let mut want = doc(old)?;
    let v: Value = serde_saphyr::from_str(value).map_err(|e| e.to_string())?;
    let mut at = &mut want;
    for k in path {
        if !at.is_object() {
            *at = Value::Object(Default::default());
        }
        at = at
            .as_object_mut()
            .expect("just made an object")
            .entry(k.to_string())
            .or_insert(Value::Null);
    }
    *at = v;
    let got = doc(new).map_err(|e| format!("the edited file would not parse ({e})"))?;
    if got != want {
        return Err(format!(
            "an in-place edit of `{}` would change more than that value",
            path.join(".")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "# Forge — config\nverify:\n  commands:\n    - name: test   # ok\n      run: cargo test\nbudget:\n  change:  { usd: 5.00, tokens: null }     # per change\n  session:\n    usd: 2.00   # per session\n    tokens:\n  warn_at: 0.8\n# the end\n";

    #[test]
    fn an_existing_value_changes_and_nothing_else() {
        let t = set(CONFIG, &["budget", "change", "usd"], "7.5").unwrap();
        assert_eq!(t, CONFIG.replace("usd: 5.00,", "usd: 7.5,"));
        let t = set(CONFIG, &["budget", "session", "usd"], "3").unwrap();
        assert_eq!(t, CONFIG.replace("usd: 2.00   #", "usd: 3   #"));
        let t = set(CONFIG, &["budget", "change", "tokens"], "100000").unwrap();
        assert_eq!(t, CONFIG.replace("tokens: null }", "tokens: 100000 }"));
        // An empty value (`tokens:`) is filled in.
        let t = set(CONFIG, &["budget", "session", "tokens"], "5000").unwrap();
        assert_eq!(t, CONFIG.replace("    tokens:\n", "    tokens: 5000\n"));
        let t = set(CONFIG, &["budget", "warn_at"], "0.9").unwrap();
        assert_eq!(t, CONFIG.replace("warn_at: 0.8", "warn_at: 0.9"));
    }

    #[test]
    fn missing_keys_are_added_in_the_mappings_style() {
        let t = "budget:\n  change: {tokens: 10}\n  session:\n    tokens: 5 # s\n";
        assert_eq!(
            set(t, &["budget", "change", "usd"], "1").unwrap(),
            "budget:\n  change: {tokens: 10, usd: 1}\n  session:\n    tokens: 5 # s\n"
        );
        assert_eq!(
            set(t, &["budget", "session", "usd"], "2").unwrap(),
            "budget:\n  change: {tokens: 10}\n  session:\n    tokens: 5 # s\n    usd: 2\n"
        );
        let t = "verify:\n  commands: []\nbudget:\n  warn_at: 0.8\nbreaker:\n  max_failures: 3\n";
        assert_eq!(
            set(t, &["budget", "change", "usd"], "4").unwrap(),
            "verify:\n  commands: []\nbudget:\n  warn_at: 0.8\n  change:\n    usd: 4\nbreaker:\n  max_failures: 3\n"
        );
        let t = "verify:\n  commands: []   # none yet";
        assert_eq!(
            set(t, &["budget", "session", "usd"], "2").unwrap(),
            "verify:\n  commands: []   # none yet\nbudget:\n  session:\n    usd: 2\n"
        );
        assert_eq!(
            set("# only a comment\n", &["budget", "change", "usd"], "1").unwrap(),
            "# only a comment\nbudget:\n  change:\n    usd: 1\n"
        );
        assert_eq!(
            set("budget:\n  change:\n", &["budget", "change", "usd"], "1").unwrap(),
            "budget:\n  change: {usd: 1}\n"
        );
        assert_eq!(
            set(
                "budget: {change: {usd: 1}}\n",
                &["budget", "session", "usd"],
                "2"
            )
            .unwrap(),
            "budget: {change: {usd: 1}, session: {usd: 2}}\n"
        );
    }

    #[test]
    fn unsafe_edits_are_refused() {
        let e = set(
            "budget:\n  change: [1, 2]\n",
            &["budget", "change", "usd"],
            "1",
        )
        .unwrap_err();
        assert!(e.contains("not a mapping"), "{e}");
        let e = set(
            "budget:\n  change:\n    usd: {a: 1}\n",
            &["budget", "change", "usd"],
            "1",
        )
        .unwrap_err();
        assert!(e.contains("more than one value"), "{e}");
        assert!(set("budget: [", &["budget", "warn_at"], "1").is_err());
    }
}
