//! The machine and its processes: stopping it, signalling every process, fork bombs, running
//! as another user, and jobs scheduled to run after this session ends.

use super::{Judge, Rule};
use crate::guard::Decision;
use crate::guard::shell::{Analysis, Arg, Invocation, Stdin};

pub const FORK_BOMB: Rule = Rule {
    id: "fork-bomb",
    decision: Decision::Deny,
    summary: "a function that spawns copies of itself",
};
pub const KILL_EVERYTHING: Rule = Rule {
    id: "kill-everything",
    decision: Decision::Deny,
    summary: "signalling every process of the user: `kill -9 -1`, `kill -- -1`, `pkill -u $USER`, `pkill .`, `killall -u`, `killall5`, `kill 1`, `tmux kill-server`, `screen -X quit` without `-S`",
};
pub const SHUTDOWN: Rule = Rule {
    id: "shutdown",
    decision: Decision::Deny,
    summary: "shutdown, reboot, halt, poweroff (and `systemctl`/`init`/`/proc/sysrq-trigger` forms)",
};
pub const PRIVILEGE: Rule = Rule {
    id: "privilege",
    decision: Decision::Ask,
    summary: "`sudo`/`doas`/`su`/`pkexec`: running as another user",
};
pub const EXTERNAL_DESTROY: Rule = Rule {
    id: "destroy-external",
    decision: Decision::Ask,
    summary: "destroying what lives outside the repository and no sandbox or git can bring back: cloud resources (`terraform destroy`, `aws … delete`), clusters (`kubectl delete`), databases (`DROP DATABASE`, `FLUSHALL`, in arguments or fed on standard input), an HTTP API's `DELETE`, container volumes, system services, the firewall, user accounts, repositories and releases on a forge; an MCP server's tool that drops data or is named or told to delete (`kubectl_delete`, `{\"sql\": \"DROP TABLE …\"}`)",
};
pub const SCHEDULE: Rule = Rule {
    id: "schedule",
    decision: Decision::Ask,
    summary: "jobs that run later, outside this session and any sandbox (`at`, `batch`, `crontab`, `systemd-run`, `launchctl`, `direnv allow`); what they run is judged too",
};

