//! GNU sed scripts, read for what runs or touches files: `e COMMAND` (and `e` alone, which runs
//! the pattern space), the `e` flag of `s///`, `w`/`W` and `r`/`R` files.

use super::Invocation;

/// The scripts a sed invocation runs: `-e`/`--expression` values, else its first operand.
pub fn sed_scripts(inv: &Invocation) -> Vec<String> {
    let args: Vec<Option<&str>> = inv.lit_args().collect();
    let mut scripts = Vec::new();
    let mut explicit = false;
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            Some("-e" | "--expression") => {
                if let Some(Some(s)) = args.get(i + 1) {
                    scripts.push(s.to_string());
                }
                explicit = true;
                i += 2;
                continue;
            }
            Some("-f" | "--file") => {
                explicit = true;
                i += 2;
                continue;
            }
            Some(a) if a.starts_with("--expression=") => {
                scripts.push(a["--expression=".len()..].to_string());
                explicit = true;
            }
            Some("-l" | "--line-length") => {
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !explicit
        && let Some(first) = inv
            .args
            .iter()
            .find(|w| {
                w.arg
                    .lit()
                    .is_none_or(|s| !s.starts_with('-') || s.len() == 1)
            })
            .and_then(|w| w.arg.lit())
    {
        scripts.push(first.to_string());
    }
    scripts
}

/// Whether a sed script has an `s` command with the `e` flag (or a bare `e` command, which runs
/// the pattern space).
pub fn sed_executes(script: &str) -> bool {
    sed_commands(script)
        .iter()
        .any(|c| matches!(c, SedCmd::SubstituteExec | SedCmd::ExecPatternSpace))
}

#[derive(Debug, PartialEq, Eq)]
pub enum SedCmd {
    /// `e COMMAND`.
    Exec(String),
    /// `e` alone: runs the pattern space.
    ExecPatternSpace,
    /// `s/…/…/e`.
    SubstituteExec,
    /// `w FILE`, `W FILE`, `s/…/…/w FILE`.
    Write(String),
    /// `r FILE`, `R FILE`.
    Read(String),
}

/// The commands of a sed script that run or touch files.
pub fn sed_commands(script: &str) -> Vec<SedCmd> {
    let c: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let rest_of_line = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < c.len() && c[j] != '\n' {
            j += 1;
        }
        (c[i..j].iter().collect::<String>().trim().to_string(), j)
    };
    while i < c.len() {
        // Skip separators and addresses.
        while i < c.len()
            && (c[i].is_whitespace() || c[i] == ';' || c[i] == '}' || c[i] == '{' || c[i] == '!')
        {
            i += 1;
        }
        while i < c.len() && (c[i].is_ascii_digit() || matches!(c[i], '$' | ',' | '~' | '+')) {
            i += 1;
        }
        if i < c.len() && (c[i] == '/' || c[i] == '\\') {
            let delim = if c[i] == '\\' {
                i += 1;
                c.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i += 1;
            while i < c.len() && c[i] != delim {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if i >= c.len() {
            break;
        }
        match c[i] {
            's' | 'y' => {
                let y = c[i] == 'y';
                let Some(&delim) = c.get(i + 1) else { break };
                i += 2;
                for _ in 0..2 {
                    while i < c.len() && c[i] != delim {
                        if c[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if y {
                    continue;
                }
                // Flags.
                while i < c.len() && !matches!(c[i], ';' | '\n' | '}') {
                    match c[i] {
                        'e' => out.push(SedCmd::SubstituteExec),
                        'w' => {
                            let (f, j) = rest_of_line(i + 1);
                            out.push(SedCmd::Write(f));
                            i = j;
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            'e' => {
                let (cmd, j) = rest_of_line(i + 1);
                let cmd = cmd.trim_end_matches(';').trim().to_string();
                out.push(if cmd.is_empty() {
                    SedCmd::ExecPatternSpace
                } else {
                    SedCmd::Exec(cmd)
                });
                i = j;
            }
            'w' | 'W' => {
                let (f, j) = rest_of_line(i + 1);
                out.push(SedCmd::Write(f));
                i = j;
            }
            'r' | 'R' => {
                let (f, j) = rest_of_line(i + 1);
                out.push(SedCmd::Read(f));
                i = j;
            }
            'a' | 'i' | 'c' => {
                let (_, j) = rest_of_line(i + 1);
                i = j;
            }
            ':' | 'b' | 't' | 'T' => {
                let mut j = i + 1;
                while j < c.len() && !matches!(c[j], ';' | '\n') {
                    j += 1;
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_commands_that_run_or_write() {
        assert_eq!(
            sed_commands("e rm -rf ~"),
            [SedCmd::Exec("rm -rf ~".into())]
        );
        assert_eq!(
            sed_commands("1e rm -rf ~"),
            [SedCmd::Exec("rm -rf ~".into())]
        );
        assert_eq!(sed_commands("s/.*/x/e"), [SedCmd::SubstituteExec]);
        assert_eq!(
            sed_commands("s/a/b/w /tmp/x"),
            [SedCmd::Write("/tmp/x".into())]
        );
        assert!(sed_commands("s/foo/bar/g").is_empty());
        assert!(sed_commands("/^#/d").is_empty());
        assert!(sed_commands("1i // SPDX-License-Identifier: MIT").is_empty());
        assert!(sed_commands("s|/usr/local|/opt|g").is_empty());
        assert!(sed_commands("/start/,/end/p").is_empty());
    }
}
