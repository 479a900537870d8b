//! The `sandbox:` section of `.forge/config.yaml`. A leaf: it imports only serde, std, the list
//! of tool configs `session_writable` may name (plain data in `resolve.rs`) and the profiles'
//! names (`profile.rs`), so `src/config.rs` composes it and nothing here reaches back.

use serde::{Deserialize, Serialize};

/// Whether Forge wraps commands in the kernel sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every profile must be fully enforced; a kernel that cannot is a setup error.
    Require,
    /// Use what the kernel offers and say once what is missing.
    #[default]
    Auto,
    /// Never sandbox (containment of process lifetimes still applies where asked).
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Require => "require",
            Mode::Auto => "auto",
            Mode::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "require" => Some(Mode::Require),
            "auto" => Some(Mode::Auto),
            "off" => Some(Mode::Off),
            _ => None,
        }
    }
}

/// What a profile's commands may reach on the network.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Net {
    /// A network namespace of the sandbox's own, with only its loopback: a server the command
    /// starts on `127.0.0.1` works, nothing outside is reachable.
    Loopback,
    /// The machine's network.
    Open,
    /// Its own loopback, and these hosts (`api.example.com`, `*.example.com`, either with
    /// `:port`) through Forge's egress proxy, which runs outside the sandbox and records every
    /// connection, allowed or refused, in the timeline (`sandbox/egress.rs`).
    Allow(Vec<String>),
}

impl Net {
    /// Whether commands get a network namespace of their own.
    pub fn isolated(&self) -> bool {
        *self != Net::Open
    }
}

/// `sandbox.network`, per profile. `check` runs the agents' code (tests, the clean room) and
/// needs no network; the others keep the machine's unless the person gives them an allowlist:
/// agents call their model's API (a client's login, telemetry and update hosts are not all
/// documented), and a session installs packages from wherever the project's tools say.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    #[serde(default = "loopback")]
    pub check: Net,
    #[serde(default = "open")]
    pub session: Net,
    #[serde(default = "open")]
    pub red: Net,
    #[serde(default = "open")]
    pub green: Net,
    #[serde(default = "open")]
    pub review: Net,
}

fn loopback() -> Net {
    Net::Loopback
}

fn open() -> Net {
    Net::Open
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            check: loopback(),
            session: open(),
            red: open(),
            green: open(),
            review: open(),
        }
    }
}

impl NetworkConfig {
    pub fn of(&self, profile: super::Profile) -> &Net {
        use super::Profile;
        match profile {
            Profile::Check => &self.check,
            Profile::Session => &self.session,
            Profile::Red => &self.red,
            Profile::Green => &self.green,
            Profile::Review => &self.review,
        }
    }

    /// Whether `profile` reaches nothing but its own loopback.
    pub fn loopback_only(&self, profile: super::Profile) -> bool {
        *self.of(profile) == Net::Loopback
    }

    /// The parsed allowlist of `profile`, `None` when it has none (loopback or open).
    pub fn allow(&self, profile: super::Profile) -> Option<Vec<super::egress::Pattern>> {
        match self.of(profile) {
            Net::Allow(list) => Some(
                list.iter()
                    .filter_map(|p| super::egress::Pattern::parse(p).ok())
                    .collect(),
            ),
            _ => None,
        }
    }

    fn validate(&self) -> Result<(), String> {
        for p in super::Profile::ALL {
            if let Net::Allow(list) = self.of(p) {
                for (i, h) in list.iter().enumerate() {
                    super::egress::Pattern::parse(h)
                        .map_err(|e| format!("`sandbox.network.{}.allow[{i}]`: {e}", p.as_str()))?;
                }
            }
        }
        Ok(())
    }
}

