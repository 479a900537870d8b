//! Reads the few scalar settings Forge needs from a client's TOML file (Codex CLI's
//! `config.toml`: project trust, hook trust, feature switches). Read only: Forge never writes
//! TOML; Codex writes its own file (see `codex_trust`). Covers what TOML 1.0 allows in such a
//! file (tables, quoted and dotted keys, inline tables, arrays and multi-line strings, which are
//! skipped as opaque values); whatever it cannot read is an error with the line, never a guess.

use std::collections::BTreeMap;

/// A leaf value: the strings and booleans Forge reads, anything else kept as its raw text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    Str(String),
    Bool(bool),
    Other(String),
}

/// Every scalar of a document under its full key path (`["projects", "/work/shop",
/// "trust_level"]`). Values inside arrays and arrays of tables are not kept.
#[derive(Debug, Default)]
pub struct Doc(BTreeMap<Vec<String>, Scalar>);

impl Doc {
    pub fn get(&self, path: &[&str]) -> Option<&Scalar> {
        self.0
            .get(&path.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    pub fn str(&self, path: &[&str]) -> Option<&str> {
        match self.get(path) {
            Some(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn bool(&self, path: &[&str]) -> Option<bool> {
        match self.get(path) {
            Some(Scalar::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

/// Parses `text`; `Err` names the line (1-based) and what is wrong there.
pub fn parse(text: &str) -> Result<Doc, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        line: 1,
    };
    let mut doc = Doc::default();
    let mut table: Vec<String> = Vec::new();
    loop {
        p.skip_blank_lines();
        if p.eof() {
            return Ok(doc);
        }
        if p.peek() == Some(b'[') {
            p.i += 1;
            let array = p.peek() == Some(b'[');
            if array {
                p.i += 1;
            }
            p.skip_ws();
            table = p.key()?;
            p.skip_ws();
            p.expect(b']')?;
            if array {
                p.expect(b']')?;
                // Values under an array of tables belong to one element of many: not kept.
                table.push("[]".into());
            }
        } else {
            let key = p.key()?;
            p.skip_ws();
            p.expect(b'=')?;
            p.skip_ws();
            let mut path = table.clone();
            path.extend(key);
            p.value(&path, &mut doc)?;
        }
        p.end_of_line()?;
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
}

impl Parser<'_> {
    fn eof(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("line {}: {what}", self.line))
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            self.err(&format!("expected `{}`", c as char))
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.i += 1;
            }
        }
    }

    /// Whitespace, comments and newlines (also inside arrays and between lines).
    fn skip_blank_lines(&mut self) {
        loop {
            self.skip_ws();
            self.skip_comment();
            match self.peek() {
                Some(b'\n') => {
                    self.line += 1;
                    self.i += 1;
                }
                Some(b'\r') => self.i += 1,
                _ => return,
            }
        }
    }

    fn end_of_line(&mut self) -> Result<(), String> {
        self.skip_ws();
        self.skip_comment();
        match self.peek() {
            None => Ok(()),
            Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => {
                self.i += 2;
                self.line += 1;
                Ok(())
            }
            Some(b'\n') => {
                self.i += 1;
                self.line += 1;
                Ok(())
            }
            _ => self.err("unexpected text after the value"),
        }
    }

    /// A dotted key: bare, "basic" or 'literal' parts.
    fn key(&mut self) -> Result<Vec<String>, String> {
        let mut parts = Vec::new();
        loop {
            self.skip_ws();
            let part = match self.peek() {
                Some(b'"') => self.basic_string()?,
                Some(b'\'') => self.literal_string()?,
                _ => {
                    let start = self.i;
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                    {
                        self.i += 1;
                    }
                    if start == self.i {
                        return self.err("expected a key");
                    }
                    String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
                }
            };
            parts.push(part);
            self.skip_ws();
            if self.peek() == Some(b'.') {
                self.i += 1;
            } else {
                return Ok(parts);
            }
        }
    }

    fn basic_string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    let esc = self.s.get(self.i + 1).copied();
                    self.i += 2;
                    match esc {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'n') => out.push(b'\n'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'r') => out.push(b'\r'),
                        Some(b'b') => out.push(8),
                        Some(b'f') => out.push(12),
                        Some(c @ (b'u' | b'U')) => {
                            let n = if c == b'u' { 4 } else { 8 };
                            let hex = self
                                .s
                                .get(self.i..self.i + n)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .and_then(char::from_u32);
                            let Some(ch) = hex else {
                                return self.err("bad unicode escape");
                            };
                            self.i += n;
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        _ => return self.err("bad escape in a string"),
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn literal_string(&mut self) -> Result<String, String> {
        self.expect(b'\'')?;
        let start = self.i;
        while !matches!(self.peek(), None | Some(b'\'' | b'\n')) {
            self.i += 1;
        }
        let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.expect(b'\'')?;
        Ok(s)
    }

    /// Skips a `"""` or `'''` string, which may span lines.
    fn multi_line_string(&mut self, quote: u8) -> Result<(), String> {
        self.i += 3;
        loop {
            match self.peek() {
                None => return self.err("unterminated multi-line string"),
                Some(b'\\') if quote == b'"' => self.i += 2,
                Some(b'\n') => {
                    self.line += 1;
                    self.i += 1;
                }
                Some(c) if c == quote && self.s[self.i..].starts_with(&[quote; 3]) => {
                    self.i += 3;
                    // Up to two more quotes belong to the content.
                    while self.peek() == Some(quote) {
                        self.i += 1;
                    }
                    return Ok(());
                }
                Some(_) => self.i += 1,
            }
        }
    }

    fn value(&mut self, path: &[String], doc: &mut Doc) -> Result<(), String> {
        match self.peek() {
            Some(q @ (b'"' | b'\'')) if self.s[self.i..].starts_with(&[q; 3]) => {
                self.multi_line_string(q)?;
                doc.0
                    .insert(path.to_vec(), Scalar::Other("<multi-line string>".into()));
            }
            Some(b'"') => {
                let s = self.basic_string()?;
                doc.0.insert(path.to_vec(), Scalar::Str(s));
            }
            Some(b'\'') => {
                let s = self.literal_string()?;
                doc.0.insert(path.to_vec(), Scalar::Str(s));
            }
            Some(b'{') => {
                self.i += 1;
                loop {
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        break;
                    }
                    let key = self.key()?;
                    self.skip_ws();
                    self.expect(b'=')?;
                    self.skip_ws();
                    let mut sub = path.to_vec();
                    sub.extend(key);
                    self.value(&sub, doc)?;
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {}
                        _ => return self.err("expected `,` or `}` in an inline table"),
                    }
                }
            }
            Some(b'[') => {
                // An array: its items are not kept, only skipped correctly.
                self.i += 1;
                let mut scratch = Doc::default();
                loop {
                    self.skip_blank_lines();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        break;
                    }
                    self.value(&[], &mut scratch)?;
                    self.skip_blank_lines();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {}
                        _ => return self.err("expected `,` or `]` in an array"),
                    }
                }
                doc.0.insert(path.to_vec(), Scalar::Other("<array>".into()));
            }
            _ => {
                let start = self.i;
                while !matches!(
                    self.peek(),
                    None | Some(b'\n' | b'\r' | b'#' | b',' | b']' | b'}')
                ) {
                    self.i += 1;
                }
                let raw = String::from_utf8_lossy(&self.s[start..self.i])
                    .trim()
                    .to_string();
                // Numbers, dates and times: one word, or a date and a time.
                if raw.is_empty()
                    || raw.split_whitespace().count() > 2
                    || !raw
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-_.: ".contains(c))
                {
                    return self.err("expected a value");
                }
                let v = match raw.as_str() {
                    "true" => Scalar::Bool(true),
                    "false" => Scalar::Bool(false),
                    _ => Scalar::Other(raw),
                };
                doc.0.insert(path.to_vec(), v);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tables_quoted_and_dotted_keys_and_inline_tables() {
        let doc = parse(concat!(
            "# comment\n",
            "model = \"o3\"  # trailing\n",
            "features.hooks = false\n",
            "[projects.\"/work/my shop\"]\n",
            "trust_level = \"trusted\"\n",
            "[projects.'/work/b.c']\n",
            "trust_level = 'untrusted'\n",
            "[hooks.state]\n",
            "\"/w/.codex/hooks.json:stop:0:0\" = { trusted_hash = \"sha256:ab\", enabled = false }\n",
            "[x]\n",
            "list = [\n  \"a]\", # c\n  { k = 1 },\n]\n",
            "doc = \"\"\"\nline \"quoted\" ]\n\"\"\"\n",
            "n = 3\n",
            "[[array]]\n",
            "trust_level = \"trusted\"\n",
            "esc = \"a\\\"b\\u00e9\"\r\n",
        ))
        .unwrap();
        assert_eq!(doc.str(&["model"]), Some("o3"));
        assert_eq!(doc.bool(&["features", "hooks"]), Some(false));
        assert_eq!(
            doc.str(&["projects", "/work/my shop", "trust_level"]),
            Some("trusted")
        );
        assert_eq!(
            doc.str(&["projects", "/work/b.c", "trust_level"]),
            Some("untrusted")
        );
        let key = "/w/.codex/hooks.json:stop:0:0";
        assert_eq!(
            doc.str(&["hooks", "state", key, "trusted_hash"]),
            Some("sha256:ab")
        );
        assert_eq!(doc.bool(&["hooks", "state", key, "enabled"]), Some(false));
        assert_eq!(doc.get(&["x", "n"]), Some(&Scalar::Other("3".into())));
        assert_eq!(doc.str(&["array", "trust_level"]), None);
        assert_eq!(doc.str(&["array", "[]", "esc"]), Some("a\"bé"));
    }

    #[test]
    fn what_it_cannot_read_is_an_error_with_the_line() {
        for (text, line) in [
            ("a = \"open\n", "line 1"),
            ("ok = 1\n[broken\n", "line 2"),
            ("a = 1 b = 2\n", "line 1"),
            ("x = \n", "line 1"),
            ("= 1\n", "line 1"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(line), "{text:?}: {e}");
        }
    }
}
