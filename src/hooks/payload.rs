//! A hook's stdin read into the fields Forge uses ([`Payload`]). Most of a file tool's payload
//! is its content (a 10 MB Write), which nothing judges: for a tool whose judgment reads only
//! some keys of its input ([`judged_keys`]), the rest is left as the text it came in, and the
//! whole call is parsed from that text only when a person's allow-once exception could apply
//! (BENCHMARKS.md §8). Whichever way a payload is read, it gets the answer — and the error —
//! that parsing it whole gives ([`whole`]); this file does not decide anything else.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::guard::tools::judged_keys;

/// The fields of a hook payload Forge reads; the rest is ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Payload<'a> {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The tool's input; for a skimmed call ([`Payload::whole_input`] set) only its
    /// [`judged_keys`] and the keys the timeline describes a call by ([`super::DESCRIBED_KEYS`]).
    #[serde(default)]
    pub tool_input: Option<Value>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The client's own list of the session's background work (Claude Code 2.1.220+, at Stop).
    #[serde(default)]
    pub background_tasks: Option<Value>,
    /// A tool's result (PostToolUse): the Agent tool's says whether its subagent runs on. Read
    /// only for the Agent tool, so a skimmed call (a file tool's) leaves it out.
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// The subagent a SubagentStart/SubagentStop (or a subagent's own tool call) is about.
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub agent_type: Option<String>,
    /// The client's id of this tool call (Claude Code, Codex CLI): the journal's name for it.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// A skimmed call's whole input, as sent: the exact call an allow-once exception names.
    #[serde(skip)]
    pub whole_input: Option<&'a RawValue>,
}

/// The payload in `bytes`, skimmed when it is a file tool's call ([`skimmed`]), else whole.
pub(super) fn parse(bytes: &[u8]) -> Result<Payload<'_>, String> {
    match skimmed(bytes) {
        Some(p) => Ok(p),
        None => whole(bytes),
    }
}

/// The payload parsed whole: what every call got before skimming, and the answer a skimmed
/// parse must equal, errors included.
fn whole(bytes: &[u8]) -> Result<Payload<'static>, String> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("the hook input is not valid JSON ({e})"))?;
    if !v.is_object() {
        return Err("the hook input is not a JSON object".into());
    }
    serde_json::from_value(v)
        .map_err(|e| format!("the hook input has a field of the wrong type ({e})"))
}

/// A file tool's payload with the input keys its judgment does not read left unparsed. `None`
/// for any other payload, and for one that anything could make a whole parse refuse (then
/// [`whole`] says why): serde_json's skipping checks the syntax and UTF-8 of what it skips,
/// but not the nesting limit, surrogate escapes or the range of numbers, which [`plain`]
/// vouches for.
fn skimmed(bytes: &[u8]) -> Option<Payload<'_>> {
    // Every top-level value left as text (no copy); a repeated key keeps its last value, as
    // a whole parse does.
    let top: HashMap<String, &RawValue> = serde_json::from_slice(bytes).ok()?;
    fn field<'b, T: Deserialize<'b>>(top: &HashMap<String, &'b RawValue>, key: &str) -> Option<T> {
        serde_json::from_str(top.get(key).map_or("null", |r| r.get())).ok()
    }
    let tool_name: Option<String> = field(&top, "tool_name")?;
    let keys = judged_keys(tool_name.as_deref()?)?;
    if !plain(bytes) {
        return None;
    }
    let (tool_input, whole_input) = match top.get("tool_input") {
        Some(raw) if raw.get().starts_with('{') => (Some(skim(raw, keys)?), Some(*raw)),
        _ => (field(&top, "tool_input")?, None),
    };
    Some(Payload {
        session_id: field(&top, "session_id")?,
        cwd: field(&top, "cwd")?,
        tool_name,
        tool_input,
        stop_hook_active: field(&top, "stop_hook_active")?,
        transcript_path: field(&top, "transcript_path")?,
        background_tasks: field(&top, "background_tasks")?,
        tool_response: None,
        agent_id: field(&top, "agent_id")?,
        agent_type: field(&top, "agent_type")?,
        tool_use_id: field(&top, "tool_use_id")?,
        whole_input,
    })
}