/// Folders each agent client writes its own state to (sessions, transcripts, settings caches).
/// `~` is the user's home. A red, green or review sandbox running that client may write them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsConfig {
    #[serde(default = "default_claude")]
    pub claude: Vec<String>,
    #[serde(default = "default_codex")]
    pub codex: Vec<String>,
    #[serde(default = "default_gemini")]
    pub gemini: Vec<String>,
}

impl Default for ClientsConfig {
    fn default() -> Self {
        ClientsConfig {
            claude: default_claude(),
            codex: default_codex(),
            gemini: default_gemini(),
        }
    }
}

fn default_claude() -> Vec<String> {
    ["~/.claude", "~/.claude.json", "~/.claude.json.backup"]
        .map(String::from)
        .to_vec()
}

fn default_codex() -> Vec<String> {
    vec!["~/.codex".into()]
}

fn default_gemini() -> Vec<String> {
    vec!["~/.gemini".into()]
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    #[serde(default)]
    pub mode: Mode,
    /// Build and package caches the `check` and `session` profiles may write (`~` is home).
    /// A writable cache can be poisoned by the code that writes it: list only what builds need.
    #[serde(default = "default_caches")]
    pub caches: Vec<String>,
    #[serde(default)]
    pub clients: ClientsConfig,
    /// More files or folders no profile may read, added to the built-in list of secrets.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Unix sockets (or folders of them) the profiles may connect to. Every other socket a
    /// program listens on at a path outside the project is covered: a daemon's socket (tmux,
    /// an editor's server, Docker, an SSH agent) runs what it is sent outside the sandbox.
    #[serde(default)]
    pub sockets: Vec<String>,
    /// More files or folders every profile may read (`~` is home): home is readable only where
    /// a toolchain's table row (`sandbox/allow.rs`) or this list grants it — a sibling project a
    /// build reads (`../lib` as a path dependency), a tool's settings.
    #[serde(default)]
    pub read: Vec<String>,
    /// More environment variables every sandboxed command gets: a name, or a prefix ending in
    /// `*` (`MYAPP_*`). The rest of the caller's environment is granted by name too; a value
    /// that is a credential is removed whatever grants it.
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub network: NetworkConfig,
    /// A live session's commands join one mount namespace, kept between them, instead of
    /// each making its own (docs/sandbox.md, "One namespace per session").
    #[serde(default = "yes")]
    pub reuse: bool,
    /// Tool configs ([`TOOL_CONFIG`]: `.cargo`, `.github/workflows`, …) the `session` profile
    /// may change, by their names there. Every other one stays read-only to a session's
    /// commands: each makes code run on the person's next command, outside any sandbox.
    ///
    /// [`TOOL_CONFIG`]: super::resolve::TOOL_CONFIG
    #[serde(default)]
    pub session_writable: Vec<String>,
}

fn yes() -> bool {
    true
}

/// What no profile may read besides what `sandbox.secrets` names, from the project's root:
/// Forge's undo journal (`src/undo/`) keeps the bytes of every file of the project — a `.env`
/// among them — under names that say nothing of what they hold.
pub const FORGE_SECRETS: &[&str] = &[".tmp/.forge/undo"];

impl SandboxConfig {
    /// The secrets a project's sandbox and its guard hide: Forge's own, then the configured ones.
    pub fn all_secrets(&self) -> impl Iterator<Item = &str> {
        FORGE_SECRETS
            .iter()
            .copied()
            .chain(self.secrets.iter().map(String::as_str))
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: Mode::default(),
            caches: default_caches(),
            clients: ClientsConfig::default(),
            secrets: Vec::new(),
            sockets: Vec::new(),
            read: Vec::new(),
            env: Vec::new(),
            network: NetworkConfig::default(),
            reuse: true,
            session_writable: Vec::new(),
        }
    }
}

