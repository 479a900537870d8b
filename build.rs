//! Build script: records the git commit Forge is built from, for `forge --version`. A build from
//! a source tree without `.git` (a tarball) or without `git` installed still works; its version
//! says no commit was recorded. Packagers can set `FORGE_BUILD_COMMIT` instead.

#[path = "build/version.rs"]
mod version;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/version.rs");
    println!("cargo:rerun-if-env-changed=FORGE_BUILD_COMMIT");
    let dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = std::env::var("FORGE_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| version::commit(&dir));
    for p in version::watched(&dir) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!(
        "cargo:rustc-env=FORGE_VERSION_SUFFIX={}",
        version::suffix(commit.as_deref())
    );
}
