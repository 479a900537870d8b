//! Commands other programs carry and run: git's (`-c alias.x='!…'`, `git config` values git
//! runs, `submodule foreach`, `bisect run`, `rebase --exec`, `filter-branch` filters, the
//! files `git apply`/`am` change) and commands given as option values (`tar --to-command`,
//! `--checkpoint-action=exec=`, `zip -TT`, `rsync -e`, `ssh -o ProxyCommand`, `man -P`, `gdb
//! -ex 'shell …'`, `psql \\!`, `vim -c 'call system(…)'`).

use super::sources::PatchSource;
use super::walk::Ctx;
use super::walk::Walker;
use super::wrappers::Call;
use super::{Arg, Cwd, Stdin, Word};

impl Walker<'_> {
    /// git runs code too: `git -c alias.x='!cmd' x`, `git config alias.x '!cmd'`, `git
    /// submodule foreach CMD`, `git bisect run CMD…`, `git rebase --exec CMD`, `git
    /// filter-branch --*-filter CMD`; and `git apply`/`git am` change the files of a patch.
    pub(super) fn git(
        &mut self,
        rest: &[Word],
        idx: usize,
        call: &Call,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        // Global options, and the folder `-C` moves to.
        let mut i = 0;
        let mut cwd = ctx.cwd.clone();
        while i < lits.len() {
            match lits[i] {
                Some("-C") => {
                    cwd = match (lits.get(i + 1).copied().flatten(), cwd.one()) {
                        (Some(d), Some(c)) => Cwd::at(crate::guard::paths::logical(&c.join(d))),
                        _ => Cwd::unknown(),
                    };
                    i += 2;
                }
                Some(
                    "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
                    | "--exec-path",
                ) => i += 2,
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        // Aliases given on the spot: `!cmd` aliases run a shell command.
        for (k, a) in lits.iter().enumerate() {
            if *a == Some("-c")
                && let Some(Some(kv)) = lits.get(k + 1)
                && let Some((key, value)) = kv.split_once('=')
                && key.to_ascii_lowercase().starts_with("alias.")
                && let Some(cmd) = value.strip_prefix('!')
            {
                let mut sub = ctx.child(ctx.origin.clone());
                self.line(cmd, &mut sub, depth + 1);
            }
        }
        let Some(Some(sub)) = lits.get(i).copied() else {
            return;
        };
        let sub_rest = &rest[i + 1..];
        let sl: Vec<Option<&str>> = sub_rest.iter().map(|w| w.arg.lit()).collect();
        let mut sub_ctx = ctx.child(ctx.origin.clone());
        sub_ctx.cwd = cwd.clone();
        match sub {
            "config" => {
                // `git config alias.x '!cmd'`, `git config core.sshCommand 'cmd'`: planted
                // commands, judged now as what they run.
                let ops: Vec<&str> = sl
                    .iter()
                    .flatten()
                    .filter(|a| !a.starts_with('-'))
                    .copied()
                    .collect();
                if let [key, value, ..] = ops.as_slice() {
                    let k = key.to_ascii_lowercase();
                    let cmd = if k.starts_with("alias.") {
                        value.strip_prefix('!')
                    } else if k == "core.sshcommand"
                        || k == "core.pager"
                        || k == "core.editor"
                        || k == "core.fsmonitor"
                        || k == "sequence.editor"
                        || k == "diff.external"
                        || k == "core.askpass"
                        || k == "gpg.program"
                        || (k.starts_with("filter.")
                            && (k.ends_with(".clean")
                                || k.ends_with(".smudge")
                                || k.ends_with(".process")))
                        || (k.starts_with("merge.") && k.ends_with(".driver"))
                        || (k.starts_with("diff.")
                            && (k.ends_with(".textconv") || k.ends_with(".command")))
                        || k.starts_with("credential.") && k.ends_with("helper")
                    {
                        Some(value.trim_start_matches('!'))
                    } else {
                        None
                    };
                    if let Some(c) = cmd {
                        self.line(c, &mut sub_ctx, depth + 1);
                    }
                }
            }
            "submodule" if sl.first() == Some(&Some("foreach")) => {
                let ops: Vec<&Word> = sub_rest[1..]
                    .iter()
                    .filter(|w| w.arg.lit().is_none_or(|s| !s.starts_with("--")))
                    .collect();
                if let Some(w) = ops.first() {
                    let w = (*w).clone();
                    self.code_word(&w, call, &mut sub_ctx, depth, ctx.origin.clone());
                }
            }
            "bisect" if sl.first() == Some(&Some("run")) => {
                let inner = sub_rest[1..].to_vec();
                self.invoke(self.call_with(inner, call), &mut sub_ctx, depth + 1);
            }
            "rebase" => {
                for (k, a) in sl.iter().enumerate() {
                    let cmd = match a {
                        Some("-x" | "--exec") => sub_rest.get(k + 1).cloned(),
                        Some(x) if x.starts_with("--exec=") => {
                            Some(Word::lit(&x["--exec=".len()..]))
                        }
                        _ => None,
                    };
                    if let Some(w) = cmd {
                        let mut c2 = sub_ctx.clone();
                        self.code_word(&w, call, &mut c2, depth, ctx.origin.clone());
                    }
                }
            }
            "filter-branch" => {
                for (k, a) in sl.iter().enumerate() {
                    if a.is_some_and(|a| a.ends_with("-filter"))
                        && let Some(w) = sub_rest.get(k + 1)
                    {
                        let w = w.clone();
                        let mut c2 = sub_ctx.clone();
                        self.code_word(&w, call, &mut c2, depth, ctx.origin.clone());
                    }
                }
            }
            "apply" | "am" => {
                if sl.iter().any(|a| {
                    matches!(
                        a,
                        Some(
                            "--check"
                                | "--stat"
                                | "--numstat"
                                | "--summary"
                                | "--abort"
                                | "--skip"
                                | "--continue"
                                | "--quit"
                        )
                    )
                }) {
                    return;
                }
                let files: Vec<&Word> = sub_rest
                    .iter()
                    .filter(|w| w.arg.lit().is_none_or(|s| !s.starts_with('-')))
                    .collect();
                let mut c = ctx.clone();
                c.cwd = cwd.clone();
                if files.is_empty() {
                    let source = match &call.stdin {
                        Stdin::File(w) => w
                            .arg
                            .lit()
                            .and_then(|f| self.locate(f, ctx))
                            .map(PatchSource::File),
                        Stdin::Text(Arg::Lit(t)) => Some(PatchSource::Text(t.clone())),
                        Stdin::None => None,
                        _ => Some(PatchSource::Unknown("the patch on standard input".into())),
                    };
                    if let Some(s) = source {
                        self.patch_writes(idx, s, &c);
                    }
                }
                for f in files {
                    let source = match f.arg.lit() {
                        Some(p) => self.locate(p, &c).map(PatchSource::File),
                        None => Some(PatchSource::Unknown(f.arg.display().to_string())),
                    };
                    if let Some(s) = source {
                        self.patch_writes(idx, s, &c);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `git difftool -x CMD`/`--extcmd=CMD` and `git grep -OCMD`/`--open-files-in-pager=CMD`, as
/// git reads them: a long option by any unambiguous prefix (`--extc=`, `--open-files=`), a
/// short one at the end of a cluster (`-yx CMD`) or with its value attached (`-xCMD`).
fn git_option_commands(lits: &[Option<&str>], out: &mut Vec<Option<String>>) {
    let Some(at) = lits
        .iter()
        .position(|a| matches!(a, Some("difftool" | "grep")))
    else {
        return;
    };
    // (long option, shortest unambiguous prefix, short letter, value optional, letters that
    // take a value and so end a cluster before the letter can be read)
    let (long, min, letter, optional, valued) = if lits[at] == Some("difftool") {
        ("--extcmd", 3, 'x', false, "tx")
    } else {
        ("--open-files-in-pager", 4, 'O', true, "efABCmO")
    };
    let mut i = at + 1;
    while i < lits.len() {
        let next = || lits.get(i + 1).copied().flatten().map(str::to_string);
        match lits[i] {
            Some("--") => break,
            Some(a) if a.starts_with("--") => {
                let (k, v) = a.split_once('=').map_or((a, None), |(k, v)| (k, Some(v)));
                if k.len() >= min && long.starts_with(k) {
                    match v {
                        Some(v) => out.push(Some(v.to_string())),
                        None if !optional => {
                            out.push(next());
                            i += 1;
                        }
                        None => {}
                    }
                }
            }
            Some(a) if a.starts_with('-') && a.len() > 1 => {
                for (p, c) in a[1..].char_indices() {
                    if c == letter {
                        let tail = &a[1 + p + c.len_utf8()..];
                        if !tail.is_empty() {
                            out.push(Some(tail.to_string()));
                        } else if !optional {
                            out.push(next());
                            i += 1;
                        }
                        break;
                    }
                    if valued.contains(c) {
                        break;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Shell commands a program runs from its options (`None`: one Forge cannot read).
pub(super) fn option_commands(name: &str, rest: &[Word]) -> Vec<Option<String>> {
    let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
    let mut out = Vec::new();
    // `--opt VALUE` / `--opt=VALUE` / `-o VALUE`.
    let value = |opts: &[&str], out: &mut Vec<Option<String>>| {
        for (i, a) in lits.iter().enumerate() {
            let Some(a) = a else { continue };
            for o in opts {
                if a == o {
                    out.push(lits.get(i + 1).copied().flatten().map(str::to_string));
                } else if let Some(v) = a
                    .strip_prefix(&format!("{o}="))
                    .filter(|_| o.starts_with("--"))
                {
                    out.push(Some(v.to_string()));
                }
            }
        }
    };
    match name {
        "tar" | "gtar" | "bsdtar" => {
            value(
                &[
                    "--to-command",
                    "--use-compress-program",
                    "-I",
                    "--rsh-command",
                    "--info-script",
                    "-F",
                    "--new-volume-script",
                ],
                &mut out,
            );
            for a in lits.iter().flatten() {
                if let Some(v) = a.strip_prefix("--checkpoint-action=")
                    && let Some(cmd) = v.strip_prefix("exec=")
                {
                    out.push(Some(cmd.to_string()));
                }
            }
        }
        "zip" => value(&["-TT", "--unzip-command"], &mut out),
        "rsync" => value(&["-e", "--rsh", "--rsync-path"], &mut out),
        "ssh" | "scp" | "sftp" => {
            for (i, a) in lits.iter().enumerate() {
                let opt = match a {
                    Some("-o") => lits.get(i + 1).copied().flatten(),
                    Some(x) if x.starts_with("-o") && x.len() > 2 => Some(&x[2..]),
                    _ => None,
                };
                if let Some(o) = opt {
                    let (k, v) = o.split_once(['=', ' ']).unwrap_or((o, ""));
                    if matches!(
                        k.to_ascii_lowercase().as_str(),
                        "proxycommand" | "localcommand" | "knownhostscommand" | "remotecommand"
                    ) {
                        out.push(Some(v.trim().to_string()));
                    }
                }
            }
            if name != "ssh" {
                value(&["-S"], &mut out);
            }
        }
        "man" => value(&["-P", "--pager", "--html"], &mut out),
        // `less +'!cmd'`: a command less runs at start-up, as typed at its prompt.
        "less" | "more" => {
            for a in lits.iter().flatten() {
                if let Some(c) = a
                    .strip_prefix('+')
                    .and_then(|c| c.find('!').map(|k| &c[k + 1..]))
                {
                    out.push(Some(c.to_string()));
                }
            }
        }
        "git" => git_option_commands(&lits, &mut out),
        "gdb" => {
            let mut cmds = Vec::new();
            value(&["-ex", "--eval-command", "-iex"], &mut cmds);
            for c in cmds.into_iter().flatten() {
                if let Some(s) = c.strip_prefix("shell ").or_else(|| c.strip_prefix('!')) {
                    out.push(Some(s.to_string()));
                }
            }
        }
        "tcpdump" => value(&["-z"], &mut out),
        "fzf" => {
            value(&["--preview"], &mut out);
            let mut binds = Vec::new();
            value(&["--bind"], &mut binds);
            for b in binds.into_iter().flatten() {
                if let Some(at) = b.find("execute(") {
                    out.push(Some(b[at + 8..].trim_end_matches(')').to_string()));
                }
            }
        }
        "psql" | "mysql" | "mariadb" | "sqlite3" => {
            for a in lits.iter().flatten() {
                for esc in ["\\!", ".shell ", ".system ", "system "] {
                    if let Some(at) = a.find(esc) {
                        out.push(Some(
                            a[at + esc.len()..].trim_start_matches('!').to_string(),
                        ));
                    }
                }
            }
        }
        "vim" | "nvim" | "vi" | "ex" | "view" => {
            // Ex commands: `-c CMD`, `--cmd CMD`, `+CMD`. `:!cmd` runs a shell command (walked);
            // the script languages an editor embeds (`lua`, `py3`, `perl`, `ruby`) and its
            // own `system()` are asked about.
            let mut cmds: Vec<&str> = Vec::new();
            for (i, a) in lits.iter().enumerate() {
                match a {
                    Some("-c" | "--cmd") => cmds.extend(lits.get(i + 1).copied().flatten()),
                    Some(x) if x.starts_with('+') => cmds.push(&x[1..]),
                    _ => {}
                }
            }
            for a in lits.iter().flatten() {
                if a.contains("system(")
                    || a.contains("systemlist(")
                    || a.contains("jobstart(")
                    || a.contains("termopen(")
                {
                    out.push(None);
                }
            }
            for c in cmds {
                let c = c.trim_start_matches([':', ' ']);
                let word = c
                    .split(|ch: char| !ch.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("");
                if matches!(
                    word,
                    "lua"
                        | "luado"
                        | "luafile"
                        | "py"
                        | "py3"
                        | "python"
                        | "python3"
                        | "pyx"
                        | "pydo"
                        | "py3do"
                        | "pyfile"
                        | "py3file"
                        | "perl"
                        | "perldo"
                        | "ruby"
                        | "rubydo"
                        | "rubyfile"
                        | "mzscheme"
                        | "tcl"
                        | "tcldo"
                        | "source"
                        | "so"
                        | "terminal"
                        | "term"
                ) {
                    out.push(None);
                }
            }
        }
        _ => {}
    }
    out
}
