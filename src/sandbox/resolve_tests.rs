//! Tests of `resolve.rs`: each rule of the plan on a small fake machine.

use super::*;
use std::collections::BTreeSet;

fn layout() -> Layout {
    Layout {
        project: "/w/repo".into(),
        home: "/h".into(),
        git_dir: Some("/w/repo/.git".into()),
        git_common: Some("/w/repo/.git".into()),
        git_file: false,
        linked_worktrees: vec![],
        hooks_paths: vec![],
        worktree_config: false,
        git_includes: vec![],
        env_files: vec!["/w/repo/.env".into()],
        system_tmp: "/tmp".into(),
        read: Vec::new(),
        listed: Vec::new(),
        linked_control: Vec::new(),
    }
}

fn wants(profile: Profile) -> Wants {
    Wants {
        profile,
        write: vec![],
        answer: None,
        tmpdir: Some("/t/private".into()),
        caches: vec!["~/.cargo/registry".into()],
        client: Some(Client::Claude),
        client_state: vec!["~/.claude".into()],
        secrets: vec![],
        path: vec!["/usr/bin".into(), "/w/repo/.venv/bin".into()],
        keep_read_only: vec![],
        home_read: crate::sandbox::allow::home_reads(Path::new("/h"), &[], &|_| None),
        session_writable: vec![],
    }
}

/// A small fake machine.
fn fs() -> BTreeSet<PathBuf> {
    [
        "/w/repo",
        "/w/repo/.git",
        "/w/repo/.git/config",
        "/w/repo/.git/hooks",
        "/w/repo/.forge",
        "/w/repo/.tmp",
        "/w/repo/.tmp/.forge",
        "/w/repo/.claude",
        "/w/repo/.env",
        "/w/repo/tests",
        "/w/repo/src",
        "/w/repo/src/lib.rs",
        "/h",
        "/h/.ssh",
        "/h/.claude",
        "/h/.claude/.credentials.json",
        "/h/.codex",
        "/h/.codex/auth.json",
        "/h/.cargo",
        "/h/.cargo/registry",
        "/h/.cargo/credentials.toml",
        "/h/.dbt",
        "/h/.dbt/profiles.yml",
        "/h/notes.txt",
        "/dev",
        "/dev/null",
        "/etc",
        "/etc/shadow",
    ]
    .iter()
    .map(PathBuf::from)
    .collect()
}

