//! Code and commands inside a tool's input, as the guard judges them: an argument vector joined
//! into the command line a shell would read, code handed to a tool that runs it (`executeCode`,
//! `run_python_code`, a notebook cell) written as the inline interpreter call that would run the
//! same code (`python3 -c '…'`), and what no reading can judge — an interactive shell started,
//! free-form input typed into a running process — set aside for a person. `mcp.rs` finds
//! these values by their keys; the rules judge the command lines as any other.

use serde_json::Value;

/// Words of a tool's name that say it runs code or a program it is given (red team, round 14:
/// `executeCode`, `execute_cell`, `run_python_code`, `browser_run_code`, `interact_with_process`
/// ran what their inputs held, judged as data).
const EXEC_WORDS: [&str; 12] = [
    "exec",
    "execute",
    "run",
    "eval",
    "evaluate",
    "repl",
    "interpret",
    "interact",
    "spawn",
    "launch",
    "invoke",
    "stdin",
];
/// With one of [`SESSION_WORDS`], a tool that starts something that runs what it is given.
const START_WORDS: [&str; 4] = ["start", "open", "create", "new"];
const SESSION_WORDS: [&str; 7] = [
    "process", "session", "terminal", "shell", "repl", "kernel", "console",
];
/// Words of a tool's name that say it types into a process already running (Codex's
/// `write_stdin`, desktop-commander's `interact_with_process`, `send_keys`): whatever it types
/// runs in a program Forge cannot see, so a person decides.
const FEED_WORDS: [&str; 2] = ["interact", "stdin"];
const SEND_WORDS: [&str; 3] = ["send", "write", "type"];
const SEND_TARGETS: [&str; 6] = ["input", "keys", "process", "terminal", "session", "stdin"];

/// Words of a key whose value, in a tool that runs code, is that code (`code`, `source`,
/// `python_code`, `chars`, a `function` to evaluate).
const CODE_WORDS: [&str; 11] = [
    "code",
    "source",
    "input",
    "stdin",
    "chars",
    "keys",
    "snippet",
    "cell",
    "expression",
    "statement",
    "function",
];

/// What a tool's name says it does with the code or commands in its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Runs {
    /// It runs what it is given (a command, code, a program and its arguments).
    pub executes: bool,
    /// It types into a process already running.
    pub feeds: bool,
    /// The language its name says (`run_python_code`, `run_javascript`), as the interpreter
    /// that would run it.
    pub lang: Option<&'static str>,
}

impl Runs {
    pub(super) fn of(words: &[String]) -> Runs {
        let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
        let feeds = has(&FEED_WORDS) || (has(&SEND_WORDS) && has(&SEND_TARGETS));
        Runs {
            executes: feeds || has(&EXEC_WORDS) || (has(&START_WORDS) && has(&SESSION_WORDS)),
            feeds,
            lang: words.iter().find_map(|w| interpreter(w)),
        }
    }
}

/// The interpreter a word names (a language, a runtime, or a tool that runs that language):
/// `python` and `jupyter` are Python, `playwright` and `browser` JavaScript, `ide` Python
/// (Claude Code's own `mcp__ide__executeCode` runs Python in the notebook's Jupyter kernel).
/// `sh` for shells: their code is a command line.
pub(super) fn interpreter(word: &str) -> Option<&'static str> {
    let w = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match w {
        "python" | "py" | "ipython" | "jupyter" | "notebook" | "ide" | "pypy" => "python3",
        "javascript" | "js" | "node" | "nodejs" | "typescript" | "ts" | "deno" | "bun"
        | "playwright" | "puppeteer" | "browser" | "page" => "node",
        "ruby" | "rb" | "irb" => "ruby",
        "perl" => "perl",
        "php" => "php",
        "lua" | "luajit" => "lua",
        "shell" | "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "terminal" | "cmd" => "sh",
        "powershell" | "pwsh" | "julia" | "elixir" | "scala" | "groovy" | "kotlin" | "clojure"
        | "racket" | "osascript" | "applescript" => "other",
        _ => return None,
    })
}

