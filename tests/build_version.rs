//! `forge --version` names the commit it was built from, and a build from a source tree without
//! git still works (the build script's fallback, tested on a real folder without a repository).

#[path = "../build/version.rs"]
mod version;

mod common;

#[test]
fn a_checkout_records_its_commit_and_a_tree_without_git_says_so() {
    let r = common::Repo::bare();
    r.write("a.txt", "a\n");
    r.git(&["add", "a.txt"]);
    r.git(&["commit", "-qm", "first"]);
    let c = version::commit(r.path()).expect("a commit in a git checkout");
    let (hash, date) = c.split_once(' ').unwrap();
    assert_eq!(hash.len(), 10, "{c}");
    assert!(hash.chars().all(|x| x.is_ascii_hexdigit()), "{c}");
    assert_eq!(date.len(), 10, "{c}");
    assert_eq!(version::suffix(Some(&c)), format!(" ({c})"));
    assert!(!version::watched(r.path()).is_empty());
    // A tarball: no `.git`.
    let tarball = tempfile::tempdir().unwrap();
    assert_eq!(version::commit(tarball.path()), None);
    assert!(version::suffix(None).contains("no commit recorded"));
    // A source tree inside someone else's repository does not take that repository's commit.
    std::fs::create_dir_all(r.path().join("vendor/forge")).unwrap();
    assert_eq!(version::commit(&r.path().join("vendor/forge")), None);
}

#[test]
fn the_binary_reports_its_version_and_commit() {
    let o = std::process::Command::new(common::forge_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(o.status.success());
    let v = String::from_utf8_lossy(&o.stdout);
    let want = format!("forge {} (", env!("CARGO_PKG_VERSION"));
    assert!(v.starts_with(&want) && v.trim_end().ends_with(')'), "{v}");
    // This suite runs from a git checkout (CI clones one): the commit is the checkout's HEAD.
    if let Some(c) = version::commit(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))) {
        let head = c.split(' ').next().unwrap();
        assert!(
            v.contains(head) || std::env::var_os("FORGE_BUILD_COMMIT").is_some(),
            "{v} vs HEAD {c}"
        );
    }
}
