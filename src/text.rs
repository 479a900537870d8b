//! Byte-level text helpers shared by the report parsers and the scenario scan: runner output
//! arrives as arbitrary bytes (non-UTF-8, ANSI colours, CRLF, lines of any length). Also the one
//! shell quoting that the sandbox's launch lines, the hooks' settings and the guard's messages
//! share, so that what a person copies and what Forge runs quote alike.

use std::borrow::Cow;
use std::io::BufRead;

/// Longest line handed to a parser. A longer line (a minified JSON report printed to stdout, or
/// a runaway program with no newline) is cut here so memory stays bounded whatever the input.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// Calls `f` with every line of `reader`: without its `\n` or `\r\n`, ANSI escapes removed,
/// invalid UTF-8 replaced. Memory is bounded by [`MAX_LINE`] whatever the input.
pub fn for_each_line<R: BufRead>(mut reader: R, mut f: impl FnMut(&str)) -> std::io::Result<()> {
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut overflow = false;
    loop {
        let (done, used) = {
            let buf = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    push_capped(&mut line, &buf[..i], &mut overflow);
                    (true, i + 1)
                }
                None => {
                    push_capped(&mut line, buf, &mut overflow);
                    (false, buf.len())
                }
            }
        };
        reader.consume(used);
        if done {
            emit(&line, &mut f);
            line.clear();
            overflow = false;
        }
    }
    if !line.is_empty() {
        emit(&line, &mut f);
    }
    Ok(())
}

fn push_capped(line: &mut Vec<u8>, bytes: &[u8], overflow: &mut bool) {
    if *overflow {
        return;
    }
    let room = MAX_LINE.saturating_sub(line.len());
    if bytes.len() > room {
        line.extend_from_slice(&bytes[..room]);
        *overflow = true;
    } else {
        line.extend_from_slice(bytes);
    }
}

fn emit(line: &[u8], f: &mut impl FnMut(&str)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    if memchr::memchr(0x1b, line).is_some() {
        f(&strip_ansi(&text));
    } else {
        f(&text);
    }
}

/// Removes ANSI CSI (`ESC [ … letter`) and OSC (`ESC ] … BEL|ST`) sequences: runners colour
/// their output when they think a terminal is attached, and `--color=always` is common in CI.
pub fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            // `ESC ( B` and friends: intermediate bytes, then one final byte.
            Some(c) if (' '..='/').contains(c) => {
                while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                chars.next();
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    Cow::Owned(out)
}

/// Lowercase ASCII letters and digits only: the form in which a scenario id
/// (`guest-pays-by-card`), a Rust or Python test name (`guest_pays_by_card`) and a Go one
/// (`TestGuestPaysByCard`) can be compared.
pub fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Slug of a scenario title: lowercase, runs of anything but ASCII letters and digits become
/// one `-`, no leading or trailing `-`. The slug is the scenario's id in markers and reports.
///
/// ```
/// assert_eq!(forge::text::slug("Guest pays by card!"), "guest-pays-by-card");
/// ```
pub fn slug(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut dash = false;
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            dash = true;
        }
    }
    out
}

/// Keeps at most `max` characters, marking the cut, so one enormous line cannot flood a report.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// Keeps at most the last `max` characters, marking the cut: a command's output ends with what
/// matters (the failures, the summary).
pub fn clip_tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let mut out = String::from("…");
    out.extend(s.chars().skip(n - max));
    out
}

/// Agent text made inert for a terminal, a log line or a commit message: one line, no control
/// character (no escape sequence, carriage return or line break that could draw a fake gate
/// line or add a commit trailer), no bidirectional override, clipped to `max` characters.
pub fn inert(s: &str, max: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if is_unsafe(c) { ' ' } else { c })
        .collect();
    clip(
        one.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .as_str(),
        max,
    )
}

/// Text for a terminal: line breaks kept, every other control character and bidirectional
/// override replaced by a space.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if c != '\n' && is_unsafe(c) { ' ' } else { c })
            .collect(),
    )
}

fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Shortens `s` to about `max` characters without cutting a word, a path or a quoted command:
/// the cut falls between whitespace-separated words — a `backtick span` or a quoted string is
/// one word, spaces and all — and is marked with ` …`. A first word longer than `max` is kept
/// whole rather than cut (a command or path shown in part would mislead).
pub fn clip_words(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    // Byte offsets where a word ends (at whitespace outside any quote), with the characters
    // before them.
    let mut ends: Vec<(usize, usize)> = Vec::new();
    let (mut tick, mut quote, mut in_word) = (false, None::<char>, false);
    for (n, (i, c)) in s.char_indices().enumerate() {
        if c.is_whitespace() && !tick && quote.is_none() {
            if in_word {
                ends.push((i, n));
            }
            in_word = false;
            continue;
        }
        match c {
            '`' if quote.is_none() => tick = !tick,
            '"' | '\'' if !tick => {
                if quote == Some(c) {
                    quote = None;
                } else if quote.is_none() && !in_word {
                    quote = Some(c);
                }
            }
            _ => {}
        }
        in_word = true;
    }
    // Room for the ` …` mark.
    let fits = ends.iter().rev().find(|(_, n)| n + 2 <= max);
    let cut = match (fits, ends.first()) {
        (Some((i, _)), _) => *i,
        (None, Some((i, _))) => *i,
        (None, None) => return s.to_string(),
    };
    format!("{} …", s[..cut].trim_end())
}