/// The object `raw` with only `keys` and the timeline's [`super::DESCRIBED_KEYS`] parsed; every
/// other value is skipped without being decoded (no copy of a string with escapes).
fn skim(raw: &RawValue, keys: &[&str]) -> Option<Value> {
    struct Skim<'k>(&'k [&'k str]);
    impl<'de> Visitor<'de> for Skim<'_> {
        type Value = Map<String, Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a tool input object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = Map::new();
            while let Some(k) = m.next_key::<String>()? {
                if self.0.contains(&k.as_str()) || super::DESCRIBED_KEYS.contains(&k.as_str()) {
                    let v: Value = m.next_value()?;
                    out.insert(k, v);
                } else {
                    m.next_value::<IgnoredAny>()?;
                }
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    serde::Deserializer::deserialize_map(&mut de, Skim(keys))
        .ok()
        .map(Value::Object)
}

/// Nesting deeper than this is left to a whole parse (serde_json refuses past 128 levels).
const PLAIN_DEPTH: usize = 100;

/// Whether JSON text that serde_json has already read through holds nothing a whole parse
/// could refuse beyond what skipping checks: no nesting deeper than [`PLAIN_DEPTH`], no `\u`
/// escape of a UTF-16 surrogate (a lone one is an error), no number with an exponent or a
/// 300-digit integer part (one may be out of range). A false only costs the whole parse.
fn plain(json: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'"' => {
                i += 1;
                loop {
                    // Plain text in blocks: a content is almost all of the input.
                    while let Some(block) = json.get(i..i + 16) {
                        if block
                            .iter()
                            .fold(false, |a, &c| a | (c == b'"') | (c == b'\\'))
                        {
                            break;
                        }
                        i += 16;
                    }
                    match json.get(i) {
                        None => return false,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if json.get(i + 1) == Some(&b'u') => {
                            let surrogate = json.get(i + 2..i + 4).is_none_or(|h| {
                                matches!(h[0], b'd' | b'D')
                                    && matches!(h[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                            });
                            if surrogate {
                                return false;
                            }
                            i += 6;
                        }
                        Some(b'\\') => i += 2,
                        Some(_) => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > PLAIN_DEPTH {
                    return false;
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while json
                    .get(i)
                    .is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    i += 1;
                }
                let number = &json[start..i];
                if number.len() > 300 || number.iter().any(|c| matches!(c, b'e' | b'E')) {
                    return false;
                }
            }
            _ => i += 1,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The payload of a Claude Code Write of `input`.
    fn write(input: &str) -> String {
        format!(
            r#"{{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{input}}}"#
        )
    }

    /// `parse` agrees with a whole parse: the same error, or the same fields, with a skimmed
    /// input that holds the judged keys and a whole input that parses to the whole one.
    fn agrees(bytes: &[u8]) -> Result<Payload<'_>, String> {
        let got = parse(bytes);
        let want = whole(bytes);
        match (&got, &want) {
            (Err(g), Err(w)) => assert_eq!(g, w),
            (Ok(g), Ok(w)) => {
                let mut g = g.clone();
                if let Some(raw) = g.whole_input.take() {
                    let full: Value = serde_json::from_str(raw.get()).unwrap();
                    assert_eq!(Some(&full), w.tool_input.as_ref());
                    let keys = judged_keys(g.tool_name.as_deref().unwrap()).unwrap();
                    let kept: Map<String, Value> = full
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter(|(k, _)| {
                            keys.contains(&k.as_str())
                                || super::super::DESCRIBED_KEYS.contains(&k.as_str())
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    assert_eq!(g.tool_input, Some(Value::Object(kept)));
                    g.tool_input = w.tool_input.clone();
                    g.tool_response = w.tool_response.clone();
                }
                // (`RawValue` has no `==`; the whole input is taken out above.)
                assert_eq!(format!("{g:?}"), format!("{w:?}"));
            }
            _ => panic!(
                "{:?} vs whole {:?} for {}",
                got.as_ref().err(),
                want.as_ref().err(),
                String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
            ),
        }
        got
    }

    #[test]
    fn a_write_is_read_without_its_content_and_agrees_with_a_whole_parse() {
        // Escapes of every kind, Unicode raw and escaped, a quote and a backslash.
        let content = "line \"one\"\n\ttab \\ back/slash \u{e9}t\u{e9} \u{1f600} \u{1} end";
        let input = json!({"file_path": "/p/a.rs", "content": content}).to_string();
        let escaped = r#"{"file_path":"/p/\u00e9.rs","content":"\u00e9\/\b\f\r\u0041 x"}"#;
        for input in [input.as_str(), escaped] {
            let bytes = write(input);
            let p = agrees(bytes.as_bytes()).unwrap();
            let whole_input = p.whole_input.expect("skimmed");
            assert_eq!(whole_input.get(), input, "the input as sent");
            assert!(p.tool_input.as_ref().unwrap().get("content").is_none());
        }
        // An escaped surrogate pair is left to a whole parse, which reads it the same.
        let pair = write(r#"{"file_path":"/p/a","content":"\ud83d\ude00"}"#);
        assert!(agrees(pair.as_bytes()).unwrap().whole_input.is_none());
        let small = write(&json!({"file_path": "/p/a.rs", "content": "x"}).to_string());
        let p = agrees(small.as_bytes()).unwrap();
        assert_eq!(p.tool_input, Some(json!({"file_path": "/p/a.rs"})));
        // A huge content with an escape every line.
        let big = "    let value = compute(input, &mut state); // 60 bytes\n".repeat(60_000);
        let bytes = write(&json!({"file_path": "/p/big.rs", "content": big}).to_string());
        let p = agrees(bytes.as_bytes()).unwrap();
        assert!(p.whole_input.is_some(), "skimmed");
        // Every file tool's data keys, an Edit's `edits` array among them.
        for (tool, input) in [
            (
                "Edit",
                json!({"file_path": "/p/a", "old_string": "a\n", "new_string": "b\n"}),
            ),
            (
                "MultiEdit",
                json!({"file_path": "/p/a", "edits": [{"old_string": "a", "new_string": "b"}]}),
            ),
            (
                "NotebookEdit",
                json!({"notebook_path": "/p/n.ipynb", "new_source": "x\n", "path": "/p/o"}),
            ),
            ("write_file", json!({"file_path": "/p/a", "content": "x"})),
            (
                "replace",
                json!({"file_path": "/p/a", "old_string": "x", "new_string": "y", "expected_replacements": 2}),
            ),
        ] {
            let bytes = json!({"tool_name": tool, "tool_input": input, "cwd": "/p"}).to_string();
            let p = agrees(bytes.as_bytes()).unwrap();
            assert!(p.whole_input.is_some(), "{tool}");
        }
    }

    #[test]
    fn other_tools_are_parsed_whole() {
        for (tool, input) in [
            ("Bash", json!({"command": "ls", "description": "d"})),
            (
                "apply_patch",
                json!({"input": "*** Begin Patch\n*** Add File: .git/hooks/x\n"}),
            ),
            ("Grep", json!({"pattern": "x", "glob": "*.rs"})),
            (
                "mcp__fs__write_file",
                json!({"path": "/p/a", "content": "x"}),
            ),
            ("Agent", json!({"prompt": "p"})),
        ] {
            let bytes = json!({"tool_name": tool, "tool_input": input, "tool_response": {"a": 1}})
                .to_string();
            let p = agrees(bytes.as_bytes()).unwrap();
            assert!(p.whole_input.is_none(), "{tool}");
            assert_eq!(p.tool_input, Some(input));
            assert_eq!(p.tool_response, Some(json!({"a": 1})));
        }
    }

    #[test]
    fn what_a_whole_parse_refuses_is_refused_with_its_words() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mut cases: Vec<String> = vec![
            // A lone surrogate, leading or trailing, in the content or a key.
            write(r#"{"file_path":"/p/a","content":"x\ud800y"}"#),
            write(r#"{"file_path":"/p/a","content":"x\udc00"}"#),
            write(r#"{"file_path":"/p/a","\ud800":1}"#),
            // Numbers out of range, and in range.
            write(r#"{"file_path":"/p/a","content":"x","n":1e400}"#),
            write(r#"{"file_path":"/p/a","content":"x","n":-1E+400}"#),
            write(r#"{"file_path":"/p/a","content":"x","n":1e5}"#),
            write(&format!(
                r#"{{"file_path":"/p/a","n":{}}}"#,
                "9".repeat(400)
            )),
            write(&format!(
                r#"{{"file_path":"/p/a","n":{}.5}}"#,
                "9".repeat(299)
            )),
            // Wrong types, a repeated key, an input that is no object or is null.
            write(r#"{"file_path":"/p/a","content":"x"}"#).replace(r#""cwd":"/p""#, r#""cwd":5"#),
            write(r#"{"file_path":"/p/a","file_path":"/p/b","content":"x","content":7}"#),
            r#"{"tool_name":"Write","tool_name":"Bash","tool_input":{"command":"ls"}}"#.into(),
            write(r#""just text""#),
            write("null"),
            write(r#"{"file_path":5,"content":"x"}"#),
            // Invalid JSON in what is skipped: a control character, a bad escape, a cut.
            write("{\"file_path\":\"/p/a\",\"content\":\"a\u{1}b\"}"),
            write(r#"{"file_path":"/p/a","content":"\x"}"#),
            write(r#"{"file_path":"/p/a","content":"abc"#),
            write(r#"{"file_path":"/p/a","content":"x"}"#) + " trailing",
            "[1]".into(),
            "{not json".into(),
        ];
        // Nesting around serde_json's limit, in a skipped key and in a judged one.
        for n in [95, 99, 100, 120, 125, 126, 127, 128, 129, 200] {
            cases.push(write(&format!(r#"{{"file_path":"/p/a","x":{}}}"#, deep(n))));
            cases.push(write(&format!(r#"{{"file_path":{}}}"#, deep(n))));
        }
        let mut refused = 0;
        for c in &cases {
            refused += agrees(c.as_bytes()).is_err() as usize;
        }
        assert!(refused >= 12, "{refused}");
        // Invalid UTF-8 in the content.
        let mut bytes = write(r#"{"file_path":"/p/a","content":"xx"}"#).into_bytes();
        let at = bytes.len() - 4;
        bytes[at] = 0xff;
        assert!(agrees(&bytes).is_err());
    }

    #[test]
    fn plain_flags_what_skipping_does_not_check() {
        assert!(plain(br#"{"a":"x\\ud800","b":[1,-2.5,0],"c":"\u00e9"}"#));
        assert!(!plain(br#"{"a":"\ud800"}"#));
        assert!(!plain(br#"{"a":"\uDBFF\uDC00"}"#));
        assert!(!plain(br#"{"a":1e3}"#));
        assert!(!plain(format!("[{}]", "1".repeat(301)).as_bytes()));
        assert!(plain(
            format!("{}{}", "[".repeat(100), "]".repeat(100)).as_bytes()
        ));
        assert!(!plain(
            format!("{}{}", "[".repeat(101), "]".repeat(101)).as_bytes()
        ));
        // A string longer than a block, its quote past the block's end.
        let long = format!(r#"["{}\"{}","\ud800"]"#, "a".repeat(40), "b".repeat(17));
        assert!(!plain(long.as_bytes()));
    }
}
