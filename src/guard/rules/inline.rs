//! Reading inline interpreter code for what it reaches for — processes, file changes, network
//! connections, code built at run time — after removing its string literals, comments and
//! regular expressions. One scanner per language family; the policy is in `code.rs`. The
//! lists of spellings here are known to be incomplete: no static reading of a general-purpose
//! language is.

/// Languages, for the spellings each uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Js,
    Ruby,
    Perl,
    Php,
    Lua,
    Awk,
    R,
    Other,
}

pub(super) fn lang_of(name: &str) -> Option<Lang> {
    Some(match name {
        "python" | "python2" | "python3" | "pypy" | "pypy3" | "ipython" => Lang::Python,
        "node" | "nodejs" | "deno" | "bun" | "ts-node" | "tsx" => Lang::Js,
        "ruby" | "irb" | "jruby" => Lang::Ruby,
        "perl" | "perl5" => Lang::Perl,
        "php" => Lang::Php,
        "lua" | "luajit" | "lua5.1" | "lua5.3" | "lua5.4" => Lang::Lua,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        "Rscript" | "R" => Lang::R,
        // Languages Forge has no reader for: their inline code is asked about whatever it
        // says (see `code.rs`).
        "julia" | "osascript" | "pwsh" | "powershell" | "tclsh" | "expect" | "groovy" | "scala"
        | "elixir" | "erl" | "racket" | "guile" | "sbcl" | "clojure" | "clj" | "ghc" | "runghc"
        | "emacs" | "kotlin" | "jshell" => Lang::Other,
        // Compilers that also run a source file (`java X.java`, `go run x.go`, `cmake -P x`):
        // only those files are code here (`code.rs`).
        "java" | "go" | "cmake" => Lang::Other,
        _ => return None,
    })
}

/// What a piece of code reaches for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Reach {
    pub process: Option<String>,
    pub files: Option<String>,
    pub network: Option<String>,
    pub dynamic: Option<String>,
}

impl Reach {
    pub(super) fn any(&self) -> bool {
        self.process.is_some()
            || self.files.is_some()
            || self.network.is_some()
            || self.dynamic.is_some()
    }

    pub(super) fn describe(&self) -> String {
        let mut v = Vec::new();
        if let Some(t) = &self.process {
            v.push(format!("starts processes (`{t}`)"));
        }
        if let Some(t) = &self.files {
            v.push(format!("changes files (`{t}`)"));
        }
        if let Some(t) = &self.network {
            v.push(format!("opens network connections (`{t}`)"));
        }
        if let Some(t) = &self.dynamic {
            v.push(format!("evaluates code it builds (`{t}`)"));
        }
        v.join(", ")
    }
}