/// A key's words say its value is code (in a tool that runs code); with the language the key
/// names, if any (`python_code`).
pub(super) fn code_key(words: &[String]) -> Option<Option<&'static str>> {
    let lang = words.iter().find_map(|w| interpreter(w));
    let code = words.iter().any(|w| super::mcp::one_of(w, &CODE_WORDS));
    (code || lang.is_some()).then_some(lang)
}

/// Keys beside the code that say its language (`{"language": "python", "code": …}`).
const LANG_KEYS: [&str; 6] = [
    "language",
    "lang",
    "interpreter",
    "runtime",
    "kernel",
    "kernel_name",
];

/// The language an input's own keys name, at its top level.
pub(super) fn sibling_lang(input: &Value) -> Option<&'static str> {
    let o = input.as_object()?;
    o.iter().find_map(|(k, v)| {
        let k = super::paths::fold(k);
        if !LANG_KEYS.contains(&k.as_str()) {
            return None;
        }
        let v = v.as_str()?.trim().to_ascii_lowercase();
        let base = v.rsplit('/').next().unwrap_or(&v).to_string();
        interpreter(&base).or_else(|| base.split_whitespace().find_map(interpreter))
    })
}

/// Code found in a tool's input: the command lines that judge it and what cannot be judged.
#[derive(Debug, Default)]
pub(super) struct Judged {
    pub commands: Vec<String>,
    /// The code read as a command line when its language is not said: one reading of several,
    /// so a line that does not parse as one is no finding (`print(1)` typed into a Python REPL).
    pub readings: Vec<String>,
    pub unjudged: Vec<String>,
}

/// Code a tool runs, in the language `lang` (None: not said), written as the commands that
/// would run it; `fed` when it is typed into a running process.
pub(super) fn judge_code(code: &str, lang: Option<&'static str>, fed: bool, out: &mut Judged) {
    let shown = crate::text::clip(code, 80);
    if fed {
        out.unjudged.push(format!(
            "this types `{shown}` into a running process, which may be a shell or an interpreter Forge cannot see; a person decides"
        ));
    }
    match lang {
        Some("sh") => out.commands.push(code.to_string()),
        Some("other") => out.unjudged.push(format!(
            "this runs `{shown}` in a language Forge does not read; a person decides"
        )),
        Some(interp) => {
            if interp == "python3" {
                ipython_escapes(code, out);
            }
            out.commands.push(inline(interp, code));
        }
        // Unsaid: every reading — a command line, Python, JavaScript — and a person decides
        // what the rules let through, since none of them may be the language it runs in.
        None => {
            out.readings.push(code.to_string());
            ipython_escapes(code, out);
            out.commands.push(inline("python3", code));
            out.commands.push(inline("node", code));
            if !fed {
                out.unjudged.push(format!(
                    "this runs code (`{shown}`) in a language its input does not say, so Forge cannot read it for certain; a person decides"
                ));
            }
        }
    }
}

/// The interpreter call that runs `code` inline: what `rules/code.rs` judges.
fn inline(interp: &str, code: &str) -> String {
    let flag = match interp {
        "python3" => "-c",
        "php" => "-r",
        _ => "-e",
    };
    format!("{interp} {flag} {}", crate::text::shell_quote(code))
}