fn run(w: &Wants) -> Plan {
    let f = fs();
    plan(
        w,
        &layout(),
        &|p| f.contains(p),
        &|p| f.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap()
}

#[test]
fn area_globs_become_their_literal_folder() {
    assert_eq!(literal_prefix("tests/**"), "tests");
    assert_eq!(literal_prefix("tests/test_*.py"), "tests");
    assert_eq!(literal_prefix("*.py"), "");
    assert_eq!(literal_prefix("src/a/b.rs"), "src/a/b.rs");
    assert_eq!(literal_prefix("src/{a,b}/x"), "src");
    let mut w = wants(Profile::Red);
    w.write = vec!["tests/**".into(), "tests/unit/new/*.rs".into()];
    let p = run(&w);
    // A folder that does not exist yet is created, and granted alone.
    assert_eq!(
        p.create_areas,
        vec![PathBuf::from("/w/repo/tests/unit/new")]
    );
    assert!(p.write.contains(&PathBuf::from("/w/repo/tests/unit/new")));
    assert!(!p.write.contains(&PathBuf::from("/w/repo")));
    assert_eq!(
        p.write,
        vec![
            PathBuf::from("/dev/null"),
            "/h/.claude".into(),
            "/t/private".into(),
            "/w/repo/tests".into(),
            "/w/repo/tests/unit/new".into()
        ]
    );
    // A literal file: its folder.
    w.write = vec!["src/lib.rs".into()];
    assert!(run(&w).write.contains(&PathBuf::from("/w/repo/src")));
    w.write = vec!["../elsewhere/**".into()];
    let f = fs();
    let e = plan(&w, &layout(), &|p| f.contains(p), &|_| true, &|_| false).unwrap_err();
    assert!(e.contains("leaves the project"), "{e}");
}

#[test]
fn red_writes_its_areas_answer_tmp_and_client_state_only() {
    let mut w = wants(Profile::Red);
    w.write = vec!["tests/**".into()];
    w.answer = Some("/w/repo/.tmp/.forge/runs/x/outputs/red-1/answer.json".into());
    let p = run(&w);
    let red = Profile::Red;
    assert!(p.can_write(red, Path::new("/w/repo/tests/a_test.rs")));
    assert!(!p.can_write(red, Path::new("/w/repo/src/lib.rs")));
    assert!(!p.can_write(red, Path::new("/w/repo/.forge/config.yaml")));
    assert!(!p.can_write(red, Path::new("/w/repo/.git/config")));
    assert!(p.can_write(
        red,
        Path::new("/w/repo/.tmp/.forge/runs/x/outputs/red-1/answer.json")
    ));
    assert!(!p.can_write(red, Path::new("/w/repo/.tmp/.forge/runs/x/state.json")));
    assert!(p.can_write(red, Path::new("/h/.claude/projects/x.jsonl")));
    assert!(!p.can_write(red, Path::new("/h/.bashrc")));
    // Its own credential is readable, another client's is not.
    assert!(p.can_read(red, Path::new("/h/.claude/.credentials.json")));
    assert!(!p.can_read(red, Path::new("/h/.codex/auth.json")));
    assert!(!p.can_read(red, Path::new("/h/.ssh/id_ed25519")));
    // Nothing writable holds a control file: no mount namespace is needed.
    assert!(!p.needs_mounts(), "{p:?}");
    assert!(p.holes.contains(&PathBuf::from("/h/.codex/auth.json")));
    assert!(
        !p.holes
            .contains(&PathBuf::from("/h/.claude/.credentials.json"))
    );
    assert!(p.holes.contains(&PathBuf::from("/dev")));
    // Home is a hole: what the profile reads there is granted inside it, once.
    assert!(p.holes.contains(&PathBuf::from("/h")));
    assert_eq!(p.read_inside_holes, vec![PathBuf::from("/h/.cargo")]);
}

#[test]
fn session_binds_control_files_read_only_and_pins_their_folders() {
    let p = run(&wants(Profile::Session));
    let s = Profile::Session;
    assert!(p.can_write(s, Path::new("/w/repo/new-file-at-root.txt")));
    assert!(p.can_write(s, Path::new("/w/repo/.git/objects/ab/cdef")));
    assert!(p.can_write(s, Path::new("/w/repo/.git/index")));
    assert!(!p.can_write(s, Path::new("/w/repo/.git/config")));
    assert!(!p.can_write(s, Path::new("/w/repo/.git/hooks/pre-commit")));
    assert!(!p.can_write(s, Path::new("/w/repo/.forge/config.yaml")));
    assert!(!p.can_write(s, Path::new("/w/repo/.claude/settings.json")));
    assert!(!p.can_read(s, Path::new("/w/repo/.env")));
    assert!(!p.can_read(s, Path::new("/h/.claude/.credentials.json")));
    assert!(!p.can_write(s, Path::new("/h/.claude/x")));
    assert!(p.can_write(s, Path::new("/h/.cargo/registry/x")));
    for ro in [
        ".git/config",
        ".git/hooks",
        ".forge",
        ".tmp/.forge",
        ".claude",
    ] {
        assert!(
            p.read_only.contains(&Path::new("/w/repo").join(ro)),
            "{ro}: {p:?}"
        );
    }
    // Missing control folders are created first, so an agent cannot create them.
    for ph in [".codex", ".gemini", ".git/info", ".git/modules"] {
        assert!(
            p.placeholders.contains(&Path::new("/w/repo").join(ph)),
            "{ph}"
        );
    }
    assert!(
        !p.placeholders
            .iter()
            .any(|x| x.ends_with("config.worktree"))
    );
    assert_eq!(
        p.pin,
        vec![PathBuf::from("/w/repo/.git"), "/w/repo/.tmp".into()]
    );
    assert_eq!(p.hide, vec![PathBuf::from("/w/repo/.env")]);
    assert!(p.needs_mounts());
}

/// Red team: from the main worktree, a session wrote a linked worktree's `commondir` (a
/// planted `core.fsmonitor` then ran in that worktree), and a planted `.git/commondir` moved the
/// plan's protection of `.git/config` and `.git/hooks` into a folder the agent wrote.
#[test]
fn every_worktree_s_git_pointers_are_read_only_and_a_planted_commondir_is_not_followed() {
    let mut fsx = fs();
    for f in [
        "/w/repo/.git/worktrees",
        "/w/repo/.git/worktrees/wt",
        "/w/repo/.git/worktrees/wt/commondir",
        "/w/repo/.git/worktrees/wt/gitdir",
        "/w/repo/.git/commondir",
    ] {
        fsx.insert(f.into());
    }
    let mut l = layout();
    l.linked_worktrees = vec!["/w/repo/.git/worktrees/wt".into()];
    let p = plan(
        &wants(Profile::Session),
        &l,
        &|p| fsx.contains(p),
        &|p| fsx.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap();
    for ro in [
        ".git/worktrees/wt/commondir",
        ".git/worktrees/wt/gitdir",
        ".git/commondir",
        ".git/config",
    ] {
        assert!(
            p.read_only.contains(&Path::new("/w/repo").join(ro)),
            "{ro}: {:?}",
            p.read_only
        );
    }
    // Absent ones are not invented (git would read an empty `config.worktree` or `commondir`).
    assert!(!p.read_only.iter().any(|x| x.ends_with("config.worktree")));

    // The layout itself: a `.git` folder is the common folder, whatever `commondir` says.
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
    std::fs::create_dir_all(d.path().join("evil")).unwrap();
    std::fs::write(repo.join(".git/commondir"), "../../evil\n").unwrap();
    let l = Layout::probe(&repo, d.path()).unwrap();
    let git = repo.canonicalize().unwrap().join(".git");
    assert_eq!(l.git_common.as_deref(), Some(git.as_path()));
    assert_eq!(l.linked_worktrees, vec![git.join("worktrees/wt")]);
    assert_eq!(l.planted_commondir(), Some(git.join("commondir")));

    // A submodule's folder (`.git` a file naming `.git/modules/sub`) is its own common folder:
    // a `commondir` planted there is not followed either.
    let sub = repo.join("sub");
    let modules = repo.join(".git/modules/sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(&modules).unwrap();
    std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
    std::fs::write(modules.join("commondir"), "../../../../evil\n").unwrap();
    let l = Layout::probe(&sub, d.path()).unwrap();
    let m = modules.canonicalize().unwrap();
    assert_eq!(l.git_common.as_deref(), Some(m.as_path()));
    assert_eq!(l.planted_commondir(), Some(m.join("commondir")));
}

/// Red team: a session read `~/.pgpass`, git's XDG credential store and `~/.claude.json` (which
/// may hold Claude Code's API key). Claude's own files stay readable to a Claude agent.
#[test]
fn more_credentials_are_secrets_and_a_client_keeps_its_own() {
    let mut fsx = fs();
    for f in [
        "/h/.pgpass",
        "/h/.config/git/credentials",
        "/h/.claude.json",
    ] {
        fsx.insert(f.into());
    }
    let run_as =
        |w: &Wants| plan(w, &layout(), &|p| fsx.contains(p), &|_| false, &|_| false).unwrap();
    let s = run_as(&wants(Profile::Session));
    for f in [
        "/h/.pgpass",
        "/h/.config/git/credentials",
        "/h/.claude.json",
    ] {
        assert!(!s.can_read(Profile::Session, Path::new(f)), "{f}");
    }
    let mut w = wants(Profile::Red);
    w.write = vec!["tests/**".into()];
    w.client_state = vec!["~/.claude".into(), "~/.claude.json".into()];
    let red = run_as(&w);
    assert!(red.can_read(Profile::Red, Path::new("/h/.claude.json")));
    assert!(!red.can_read(Profile::Red, Path::new("/h/.pgpass")));
    w.client = Some(Client::Codex);
    w.client_state = vec!["~/.codex".into()];
    assert!(!run_as(&w).can_read(Profile::Red, Path::new("/h/.claude.json")));
}

/// Red team: a session wrote `.venv/bin/rm` (the project's venv was first on the client's PATH)
/// and the unsandboxed outer line ran it. A PATH folder inside a writable folder is read-only.
#[test]
fn path_folders_inside_the_project_are_read_only() {
    let mut fsx = fs();
    fsx.insert("/w/repo/.venv".into());
    fsx.insert("/w/repo/.venv/bin".into());
    let p = plan(
        &wants(Profile::Session),
        &layout(),
        &|p| fsx.contains(p),
        &|p| fsx.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with("bin"),
        &|_| false,
    )
    .unwrap();
    assert!(p.read_only.contains(&PathBuf::from("/w/repo/.venv/bin")));
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.venv/bin/rm")));
    assert!(p.can_write(Profile::Session, Path::new("/w/repo/.venv/lib/x.py")));
    // The system's folders are not the sandbox's to bind.
    assert!(!p.read_only.contains(&PathBuf::from("/usr/bin")));
    // The project root itself on PATH cannot be bound without the rest: it is named.
    let mut w = wants(Profile::Session);
    w.path.push("/w/repo".into());
    let p = plan(&w, &layout(), &|p| fsx.contains(p), &|_| true, &|_| false).unwrap();
    assert!(
        p.problems.iter().any(|x| x.contains("/w/repo is on PATH")),
        "{:?}",
        p.problems
    );
}

/// Red team: with `core.hooksPath=.husky/_` (husky), a session wrote `.husky/pre-commit` and the
/// person's next `git commit` ran it; with `extensions.worktreeConfig` on, it planted a missing
/// `config.worktree` holding a `core.fsmonitor`.
#[test]
fn hooks_path_and_worktree_config_are_control_files() {
    assert_eq!(
        git_config_facts(
            "[core]\n\tbare = false\n\thooksPath = .husky/_\n[extensions]\n\tworktreeConfig = true ; yes\n"
        ),
        (Some(".husky/_".to_string()), true, vec![])
    );
    assert_eq!(
        git_config_facts("[Core]\nHooksPath = \"/x/y\"\n[remote \"o\"]\nhookspath = z\n"),
        (Some("/x/y".to_string()), false, vec![])
    );
    // Red team round 3: a key on the header's line, and included files.
    assert_eq!(
        git_config_facts(
            "[core] hooksPath = .githooks\n[include]\n\tpath = ../.gitconfig\n[includeIf \"gitdir:~/w/\"]\n\tpath = ~/w.inc\n"
        ),
        (
            Some(".githooks".to_string()),
            false,
            vec!["../.gitconfig".to_string(), "~/w.inc".to_string()]
        )
    );
    let mut fsx = fs();
    fsx.insert("/w/repo/.husky".into());
    fsx.insert("/w/repo/.husky/_".into());
    let mut l = layout();
    l.hooks_paths = vec!["/w/repo/.husky/_".into()];
    l.worktree_config = true;
    let p = plan(
        &wants(Profile::Session),
        &l,
        &|p| fsx.contains(p),
        &|p| fsx.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".husky"),
        &|_| false,
    )
    .unwrap();
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.husky/pre-commit")));
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.husky/_/h")));
    assert_eq!(
        p.placeholder_files,
        vec![PathBuf::from("/w/repo/.git/config.worktree")]
    );
}

/// Red team: a session wrote `.mcp.json` (a server the next session starts, unsandboxed) and
/// `.vscode/tasks.json` (a task run when the folder opens).
#[test]
fn what_a_client_or_editor_starts_is_read_only_where_it_exists() {
    let mut fsx = fs();
    fsx.insert("/w/repo/.mcp.json".into());
    fsx.insert("/w/repo/.vscode".into());
    let p = plan(
        &wants(Profile::Session),
        &layout(),
        &|p| fsx.contains(p),
        &|p| p.ends_with(".vscode") || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap();
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.mcp.json")));
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.vscode/tasks.json")));
    assert!(!p.placeholders.iter().any(|x| x.ends_with(".vscode")));
}

/// Red team round 3: the repository's config includes `../.gitconfig`, a file in the project,
/// where a session appended a `core.fsmonitor` the person's `git status` then ran.
#[test]
fn files_the_git_config_includes_are_control_files() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(
        repo.join(".git/config"),
        "[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig\n",
    )
    .unwrap();
    std::fs::write(repo.join(".gitconfig"), "[core] hooksPath = .githooks\n").unwrap();
    std::fs::create_dir_all(repo.join(".githooks")).unwrap();
    let home = d.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let l = Layout::probe(&repo, &home).unwrap();
    let root = repo.canonicalize().unwrap();
    // After the system's and the user's files, which git reads first.
    assert!(
        l.git_includes.ends_with(&[root.join(".gitconfig")]),
        "{l:?}"
    );
    assert_eq!(l.hooks_paths, vec![root.join(".githooks")]);
    let mut w = wants(Profile::Session);
    w.tmpdir = Some(d.path().join("t"));
    let p = plan(&w, &l, &|p| p.exists(), &|p| p.is_dir(), &|p| {
        p.is_symlink()
    })
    .unwrap();
    assert!(!p.can_write(Profile::Session, &root.join(".gitconfig")));
    assert!(!p.can_write(Profile::Session, &root.join(".githooks/pre-commit")));
    assert!(p.can_write(Profile::Session, &root.join("src/x.rs")));
}

/// Red team round 4: a hooks folder (husky's git-ignored `.husky/_` after `git clean`) or an
/// included config file that does not exist yet was created by a session, and git ran it.
/// Missing ones are created empty first and bound read-only like the rest.
#[test]
fn missing_hook_folders_and_included_configs_are_created_empty_and_read_only() {
    let mut l = layout();
    l.hooks_paths = vec!["/w/repo/.husky/_".into(), "/h/.githooks".into()];
    l.git_includes = vec!["/w/repo/.gitconfig".into()];
    let f = fs();
    let p = plan(
        &wants(Profile::Session),
        &l,
        &|p| f.contains(p),
        &|p| f.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap();
    assert!(p.placeholders.contains(&PathBuf::from("/w/repo/.husky/_")));
    assert!(p.placeholders.contains(&PathBuf::from("/w/repo/.husky")));
    assert_eq!(
        p.placeholder_files,
        vec![PathBuf::from("/w/repo/.gitconfig")]
    );
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.husky/pre-commit")));
    assert!(!p.can_write(Profile::Session, Path::new("/w/repo/.gitconfig")));
    // Outside every writable folder, nothing is invented.
    assert!(!p.placeholders.iter().any(|x| x.starts_with("/h")));
}

/// Red team round 4: `.venv` was a link to `venvs/py312`; `.venv/bin` (on PATH) was bound
/// read-only, but the command swapped the link for one to its own folder. A link on the way to
/// a protected path is named.
#[test]
fn a_link_on_the_way_to_a_protected_path_is_named() {
    let mut fsx = fs();
    for f in ["/w/repo/.venv", "/w/repo/.venv/bin"] {
        fsx.insert(f.into());
    }
    let p = plan(
        &wants(Profile::Session),
        &layout(),
        &|p| fsx.contains(p),
        &|p| fsx.contains(p),
        &|p| p == Path::new("/w/repo/.venv"),
    )
    .unwrap();
    assert!(
        p.problems
            .iter()
            .any(|x| x.starts_with("/w/repo/.venv is a symbolic link") && x.contains(".venv/bin")),
        "{:?}",
        p.problems
    );
}

#[test]
fn a_client_may_write_its_state_but_not_its_settings() {
    let mut fsx = fs();
    fsx.insert("/h/.claude/settings.json".into());
    let mut w = wants(Profile::Red);
    w.write = vec!["tests/**".into()];
    let p = plan(&w, &layout(), &|p| fsx.contains(p), &|_| true, &|_| false).unwrap();
    assert!(p.can_write(Profile::Red, Path::new("/h/.claude/projects/x.jsonl")));
    assert!(!p.can_write(Profile::Red, Path::new("/h/.claude/settings.json")));
    assert!(
        p.read_only
            .contains(&PathBuf::from("/h/.claude/settings.json"))
    );
    // Missing client files are not invented.
    assert!(
        !p.placeholders.iter().any(|x| x.starts_with("/h")),
        "{:?}",
        p.placeholders
    );
}

/// Issue 34, point 1: the clients' settings files can hold their keys; a session's commands have
/// no use for them, so the session hides them (a red agent's client reads its own, read-only).
/// Their instructions stay readable. `.envrc` is a tool config, a place whether or not it exists.
#[test]
fn the_session_hides_the_clients_settings_and_keeps_envrc() {
    let mut fsx = fs();
    fsx.insert("/h/.claude/settings.json".into());
    fsx.insert("/h/.codex/config.toml".into());
    let p = plan(
        &wants(Profile::Session),
        &layout(),
        &|p| fsx.contains(p),
        &|_| true,
        &|_| false,
    )
    .unwrap();
    for f in CLIENT_SETTINGS {
        let f = Path::new("/h").join(f);
        assert_eq!(p.place_of(&f), Place::Secrets, "{f:?}");
        assert!(!p.can_read(Profile::Session, &f), "{f:?}");
    }
    assert!(p.can_read(Profile::Session, Path::new("/h/.claude/CLAUDE.md")));
    assert!(
        p.places
            .iter()
            .any(|(pl, x)| *pl == Place::Control && x == Path::new("/w/repo/.envrc"))
    );
    let p = plan(
        &wants(Profile::Red),
        &layout(),
        &|p| fsx.contains(p),
        &|_| true,
        &|_| false,
    )
    .unwrap();
    assert!(p.can_read(Profile::Red, Path::new("/h/.claude/settings.json")));
}

#[test]
fn secrets_move_to_mounts_but_dev_stays_a_hole() {
    let mut p = run(&wants(Profile::Red));
    assert!(!p.needs_mounts());
    p.hide_secrets_by_mount();
    assert_eq!(p.holes, vec![PathBuf::from("/h")]);
    assert!(p.private_dev);
    assert_eq!(p.write[0], PathBuf::from("/dev"));
    // Secrets are covered inside home's hole too: a socket there is no file access Landlock
    // stops.
    assert!(p.hide.contains(&PathBuf::from("/h/.ssh")));
    assert!(!p.can_read(Profile::Red, Path::new("/h/.ssh")));
    assert!(
        p.hide
            .contains(&PathBuf::from("/h/.cargo/credentials.toml"))
    );
    assert!(p.hide.contains(&PathBuf::from("/etc/shadow")));
    assert!(
        !p.hide
            .contains(&PathBuf::from("/h/.claude/.credentials.json"))
    );
    assert!(p.needs_mounts());
}

#[test]
fn without_mounts_the_project_is_carved_entry_by_entry() {
    let mut p = run(&wants(Profile::Session));
    let tree: Vec<(&str, Vec<&str>)> = vec![
        (
            "/w/repo",
            vec![".git", ".forge", ".tmp", ".claude", ".env", "src", "tests"],
        ),
        (
            "/w/repo/.git",
            vec!["config", "hooks", "objects", "refs", "HEAD"],
        ),
        ("/w/repo/.tmp", vec![".forge", "other"]),
    ];
    let mut list = |d: &Path| {
        tree.iter()
            .find(|(p, _)| Path::new(p) == d)
            .map(|(p, c)| c.iter().map(|n| (Path::new(p).join(n), false)).collect())
            .unwrap_or_default()
    };
    p.carve_by_rules(&mut list);
    let w: Vec<&str> = p
        .write
        .iter()
        .filter_map(|x| x.to_str())
        .filter(|x| x.starts_with("/w/"))
        .collect();
    assert_eq!(
        w,
        [
            "/w/repo/.git/HEAD",
            "/w/repo/.git/objects",
            "/w/repo/.git/refs",
            "/w/repo/.tmp/other",
            "/w/repo/src",
            "/w/repo/tests"
        ]
    );
    assert!(p.holes.contains(&PathBuf::from("/w/repo/.env")));
    assert!(!p.needs_mounts());
}

#[test]
fn a_control_symlink_inside_a_writable_folder_is_a_problem() {
    let f = fs();
    let p = plan(
        &wants(Profile::Session),
        &layout(),
        &|p| f.contains(p),
        &|_| true,
        &|p| p.ends_with(".claude"),
    )
    .unwrap();
    assert!(p.problems.iter().any(|x| x.contains(".claude")), "{p:?}");
}

#[test]
fn cover_leaves_out_holes_and_links() {
    let tree: Vec<(&str, Vec<(&str, bool)>)> = vec![
        (
            "/",
            vec![
                ("/usr", false),
                ("/h", false),
                ("/dev", false),
                ("/lib", true),
            ],
        ),
        (
            "/h",
            vec![
                ("/h/.bashrc", false),
                ("/h/.ssh", false),
                ("/h/.config", false),
                ("/h/link", true),
            ],
        ),
        (
            "/h/.config",
            vec![("/h/.config/gcloud", false), ("/h/.config/git", false)],
        ),
    ];
    let mut list = |d: &Path| {
        tree.iter()
            .find(|(p, _)| Path::new(p) == d)
            .map(|(_, c)| c.iter().map(|(p, l)| (PathBuf::from(p), *l)).collect())
            .unwrap_or_default()
    };
    let holes = vec![
        PathBuf::from("/h/.ssh"),
        "/h/.config/gcloud".into(),
        "/dev".into(),
    ];
    let got = cover(Path::new("/"), &holes, &mut list);
    let want: Vec<PathBuf> = ["/usr", "/h/.bashrc", "/h/.config/git"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        cover(Path::new("/"), &[], &mut list),
        vec![PathBuf::from("/")]
    );
}

#[test]
fn within_is_starts_with_on_components() {
    for (p, d) in [
        ("/a/b", "/a"),
        ("/a", "/a"),
        ("/a/b", "/"),
        ("/ab", "/a"),
        ("/a", "/a/b"),
        ("/a/b/", "/a/"),
    ] {
        assert_eq!(
            within(Path::new(p), Path::new(d)),
            Path::new(p).starts_with(d),
            "{p} {d}"
        );
    }
}

/// `same` and `inside` answer what `Path`'s component-wise `==` and `starts_with` answer, on
/// every pair of a set of spellings: plain, trailing `/`, doubled `/`, `.` inside, relative.
#[test]
fn same_and_inside_agree_with_components() {
    let spellings = [
        "/", "/a", "/a/", "/a/b", "/a/b/", "/a//b", "/a/./b", "/a/b/.", "/ab", "/a/bc", "a", "a/b",
        "./a", "././a", "a/.", "/a/../b", "/a/..", "",
    ];
    for x in spellings {
        for y in spellings {
            let (px, py) = (Path::new(x), Path::new(y));
            assert_eq!(same(px, py), px == py, "same({x:?}, {y:?})");
        }
    }
    // `inside` (like `within`) is for absolute paths without `//` or `.`.
    let normal = ["/", "/a", "/a/", "/a/b", "/a/b/", "/ab", "/a/bc", "/a/b/c"];
    for x in normal {
        for y in normal {
            let (px, py) = (Path::new(x), Path::new(y));
            assert_eq!(
                inside(px, py),
                px.starts_with(py) && px != py,
                "inside({x:?}, {y:?})"
            );
        }
    }
}

#[test]
fn home_or_root_is_no_project() {
    for root in ["/", "/h"] {
        let mut l = layout();
        l.project = root.into();
        let e = plan(&wants(Profile::Session), &l, &|_| true, &|_| true, &|_| {
            false
        })
        .unwrap_err();
        assert!(e.contains("run it in a repository"), "{e}");
    }
}

#[test]
fn env_files() {
    assert!(is_env_secret(".env"));
    assert!(is_env_secret(".env.production"));
    assert!(!is_env_secret(".env.example"));
    // Red team, round 13: direnv's files export the same secrets.
    assert!(is_env_secret(".envrc"));
    assert!(is_env_secret(".envrc.local"));
    assert!(is_env_secret(".ENV"));
    assert!(!is_env_secret(".envrc.example"));
    assert!(!is_env_secret(".environment"));
    assert!(!is_env_secret("env"));
    // The layout lists them, so the plan hides them.
    let d = tempfile::tempdir().unwrap();
    for name in [".env", ".envrc", ".envrc.example", "envrc"] {
        std::fs::write(d.path().join(name), "export TOKEN=1\n").unwrap();
    }
    let l = Layout::probe(d.path(), d.path()).unwrap();
    let root = d.path().canonicalize().unwrap();
    assert_eq!(l.env_files, [root.join(".env"), root.join(".envrc")]);
}

#[test]
fn credentials_anywhere_in_the_project_are_found_by_name() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let files = [
        "services/api/.env.production",
        "deploy/.PGPASS",
        "keys/id_ed25519",
        "a/b/c/.netrc",
        ".env",
        // Not credentials by name, or where tools keep their own files.
        "services/api/.env.example",
        "keys/id_ed25519.pub",
        "tests/fixtures/server.key",
        "node_modules/pkg/.env",
        "target/debug/.env",
        ".git/.env",
        ".tmp/.forge/runs/r/checkout/.env",
        "src/env.rs",
    ];
    for f in files {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    // A folder named as an env file is hidden, unless it is a virtual environment; a link is
    // hidden when it leads to a file of the project (not entered when it leads to a folder),
    // not when it leads nowhere or to the system's files.
    std::fs::create_dir_all(root.join("py/.env/bin")).unwrap();
    std::fs::write(root.join("py/.env/bin/activate"), "x").unwrap();
    std::fs::create_dir_all(root.join("secrets/.env")).unwrap();
    std::fs::write(root.join("secrets/.env/prod"), "x").unwrap();
    std::fs::write(root.join("py/.env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("linked")).unwrap();
    std::os::unix::fs::symlink("/nonexistent", root.join("services/.envrc")).unwrap();
    std::os::unix::fs::symlink("/proc", root.join("services/.env.proc")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("services/.env.host")).unwrap();
    // Hidden only when what it leads to is named as a secret itself: a link an agent makes
    // must not choose what the sandbox covers.
    std::fs::create_dir_all(root.join("shared")).unwrap();
    std::fs::write(root.join("shared/.env.shared"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("shared/.env.shared"), root.join("src/.env.local"))
        .unwrap();
    std::os::unix::fs::symlink(root.join("src/env.rs"), root.join("src/.env.code")).unwrap();
    std::fs::create_dir_all(root.join("envs")).unwrap();
    std::fs::write(root.join("envs/prod.env"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("envs/prod.env"), root.join("deploy/.env")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join(".env.d")).unwrap();
    std::os::unix::fs::symlink("..", root.join("src/.envrc")).unwrap();
    let found: Vec<String> = project_secrets(root)
        .unwrap()
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert_eq!(
        found,
        [
            ".env",
            "a/b/c/.netrc",
            "deploy/.PGPASS",
            "deploy/.env",
            "keys/id_ed25519",
            "secrets/.env",
            "services/api/.env.production",
            "shared/.env.shared",
            "src/.env.local",
        ]
    );
}

/// A search that stops at its limit says so: what it did not look at may hold a secret.
#[test]
fn a_search_for_secrets_past_its_limit_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..20 {
        std::fs::write(d.path().join(format!("f{i}")), "x").unwrap();
    }
    assert_eq!(project_secrets_within(d.path(), 10), Err(10));
    assert_eq!(project_secrets_within(d.path(), 20), Ok(Vec::new()));
}

#[test]
fn client_from_command() {
    assert_eq!(Client::from_command("claude -p x"), Some(Client::Claude));
    assert_eq!(
        Client::from_command("/usr/bin/codex exec"),
        Some(Client::Codex)
    );
    assert_eq!(Client::from_command("sh agent.sh"), None);
}

/// `forge run` watches only the PATH folders a sandbox could write (see `writable_roots`): every
/// path any `forge run` profile is granted writes to lies under one of them.
#[test]
fn every_run_profile_writes_only_under_the_writable_roots() {
    let config = super::super::SandboxConfig::default();
    let mut roots = super::super::writable_roots(Path::new("/w/repo"), Path::new("/h"), &config);
    // The fake machine's temporary folder (the real one is the function's).
    roots.push(layout().system_tmp);
    let under = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    for profile in [
        Profile::Red,
        Profile::Green,
        Profile::Review,
        Profile::Check,
    ] {
        let mut w = wants(profile);
        w.tmpdir = None;
        w.client_state = config.clients.claude.clone();
        w.caches = config.caches.clone();
        w.write = match profile {
            Profile::Check => vec!["/tmp/forge-check-0a1b2c".into()],
            _ => vec!["tests/**".into(), "src/cart/**".into()],
        };
        w.answer = Some("/w/repo/.tmp/.forge/runs/r/outputs/a/answer.json".into());
        let plan = run(&w);
        for p in plan
            .write
            .iter()
            .chain(&plan.rebind_writable)
            .chain(&plan.create_areas)
            .chain(std::iter::once(&plan.tmpdir))
        {
            assert!(
                under(p),
                "{profile:?} may write {}, outside {roots:?}",
                p.display()
            );
        }
    }
}

fn git_env(vars: &[(&str, &str)]) -> GitEnv {
    GitEnv(
        vars.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
    )
}

/// Red team, round 15: git's environment names the config files it reads and adds settings of
/// its own. A `GIT_CONFIG_GLOBAL` in the project, the hooks folder it names, one set by
/// `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` and a file `git -c include.path=…` includes are control
/// files like the repository's own config; `~/.gitconfig` is not read when git would not.
#[test]
fn the_config_files_and_settings_gits_environment_names_are_control_files() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(
        repo.join("team.gitconfig"),
        "[core]\n\thooksPath = .team-hooks\n",
    )
    .unwrap();
    let home = d.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let root = repo.canonicalize().unwrap();
    let env = git_env(&[
        (
            "GIT_CONFIG_GLOBAL",
            root.join("team.gitconfig").to_str().unwrap(),
        ),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.hooksPath"),
        ("GIT_CONFIG_VALUE_0", "env-hooks"),
        (
            "GIT_CONFIG_PARAMETERS",
            &format!("'include.path'='{}'", root.join("extra.inc").display()),
        ),
    ]);
    let l = Layout::probe_in(&repo, &home, &env).unwrap();
    assert!(
        l.git_includes.contains(&root.join("team.gitconfig")),
        "{l:?}"
    );
    assert!(l.git_includes.contains(&root.join("extra.inc")), "{l:?}");
    assert!(l.hooks_paths.contains(&root.join(".team-hooks")), "{l:?}");
    assert!(l.hooks_paths.contains(&root.join("env-hooks")), "{l:?}");
    assert!(!l.read.contains(&home.join(".gitconfig")), "{l:?}");
    assert!(!l.read.iter().any(|p| p.starts_with("/etc")), "{l:?}");
    let mut w = wants(Profile::Session);
    w.tmpdir = Some(d.path().join("t"));
    let p = plan(&w, &l, &|p| p.exists(), &|p| p.is_dir(), &|p| {
        p.is_symlink()
    })
    .unwrap();
    for f in [
        "team.gitconfig",
        "extra.inc",
        ".team-hooks/pre-commit",
        "env-hooks/pre-commit",
    ] {
        assert!(!p.can_write(Profile::Session, &root.join(f)), "{f}");
    }
    assert!(p.can_write(Profile::Session, &root.join("src/x.rs")));
    // The missing include is made an empty file, bound read-only.
    assert!(
        p.placeholder_files.contains(&root.join("extra.inc")),
        "{p:?}"
    );
}

/// Without git's variables: the system's files (Debian's git and one built under `/usr/local`),
/// then the user's two.
#[test]
fn git_reads_the_system_and_the_users_config_files_by_default() {
    let home = Path::new("/h");
    assert_eq!(
        git_env(&[]).config_files(home),
        [
            "/etc/gitconfig",
            "/usr/local/etc/gitconfig",
            "/h/.gitconfig",
            "/h/.config/git/config"
        ]
        .map(PathBuf::from)
    );
    assert_eq!(
        git_env(&[
            ("GIT_CONFIG_SYSTEM", "/opt/git.cfg"),
            ("XDG_CONFIG_HOME", "/x")
        ])
        .config_files(home),
        ["/opt/git.cfg", "/h/.gitconfig", "/x/git/config"].map(PathBuf::from)
    );
    assert_eq!(
        git_env(&[("GIT_CONFIG_NOSYSTEM", "true"), ("GIT_CONFIG_GLOBAL", "")]).config_files(home),
        Vec::<PathBuf>::new()
    );
}

/// `git -c` passes its settings on in `GIT_CONFIG_PARAMETERS`, shell-quoted, in the new
/// (`'key'='value'`) and the old (`'key=value'`) form.
#[test]
fn git_config_parameters_are_read_as_git_writes_them() {
    let env = git_env(&[(
        "GIT_CONFIG_PARAMETERS",
        r"'core.hooksPath'='/a b' 'user.name=it'\''s' 'x.y'",
    )]);
    assert_eq!(
        env.settings(),
        vec![
            ("core.hookspath".to_string(), "/a b".to_string()),
            ("user.name".to_string(), "it's".to_string()),
        ]
    );
}

/// A person's git identity is no credential: `GIT_AUTHOR_NAME` holds `AUTH` only inside a word,
/// and removing it took the identity from every commit an agent made in the sandbox. `AUTH` as
/// a word of the name still is one.
#[test]
fn a_git_identity_is_kept_and_an_auth_variable_is_not() {
    for n in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "XAUTHORITY",
        "OAUTHLIB_INSECURE_TRANSPORT_MODE",
    ] {
        assert!(!crate::sandbox::is_secret_env(n), "{n}");
    }
    for n in ["NPM_AUTH", "BASIC_AUTH", "HTTP_AUTH_HEADER", "AUTH"] {
        assert!(crate::sandbox::is_secret_env(n), "{n}");
    }
}

/// A socket in a covered folder (`~/.ssh`'s control-master sockets, an agent's socket in its
/// `ssh-*` folder) is hidden by the folder's cover; a mount onto it would fail every command.
#[test]
fn a_cover_inside_another_cover_is_left_out() {
    let got = outermost(vec![
        "/h/.ssh/cm-git@host".into(),
        "/tmp/ssh-Xq/agent.1".into(),
        "/h/.ssh".into(),
        "/tmp/ssh-Xq".into(),
        "/tmp/ssh-Xqz/agent.2".into(),
    ]);
    assert_eq!(
        got,
        [
            PathBuf::from("/h/.ssh"),
            "/tmp/ssh-Xq".into(),
            "/tmp/ssh-Xqz/agent.2".into()
        ]
    );
}

/// Red team of issue 31: a green agent whose area covered the project's virtual environment
/// wrote an import hook (`.pth`) into its `site-packages`, which git ignores, so no snapshot saw
/// it, and every check ran it. The checks' environments stay read-only for the run's agents,
/// whatever their areas cover.
#[test]
fn the_checks_environments_stay_read_only_inside_an_area() {
    let mut fsx = fs();
    fsx.insert("/w/repo/.venv".into());
    let mut w = wants(Profile::Green);
    w.write = vec!["**/*.py".into()];
    w.keep_read_only = vec!["/w/repo/.venv".into()];
    let p = plan(
        &w,
        &layout(),
        &|p| fsx.contains(p),
        &|p| fsx.contains(p),
        &|_| false,
    )
    .unwrap();
    assert!(p.can_write(Profile::Green, Path::new("/w/repo/src/x.py")));
    assert!(p.read_only.contains(&PathBuf::from("/w/repo/.venv")));
    assert!(!p.can_write(
        Profile::Green,
        Path::new("/w/repo/.venv/lib/python3.12/site-packages/hook.pth")
    ));
}

/// Home is read by allowlist: the toolchains' folders are granted inside its hole, a credential
/// file no list names is not (red team of issue 34: `~/.dbt/profiles.yml` was read).
#[test]
fn home_is_a_hole_with_the_toolchains_granted_inside() {
    for profile in Profile::ALL {
        let p = run(&wants(profile));
        assert!(
            p.holes.contains(&PathBuf::from("/h")),
            "{profile:?}: {:?}",
            p.holes
        );
        assert!(
            p.read_inside_holes.contains(&PathBuf::from("/h/.cargo")),
            "{profile:?}: {:?}",
            p.read_inside_holes
        );
        for unlisted in ["/h/.dbt/profiles.yml", "/h/notes.txt"] {
            assert!(
                !p.can_read(profile, Path::new(unlisted)),
                "{profile:?} {unlisted}"
            );
            assert!(
                !p.read_inside_holes
                    .iter()
                    .any(|r| within(Path::new(unlisted), r)),
                "{profile:?} {unlisted}"
            );
        }
        // The credential inside a granted folder stays a hole (or hidden by a mount).
        assert!(!p.can_read(profile, Path::new("/h/.cargo/credentials.toml")));
        assert!(
            p.holes
                .contains(&PathBuf::from("/h/.cargo/credentials.toml"))
        );
        // Nothing under home is read twice: a writable place is granted as one.
        for r in &p.read_inside_holes {
            assert!(!p.write.contains(r), "{profile:?} {r:?}");
        }
    }
    // The client's own state and credential, where it runs.
    let red = run(&wants(Profile::Red));
    assert!(red.write.contains(&PathBuf::from("/h/.claude")));
    assert!(red.can_read(Profile::Red, Path::new("/h/.claude/.credentials.json")));
    // A session does not read another session's transcripts.
    let s = run(&wants(Profile::Session));
    assert!(!s.can_read(Profile::Session, Path::new("/h/.claude/projects/x/t.jsonl")));
}

/// A project under home is read (or written) through its own grant; `sandbox.read` adds a
/// sibling folder a build reads.
#[test]
fn a_project_under_home_and_what_the_person_adds_are_granted() {
    let mut l = layout();
    l.project = "/h/code/repo".into();
    l.git_dir = Some("/h/code/repo/.git".into());
    l.git_common = Some("/h/code/repo/.git".into());
    l.env_files = vec![];
    let f: BTreeSet<PathBuf> = fs()
        .into_iter()
        .chain(
            [
                "/h/code",
                "/h/code/repo",
                "/h/code/repo/.git",
                "/h/code/lib",
            ]
            .map(PathBuf::from),
        )
        .collect();
    let mut w = wants(Profile::Red);
    w.home_read =
        crate::sandbox::allow::home_reads(Path::new("/h"), &["~/code/lib".into()], &|_| None);
    w.path = vec![];
    let p = plan(
        &w,
        &l,
        &|p| f.contains(p),
        &|p| f.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap();
    assert!(
        p.read_inside_holes.contains(&PathBuf::from("/h/code/repo")),
        "{:?}",
        p.read_inside_holes
    );
    assert!(p.read_inside_holes.contains(&PathBuf::from("/h/code/lib")));
    assert!(p.can_read(Profile::Red, Path::new("/h/code/lib/src/lib.rs")));
    assert!(!p.can_read(Profile::Red, Path::new("/h/code/other/secret.txt")));
    let mut s = w.clone();
    s.profile = Profile::Session;
    let p = plan(
        &s,
        &l,
        &|p| f.contains(p),
        &|p| f.contains(p) && !p.to_string_lossy().contains('.') || p.ends_with(".git"),
        &|_| false,
    )
    .unwrap();
    assert!(p.write.contains(&PathBuf::from("/h/code/repo")));
    assert!(!p.read_inside_holes.contains(&PathBuf::from("/h/code/repo")));
}

/// Issue 34, point 5: the tool configs that run code on the person's next command are read-only
/// where they exist — bound in the session, and in a run's area that holds them — unless the
/// person lets the session change them; a missing one costs no bind and leaves no placeholder.
#[test]
fn tool_configs_that_exist_are_read_only_unless_the_session_may_write_them() {
    let mut f = fs();
    for p in [
        "/w/repo/.cargo",
        "/w/repo/.cargo/config.toml",
        "/w/repo/rust-toolchain.toml",
        "/w/repo/.github",
        "/w/repo/.github/workflows",
        "/w/repo/.github/workflows/ci.yml",
        "/w/repo/.pre-commit-config.yaml",
    ] {
        f.insert(PathBuf::from(p));
    }
    let folders = [
        "/w/repo/.cargo",
        "/w/repo/.github",
        "/w/repo/.github/workflows",
    ];
    let run_on = |w: &Wants| {
        plan(
            w,
            &layout(),
            &|p| f.contains(p),
            &|p| {
                folders.iter().any(|d| p == Path::new(d))
                    || (f.contains(p) && !p.to_string_lossy().contains('.'))
                    || p.ends_with(".git")
            },
            &|_| false,
        )
        .unwrap()
    };
    let s = Profile::Session;
    let p = run_on(&wants(s));
    let repo = Path::new("/w/repo");
    for ro in [
        ".cargo",
        "rust-toolchain.toml",
        ".github/workflows",
        ".pre-commit-config.yaml",
    ] {
        assert!(p.read_only.contains(&repo.join(ro)), "{ro}: {p:?}");
    }
    assert!(!p.can_write(s, &repo.join(".cargo/config.toml")));
    assert!(
        !p.can_write(s, &repo.join(".cargo/config")),
        "cargo prefers it"
    );
    assert!(!p.can_write(s, &repo.join(".github/workflows/ci.yml")));
    assert!(p.can_write(s, &repo.join(".github/CODEOWNERS")));
    assert!(p.pin.contains(&repo.join(".github")), "{:?}", p.pin);
    // Missing ones: no bind, no placeholder of any kind.
    let missing = [".npmrc", "rust-toolchain", "mise.toml", ".yarnrc.yml"];
    for m in missing {
        let m = repo.join(m);
        assert!(!p.read_only.contains(&m), "{m:?}");
        assert!(!p.placeholders.contains(&m) && !p.placeholder_files.contains(&m));
    }
    // Each tool config is a place, so that a kept plan sees one made.
    assert!(
        p.places
            .iter()
            .any(|(pl, x)| *pl == Place::Control && x == &repo.join(".npmrc"))
    );

    // The person's opt-out: only the session's, only what it names.
    let mut w = wants(s);
    w.session_writable = vec![".github/workflows".into(), ".cargo".into()];
    let p = run_on(&w);
    assert!(p.can_write(s, &repo.join(".github/workflows/ci.yml")));
    assert!(p.can_write(s, &repo.join(".cargo/config.toml")));
    assert!(!p.read_only.contains(&repo.join(".cargo")));
    assert!(p.read_only.contains(&repo.join("rust-toolchain.toml")));
    assert!(!p.pin.contains(&repo.join(".github")), "{:?}", p.pin);

    // A run's green agent whose area holds them (a planner's `*.rs`): bound too, opt-out or
    // not; one whose area does not: Landlock alone, no bind.
    let mut w = wants(Profile::Green);
    w.session_writable = vec![".cargo".into()];
    w.write = vec!["*.rs".into()];
    let p = run_on(&w);
    assert!(p.read_only.contains(&repo.join(".cargo")), "{p:?}");
    assert!(!p.can_write(Profile::Green, &repo.join(".cargo/config.toml")));
    w.write = vec!["src/**".into()];
    let p = run_on(&w);
    assert!(!p.read_only.iter().any(|r| r.starts_with("/w/repo/.cargo")));
    assert!(!p.can_write(Profile::Green, &repo.join(".cargo/config.toml")));
}