/// What code in `lang` reaches for, after its strings, comments and regular expressions are
/// removed.
pub(crate) fn scan(lang: Lang, code: &str) -> Reach {
    let stripped = strip(lang, code);
    let s = stripped.as_str();
    let mut r = Reach::default();
    let find = |list: &[&str]| -> Option<String> {
        list.iter()
            .find(|t| contains_token(s, t))
            .map(|t| t.trim_end_matches('(').to_string())
    };
    match lang {
        Lang::Python => python(s, code, &mut r),
        Lang::Js => js(s, &mut r),
        Lang::Ruby => {
            r.process = find(&[
                "system", "exec", "spawn", "IO.popen", "Open3", "Process.", "fork", "syscall",
                "%x", "Kernel.",
            ]);
            if code_has_backtick(code, lang) {
                r.process.get_or_insert_with(|| "`…`".into());
            }
            r.files = find(&[
                "FileUtils",
                "File.write",
                "File.delete",
                "File.unlink",
                "File.rename",
                "File.chmod",
                "File.chown",
                "File.symlink",
                "File.link",
                "File.truncate",
                "Dir.rmdir",
                "Dir.delete",
                "Dir.unlink",
                "Dir.mkdir",
                "IO.write",
                "IO.binwrite",
                "fileutils",
            ])
            .or_else(|| write_mode(code, "File.open(").then(|| "File.open(…, \"w\")".into()))
            .or_else(|| write_mode(code, "File.new(").then(|| "File.new(…, \"w\")".into()));
            r.network = find(&[
                "Net::",
                "Socket",
                "TCPSocket",
                "UDPSocket",
                "URI.open",
                "open-uri",
                "HTTParty",
                "Faraday",
                "socket",
                "net/http",
            ]);
            r.dynamic = find(&[
                "eval",
                "instance_eval",
                "class_eval",
                "module_eval",
                "instance_exec",
                "send",
                "public_send",
                "__send__",
                "method(",
                "const_get",
                "binding",
                "define_method",
                "instance_variable_get",
            ])
            .or_else(|| kernel_open(s).then(|| "open(…)".into()));
        }
        Lang::Perl => {
            r.process = find(&["system", "exec", "fork", "kill", "qx", "IPC::", "readpipe"]);
            if code_has_backtick(code, lang) {
                r.process.get_or_insert_with(|| "`…`".into());
            }
            if perl_pipe_open(code) {
                r.process.get_or_insert_with(|| "open(…, \"|…\")".into());
            }
            r.files = find(&[
                "unlink",
                "rmdir",
                "mkdir",
                "rename",
                "chmod",
                "chown",
                "symlink",
                "link",
                "truncate",
                "utime",
                "File::Path",
                "rmtree",
                "remove_tree",
                "make_path",
                "File::Copy",
                "copy(",
                "move(",
            ])
            .or_else(|| perl_write_open(code).then(|| "open(…, \">…\")".into()));
            r.network = find(&[
                "IO::Socket",
                "Socket",
                "LWP",
                "HTTP::Tiny",
                "HTTP::",
                "Net::",
                "socket(",
            ]);
            r.dynamic = perl_dynamic(s, code);
        }
        Lang::Php => {
            r.process = find(&[
                "system",
                "exec",
                "shell_exec",
                "passthru",
                "popen",
                "proc_open",
                "pcntl_exec",
                "pcntl_fork",
            ]);
            if code_has_backtick(code, lang) {
                r.process.get_or_insert_with(|| "`…`".into());
            }
            r.files = find(&[
                "unlink",
                "rmdir",
                "rename",
                "copy(",
                "file_put_contents",
                "fwrite",
                "fputs",
                "mkdir",
                "chmod",
                "chown",
                "symlink",
                "link(",
                "touch",
                "tempnam",
            ])
            .or_else(|| write_mode(code, "fopen(").then(|| "fopen(…, \"w\")".into()));
            r.network = find(&[
                "fsockopen",
                "curl_",
                "stream_socket_client",
                "socket_create",
                "mail(",
                "ftp_",
            ])
            .or_else(|| code.contains("://").then(|| "a URL".into()));
            r.dynamic = find(&[
                "eval",
                "assert",
                "create_function",
                "call_user_func",
                "call_user_func_array",
                "preg_replace_callback",
                "include",
                "require",
                "ReflectionFunction",
                // Functions that call a function named by a string.
                "array_map",
                "array_filter",
                "array_walk",
                "array_reduce",
                "usort",
                "uasort",
                "uksort",
                "register_shutdown_function",
                "register_tick_function",
                "forward_static_call",
                "iterator_apply",
                "ob_start",
            ])
            .or_else(|| php_variable_call(s).then(|| "$f(…)".into()));
        }
        Lang::Lua => {
            r.process = find(&["os.execute", "io.popen"]);
            r.files = find(&["os.remove", "os.rename", "os.tmpname"])
                .or_else(|| write_mode(code, "io.open(").then(|| "io.open(…, \"w\")".into()));
            r.network = find(&["socket"]);
            r.dynamic = find(&[
                "load(",
                "loadstring",
                "dofile",
                "loadfile",
                "require",
                "package.",
                "debug.",
                "_G",
                "_ENV",
                "setfenv",
                "getfenv",
                "rawget",
                "rawset",
            ]);
        }
        Lang::Awk => awk(s, &mut r),
        Lang::R => {
            r.process = find(&["system", "system2", "shell(", "pipe("]);
            r.files = find(&[
                "file.remove",
                "unlink(",
                "file.rename",
                "writeLines",
                "write(",
                "cat(",
                "saveRDS",
                "file.create",
                "dir.create",
                "file.copy",
            ]);
            r.network = find(&["url(", "download.file", "socketConnection", "httr", "curl"]);
            r.dynamic = find(&["eval(", "parse(", "do.call", "get(", "source("]);
        }
        Lang::Other => {
            r.process = find(&[
                "exec",
                "spawn",
                "system",
                "run(",
                "do shell script",
                "Start-Process",
                "Invoke-Expression",
                "iex",
                "open |",
            ]);
            r.files = find(&[
                "Remove-Item",
                "file delete",
                "rm(",
                "Set-Content",
                "Out-File",
                "file rename",
            ]);
            r.network = find(&["socket", "Invoke-WebRequest", "http"]);
        }
    }
    r
}

