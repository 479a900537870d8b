//! The spend budget: tokens and money per change and per agent session, from the agents' own
//! records (Claude Code transcripts, Gemini CLI chat recordings, Codex CLI rollouts, `claude -p`
//! / `codex exec --json` / Gemini JSON results) or
//! entered by hand, priced with a built-in table (overridable in config), kept in
//! `.forge/changes/<c>/budget.yaml` and `.forge/sessions/<s>/budget.yaml`, and enforced by the
//! hooks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::repo::Project;
use crate::state::{self, StateDoc};

mod claude;
mod codex;
mod gemini;
mod limits;
pub mod prices;
mod transcript;
pub use claude::{ingest_transcript, subagent_transcripts};
pub use codex::{from_codex_jsonl, ingest_rollout};
pub use gemini::{SessionSpends, TELEMETRY_FILE, from_gemini_json, ingest_chat, ingest_telemetry};

/// How a session's running record is read (Claude Code's transcript, Gemini CLI's chat
/// recording, Codex CLI's rollout): the file, the folder of read positions, the prices.
pub type ReadRecord = fn(&Path, &Path, &BudgetConfig) -> Result<Vec<Spend>>;
pub use limits::{LimitChange, LimitKey, NewValue, change_limit};
pub use prices::{AS_OF, Basis, Estimate, Rate, base_model, rate};

/// `budget:` in `.forge/config.yaml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    #[serde(default)]
    pub change: Limit,
    #[serde(default)]
    pub session: Limit,
    /// Fraction of a limit at which Forge warns (default 0.8).
    #[serde(default)]
    pub warn_at: Option<f64>,
    /// USD per million tokens, by model name (prefix): adds to the built-in table
    /// ([`prices::TABLE`]) or overrides its row of the same name.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    #[serde(default)]
    pub usd: Option<f64>,
    #[serde(default)]
    pub tokens: Option<u64>,
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cache writes that live 5 minutes (default: 1.25 × input, Anthropic's rate).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Cache writes that live 1 hour (default: 2 × input, Anthropic's rate).
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    /// Cache reads (default: 0.1 × input).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

impl BudgetConfig {
    pub fn validate(&self) -> std::result::Result<(), String> {
        for (k, l) in [
            ("budget.change", &self.change),
            ("budget.session", &self.session),
        ] {
            if l.usd.is_some_and(|u| !(u.is_finite() && u >= 0.0)) {
                return Err(format!("`{k}.usd` must be a number ≥ 0"));
            }
        }
        if self.warn_at.is_some_and(|w| !(0.0..=1.0).contains(&w)) {
            return Err("`budget.warn_at` must be between 0 and 1".into());
        }
        Ok(())
    }

    pub fn warn_at(&self) -> f64 {
        self.warn_at.unwrap_or(0.8)
    }
}

/// Token counts of one model call (or a sum of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// Cache writes of every time to live.
    pub cache_write: u64,
    /// The part of `cache_write` that lives 1 hour, which costs more than a 5-minute write.
    #[serde(default)]
    pub cache_write_1h: u64,
    pub cache_read: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
            .saturating_add(self.cache_read)
    }

    /// Saturating: a forged report of 2^63 tokens twice must not wrap to nothing (the
    /// record is refused as absurd instead: [`Spend::invalid`]).
    pub fn add(&mut self, o: &Tokens) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(o.cache_write_1h);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
    }
}

/// Ceilings no real agent call reaches: a figure above one is a broken or forged cost report,
/// and is refused rather than recorded (a ledger holding it would stop every later run).
pub const MAX_CALL_USD: f64 = 10_000.0;
pub const MAX_CALL_TOKENS: u64 = 10_000_000_000;

/// One spend record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spend {
    /// Where it came from: `claude-transcript`, `claude-subagent`, `gemini-chat`,
    /// `gemini-subagent`, `codex-rollout`, `claude-json`, `codex-json`, `gemini-json`, `manual`.
    pub source: String,
    pub model: Option<String>,
    pub tokens: Tokens,
    /// USD: the client's own figure where it gives one, else Forge's price. Never zero for
    /// want of a price: see [`rate`].
    pub usd: f64,
    /// Set when some of `usd` is an estimate: the model has no price of its own and the client
    /// gave none.
    pub estimate: Option<Estimate>,
}

impl Spend {
    /// Why this record cannot be a real call's cost, if it cannot: a negative, NaN, infinite
    /// or absurd figure.
    pub fn invalid(&self) -> Option<String> {
        if !(self.usd.is_finite() && (0.0..=MAX_CALL_USD).contains(&self.usd)) {
            return Some(format!("{} USD from {}", self.usd, self.source));
        }
        let t = &self.tokens;
        if [t.input, t.output, t.cache_write, t.cache_read]
            .iter()
            .any(|&n| n > MAX_CALL_TOKENS)
        {
            return Some(format!("{} tokens from {}", t.total(), self.source));
        }
        None
    }
}

