//! Paths as the command would see them — relative to its folder, `~` expanded, symlinks
//! (dangling ones too) and `..` resolved the way the kernel does — placed relative to the
//! repository, and which of them hold secrets. Judging is left to `rules/`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
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
    /// The system temp folder (scratch space), outside HOME and other checkouts.
    Temp,
    /// A harmless device (`/dev/null`, `/dev/stdout`, …).
    NullDevice,
    /// A network socket bash opens itself (`/dev/tcp/host/port`).
    Network,
    /// Any other device: a disk, memory, a terminal of someone else.
    Device,
    Outside,
}

#[derive(Debug, Clone)]
pub struct Paths {
    /// The repository root, symlinks resolved.
    pub root: PathBuf,
    /// HOME, symlinks resolved.
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
        let mut temp: Vec<PathBuf> = temp.iter().map(|t| real(t)).collect();
        temp.dedup();
        Paths {
            root: real(root),
            home: real(home),
            temp,
            run_output: None,
        }
    }

    /// The absolute path the kernel would open for `raw` in `cwd`. `~` is not expanded here:
    /// the shell parse already did where bash would (a quoted `"~"` is a folder named `~`).
    pub fn resolve(&self, raw: &str, cwd: &Path) -> PathBuf {
        let p = if Path::new(raw).is_absolute() {
            PathBuf::from(raw)
        } else {
            cwd.join(raw)
        };
        real(&p)
    }

    /// Whether `p` is HOME, inside it or one of its ancestors: never scratch space, wherever
    /// HOME lives (some CI runners put it under /tmp).
    pub fn touches_home(&self, p: &Path) -> bool {
        p.starts_with(&self.home) || self.home.starts_with(p)
    }

    pub fn place(&self, p: &Path) -> Place {
        if let Ok(rel) = p.strip_prefix(&self.root) {
            if self.run_output.as_deref() == Some(p) {
                return Place::InRepo(rel.to_string_lossy().replace('\\', "/"));
            }
            return place_in_tree(rel);
        }
        if self.root.starts_with(p) {
            return Place::RepoAncestor;
        }
        if self.is_scratch(p) {
            return Place::Temp;
        }
        if let Ok(dev) = p.strip_prefix("/dev") {
            let d = dev.to_string_lossy();
            if d.starts_with("tcp/") || d.starts_with("udp/") {
                return Place::Network;
            }
            return if matches!(
                d.as_ref(),
                "null" | "stdout" | "stderr" | "stdin" | "tty" | "zero" | "random" | "urandom"
            ) || d.starts_with("fd/")
            {
                Place::NullDevice
            } else {
                Place::Device
            };
        }
        Place::Outside
    }

    /// The temp folder is scratch space, except HOME (wherever it lives), next to the
    /// repository (a checkout under /tmp must not make its sibling projects fair game) and
    /// inside another checkout.
    fn is_scratch(&self, p: &Path) -> bool {
        let Some(t) = self
            .temp
            .iter()
            .find(|t| p.starts_with(t) && p != t.as_path())
        else {
            return false;
        };
        if self.touches_home(p) {
            return false;
        }
        let parent = self.root.parent();
        let parent_is_temp = parent.is_some_and(|pp| self.temp.iter().any(|t| t == pp));
        let beside_repo = !parent_is_temp && parent.is_some_and(|pp| p.starts_with(pp));
        let in_project = p
            .ancestors()
            .take_while(|a| a != t)
            .any(|a| exists(&a.join(".git")) || exists(&a.join(".forge")));
        !beside_repo && !in_project
    }
}

/// Where `rel` (relative to a working tree of the project, not empty for a path inside it) lands.
/// An agent's worktree (`.claude/worktrees/<name>`, [`AGENT_WORKTREES`]) is a working tree of
/// the project: what lies in it is placed as in the main tree — its own `.git` file, `.forge/`
/// and `.claude/` are control, its sources are the project's — and its relative path is the one
/// inside it, so the phase's file scope reads as in the main tree.
///
/// [`AGENT_WORKTREES`]: crate::sandbox::resolve::AGENT_WORKTREES
fn place_in_tree(rel: &Path) -> Place {
    let rel_s = rel.to_string_lossy().replace('\\', "/");
    if rel_s.is_empty() {
        return Place::RepoRoot;
    }
    // Control names in any case: on a case-insensitive file system `.GIT/config` is
    // `.git/config` (red team, round 13).
    let names: Vec<String> = rel
        .components()
        .map(|c| fold(&c.as_os_str().to_string_lossy()))
        .collect();
    for wt in crate::sandbox::resolve::AGENT_WORKTREES {
        let parts: Vec<&str> = wt.split('/').collect();
        if names.len() > parts.len() && names.iter().zip(&parts).all(|(n, p)| n == p) {
            let inner: PathBuf = rel.components().skip(parts.len() + 1).collect();
            return place_in_tree(&inner);
        }
    }
    let first = names.first().map(String::as_str);
    let second = names.get(1).map(String::as_str);
    // `.tmp` holds Forge's run state: deleting it deletes that state.
    if first == Some(".tmp") && second.is_none_or(|s| s == ".forge") {
        return Place::ForgeRunState;
    }
    match first {
        Some(".git") => Place::Git,
        Some(".forge") => Place::ForgeState,
        // What a client or an editor starts outside any sandbox (MCP servers, tasks run when
        // the folder opens): the sandbox's project control files, one list.
        Some(f)
            if crate::sandbox::resolve::PROJECT_CONTROL
                .iter()
                .any(|c| !c.contains('/') && *c != ".forge" && *c == f) =>
        {
            Place::AgentConfig
        }
        _ => Place::InRepo(rel_s),
    }
}