fn python(s: &str, code: &str, r: &mut Reach) {
    const PROCESS_MODULES: [&str; 6] = [
        "subprocess",
        "pty",
        "multiprocessing",
        "commands",
        "popen2",
        "asyncio.subprocess",
    ];
    const FILE_MODULES: [&str; 3] = ["shutil", "fileinput", "sqlite3"];
    const NET_MODULES: [&str; 16] = [
        "socket",
        "urllib",
        "http",
        "requests",
        "httpx",
        "aiohttp",
        "ftplib",
        "smtplib",
        "telnetlib",
        "paramiko",
        "xmlrpc",
        "websocket",
        "websockets",
        "urllib3",
        "ssl",
        "asyncio",
    ];
    const DYN_MODULES: [&str; 9] = [
        "importlib",
        "builtins",
        "ctypes",
        "cffi",
        "code",
        "codeop",
        "runpy",
        "pickle",
        "marshal",
    ];
    const SAFE_OS: [&str; 22] = [
        "path",
        "getcwd",
        "environ",
        "getenv",
        "listdir",
        "walk",
        "scandir",
        "sep",
        "linesep",
        "name",
        "cpu_count",
        "getpid",
        "stat",
        "fspath",
        "devnull",
        "pathsep",
        "curdir",
        "pardir",
        "extsep",
        "get_terminal_size",
        "getuid",
        "urandom",
    ];
    // Imports: module roots and the names they are bound to. A module imported and never
    // used (`python -c "import subprocess"`) reaches for nothing.
    let body: String = s
        .split(['\n', ';'])
        .filter(|st| {
            let t = st.trim();
            !t.starts_with("import ") && !t.starts_with("from ")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut os_names: Vec<String> = Vec::new();
    let mut path_names: Vec<String> = Vec::new();
    for stmt in s.split(['\n', ';']) {
        let t = stmt.trim();
        if let Some(rest) = t.strip_prefix("import ") {
            for part in rest.split(',') {
                let mut w = part.split_whitespace();
                let module = w.next().unwrap_or("");
                let alias = match (w.next(), w.next()) {
                    (Some("as"), Some(a)) => a.to_string(),
                    _ => module.split('.').next().unwrap_or("").to_string(),
                };
                if contains_token(&body, &alias) {
                    classify_py_module(
                        module,
                        r,
                        &PROCESS_MODULES,
                        &FILE_MODULES,
                        &NET_MODULES,
                        &DYN_MODULES,
                    );
                }
                if module == "os" {
                    os_names.push(alias.clone());
                }
                if module == "pathlib" {
                    path_names.push(alias);
                }
            }
        } else if let Some(rest) = t.strip_prefix("from ") {
            let mut w = rest.splitn(2, " import ");
            let module = w.next().unwrap_or("").trim();
            let names: Vec<&str> = w
                .next()
                .unwrap_or("")
                .split(',')
                .map(|n| {
                    n.split_whitespace()
                        .last()
                        .unwrap_or("")
                        .trim_matches(['(', ')'])
                })
                .collect();
            if names.iter().any(|n| *n == "*" || contains_token(&body, n)) {
                classify_py_module(
                    module,
                    r,
                    &PROCESS_MODULES,
                    &FILE_MODULES,
                    &NET_MODULES,
                    &DYN_MODULES,
                );
            }
            if module == "os" {
                let imported = rest.split_once(" import ").map(|x| x.1).unwrap_or("");
                for n in imported.split(',').map(|n| {
                    n.split_whitespace()
                        .next()
                        .unwrap_or("")
                        .trim_matches(['(', ')'])
                }) {
                    if n == "*" || !SAFE_OS.contains(&n) {
                        r.process
                            .get_or_insert_with(|| format!("from os import {n}"));
                    }
                }
            }
            if module == "pathlib" {
                path_names.push("Path".into());
            }
        }
    }
    // Code built at run time first: it names the act best (`getattr(os, …)`).
    for d in [
        "eval(",
        "exec(",
        "compile(",
        "getattr(",
        "setattr(",
        "delattr(",
        "__import__",
        "globals(",
        "locals(",
        "vars(",
        "__builtins__",
        "__dict__",
        "__class__",
        "__subclasses__",
        "__globals__",
        "__code__",
        "__getattribute__",
        "breakpoint(",
        "sys.modules",
    ] {
        if contains_token(s, d) {
            r.dynamic
                .get_or_insert_with(|| d.trim_end_matches('(').to_string());
        }
    }
    // `os.X` with X outside the safe list; `os` used any other way is aliasing.
    for os in &os_names {
        for (at, _) in s.match_indices(os.as_str()) {
            if !token_at(s, at, os.len()) {
                continue;
            }
            let after = &s[at + os.len()..];
            let before = s[..at].trim_end();
            if before.ends_with("import")
                || before.ends_with(',') && s[..at].contains("import")
                || before.ends_with("as")
            {
                continue;
            }
            match after.strip_prefix('.') {
                Some(attr) => {
                    let attr: String = attr
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !SAFE_OS.contains(&attr.as_str()) {
                        let t = format!("{os}.{attr}");
                        if matches!(
                            attr.as_str(),
                            "system" | "popen" | "fork" | "kill" | "killpg"
                        ) || attr.starts_with("exec")
                            || attr.starts_with("spawn")
                            || attr.starts_with("posix_spawn")
                        {
                            r.process.get_or_insert(t);
                        } else {
                            r.files.get_or_insert(t);
                        }
                    }
                }
                None => {
                    r.dynamic
                        .get_or_insert_with(|| format!("{os} used as a value"));
                }
            }
        }
    }
    // pathlib writes.
    if !path_names.is_empty() || s.contains("Path(") {
        for m in [
            ".write_text(",
            ".write_bytes(",
            ".unlink(",
            ".rmdir(",
            ".rename(",
            ".touch(",
            ".mkdir(",
            ".chmod(",
            ".symlink_to(",
            ".hardlink_to(",
            ".rmtree(",
        ] {
            if s.contains(m) {
                r.files
                    .get_or_insert_with(|| m.trim_matches(['.', '(']).to_string());
            }
        }
    }
    if write_mode(code, "open(") {
        r.files.get_or_insert_with(|| "open(…, \"w\")".into());
    }
    for n in ["urlopen", "requests.", "socket."] {
        if s.contains(n) {
            r.network
                .get_or_insert_with(|| n.trim_end_matches('.').to_string());
        }
    }
}

fn classify_py_module(
    module: &str,
    r: &mut Reach,
    process: &[&str],
    files: &[&str],
    net: &[&str],
    dynamic: &[&str],
) {
    let root = module.split('.').next().unwrap_or("");
    let hit = |list: &[&str]| list.iter().any(|m| *m == module || *m == root);
    if hit(process) {
        r.process.get_or_insert_with(|| format!("import {module}"));
    } else if hit(files) {
        r.files.get_or_insert_with(|| format!("import {module}"));
    } else if hit(net) {
        r.network.get_or_insert_with(|| format!("import {module}"));
    } else if hit(dynamic) {
        r.dynamic.get_or_insert_with(|| format!("import {module}"));
    }
}

fn js(s: &str, r: &mut Reach) {
    const READ_FS: [&str; 18] = [
        "readFileSync",
        "readFile",
        "existsSync",
        "exists",
        "readdirSync",
        "readdir",
        "statSync",
        "stat",
        "lstatSync",
        "lstat",
        "accessSync",
        "access",
        "createReadStream",
        "realpathSync",
        "realpath",
        "promises",
        "constants",
        "opendirSync",
    ];
    // `require('x')` and `import … from 'x'` with their modules; the strings were blanked, so
    // read the module names from the unstripped spans the stripper kept as `'…'` markers.
    let mods = js_modules(s);
    for (m, binding, lit) in &mods {
        if !lit {
            r.dynamic
                .get_or_insert_with(|| "require(…) of a computed name".into());
            continue;
        }
        let m = m.trim_start_matches("node:");
        match m {
            "child_process" | "cluster" | "worker_threads" => {
                r.process.get_or_insert_with(|| format!("require('{m}')"));
            }
            "net" | "http" | "https" | "http2" | "dgram" | "tls" | "dns" => {
                r.network.get_or_insert_with(|| format!("require('{m}')"));
            }
            "vm" | "inspector" | "v8" | "module" => {
                r.dynamic.get_or_insert_with(|| format!("require('{m}')"));
            }
            "fs" | "fs/promises" | "fs-extra" | "graceful-fs" => {
                // Every use of the binding must be a read.
                let uses = js_member_uses(s, binding);
                if let Some(bad) = uses.iter().find(|u| !READ_FS.contains(&u.as_str())) {
                    r.files.get_or_insert_with(|| format!("fs.{bad}"));
                }
            }
            _ => {}
        }
    }
    for (t, kind) in [
        ("process.binding", 'p'),
        ("process.dlopen", 'p'),
        ("process.kill", 'p'),
        ("Deno.run", 'p'),
        ("Deno.Command", 'p'),
        ("Deno.spawn", 'p'),
        ("Deno.kill", 'p'),
        ("Bun.spawn", 'p'),
        ("Bun.spawnSync", 'p'),
        ("Bun.$", 'p'),
        ("Deno.remove", 'f'),
        ("Deno.writeFile", 'f'),
        ("Deno.writeTextFile", 'f'),
        ("Deno.rename", 'f'),
        ("Deno.mkdir", 'f'),
        ("Deno.chmod", 'f'),
        ("Deno.symlink", 'f'),
        ("Deno.truncate", 'f'),
        ("Bun.write", 'f'),
        ("fetch(", 'n'),
        ("XMLHttpRequest", 'n'),
        ("WebSocket", 'n'),
        ("sendBeacon", 'n'),
        ("Deno.connect", 'n'),
        ("Deno.listen", 'n'),
        ("eval(", 'd'),
        ("Function(", 'd'),
        ("globalThis[", 'd'),
        ("global[", 'd'),
        ("window[", 'd'),
        ("constructor", 'd'),
        ("Reflect.", 'd'),
        ("import(", 'd'),
        ("this[", 'd'),
    ] {
        if s.contains(t) {
            let name = t.trim_end_matches(['(', '[', '.']).to_string();
            match kind {
                'p' => r.process.get_or_insert(name),
                'f' => r.files.get_or_insert(name),
                'n' => r.network.get_or_insert(name),
                _ => r.dynamic.get_or_insert(name),
            };
        }
    }
    // `require('fs')['rm' + 'Sync']`: computed member access on a module.
    if s.contains(")[") && s.contains("require(") {
        r.dynamic.get_or_insert_with(|| "require(…)[…]".into());
    }
}

/// `(module, binding, literal)` for each `require(…)`/`import … from …` in stripped JS, where
/// the stripper kept module names (see [`strip`]).
fn js_modules(s: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for (at, _) in s.match_indices("require(") {
        let rest = &s[at + "require(".len()..];
        // Literal only when the whole argument is one string: `require('f'+'s')` is computed.
        let (module, lit) = match rest.strip_prefix('\u{1}') {
            Some(r2) => {
                let name = r2.split('\u{1}').next().unwrap_or("").to_string();
                let after = r2[name.len()..].trim_start_matches('\u{1}').trim_start();
                let whole = after.starts_with(')');
                (name, whole)
            }
            None => (String::new(), false),
        };
        // The binding: `const f = require(…)`, `const {a, b} = require(…)`, or the chain.
        let before = s[..at].trim_end();
        let binding = if let Some(b) = before.strip_suffix('=') {
            let b = b.trim_end();
            if b.ends_with('}') {
                // Destructured names are uses.
                // `}` is one byte, so is `{`: both ends are character boundaries.
                let inner = b.rfind('{').map_or("", |open| &b[open + 1..b.len() - 1]);
                format!("{{{inner}}}")
            } else {
                b.rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                    .next()
                    .unwrap_or("")
                    .to_string()
            }
        } else {
            format!("require@{at}")
        };
        out.push((module, binding, lit));
    }
    for (at, _) in s.match_indices(" from \u{1}") {
        let module = s[at + 7..].split('\u{1}').next().unwrap_or("").to_string();
        let head = s[..at]
            .rsplit("import")
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        out.push((module, head, true));
    }
    out
}

/// The members used on a module binding (`f.rmSync` → `rmSync`); a destructuring `{a, b}`
/// lists them directly; a chain `require('fs').x` is found by position.
fn js_member_uses(s: &str, binding: &str) -> Vec<String> {
    if let Some(list) = binding.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        return list
            .split(',')
            .map(|n| n.split(':').next().unwrap_or("").trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
    }
    let mut uses = Vec::new();
    if let Some(at) = binding
        .strip_prefix("require@")
        .and_then(|a| a.parse::<usize>().ok())
    {
        let rest = &s[at..];
        if let Some(close) = rest.find(')') {
            let after = &rest[close + 1..];
            if let Some(m) = after.strip_prefix('.') {
                let first: String = m
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // `require('fs').promises.rm`: the method after `promises`.
                let next: Option<String> = m[first.len()..].strip_prefix('.').map(|r| {
                    r.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect()
                });
                match next {
                    Some(n) if first == "promises" => uses.push(n),
                    _ => uses.push(first),
                }
            } else if after.starts_with('[') {
                uses.push("[computed]".into());
            }
        }
        return uses;
    }
    if binding.is_empty() {
        return vec!["(unknown)".into()];
    }
    for (at, _) in s.match_indices(binding) {
        if !token_at(s, at, binding.len()) {
            continue;
        }
        let after = &s[at + binding.len()..];
        if let Some(m) = after.strip_prefix('.') {
            let name: String = m
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name == "promises" {
                let rest = &m[name.len()..];
                if let Some(m2) = rest.strip_prefix('.') {
                    uses.push(
                        m2.chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect(),
                    );
                    continue;
                }
            }
            uses.push(name);
        } else if after.starts_with('[') {
            uses.push("[computed]".into());
        }
    }
    uses
}

fn awk(s: &str, r: &mut Reach) {
    if contains_token(s, "system(") || contains_token(s, "system") {
        r.process.get_or_insert_with(|| "system()".into());
    }
    let b: Vec<char> = s.chars().collect();
    for i in 0..b.len() {
        if b[i] == '|' && b.get(i + 1) != Some(&'|') && (i == 0 || b[i - 1] != '|') {
            r.process
                .get_or_insert_with(|| "| (a pipe to a command)".into());
        }
    }
    // `print … > file` / `>> file` in a print statement (outside parentheses).
    for (at, kw) in s.match_indices("print") {
        if !token_at(s, at, kw.len()) && !s[at..].starts_with("printf") {
            continue;
        }
        let mut depth = 0i32;
        for c in s[at..].chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ';' | '}' | '\n' => break,
                '>' if depth <= 0 => {
                    r.files.get_or_insert_with(|| "print > file".into());
                    break;
                }
                _ => {}
            }
        }
    }
}

