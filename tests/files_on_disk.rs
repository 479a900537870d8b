//! The files Forge creates or rewrites in a person's checkout: readable by the team (the umask
//! decides, as for any tool), and a rewritten file keeps its mode and, for agent settings, its
//! bytes.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use common::{Repo, forge_bin};

/// `forge args…` in `r` under `umask`.
fn forge_with_umask(r: &Repo, umask: &str, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(forge_bin())
        .args(args)
        .current_dir(r.path())
        .output()
        .unwrap()
}

fn mode(r: &Repo, rel: &str) -> u32 {
    std::fs::metadata(r.path().join(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(r: &Repo, rel: &str, mode: u32) {
    std::fs::set_permissions(r.path().join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn created_files_follow_the_umask_and_rewritten_files_keep_their_mode() {
    let r = Repo::bare();
    r.write("Cargo.toml", "[package]\nname = \"x\"\n");
    r.write(".gitignore", "/target\n");
    chmod(&r, ".gitignore", 0o664);
    let o = forge_with_umask(&r, "022", &["init"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&r, ".forge/config.yaml"), 0o644);
    assert_eq!(
        mode(&r, ".gitignore"),
        0o664,
        "a rewritten file keeps its mode"
    );
    assert!(r.read(".gitignore").contains(".tmp/.forge/"));

    let o = forge_with_umask(
        &r,
        "022",
        &["change", "new", "checkout", "--scenario", "pays"],
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&r, ".forge/changes/checkout/spec.md"), 0o644);

    // A stricter umask is honoured too.
    let o = forge_with_umask(&r, "077", &["change", "new", "private"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&r, ".forge/changes/private/spec.md"), 0o600);

    // Agent settings: mode and bytes survive install then uninstall.
    let original = "{\"permissions\":{\"allow\":[\"Bash(npm test)\"]},\"model\":\"opus\"}";
    r.write(".claude/settings.json", original);
    chmod(&r, ".claude/settings.json", 0o640);
    let o = forge_with_umask(&r, "022", &["hooks", "install", "claude", "--bin", "forge"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&r, ".claude/settings.json"), 0o640);
    assert!(
        r.read(".claude/settings.json")
            .contains("forge hook claude stop")
    );
    let o = forge_with_umask(&r, "022", &["hooks", "uninstall", "claude"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(mode(&r, ".claude/settings.json"), 0o640);
    assert_eq!(r.read(".claude/settings.json"), original);
}
