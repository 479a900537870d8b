//! `guard:` in `.forge/config.yaml`, and the same shape in the person's own
//! `~/.config/forge/guard.yaml` (user-level rules): allow / ask / deny rules by program and
//! arguments, path glob and tool, and changed decisions of default rules. This file imports
//! only serde, std and the guard's leaf types; `src/config.rs` composes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Decision;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GuardConfig {
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    /// Decisions of default rules, changed: `unparseable: ask`, `dynamic-program: ask`,
    /// `git-amend: allow`. A lower decision relaxes the default; in a project's config that
    /// takes effect only once a person trusts it (`forge guard trust`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub decisions: BTreeMap<String, Decision>,
}

/// A project or user rule. Every condition given must hold; at least one is required.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// A name for messages; defaults to `project-rule-<n>` (`user-rule-<n>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub decision: Decision,
    pub reason: String,
    /// The program (base name), after wrappers such as `sudo` or `env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Arguments that must all be present (globs with `*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// A path glob, relative to the repository root, matched against the files the call writes
    /// (or reads, for read tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Tool names the rule applies to (`Bash`, `Write`, `Edit`, `Read`, `mcp__…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<OneOrMany>,
    /// Default rule ids this allow rule relaxes. A rule can relax a default only by naming it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relaxes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// By hand rather than `#[serde(untagged)]`, which buffers every value: the hook reads up to
