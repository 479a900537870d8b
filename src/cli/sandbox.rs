//! `forge sandbox`: run a command inside the kernel sandbox of a profile (src/sandbox/).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use forge::config::Config;
use forge::error::{Error, Result};
use forge::repo::Project;
use forge::sandbox::{self, Client, Mode, Profile, Request, SandboxConfig};

#[derive(clap::Args)]
#[command(
    about = "Run a command inside the kernel sandbox of a profile (Landlock, scopes, no capabilities); exits with its exit code",
    long_about = "Runs CMD under a Landlock ruleset scoped to a profile: red and green write only their areas \
(--write), their answer's folder (--answer), a private TMPDIR and their client's state; review writes only its answer; \
check writes its checkout (--write) and build caches; session writes the project except Forge's and the agents' control \
files (.forge/, .tmp/.forge/, .git/config, .git/hooks/, .git/info/, .claude/, .codex/, .gemini/), git's internals, \
TMPDIR and caches. No profile reads secrets (~/.ssh, ~/.aws, credentials, …), signals a process outside the sandbox, \
or keeps a capability. --contain runs CMD in a new PID namespace: whatever it starts ends when it ends. \
Exit code: CMD's; 125 when the sandbox cannot be set up, 126/127 when CMD cannot run. See docs/sandbox.md.",
    after_help = "Examples:\n  forge sandbox -- cargo test                               session profile, this project\n  forge sandbox --profile red --write 'tests/**' --answer /r/out/red-1/answer.json -- claude -p \"$(cat prompt)\"\n  forge sandbox --profile check --write /tmp/checkout --contain -- sh -c 'cargo test'\n  forge sandbox --explain --json                             what the session profile allows here\n  forge sandbox --level                                      what the kernel offers"
)]
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    /// red, green, review, check or session.
    #[arg(long, default_value = "session")]
    profile: String,
    /// The repository root (default: the Forge project or git repository of this folder).
    #[arg(long)]
    project: Option<PathBuf>,
    /// A writable area: a glob relative to the project (`tests/**`) or an absolute folder.
    #[arg(long = "write", value_name = "AREA")]
    write: Vec<String>,
    /// The answer file (its folder becomes writable).
    #[arg(long)]
    answer: Option<PathBuf>,
    /// The private TMPDIR (created, mode 0700).
    #[arg(long)]
    tmpdir: Option<PathBuf>,
    /// The agent client CMD runs (claude, codex, gemini): its state folders and credential.
    #[arg(long)]
    client: Option<String>,
    /// A writable build cache (replaces `sandbox.caches`; repeat it).
    #[arg(long = "cache", value_name = "PATH")]
    cache: Vec<String>,
    /// require, auto or off (default: `sandbox.mode`, else auto).
    #[arg(long)]
    mode: Option<String>,
    /// Run CMD in a new PID namespace: everything it starts ends with it.
    #[arg(long)]
    contain: bool,
    /// Carve control files out of writable folders with Landlock rules alone, without a mount
    /// namespace (slower to set up, and no new file can be made at the repository root).
    #[arg(long, hide = true)]
    carve_by_rules: bool,
    /// check profile: mount an overlay on the checkout (the one absolute --write folder) whose
    /// upper layer is DIR/upper (DIR/work empty too): CMD's writes land in DIR and the checkout
    /// stays as it was. Needs a mount namespace.
    #[arg(long, value_name = "DIR")]
    layer: Option<PathBuf>,
    /// With --layer: a folder of the checkout (relative) that stays writable in place, such as
    /// a build cache (repeat it).
    #[arg(long = "layer-keep", value_name = "FOLDER", requires = "layer")]
    layer_keep: Vec<String>,
    /// With --layer: a folder of the project (relative) that git ignores and the command needs,
    /// such as a virtual environment or node_modules, shown read-only at the same place in the
    /// checkout (repeat it).
    #[arg(long = "layer-env", value_name = "FOLDER", requires = "layer")]
    layer_env: Vec<String>,
    /// With --layer: mount the checkout over the project's own folder and run CMD there, so
    /// absolute paths in the environments (a venv's scripts, an editable install) lead to the
    /// checkout's files, not the working tree's.
    #[arg(long = "layer-in-place", requires = "layer")]
    layer_in_place: bool,
    /// A folder of the project (relative) kept read-only even inside a writable area, such as
    /// the virtual environment `forge run`'s checks run with (repeat it).
    #[arg(long = "keep-read-only", value_name = "FOLDER")]
    keep_read_only: Vec<String>,
    /// Print what the profile allows here and exit.
    #[arg(long)]
    explain: bool,
    /// Print what the kernel offers and exit.
    #[arg(long)]
    level: bool,
    /// With --explain or --level: JSON.
    #[arg(long)]
    json: bool,
    /// The command and its arguments.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

