use forge::config::Config;
use forge::error::{EXIT_GATE, EXIT_NOTHING, EXIT_OK, EXIT_USAGE, Error, Result};
use forge::repo::Project;
use forge::undo::{self, Journal, Refused};
use serde_json::json;

#[derive(clap::Args)]
#[command(
    about = "Put the project's files and git refs back as they were before an agent's tool call",
    long_about = "Put the project's files and git refs back as they were before an agent's tool call.\n\nThe hooks journal the project's tracked and untracked files (not ignored ones) and git's refs, HEAD and index before each tool call that can change files. `forge undo` restores them as they were before the last call; `--to CALL` before any call of the session, by the number or the client's call id that `--list` shows. Ignored files (`.venv`, `node_modules`, `target`) and `.forge/` are never touched. The state an undo replaces is journaled first, so an undo can be undone.",
    after_help = "Examples:\n  forge undo --list                   the session's calls, newest first, with what each changed\n  forge undo --list --json            the same as JSON\n  forge undo                          undo the last call\n  forge undo --to 3                   back to before call 3 (and everything after it)\n  forge undo --to toolu_01ABC         the same, by the client's call id\n  forge undo --session 06d8d342-…     another session than the last one journaled\n\nExit codes: 0 restored (or listed), 1 refused: a file was over undo.max_file_size and not kept (--skip-missing restores the rest), 2 usage error (no such call), 3 nothing to undo."
)]
pub struct Args {
    /// Restore the state before this call (its number or the client's call id); default: the
    /// last call.
    #[arg(long, value_name = "CALL")]
    to: Option<String>,
    /// The session whose journal to read (default: the one journaled last).
    #[arg(long)]
    session: Option<String>,
    /// List the session's calls, newest first, with what each changed.
    #[arg(long, conflicts_with_all = ["to", "skip_missing"])]
    list: bool,
    /// Restore everything else when some file was over the cap and not kept.
    #[arg(long)]
    skip_missing: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    let config = Config::load(&project.config_path())?;
    let Some(j) = Journal::open(&project.root, &project.tmp_dir(), config.undo.max_file_size)?
    else {
        return Err(Error::usage(format!(
            "{} is not the top of a git repository: Forge journals only a project at a repository's root",
            project.root.display()
        )));
    };
    let Some(session) = undo::restore::pick_session(&j, args.session.as_deref()) else {
        eprintln!("forge: {}", Refused::NoCalls("any session".into()));
        return Ok(EXIT_NOTHING);
    };
    if args.list {
        let listed = undo::restore::list(&j, &session)?;
        if args.json {
            super::print_json(&json!({"session": session, "calls": listed}));
        } else if listed.is_empty() {
            println!("no calls journaled in session {session}");
        } else {
            println!("session {session}, newest first:");
            for l in &listed {
                print_call(l);
            }
        }
        return Ok(EXIT_OK);
    }
    match undo::restore::undo(&j, &session, args.to.as_deref(), args.skip_missing) {
        Ok(u) => {
            forge::timeline::Recorder::for_cli(&project).record_or_warn(
                None,
                "undo",
                json!({"session": session, "to": u.to.seq, "call": u.to.id, "tool": u.to.tool,
                       "written": u.written.len(), "removed": u.removed.len(), "refs": u.refs,
                       "not_kept": u.not_kept, "saved_as": u.saved_as.seq}),
            );
            if args.json {
                super::print_json(&u);
            } else {
                print_undone(&u);
            }
            Ok(EXIT_OK)
        }
        Err(Refused::Other(e)) => Err(e),
        Err(r) => {
            eprintln!("forge: {r}");
            Ok(match r {
                Refused::NoCalls(_) | Refused::Unchanged(_) => EXIT_NOTHING,
                Refused::UnknownCall(..) => EXIT_USAGE,
                Refused::NotKept { .. } | Refused::Other(_) => EXIT_GATE,
            })
        }
    }
}

fn print_call(l: &undo::Listed) {
    let c = &l.call;
    let id =
        c.id.as_deref()
            .map(|i| format!(" [{i}]"))
            .unwrap_or_default();
    println!("  {:>3}  {}  {}: {}{id}", c.seq, c.at, c.tool, c.summary);
    let ch = &l.changed;
    if ch.is_empty() {
        println!("       changed nothing");
        return;
    }
    let mut parts = Vec::new();
    for (what, paths) in [
        ("added", &ch.added),
        ("modified", &ch.modified),
        ("removed", &ch.removed),
        ("refs", &ch.refs),
    ] {
        if !paths.is_empty() {
            parts.push(format!("{what} {}", few(paths)));
        }
    }
    println!("       {}", parts.join("; "));
}

/// The first few of `paths`, and how many more.
fn few(paths: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut s = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        s.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    s
}

fn print_undone(u: &undo::Undone) {
    println!(
        "restored the state before call {} ({}: {})",
        u.to.seq, u.to.tool, u.to.summary
    );
    if !u.written.is_empty() {
        println!("  written back: {}", few(&u.written));
    }
    if !u.removed.is_empty() {
        println!("  removed: {}", few(&u.removed));
    }
    for r in &u.refs {
        println!("  ref {r}");
    }
    if u.index {
        println!("  git's index put back");
    }
    if !u.not_kept.is_empty() {
        println!(
            "  NOT restored (over undo.max_file_size when journaled): {}",
            u.not_kept.join(", ")
        );
    }
    println!("to undo this undo: forge undo --to {}", u.saved_as.seq);
}