/// A file name as a case-insensitive file system compares it, for control and secret names:
/// case folded as Unicode's simple folding and Windows' upper-case table both fold it (there
/// `ı` is `I` and `ſ` is `S`, so `.gıt` is `.git`), without the code points HFS+ ignores in
/// names (zero-width joiners, direction marks, the byte-order mark: git's CVE-2014-9390,
/// `.g\u{200c}it` is `.git`) and the other default-ignorable ones older ext4 case folding
/// dropped. On macOS, Windows, WSL's `/mnt/c` or a case-folding ext4 folder (`chattr +F`) such a
/// spelling opens the control file itself, so Forge takes it as that file everywhere (red team,
/// round 13); on a case-sensitive disk a file really named `.GIT` is refused with it.
pub fn fold(name: &str) -> String {
    // Every ASCII letter folds to its lower case and no ASCII character is ignorable: the
    // common case needs no walk through Unicode's tables (the guard folds every path it meets).
    if name.is_ascii() {
        return name.to_ascii_lowercase();
    }
    name.chars()
        .filter(|&c| !is_ignorable(c))
        .flat_map(char::to_uppercase)
        .flat_map(char::to_lowercase)
        .collect()
}

/// Unicode's default-ignorable code points (DerivedCoreProperties.txt): invisible in a name.
fn is_ignorable(c: char) -> bool {
    matches!(
        c as u32,
        0xAD | 0x34F
            | 0x61C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// `path` is `dir` or below it, names compared as [`fold`] compares them.
pub fn within_folded(path: &Path, dir: &Path) -> bool {
    let mut p = path.components();
    dir.components().all(|d| {
        p.next().is_some_and(|c| {
            fold(&c.as_os_str().to_string_lossy()) == fold(&d.as_os_str().to_string_lossy())
        })
    })
}

/// The local paths a `file:` URL may name (`None` for any other value), every one of which is
/// judged (red team, round 13: `FILE://`, `file:/abs`, `file://localhost/abs`, `%2eenv` were not
/// taken as paths). Read first as Node's `url.fileURLToPath` reads it: the scheme in any case;
/// spaces and control characters around the URL and tabs and newlines inside it dropped; `\`
/// as `/`; the host (empty or `localhost` for a local file), then the path up to `?` or `#`,
/// percent-decoded. A URL with another host is no local file to Node, but Python's
/// `urlparse(u).path` keeps its path, so that is judged too; and so is what code that strips
/// the scheme by hand reads (`file://.git/config` as the relative `.git/config`). Used for
/// every tool and every command operand, read or written.
pub fn file_url_paths(value: &str) -> Option<Vec<String>> {
    let url: String = value
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, rest) = url.split_once(':')?;
    if !scheme.eq_ignore_ascii_case("file") {
        return None;
    }
    let slashed = rest.replace('\\', "/");
    let path = match slashed.strip_prefix("//") {
        // The host ends where the path, the query or the fragment begins.
        Some(after) => &after[after.find(['/', '?', '#']).unwrap_or(after.len())..],
        None => slashed.as_str(),
    };
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let node = if path.starts_with('/') {
        percent_decoded(path)
    } else {
        format!("/{}", percent_decoded(path))
    };
    let by_hand = rest.strip_prefix("//").unwrap_or(rest);
    let mut out = vec![node];
    for p in [by_hand.to_string(), percent_decoded(by_hand)] {
        if !p.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    Some(out)
}

/// `%2e` → `.`; a `%` not followed by two hex digits stays as it is (as in
/// `decodeURIComponent`'s lax cousins). Bytes that are not UTF-8 become U+FFFD.
pub(crate) fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `..` and `.` removed without touching the disk: the shell's logical view (`cd -L`), where
/// `..` at `/` stays at `/`. Never fails, unlike the sandbox's `resolve::lexical_no_climb`,
/// which refuses a path that climbs above its start.
pub fn logical(p: &Path) -> PathBuf {
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

/// Most links followed while resolving one path (the kernel's own limit is 40).
const MAX_LINKS: usize = 40;

/// The path the kernel would reach: symlinks followed — a dangling one too, to where a write
/// through it would land — and `..` applied after them, as the kernel does. Components that do
/// not exist are kept as they are. One `readlink` per component, as `realpath(3)` makes, and
/// none below a component that does not exist; within [`cached`], none for a path already
/// asked about.
pub fn real(p: &Path) -> PathBuf {
    if !p.is_absolute() {
        // Taken from the process's own folder when it exists there, as before.
        if let Ok(c) = p.canonicalize() {
            return c;
        }
        return logical(p);
    }
    if let Some(r) = with_cache(|c| c.real.get(p).cloned()).flatten() {
        return r;
    }
    let r = walk(p);
    with_cache(|c| c.real.insert(p.to_path_buf(), r.clone()));
    r
}

fn walk(p: &Path) -> PathBuf {
    let mut rest: VecDeque<OsString> = VecDeque::new();
    let mut out = PathBuf::from("/");
    let push_all = |rest: &mut VecDeque<OsString>, path: &Path, front: bool| {
        let parts: Vec<OsString> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some(OsString::from("..")),
                _ => None,
            })
            .collect();
        if front {
            for x in parts.into_iter().rev() {
                rest.push_front(x);
            }
        } else {
            rest.extend(parts);
        }
    };
    push_all(&mut rest, p, false);
    let mut links = 0;
    // `out` is known not to exist: nothing below it does, and nothing below it is a link.
    let mut missing = false;
    while let Some(name) = rest.pop_front() {
        if name == ".." {
            out.pop();
            missing = false;
            continue;
        }
        let candidate = out.join(&name);
        let link = if missing {
            Link::Missing
        } else {
            link_of(&candidate)
        };
        match link {
            Link::To(target) if links < MAX_LINKS => {
                links += 1;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                missing = false;
                push_all(&mut rest, &target, true);
            }
            Link::Missing => {
                missing = true;
                out = candidate;
            }
            _ => out = candidate,
        }
    }
    out
}

/// What one path component is to [`real`].
#[derive(Debug, Clone)]
enum Link {
    /// A symbolic link, and where it points.
    To(PathBuf),
    /// Not a link: something else, or a path the kernel would not look through (no permission).
    Not,
    /// Nothing there (`ENOENT`, or a component above it is no folder).
    Missing,
}

/// One `readlink(2)`: the target of a link, `EINVAL` for anything else that exists.
fn link_of(p: &Path) -> Link {
    if let Some(l) = with_cache(|c| c.links.get(p).cloned()).flatten() {
        return l;
    }
    let l = match std::fs::read_link(p) {
        Ok(t) => Link::To(t),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(nix::libc::ENOENT | nix::libc::ENOTDIR)
            ) =>
        {
            Link::Missing
        }
        Err(_) => Link::Not,
    };
    with_cache(|c| c.links.insert(p.to_path_buf(), l.clone()));
    l
}

