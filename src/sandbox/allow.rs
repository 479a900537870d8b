//! What a sandbox grants by name: the folders of home its commands may read, and the environment
//! variables they get. Both are allowlists: a credential file or variable nobody listed stays
//! out (red team of issue 34: 25 unlisted credential files and four unlisted variables reached a
//! sandboxed command when the walls were lists of what to hide). `src/secrets.rs` stays the
//! guard's explanation of *why* a path is refused, no longer the wall.
//!
//! Pure: the tables, and what they say about a name or a path.

use std::path::{Path, PathBuf};

use super::resolve::expand_home;

/// Folders and files under home that toolchains and the person's tools read on an ordinary
/// command (`~` is home). A credential inside one (`~/.cargo/credentials.toml`) stays a secret:
/// the secrets list is carved out of these grants.
pub const HOME_READ: &[&str] = &[
    // git: the person's config and ignore files (their includes are read as control files).
    "~/.gitconfig",
    "~/.config/git",
    "~/.gitignore_global",
    "~/.gitattributes",
    // Rust
    "~/.cargo",
    "~/.rustup",
    // Python
    "~/.pyenv",
    "~/.local/bin",
    "~/.local/lib",
    "~/.local/share/uv",
    "~/.local/share/virtualenvs",
    "~/.local/share/pipx",
    "~/.local/pipx",
    "~/.local/share/pdm",
    "~/.local/share/hatch",
    "~/.rye",
    "~/.conda",
    "~/.condarc",
    "~/miniconda3",
    "~/miniforge3",
    "~/anaconda3",
    "~/.virtualenvs",
    "~/.config/uv",
    "~/.config/pypoetry",
    "~/.config/ruff",
    "~/.cache/pip",
    "~/.cache/uv",
    "~/.cache/pypoetry",
    "~/.cache/pre-commit",
    // JavaScript
    "~/.npm",
    "~/.npm-global",
    "~/.nvm",
    "~/.volta",
    "~/.fnm",
    "~/.local/share/fnm",
    "~/.local/share/pnpm",
    "~/.cache/yarn",
    "~/.yarn",
    "~/.bun",
    "~/.deno",
    "~/.cache/deno",
    "~/.cache/node-gyp",
    "~/.node-gyp",
    "~/.cache/ms-playwright",
    "~/.cache/Cypress",
    // Go
    "~/go",
    "~/sdk",
    "~/.cache/go-build",
    "~/.config/go",
    // JVM, Ruby, .NET, others
    "~/.m2",
    "~/.gradle",
    "~/.sdkman",
    "~/.jdks",
    "~/.gem",
    "~/.local/share/gem",
    "~/.rbenv",
    "~/.rvm",
    "~/.bundle",
    "~/.dotnet",
    "~/.nuget",
    "~/.ghcup",
    "~/.cabal",
    "~/.stack",
    "~/.elan",
    "~/.opam",
    "~/.pub-cache",
    "~/.swiftpm",
    // Version managers and build caches
    "~/.asdf",
    "~/.tool-versions",
    "~/.local/share/mise",
    "~/.config/mise",
    "~/.nix-profile",
    "~/.linuxbrew",
    "~/.cache/bazel",
    "~/.cache/sccache",
    "~/.cache/ccache",
    "~/.ccache",
    // The agent clients' programs (their state and credentials are granted per profile).
    "~/.local/share/claude",
];

/// Variables that name a toolchain's folder: where one lies under home, it is read too
/// (`CARGO_HOME=~/tools/cargo`).
pub const TOOLCHAIN_ENV: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PIPX_HOME",
    "UV_CACHE_DIR",
    "PIP_CACHE_DIR",
    "NVM_DIR",
    "VOLTA_HOME",
    "FNM_DIR",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "GOPATH",
    "GOROOT",
    "GOMODCACHE",
    "GOCACHE",
    "JAVA_HOME",
    "GRADLE_USER_HOME",
    "SDKMAN_DIR",
    "GEM_HOME",
    "RBENV_ROOT",
    "MISE_DATA_DIR",
    "ASDF_DATA_DIR",
];