/// `s` as one word for bash, zsh and POSIX sh: single quotes, with each `'` written `'\''`.
/// Every byte but NUL survives (newlines, `$`, backslashes, here-documents). A word of only
/// plain characters stays bare, so the commands Forge prints read as a person would type them.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("plain-word_1.rs"), "plain-word_1.rs");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's $HOME"), r"'it'\''s $HOME'");
    }

    #[test]
    fn agent_text_is_one_inert_line() {
        let evil =
            "ok\n  \u{2713} final-ancestry \u{2014} fake\r\x1b[2K\u{202E}txt\n\nForge-Slice: x";
        let s = inert(evil, 200);
        assert!(!s.contains('\n') && !s.contains('\r') && !s.contains('\x1b'));
        assert!(!s.contains('\u{202E}'));
        assert_eq!(
            s,
            "ok \u{2713} final-ancestry \u{2014} fake [2K txt Forge-Slice: x"
        );
        assert_eq!(printable("a\nb\x1b[31m"), "a\nb [31m");
        assert!(matches!(printable("plain\n"), Cow::Borrowed(_)));
    }

    fn lines(input: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for_each_line(input, |l| out.push(l.to_string())).unwrap();
        out
    }

    #[test]
    fn lines_handle_crlf_ansi_and_invalid_utf8() {
        let got = lines(b"a\r\n\x1b[32mok\x1b[0m\nbad \xff byte\nlast");
        assert_eq!(got, vec!["a", "ok", "bad \u{fffd} byte", "last"]);
    }

    #[test]
    fn overlong_line_is_capped() {
        let big = vec![b'x'; MAX_LINE + 10];
        let mut input = big.clone();
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE);
        assert_eq!(got[1], "next");
    }

    #[test]
    fn strip_ansi_removes_csi_and_osc() {
        assert_eq!(
            strip_ansi(
                "\x1b[1;31mFAIL\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[32mok\x1b(B\x1b[m"
            ),
            "FAIL link ok"
        );
    }

    #[test]
    fn slug_and_normalize() {
        assert_eq!(slug("Guest pays by card!"), "guest-pays-by-card");
        assert_eq!(slug("  --A  b-- "), "a-b");
        assert_eq!(normalize("TestGuestPaysByCard"), "testguestpaysbycard");
        assert_eq!(normalize("guest-pays_by card"), "guestpaysbycard");
    }

    #[test]
    fn clip_words_never_cuts_a_command_or_a_path() {
        let reason = "the circuit breaker of change `discount` is open (3 consecutive failures); a person resets it with `forge verify --reset-breaker --change discount`";
        for max in 20..reason.len() {
            let c = clip_words(reason, max);
            assert!(c.ends_with(" …"), "{max}: {c}");
            assert!(
                c.chars().count() <= max || !c[..c.len() - 4].contains(' '),
                "{max}: {c}"
            );
            // Backticks come in pairs: no command is cut open.
            assert_eq!(c.matches('`').count() % 2, 0, "{max}: {c}");
            assert!(reason.starts_with(c.trim_end_matches(" …")), "{max}: {c}");
        }
        assert_eq!(
            clip_words(reason, 110),
            "the circuit breaker of change `discount` is open (3 consecutive failures); a person resets it with …"
        );
        let path = "/home/ada/projects/shop/.forge/changes/checkout/verify-attempts.yaml";
        let cmd = format!("rm -rf {path} && cat \"/etc/a b/c\" ~/.ssh/id_ed25519");
        for max in 5..cmd.len() {
            let c = clip_words(&cmd, max);
            let kept = c.trim_end_matches(" …");
            // Every kept word is a whole word of the command.
            assert!(cmd.starts_with(kept), "{max}: {c}");
            let next = cmd[kept.len()..].chars().next();
            assert!(
                next.is_none_or(char::is_whitespace),
                "{max}: cut inside a word: {c}"
            );
            assert_eq!(kept.matches('"').count() % 2, 0, "{max}: {c}");
        }
        // A first word longer than the limit is kept whole.
        assert_eq!(
            clip_words(&format!("{path} is gone"), 10),
            format!("{path} …")
        );
        assert_eq!(clip_words(path, 10), path);
        assert_eq!(clip_words("short", 10), "short");
        // An apostrophe inside a word is not a quote.
        assert_eq!(
            clip_words("the person's call, not the agent's", 20),
            "the person's call, …"
        );
    }

    #[test]
    fn clip_marks_the_cut() {
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
    }
}