pub(super) fn judge(j: &mut Judge, a: &Analysis, inv: &Invocation) {
    let Some(name) = inv.name() else { return };
    let shown = inv.display();
    if inv
        .wrappers
        .iter()
        .any(|w| matches!(w.as_str(), "sudo" | "doas" | "pkexec" | "su" | "runuser"))
        || matches!(name, "sudo" | "doas" | "su" | "pkexec")
    {
        let how = inv
            .wrappers
            .iter()
            .find(|w| matches!(w.as_str(), "sudo" | "doas" | "pkexec" | "su" | "runuser"))
            .map_or_else(|| "as another user".to_string(), |w| format!("with {w}"));
        j.hit_at(
            &PRIVILEGE,
            &inv.origin,
            format!("`{shown}` runs {how}; a person should run it if it is needed"),
        );
    }
    let lits: Vec<Option<&str>> = inv.lit_args().collect();
    match name {
        "kill" if kill_targets(&lits).iter().any(|t| matches!(*t, "-1" | "1")) => {
            j.hit_at(
                &KILL_EVERYTHING,
                &inv.origin,
                format!("`{shown}` signals every process you own; kill the one process by its pid"),
            );
        }
        "pkill" | "killall" | "skill" | "slay" => {
            let (patterns, _, _, regex) = super::forge::kill_patterns(inv, name);
            let by_user = lits
                .iter()
                .any(|a| matches!(a, Some("-u" | "-U" | "--user" | "--euid" | "--uid")));
            let negated = lits.iter().any(|a| matches!(a, Some("-v" | "--inverse")));
            let all = patterns
                .iter()
                .flatten()
                .any(|p| regex && super::forge::pattern_matches_all(p));
            if (by_user && patterns.is_empty()) || negated || all {
                j.hit_at(
                    &KILL_EVERYTHING,
                    &inv.origin,
                    format!(
                        "`{shown}` signals every process of a user; kill the one process by its pid"
                    ),
                );
            }
        }
        // Every session of the terminal multiplexer, the person's among them.
        // A server of its own (`-L NAME`, `-S SOCKET`) is the agent's to end.
        "tmux" | "byobu"
            if lits.iter().flatten().any(|a| *a == "kill-server")
                && !lits
                    .iter()
                    .flatten()
                    .any(|a| a.starts_with("-L") || a.starts_with("-S")) =>
        {
            j.hit_at(
            &KILL_EVERYTHING,
            &inv.origin,
            format!("`{shown}` ends every tmux session, the person's too; end the one session you started (`tmux kill-session -t NAME`)"),
            );
        }
        "killall5" => j.hit_at(
            &KILL_EVERYTHING,
            &inv.origin,
            format!("`{shown}` signals every process"),
        ),
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            j.hit_at(
                &SHUTDOWN,
                &inv.origin,
                format!("`{shown}` stops the machine"),
            );
        }
        "init" | "telinit" if lits.iter().any(|a| matches!(a, Some("0" | "6"))) => {
            j.hit_at(
                &SHUTDOWN,
                &inv.origin,
                format!("`{shown}` stops the machine"),
            );
        }
        "systemctl" | "loginctl"
            if lits.iter().any(|a| {
                matches!(
                    a,
                    Some(
                        "poweroff"
                            | "reboot"
                            | "halt"
                            | "kexec"
                            | "suspend"
                            | "hibernate"
                            | "emergency"
                            | "rescue"
                            | "kill-user"
                            | "terminate-user"
                    )
                )
            }) =>
        {
            j.hit_at(
                &SHUTDOWN,
                &inv.origin,
                format!("`{shown}` stops the machine or a user's session"),
            );
        }
        "at" | "batch"
            if !lits
                .iter()
                .any(|a| matches!(a, Some("-l" | "-r" | "-d" | "-c"))) =>
        {
            j.hit_at(&SCHEDULE, &inv.origin, format!("`{shown}` schedules a job that runs after this session, outside any sandbox; a person should set it up"));
        }
        "crontab" => {
            let installs = lits
                .iter()
                .any(|a| a.is_none_or(|a| !a.starts_with('-') || a == "-"))
                || (lits.is_empty() && !matches!(inv.stdin, Stdin::None));
            let removes = lits.iter().any(|a| matches!(a, Some("-r")));
            if installs || removes {
                j.hit_at(&SCHEDULE, &inv.origin, format!("`{shown}` changes the user's scheduled jobs, which run outside this session; a person should set them up"));
            }
        }
        "systemd-run" | "launchctl" | "schtasks" => {
            j.hit_at(&SCHEDULE, &inv.origin, format!("`{shown}` starts a job outside this session and any sandbox; a person should set it up"));
        }
        // `.envrc` then runs in every shell that enters the folder, the person's too.
        "direnv" if matches!(lits.first(), Some(Some("allow" | "permit" | "grant"))) => {
            j.hit_at(&SCHEDULE, &inv.origin, format!("`{shown}` lets `.envrc` run in every shell that enters the folder, later and outside this session; a person should allow it"));
        }
        // `screen -X quit` ends the session it names, or the only one there is: the person's.
        "screen"
            if lits
                .windows(2)
                .any(|w| matches!(w, [Some("-X"), Some(c)] if matches!(*c, "quit" | "kill")))
                && !lits.iter().flatten().any(|a| a.starts_with("-S")) =>
        {
            j.hit_at(&KILL_EVERYTHING, &inv.origin, format!("`{shown}` ends a screen session it does not name, maybe the person's; name the one you started (`screen -S NAME -X quit`)"));
        }
        _ => {}
    }
    if let Some(what) = destroys_external(inv, name, &lits, &fed(a, inv)) {
        j.hit_at(&EXTERNAL_DESTROY, &inv.origin, format!("`{shown}` {what}, outside the repository and beyond what git or a sandbox can restore; a person should run it"));
    }
    if inv.wrappers.iter().any(|w| w == "systemd-run") {
        j.hit_at(
            &SCHEDULE,
            &inv.origin,
            format!("`{shown}` runs as a job outside this session and any sandbox"),
        );
    }
}

