//! JSON edited as text: the byte span of every value, and insertions and removals that leave
//! every other byte of the file as the person wrote it.
//!
//! `forge hooks install` then `uninstall` must give back the settings file byte for byte —
//! its number spellings (`1.0`, `1e3`), string escapes (`"\u00e9"`), spacing, line endings and
//! key order — which no parse-and-reserialise can promise. So Forge edits the text: an
//! insertion is `,` plus the whitespace the container already uses plus the new value, and the
//! removal of that value takes exactly those bytes out again.
//!
//! The text is validated by `serde_json` first (its errors name line and column); the scanner
//! here only finds spans in text already known to be valid JSON.

use std::ops::Range;

use serde_json::Value;

/// A JSON value and where it lies in the text.
#[derive(Debug, Clone)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

#[derive(Debug, Clone)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// From the key's opening quote to the end of the value.
    pub span: Range<usize>,
    pub value: Node,
}

impl Node {
    pub fn members(&self) -> &[Member] {
        match &self.kind {
            Kind::Object(m) => m,
            _ => &[],
        }
    }

    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(i) => Some(i),
            _ => None,
        }
    }

    /// The last member named `key` (the one `serde_json` keeps when a key repeats).
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members().iter().rev().find(|m| m.key == key)
    }
}

/// Parses `text`, which must be valid JSON (check it with `serde_json` first).
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let node = p.value(0)?;
    Ok(node)
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

/// `serde_json`'s own nesting limit: deeper text has already been refused.
const MAX_DEPTH: usize = 128;

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let start = self.i;
        let kind = match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.b.get(self.i) != Some(&b'}') {
                    loop {
                        self.ws();
                        let key_start = self.i;
                        self.string()?;
                        let key: String = serde_json::from_slice(&self.b[key_start..self.i])
                            .map_err(|e| format!("bad key at byte {key_start}: {e}"))?;
                        self.ws();
                        self.expect(b':')?;
                        self.ws();
                        let value = self.value(depth + 1)?;
                        members.push(Member {
                            key,
                            span: key_start..value.span.end,
                            value,
                        });
                        self.ws();
                        if self.b.get(self.i) == Some(&b',') {
                            self.i += 1;
                            continue;
                        }
                        break;
                    }
                }
                self.expect(b'}')?;
                Kind::Object(members)
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.i) != Some(&b']') {
                    loop {
                        self.ws();
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        if self.b.get(self.i) == Some(&b',') {
                            self.i += 1;
                            continue;
                        }
                        break;
                    }
                }
                self.expect(b']')?;
                Kind::Array(items)
            }
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(format!("expected a value at byte {start}"));
                }
                Kind::Scalar
            }
            None => return Err("unexpected end of the text".into()),
        };
        Ok(Node {
            span: start..self.i,
            kind,
        })
    }

    fn string(&mut self) -> Result<(), String> {
        self.expect(b'"')?;
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return Ok(()),
                _ => {}
            }
        }
        Err("unterminated string".into())
    }
}

/// How the file is laid out, so inserted text looks like the rest of it.
#[derive(Debug, Clone)]
pub struct Style {
    /// One level of indentation (`"  "`, `"    "`, `"\t"`); `None` for one-line JSON.
    pub indent: Option<String>,
    /// `"\n"` or `"\r\n"`.
    pub newline: &'static str,
}

impl Style {
    /// The style of `text`: one line (compact), or the indentation of its first indented line.
    pub fn of(text: &str) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let body = text.trim();
        if !body.contains('\n') {
            return Style {
                indent: None,
                newline,
            };
        }
        let unit = body
            .lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start().len()])
            .find(|ws| !ws.is_empty())
            .map(|ws| {
                if ws.starts_with('\t') {
                    "\t".to_string()
                } else {
                    " ".repeat(ws.len().min(8))
                }
            })
            .unwrap_or_else(|| "  ".to_string());
        Style {
            indent: Some(unit),
            newline,
        }
    }

    /// `value` as text whose lines after the first start with `base` (the indentation of the
    /// line it is inserted on).
    pub fn render(&self, value: &Value, base: &str) -> String {
        use serde::Serialize;
        let Some(unit) = &self.indent else {
            return value.to_string();
        };
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        // Serialising a `Value` into memory cannot fail.
        let _ = value.serialize(&mut ser);
        let pretty = String::from_utf8_lossy(&buf);
        pretty
            .split('\n')
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    format!("{base}{l}")
                }
            })
            .collect::<Vec<_>>()
            .join(self.newline)
    }
}

/// The indentation of the line `pos` is on.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The text to put between a container's last item and a new one (or its opening bracket and
/// the first one): the container's own spacing, or the file's style for an empty container.
fn gap_before_new(
    text: &str,
    container: &Node,
    last: Option<Range<usize>>,
    style: &Style,
) -> String {
    match last {
        Some(last) => {
            // The whitespace before the last item, as its neighbours are separated.
            let before = &text[..last.start];
            let ws_start = before.trim_end_matches([' ', '\t', '\n', '\r']).len();
            format!(",{}", &text[ws_start..last.start])
        }
        None => match &style.indent {
            None => String::new(),
            Some(unit) => format!(
                "{}{}{unit}",
                style.newline,
                line_indent(text, container.span.start)
            ),
        },
    }
}

