//! The profile table as data: what each profile may read and write, by *place* (the project,
//! Forge's control files, the writable areas, TMPDIR, secrets, …). `resolve.rs` turns places into
//! absolute paths; the kernel ruleset, the guard's explanations and the table in
//! `docs/sandbox.md` are all derived from [`access`], so they cannot disagree.
//!
//! Nothing here touches the file system or the kernel.

use serde::{Deserialize, Serialize};

/// Who a sandbox is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// A `forge run` red agent: writes only the slice's test areas.
    Red,
    /// A `forge run` green agent: writes only the slice's code areas.
    Green,
    /// The planner, the verifier and the coverage reviewer: write only their answer.
    Review,
    /// A check (focused command, related checks) in its own checkout.
    Check,
    /// A command an interactive agent runs (the PreToolUse hook's rewrite).
    Session,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::Red,
        Profile::Green,
        Profile::Review,
        Profile::Check,
        Profile::Session,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Red => "red",
            Profile::Green => "green",
            Profile::Review => "review",
            Profile::Check => "check",
            Profile::Session => "session",
        }
    }

    pub fn parse(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// Profiles that run an agent client, which needs its own state folders and credential.
    pub fn runs_client(self) -> bool {
        matches!(self, Profile::Red | Profile::Green | Profile::Review)
    }
}

/// A kind of place on the machine. When a path belongs to several, the most specific wins, in
/// the order of [`Place::ALL`] (secrets first, the rest of the system last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Place {
    /// `~/.ssh`, `~/.aws`, cloud and registry credentials, other agents' credentials,
    /// `/etc/shadow`, host keys, the project's files named as credentials.
    Secrets,
    /// The credential file of the agent client this sandbox runs (red, green, review).
    OwnCredential,
    /// Forge's and the agents' control files: `.forge/`, `.tmp/.forge/`, `.git/config`,
    /// `.git/hooks/`, `.git/info/`, `.git/modules/`, `.claude/`, `.codex/`, `.gemini/`.
    Control,
    /// The answer file the caller names (`--answer`).
    Answer,
    /// The writable areas the caller names (`--write`): a slice's test or code areas, a check's
    /// checkout.
    Areas,
    /// The private temporary folder (`--tmpdir`; `TMPDIR` is set to it).
    Tmpdir,
    /// Every other sandbox's folders (`<tmp>/forge-sandbox-<uid>`): other projects' and
    /// profiles' private TMPDIRs.
    Sandboxes,
    /// The state folders of the agent client this sandbox runs (`sandbox.clients`).
    ClientState,
    /// Build and package caches (`sandbox.caches`).
    Caches,
    /// What under home ordinary commands read: toolchains, their caches and settings
    /// (`sandbox/allow.rs`), and what `sandbox.read` adds.
    Toolchains,
    /// The rest of the repository's git folder: objects, refs, index, logs, HEAD.
    GitInternals,
    /// The repository's working tree.
    Project,
    /// `/dev/null`, `/dev/zero`, `/dev/full`, the terminal, `/dev/shm` (the sandbox's own).
    Devices,
    /// Other device files (disks, memory): never opened.
    RawDevices,
    /// The user's home folder, less the places above.
    Home,
    /// Everything else on the machine.
    System,
}

impl Place {
    pub const ALL: [Place; 16] = [
        Place::Secrets,
        Place::OwnCredential,
        Place::Control,
        Place::Answer,
        Place::Areas,
        Place::Tmpdir,
        Place::Sandboxes,
        Place::ClientState,
        Place::Caches,
        Place::Toolchains,
        Place::GitInternals,
        Place::Project,
        Place::Devices,
        Place::RawDevices,
        Place::Home,
        Place::System,
    ];

