//! Redacted views of config files a sandbox lets its commands read but that can hold a
//! credential inside (red team of issue 34: `[url "https://oauth2:TOKEN@host/"]` in
//! `~/.gitconfig`, `[registries.corp] token = …` in `~/.cargo/config.toml`, `"env":
//! {"ANTHROPIC_AUTH_TOKEN": …}` in another client's `settings.json`). A view keeps every key and
//! the structure, so git and cargo still parse it, and replaces each credential-shaped value:
//! userinfo leaves URLs, any other value becomes [`REDACTED`]. "Credential-shaped" is
//! [`super::is_secret_env_value`] — the environment's test, one notion for both.
//!
//! Pure: which files (the [`VIEWS`] table) and what their view says. `mod.rs` writes the view
//! outside the sandbox, `mounts.rs` binds it read-only over the original.

use std::path::{Path, PathBuf};

use super::is_secret_env_value;
use super::resolve::Client;

/// What a credential-shaped value becomes.
pub const REDACTED: &str = "<redacted by forge>";

/// A file's redacted view: what a plan binds over `path`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct View {
    pub path: PathBuf,
    pub text: String,
}

impl View {
    /// The name of the copy in the sandbox's folder: named by its path and text, so a changed
    /// original gets a new copy, and a namespace binding the old one is not the plan's any more
    /// (keeper.rs compares mount targets and sources).
    pub fn file_name(&self) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(self.path.as_os_str().as_encoded_bytes());
        h.update([0]);
        h.update(self.text.as_bytes());
        let d = h.finalize();
        d[..12].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// How a file is read, for redaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// git's config syntax (`[section "sub"]`, `key = value`, `\` continuations).
    Git,
    Toml,
    Json,
}

/// A config file under home that gets a view where a profile lets its commands read it.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Relative to home.
    pub path: &'static str,
    pub format: Format,
    /// A client's own settings: whole to that client where it runs inside (red, green, review:
    /// it needs its own `env`), as its own credential is.
    pub client: Option<Client>,
}

const fn row(path: &'static str, format: Format, client: Option<Client>) -> Row {
    Row {
        path,
        format,
        client,
    }
}

/// The config files under home that a sandbox grants (`HOME_READ`, the clients' control files)
/// and that can carry a credential inline. The git config's include files are added by
/// [`candidates`].
pub const VIEWS: &[Row] = &[
    row(".gitconfig", Format::Git, None),
    row(".config/git/config", Format::Git, None),
    row(".cargo/config.toml", Format::Toml, None),
    row(".cargo/config", Format::Toml, None),
    row(".claude/settings.json", Format::Json, Some(Client::Claude)),
    row(
        ".claude/settings.local.json",
        Format::Json,
        Some(Client::Claude),
    ),
    row(".codex/config.toml", Format::Toml, Some(Client::Codex)),
    row(".gemini/settings.json", Format::Json, Some(Client::Gemini)),
];

/// Every file that may get a view: the [`VIEWS`] rows under `home`, and the git config's
/// include files outside the project (the project's own are its files, read-only there).
pub fn candidates(
    home: &Path,
    git_includes: &[PathBuf],
    project: &Path,
) -> Vec<(PathBuf, Format, Option<Client>)> {
    let mut out: Vec<(PathBuf, Format, Option<Client>)> = VIEWS
        .iter()
        .map(|r| (home.join(r.path), r.format, r.client))
        .collect();
    for inc in git_includes {
        if !inc.starts_with(project) && !out.iter().any(|(p, _, _)| p == inc) {
            out.push((inc.clone(), Format::Git, None));
        }
    }
    out
}

/// The view of `text` read as `format`: the same text but for each credential-shaped value.
pub fn redact(format: Format, text: &str) -> String {
    match format {
        Format::Git => redact_lines(text, git_line),
        Format::Toml => redact_lines(text, toml_line),
        Format::Json => redact_json(text),
    }
}

/// A key as the environment test reads names: `apiKeyHelper` → `API_KEY_HELPER`,
/// `extraHeader` → `EXTRA_HEADER`, `registries.corp.token` → `REGISTRIES_CORP_TOKEN`.
fn key_name(key: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in key.trim().trim_matches(['"', '\'']).chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(match c {
            '.' | '-' | ' ' => '_',
            c => c.to_ascii_uppercase(),
        });
    }
    out
}

