//! `.forge/config.yaml`: each control's section, composed. Parsed strictly — an unknown key is
//! a typo that would otherwise silently disable a control — and every error names the file and
//! the key. Each section's type and its checks live with its control (`verify`, `breaker`,
//! `guard`, `budget`, `run`); this file only composes, loads, caches and validates them.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::breaker::{BreakerConfig, DEFAULT_MAX_FAILURES};
use crate::error::{Error, Result};
use crate::guard::GuardConfig;
pub use crate::verify::{CommandConfig, DEFAULT_TIMEOUT_SECS, VerifyCommand, VerifyConfig};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub verify: VerifyConfig,
    #[serde(default)]
    pub breaker: BreakerConfig,
    #[serde(default)]
    pub guard: GuardConfig,
    #[serde(default)]
    pub budget: crate::budget::BudgetConfig,
    /// The commands that play each role of `forge run`.
    #[serde(default)]
    pub agents: crate::run::agent::AgentsConfig,
    #[serde(default)]
    pub run: crate::run::RunConfig,
    #[serde(default)]
    pub sandbox: crate::sandbox::SandboxConfig,
    #[serde(default)]
    pub undo: crate::undo::UndoConfig,
}

/// What an empty config file needs: the parser's own "unexpected end of input" names no next
/// step.
const EMPTY: &str = "is empty: it needs at least the commands `forge verify` runs, e.g.\n  verify:\n    commands:\n      - {name: test, run: cargo test}\nor run `forge init --force` to write a commented one for this project";

/// Nothing but blank lines, comments and document markers.
fn is_blank(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with('#') || l == "---" || l == "..." || l == "\u{feff}")
}