impl Args {
    /// Reads the argument lists the PreToolUse hook and `forge run` produce
    /// (`--profile P --project DIR … -- CMD…`) without building clap's command tree, which costs
    /// ~0.2 ms of a call that runs before every sandboxed Bash command. `None` for anything else —
    /// `--help`, `--explain`, `--level`, `--opt=value`, a repeated option, a value that looks
    /// like a flag, no `--` — which clap then reads (a test checks both agree).
    pub fn parse_simple(mut argv: impl Iterator<Item = OsString>) -> Option<Args> {
        let mut a = Args {
            profile: "session".into(),
            project: None,
            write: Vec::new(),
            answer: None,
            tmpdir: None,
            client: None,
            cache: Vec::new(),
            mode: None,
            contain: false,
            carve_by_rules: false,
            layer: None,
            layer_keep: Vec::new(),
            layer_env: Vec::new(),
            layer_in_place: false,
            keep_read_only: Vec::new(),
            explain: false,
            level: false,
            json: false,
            command: Vec::new(),
        };
        let mut seen: Vec<&str> = Vec::new();
        loop {
            let arg = argv.next()?;
            let flag = arg.to_str()?;
            let key = match flag {
                "--" => {
                    a.command = argv.collect();
                    let keep_alone =
                        (!a.layer_keep.is_empty() || !a.layer_env.is_empty() || a.layer_in_place)
                            && a.layer.is_none();
                    return (!a.command.is_empty() && !keep_alone).then_some(a);
                }
                "--profile" | "--project" | "--answer" | "--tmpdir" | "--client" | "--mode"
                | "--contain" | "--carve-by-rules" | "--layer" | "--layer-in-place" => {
                    let k = [
                        "--profile",
                        "--project",
                        "--answer",
                        "--tmpdir",
                        "--client",
                        "--mode",
                        "--contain",
                        "--carve-by-rules",
                        "--layer",
                        "--layer-in-place",
                    ]
                    .into_iter()
                    .find(|k| *k == flag)?;
                    if seen.contains(&k) {
                        return None;
                    }
                    seen.push(k);
                    k
                }
                "--write" | "--cache" | "--layer-keep" | "--layer-env" | "--keep-read-only" => flag,
                _ => return None,
            };
            match key {
                "--contain" => a.contain = true,
                "--carve-by-rules" => a.carve_by_rules = true,
                "--layer-in-place" => a.layer_in_place = true,
                _ => {
                    let value = argv.next()?;
                    let text = value.to_str();
                    if value.is_empty() || text.is_some_and(|t| t.starts_with('-')) {
                        return None;
                    }
                    match key {
                        "--profile" => a.profile = text?.to_string(),
                        "--client" => a.client = Some(text?.to_string()),
                        "--mode" => a.mode = Some(text?.to_string()),
                        "--write" => a.write.push(text?.to_string()),
                        "--cache" => a.cache.push(text?.to_string()),
                        "--layer-keep" => a.layer_keep.push(text?.to_string()),
                        "--layer-env" => a.layer_env.push(text?.to_string()),
                        "--keep-read-only" => a.keep_read_only.push(text?.to_string()),
                        "--layer" => a.layer = Some(PathBuf::from(value)),
                        "--project" => a.project = Some(PathBuf::from(value)),
                        "--answer" => a.answer = Some(PathBuf::from(value)),
                        _ => a.tmpdir = Some(PathBuf::from(value)),
                    }
                }
            }
        }
    }
}

/// The project a sandbox is for: the Forge project, else the git repository, else the folder.
fn project_of(cwd: &Path) -> PathBuf {
    if let Ok(p) = Project::discover(cwd) {
        return p.root;
    }
    let mut d = Some(cwd);
    while let Some(dir) = d {
        if dir.join(".git").exists() {
            return dir.to_path_buf();
        }
        d = dir.parent();
    }
    cwd.to_path_buf()
}

/// The project's `sandbox:` section; the defaults where it has no config.
fn sandbox_config(project: &Path) -> Result<SandboxConfig> {
    let p = Project::at(project);
    let path = p.config_path();
    if !path.is_file() {
        return Ok(SandboxConfig::default());
    }
    Config::load_sandbox_cached(&path, &p.tmp_dir().join("cache"))
}