/// `text` with the userinfo of every URL in it removed (`https://u:p@host/` → `https://host/`),
/// but an SSH URL's user alone (`ssh://git@github.com/`): it names the account, the key is the
/// credential (and `~/.ssh` is hidden). With `ssh_users`, those go too.
fn strip_userinfo_with(text: &str, ssh_users: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let scheme = rest[..i]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .next()
            .unwrap_or("");
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let end = rest
            .find(['/', '?', '#', '"', '\'', ' ', '\t', ']', ','])
            .unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            let ssh_user = scheme.ends_with("ssh") && !rest[..at].contains(':');
            if ssh_users || !ssh_user {
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn strip_userinfo(text: &str) -> String {
    strip_userinfo_with(text, false)
}

/// What a value of `key` becomes: `None` when it is no credential. A URL that only carried
/// userinfo keeps the rest (a proxy, an `insteadOf` target still work without it).
fn judge(key: &str, value: &str) -> Option<String> {
    let name = key_name(key);
    // Judged without its quotes: `"http://u:p@proxy"` is a URL.
    let bare = value.trim().trim_matches(['"', '\'']);
    // An SSH URL's user is no credential here (see [`strip_userinfo_with`]).
    let ssh_free = strip_userinfo_with(bare, true);
    let judged = if strip_userinfo(bare) == bare {
        ssh_free.as_str()
    } else {
        bare
    };
    if !is_secret_env_value(&name, judged) {
        return None;
    }
    let stripped = strip_userinfo(value);
    if stripped != value && !is_secret_env_value(&name, &strip_userinfo(bare)) {
        return Some(stripped);
    }
    Some(String::new())
}

/// A comment that may hold a credential someone noted beside its key: one that would be
/// redacted as a value, or names a credential (`; token glpat-…`). Nothing parses a comment,
/// so removing a harmless one costs nothing.
fn secret_comment(text: &str) -> bool {
    is_secret_env_value("COMMENT", text)
        || strip_userinfo(text) != text
        || text
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|w| !w.is_empty() && super::is_secret_env(&key_name(w)))
}

/// Line-based redaction: `one` takes the lines from `i` and returns how many it used and what
/// replaces them (`None`: kept as they are).
fn redact_lines(text: &str, one: fn(&[&str]) -> (usize, Option<String>)) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        let (used, new) = one(&lines[i..]);
        let used = used.max(1).min(lines.len() - i);
        match new {
            Some(n) => {
                out.push_str(&n);
                if lines[i + used - 1].ends_with('\n') {
                    out.push('\n');
                }
            }
            None => lines[i..i + used].iter().for_each(|l| out.push_str(l)),
        }
        i += used;
    }
    out
}

/// The index of the first `stop` byte outside double quotes (git and TOML basic strings, with
/// backslash escapes) and, for TOML, single quotes.
fn outside_quotes(s: &str, stop: &[u8], single: bool) -> Option<usize> {
    let b = s.as_bytes();
    let (mut dq, mut sq, mut esc) = (false, false, false);
    for (i, &c) in b.iter().enumerate() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            b'\\' if dq || !single => esc = true,
            b'"' if !sq => dq = !dq,
            b'\'' if single && !dq => sq = !sq,
            c if !dq && !sq && stop.contains(&c) => return Some(i),
            _ => {}
        }
    }
    None
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// One logical line of a git config: a section header (with, maybe, a key after it), a
/// comment, or `key = value` continued by trailing backslashes.
fn git_line(lines: &[&str]) -> (usize, Option<String>) {
    let first = lines[0].trim_end_matches(['\n', '\r']);
    let t = first.trim_start();
    if t.starts_with('#') || t.starts_with(';') {
        return (
            1,
            secret_comment(t).then(|| format!("{}# {REDACTED}", indent(first))),
        );
    }
    if t.starts_with('[') {
        let close = outside_quotes(t, b"]", false).map_or(t.len(), |c| c + 1);
        let (head, rest) = t.split_at(close);
        let head_new = strip_userinfo(head);
        let rest_new = git_pair(rest);
        if head_new == head && rest_new.is_none() {
            return (1, None);
        }
        let rest = rest_new.unwrap_or_else(|| rest.to_string());
        return (1, Some(format!("{}{head_new}{rest}", indent(first))));
    }
    // A value continued on the next lines: each ends in an odd number of backslashes.
    let mut used = 1;
    let mut logical = first.to_string();
    while used < lines.len() {
        let trailing = logical.len() - logical.trim_end_matches('\\').len();
        if trailing.is_multiple_of(2) {
            break;
        }
        logical.pop();
        logical.push_str(lines[used].trim_end_matches(['\n', '\r']));
        used += 1;
    }
    (
        used,
        git_pair(&logical).map(|new| format!("{}{}", indent(first), new.trim_start())),
    )
}