/// What the file system answered within one judgment of a call: the guard asks about the same
/// folders and files over and over (every segment of a 300-command line resolves its paths
/// through the same folders, and several rules look at the same file), and one hook call judges
/// one moment of the disk. Keyed by the path asked about, as asked.
#[derive(Default)]
struct FsCache {
    real: HashMap<PathBuf, PathBuf>,
    links: HashMap<PathBuf, Link>,
    stat: HashMap<PathBuf, Option<std::fs::Metadata>>,
    lstat: HashMap<PathBuf, Option<std::fs::Metadata>>,
}

thread_local! {
    static FS_CACHE: RefCell<Option<FsCache>> = const { RefCell::new(None) };
}

fn with_cache<R>(f: impl FnOnce(&mut FsCache) -> R) -> Option<R> {
    FS_CACHE.with(|c| c.borrow_mut().as_mut().map(f))
}

/// Runs `f` with the file system's answers kept for its duration (see [`FsCache`]); nested
/// calls share the outermost one. Only for work that judges one moment: a long-running caller
/// outside it asks the disk every time.
pub fn cached<R>(f: impl FnOnce() -> R) -> R {
    struct Clear(bool);
    impl Drop for Clear {
        fn drop(&mut self) {
            if self.0 {
                FS_CACHE.with(|c| *c.borrow_mut() = None);
            }
        }
    }
    let outer = FS_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let outer = c.is_none();
        if outer {
            *c = Some(FsCache::default());
        }
        outer
    });
    let _clear = Clear(outer);
    f()
}

/// `std::fs::metadata` (links followed), answered once per path within [`cached`].
pub fn metadata(p: &Path) -> Option<std::fs::Metadata> {
    if let Some(m) = with_cache(|c| c.stat.get(p).cloned()).flatten() {
        return m;
    }
    let m = std::fs::metadata(p).ok();
    with_cache(|c| c.stat.insert(p.to_path_buf(), m.clone()));
    m
}

/// `std::fs::symlink_metadata` (the link itself), answered once per path within [`cached`].
pub fn symlink_metadata(p: &Path) -> Option<std::fs::Metadata> {
    if let Some(m) = with_cache(|c| c.lstat.get(p).cloned()).flatten() {
        return m;
    }
    let m = std::fs::symlink_metadata(p).ok();
    with_cache(|c| c.lstat.insert(p.to_path_buf(), m.clone()));
    m
}

/// What `Path::canonicalize` answers — the real path when the path exists, through links —
/// with the component answers kept within [`cached`].
pub fn canonical(p: &Path) -> Option<PathBuf> {
    metadata(p).map(|_| real(p))
}

/// `Path::exists`, through [`metadata`].
pub fn exists(p: &Path) -> bool {
    metadata(p).is_some()
}

/// `Path::is_file`, through [`metadata`].
pub fn is_file(p: &Path) -> bool {
    metadata(p).is_some_and(|m| m.is_file())
}

/// `Path::is_dir`, through [`metadata`].
pub fn is_dir(p: &Path) -> bool {
    metadata(p).is_some_and(|m| m.is_dir())
}