pub fn run(args: Args) -> Result<i32> {
    if args.level {
        let level = sandbox::level();
        if args.json {
            super::print_json(&serde_json::json!({
                "level": level,
                "describe": level.describe(),
                "full": level.full(),
                "missing": level.missing(),
            }));
        } else {
            println!("{}", level.describe());
            for m in level.missing() {
                println!("missing: {m}");
            }
        }
        return Ok(0);
    }
    let profile = Profile::parse(&args.profile).ok_or_else(|| {
        Error::usage(format!(
            "unknown profile `{}`: use red, green, review, check or session",
            args.profile
        ))
    })?;
    let client = match &args.client {
        None => None,
        Some(c) => Some(Client::parse(c).ok_or_else(|| {
            Error::usage(format!("unknown client `{c}`: use claude, codex or gemini"))
        })?),
    };
    let mode = match &args.mode {
        None => None,
        Some(m) => Some(Mode::parse(m).ok_or_else(|| {
            Error::usage(format!("unknown mode `{m}`: use require, auto or off"))
        })?),
    };
    let cwd = super::cwd()?;
    let project = match args.project {
        Some(p) if p.is_absolute() => p,
        Some(p) => cwd.join(p),
        None => project_of(&cwd),
    };
    let config = sandbox_config(&project)?;
    let req = Request {
        profile,
        project,
        write: args.write,
        answer: args.answer,
        tmpdir: args.tmpdir,
        client,
        caches: (!args.cache.is_empty()).then_some(args.cache),
        mode,
        contain: args.contain,
        carve_by_rules: args.carve_by_rules,
        layer: args.layer,
        layer_keep: args.layer_keep,
        layer_envs: args.layer_env,
        layer_in_place: args.layer_in_place,
        look_through: true,
        keep_read_only: args.keep_read_only,
    };
    if args.explain {
        return explain(&req, &config, args.json);
    }
    if args.command.is_empty() {
        return Err(Error::usage(
            "no command: give it after `--` (forge sandbox --profile session -- cargo test)",
        ));
    }
    let mut warn = |m: &str| eprintln!("{m}");
    match sandbox::enter(&req, &config, &args.command, &mut warn) {
        Ok(ended) => sandbox::exit_like(ended),
        Err(e) => {
            eprintln!("forge sandbox: error: {e}");
            Ok(e.exit_code())
        }
    }
}

fn explain(req: &Request, config: &SandboxConfig, json: bool) -> Result<i32> {
    let level = sandbox::level();
    let (_, plan) = match sandbox::resolve(req, config) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("forge sandbox: error: {e}");
            return Ok(e.exit_code());
        }
    };
    let mode = req.mode.unwrap_or(config.mode);
    if json {
        super::print_json(&serde_json::json!({
            "profile": req.profile,
            "mode": mode.as_str(),
            "level": level,
            "plan": plan,
            "network": config.network.of(req.profile),
        }));
        return Ok(0);
    }
    println!(
        "Profile `{}` in {} (mode {}; kernel: {})",
        req.profile.as_str(),
        req.project.display(),
        mode.as_str(),
        level.describe()
    );
    println!("May write:");
    for w in &plan.write {
        println!("  {}  ({})", w.display(), describe_place(&plan, w));
    }
    if !plan.read_only.is_empty() {
        println!("Read-only inside those (bound in a private mount namespace):");
        for r in &plan.read_only {
            println!("  {}", r.display());
        }
    }
    println!("May read: everything else except");
    for h in plan.holes.iter().chain(&plan.hide) {
        println!("  {}", h.display());
    }
    if !plan.read_inside_holes.is_empty() {
        println!("But may read, inside those (less the secrets in them):");
        for r in &plan.read_inside_holes {
            println!("  {}", r.display());
        }
    }
    println!("Network: {}", describe_network(config, req.profile));
    for m in level.missing() {
        println!("Missing here: {m}");
    }
    Ok(0)
}

fn describe_network(config: &SandboxConfig, profile: Profile) -> String {
    let p = profile.as_str();
    match config.network.of(profile) {
        sandbox::config::Net::Open => format!("the machine's (`sandbox.network.{p}: open`)"),
        sandbox::config::Net::Loopback => {
            format!("its own loopback only (`sandbox.network.{p}: loopback`)")
        }
        sandbox::config::Net::Allow(hosts) => format!(
            "its own loopback, and through Forge's egress proxy only {} (`sandbox.network.{p}.allow`)",
            if hosts.is_empty() {
                "no host".to_string()
            } else {
                format!("`{}`", hosts.join("`, `"))
            }
        ),
    }
}

fn describe_place(plan: &sandbox::Plan, p: &Path) -> &'static str {
    plan.places
        .iter()
        .find(|(_, q)| q == p)
        .map(|(place, _)| place.describe())
        .unwrap_or("")
}