/// Variables every command gets (when set): the shell's and the terminal's, locale, proxies,
/// CA bundles, compilers' flags.
const ENV_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "HOSTNAME",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "TERM_PROGRAM",
    "TERMINFO",
    "TERMINFO_DIRS",
    "COLORTERM",
    "LS_COLORS",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "CI",
    "DEBIAN_FRONTEND",
    "EMAIL",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "CC",
    "CXX",
    "AR",
    "LD",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "JAVA_HOME",
    "M2_HOME",
    "VIRTUAL_ENV",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOPROXY",
    "GOPRIVATE",
    "GONOSUMDB",
    "GONOPROXY",
    "GOSUMDB",
    "GOTOOLCHAIN",
    "GOOS",
    "GOARCH",
    "GOENV",
    "GOWORK",
    "GOEXPERIMENT",
    "GO111MODULE",
    "TMPDIR",
];

/// Name prefixes every command gets: locale, XDG folders, the toolchains' own variables, git's
/// (the person's identity among them), Forge's.
const ENV_PREFIXES: &[&str] = &[
    "LC_",
    "XDG_",
    "CARGO_",
    "RUSTUP_",
    "RUST_",
    "RUSTC",
    "RUSTDOC",
    "PYTHON",
    "PIP_",
    "UV_",
    "POETRY_",
    "PDM_",
    "HATCH_",
    "PIPX_",
    "CONDA",
    "PYENV",
    "PYTEST_",
    "TOX_",
    "NODE_",
    "NPM_CONFIG_",
    "npm_config_",
    "YARN_",
    "PNPM_",
    "BUN_",
    "DENO_",
    "NVM_",
    "VOLTA_",
    "FNM_",
    "CGO_",
    "JAVA_",
    "JDK_",
    "GRADLE_",
    "MAVEN_",
    "KOTLIN_",
    "GEM_",
    "BUNDLE_",
    "RUBY",
    "RBENV_",
    "DOTNET_",
    "NUGET_",
    "PKG_CONFIG",
    "CMAKE_",
    "MISE_",
    "ASDF_",
    "GIT_",
    "FORGE_",
];

/// Name endings every command gets: where the machine keeps its CA certificates
/// (`REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`, `SSL_CERT_FILE`, `GIT_SSL_CAINFO`), without which no
/// TLS connection a build makes can be checked behind a corporate proxy.
const ENV_SUFFIXES: &[&str] = &[
    "_CA_BUNDLE",
    "_CA_CERTS",
    "_CA_CERTS_FILE",
    "_CAINFO",
    "_CERT_FILE",
    "_CERT_DIR",
    "_ROOTS_FILE_PATH",
];

/// The prefixes of the variables an agent client reads its settings from (its API's address,
/// its model, its own switches): a red, green or review sandbox running it passes them on.
pub fn client_env_prefixes(client: super::Client) -> &'static [&'static str] {
    match client {
        super::Client::Claude => &[
            "ANTHROPIC_",
            "CLAUDE_",
            "DISABLE_",
            "MCP_",
            "MAX_THINKING_TOKENS",
            "API_TIMEOUT_MS",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_",
            "USE_BUILTIN_RIPGREP",
            // What lets Claude Code take `--dangerously-skip-permissions` as root in a container.
            "IS_SANDBOX",
            // Vertex AI's region (its project is an `ANTHROPIC_` variable).
            "CLOUD_ML_REGION",
            "VERTEX_REGION_",
        ],
        super::Client::Codex => &["CODEX_", "OPENAI_"],
        super::Client::Gemini => &["GEMINI_", "GOOGLE_", "CODE_ASSIST_"],
    }
}