/// Where a new item goes, and the indentation of its line.
fn insertion(
    text: &str,
    container: &Node,
    last: Option<Range<usize>>,
    style: &Style,
) -> (usize, String, String) {
    let gap = gap_before_new(text, container, last.clone(), style);
    let at = last.map_or(container.span.start + 1, |l| l.end);
    let indent = match gap.rfind('\n') {
        Some(i) => gap[i + 1..].to_string(),
        None => line_indent(text, at).to_string(),
    };
    (at, gap, indent)
}

/// `text` with `"key": value` added as the last member of `object`.
pub fn insert_member(text: &str, object: &Node, key: &str, value: &Value) -> String {
    let style = Style::of(text);
    let last = object.members().last().map(|m| m.span.clone());
    // The separator the file uses between a key and its value (`": "`, `":"`).
    let colon = object
        .members()
        .first()
        .map(|m| {
            let key_end = key_end(text, m);
            text[key_end..m.value.span.start].to_string()
        })
        .unwrap_or_else(|| {
            if style.indent.is_some() {
                ": ".to_string()
            } else {
                ":".to_string()
            }
        });
    let (at, gap, indent) = insertion(text, object, last, &style);
    let key_text = Value::String(key.to_string()).to_string();
    let member = format!("{key_text}{colon}{}", style.render(value, &indent));
    splice(text, at..at, &format!("{gap}{member}"))
}

/// The end of a member's key (its closing quote + 1).
fn key_end(text: &str, m: &Member) -> usize {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: m.span.start,
    };
    let _ = s.string();
    s.i
}

/// `text` with `value` appended to `array`.
pub fn push_item(text: &str, array: &Node, value: &Value) -> String {
    let style = Style::of(text);
    let last = array.items().and_then(|i| i.last()).map(|n| n.span.clone());
    let (at, gap, indent) = insertion(text, array, last, &style);
    splice(
        text,
        at..at,
        &format!("{gap}{}", style.render(value, &indent)),
    )
}

/// The bytes to take out to remove item `k` of a container whose item spans are `items` (in
/// order) and whose opening bracket is at `open`: the inverse of an insertion, so that
/// `insert` then `remove` is the identity.
pub fn removal(items: &[Range<usize>], open: usize, k: usize) -> Range<usize> {
    match (k, items.len()) {
        // The only item: everything from the bracket to its end; what followed it (the
        // container's closing whitespace) stays.
        (0, 1) => open + 1..items[0].end,
        // The first of several: it, its comma and the whitespace before the next one.
        (0, _) => items[0].start..items[1].start,
        // Any other: from the end of the one before.
        (k, _) => items[k - 1].end..items[k].end,
    }
}

pub fn splice(text: &str, range: Range<usize>, with: &str) -> String {
    let mut s = String::with_capacity(text.len() + with.len());
    s.push_str(&text[..range.start]);
    s.push_str(with);
    s.push_str(&text[range.end..]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn members_spans(n: &Node) -> Vec<Range<usize>> {
        n.members().iter().map(|m| m.span.clone()).collect()
    }

    #[test]
    fn spans_cover_keys_and_values_exactly() {
        let t = r#"{ "a" : 1.0e3, "b\u0022": ["x", {"c": null}] , "a": true }"#;
        let n = parse(t).unwrap();
        let m = n.members();
        assert_eq!(m.len(), 3);
        assert_eq!(&t[m[0].span.clone()], r#""a" : 1.0e3"#);
        assert_eq!(m[1].key, "b\"");
        assert_eq!(&t[m[1].value.span.clone()], r#"["x", {"c": null}]"#);
        assert_eq!(&t[n.get("a").unwrap().value.span.clone()], "true");
    }

    #[test]
    fn insert_then_remove_is_the_identity() {
        for t in [
            "{}",
            "{ }",
            "{\n}",
            "{\"a\":1}",
            "{ \"a\": 1, \"b\": 2 }",
            "{\n  \"a\": 1\n}\n",
            "{\r\n    \"a\": 1\r\n}\r\n",
            "{\n\t\"a\": [1,\n\t\t2]\n}",
        ] {
            let n = parse(t).unwrap();
            let after = insert_member(t, &n, "hooks", &json!({"Stop": [{"x": 1}]}));
            let v: Value =
                serde_json::from_str(&after).unwrap_or_else(|e| panic!("{t:?} → {after:?}: {e}"));
            assert_eq!(v["hooks"]["Stop"][0]["x"], 1, "{after}");
            let n2 = parse(&after).unwrap();
            let spans = members_spans(&n2);
            let k = spans.len() - 1;
            let back = splice(&after, removal(&spans, n2.span.start, k), "");
            assert_eq!(back, t, "{after:?}");
        }
    }

    #[test]
    fn pushed_items_follow_the_array_layout() {
        let t = "{\n  \"l\": [\n    1,\n    2\n  ]\n}\n";
        let n = parse(t).unwrap();
        let arr = &n.get("l").unwrap().value;
        let after = push_item(t, arr, &json!({"k": "v"}));
        assert_eq!(
            after,
            "{\n  \"l\": [\n    1,\n    2,\n    {\n      \"k\": \"v\"\n    }\n  ]\n}\n"
        );
    }
}