/// IPython's shell escapes in a notebook cell (`!rm -rf ~`, `x = !ls`, `%%bash`, `%sx`) are
/// command lines; its other magics (`%run`, `%%writefile`, `get_ipython()`) run or write what
/// Forge cannot follow (red team, round 14: `{"source": "!rm -rf ~"}` ran in Jupyter).
fn ipython_escapes(code: &str, out: &mut Judged) {
    let mut lines = code.lines();
    let first = code.trim_start().lines().next().unwrap_or("").trim();
    if let Some(magic) = first.strip_prefix("%%") {
        let name = magic.split_whitespace().next().unwrap_or("");
        match name {
            "bash" | "sh" | "zsh" | "system" | "!" | "script" => {
                lines.next();
                out.commands
                    .push(lines.clone().collect::<Vec<_>>().join("\n"));
            }
            "time" | "timeit" | "capture" | "prun" => {}
            _ => out.unjudged.push(format!(
                "this notebook cell starts with the IPython magic `%%{name}`, which runs or writes what Forge cannot read; a person decides"
            )),
        }
    }
    for l in lines {
        let t = l.trim_start();
        let shell = t
            .strip_prefix('!')
            .or_else(|| t.split_once("= !").map(|(_, r)| r))
            .or_else(|| t.strip_prefix("%sx "))
            .or_else(|| t.strip_prefix("%system "));
        if let Some(cmd) = shell {
            out.commands.push(cmd.trim_start_matches('!').to_string());
        } else if let Some(m) = t.strip_prefix('%')
            && !m.starts_with('%')
        {
            let name = m.split_whitespace().next().unwrap_or("");
            if !matches!(
                name,
                "time" | "timeit" | "matplotlib" | "pwd" | "who" | "whos"
            ) {
                out.unjudged.push(format!(
                    "this notebook code uses the IPython magic `%{name}`, which runs or loads what Forge cannot read; a person decides"
                ));
            }
        }
    }
    if code.contains("get_ipython") {
        out.unjudged.push(
            "this notebook code calls `get_ipython()`, which runs shell commands and magics Forge cannot read; a person decides".into(),
        );
    }
}

/// Shells and interpreters that, started with no script or code, wait for input Forge never
/// sees.
const INTERACTIVE: [&str; 24] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "python",
    "python3",
    "ipython",
    "node",
    "deno",
    "bun",
    "irb",
    "ruby",
    "perl",
    "php",
    "lua",
    "psql",
    "mysql",
    "sqlite3",
    "pwsh",
    "powershell",
];

/// A command line that only starts a shell or interpreter waiting for input (`bash`,
/// `python3 -i`, `/bin/sh -l`): what it will run comes later, typed into the process (red team,
/// round 14: desktop-commander's `start_process {"command": "bash"}`, then
/// `interact_with_process`).
pub(super) fn starts_interactive(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let Some(prog) = words.next() else {
        return false;
    };
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERACTIVE.contains(&prog)
        && words.all(|w| {
            w.starts_with('-') && !matches!(w, "-c" | "-e" | "-m" | "-r" | "-E" | "--eval")
        })
}

/// Keys of an argument vector beside a program (`{"command": "sh", "args": […]}`).
const ARG_KEYS: [&str; 6] = ["args", "arguments", "argv", "params", "parameters", "arg"];
/// Keys of the program an argument vector is for.
const PROGRAM_KEYS: [&str; 6] = ["command", "cmd", "program", "executable", "binary", "bin"];

/// `{"command": "sh", "args": ["-c", "rm -rf ~"]}` as the command line a shell would run:
/// each argument quoted as one word (red team, round 14: joined bare, `sh -c rm -rf ~` ran
/// `rm` with no arguments in Forge's reading). Arguments as one string are a fragment of a
/// command line, read as a shell reads it (`"-c 'rm -rf ~'"`); arrays of objects give their
/// `value` (or every string in them). Returns the line and the program it replaces.
pub(super) fn argv_line(
    o: &serde_json::Map<String, Value>,
    runs: bool,
) -> Option<(String, Option<String>)> {
    let find = |keys: &[&str]| {
        o.iter()
            .find(|(k, _)| keys.contains(&super::paths::fold(k).as_str()))
            .map(|(_, v)| v)
    };
    let program = find(&PROGRAM_KEYS)
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let args = match find(&ARG_KEYS)? {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => crate::text::shell_quote(s),
                Value::Object(m) => match m.get("value") {
                    Some(Value::String(s)) => crate::text::shell_quote(s),
                    _ => m
                        .values()
                        .filter_map(|v| v.as_str())
                        .map(crate::text::shell_quote)
                        .collect::<Vec<_>>()
                        .join(" "),
                },
                Value::Null => String::new(),
                other => crate::text::shell_quote(&other.to_string()),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    // An argument vector with no program is one only in a tool that runs programs.
    if program.is_none() && !runs {
        return None;
    }
    let line = match &program {
        // A program with spaces is a command line the server runs as it is (`npx tsx`).
        Some(p) if p.contains(char::is_whitespace) => format!("{p} {args}"),
        Some(p) => format!("{} {args}", crate::text::shell_quote(p)),
        None => args,
    };
    Some((line, program))
}