/// thousands of rules per tool call.
impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a tool name or a list of tool names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<OneOrMany, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<String>()? {
                    v.push(x);
                }
                Ok(OneOrMany::Many(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl OneOrMany {
    pub fn contains(&self, s: &str) -> bool {
        let hit = |x: &str| x == s || (x.ends_with('*') && s.starts_with(x.trim_end_matches('*')));
        match self {
            OneOrMany::One(x) => hit(x),
            OneOrMany::Many(v) => v.iter().any(|x| hit(x)),
        }
    }
}

impl GuardConfig {
    /// Checks the rules; the message names the key (`guard.rules[2].relaxes`).
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.validate_at("guard")
    }

    pub fn validate_at(&self, prefix: &str) -> std::result::Result<(), String> {
        for (i, r) in self.rules.iter().enumerate() {
            let key = format!("{prefix}.rules[{i}]");
            if r.program.is_none() && r.path.is_none() && r.tool.is_none() {
                return Err(format!(
                    "`{key}` matches nothing: give at least one of `program`, `path`, `tool`"
                ));
            }
            if !r.args.is_empty() && r.program.is_none() {
                return Err(format!("`{key}.args` needs `program`"));
            }
            if !r.relaxes.is_empty() && r.decision != Decision::Allow {
                return Err(format!(
                    "`{key}.relaxes` only makes sense with `decision: allow`"
                ));
            }
            for id in &r.relaxes {
                if super::rules::rule(id).is_none() {
                    return Err(format!(
                        "`{key}.relaxes`: `{id}` is not a default rule; see `forge guard rules` for the ids"
                    ));
                }
            }
        }
        for id in self.decisions.keys() {
            if super::rules::rule(id).is_none() {
                return Err(format!(
                    "`{prefix}.decisions.{id}`: `{id}` is not a default rule; see `forge guard rules` for the ids"
                ));
            }
        }
        Ok(())
    }

    /// What in this config relaxes the default policy: allow rules that name defaults in
    /// `relaxes`, and decisions lowered below the default. Described for a person.
    pub fn relaxing(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            if !r.relaxes.is_empty() {
                out.push(format!(
                    "rule `{}` relaxes {} ({})",
                    r.id.clone().unwrap_or_else(|| format!("project-rule-{i}")),
                    r.relaxes.join(", "),
                    r.reason
                ));
            }
        }
        for (id, d) in &self.decisions {
            if let Some(rule) = super::rules::rule(id)
                && *d < rule.decision
            {
                out.push(format!(
                    "decision of `{id}` lowered from {} to {}",
                    rule.decision.as_str(),
                    d.as_str()
                ));
            }
        }
        out
    }

    /// Rules without an `id` named by their position (`project-rule-2`), so that setting some
    /// aside does not rename the others.
    pub fn with_default_ids(mut self, prefix: &str) -> GuardConfig {
        for (i, r) in self.rules.iter_mut().enumerate() {
            if r.id.is_none() {
                r.id = Some(format!("{prefix}-{i}"));
            }
        }
        self
    }

    /// Whether anything relaxes the default policy (cheap: checked on every hook call).
    pub fn has_relaxing(&self) -> bool {
        self.rules.iter().any(|r| !r.relaxes.is_empty())
            || self
                .decisions
                .iter()
                .any(|(id, d)| super::rules::rule(id).is_some_and(|r| *d < r.decision))
    }

    /// The relaxing parts and the rest, moved apart (no copies: the hook splits a config with
    /// a thousand rules on every call).
    pub fn split_relaxing(self) -> (GuardConfig, GuardConfig) {
        let (relax_rules, rules): (Vec<RuleConfig>, Vec<RuleConfig>) =
            self.rules.into_iter().partition(|r| !r.relaxes.is_empty());
        let (relax_dec, decisions): (BTreeMap<String, Decision>, BTreeMap<String, Decision>) = self
            .decisions
            .into_iter()
            .partition(|(id, d)| super::rules::rule(id).is_some_and(|r| *d < r.decision));
        (
            GuardConfig {
                rules: relax_rules,
                decisions: relax_dec,
            },
            GuardConfig { rules, decisions },
        )
    }

    /// The config without its relaxing parts (what applies until a person trusts it).
    pub fn without_relaxing(&self) -> GuardConfig {
        GuardConfig {
            rules: self
                .rules
                .iter()
                .filter(|r| r.relaxes.is_empty())
                .cloned()
                .collect(),
            decisions: self
                .decisions
                .iter()
                .filter(|(id, d)| super::rules::rule(id).is_none_or(|r| **d >= r.decision))
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        }
    }

    /// A fingerprint of the relaxing parts: trust covers exactly these; any change to them needs
    /// trusting again.
    pub fn relaxing_fingerprint(&self) -> String {
        let mut h = Sha256::new();
        // One buffer for every rule: the hook fingerprints on each call.
        let mut buf = Vec::new();
        for r in self.rules.iter().filter(|r| !r.relaxes.is_empty()) {
            buf.clear();
            if serde_json::to_writer(&mut buf, r).is_err() {
                buf.clear();
            }
            h.update(&buf);
            h.update(b"\n");
        }
        for (id, d) in &self.decisions {
            if super::rules::rule(id).is_some_and(|r| *d < r.decision) {
                h.update(format!("{id}={}\n", d.as_str()));
            }
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The person's own Forge folder: `FORGE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/forge`, else
/// `~/.config/forge`. Agents cannot write it: it is outside every repository (the guard's
/// `write-outside-repo`) and outside the session sandbox's writable set.
pub fn user_dir(home: &Path) -> PathBuf {
    if let Some(d) = std::env::var_os("FORGE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(x).join("forge");
    }
    home.join(".config/forge")
}

/// The person's own rules, `<user dir>/guard.yaml`, if there are any. A file that does not
/// parse is an error naming it (the guard then fails closed).
pub fn load_user(dir: &Path) -> std::result::Result<Option<GuardConfig>, String> {
    let path = dir.join("guard.yaml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let c: GuardConfig =
        serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    c.validate_at(&path.display().to_string())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxing_parts_are_found_and_fingerprinted() {
        let c: GuardConfig = serde_saphyr::from_str(
            "rules:\n  - {decision: allow, reason: ok, program: git, args: [reset], relaxes: [git-reset-hard]}\n  - {decision: deny, reason: no, program: kubectl}\ndecisions:\n  unparseable: ask\n  git-amend: deny\n",
        )
        .unwrap();
        c.validate().unwrap();
        let r = c.relaxing();
        assert_eq!(r.len(), 2, "{r:?}");
        let strict = c.without_relaxing();
        assert_eq!(strict.rules.len(), 1);
        assert_eq!(
            strict.decisions.len(),
            1,
            "raising a decision is not relaxing"
        );
        assert!(strict.relaxing().is_empty());
        let mut changed = c.clone();
        changed.rules[0].relaxes.push("git-clean".into());
        assert_ne!(c.relaxing_fingerprint(), changed.relaxing_fingerprint());
        let mut unrelated = c.clone();
        unrelated.rules[1].reason = "other".into();
        assert_eq!(c.relaxing_fingerprint(), unrelated.relaxing_fingerprint());
    }

    #[test]
    fn unknown_ids_are_named() {
        let c: GuardConfig = serde_saphyr::from_str("decisions:\n  no-such: ask\n").unwrap();
        assert!(
            c.validate()
                .unwrap_err()
                .contains("guard.decisions.no-such")
        );
    }
}