/// The parser's message, except where it speaks of its own options: a duplicate key is a
/// person's slip (two `verify:` sections, say), and "set DuplicateKeyPolicy in Options" is
/// advice for Forge's code, not for them.
fn yaml_error(e: serde_saphyr::Error) -> String {
    use serde_saphyr::Error as E;
    let mut inner = &e;
    loop {
        match inner {
            E::WithSnippet { error, .. } | E::AliasError { error, .. } => inner = error,
            E::DuplicateMappingKey { key, location } => {
                let key = key
                    .as_deref()
                    .map(|k| format!("key `{k}`"))
                    .unwrap_or_else(|| "a key".into());
                return format!(
                    "line {}: {key} appears twice in the same mapping — keep one",
                    location.line()
                );
            }
            _ => return e.to_string(),
        }
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Config {
                    path: path.to_path_buf(),
                    message: "file not found; run `forge init` to write one".into(),
                });
            }
            Err(e) => {
                return Err(Error::Config {
                    path: path.to_path_buf(),
                    message: format!("cannot read: {e}"),
                });
            }
        };
        Config::parse(&text).map_err(|message| Error::Config {
            path: path.to_path_buf(),
            message,
        })
    }

    /// The guard's project rules only (the hook needs nothing else).
    pub fn load_guard(path: &Path) -> Result<GuardConfig> {
        Config::load(path).map(|c| c.guard)
    }

    /// Like [`Config::load`], through a cache of the parsed config in `cache_dir`, keyed by a
    /// hash of the file's bytes and Forge's version. The PreToolUse hook loads the config on
    /// every tool call, and YAML parsing of a thousand project rules costs ten times the
    /// decision; the cache is read with serde_json instead. A config that changed misses the
    /// cache and is parsed (and validated) afresh; errors are never cached.
    pub fn load_cached(path: &Path, cache_dir: &Path) -> Result<Config> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(_) => return Config::load(path),
        };
        let cache = Config::cache_file(&text, cache_dir);
        if let Ok(bytes) = std::fs::read(&cache)
            && let Ok(c) = serde_json::from_slice::<Config>(&bytes)
        {
            return Ok(c);
        }
        let text = String::from_utf8(text).map_err(|_| Error::Config {
            path: path.to_path_buf(),
            message: "is not UTF-8 text".into(),
        })?;
        let config = Config::parse(&text).map_err(|message| Error::Config {
            path: path.to_path_buf(),
            message,
        })?;
        // Best effort: a cache that cannot be written only costs speed.
        if let Ok(json) = serde_json::to_vec(&config) {
            if let Ok(entries) = std::fs::read_dir(cache_dir) {
                for e in entries.flatten() {
                    let name = e.file_name();
                    if name.to_string_lossy().starts_with("config-") {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
            let _ = crate::state::write_atomic(&cache, &json);
        }
        Ok(config)
    }

    /// The `sandbox:` section alone, through the same cache as [`Config::load_cached`]: `forge
    /// sandbox` runs before every Bash command of a live session and needs nothing else, so
    /// the rest of the cached config (a thousand guard rules, say) is skipped, not built.
    pub fn load_sandbox_cached(
        path: &Path,
        cache_dir: &Path,
    ) -> Result<crate::sandbox::SandboxConfig> {
        #[derive(serde::Deserialize)]
        struct SandboxOnly {
            #[serde(default)]
            sandbox: crate::sandbox::SandboxConfig,
        }
        if let Ok(text) = std::fs::read(path)
            && let Ok(bytes) = std::fs::read(Config::cache_file(&text, cache_dir))
            && let Ok(c) = serde_json::from_slice::<SandboxOnly>(&bytes)
        {
            return Ok(c.sandbox);
        }
        Config::load_cached(path, cache_dir).map(|c| c.sandbox)
    }

    /// The cache of a config file's bytes: keyed by their hash and Forge's version.
    fn cache_file(text: &[u8], cache_dir: &Path) -> std::path::PathBuf {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        env!("CARGO_PKG_VERSION").hash(&mut h);
        cache_dir.join(format!("config-{:016x}.json", h.finish()))
    }

    /// Parses and validates; the error message names the key.
    pub fn parse(text: &str) -> std::result::Result<Config, String> {
        if is_blank(text) {
            return Err(EMPTY.into());
        }
        let config: Config = serde_saphyr::from_str(text).map_err(yaml_error)?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        self.verify.validate()?;
        self.breaker.validate()?;
        self.budget.validate()?;
        self.agents.validate()?;
        self.run.validate()?;
        self.sandbox.validate()?;
        self.guard.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Format;

    #[test]
    fn a_check_cache_outside_the_checkout_is_refused() {
        for bad in ["../x", "/abs", "a/../b", "", "target/"] {
            let e = Config::parse(&format!(
                "verify:\n  commands:\n    - name: t\n      run: \"true\"\nrun:\n  check_caches: [\"{bad}\"]\n"
            ))
            .unwrap_err();
            assert!(e.contains("run.check_caches[0]"), "{bad}: {e}");
            let e = Config::parse(&format!(
                "verify:\n  commands:\n    - name: t\n      run: \"true\"\nrun:\n  check_envs: [\"{bad}\"]\n"
            ))
            .unwrap_err();
            assert!(e.contains("run.check_envs[0]"), "{bad}: {e}");
        }
        let ok = "verify:\n  commands:\n    - name: t\n      run: \"true\"\nrun:\n  check_caches: [target, web/node_modules]\n";
        assert!(Config::parse(ok).is_ok(), "{:?}", Config::parse(ok));
    }

    #[test]
    fn a_duplicate_key_names_its_line_and_the_fix() {
        let e = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nverify:\n  commands: []\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "line 4: key `verify` appears twice in the same mapping — keep one"
        );
        let e = Config::parse("verify:\n  commands:\n    - name: t\n      run: x\n      name: u\n")
            .unwrap_err();
        assert!(e.starts_with("line 5: key `name` appears twice"), "{e}");
        assert!(!e.contains("DuplicateKeyPolicy"), "{e}");
    }

    #[test]
    fn an_empty_config_says_what_to_put_there() {
        for text in ["", "\n\n", "# ours\n  # nothing yet\n", "---\n"] {
            let e = Config::parse(text).unwrap_err();
            assert!(
                e.starts_with("is empty: it needs at least the commands")
                    && e.contains("verify:\n    commands:")
                    && e.contains("forge init --force"),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn full_config_parses_with_defaults() {
        let c = Config::parse(
            "verify:\n  commands:\n    - name: test\n      run: cargo test\n      timeout: 60\n      report: libtest\n      report_path: null\n    - name: lint\n      run: cargo clippy\nbreaker:\n  max_failures: 5\n",
        )
        .unwrap();
        assert_eq!(c.verify.commands.len(), 2);
        assert_eq!(c.verify.commands[0].report, Format::Libtest);
        assert_eq!(c.verify.commands[1].timeout, DEFAULT_TIMEOUT_SECS);
        assert_eq!(c.verify.commands[1].report, Format::Auto);
        assert_eq!(c.breaker.max_failures, 5);
        let c = Config::parse("verify:\n  commands:\n    - {name: t, run: 'true'}\n").unwrap();
        assert_eq!(c.breaker.max_failures, DEFAULT_MAX_FAILURES);
    }

    #[test]
    fn cached_load_matches_and_follows_edits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let cache = dir.path().join("cache");
        std::fs::write(&path, "verify:\n  commands:\n    - {name: t, run: x}\nguard:\n  rules:\n    - {decision: deny, reason: r, program: p, tool: [Bash, Write]}\n").unwrap();
        let a = Config::load_cached(&path, &cache).unwrap();
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
        let b = Config::load_cached(&path, &cache).unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        assert_eq!(b.guard.rules[0].program.as_deref(), Some("p"));
        // An edit misses the cache; the old entry is replaced.
        std::fs::write(&path, "verify:\n  commands:\n    - {name: t, run: y}\n").unwrap();
        let c = Config::load_cached(&path, &cache).unwrap();
        assert_eq!(c.verify.commands[0].run, "y");
        assert!(c.guard.rules.is_empty());
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
        // Errors are reported, never cached.
        std::fs::write(&path, "verify: {commands: []}\n").unwrap();
        let e = Config::load_cached(&path, &cache).unwrap_err().to_string();
        assert!(e.contains("verify.commands"), "{e}");
        assert!(Config::load_cached(&path, &cache).is_err());
    }

    #[test]
    fn the_sandbox_section_alone_comes_from_the_same_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        let cache = dir.path().join("cache");
        let yaml = |reuse: bool| {
            format!(
                "verify:\n  commands:\n    - {{name: t, run: x}}\nsandbox:\n  mode: require\n  reuse: {reuse}\n  secrets: [~/.config/x]\n"
            )
        };
        std::fs::write(&path, yaml(false)).unwrap();
        // A miss loads (and caches) the whole config; a hit reads the section from the cache.
        let miss = Config::load_sandbox_cached(&path, &cache).unwrap();
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
        let hit = Config::load_sandbox_cached(&path, &cache).unwrap();
        assert_eq!(miss, hit);
        assert_eq!(hit, Config::load(&path).unwrap().sandbox);
        assert!(!hit.reuse && hit.secrets == ["~/.config/x"]);
        std::fs::write(&path, yaml(true)).unwrap();
        assert!(Config::load_sandbox_cached(&path, &cache).unwrap().reuse);
        std::fs::write(&path, "verify: {commands: []}\n").unwrap();
        assert!(Config::load_sandbox_cached(&path, &cache).is_err());
    }

    #[test]
    fn agents_and_run_keys_are_parsed_strictly() {
        let c = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nagents:\n  default: {command: 'sh a.sh'}\n  red: {command: 'claude -p x', resume_command: 'claude -p x --resume s', timeout: 60}\nrun:\n  check_timeout: 30\n",
        )
        .unwrap();
        use crate::run::agent::Role;
        assert_eq!(c.agents.for_role(Role::Green).unwrap().command, "sh a.sh");
        assert_eq!(c.agents.for_role(Role::Red).unwrap().timeout, 60);
        assert_eq!(c.run.check_timeout, 30);
        let e = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nagents:\n  red: {cmd: x}\n",
        )
        .unwrap_err();
        assert!(e.contains("cmd"), "{e}");
        let e = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nagents:\n  tester: {command: x}\n",
        )
        .unwrap_err();
        assert!(e.contains("tester"), "{e}");
        let e = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nagents:\n  red: {command: ' '}\n",
        )
        .unwrap_err();
        assert!(e.contains("agents.red.command"), "{e}");
        let e = Config::parse(
            "verify:\n  commands:\n    - {name: t, run: x}\nrun: {check_timeout: 0}\n",
        )
        .unwrap_err();
        assert!(e.contains("run.check_timeout"), "{e}");
    }

    #[test]
    fn unknown_key_is_named() {
        let e =
            Config::parse("verify:\n  commands:\n    - name: t\n      run: x\n      tiemout: 3\n")
                .unwrap_err();
        assert!(e.contains("tiemout"), "{e}");
        let e = Config::parse("verify:\n  commands: []\nbreakr: {}\n").unwrap_err();
        assert!(e.contains("breakr"), "{e}");
    }

    #[test]
    fn wrong_type_is_named() {
        let e = Config::parse(
            "verify:\n  commands:\n    - name: t\n      run: x\n      timeout: soon\n",
        )
        .unwrap_err();
        assert!(e.contains("timeout") || e.contains("soon"), "{e}");
    }

    #[test]
    fn unknown_report_format_lists_the_valid_ones() {
        let e = Config::parse(
            "verify:\n  commands:\n    - name: t\n      run: x\n      report: xunit\n",
        )
        .unwrap_err();
        assert!(e.contains("xunit") && e.contains("junit"), "{e}");
    }

    #[test]
    fn semantic_errors_name_the_key() {
        for (yaml, key) in [
            ("verify:\n  commands: []\n", "verify.commands"),
            (
                "verify:\n  commands:\n    - {name: t, run: ''}\n",
                "verify.commands[0].run",
            ),
            (
                "verify:\n  commands:\n    - {name: t, run: x}\n    - {name: t, run: y}\n",
                "verify.commands[1].name",
            ),
            (
                "verify:\n  commands:\n    - {name: t, run: x, report: junit}\n",
                "verify.commands[0].report_path",
            ),
            (
                "verify:\n  commands:\n    - {name: t, run: x, timeout: 0}\n",
                "verify.commands[0].timeout",
            ),
            (
                "verify:\n  commands:\n    - {name: t, run: x}\nbreaker: {max_failures: 0}\n",
                "breaker.max_failures",
            ),
        ] {
            let e = Config::parse(yaml).unwrap_err();
            assert!(e.contains(key), "{key}: {e}");
        }
    }
}