/// Prices `tokens` of `model` at its rate ([`rate`]): USD, and the estimate made when the model
/// has no price of its own.
pub fn price(config: &BudgetConfig, model: Option<&str>, t: &Tokens) -> (f64, Option<Estimate>) {
    let r = rate(config, model);
    (r.cost(t), r.estimate())
}

/// What to tell a person, once, about a model priced by estimate: which price Forge took, that
/// the USD limits still hold, and the config lines that give the model its own price.
pub fn price_hint(model: Option<&str>, e: &Estimate) -> String {
    let at = format!(
        "`{}` (${}/${} per million input/output tokens)",
        e.like, e.price.input, e.price.output
    );
    let how = match &e.family {
        Some(f) => format!("the dearest known model of its family ({f}), {at}"),
        None => format!("the dearest model in the price table, {at}"),
    };
    match model {
        Some(m) => format!(
            "model `{m}` has no price in Forge's table (of {AS_OF}), so Forge prices it as {how}; USD limits still apply. Set its own price (USD per million tokens) in .forge/config.yaml:\n  budget:\n    prices:\n      {}: {{ input: 3.0, output: 15.0 }}   # the model's own rates",
            serde_json::to_string(base_model(m)).unwrap_or_default()
        ),
        None => format!(
            "spend of an unnamed model is priced as {how}; USD limits still apply. Name the model (`forge budget record … --model M`; Codex's JSON does not name it)"
        ),
    }
}

/// Spend from a `claude -p --output-format json` result: `modelUsage` per model, with the cost
/// Claude Code computed.
pub fn from_claude_json(
    v: &Value,
    config: &BudgetConfig,
) -> std::result::Result<Vec<Spend>, String> {
    let models = v
        .get("modelUsage")
        .and_then(|m| m.as_object())
        .ok_or("not a `claude -p --output-format json` result: no `modelUsage`")?;
    let mut out = Vec::new();
    for (model, u) in models {
        let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        let tokens = Tokens {
            input: n("inputTokens"),
            output: n("outputTokens"),
            cache_write: n("cacheCreationInputTokens"),
            // `modelUsage` does not split cache writes by time to live; `costUSD` is Claude
            // Code's own price, which does.
            cache_write_1h: 0,
            cache_read: n("cacheReadInputTokens"),
        };
        // Claude Code's own price, which knows its models; Forge's only where it gives none.
        let (usd, estimate) = match u.get("costUSD").and_then(|x| x.as_f64()) {
            Some(c) => (c, None),
            None => price(config, Some(model), &tokens),
        };
        out.push(Spend {
            source: "claude-json".into(),
            model: Some(base_model(model).to_string()),
            tokens,
            usd,
            estimate,
        });
    }
    Ok(out)
}

/// Running totals of a change or a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ledger {
    pub usd: f64,
    pub tokens: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_write_tokens: u64,
    /// The part of `cache_write_tokens` written for 1 hour (priced higher than 5 minutes).
    #[serde(default)]
    pub cache_write_1h_tokens: u64,
    pub cache_read_tokens: u64,
    /// Tokens of models with no price of their own, priced by estimate ([`rate`]). A ledger
    /// written before estimates (`unpriced_tokens`) counted them at $0.
    #[serde(alias = "unpriced_tokens")]
    pub estimated_tokens: u64,
    pub records: u64,
    #[serde(default, alias = "unpriced_models")]
    pub estimated_models: Vec<String>,
}

impl StateDoc for Ledger {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        let l: Ledger = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        if !(l.usd.is_finite() && l.usd >= 0.0) {
            return Err("`usd` must be a number ≥ 0".into());
        }
        Ok(l)
    }
    fn render(&self) -> String {
        let models: Vec<String> = self
            .estimated_models
            .iter()
            .map(|m| serde_json::to_string(m).unwrap_or_default())
            .collect();
        format!(
            "usd: {}\ntokens: {}\ninput_tokens: {}\noutput_tokens: {}\ncache_write_tokens: {}\ncache_write_1h_tokens: {}\ncache_read_tokens: {}\nestimated_tokens: {}\nrecords: {}\nestimated_models: [{}]\n",
            self.usd,
            self.tokens,
            self.input_tokens,
            self.output_tokens,
            self.cache_write_tokens,
            self.cache_write_1h_tokens,
            self.cache_read_tokens,
            self.estimated_tokens,
            self.records,
            models.join(", ")
        )
    }
}