/// How many leading bytes of a file are read to tell a certificate from a private key.
const SNIFF: usize = 4096;

/// Files whose contents are credentials. Returns what kind, for the message. Public halves
/// (`*.pub`, certificates, `known_hosts`) are not secrets.
pub fn secret_kind(p: &Path, home: &Path) -> Option<&'static str> {
    // Names in any case, as a case-insensitive file system opens them (red team, round 13).
    let lower = fold(&p.file_name()?.to_string_lossy());
    if lower.ends_with(".pub") || lower.starts_with("known_hosts") || lower == "authorized_keys" {
        return None;
    }
    // Names that alone say a file holds credentials (the sandbox hides them in the project),
    // in any folder; a copy of a template (`.env.example.bak`) is readable.
    let template = lower
        .split_once('.')
        .and_then(|(_, r)| r.split_once('.'))
        .is_some_and(|(_, rest)| is_env_template(rest));
    if let Some(kind) = crate::secrets::file_name_kind(&lower)
        && !(template && crate::sandbox::resolve::is_env_secret(&lower))
    {
        return Some(kind);
    }
    if lower.ends_with(".pem") || lower.ends_with(".crt") || lower.ends_with(".cer") {
        return pem_kind(p, &lower);
    }
    if lower.ends_with(".key")
        || lower.ends_with(".p12")
        || lower.ends_with(".pfx")
        || lower.ends_with(".jks")
        || lower.ends_with(".keystore")
        || lower.ends_with(".kdbx")
        || lower.ends_with(".tfstate")
    {
        return Some("a private key, key store or state file with secrets");
    }
    // HOME in any case too: on a case-insensitive disk `/Users/ADA/.ssh` is `~/.ssh`.
    let folded = fold(&p.to_string_lossy());
    let lists = &*FOLDED_SECRETS;
    let home = home.to_string_lossy();
    let folded_home = fold(&home);
    if let Some(rel) = folded
        .strip_prefix(folded_home.trim_end_matches('/'))
        .and_then(|r| r.strip_prefix('/'))
        && let Some((_, kind)) = lists.home.iter().find(|(d, _)| at_or_below(rel, d))
    {
        return Some(kind);
    }
    let s = folded;
    if matches!(
        s.as_str(),
        "/etc/shadow" | "/etc/gshadow" | "/etc/sudoers" | "/etc/master.passwd"
    ) || s.starts_with("/etc/ssh/ssh_host_")
        || lists.system.iter().any(|d| at_or_below(&s, d))
    {
        return Some("system credentials");
    }
    // Raw disks and memory hold every file's bytes, secrets included.
    if let Some(dev) = s.strip_prefix("/dev/")
        && ([
            "sd", "nvme", "vd", "xvd", "hd", "mmcblk", "dm-", "md", "loop",
        ]
        .iter()
        .any(|d| dev.starts_with(d))
            || dev.starts_with("mapper/")
            || dev.starts_with("disk/")
            || matches!(dev, "mem" | "kmem" | "port"))
    {
        return Some("a raw disk or memory device (every file's bytes, secrets included)");
    }
    if let Some(rest) = s.strip_prefix("/proc/")
        && (rest.ends_with("/environ") || rest == "environ")
    {
        return Some("a process's environment (tokens and keys)");
    }
    None
}

