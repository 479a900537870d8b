//! `forge budget set|raise`: a person changes one limit in `.forge/config.yaml`, in place (the
//! file's comments and layout stay; see [`crate::yaml_edit`]), under the `.forge/` lock, and
//! only when the result is a config Forge accepts with exactly that value changed.

use crate::error::{Error, Result};
use crate::repo::{CONFIG_FILE, Project};

use super::BudgetConfig;

/// A limit a person can set: its key in `budget:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKey {
    ChangeUsd,
    ChangeTokens,
    SessionUsd,
    SessionTokens,
    WarnAt,
}

impl LimitKey {
    pub const ALL: [LimitKey; 5] = [
        LimitKey::ChangeUsd,
        LimitKey::ChangeTokens,
        LimitKey::SessionUsd,
        LimitKey::SessionTokens,
        LimitKey::WarnAt,
    ];

    /// The key as written after `budget.`: `change.usd`, `warn_at`, …
    pub fn name(self) -> &'static str {
        match self {
            LimitKey::ChangeUsd => "change.usd",
            LimitKey::ChangeTokens => "change.tokens",
            LimitKey::SessionUsd => "session.usd",
            LimitKey::SessionTokens => "session.tokens",
            LimitKey::WarnAt => "warn_at",
        }
    }

    pub fn parse(s: &str) -> Result<LimitKey> {
        let s = s
            .strip_prefix("budget.")
            .unwrap_or(s)
            .replace("warn-at", "warn_at");
        LimitKey::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                Error::usage(format!(
                    "unknown budget limit `{s}`: use {}",
                    LimitKey::ALL
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }

    fn path(self) -> Vec<&'static str> {
        std::iter::once("budget")
            .chain(self.name().split('.'))
            .collect()
    }

    /// The value in force (`None`: no limit, or the default `warn_at`).
    pub fn get(self, b: &BudgetConfig) -> Option<f64> {
        match self {
            LimitKey::ChangeUsd => b.change.usd,
            LimitKey::ChangeTokens => b.change.tokens.map(|t| t as f64),
            LimitKey::SessionUsd => b.session.usd,
            LimitKey::SessionTokens => b.session.tokens.map(|t| t as f64),
            LimitKey::WarnAt => b.warn_at,
        }
    }

    pub fn is_tokens(self) -> bool {
        matches!(self, LimitKey::ChangeTokens | LimitKey::SessionTokens)
    }

    /// The value as a person reads it: `$5.00`, `300000 tokens`, `0.9`, `no limit`.
    pub fn show(self, v: Option<f64>) -> String {
        match (self, v) {
            (LimitKey::WarnAt, None) => "0.8 (the default)".into(),
            (_, None) => "no limit".into(),
            // As written: a limit of $0.045 is not shown as $0.04 (nor raised to "$0.10").
            (LimitKey::ChangeUsd | LimitKey::SessionUsd, Some(v)) => {
                format!("${}", super::dollars(v))
            }
            (LimitKey::WarnAt, Some(v)) => format!("{v}"),
            (_, Some(v)) => format!("{} tokens", v as u64),
        }
    }

    /// The value as written in YAML.
    fn yaml(self, v: Option<f64>) -> String {
        match v {
            None => "null".into(),
            Some(v) if self.is_tokens() => format!("{}", v as u64),
            Some(v) => format!("{v}"),
        }
    }

    /// Checks a value for this key: a number ≥ 0, whole for tokens, at most 1 for `warn_at`.
    pub fn check(self, v: f64) -> Result<()> {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::usage(format!(
                "`{}` must be a number ≥ 0",
                self.name()
            )));
        }
        if self.is_tokens() && (v.fract() != 0.0 || v > u64::MAX as f64) {
            return Err(Error::usage(format!(
                "`{}` is a whole number of tokens",
                self.name()
            )));
        }
        if self == LimitKey::WarnAt && v > 1.0 {
            return Err(Error::usage(
                "`warn_at` is a fraction of the limit, between 0 and 1",
            ));
        }
        Ok(())
    }
}

/// What a change of one limit did.
#[derive(Debug, Clone)]
pub struct LimitChange {
    pub key: LimitKey,
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// The budget section now in force.
    pub budget: BudgetConfig,
}

/// How the new value follows from the old one.
#[derive(Debug, Clone, Copy)]
pub enum NewValue {
    /// This value, or no limit.
    Set(Option<f64>),
    /// The current limit plus this much.
    Raise(f64),
}

/// Changes one limit in the project's config file, in place. `budget_of` reads a whole config
/// file as Forge loads it (`Config::parse`) and gives its budget section: the file before and
/// after the edit must be one Forge accepts, and the budget knows only its own section (the
/// caller, which knows the whole file, passes the parser).
pub fn change_limit(
    project: &Project,
    key: LimitKey,
    new: NewValue,
    budget_of: impl Fn(&str) -> std::result::Result<BudgetConfig, String>,
) -> Result<LimitChange> {
    let path = project.config_path();
    let _lock = crate::state::lock_dir(path.parent().unwrap_or(&project.root))?;
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::usage(format!("no {CONFIG_FILE} here: run `forge init` first"))
        } else {
            Error::io(format!("cannot read {}", path.display()), e)
        }
    })?;
    let current = budget_of(&text).map_err(|message| Error::Config {
        path: path.clone(),
        message,
    })?;
    let from = key.get(&current);
    let to = match new {
        NewValue::Set(v) => v,
        NewValue::Raise(by) => {
            if !(by.is_finite() && by > 0.0) {
                return Err(Error::usage("raise by an amount greater than 0"));
            }
            if key == LimitKey::WarnAt {
                return Err(Error::usage(
                    "`warn_at` is not a limit to raise: use `forge budget set warn_at <0..1>`",
                ));
            }
            match from {
                Some(f) => Some(f + by),
                None => {
                    return Err(Error::usage(format!(
                        "`budget.{}` has no limit, so there is nothing to raise: set one with `forge budget set {} <amount>`",
                        key.name(),
                        key.name()
                    )));
                }
            }
        }
    };
    if let Some(v) = to {
        key.check(v)?;
    }
    let edited =
        crate::yaml_edit::set(&text, &key.path(), &key.yaml(to)).map_err(|e| Error::Config {
            path: path.clone(),
            message: format!(
                "{e}; nothing was written. Set `budget.{}: {}` by hand",
                key.name(),
                key.yaml(to)
            ),
        })?;
    let next = budget_of(&edited).map_err(|message| Error::Config {
        path: path.clone(),
        message: format!(
            "{message} (after setting `budget.{}`; nothing was written)",
            key.name()
        ),
    })?;
    if key.get(&next) != to {
        return Err(Error::Config {
            path,
            message: format!(
                "setting `budget.{}` in place did not give {}; nothing was written",
                key.name(),
                key.show(to)
            ),
        });
    }
    crate::state::write_atomic(&path, edited.as_bytes())?;
    Ok(LimitChange {
        key,
        from,
        to,
        budget: next,
    })
}