impl Ledger {
    fn add(&mut self, s: &Spend) {
        self.usd += s.usd;
        self.tokens += s.tokens.total();
        self.input_tokens += s.tokens.input;
        self.output_tokens += s.tokens.output;
        self.cache_write_tokens += s.tokens.cache_write;
        self.cache_write_1h_tokens += s.tokens.cache_write_1h;
        self.cache_read_tokens += s.tokens.cache_read;
        self.records += 1;
        if s.estimate.is_some() {
            self.estimated_tokens += s.tokens.total();
            let m = s.model.clone().unwrap_or_else(|| "unknown".into());
            if !self.estimated_models.contains(&m) {
                self.estimated_models.push(m);
            }
        }
    }
}

pub fn change_ledger_path(project: &Project, change: &str) -> PathBuf {
    project.change_dir(change).join("budget.yaml")
}

pub fn session_ledger_path(project: &Project, session: &str) -> PathBuf {
    crate::timeline::sessions_dir(&project.root)
        .join(crate::timeline::sanitize(session))
        .join("budget.yaml")
}

fn recovery(path: &Path) -> String {
    format!(
        "Inspect it (an agent may have edited it); a person can restore it from git (`git checkout -- {}`).",
        path.display()
    )
}

pub fn load_ledger(path: &Path) -> Result<Ledger> {
    Ok(state::load::<Ledger>(path, &recovery(path))?.unwrap_or_default())
}

/// Adds spend to the change's and the session's ledgers (each atomic, locked, fail-closed).
/// Returns the models priced by estimate that this project had not seen before, so the caller
/// tells the person once ([`PriceNotice`]), rather than on every record.
pub fn record(
    project: &Project,
    change: Option<&str>,
    session: Option<&str>,
    spends: &[Spend],
) -> Result<Vec<PriceNotice>> {
    if spends.is_empty() {
        return Ok(Vec::new());
    }
    let mut paths = Vec::new();
    if let Some(c) = change {
        paths.push(change_ledger_path(project, c));
    }
    if let Some(s) = session {
        paths.push(session_ledger_path(project, s));
    }
    for p in paths {
        state::update(&p, &recovery(&p), |cur: Option<Ledger>| {
            let mut l = cur.unwrap_or_default();
            for s in spends {
                l.add(s);
            }
            Ok((l, ()))
        })?;
    }
    first_sight_of_estimates(project, spends)
}

/// A model priced by estimate, seen for the first time in this project: said once, on stderr
/// (hooks) or stdout (`forge budget record`), and on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceNotice {
    pub model: Option<String>,
    pub estimate: Estimate,
}

impl PriceNotice {
    pub fn hint(&self) -> String {
        price_hint(self.model.as_deref(), &self.estimate)
    }

    /// The timeline event's data (kind `budget`).
    pub fn event(&self) -> Value {
        serde_json::json!({"event": "estimated-price", "model": self.model, "like": self.estimate.like, "family": self.estimate.family, "hint": self.hint()})
    }
}

/// The models priced by estimate so far in this project (`.tmp/.forge/estimated-models.json`).
struct Named(Vec<Option<String>>);

impl StateDoc for Named {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        serde_json::from_str(text)
            .map(Named)
            .map_err(|e| e.to_string())
    }
    fn render(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }
}

fn first_sight_of_estimates(project: &Project, spends: &[Spend]) -> Result<Vec<PriceNotice>> {
    let mut found: Vec<PriceNotice> = Vec::new();
    for s in spends {
        let Some(e) = &s.estimate else { continue };
        let model = s.model.as_deref().map(|m| base_model(m).to_string());
        if !found.iter().any(|n| n.model == model) {
            found.push(PriceNotice {
                model,
                estimate: e.clone(),
            });
        }
    }
    if found.is_empty() {
        return Ok(found);
    }
    let path = project.tmp_dir().join("estimated-models.json");
    state::update_or_recover(&path, |seen: std::result::Result<Option<Named>, String>| {
        // A broken list only means a model is named again.
        let mut seen = seen.ok().flatten().map_or_else(Vec::new, |n| n.0);
        let new: Vec<PriceNotice> = found
            .into_iter()
            .filter(|n| !seen.contains(&n.model))
            .collect();
        seen.extend(new.iter().map(|n| n.model.clone()));
        Ok((Named(seen), new))
    })
}

