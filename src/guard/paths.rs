//! Paths as the command would see them — relative to its folder, `~` expanded, `..` and
//! symlinks resolved — placed relative to the repository.

use std::path::{Component, Path, PathBuf};

/// Where a path lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The repository's top folder itself.
    RepoRoot,
    /// A folder that contains the repository (`..`, `~`, `/`).
    RepoAncestor,
    /// Inside `.git/`.
    Git,
    /// Inside `.forge/` (Forge's committed state and config).
    ForgeState,
    /// Inside `.tmp/.forge/` (Forge's local run state).
    ForgeRunState,
    /// An agent's own settings, where its hooks are wired (`.claude/`, `.codex/`, `.gemini/`).
    AgentConfig,
    /// Anywhere else inside the repository; the path relative to its root.
    InRepo(String),
    /// The system temp folder.
    Temp,
    /// A harmless device (`/dev/null`, `/dev/stdout`, …).
    NullDevice,
    /// Any other device: a disk, memory, a terminal of someone else.
    Device,
    Outside,
}

#[derive(Debug, Clone)]
pub struct Paths {
    /// The repository root, symlinks resolved.
    pub root: PathBuf,
    pub home: PathBuf,
    pub temp: Vec<PathBuf>,
    /// The one file in Forge's run state the agent now running may write (its
    /// `$FORGE_OUTPUT`, during `forge run`): placed as an ordinary repository file.
    pub run_output: Option<PathBuf>,
}

impl Paths {
    pub fn new(root: &Path, home: &Path) -> Paths {
        let mut temp = vec![PathBuf::from("/tmp"), PathBuf::from("/var/tmp")];
        if let Some(t) = std::env::var_os("TMPDIR") {
            temp.push(PathBuf::from(t));
        }
        let temp = temp.iter().map(|t| real(t)).collect();
        Paths {
            root: real(root),
            home: home.to_path_buf(),
            temp,
            run_output: None,
        }
    }

    /// The absolute, normalised path of `raw` for a command running in `cwd`. `~` is not
    /// expanded here: the shell parse already did where bash would (a quoted `"~"` is a folder
    /// named `~`).
    pub fn resolve(&self, raw: &str, cwd: &Path) -> PathBuf {
        let p = if Path::new(raw).is_absolute() {
            PathBuf::from(raw)
        } else {
            cwd.join(raw)
        };
        real(&normalize(&p))
    }

    pub fn place(&self, p: &Path) -> Place {
        if let Ok(rel) = p.strip_prefix(&self.root) {
            let rel_s = rel.to_string_lossy().replace('\\', "/");
            if rel_s.is_empty() {
                return Place::RepoRoot;
            }
            if self.run_output.as_deref() == Some(p) {
                return Place::InRepo(rel_s);
            }
            let first = rel
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            // `.tmp` holds Forge's run state: deleting it deletes that state.
            if self.root.join(".tmp/.forge").starts_with(p) {
                return Place::ForgeRunState;
            }
            return match first.as_deref() {
                Some(".git") => Place::Git,
                Some(".forge") => Place::ForgeState,
                Some(".claude") | Some(".codex") | Some(".gemini") => Place::AgentConfig,
                Some(".tmp") if rel.starts_with(".tmp/.forge") => Place::ForgeRunState,
                _ => Place::InRepo(rel_s),
            };
        }
        if self.root.starts_with(p) {
            return Place::RepoAncestor;
        }
        // The temp folder is scratch space, except next to the repository: a checkout under
        // /tmp must not make its sibling projects fair game.
        if let Some(t) = self
            .temp
            .iter()
            .find(|t| p.starts_with(t) && p != t.as_path())
        {
            let parent = self.root.parent();
            let parent_is_temp = parent.is_some_and(|pp| self.temp.iter().any(|t| t == pp));
            let beside_repo = !parent_is_temp && parent.is_some_and(|pp| p.starts_with(pp));
            // Another checkout under the temp folder is someone's work, not scratch space.
            let in_project = p
                .ancestors()
                .take_while(|a| a != t)
                .any(|a| a.join(".git").exists() || a.join(".forge").exists());
            if !beside_repo && !in_project {
                return Place::Temp;
            }
        }
        if let Ok(dev) = p.strip_prefix("/dev") {
            let d = dev.to_string_lossy();
            return if matches!(
                d.as_ref(),
                "null" | "stdout" | "stderr" | "tty" | "zero" | "random" | "urandom"
            ) || d.starts_with("fd/")
            {
                Place::NullDevice
            } else {
                Place::Device
            };
        }
        Place::Outside
    }
}

/// `..` and `.` removed without touching the disk.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    out
}

/// Resolves symlinks in the longest existing prefix of `p`, keeping the rest: a link inside the
/// repository that points outside is judged where it points.
pub fn real(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let mut tail = Vec::new();
    let mut cur = p.to_path_buf();
    while let Some(name) = cur.file_name().map(|n| n.to_os_string()) {
        tail.push(name);
        if !cur.pop() {
            break;
        }
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for n in tail.iter().rev() {
                out.push(n);
            }
            return out;
        }
    }
    p.to_path_buf()
}