    /// How the table in `docs/sandbox.md` names the place.
    pub fn describe(self) -> &'static str {
        match self {
            Place::Secrets => {
                "secrets (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.kube`, `~/.docker/config.json`, `~/.netrc`, `~/.git-credentials`, `~/.config/git/credentials`, `~/.pgpass`, `~/.config/gcloud`, cargo/npm/pypi/maven/container-registry credentials, agents' credentials, shell histories, local servers' tokens (Claude Code's IDE connections, Jupyter's runtime files), `/etc/shadow`, host keys, the secrets containers and services get at run time (`/run/secrets`, `/run/credentials`), files named as credentials anywhere in the project (`.env*`, direnv's `.envrc*`, `.netrc`, `.pgpass`, `.git-credentials`, `.my.cnf`, `.vault-token`, SSH private keys) but in `node_modules/`, `target/`, virtual environments and `.git/`; the list is `src/secrets.rs`, shared with the guard)"
            }
            Place::OwnCredential => "the credential file of the client the sandbox runs",
            Place::Control => {
                "control files: `.forge/`, `.tmp/.forge/`, `.git/config`, `.git/hooks/`, `.git/info/`, `.git/modules/`, `.claude/` (but not the agents' worktrees in `.claude/worktrees/`: each is a working tree of the project, writable, with its own `.forge/`, `.tmp/.forge/`, `.claude/` and `.git` file read-only), `.codex/`, `.gemini/`; the tool configs your next command reads, where they exist (`.cargo/`, `rust-toolchain*`, `.npmrc`, `.yarnrc*`, `.pnpmfile.cjs`, `.mise.toml`, `.tool-versions`, `lefthook.yml`, `.pre-commit-config.yaml`, `.github/workflows/`, `.gitlab-ci.yml`, `.envrc`: Tool configs; in `session` but those `sandbox.session_writable` names); the clients' settings, instructions and hooks under home (`~/.claude/settings.json`, `~/.codex/config.toml`, `~/.gemini/settings.json`, …; in `session` the settings files are hidden, as secrets: they can hold the clients' keys)"
            }
            Place::Answer => "the answer file (`--answer`)",
            Place::Areas => "the writable areas (`--write`)",
            Place::Tmpdir => "the private TMPDIR (`--tmpdir`)",
            Place::Sandboxes => {
                "other sandboxes' private TMPDIRs (`<tmp>/forge-sandbox-<uid>`: other projects', other profiles')"
            }
            Place::ClientState => "the client's state folders (`sandbox.clients`)",
            Place::Caches => "build caches (`sandbox.caches`)",
            Place::Toolchains => {
                "toolchains, their caches and settings under home (`~/.cargo`, `~/.rustup`, `~/.pyenv`, `~/.nvm`, `~/go`, `~/.gitconfig`, …: `src/sandbox/allow.rs`, less the secrets in them), the folders `CARGO_HOME`, `GOPATH`, … name there, and `sandbox.read`"
            }
            Place::GitInternals => "the rest of `.git/` (objects, refs, index, logs, HEAD)",
            Place::Project => "the rest of the repository",
            Place::Devices => {
                "`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`, the terminal, `/dev/shm` (the sandbox's own)"
            }
            Place::RawDevices => "other devices (disks, memory)",
            Place::Home => {
                "the rest of the home folder (other projects, notes, every tool's settings nobody listed)"
            }
            Place::System => "the rest of the machine (`/usr`, `/etc`, `/tmp`, …)",
        }
    }
}

/// What a profile may do with a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    None,
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::None => "—",
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// The profile table. Every cell is here once.
pub fn access(profile: Profile, place: Place) -> Access {
    use Access::{None, Read, Write};
    use Profile::*;
    match place {
        Place::Secrets | Place::RawDevices | Place::Sandboxes => None,
        Place::OwnCredential => {
            if profile.runs_client() {
                Read
            } else {
                None
            }
        }
        Place::Control => Read,
        Place::Answer => match profile {
            Red | Green | Review => Write,
            Check | Session => None,
        },
        Place::Areas => match profile {
            Red | Green | Check => Write,
            Review | Session => None,
        },
        Place::Tmpdir | Place::Devices => Write,
        // Another session's transcripts are no command's business.
        Place::ClientState => {
            if profile.runs_client() {
                Write
            } else {
                None
            }
        }
        Place::Caches => match profile {
            Check | Session => Write,
            _ => Read,
        },
        Place::GitInternals | Place::Project => match profile {
            Session => Write,
            _ => Read,
        },
        // Home is read by allowlist: a credential file nobody listed is not readable either.
        Place::Home => None,
        Place::Toolchains | Place::System => Read,
    }
}