/// The dollars left before the first USD limit of the change or the session is reached, for
/// agents that can stop themselves there (`claude -p --max-budget-usd`). `None` when no USD
/// limit applies.
pub fn remaining_usd(
    project: &Project,
    config: &BudgetConfig,
    change: Option<&str>,
    session: Option<&str>,
) -> Result<Option<f64>> {
    Ok(standings(project, config, change, session)?
        .iter()
        .filter_map(|s| s.usd_limit.map(|limit| (limit - s.usd).max(0.0)))
        .reduce(f64::min))
}

fn limits_path(project: &Project) -> PathBuf {
    project.tmp_dir().join("budget-limits.json")
}

fn limits_snapshot(config: &BudgetConfig) -> Value {
    serde_json::json!({"change": config.change, "session": config.session, "warn_at": config.warn_at, "prices": config.prices})
}

/// Records a change of the budget limits on the timeline (`.forge/sessions/config/`), attributed
/// to the person who edited the config — agents cannot edit it. The limits seen last are kept in
/// `.tmp/.forge/budget-limits.json`; the first sight records nothing.
pub fn note_limit_changes(project: &Project, config: &BudgetConfig) {
    let now = limits_snapshot(config);
    let before: Option<Value> = std::fs::read(limits_path(project))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if before.as_ref() == Some(&now) {
        return;
    }
    remember_limits(project, config);
    if let Some(before) = before {
        let who =
            crate::git::user_name_from_files(&project.root).unwrap_or_else(|| "unknown".into());
        let rec = crate::timeline::Recorder::new(project, "config", &format!("human:{who}"));
        rec.record_or_warn(
            None,
            "budget",
            serde_json::json!({"event": "limits-changed", "from": before, "to": now}),
        );
    }
}

/// Takes `config`'s limits as seen, without recording anything: for `forge budget set|raise`,
/// which records the change itself, with its key and the person's session.
pub fn remember_limits(project: &Project, config: &BudgetConfig) {
    let _ = state::write_atomic(
        &limits_path(project),
        limits_snapshot(config).to_string().as_bytes(),
    );
}

/// Spend against one limit.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    pub scope: String,
    pub usd: f64,
    pub usd_limit: Option<f64>,
    pub tokens: u64,
    pub tokens_limit: Option<u64>,
    /// Tokens priced by estimate (models with no price of their own).
    pub estimated_tokens: u64,
    pub over: bool,
    pub warn: bool,
}

impl Standing {
    pub fn new(scope: String, l: &Ledger, limit: &Limit, warn_at: f64) -> Standing {
        let over =
            limit.usd.is_some_and(|u| l.usd >= u) || limit.tokens.is_some_and(|t| l.tokens >= t);
        let warn = !over
            && (limit.usd.is_some_and(|u| l.usd >= u * warn_at)
                || limit
                    .tokens
                    .is_some_and(|t| l.tokens as f64 >= t as f64 * warn_at));
        Standing {
            scope,
            usd: l.usd,
            usd_limit: limit.usd,
            tokens: l.tokens,
            tokens_limit: limit.tokens,
            estimated_tokens: l.estimated_tokens,
            over,
            warn,
        }
    }

    pub fn describe(&self) -> String {
        let mut parts = vec![format!("${:.4}", self.usd)];
        if let Some(u) = self.usd_limit {
            parts[0] = format!("${:.4} of ${}", self.usd, dollars(u));
        }
        match self.tokens_limit {
            Some(t) => parts.push(format!("{} of {t} tokens", self.tokens)),
            None => parts.push(format!("{} tokens", self.tokens)),
        }
        if self.estimated_tokens > 0 {
            parts.push(format!(
                "{} tokens priced by estimate",
                self.estimated_tokens
            ));
        }
        format!("{}: {}", self.scope, parts.join(", "))
    }
}

/// A limit in dollars as a person wrote it: cents always, more digits only when it has them
/// (`$5.00`, `$0.045`).
pub(crate) fn dollars(u: f64) -> String {
    let s = format!("{u:.4}");
    let (whole, frac) = s.split_once('.').unwrap_or((&s, "00"));
    let frac = frac.trim_end_matches('0');
    format!("{whole}.{frac:0<2}")
}

/// The change's and the session's standing against the configured limits.
pub fn standings(
    project: &Project,
    config: &BudgetConfig,
    change: Option<&str>,
    session: Option<&str>,
) -> Result<Vec<Standing>> {
    let mut out = Vec::new();
    if let Some(c) = change {
        let l = load_ledger(&change_ledger_path(project, c))?;
        out.push(Standing::new(
            format!("change {c}"),
            &l,
            &config.change,
            config.warn_at(),
        ));
    }
    if let Some(s) = session {
        let l = load_ledger(&session_ledger_path(project, s))?;
        out.push(Standing::new(
            format!("session {s}"),
            &l,
            &config.session,
            config.warn_at(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