/// `key = value` of a git config, redacted when the value is a credential (its comment goes
/// with it).
fn git_pair(line: &str) -> Option<String> {
    let eq = line.find('=')?;
    let (key, value) = (&line[..eq], &line[eq + 1..]);
    let value = match outside_quotes(value, b"#;", false) {
        Some(c) => &value[..c],
        None => value,
    }
    .trim();
    let new = judge(key, value)?;
    let new = if new.is_empty() {
        format!("\"{REDACTED}\"")
    } else {
        new
    };
    Some(format!("{} = {new}", key.trim_end()))
}

/// One logical line of a TOML file: a table header, a comment, or `key = value` (a multi-line
/// string or array runs on until it closes).
fn toml_line(lines: &[&str]) -> (usize, Option<String>) {
    let first = lines[0].trim_end_matches(['\n', '\r']);
    let t = first.trim_start();
    if t.starts_with('#') {
        return (
            1,
            secret_comment(t).then(|| format!("{}# {REDACTED}", indent(first))),
        );
    }
    if t.starts_with('[') {
        let new = strip_userinfo(first);
        return (1, (new != first).then_some(new));
    }
    let Some(eq) = outside_quotes(t, b"=", true) else {
        return (1, None);
    };
    let key = &t[..eq];
    let mut value = t[eq + 1..].trim_start().to_string();
    let mut used = 1;
    let more = |v: &str| -> bool {
        for q in ["\"\"\"", "'''"] {
            if let Some(body) = v.strip_prefix(q) {
                return !body.contains(q);
            }
        }
        if v.starts_with('[') {
            // An array open until its brackets outside strings balance.
            let mut depth = 0i32;
            let mut s = v;
            while let Some(i) = outside_quotes(s, b"[]#", true) {
                match s.as_bytes()[i] {
                    b'[' => depth += 1,
                    b']' => depth -= 1,
                    _ => {
                        let nl = s[i..].find('\n').map_or(s.len(), |n| i + n);
                        s = &s[nl..];
                        continue;
                    }
                }
                s = &s[i + 1..];
            }
            return depth > 0;
        }
        false
    };
    while more(&value) && used < lines.len() {
        value.push('\n');
        value.push_str(lines[used].trim_end_matches(['\n', '\r']));
        used += 1;
    }
    match toml_value(key, &value) {
        Some(new) => (
            used,
            Some(format!("{}{} = {new}", indent(first), key.trim_end())),
        ),
        None => (used, None),
    }
}

/// A TOML value of `key` redacted, or `None` when it holds no credential: an inline table pair
/// by pair; a string or an array judged on its text.
fn toml_value(key: &str, value: &str) -> Option<String> {
    let v = value.trim();
    if let Some(inner) = v.strip_prefix('{') {
        let end = outside_quotes(inner, b"}", true)?;
        let (body, after) = (&inner[..end], &inner[end + 1..]);
        let mut changed = false;
        let mut parts = Vec::new();
        let mut rest = body;
        loop {
            let cut = outside_quotes(rest, b",", true).unwrap_or(rest.len());
            let part = &rest[..cut];
            let new = outside_quotes(part, b"=", true).and_then(|eq| {
                toml_value(&format!("{key}.{}", &part[..eq]), &part[eq + 1..])
                    .map(|n| format!("{} = {n}", part[..eq].trim()))
            });
            changed |= new.is_some();
            parts.push(new.unwrap_or_else(|| part.trim().to_string()));
            if cut == rest.len() {
                break;
            }
            rest = &rest[cut + 1..];
        }
        let _ = after; // a comment after the table goes
        return changed.then(|| format!("{{ {} }}", parts.join(", ")));
    }
    // The value without a comment after it.
    let content = if v.starts_with("\"\"\"") || v.starts_with("'''") {
        v
    } else {
        match outside_quotes(v, b"#", true) {
            Some(c) => v[..c].trim_end(),
            None => v,
        }
    };
    let new = judge(key.rsplit('.').next().unwrap_or(key), content).or_else(|| {
        // `registries.corp.token`: the whole dotted key names it.
        is_secret_env_value(&key_name(key), content).then(String::new)
    })?;
    if !new.is_empty() {
        return Some(new);
    }
    Some(match content.chars().next() {
        Some('[') => "[]".to_string(),
        _ => format!("\"{REDACTED}\""),
    })
}