fn perl_dynamic(s: &str, code: &str) -> Option<String> {
    // String eval (`eval "…"`, `eval $x`), not block eval (`eval { … }`).
    for (at, _) in s.match_indices("eval") {
        if !token_at(s, at, 4) {
            continue;
        }
        let after = s[at + 4..].trim_start();
        if !after.starts_with('{') {
            return Some("eval".into());
        }
    }
    if perl_subst_eval(code) {
        return Some("s///e".into());
    }
    for t in ["do ", "&{", "&$", "*{", "->can(", "UNIVERSAL::"] {
        if s.contains(t) {
            return Some(t.trim().to_string());
        }
    }
    None
}

/// `s/…/…/e`: the replacement is Perl code.
fn perl_subst_eval(code: &str) -> bool {
    let c: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < c.len() {
        if c[i] == 's'
            && (i == 0
                || !(c[i - 1].is_alphanumeric()
                    || c[i - 1] == '_'
                    || c[i - 1] == '$'
                    || c[i - 1] == '@'
                    || c[i - 1] == '%'))
            && let Some(&d) = c.get(i + 1)
            && !d.is_alphanumeric()
            && !d.is_whitespace()
            && d != '='
            && d != ';'
        {
            let close = match d {
                '{' => '}',
                '(' => ')',
                '[' => ']',
                '<' => '>',
                x => x,
            };
            let mut j = i + 2;
            let parts = 2;
            let mut seen = 0;
            while j < c.len() && seen < parts {
                if c[j] == '\\' {
                    j += 2;
                    continue;
                }
                if c[j] == close {
                    seen += 1;
                    if close != d && seen == 1 {
                        // `s{…}{…}`: skip to the second opening bracket.
                        while j + 1 < c.len() && c[j + 1] != d {
                            j += 1;
                        }
                        j += 1;
                    }
                }
                j += 1;
            }
            let flags: String = c[j.min(c.len())..]
                .iter()
                .take_while(|x| x.is_ascii_alphabetic())
                .collect();
            if flags.contains('e') {
                return true;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    false
}

fn perl_pipe_open(code: &str) -> bool {
    code.match_indices("open").any(|(at, _)| {
        let rest = &code[at..];
        let end = rest.find(';').unwrap_or(rest.len());
        let call = &rest[..end];
        call.contains('|')
    })
}

fn perl_write_open(code: &str) -> bool {
    code.match_indices("open").any(|(at, _)| {
        let rest = &code[at..];
        let end = rest.find(';').unwrap_or(rest.len());
        let call = &rest[..end];
        call.contains("'>")
            || call.contains("\">")
            || call.contains("'+<")
            || call.contains(", '>")
            || call.contains(">>")
    })
}

fn php_variable_call(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if j > i + 1 && b.get(j) == Some(&b'(') {
                return true;
            }
            if b.get(i + 1) == Some(&b'$') || b.get(i + 1) == Some(&b'{') {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// `open(…)` not called on an object: Ruby's Kernel#open runs `|cmd`.
fn kernel_open(s: &str) -> bool {
    s.match_indices("open").any(|(at, _)| {
        token_at(s, at, 4)
            && !s[..at].ends_with('.')
            && s[at + 4..].trim_start().starts_with(['(', ' ', '\u{1}'])
    })
}

/// Whether `open(`-like calls in the original code pass a write mode (`'w'`, `"a"`, `'x'`,
/// `'+'`, `mode='w'`).
fn write_mode(code: &str, call: &str) -> bool {
    code.match_indices(call).any(|(at, _)| {
        if at > 0 {
            let prev = code[..at].chars().last().unwrap_or(' ');
            if call == "open(" && (prev.is_alphanumeric() || prev == '_') {
                return false;
            }
        }
        let rest = &code[at + call.len()..];
        let mut depth = 1;
        let mut end = rest.len();
        for (k, ch) in rest.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let args = &rest[..end];
        let mut parts = args.splitn(2, ',');
        let _path = parts.next();
        let Some(mode) = parts.next() else {
            return false;
        };
        let mode = mode.trim();
        let mode = mode.strip_prefix("mode=").unwrap_or(mode).trim();
        let quoted = mode.starts_with(['\'', '"']);
        if !quoted {
            // `open(f, m)`: a mode computed at run time.
            return !mode.is_empty()
                && !mode.starts_with("encoding")
                && !mode.starts_with("newline")
                && !mode.starts_with("errors");
        }
        let inner: String = mode
            .chars()
            .skip(1)
            .take_while(|c| !matches!(c, '\'' | '"'))
            .collect();
        inner.contains(['w', 'a', 'x', '+'])
    })
}

fn code_has_backtick(code: &str, lang: Lang) -> bool {
    // Backticks outside quoted strings (Ruby, Perl, PHP run them as commands).
    let stripped = strip_strings_only(code, lang);
    stripped.contains('`')
}

/// Whether `t` occurs in `s` as a token (not inside a longer identifier on its left; an
/// identifier-like token must end at a non-identifier character).
fn contains_token(s: &str, t: &str) -> bool {
    s.match_indices(t).any(|(at, _)| token_at(s, at, t.len()))
}

fn token_at(s: &str, at: usize, len: usize) -> bool {
    let before = s[..at].chars().last();
    let after = s[at + len..].chars().next();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let t = &s[at..at + len];
    let left_ok = before.is_none_or(|c| !ident(c) || !t.starts_with(ident));
    let right_ok = after.is_none_or(|c| !ident(c) || !t.ends_with(ident));
    left_ok && right_ok
}

/// Code with string literals blanked (JS/Ruby module names kept between `\u{1}` markers so
/// `require('fs')` stays readable), comments removed and regular expression literals removed.
fn strip(lang: Lang, code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    let mut last_sig = ' ';
    while i < c.len() {
        let ch = c[i];
        // Comments.
        let line_comment = match lang {
            Lang::Python | Lang::Ruby | Lang::Perl | Lang::Awk | Lang::R => ch == '#',
            Lang::Php => ch == '#' || (ch == '/' && c.get(i + 1) == Some(&'/')),
            Lang::Js => ch == '/' && c.get(i + 1) == Some(&'/'),
            Lang::Lua => ch == '-' && c.get(i + 1) == Some(&'-'),
            Lang::Other => false,
        };
        // Perl `$#array` and `$#` are not comments.
        let perl_var = lang == Lang::Perl && i > 0 && c[i - 1] == '$';
        if line_comment && !perl_var {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if matches!(lang, Lang::Js | Lang::Php) && ch == '/' && c.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        // Strings.
        if ch == '\'' || ch == '"' || (ch == '`' && lang == Lang::Js) {
            // Python triple quotes.
            let triple =
                lang == Lang::Python && c.get(i + 1) == Some(&ch) && c.get(i + 2) == Some(&ch);
            let start = i;
            i += if triple { 3 } else { 1 };
            let mut content = String::new();
            while i < c.len() {
                if c[i] == '\\' && lang != Lang::Other {
                    i += 2;
                    continue;
                }
                if triple {
                    if c[i] == ch && c.get(i + 1) == Some(&ch) && c.get(i + 2) == Some(&ch) {
                        i += 3;
                        break;
                    }
                } else if c[i] == ch {
                    i += 1;
                    break;
                }
                // f-strings, template literals and Ruby interpolation hold code.
                let interp = (ch == '`' && c[i] == '$' && c.get(i + 1) == Some(&'{'))
                    || (lang == Lang::Ruby
                        && ch == '"'
                        && c[i] == '#'
                        && c.get(i + 1) == Some(&'{'))
                    || (lang == Lang::Python && ch != '`' && c[i] == '{' && is_fstring(&c, start));
                if interp {
                    let mut depth = 0;
                    while i < c.len() {
                        if c[i] == '{' {
                            depth += 1;
                        } else if c[i] == '}' {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        out.push(c[i]);
                        i += 1;
                    }
                    out.push(' ');
                }
                content.push(c[i.min(c.len() - 1)]);
                i += 1;
            }
            // Module names stay visible to the require/import scan.
            let trimmed: String = content.chars().filter(|c| c.is_ascii_graphic()).collect();
            if matches!(lang, Lang::Js | Lang::Ruby)
                && trimmed.len() < 64
                && trimmed
                    .chars()
                    .all(|c| c.is_alphanumeric() || "-_/:@.".contains(c))
            {
                out.push('\u{1}');
                out.push_str(&trimmed);
                out.push('\u{1}');
            } else {
                out.push_str(" S ");
            }
            last_sig = 'S';
            continue;
        }
        // Regular expressions where an operand is expected.
        let regex_start = ch == '/'
            && matches!(lang, Lang::Js | Lang::Ruby | Lang::Perl | Lang::Awk)
            && (matches!(
                last_sig,
                ' ' | '(' | ',' | '=' | '~' | '!' | '&' | '|' | '{' | ';' | '?' | ':' | '[' | '\n'
            ) || ends_with_keyword(&out));
        if regex_start {
            i += 1;
            while i < c.len() && c[i] != '/' && c[i] != '\n' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str(" R ");
            last_sig = 'R';
            continue;
        }
        // Perl quote-like operators: q qq qw qr m s tr y (qx is kept: it runs a command).
        if lang == Lang::Perl
            && let Some(skip) = perl_quote_like(&c, i)
        {
            out.push_str(" Q ");
            i = skip;
            last_sig = 'Q';
            continue;
        }
        out.push(ch);
        if !ch.is_whitespace() {
            last_sig = ch;
        } else if ch == '\n' {
            last_sig = '\n';
        }
        i += 1;
    }
    out
}

fn is_fstring(c: &[char], quote_at: usize) -> bool {
    quote_at > 0
        && matches!(c[quote_at - 1], 'f' | 'F')
        && (quote_at < 2
            || !c[quote_at - 2].is_alphanumeric()
            || matches!(c[quote_at - 2], 'r' | 'R' | 'b' | 'B'))
}

fn ends_with_keyword(out: &str) -> bool {
    let t = out.trim_end();
    [
        "if", "unless", "and", "or", "not", "split", "grep", "map", "return", "when", "match",
        "gsub", "sub", "~",
    ]
    .iter()
    .any(|k| {
        t.ends_with(k)
            && t[..t.len() - k.len()]
                .chars()
                .last()
                .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// Where a Perl quote-like construct starting at `i` ends (`s/a/b/g`, `q{…}`, `tr/a/b/`).
fn perl_quote_like(c: &[char], i: usize) -> Option<usize> {
    if i > 0
        && (c[i - 1].is_alphanumeric()
            || matches!(c[i - 1], '_' | '$' | '@' | '%' | '&' | '-' | '>' | ':'))
    {
        return None;
    }
    let word: String = c[i..]
        .iter()
        .take_while(|x| x.is_ascii_alphabetic())
        .collect();
    let (parts, len) = match word.as_str() {
        "q" | "qq" | "qw" | "qr" | "m" => (1, word.len()),
        "s" | "tr" | "y" => (2, word.len()),
        _ => return None,
    };
    let mut j = i + len;
    while j < c.len() && c[j] == ' ' {
        j += 1;
    }
    let d = *c.get(j)?;
    if d.is_alphanumeric() || d.is_whitespace() || d == '=' || d == ',' || d == ';' || d == ')' {
        return None;
    }
    let close = match d {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        x => x,
    };
    j += 1;
    for part in 0..parts {
        while j < c.len() && c[j] != close {
            if c[j] == '\\' {
                j += 1;
            }
            j += 1;
        }
        j += 1;
        if part + 1 < parts && close != d {
            while j < c.len() && c[j] != d {
                j += 1;
            }
            j += 1;
        }
    }
    while j < c.len() && c[j].is_ascii_alphabetic() {
        j += 1;
    }
    Some(j.min(c.len()))
}

fn strip_strings_only(code: &str, lang: Lang) -> String {
    let mut out = String::new();
    let mut q: Option<char> = None;
    let mut esc = false;
    for ch in code.chars() {
        match q {
            Some(x) => {
                if esc {
                    esc = false;
                } else if ch == '\\' {
                    esc = true;
                } else if ch == x {
                    q = None;
                }
            }
            None if ch == '\'' || ch == '"' => q = Some(ch),
            None => out.push(ch),
        }
    }
    let _ = lang;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(lang: Lang, code: &str) -> bool {
        scan(lang, code).any()
    }

    #[test]
    fn plain_computation_is_not_flagged() {
        for (l, c) in [
            (Lang::Python, "import platform; print(platform.system())"),
            (
                Lang::Python,
                "import sys, json; print(json.load(sys.stdin)['name'])",
            ),
            (Lang::Python, "import os; print(os.environ.get('HOME'))"),
            (Lang::Python, "import os; print(os.path.join('a','b'))"),
            (
                Lang::Python,
                "import re; print(re.sub('system', 'x', 'system call'))",
            ),
            (Lang::Python, "print(open('README.md').read()[:200])"),
            (
                Lang::Python,
                "from pathlib import Path; print(list(Path('src').glob('*.rs')))",
            ),
            (Lang::Python, "print('rm -rf /')"),
            (Lang::Js, "console.log(require('./package.json').version)"),
            (
                Lang::Js,
                "const fs=require('fs'); console.log(fs.readFileSync('package.json','utf8').length)",
            ),
            (
                Lang::Js,
                "console.log(JSON.parse(require('fs').readFileSync('package.json')).name)",
            ),
            (Lang::Js, "console.log([1,2,3].map(x=>x*2))"),
            (Lang::Ruby, "puts File.read(\"README.md\").lines.count"),
            (Lang::Ruby, "puts $_ if /system/"),
            (Lang::Perl, "s/old_name/new_name/g"),
            (Lang::Perl, "print if /exec/"),
            (Lang::Perl, "print \"$.: $_\" if /TODO/"),
            (Lang::Perl, "s/\\s+$//"),
            (Lang::Php, "echo PHP_VERSION;"),
            (Lang::Lua, "print(1)"),
            (Lang::Awk, "/spawn/ {print FILENAME\": \"$0}"),
            (Lang::Awk, "{gsub(/exec/, \"run\"); print}"),
            (Lang::Awk, "$3 > 100 {print $1}"),
            (Lang::Awk, "{ if ($2 > max) max = $2 } END { print max }"),
            (Lang::Awk, "NR==FNR{a[$1];next} $1 in a"),
        ] {
            assert!(!reach(l, c), "{l:?}: {c} → {:?}", scan(l, c));
        }
    }

    #[test]
    fn reaching_for_the_system_is_flagged_in_every_language() {
        for (l, c) in [
            (
                Lang::Python,
                "import os; getattr(os,'sys'+'tem')('rm -rf ~')",
            ),
            (Lang::Python, "__import__('os').system('x')"),
            (Lang::Python, "import shutil as s; s.rmtree('/h')"),
            (Lang::Python, "exec('import os')"),
            (
                Lang::Python,
                "import pathlib; pathlib.Path.home().joinpath('.bashrc').write_text('')",
            ),
            (Lang::Python, "import subprocess; subprocess.run(['id'])"),
            (Lang::Python, "import os;os.unlink('x')"),
            (
                Lang::Python,
                "import socket; socket.create_connection(('x', 1))",
            ),
            (Lang::Python, "open('x', 'w').write('')"),
            (Lang::Python, "o=__builtins__.__dict__['ev'+'al']"),
            (Lang::Python, "from os import system; system('id')"),
            (Lang::Python, "import os as o; o.system('id')"),
            (Lang::Python, "print(f\"{__import__('os').system('id')}\")"),
            (
                Lang::Js,
                "require('fs').rm(process.env.HOME,{recursive:true},()=>{})",
            ),
            (Lang::Js, "require('child_process').execSync('x')"),
            (Lang::Js, "const f=require('f'+'s'); f.rmSync('/h')"),
            (Lang::Js, "const {rmSync} = require('fs'); rmSync('/h')"),
            (Lang::Js, "process.binding('spawn_sync')"),
            (Lang::Js, "import('child_process').then(c=>c.exec('id'))"),
            (Lang::Js, "globalThis['ev'+'al']('1')"),
            (Lang::Js, "fetch('https://x.example')"),
            (Lang::Js, "Deno.removeSync('/h')"),
            (Lang::Js, "Bun.spawnSync(['rm'])"),
            (Lang::Ruby, "require 'fileutils'; FileUtils.rm_rf(Dir.home)"),
            (Lang::Ruby, "`rm -rf ~`"),
            (Lang::Ruby, "system(\"x\")"),
            (Lang::Ruby, "Kernel.send(:sys' + 'tem', \"id\")"),
            (Lang::Ruby, "File.delete('x')"),
            (Lang::Ruby, "open('|id')"),
            (Lang::Perl, "`rm -rf ~`"),
            (Lang::Perl, "qx{rm -rf ~}"),
            (Lang::Perl, "unlink glob(\"~/.ssh/*\")"),
            (Lang::Perl, "s/x/`id`/e"),
            (Lang::Perl, "use File::Path rmtree;"),
            (Lang::Perl, "system \"rm\", \"-rf\", $ENV{HOME}"),
            (Lang::Perl, "open(my $f, '>', 'x')"),
            (Lang::Perl, "open(F, \"| sh\")"),
            (Lang::Php, "system(\"x\");"),
            (Lang::Php, "$f=\"sys\".\"tem\"; $f(\"id\");"),
            (Lang::Php, "unlink(getenv(\"HOME\").\"/.bashrc\");"),
            (Lang::Lua, "os.execute(\"x\")"),
            (Lang::Lua, "os.remove(os.getenv(\"HOME\")..\"/.bashrc\")"),
            (Lang::Awk, "BEGIN { print \"rm -rf ~\" | \"sh\" }"),
            (Lang::Awk, "BEGIN { \"id\" | getline }"),
            (Lang::Awk, "{ print > \"/h/.bashrc\" }"),
            (Lang::Awk, "BEGIN{system(\"id\")}"),
            (Lang::R, "system(\"rm -rf ~\")"),
        ] {
            assert!(reach(l, c), "{l:?}: {c}");
        }
    }
}