/// `path` is `dir` or below it, as strings (both already folded).
fn at_or_below(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The credential locations [`secret_kind`] compares every path with, folded once per process
/// rather than once per path: under home ([`crate::secrets::HOME`], then the agents' own), and
/// of the system.
struct FoldedSecrets {
    home: Vec<(String, &'static str)>,
    system: Vec<String>,
}

static FOLDED_SECRETS: std::sync::LazyLock<FoldedSecrets> =
    std::sync::LazyLock::new(|| FoldedSecrets {
        home: crate::secrets::HOME
            .iter()
            .map(|(d, kind)| (fold(d), *kind))
            .chain(
                AGENT_CREDENTIALS
                    .iter()
                    .map(|d| (fold(d), "an AI agent's credentials")),
            )
            .collect(),
        system: crate::secrets::SYSTEM.iter().map(|d| fold(d)).collect(),
    });

/// A `.pem`/`.crt` is a secret when it holds a private key: read its first bytes when it
/// exists (no FIFO or device is opened); otherwise go by its name.
fn pem_kind(p: &Path, lower: &str) -> Option<&'static str> {
    use std::io::Read;
    if let Some(m) = metadata(p)
        && m.is_file()
        && let Ok(f) = std::fs::File::open(p)
    {
        let mut head = Vec::with_capacity(SNIFF);
        if f.take(SNIFF as u64).read_to_end(&mut head).is_ok() {
            let text = String::from_utf8_lossy(&head);
            return text.contains("PRIVATE KEY").then_some("a private key");
        }
    }
    ["key", "priv", "secret"]
        .iter()
        .any(|k| lower.contains(k))
        .then_some("a private key")
}

/// The AI agents' own credentials under home.
const AGENT_CREDENTIALS: [&str; 4] = [
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
];

/// A secret location of home or of the system (as [`pattern_reaches_secret`] knows them) at or
/// below `base`: what a search of the whole folder reads. Whether it exists is not asked — a
/// search of home or `/etc` is refused on any machine alike.
pub fn secret_below(base: &Path, home: &Path) -> Option<(String, &'static str)> {
    let in_home = crate::secrets::HOME.iter().copied().chain(
        AGENT_CREDENTIALS
            .iter()
            .map(|d| (*d, "an AI agent's credentials")),
    );
    in_home
        .map(|(d, kind)| (home.join(d), kind))
        .chain(
            crate::secrets::SYSTEM
                .iter()
                .map(|d| (PathBuf::from(d), "system credentials")),
        )
        .find(|(p, _)| within_folded(p, base))
        .map(|(p, kind)| (p.display().to_string(), kind))
}

/// [`secret_kind`]'s rules on names, as globs: what a file-selecting pattern must not be able
/// to match (a test below keeps the two in step). Names that end in a wildcard there (`.env.*`,
/// `id_rsa*`) are listed by their usual spellings here: as globs they would meet every
/// extension (`*.rs` matches `.env.rs`, `id_rsa.rs`); a name written out in a pattern is judged
/// by [`secret_kind`] itself.
const SECRET_NAMES: [&str; 43] = [
    ".env",
    ".env.local",
    ".env.*.local",
    ".env.production",
    ".env.prod",
    ".env.development",
    ".env.dev",
    ".env.test",
    ".env.staging",
    ".env.stage",
    ".env.ci",
    ".env.preview",
    ".env.backup",
    ".env.bak",
    ".env.old",
    ".envrc",
    ".envrc.local",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.tfstate",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    "id_dsa",
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    "*key*.pem",
    "*priv*.pem",
    "*secret*.pem",
    "*key*.crt",
    "*priv*.crt",
    "*secret*.crt",
    "*key*.cer",
    "*priv*.cer",
    "*secret*.cer",
];

/// What a content search inside the project leaves out: every name [`secret_kind`] may call a
/// secret (with SSH keys and stored logins, [`search_exclusion_globs`]), as ripgrep `--glob` exclusions (`!name`, a name without `/` at any depth), each
/// letter in either case as a case-insensitive disk opens it. Broader than [`SECRET_NAMES`] on
/// purpose — every `.env.*`, every `*.pem`: leaving a template or a certificate out of a search
/// costs nothing, and a private key named as a certificate is still a key. Red team, round 15:
/// `Grep {"pattern": "TOKEN"}` in the project printed a `.env` that `.gitignore` did not name.
pub const SEARCH_EXCLUSIONS: [&str; 14] = [
    ".env",
    ".env.*",
    ".envrc",
    ".envrc.*",
    "*.pem",
    "*.crt",
    "*.cer",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.tfstate",
];

/// [`SEARCH_EXCLUSIONS`], SSH keys (`id_rsa*`) and stored logins ([`crate::secrets`]) as
/// ripgrep globs: `!` and each ASCII letter as `[xX]`. None holds a space, comma or brace, so
/// Claude Code passes each to ripgrep whole.
pub fn search_exclusion_globs() -> impl Iterator<Item = String> {
    let names = SEARCH_EXCLUSIONS
        .iter()
        .map(|n| n.to_string())
        .chain(crate::secrets::SSH_KEYS.iter().map(|k| format!("{k}*")))
        .chain(crate::secrets::STORED_FILES.iter().map(|n| n.to_string()));
    names.map(|n| {
        let mut g = String::from("!");
        for c in n.chars() {
            if c.is_ascii_alphabetic() {
                g.push('[');
                g.push(c.to_ascii_lowercase());
                g.push(c.to_ascii_uppercase());
                g.push(']');
            } else {
                g.push(c);
            }
        }
        g
    })
}

/// The ripgrep exclusions of a file or folder of the project that `sandbox.secrets` names,
/// for a search Claude Code starts in `cwd`: ripgrep matches a glob against the path with its
/// own folder taken off the front, so `!/rel` from `cwd` when the secret is below it (red team,
/// round 15: after `cd config` the path was `prod-creds.yaml`), and `!**/rel` from the
/// project's root for a path matched whole (a file of the same path below another folder is
/// left out too). Glob characters are escaped; `None` when a path holds what Claude Code splits
/// a `glob` on (a space, a comma, braces), or the secret is not in the project.
pub fn exclusions_of(secret: &Path, root: &Path, cwd: &Path) -> Option<Vec<String>> {
    let glob = |prefix: &str, rel: &Path| -> Option<String> {
        let rel = rel.to_str()?;
        if rel.is_empty()
            || rel.contains(|c: char| crate::guard::tools::js_space(c) || ",{}".contains(c))
        {
            return None;
        }
        let mut g = String::from(prefix);
        for c in rel.chars() {
            if "*?[]!\\".contains(c) {
                g.push('[');
                g.push(c);
                g.push(']');
            } else {
                g.push(c);
            }
        }
        Some(g)
    };
    let mut out = vec![glob("!**/", secret.strip_prefix(root).ok()?)?];
    if let Ok(rel) = secret.strip_prefix(cwd) {
        out.push(glob("!/", rel)?);
    }
    Some(out)
}

/// Whether a content search's own globs leave `secret` out, with every exclusion
/// [`exclusions_of`] gives it, as the hook narrows Claude Code's Grep.
pub fn search_leaves_out(globs: &[String], secret: &Path, root: &Path, cwd: &Path) -> bool {
    exclusions_of(secret, root, cwd).is_some_and(|xs| xs.iter().all(|x| globs.contains(x)))
}

/// Whether a file-selecting pattern (`Grep.glob`, `Glob.pattern`, Gemini's `include` and
/// `read_many_files.paths`) taken in `base` can select a secret: a name [`secret_kind`] knows
/// (when the tool reads `contents`; a listing of names is no leak), or a path in a secret folder
/// under home or of the system. Read as ripgrep reads `--glob`: a pattern without `/` matches at
/// any depth, and a pattern that selects a file overrides hidden-file and `.gitignore` rules
/// (red team, round 14: `Grep {"glob": ".env"}` printed it). An absolute pattern is also taken
/// from `base`, as ripgrep anchors `/x`. Returns what it can select and its kind.
pub fn pattern_reaches_secret(
    base: &Path,
    pattern: &str,
    home: &Path,
    contents: bool,
) -> Option<(String, &'static str)> {
    use crate::glob::overlap::{Seg, braces, is_wild, literal, overlap, segments};
    let base_s = base.to_string_lossy().to_string();
    let home_s = home.to_string_lossy().to_string();
    let mut folders: Vec<(Vec<Seg>, String, &'static str)> = Vec::new();
    let home_entries = crate::secrets::HOME.iter().copied().chain(
        AGENT_CREDENTIALS
            .iter()
            .map(|d| (*d, "an AI agent's credentials")),
    );
    for (d, kind) in home_entries {
        let mut shape = literal(&home_s);
        shape.extend(literal(d));
        shape.push(Seg::Any);
        folders.push((shape, format!("{home_s}/{d}"), kind));
    }
    for d in crate::secrets::SYSTEM {
        let mut shape = literal(d);
        shape.push(Seg::Any);
        folders.push((shape, d.to_string(), "system credentials"));
    }
    for alt in braces(pattern.trim()) {
        if alt.starts_with('!') || alt.is_empty() {
            continue;
        }
        let rel = alt.trim_start_matches("./");
        let mut readings = Vec::new();
        let mut from_base = literal(&base_s);
        if !rel.trim_end_matches('/').contains('/') {
            from_base.push(Seg::Any);
        }
        from_base.extend(segments(rel));
        readings.push(from_base);
        if alt.starts_with('/') {
            readings.push(segments(&alt));
        }
        for segs in readings {
            for (shape, what, kind) in &folders {
                if overlap(&segs, shape) {
                    return Some((what.clone(), kind));
                }
            }
            if !contents {
                continue;
            }
            let Some(last) = segs.last() else { continue };
            // A name written out is judged as the name itself (`.env.example` is no secret).
            if !is_wild(last) {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                if let Some(kind) = secret_kind(&base.join(name), home) {
                    return Some((name.to_string(), kind));
                }
                continue;
            }
            for n in SECRET_NAMES {
                let mut shape = vec![Seg::Any];
                shape.extend(segments(n));
                if overlap(&segs, &shape) {
                    return Some((format!("files named `{n}`"), "a file with secrets"));
                }
            }
        }
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
        assert_eq!(place("../.mcp.json"), Place::AgentConfig);
        assert_eq!(place("../.vscode/tasks.json"), Place::AgentConfig);
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
        // An agent's worktree is a working tree of the project, its own control files control.
        assert_eq!(
            place("../.claude/worktrees/agent-a1/src/x.rs"),
            Place::InRepo("src/x.rs".into())
        );
        assert_eq!(place("../.claude/worktrees/agent-a1"), Place::RepoRoot);
        assert_eq!(place("../.claude/worktrees"), Place::AgentConfig);
        assert_eq!(place("../.claude/Worktrees/a/.git"), Place::Git);
        assert_eq!(
            place("../.claude/worktrees/a/.forge/config.yaml"),
            Place::ForgeState
        );
        assert_eq!(
            place("../.claude/worktrees/a/.claude/settings.json"),
            Place::AgentConfig
        );
        assert_eq!(
            place("../.claude/worktrees/a/.tmp/.forge/x"),
            Place::ForgeRunState
        );
        assert_eq!(
            place("../etc-link/passwd"),
            Place::Outside,
            "symlink resolved"
        );
        assert_eq!(
            place("../etc-link/.."),
            Place::RepoAncestor,
            "`..` after a link goes up from where the link points, as the kernel does"
        );
        assert_eq!(place("/tmp/scratch"), Place::Temp);
        assert_eq!(place("/var/tmp/x"), Place::Temp);
        assert_eq!(place("/var/tmp"), Place::Outside);
        assert_eq!(place("/dev/null"), Place::NullDevice);
        assert_eq!(place("/dev/sda"), Place::Device);
        assert_eq!(place("/dev/tcp/x.example/80"), Place::Network);
        assert_eq!(place("/home/u/.bashrc"), Place::Outside);
        assert_eq!(
            place("~"),
            Place::InRepo("src/~".into()),
            "a quoted ~ is a plain name"
        );
    }

    #[test]
    fn a_dangling_link_is_placed_where_a_write_would_land() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink("/home/u/.profile-new", root.join("notes.txt")).unwrap();
        std::os::unix::fs::symlink("notes.txt", root.join("chain")).unwrap();
        let p = Paths::new(&root, Path::new("/home/u"));
        assert_eq!(
            p.resolve("notes.txt", &root),
            Path::new("/home/u/.profile-new")
        );
        assert_eq!(p.resolve("chain", &root), Path::new("/home/u/.profile-new"));
        assert_eq!(p.place(&p.resolve("chain", &root)), Place::Outside);
    }

    /// Within one judgment each path is asked about once: what the disk said first stands
    /// (a file made since is not seen), and outside it every call asks again.
    #[test]
    fn answers_are_kept_within_one_judgment_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = real(dir.path());
        let (link, file) = (root.join("l"), root.join("f"));
        cached(|| {
            assert_eq!(real(&link), link);
            assert!(!exists(&file));
            std::os::unix::fs::symlink("/etc", &link).unwrap();
            std::fs::write(&file, "x").unwrap();
            assert_eq!(real(&link), link, "the first answer stands");
            assert!(!exists(&file), "the first answer stands");
            assert!(
                symlink_metadata(&file).is_some(),
                "a question not asked before"
            );
        });
        assert_eq!(real(&link), Path::new("/etc"));
        assert!(exists(&file) && is_file(&file) && !is_dir(&file));
    }

    /// The walk that replaced `canonicalize` reaches the same path for every path that exists,
    /// through links relative and absolute and `..` after a link.
    #[test]
    fn real_agrees_with_canonicalize_where_the_path_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::os::unix::fs::symlink("a/b", root.join("rel")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b/c"), root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../../../rel", root.join("a/b/c/up")).unwrap();
        for p in [
            "rel",
            "rel/c",
            "abs",
            "abs/..",
            "a/b/c/up/c",
            "rel/../b/./c",
            "a/b/c/up/..",
        ] {
            let p = root.join(p);
            assert_eq!(real(&p), p.canonicalize().unwrap(), "{}", p.display());
            assert_eq!(
                cached(|| real(&p)),
                p.canonicalize().unwrap(),
                "{}",
                p.display()
            );
            assert_eq!(canonical(&p), p.canonicalize().ok(), "{}", p.display());
        }
        for p in ["missing", "rel/missing", "a/b/c/up/missing/.."] {
            assert_eq!(canonical(&root.join(p)), None, "{p}");
        }
        assert_eq!(
            real(&root.join("rel/missing/x/../y")),
            root.join("a/b/missing/y"),
            "below a missing folder, names are kept and `..` still applies"
        );
    }

    #[test]
    fn ascii_names_fold_as_every_other_name() {
        for b in 0u8..128 {
            let s = format!("x{}Y", b as char);
            let slow: String = s
                .chars()
                .flat_map(char::to_uppercase)
                .flat_map(char::to_lowercase)
                .collect();
            assert_eq!(fold(&s), slow);
        }
    }

    #[test]
    fn a_home_under_the_temp_folder_is_not_scratch_space() {
        let p = Paths::new(Path::new("/work/repo"), Path::new("/tmp/runner/home"));
        assert_eq!(p.place(Path::new("/tmp/runner/home")), Place::Outside);
        assert_eq!(p.place(Path::new("/tmp/runner/home/.ssh")), Place::Outside);
        assert_eq!(p.place(Path::new("/tmp/runner")), Place::Outside);
        assert_eq!(p.place(Path::new("/tmp/app-test-1")), Place::Temp);
    }

    #[test]
    fn file_urls_are_read_as_node_and_laxer_parsers_read_them() {
        let paths = |u: &str| file_url_paths(u).unwrap_or_default();
        assert_eq!(paths("file:///r/.env"), ["/r/.env"]);
        assert_eq!(paths("FILE:///r/%2eenv"), ["/r/.env", "/r/%2eenv"]);
        assert_eq!(paths("file:/r/.env"), ["/r/.env"]);
        assert_eq!(
            paths("file://localhost/r/.env"),
            ["/r/.env", "localhost/r/.env"]
        );
        assert_eq!(paths(" file:///r/.e\tnv?x#y")[0], "/r/.env");
        assert_eq!(paths("file:\\\\\\r\\.env")[0], "/r/.env");
        // `\\` is `/`: a host `r` here, whose path Python's `urlparse` keeps.
        assert_eq!(paths("file:\\\\r\\.env")[0], "/.env");
        assert!(paths("file://.git/config").contains(&".git/config".to_string()));
        assert_eq!(paths("file:.env"), ["/.env", ".env"]);
        assert_eq!(paths("file:///r/%ff")[0], "/r/\u{fffd}");
        assert_eq!(paths("file:///r/100%")[0], "/r/100%");
        assert_eq!(file_url_paths("https://x/.env"), None);
        assert_eq!(file_url_paths("/r/file:x"), None);
        assert_eq!(file_url_paths("profile:x"), None);
    }

    #[test]
    fn names_are_folded_as_case_insensitive_file_systems_fold_them() {
        assert_eq!(fold(".GIT"), ".git");
        assert_eq!(fold(".g\u{0131}t"), ".git");
        assert_eq!(fold(".v\u{017f}code"), ".vscode");
        assert_eq!(fold(".g\u{200c}it"), ".git");
        assert_eq!(fold(".git\u{fe0f}"), ".git");
        assert_ne!(fold(".g\u{0130}t"), ".git");
        assert!(within_folded(
            Path::new("/r/.GITHOOKS/x"),
            Path::new("/r/.githooks")
        ));
        assert!(!within_folded(
            Path::new("/r/.githooksx"),
            Path::new("/r/.githooks")
        ));
    }

    #[test]
    fn secret_name_globs_name_secrets() {
        for n in SECRET_NAMES {
            let sample = n.replace('*', "x");
            assert!(
                secret_kind(&Path::new("/nonexistent").join(&sample), Path::new("/h")).is_some(),
                "{n}"
            );
        }
    }

    /// Read as ripgrep reads `--glob` (its own `ignore` crate's overrides): every name the
    /// secret rules know, in any case and at any depth, is left out, after a glob that selects
    /// everything; the project's code is not.
    #[test]
    fn search_exclusions_leave_out_every_secret_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = ignore::overrides::OverrideBuilder::new(dir.path());
        b.add("*").unwrap();
        for g in search_exclusion_globs() {
            assert!(!g.contains([' ', ',', '{', '}']), "{g}");
            b.add(&g).unwrap();
        }
        let o = b.build().unwrap();
        let left_out = |p: &str| o.matched(dir.path().join(p), false).is_ignore();
        for n in SECRET_NAMES {
            let sample = n.replace('*', "x");
            assert!(left_out(&sample), "{n}");
            assert!(
                left_out(&format!("deep/er/{}", sample.to_uppercase())),
                "{n}"
            );
        }
        for n in [
            ".env",
            ".env.production",
            ".envrc.local",
            "id_rsa",
            "k.tfstate",
        ] {
            assert!(secret_kind(&Path::new("/r").join(n), Path::new("/h")).is_some());
            assert!(left_out(&format!("config/{n}")), "{n}");
        }
        for n in [
            "src/main.rs",
            "README.md",
            "env.rs",
            "src/envelope.rs",
            "keys.rs",
        ] {
            assert!(!left_out(n), "{n}");
        }
    }

    /// Read as ripgrep reads them, with the search's own folder taken off the front of each
    /// path: from the secret's folder, from the root, from a folder beside it.
    #[test]
    fn the_exclusions_of_a_configured_secret_meet_it_from_any_folder() {
        let root = Path::new("/proj");
        let secret = Path::new("/proj/config/prod-creds.yaml");
        for cwd in ["/proj/config", "/proj", "/proj/src", "/elsewhere"] {
            let cwd = Path::new(cwd);
            let mut b = ignore::overrides::OverrideBuilder::new(cwd);
            b.add("*").unwrap();
            for x in exclusions_of(secret, root, cwd).unwrap() {
                b.add(&x).unwrap();
            }
            let o = b.build().unwrap();
            assert!(o.matched(secret, false).is_ignore(), "{}", cwd.display());
            assert!(
                !o.matched(Path::new("/proj/config/app.yaml"), false)
                    .is_ignore(),
                "{}",
                cwd.display()
            );
        }
        assert_eq!(
            exclusions_of(Path::new("/proj/a b/x"), root, root),
            None,
            "Claude Code would split it"
        );
    }

    #[test]
    fn secrets() {
        let h = Path::new("/home/u");
        let secret = |p: &str| secret_kind(Path::new(p), h).is_some();
        assert!(secret("/r/.env"));
        assert!(secret("/r/.env.production"));
        assert!(!secret("/r/.env.example"));
        assert!(!secret("/r/.env.example.bak"));
        assert!(secret("/r/.envrc"));
        assert!(secret("/r/api/.envrc.local"));
        assert!(!secret("/r/.envrc.example"));
        assert!(secret("/r/.ENV"));
        assert!(secret("/home/u/.SSH/config"));
        assert!(secret("/home/u/.ssh/id_rsa"));
        assert!(!secret("/home/u/.ssh/id_rsa.pub"));
        assert!(!secret("/home/u/.ssh/known_hosts"));
        assert!(!secret("/r/id_ed25519.pub"));
        assert!(secret("/home/u/.aws/credentials"));
        assert!(secret("/home/u/.claude/.credentials.json"));
        assert!(secret("/home/u/.cargo/credentials.toml"));
        assert!(secret("/home/u/.pgpass"));
        assert!(secret("/r/.pgpass"));
        assert!(secret("/proc/self/environ"));
        assert!(secret("/proc/1234/environ"));
        assert!(secret("/etc/shadow"));
        assert!(!secret("/r/src/main.rs"));
        assert!(!secret("/r/monkey"));
        // A certificate is public; a key is not. Missing files go by name.
        assert!(!secret("/nonexistent/cert.pem"));
        assert!(!secret("/nonexistent/fullchain.pem"));
        assert!(secret("/nonexistent/privkey.pem"));
        assert!(secret("/nonexistent/server.key"));
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("server.pem");
        std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nx\n").unwrap();
        assert!(secret_kind(&cert, h).is_none());
        std::fs::write(&cert, "-----BEGIN RSA PRIVATE KEY-----\nx\n").unwrap();
        assert!(secret_kind(&cert, h).is_some());
    }
}