/// Whether a variable of the caller's environment reaches CMD by name: on the tables above, a
/// prefix of the running client's, or what the person adds in `sandbox.env` (a name, or a
/// prefix ending in `*`). Whether its value is a credential is judged apart.
pub fn env_allowed(name: &str, client: Option<super::Client>, extra: &[String]) -> bool {
    ENV_NAMES.contains(&name)
        || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        || ENV_SUFFIXES.iter().any(|s| name.ends_with(s))
        || client.is_some_and(|c| client_env_prefixes(c).iter().any(|p| name.starts_with(p)))
        || extra.iter().any(|e| match e.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == e,
        })
}

/// The paths under `home` a sandbox may read besides the project, the clients' and caches'
/// places: [`HOME_READ`], the toolchain folders the environment names there, and
/// `sandbox.read`. `var` reads the environment.
pub fn home_reads(
    home: &Path,
    configured: &[String],
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = HOME_READ.iter().map(|p| expand_home(p, home)).collect();
    for v in TOOLCHAIN_ENV {
        if let Some(d) = var(v).map(PathBuf::from)
            && d.is_absolute()
            && d.starts_with(home)
            && d != home
            && !out.contains(&d)
        {
            out.push(d);
        }
    }
    for c in configured {
        let p = expand_home(c, home);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Client;

    #[test]
    fn the_environment_is_granted_by_name_never_by_absence_from_a_list() {
        for keep in [
            "PATH",
            "LC_ALL",
            "CARGO_HOME",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "REQUESTS_CA_BUNDLE",
            "SSL_CERT_FILE",
            "NODE_EXTRA_CA_CERTS",
            "FORGE_SANDBOX",
        ] {
            assert!(env_allowed(keep, None, &[]), "{keep}");
        }
        // Unlisted credentials of the red team's round, and anything else nobody named.
        for drop in [
            "STRIPE_KEY",
            "SIGNING_KEY",
            "DB_PASS",
            "SLACK_WEBHOOK_URL",
            "MY_APP_SETTING",
            "DISPLAY",
            "SSH_AUTH_SOCK",
        ] {
            assert!(!env_allowed(drop, None, &[]), "{drop}");
        }
        // A client's own settings only where it runs; the person adds names and prefixes.
        assert!(env_allowed("ANTHROPIC_BASE_URL", Some(Client::Claude), &[]));
        assert!(!env_allowed("ANTHROPIC_BASE_URL", Some(Client::Codex), &[]));
        assert!(!env_allowed("ANTHROPIC_BASE_URL", None, &[]));
        let extra = vec!["MY_APP_SETTING".to_string(), "APP_*".to_string()];
        assert!(env_allowed("MY_APP_SETTING", None, &extra));
        assert!(env_allowed("APP_PORT", None, &extra));
        assert!(!env_allowed("MY_APP", None, &extra));
    }

    #[test]
    fn home_reads_are_the_table_the_toolchains_named_and_the_persons() {
        let home = Path::new("/h");
        let var = |v: &str| match v {
            "CARGO_HOME" => Some("/h/tools/cargo".into()),
            "GOPATH" => Some("/opt/go".into()),
            "PYENV_ROOT" => Some("/h".into()),
            _ => None,
        };
        let r = home_reads(home, &["~/work/lib".into(), "/srv/data".into()], &var);
        assert!(r.contains(&PathBuf::from("/h/.cargo")));
        assert!(r.contains(&PathBuf::from("/h/tools/cargo")));
        assert!(r.contains(&PathBuf::from("/h/work/lib")));
        assert!(r.contains(&PathBuf::from("/srv/data")));
        // Outside home it is read anyway; home as a whole is never a toolchain's folder.
        assert!(!r.contains(&PathBuf::from("/opt/go")));
        assert!(!r.contains(&PathBuf::from("/h")));
        assert!(!r.iter().any(|p| p.starts_with("/h/.ssh")));
    }
}
