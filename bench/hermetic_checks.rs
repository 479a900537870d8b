//! Hermetic checks against in-tree checks on a real Cargo project (issue: hermetic gates, item 2).
//!
//!     bash bench/hermetic_checks.sh          # builds the project, then runs this
//!
//! `forge run` runs every check on a clean checkout of the candidate tree, outside the
//! repository, with the checkout's `target/` kept between checks as a configured cache
//! (`run.check_caches: [target]`). This measures what that costs against running the same
//! `cargo test` in the working tree, after the first build, the way a green agent's attempts
//! go: each round edits one source file, then runs the tests. Hermetic rounds include
//! everything Forge does for a check: the content snapshot of the working tree, storing the
//! changed blob, syncing the checkout (what changed since the last check), the command, and
//! settling the checkout after it (re-read by content: what the check rewrote).
//!
//! With `FORGE_BIN=path/to/forge` the hermetic check runs as `forge run` runs it in the kernel
//! sandbox: inside `forge sandbox --profile check --contain` on an overlay over the checkout
//! (`--layer`, with `target` kept in place), and only the overlay's layer is read after it.
//!
//! Usage: hermetic_checks REPO ROUNDS COMMAND…

use std::path::PathBuf;
use std::time::{Duration, Instant};

use forge::config::CommandConfig;
use forge::evidence::checkout::Checkout;
use forge::evidence::odb::Odb;
use forge::evidence::snapshot::ObjectFormat;
use forge::evidence::{Hasher, Snapshot};
use forge::repo::Project;
use forge::report::Format;
use forge::verify::{self, Place};

fn main() {
    // `cargo bench` adds `--bench` to a harness-less bench's arguments.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.len() < 3 {
        eprintln!("usage: hermetic_checks REPO ROUNDS COMMAND…");
        std::process::exit(2);
    }
    let repo = PathBuf::from(&args[0]);
    let rounds: usize = args[1].parse().expect("ROUNDS");
    let command = args[2..].join(" ");
    let project = Project::at(&repo);
    let logs = std::env::temp_dir().join("forge-bench-hermetic-logs");
    let cmd = CommandConfig {
        name: "test".into(),
        run: command.clone(),
        timeout: 3600,
        report: Format::Auto,
        report_path: None,
    };
    let format = ObjectFormat::of_repo(&repo).expect("a git repository");
    let head = forge::git::head(&repo).expect("HEAD");
    let tree = Snapshot::of_commit(&repo, &head).unwrap();
    let mut hasher = Hasher::new(format);
    let odb = Odb::new(&repo, format);
    let dir = std::env::temp_dir().join("forge-bench-hermetic-checkout");
    let mut checkout =
        Checkout::open(dir.clone(), vec!["target".into()], Hasher::new(format)).expect("checkout");
    let sandboxed = std::env::var_os("FORGE_BIN").map(PathBuf::from);
    let hermetic = |hasher: &mut Hasher, checkout: &mut Checkout| {
        let t = Instant::now();
        let snap = hasher.snapshot(&repo, &tree).unwrap();
        let changed: Vec<(String, forge::evidence::Entry)> = tree
            .diff(&snap)
            .into_iter()
            .filter_map(|c| c.after.map(|e| (c.path, e)))
            .collect();
        let items: Vec<(&str, &forge::evidence::Entry)> =
            changed.iter().map(|(p, e)| (p.as_str(), e)).collect();
        odb.store(&items).unwrap();
        checkout.sync(&odb, &snap).unwrap();
        let wrap = match &sandboxed {
            Some(forge_bin) => {
                use forge::sandbox::{Profile, Request};
                let mut req = Request::new(Profile::Check, &repo);
                req.write = vec![dir.display().to_string()];
                req.layer = Some(checkout.prepare_layer(&snap).unwrap());
                req.layer_keep = checkout.kept_for(&snap);
                req.contain = true;
                forge::sandbox::launch::argv(forge_bin, &req, &[])
            }
            None => Vec::new(),
        };
        let place = Place {
            cwd: Some(dir.clone()),
            strict: true,
            wrap,
            ..Default::default()
        };
        let r = verify::run_command_at(&project, &place, &logs, Some(5), "bench", &cmd).unwrap();
        assert!(r.ok, "the hermetic check failed: {}", r.tail);
        let rewritten = match &sandboxed {
            Some(_) => checkout.settle_layer(&snap).unwrap(),
            None => checkout.settle(&odb, &snap).unwrap(),
        };
        assert!(rewritten.is_empty(), "the check rewrote {rewritten:?}");
        t.elapsed()
    };
    let in_tree = || {
        let t = Instant::now();
        let r = verify::run_command(&project, &logs, Some(5), "bench", &cmd).unwrap();
        assert!(r.ok, "the in-tree check failed: {}", r.tail);
        t.elapsed()
    };
    // The first build of each, not measured.
    in_tree();
    hermetic(&mut hasher, &mut checkout);
    let lib = repo.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let mut a: Vec<Duration> = Vec::new();
    let mut b: Vec<Duration> = Vec::new();
    for i in 0..rounds {
        // One edit per round, as a green attempt makes, seen by both.
        std::fs::write(&lib, format!("{original}\npub const ROUND: usize = {i};\n")).unwrap();
        // Alternate which goes first, so neither always meets a warmer cache.
        if i % 2 == 0 {
            a.push(in_tree());
            b.push(hermetic(&mut hasher, &mut checkout));
        } else {
            b.push(hermetic(&mut hasher, &mut checkout));
            a.push(in_tree());
        }
    }
    std::fs::write(&lib, original).unwrap();
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (ma, mb) = (med(&mut a), med(&mut b));
    println!(
        "| `{command}` after an edit, {rounds} rounds | in the working tree {:.0} ms | hermetic checkout {:.0} ms | ratio {:.2}x | target <= 1.3x |",
        ma.as_secs_f64() * 1000.0,
        mb.as_secs_f64() * 1000.0,
        mb.as_secs_f64() / ma.as_secs_f64()
    );
}
