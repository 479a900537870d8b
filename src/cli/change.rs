use serde::Serialize;

use forge::breaker;
use forge::error::{EXIT_OK, Result};
use forge::repo::Project;
use forge::spec;

#[derive(clap::Subcommand)]
#[command(about = "Create and inspect changes (their spec.md scenarios and breaker state)")]
pub enum Command {
    /// Scaffold .forge/changes/<name>/spec.md (OpenSpec syntax).
    #[command(
        after_help = "Examples:\n  forge change new checkout\n  forge change new checkout --scenario \"guest pays by card\" --scenario \"member gets discount\""
    )]
    New {
        /// Lowercase letters, digits and `-`.
        name: String,
        /// A scenario title to add (repeatable); its slug is the scenario id.
        #[arg(long = "scenario", value_name = "TITLE")]
        scenarios: Vec<String>,
    },
    /// List changes (.forge/changes and openspec/changes) with scenario counts and breaker state.
    #[command(after_help = "Examples:\n  forge change list\n  forge change list --json")]
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set the active change: the one the agent hooks verify on Stop (kept in .tmp/.forge/).
    #[command(after_help = "Examples:\n  forge change use checkout\n  forge change use --clear")]
    Use {
        name: Option<String>,
        /// No active change: the Stop hook lets agents stop without verifying.
        #[arg(long, conflicts_with = "name")]
        clear: bool,
    },
    /// List scenarios and the `@scenario` markers that cover them (no tests are run).
    #[command(
        after_help = "Examples:\n  forge change scenarios\n  forge change scenarios checkout --json"
    )]
    Scenarios {
        /// Only this change.
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: Command) -> Result<i32> {
    let project = Project::discover(&super::cwd()?)?;
    match cmd {
        Command::New { name, scenarios } => {
            reserved(&name)?;
            let path = spec::new_change(&project, &name, &scenarios)?;
            println!("Created {}", project.rel(&path));
            println!(
                "Next: write its requirements and scenarios, mark the tests that cover them with `@scenario {name}/<id>`, then run `forge verify --change {name}`."
            );
        }
        Command::List { json } => list(&project, json)?,
        Command::Use { name, clear } => {
            let path = forge::hooks::active_change_path(&project);
            match (name, clear) {
                (Some(name), false) => {
                    forge::repo::validate_change_name(&name)?;
                    reserved(&name)?;
                    if !spec::list_changes(&project)?.iter().any(|c| c.name == name) {
                        return Err(forge::Error::usage(format!(
                            "no change named `{name}`; create it with `forge change new {name}`"
                        )));
                    }
                    forge::state::write_atomic(&path, format!("{name}\n").as_bytes())?;
                    println!(
                        "Active change: {name}. Agent Stop hooks now run `forge verify --change {name}`."
                    );
                }
                (None, true) => {
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => {
                            return Err(forge::Error::io(
                                format!("cannot remove {}", path.display()),
                                e,
                            ));
                        }
                    }
                    println!(
                        "No active change. Agent Stop hooks now run `forge verify` on all changes."
                    );
                }
                _ => match forge::hooks::active_change(&project) {
                    Some(c) => println!("{c}"),
                    None => println!(
                        "No active change: agent Stop hooks verify all changes; set one with `forge change use <name>`."
                    ),
                },
            }
        }
        Command::Scenarios { name, json } => scenarios(&project, name.as_deref(), json)?,
    }
    Ok(EXIT_OK)
}

/// The Stop hook's breaker for "no active change" lives under this name: a change of that name
/// would share its streak.
fn reserved(name: &str) -> Result<()> {
    if name == forge::breaker::ALL_CHANGES {
        return Err(forge::Error::usage(format!(
            "`{name}` is the name of the breaker the Stop hook counts when no change is active; pick another name"
        )));
    }
    Ok(())
}

#[derive(Serialize)]
struct ChangeRow {
    name: String,
    sources: Vec<&'static str>,
    spec_files: Vec<String>,
    scenarios: usize,
    breaker: Option<breaker::BreakerState>,
    breaker_error: Option<String>,
}

fn list(project: &Project, json: bool) -> Result<()> {
    let mut rows = Vec::new();
    for c in spec::list_changes(project)? {
        let n = spec::scenarios(project, Some(&c.name))?.len();
        let (b, err) = match breaker::load(project, &c.name) {
            Ok(b) => (b, None),
            Err(e) => (None, Some(e.to_string())),
        };
        rows.push(ChangeRow {
            name: c.name,
            sources: c.sources,
            spec_files: c.spec_files,
            scenarios: n,
            breaker: b,
            breaker_error: err,
        });
    }
    if json {
        super::print_json(&rows);
        return Ok(());
    }
    if rows.is_empty() {
        println!("No changes yet: create one with `forge change new <name>`.");
        return Ok(());
    }
    let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
    println!(
        "{:w$}  {:15}  {:9}  BREAKER",
        "CHANGE", "SOURCE", "SCENARIOS"
    );
    for r in &rows {
        let breaker = match (&r.breaker, &r.breaker_error) {
            (_, Some(_)) => "UNREADABLE (see `forge verify --change`)".to_string(),
            (Some(b), None) if b.open => {
                format!("CIRCUIT OPEN ({} failures)", b.consecutive_failures)
            }
            (Some(b), None) => format!(
                "{} consecutive failure(s), last {}",
                b.consecutive_failures,
                b.last_verdict.map_or("-", |v| v.as_str())
            ),
            (None, None) => "no attempts".to_string(),
        };
        println!(
            "{:w$}  {:15}  {:9}  {breaker}",
            r.name,
            r.sources.join("+"),
            r.scenarios
        );
    }
    Ok(())
}

#[derive(Serialize)]
struct ScenarioRow {
    change: String,
    id: String,
    title: String,
    requirement: String,
    file: String,
    line: usize,
    markers: Vec<spec::Marker>,
}

fn scenarios(project: &Project, name: Option<&str>, json: bool) -> Result<()> {
    let list = spec::scenarios(project, name)?;
    let markers = spec::scan_markers(project)?;
    let rows: Vec<ScenarioRow> = list
        .into_iter()
        .map(|s| {
            let m = markers
                .iter()
                .filter(|m| m.id == s.id && m.change.as_ref().is_none_or(|c| *c == s.change))
                .cloned()
                .collect();
            ScenarioRow {
                change: s.change,
                id: s.id,
                title: s.title,
                requirement: s.requirement,
                file: s.file,
                line: s.line,
                markers: m,
            }
        })
        .collect();
    if json {
        super::print_json(&rows);
        return Ok(());
    }
    if rows.is_empty() {
        println!("No scenarios: add `#### Scenario: <title>` headings to a change's spec.md.");
    }
    for r in &rows {
        println!("{}/{}  ({}:{})", r.change, r.id, r.file, r.line);
        if r.markers.is_empty() {
            println!("    no @scenario marker (a test whose name contains the id also covers it)");
        }
        for m in &r.markers {
            println!("    {}", m.describe());
        }
    }
    Ok(())
}