/// The literal text a command reads on its standard input: a here-document or here-string, or
/// what `echo`/`printf`/`cat` earlier in its pipeline print of their literal words. A database
/// client or `nc` runs what it is fed as surely as its `-c` (red team, round 16:
/// `echo 'DROP DATABASE prod' | psql`, `psql -f /dev/stdin <<< '…'`, `printf 'FLUSHALL\r\n' |
/// nc localhost 6379`).
fn fed<'a>(a: &'a Analysis, inv: &'a Invocation) -> Vec<&'a str> {
    match &inv.stdin {
        Stdin::Text(Arg::Lit(s)) => vec![s.as_str()],
        Stdin::Pipe => inv
            .upstream
            .iter()
            .map(|&u| &a.invocations[u])
            .filter(|u| matches!(u.name(), Some("echo" | "printf" | "cat")))
            .flat_map(|u| {
                let here = match &u.stdin {
                    Stdin::Text(Arg::Lit(s)) => Some(s.as_str()),
                    _ => None,
                };
                u.lit_args().flatten().chain(here)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// What a command destroys outside the repository, if it does. `fed` is the literal text it
/// reads on its standard input ([`fed`]).
fn destroys_external(
    inv: &Invocation,
    name: &str,
    lits: &[Option<&str>],
    fed: &[&str],
) -> Option<&'static str> {
    let l: Vec<&str> = lits.iter().flatten().copied().collect();
    let told: Vec<&str> = l.iter().chain(fed).copied().collect();
    let has = |s: &str| l.contains(&s);
    let any = |f: &dyn Fn(&str) -> bool| l.iter().any(|a| f(a));
    let computed = inv.args.iter().any(|w| w.arg.lit().is_none());
    let sql = |l: &[&str]| l.iter().any(|a| drops_data(a) == Some(SQL_DROPS));
    Some(match name {
        "terraform" | "tofu" | "pulumi" | "cdk" | "cdktf" if has("destroy") => {
            "destroys cloud infrastructure"
        }
        "terraform" | "tofu" if has("apply") && any(&|a| a.starts_with("-destroy")) => {
            "destroys cloud infrastructure"
        }
        "kubectl" | "oc"
            if l.first()
                .is_some_and(|v| matches!(*v, "delete" | "drain" | "replace"))
                || has("delete") && l.iter().position(|a| *a == "delete") == Some(0) =>
        {
            "deletes cluster resources"
        }
        "helm"
            if l.first()
                .is_some_and(|v| matches!(*v, "uninstall" | "delete" | "del" | "un")) =>
        {
            "removes a cluster release"
        }
        "aws"
            if any(&|a| a.starts_with("delete-") || a.starts_with("terminate-") || a == "rb")
                || (has("s3") && has("rm")) =>
        {
            "deletes cloud resources"
        }
        "gcloud" | "az" | "doctl" | "linode-cli" | "hcloud"
            if any(&|a| matches!(a, "delete" | "destroy" | "remove")) =>
        {
            "deletes cloud resources"
        }
        "gsutil" if any(&|a| matches!(a, "rm" | "rb")) => "deletes cloud storage",
        "psql" | "mysql" | "mariadb" | "sqlite3" | "sqlcmd" | "clickhouse-client" | "cockroach"
            if sql(&told) =>
        {
            SQL_DROPS
        }
        "dropdb" | "dropuser" => "drops a database",
        "redis-cli" | "nc" | "ncat" | "netcat" | "socat" | "telnet"
            if told.iter().any(|a| drops_data(a) == Some(REDIS_FLUSH)) =>
        {
            REDIS_FLUSH
        }
        "nc" | "ncat" | "netcat" | "socat" | "telnet" if sql(fed) => SQL_DROPS,
        // An HTTP API's DELETE (`curl -X DELETE localhost:9200/_all`): what it removes lives
        // in a service, beyond git and the sandbox.
        "curl" | "wget" | "http" | "https" | "xh" | "httpie"
            if l.windows(2).any(|w| {
                matches!(w[0], "-X" | "--request" | "--method")
                    && w[1].eq_ignore_ascii_case("DELETE")
            }) || any(&|a| {
                let u = a.to_ascii_uppercase();
                u == "-XDELETE" || u == "--REQUEST=DELETE" || u == "--METHOD=DELETE"
            }) || (matches!(name, "http" | "https" | "xh" | "httpie")
                && l.first().is_some_and(|m| m.eq_ignore_ascii_case("DELETE"))) =>
        {
            "deletes a resource through an HTTP API"
        }
        "mongo" | "mongosh" if any(&|a| a.contains("dropDatabase") || a.contains(".drop(")) => {
            "drops a MongoDB database"
        }
        "docker" | "podman"
            if (has("volume") && any(&|a| matches!(a, "rm" | "prune")))
                || (has("system") && has("prune") && any(&|a| a == "--volumes"))
                || (matches!(l.first().copied(), Some("rm" | "rmi" | "kill")) && computed) =>
        {
            "removes containers, images or volumes"
        }
        "gh" if (has("repo") && has("delete"))
            || (has("release") && has("delete"))
            || (has("api")
                && any(&|a| {
                    a.eq_ignore_ascii_case("DELETE") || a.eq_ignore_ascii_case("-XDELETE")
                })) =>
        {
            "deletes a repository or release on the forge"
        }
        "npm" | "pnpm" | "yarn" if has("unpublish") || has("deprecate") => {
            "withdraws a published package"
        }
        "systemctl"
            if any(&|a| matches!(a, "stop" | "disable" | "mask" | "kill")) && !has("--user") =>
        {
            "stops or disables system services"
        }
        "service" if any(&|a| matches!(a, "stop" | "disable")) => "stops a system service",
        "iptables" | "ip6tables" | "nft" | "ufw" | "firewall-cmd"
            if any(&|a| {
                matches!(
                    a,
                    "-F" | "--flush" | "-X" | "flush" | "disable" | "reset" | "--panic-off"
                )
            }) =>
        {
            "flushes or disables the firewall"
        }
        "useradd" | "userdel" | "usermod" | "passwd" | "chpasswd" | "groupdel" | "visudo" => {
            "changes user accounts"
        }
        _ => return None,
    })
}

const SQL_DROPS: &str = "drops or empties database data";
const REDIS_FLUSH: &str = "empties a Redis database";

/// What a database statement destroys, if it does: SQL that drops a database, schema or table,
/// truncates one or deletes from one without `WHERE` (each statement of a script on its own:
/// a `WHERE` in one statement does not spare the next), or Redis's `FLUSHALL`/`FLUSHDB`.
/// Shared by the database clients' arguments and input and by database servers' MCP tools.
pub(crate) fn drops_data(text: &str) -> Option<&'static str> {
    let u = text.to_ascii_uppercase();
    let sql = u.split(';').any(|stmt| {
        // Words by SQL's own tokens: `DROP/**/TABLE`, `(DELETE FROM t RETURNING *)`.
        let words: Vec<&str> = stmt
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let has = |pair: &[&str]| words.windows(pair.len()).any(|w| w == pair);
        has(&["DROP", "DATABASE"])
            || has(&["DROP", "SCHEMA"])
            || has(&["DROP", "TABLE"])
            || has(&["TRUNCATE"])
            || (has(&["DELETE", "FROM"]) && !has(&["WHERE"]))
    });
    if sql {
        Some(SQL_DROPS)
    } else if u.contains("FLUSHALL") || u.contains("FLUSHDB") {
        Some(REDIS_FLUSH)
    } else {
        None
    }
}

/// The pids a `kill` targets (after its signal and options).
pub(super) fn kill_targets<'a>(lits: &'a [Option<&'a str>]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut after = false;
    while i < lits.len() {
        let Some(a) = lits[i] else {
            i += 1;
            continue;
        };
        if after {
            out.push(a);
        } else if a == "--" {
            after = true;
        } else if matches!(a, "-s" | "-n" | "--signal") {
            i += 1;
        } else if a.starts_with('-') && i == 0 && a.len() > 1 && a != "-1" {
            // The signal: `-9`, `-KILL`, `-SIGTERM`.
        } else if a == "-1" && i == 0 && lits.len() > 1 {
            // `kill -1 PID`: SIGHUP to PID.
        } else {
            out.push(a);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_targets_skip_the_signal() {
        let t = |v: &[&str]| {
            let lits: Vec<Option<&str>> = v.iter().map(|s| Some(*s)).collect();
            kill_targets(&lits)
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(t(&["-9", "-1"]), ["-1"]);
        assert_eq!(t(&["--", "-1"]), ["-1"]);
        assert_eq!(t(&["-s", "KILL", "-1"]), ["-1"]);
        assert_eq!(t(&["-KILL", "-1"]), ["-1"]);
        assert_eq!(t(&["-1", "1234"]), ["1234"]);
        assert_eq!(t(&["1234"]), ["1234"]);
    }
}