pub fn can_write(profile: Profile, place: Place) -> bool {
    access(profile, place) == Access::Write
}

pub fn can_read(profile: Profile, place: Place) -> bool {
    access(profile, place) >= Access::Read
}

/// The table as Markdown, for `docs/sandbox.md` (a test checks the doc holds exactly this).
pub fn table_markdown() -> String {
    let mut s = String::from("| place |");
    for p in Profile::ALL {
        s.push_str(&format!(" `{}` |", p.as_str()));
    }
    s.push_str("\n|---|");
    for _ in Profile::ALL {
        s.push_str("---|");
    }
    s.push('\n');
    for place in Place::ALL {
        s.push_str(&format!("| {} |", place.describe()));
        for p in Profile::ALL {
            s.push_str(&format!(" {} |", access(p, place).as_str()));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_profiles() {
        // Nobody reads secrets or writes control files, in any profile.
        for p in Profile::ALL {
            assert!(!can_read(p, Place::Secrets), "{p:?}");
            assert!(!can_read(p, Place::Sandboxes), "{p:?}");
            assert!(!can_read(p, Place::RawDevices), "{p:?}");
            assert!(!can_write(p, Place::Control), "{p:?}");
            assert!(!can_read(p, Place::Home), "{p:?}");
            assert!(can_read(p, Place::Toolchains), "{p:?}");
            assert!(!can_write(p, Place::Toolchains), "{p:?}");
            assert!(!can_write(p, Place::System), "{p:?}");
            assert!(can_write(p, Place::Tmpdir), "{p:?}");
        }
        // red/green: their areas, the answer, the client's state; not the rest of the project.
        for p in [Profile::Red, Profile::Green] {
            assert!(can_write(p, Place::Areas));
            assert!(can_write(p, Place::Answer));
            assert!(can_write(p, Place::ClientState));
            assert!(can_read(p, Place::OwnCredential));
            assert!(!can_write(p, Place::Project));
            assert!(!can_write(p, Place::GitInternals));
        }
        // review: only its answer (and TMPDIR, client state).
        assert!(!can_write(Profile::Review, Place::Areas));
        assert!(can_write(Profile::Review, Place::Answer));
        // check: its checkout and caches, no client.
        assert!(can_write(Profile::Check, Place::Areas));
        assert!(can_write(Profile::Check, Place::Caches));
        assert!(!can_read(Profile::Check, Place::OwnCredential));
        assert!(!can_write(Profile::Check, Place::ClientState));
        // session: the project and git's internals (a commit works), caches; nothing else.
        assert!(can_write(Profile::Session, Place::Project));
        assert!(can_write(Profile::Session, Place::GitInternals));
        assert!(can_write(Profile::Session, Place::Caches));
        assert!(!can_write(Profile::Session, Place::ClientState));
        assert!(!can_read(Profile::Session, Place::OwnCredential));
    }

    /// docs/sandbox.md shows the table exactly as the kernel enforces it.
    #[test]
    fn the_docs_show_this_table() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/sandbox.md"))
            .unwrap_or_default();
        let table = table_markdown();
        assert!(
            doc.contains(&table),
            "docs/sandbox.md must hold the profile table as the code has it:\n{table}"
        );
    }

    #[test]
    fn table_has_a_row_per_place_and_a_column_per_profile() {
        let t = table_markdown();
        assert_eq!(t.lines().count(), 2 + Place::ALL.len());
        for line in t.lines() {
            assert_eq!(line.matches('|').count(), Profile::ALL.len() + 2, "{line}");
        }
    }
}