/// A JSON document with each credential-shaped string (judged with its key) replaced; one that
/// does not parse is shown empty (its reader could not use it either).
fn redact_json(text: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) else {
        return String::new();
    };
    if !json_walk(&mut v, "") {
        return text.to_string();
    }
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_default();
    out.push('\n');
    out
}

/// Redacts below `v` (the value of `key`); whether anything changed.
fn json_walk(v: &mut serde_json::Value, key: &str) -> bool {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut changed = false;
            for (k, x) in m.iter_mut() {
                changed |= json_walk(x, k);
            }
            changed
        }
        Value::Array(a) => {
            // Every element, not only up to the first changed.
            let mut changed = false;
            for x in a.iter_mut() {
                changed |= json_walk(x, key);
            }
            changed
        }
        Value::String(s) => match judge(key, s) {
            Some(new) => {
                *s = if new.is_empty() {
                    REDACTED.to_string()
                } else {
                    new
                };
                true
            }
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "glpat-SECRETSECRET";

    fn no_token(s: &str) {
        assert!(!s.contains("SECRETSECRET"), "a token is left:\n{s}");
        assert!(!s.contains("hunter2"), "a password is left:\n{s}");
    }

    #[test]
    fn gitconfig_loses_url_userinfo_headers_and_inline_helpers_but_keeps_the_rest() {
        let text = format!(
            "# my config\n[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n\
             [url \"https://oauth2:{TOKEN}@gitlab.example/\"]\n\tinsteadOf = https://gitlab.example/\n\
             [http]\n\textraHeader = Authorization: Bearer {TOKEN} ; set by ops\n\
             [credential]\n\thelper = \"!f() {{ echo password={TOKEN}; }}; f\"\n\
             [http \"https://proxy\"]\n\tproxy = http://bob:hunter2@proxy.example:3128\n\
             [core] editor = vim\n\
             [url \"ssh://git@github.com/\"]\n\tpushInsteadOf = https://github.com/\n"
        );
        let v = redact(Format::Git, &text);
        no_token(&v);
        assert!(v.contains("\tname = Ada Lovelace\n"), "{v}");
        assert!(v.contains("[url \"https://gitlab.example/\"]\n"), "{v}");
        assert!(v.contains("\tinsteadOf = https://gitlab.example/\n"), "{v}");
        assert!(
            v.contains(&format!("\textraHeader = \"{REDACTED}\"\n")),
            "{v}"
        );
        assert!(v.contains(&format!("\thelper = \"{REDACTED}\"\n")), "{v}");
        assert!(v.contains("\tproxy = http://proxy.example:3128\n"), "{v}");
        assert!(v.contains("[core] editor = vim\n"), "{v}");
        // An SSH user names the account; the key is the credential.
        assert!(v.contains("[url \"ssh://git@github.com/\"]\n"), "{v}");
        assert!(v.starts_with("# my config\n"), "{v}");
    }

    #[test]
    fn gitconfig_continued_values_comments_and_odd_quoting() {
        let text = format!(
            "[http]\n  extraheader = \"Authorization: \\\n  Bearer {TOKEN}\"\n[user]\n  name = \"A \\\"quoted\\\" name\" # a comment\n\
             ; token {TOKEN}\n[credential \"https://ada:{TOKEN}@git.example\"]\n  username = ada\n"
        );
        let v = redact(Format::Git, &text);
        no_token(&v);
        assert!(
            v.contains(&format!("  extraheader = \"{REDACTED}\"\n[user]")),
            "{v}"
        );
        assert!(
            v.contains("  name = \"A \\\"quoted\\\" name\" # a comment\n"),
            "{v}"
        );
        assert!(v.contains(&format!("# {REDACTED}\n")), "{v}");
        assert!(v.contains("[credential \"https://git.example\"]\n"), "{v}");
    }

    #[test]
    fn a_file_without_credentials_is_its_own_view() {
        for (f, t) in [
            (
                Format::Git,
                "[user]\n\tname = Ada\n[alias]\n\tco = checkout\n",
            ),
            (
                Format::Toml,
                "[build]\njobs = 4\n[net]\ngit-fetch-with-cli = true\n",
            ),
            (
                Format::Json,
                "{\"model\": \"opus\", \"permissions\": {\"allow\": []}}",
            ),
        ] {
            assert_eq!(redact(f, t), t);
        }
    }

    #[test]
    fn cargo_config_loses_registry_tokens_and_proxy_passwords() {
        let text = format!(
            "[registry]\ntoken = \"{TOKEN}\"\n[registries.corp]\nindex = \"sparse+https://corp.example/\"\ntoken = '{TOKEN}' # corp\n\
             [http]\nproxy = \"http://bob:hunter2@proxy.example:3128\"\n\
             [registries]\nother = {{ index = \"https://x\", token = \"{TOKEN}\" }}\n\
             registries.third.token = \"{TOKEN}\"\n\
             [env]\nDEPLOY_TOKEN = \"\"\"\n{TOKEN}\n\"\"\"\nRUST_LOG = \"debug\"\n"
        );
        let v = redact(Format::Toml, &text);
        no_token(&v);
        for kept in [
            "[registries.corp]\nindex = \"sparse+https://corp.example/\"\n",
            "proxy = \"http://proxy.example:3128\"\n",
            "other = { index = \"https://x\", token = \"<redacted by forge>\" }\n",
            "registries.third.token = \"<redacted by forge>\"\n",
            "[registry]\ntoken = \"<redacted by forge>\"\n",
            "DEPLOY_TOKEN = \"<redacted by forge>\"\nRUST_LOG = \"debug\"\n",
        ] {
            assert!(v.contains(kept), "{kept:?} not in\n{v}");
        }
        assert!(v.contains("token = \"<redacted by forge>\"\n[http]"), "{v}");
    }

    #[test]
    fn client_settings_lose_env_tokens_and_key_helpers() {
        let text = format!(
            "{{\"env\": {{\"ANTHROPIC_AUTH_TOKEN\": \"{TOKEN}\", \"ANTHROPIC_BASE_URL\": \"https://u:hunter2@proxy\", \"DEBUG\": \"1\"}},\n \"apiKeyHelper\": \"echo {TOKEN}\", \"model\": \"opus\"}}"
        );
        let v = redact(Format::Json, &text);
        no_token(&v);
        let parsed: serde_json::Value = serde_json::from_str(&v).unwrap();
        assert_eq!(parsed["env"]["ANTHROPIC_AUTH_TOKEN"], REDACTED);
        assert_eq!(parsed["env"]["ANTHROPIC_BASE_URL"], "https://proxy");
        assert_eq!(parsed["env"]["DEBUG"], "1");
        assert_eq!(parsed["apiKeyHelper"], REDACTED);
        assert_eq!(parsed["model"], "opus");
        // One that does not parse shows nothing.
        assert_eq!(redact(Format::Json, &format!("{{\"k\": \"{TOKEN}\"")), "");
    }

    #[test]
    fn codex_config_loses_env_tokens() {
        let text = format!(
            "model = \"o3\"\n[shell_environment_policy.set]\nOPENAI_API_KEY = \"{TOKEN}\"\n[mcp_servers.x]\nenv = {{ \"GITHUB_TOKEN\" = \"{TOKEN}\" }}\n"
        );
        let v = redact(Format::Toml, &text);
        no_token(&v);
        assert!(
            v.contains("env = { \"GITHUB_TOKEN\" = \"<redacted by forge>\" }\n"),
            "{v}"
        );
        assert!(
            v.contains("OPENAI_API_KEY = \"<redacted by forge>\"\n"),
            "{v}"
        );
        assert!(v.starts_with("model = \"o3\"\n"));
    }

    #[test]
    fn candidates_are_the_table_and_includes_outside_the_project() {
        let home = Path::new("/h");
        let c = candidates(
            home,
            &[
                PathBuf::from("/h/.gitconfig-work"),
                PathBuf::from("/p/.gitinc"),
            ],
            Path::new("/p"),
        );
        assert!(
            c.iter()
                .any(|(p, f, _)| p == Path::new("/h/.gitconfig-work") && *f == Format::Git)
        );
        assert!(!c.iter().any(|(p, _, _)| p == Path::new("/p/.gitinc")));
        assert!(
            c.iter()
                .any(|(p, f, _)| p == Path::new("/h/.cargo/config.toml") && *f == Format::Toml)
        );
    }
}