/// The package caches of the toolchains `forge init` detects. Cargo takes its package lock in
/// `~/.cargo` even for an offline build, so those two files are here too.
fn default_caches() -> Vec<String> {
    [
        "~/.cargo/registry",
        "~/.cargo/git",
        "~/.cargo/.package-cache",
        "~/.cargo/.package-cache-mutate",
        "~/.cargo/.global-cache",
        "~/.npm",
        "~/.cache/pip",
        "~/.cache/go-build",
        "~/go/pkg/mod",
    ]
    .map(String::from)
    .to_vec()
}

impl SandboxConfig {
    /// Checks what serde cannot: paths are absolute or start with `~/` (a secret may also be
    /// named from the project's root: `config/prod-creds.yaml`), allowed hosts are hosts.
    pub fn validate(&self) -> Result<(), String> {
        self.network.validate()?;
        if let Some((i, p)) = self
            .secrets
            .iter()
            .enumerate()
            .find(|(_, p)| p.trim().is_empty())
        {
            return Err(format!(
                "`sandbox.secrets[{i}]` ({p:?}) is empty: name a file or folder"
            ));
        }
        let lists = [
            ("sandbox.caches", &self.caches),
            ("sandbox.clients.claude", &self.clients.claude),
            ("sandbox.clients.codex", &self.clients.codex),
            ("sandbox.clients.gemini", &self.clients.gemini),
            ("sandbox.sockets", &self.sockets),
            ("sandbox.read", &self.read),
        ];
        for (key, list) in lists {
            for (i, p) in list.iter().enumerate() {
                if !(p.starts_with('/') || p.starts_with("~/")) {
                    return Err(format!(
                        "`{key}[{i}]` ({p}) must be an absolute path or start with `~/`"
                    ));
                }
            }
        }
        for (i, e) in self.env.iter().enumerate() {
            let name = e.strip_suffix('*').unwrap_or(e);
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`sandbox.env[{i}]` ({e:?}) must be a variable's name (`MYAPP_URL`) or a prefix ending in `*` (`MYAPP_*`)"
                ));
            }
        }
        for (i, p) in self.session_writable.iter().enumerate() {
            if !super::resolve::TOOL_CONFIG.contains(&p.as_str()) {
                let why = if p.starts_with('/') || p.starts_with('~') {
                    "is not relative to the project"
                } else if p.split('/').any(|c| c == "..") {
                    "leaves the project"
                } else {
                    "is not one of the tool configs a session keeps read-only"
                };
                return Err(format!(
                    "`sandbox.session_writable[{i}]` ({p:?}) {why}: name one of {}, as written there",
                    super::resolve::TOOL_CONFIG
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_strict_keys() {
        let c: SandboxConfig = serde_saphyr::from_str("mode: require\n").unwrap();
        assert_eq!(c.mode, Mode::Require);
        assert!(c.caches.contains(&"~/.cargo/registry".to_string()));
        assert_eq!(c.clients.codex, vec!["~/.codex".to_string()]);
        assert!(serde_saphyr::from_str::<SandboxConfig>("mdoe: off\n").is_err());
        assert!(serde_saphyr::from_str::<SandboxConfig>("mode: sometimes\n").is_err());
        let c: SandboxConfig = serde_saphyr::from_str("caches: [relative/x]\n").unwrap();
        let e = c.validate().unwrap_err();
        assert!(e.contains("sandbox.caches[0]"), "{e}");
        let c: SandboxConfig = serde_saphyr::from_str("read: [work/lib]\n").unwrap();
        let e = c.validate().unwrap_err();
        assert!(e.contains("sandbox.read[0]"), "{e}");
        let c: SandboxConfig = serde_saphyr::from_str("env: [MYAPP_*, '*']\n").unwrap();
        let e = c.validate().unwrap_err();
        assert!(e.contains("sandbox.env[1]"), "{e}");
        let c: SandboxConfig = serde_saphyr::from_str("env: [MYAPP_*, STRIPE_MODE]\n").unwrap();
        assert!(c.network.loopback_only(crate::sandbox::Profile::Check));
        assert!(!c.network.loopback_only(crate::sandbox::Profile::Session));
        let c: SandboxConfig = serde_saphyr::from_str("network: {check: open}\n").unwrap();
        assert!(!c.network.loopback_only(crate::sandbox::Profile::Check));
        assert!(serde_saphyr::from_str::<SandboxConfig>("network: {check: proxy}\n").is_err());
        assert!(serde_saphyr::from_str::<SandboxConfig>("network: {sesion: open}\n").is_err());
        assert!(c.validate().is_ok());
    }

    #[test]
    fn each_profile_takes_loopback_open_or_an_allowlist() {
        use crate::sandbox::Profile;
        let d = SandboxConfig::default().network;
        assert_eq!(d.of(Profile::Check), &Net::Loopback);
        for p in [
            Profile::Session,
            Profile::Red,
            Profile::Green,
            Profile::Review,
        ] {
            assert_eq!(d.of(p), &Net::Open, "{p:?}");
            assert!(d.allow(p).is_none());
        }
        let c: SandboxConfig = serde_saphyr::from_str(
            "network:\n  check: {allow: [127.0.0.1]}\n  session: {allow: [crates.io, '*.crates.io']}\n  red: loopback\n",
        )
        .unwrap();
        assert_eq!(c.validate(), Ok(()));
        assert!(c.network.of(Profile::Check).isolated());
        assert!(!c.network.loopback_only(Profile::Check));
        assert!(c.network.loopback_only(Profile::Red));
        assert_eq!(c.network.allow(Profile::Session).unwrap().len(), 2);
        assert!(c.network.allow(Profile::Red).is_none());
        assert!(!c.network.of(Profile::Green).isolated());
        let c: SandboxConfig =
            serde_saphyr::from_str("network: {green: {allow: [pypi.org, 'https://x.org']}}\n")
                .unwrap();
        let e = c.validate().unwrap_err();
        assert!(e.contains("`sandbox.network.green.allow[1]`"), "{e}");
        assert!(e.contains("https://x.org"), "{e}");
        assert!(
            serde_saphyr::from_str::<SandboxConfig>("network: {check: {deny: [x]}}\n").is_err()
        );
    }

    #[test]
    fn session_writable_names_tool_configs_only() {
        let c: SandboxConfig =
            serde_saphyr::from_str("session_writable: [.github/workflows, .cargo]\n").unwrap();
        assert_eq!(c.session_writable, [".github/workflows", ".cargo"]);
        assert_eq!(c.validate(), Ok(()));
        assert!(SandboxConfig::default().session_writable.is_empty());
        for (bad, why) in [
            ("/etc/passwd", "is not relative to the project"),
            ("~/.cargo", "is not relative to the project"),
            ("../x/.cargo", "leaves the project"),
            ("src", "is not one of the tool configs"),
            (".cargo/config.toml", "is not one of the tool configs"),
        ] {
            let c: SandboxConfig =
                serde_saphyr::from_str(&format!("session_writable: [.npmrc, {bad:?}]\n")).unwrap();
            let e = c.validate().unwrap_err();
            assert!(e.contains("`sandbox.session_writable[1]`"), "{bad}: {e}");
            assert!(e.contains(why), "{bad}: {e}");
            assert!(
                e.contains("`.cargo`") && e.contains("`rust-toolchain.toml`"),
                "{e}"
            );
        }
    }

    /// The journal `src/undo/` keeps is the folder hidden as Forge's own secret.
    #[test]
    fn the_undo_journal_is_forges_own_secret() {
        assert_eq!(FORGE_SECRETS, [format!("{}/undo", crate::repo::TMP_DIR)]);
        let c = SandboxConfig {
            secrets: vec!["ops/vault.yaml".into()],
            ..SandboxConfig::default()
        };
        assert_eq!(
            c.all_secrets().collect::<Vec<_>>(),
            [".tmp/.forge/undo", "ops/vault.yaml"]
        );
    }
}
