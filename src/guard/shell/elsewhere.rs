//! Code that runs elsewhere or later: on another machine (`ssh`), in a container (`docker run`,
//! with its bind mounts mapped back to the host), or after this session (`at`, `crontab`,
//! `screen`, `tmux`). What it runs is walked like the line itself, marked with its [`Origin`].

use std::path::{Path, PathBuf};

use super::sources::Content;
use super::walk::{Ctx, Val, Walker};
use super::wrappers::{Call, join_lits};
use super::{Arg, Cwd, Names, Origin, Stdin, Word};

impl Walker<'_> {
    /// `screen -dm CMD…`, `screen -X stuff 'keys'`.
    pub(super) fn screen(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if let Some(i) = lits.iter().position(|a| *a == Some("-X")) {
            if lits.get(i + 1) == Some(&Some("stuff"))
                && let Some(Some(keys)) = lits.get(i + 2)
            {
                let text = keys
                    .replace("^M", "\n")
                    .replace("\\n", "\n")
                    .replace("\\r", "\n");
                let mut later = ctx.child(Origin::Later("screen"));
                self.line(&text, &mut later, depth + 1);
            }
            return;
        }
        let mut i = 0;
        while i < rest.len() {
            match lits[i] {
                Some("-Logfile") => i += 2,
                // A cluster whose last letter takes a value: `-dmS name`.
                Some(a)
                    if a.starts_with('-')
                        && a.len() > 1
                        && "SctTehps".contains(a.chars().last().unwrap_or(' ')) =>
                {
                    i += 2
                }
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        if i < rest.len() {
            let inner = rest[i..].to_vec();
            let mut later = ctx.child(Origin::Later("screen"));
            self.invoke(self.call_with(inner, call), &mut later, depth + 1);
        }
    }

    /// `tmux new -d 'cmd'`, `tmux split-window 'cmd'`, `tmux send-keys 'cmd' Enter`,
    /// `tmux run-shell 'cmd'`: commands a tmux server (maybe started outside this session)
    /// runs.
    pub(super) fn tmux(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        self.push_plain(call, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        let Some(sub) = lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')))
        else {
            return;
        };
        let verb = lits[sub].unwrap_or("");
        let args = &rest[sub + 1..];
        let alits = &lits[sub + 1..];
        let mut i = 0;
        while i < args.len() {
            match alits[i] {
                Some(a) if a.starts_with('-') && a.len() == 2 && "tscnFeEw".contains(&a[1..]) => {
                    i += 2
                }
                Some(a) if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        let operands = &args[i..];
        let text = match verb {
            "send-keys" | "send" => {
                let keys: Option<Vec<String>> = operands
                    .iter()
                    .map(|w| match w.arg.lit() {
                        Some("Enter" | "C-m" | "KPEnter") => Some("\n".to_string()),
                        Some(k) => Some(k.to_string()),
                        None => None,
                    })
                    .collect();
                keys.map(|v| v.join(" "))
            }
            "new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw"
            | "run-shell" | "run" | "respawn-pane" | "respawn-window" => {
                if operands.is_empty() {
                    return;
                }
                join_lits(operands)
            }
            _ => return,
        };
        let mut later = ctx.child(Origin::Later("tmux"));
        match text {
            Some(t) => self.line(&t, &mut later, depth + 1),
            None => self.push_computed("tmux (computed keys)".into(), vec![], call, &later),
        }
    }

    /// `at TIME` / `batch`: the job from stdin or `-f FILE`, run later.
    pub(super) fn at(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if lits
            .iter()
            .any(|a| matches!(a, Some("-l" | "-r" | "-d" | "-c")))
        {
            return;
        }
        let mut later = ctx.child(Origin::Later("at"));
        if let Some(i) = lits.iter().position(|a| *a == Some("-f")) {
            if let Some(w) = rest.get(i + 1) {
                let w = w.clone();
                self.run_script(&w, &[], &mut later, depth, false);
            }
            return;
        }
        let c = Call {
            argv: vec![],
            wrappers: call.wrappers.clone(),
            env: call.env.clone(),
            stdin: call.stdin.clone(),
            upstream: call.upstream.clone(),
            names: Names::None,
        };
        self.shell_stdin(&c, &mut later, depth);
    }

    /// `crontab FILE` / `crontab -`: each job's command, run later.
    pub(super) fn crontab(&mut self, rest: &[Word], call: &Call, ctx: &mut Ctx, depth: usize) {
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        if lits
            .iter()
            .any(|a| matches!(a, Some("-l" | "-e" | "-r" | "-i")))
            && !lits.contains(&Some("-"))
        {
            return;
        }
        let file = lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')));
        let text = match file {
            Some(i) => {
                let Some(p) = rest[i].arg.lit().and_then(|f| self.locate(f, ctx)) else {
                    return;
                };
                match self.file_content(&p) {
                    Content::Text(t) => Some(t),
                    Content::Missing => return,
                    _ => None,
                }
            }
            None => match &call.stdin {
                Stdin::Text(Arg::Lit(t)) => Some(t.clone()),
                _ => None,
            },
        };
        let mut later = ctx.child(Origin::Later("cron"));
        later.cwd = Cwd::at(self.env.home.clone());
        match text {
            Some(t) => {
                for line in t.lines() {
                    let l = line.trim();
                    if l.is_empty() || l.starts_with('#') {
                        continue;
                    }
                    let fields: Vec<&str> = l.split_whitespace().collect();
                    let cmd_at = if l.starts_with('@') { 1 } else { 5 };
                    if fields.len() <= cmd_at || (cmd_at == 5 && fields[0].contains('=')) {
                        continue;
                    }
                    let cmd = fields[cmd_at..].join(" ");
                    self.line(&cmd, &mut later, depth + 1);
                }
            }
            None => self.push_computed(
                "crontab (jobs Forge cannot read)".into(),
                vec![],
                call,
                &later,
            ),
        }
    }

    /// `ssh [options] HOST [COMMAND…]`: the command runs on another machine — judged as if it
    /// ran here (the host may be this one).
    pub(super) fn ssh(
        &mut self,
        rest: &[Word],
        call: &Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        let idx = self.push_invocation(call, path, ctx);
        self.option_code("ssh", rest, idx, ctx, depth);
        const VALUE: &str = "bcDEeFIiJLlmOopQRSWw";
        let mut i = 0;
        while i < rest.len() {
            match rest[i].arg.lit() {
                Some(a) if a.starts_with('-') && a.len() >= 2 => {
                    let last = a.chars().last().unwrap_or(' ');
                    i += if a.len() == 2 && VALUE.contains(last) {
                        2
                    } else {
                        1
                    };
                }
                _ => break,
            }
        }
        let Some(host) = rest.get(i) else { return };
        let host = host.arg.display().to_string();
        let cmd = &rest[i + 1..];
        let mut remote = ctx.child(Origin::Remote(host));
        remote.cwd = Cwd::at(self.env.home.clone());
        if cmd.is_empty() {
            // A script on stdin (`ssh host < x.sh`, `ssh host bash -s <<EOF`).
            if !matches!(call.stdin, Stdin::None | Stdin::Pipe) {
                let c = Call {
                    argv: vec![],
                    wrappers: vec![],
                    env: vec![],
                    stdin: call.stdin.clone(),
                    upstream: vec![],
                    names: Names::None,
                };
                self.shell_stdin(&c, &mut remote, depth);
            }
            return;
        }
        match join_lits(cmd) {
            Some(t) => self.line(&t, &mut remote, depth + 1),
            None => self.push_computed("ssh … (computed command)".into(), vec![], call, &remote),
        }
    }

    /// `docker run [options] IMAGE [CMD…]`, `docker exec CONTAINER CMD…`, `docker compose run
    /// SERVICE CMD…`: the container's command, with paths under bind mounts mapped to the host
    /// (the rules judge the mounts themselves); paths elsewhere are the container's own.
    pub(super) fn container(
        &mut self,
        rest: &[Word],
        call: &Call,
        path: Option<String>,
        ctx: &mut Ctx,
        depth: usize,
    ) {
        self.push_invocation(call, path, ctx);
        let lits: Vec<Option<&str>> = rest.iter().map(|w| w.arg.lit()).collect();
        let (verb_at, verb) = match lits
            .iter()
            .position(|a| a.is_some_and(|a| !a.starts_with('-')))
        {
            Some(i) => (i, lits[i].unwrap_or("")),
            None => return,
        };
        let mut at = verb_at + 1;
        let (run, exec) = match verb {
            "run" | "create" => (true, false),
            "exec" => (false, true),
            "container" if matches!(lits.get(at), Some(Some("run" | "exec"))) => {
                at += 1;
                (lits[at - 1] == Some("run"), lits[at - 1] == Some("exec"))
            }
            "compose" | "compose-v2" => {
                match lits[at..]
                    .iter()
                    .position(|a| matches!(a, Some("run" | "exec")))
                {
                    Some(p) => {
                        at += p + 1;
                        (false, true)
                    }
                    None => return,
                }
            }
            _ => return,
        };
        // Options, then the image (or container, or service), then the command.
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        let mut workdir: Option<String> = None;
        let base = ctx.cwd.one().map(Path::to_path_buf);
        while at < rest.len() {
            let Some(a) = lits[at] else { break };
            if !a.starts_with('-') {
                break;
            }
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (a, None),
            };
            let takes = CONTAINER_VALUE_OPTS.contains(&flag);
            let value = match (&inline, takes) {
                (Some(v), _) => Some(v.clone()),
                (None, true) => lits.get(at + 1).copied().flatten().map(str::to_string),
                _ => None,
            };
            match flag {
                "-v" | "--volume" => {
                    if let Some(v) = &value
                        && let Some((src, dst)) = bind(v, "")
                        && let Some(host) = host_path(&src, &base, &self.env.home)
                    {
                        mounts.push((dst, host));
                    }
                }
                "--mount" => {
                    if let Some(v) = &value {
                        let mut src = None;
                        let mut dst = None;
                        for kv in v.split(',') {
                            match kv.split_once('=') {
                                Some(("source" | "src", s)) => src = Some(s.to_string()),
                                Some(("target" | "dst" | "destination", d)) => {
                                    dst = Some(d.to_string())
                                }
                                _ => {}
                            }
                        }
                        if let (Some(s), Some(d)) = (src, dst)
                            && let Some(host) = host_path(&s, &base, &self.env.home)
                        {
                            mounts.push((d, host));
                        }
                    }
                }
                "-w" | "--workdir" => workdir = value.clone(),
                _ => {}
            }
            at += if takes && inline.is_none() { 2 } else { 1 };
        }
        let _ = run;
        let _ = exec;
        // The image / container / service.
        at += 1;
        if at >= rest.len() {
            return;
        }
        let inner: Vec<Word> = rest[at..].to_vec();
        let origin = Origin::Container(mounts);
        let scratch = self.env.temp.join(".forge-container");
        let mut inside = ctx.child(origin.clone());
        inside.cwd = Cwd::at(PathBuf::from(
            origin.host_path(workdir.as_deref().unwrap_or("/"), &scratch),
        ));
        inside
            .vars
            .insert("HOME".into(), Val::Known("/root".into()));
        let c = Call {
            argv: inner,
            wrappers: vec![],
            env: vec![],
            stdin: call.stdin.clone(),
            upstream: vec![],
            names: Names::None,
        };
        self.invoke(c, &mut inside, depth + 1);
    }
}

pub(super) const CONTAINER_VALUE_OPTS: &[&str] = &[
    "-v",
    "--volume",
    "--mount",
    "-e",
    "--env",
    "--env-file",
    "-w",
    "--workdir",
    "-p",
    "--publish",
    "--name",
    "--network",
    "--net",
    "--entrypoint",
    "-u",
    "--user",
    "-l",
    "--label",
    "--cpus",
    "-m",
    "--memory",
    "--platform",
    "--pull",
    "--restart",
    "--add-host",
    "--device",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--tmpfs",
    "--ulimit",
    "--log-driver",
    "--log-opt",
    "-h",
    "--hostname",
    "--ipc",
    "--pid",
    "--uts",
    "--userns",
    "--cgroupns",
    "--gpus",
    "-a",
    "--attach",
    "--cidfile",
    "--dns",
    "--volumes-from",
    "--link",
    "--expose",
    "--health-cmd",
    "--label-file",
    "--stop-signal",
    "--shm-size",
    "--runtime",
    "--group-add",
    "--mac-address",
    "--ip",
    "--ip6",
    "--cgroup-parent",
    "-f",
    "--file",
    "--project-name",
    "--profile",
    "--env-file",
    "--detach-keys",
    "--init-path",
    "--isolation",
    "--network-alias",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--blkio-weight",
    "--cpu-shares",
    "-c",
];

/// `SRC:DST[:opts]` of `-v`: host source and container target, for bind mounts (a named
/// volume has no `/` and is skipped).
pub(super) fn bind(v: &str, _: &str) -> Option<(String, String)> {
    let mut parts = v.splitn(3, ':');
    let src = parts.next()?.to_string();
    let dst = parts.next()?.to_string();
    (src.starts_with('/') || src.starts_with('.') || src.starts_with('~') || src.starts_with('$'))
        .then_some((src, dst))
}

pub(super) fn host_path(src: &str, base: &Option<PathBuf>, home: &Path) -> Option<PathBuf> {
    if let Some(rest) = src.strip_prefix('~') {
        return Some(home.join(rest.trim_start_matches('/')));
    }
    if src.starts_with('/') {
        return Some(PathBuf::from(src));
    }
    base.as_ref()
        .map(|b| crate::guard::paths::logical(&b.join(src)))
}

#[cfg(test)]
mod tests {
    use super::super::{Analysis, analyze};
    use super::*;

    fn run(line: &str) -> Analysis {
        analyze(line, Path::new("/repo"), Path::new("/home/u"))
    }

    #[test]
    fn docker_maps_bind_mounts_to_the_host() {
        let a = run("docker run -v ~:/h alpine rm -rf /h");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        let scratch = Path::new("/tmp/.forge-container");
        assert_eq!(
            rm.origin.host_path(rm.args[1].arg.lit().unwrap(), scratch),
            "/home/u"
        );
        let a = run("docker run --rm -v /:/host busybox sh -c 'rm -rf /host/etc'");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert_eq!(
            rm.origin.host_path(rm.args[1].arg.lit().unwrap(), scratch),
            "/etc"
        );
        // A path no mount covers is the container's own.
        let a = run("docker run --rm alpine rm -rf /etc");
        let rm = a
            .invocations
            .iter()
            .find(|i| i.name() == Some("rm"))
            .unwrap();
        assert!(
            rm.origin
                .host_path("/etc", scratch)
                .starts_with("/tmp/.forge-container/")
        );
    }
}