/// Files whose contents are credentials. Returns what kind, for the message.
pub fn secret_kind(p: &Path, home: &Path) -> Option<&'static str> {
    let name = p.file_name()?.to_string_lossy().to_string();
    let lower = name.to_ascii_lowercase();
    if lower == ".env" || (lower.starts_with(".env.") && !is_env_template(&lower[5..])) {
        return Some("an environment file with secrets");
    }
    if lower.ends_with(".pem")
        || lower.ends_with(".p12")
        || lower.ends_with(".pfx")
        || lower.ends_with(".key")
    {
        return Some("a private key or certificate");
    }
    if lower.starts_with("id_rsa")
        || lower.starts_with("id_ed25519")
        || lower.starts_with("id_ecdsa")
        || lower.starts_with("id_dsa")
    {
        return Some("an SSH private key");
    }
    let in_home = |rel: &str| p.starts_with(home.join(rel));
    if in_home(".ssh") {
        return Some("SSH keys and config");
    }
    if in_home(".aws")
        || in_home(".config/gcloud")
        || in_home(".azure")
        || in_home(".kube")
        || in_home(".oci")
    {
        return Some("cloud credentials");
    }
    if in_home(".docker/config.json")
        || in_home(".netrc")
        || in_home(".npmrc")
        || in_home(".pypirc")
        || in_home(".git-credentials")
        || in_home(".gnupg")
        || in_home(".password-store")
        || in_home(".config/gh")
    {
        return Some("stored credentials");
    }
    let s = p.to_string_lossy();
    if matches!(
        s.as_ref(),
        "/etc/shadow" | "/etc/gshadow" | "/etc/sudoers" | "/etc/master.passwd"
    ) || s.starts_with("/etc/ssh/ssh_host_")
    {
        return Some("system credentials");
    }
    None
}

/// `.env.example`, `.env.sample.local`, `.env.example.bak`: templates, not secrets.
fn is_env_template(rest: &str) -> bool {
    rest.split('.').any(|part| {
        matches!(
            part,
            "example" | "sample" | "template" | "dist" | "defaults" | "schema" | "tpl"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
        let p = Paths::new(&root, Path::new("/home/u"));
        let cwd = root.join("src");
        let place = |raw: &str| p.place(&p.resolve(raw, &cwd));
        assert_eq!(place(".."), Place::RepoRoot);
        assert_eq!(place("../.."), Place::RepoAncestor);
        assert_eq!(place("/"), Place::RepoAncestor);
        assert_eq!(place("x.rs"), Place::InRepo("src/x.rs".into()));
        assert_eq!(place("../.git/config"), Place::Git);
        assert_eq!(
            place("../.forge/changes/c/verify-attempts.yaml"),
            Place::ForgeState
        );
        assert_eq!(place("../.tmp/.forge/runs"), Place::ForgeRunState);
        assert_eq!(
            place("../.tmp"),
            Place::ForgeRunState,
            "an ancestor of the run state"
        );
        assert_eq!(
            place("../../sibling-project"),
            Place::Outside,
            "beside the repository, even under /tmp"
        );
        assert_eq!(place("../.claude/settings.json"), Place::AgentConfig);
        assert_eq!(
            place("../etc-link/passwd"),
            Place::Outside,
            "symlink resolved"
        );
        assert_eq!(place("/tmp/scratch"), Place::Temp);
        assert_eq!(place("/var/tmp/x"), Place::Temp);
        assert_eq!(place("/var/tmp"), Place::Outside);
        assert_eq!(place("/dev/null"), Place::NullDevice);
        assert_eq!(place("/dev/sda"), Place::Device);
        assert_eq!(place("/home/u/.bashrc"), Place::Outside);
        assert_eq!(
            place("~"),
            Place::InRepo("src/~".into()),
            "a quoted ~ is a plain name"
        );
    }

    #[test]
    fn secrets() {
        let h = Path::new("/home/u");
        assert!(secret_kind(Path::new("/r/.env"), h).is_some());
        assert!(secret_kind(Path::new("/r/.env.production"), h).is_some());
        assert!(secret_kind(Path::new("/r/.env.example"), h).is_none());
        assert!(secret_kind(Path::new("/r/.env.example.bak"), h).is_none());
        assert!(secret_kind(Path::new("/home/u/.ssh/config"), h).is_some());
        assert!(secret_kind(Path::new("/home/u/.aws/credentials"), h).is_some());
        assert!(secret_kind(Path::new("/etc/shadow"), h).is_some());
        assert!(secret_kind(Path::new("/r/src/main.rs"), h).is_none());
        assert!(secret_kind(Path::new("/r/monkey"), h).is_none());
    }
}
