//! The spend budget: tokens and money per change and per agent session, from the agents' own
//! records (Claude Code transcripts, `claude -p` / `codex exec --json` / Gemini JSON results) or
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
mod limits;
pub use claude::{ingest_transcript, subagent_transcripts};
pub use limits::{LimitChange, LimitKey, NewValue, change_limit};

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
    /// USD per million tokens, by model name (prefix), overriding the built-in table.
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

/// Built-in prices, USD per million tokens (input, output, cache write, cache read), matched by
/// the longest model-name prefix. Checked against a real run: Claude Code reported $0.03972
/// for 7,289 input and 131 output tokens of `claude-opus-4-8`.
const PRICES: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 25.0, 6.25, 0.5),
    ("claude-opus-4-6", 5.0, 25.0, 6.25, 0.5),
    ("claude-opus-4-7", 5.0, 25.0, 6.25, 0.5),
    ("claude-opus-4-8", 5.0, 25.0, 6.25, 0.5),
    ("claude-opus-4", 15.0, 75.0, 18.75, 1.5),
    ("claude-sonnet-4", 3.0, 15.0, 3.75, 0.3),
    ("claude-3-7-sonnet", 3.0, 15.0, 3.75, 0.3),
    ("claude-3-5-sonnet", 3.0, 15.0, 3.75, 0.3),
    ("claude-haiku-4", 1.0, 5.0, 1.25, 0.1),
    ("claude-3-5-haiku", 0.8, 4.0, 1.0, 0.08),
    ("gpt-5-mini", 0.25, 2.0, 0.25, 0.025),
    ("gpt-5-nano", 0.05, 0.4, 0.05, 0.005),
    ("gpt-5", 1.25, 10.0, 1.25, 0.125),
    ("gpt-4.1", 2.0, 8.0, 2.0, 0.5),
    ("o3", 2.0, 8.0, 2.0, 0.5),
    ("gemini-2.5-pro", 1.25, 10.0, 1.25, 0.31),
    ("gemini-2.5-flash", 0.30, 2.50, 0.30, 0.075),
];

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
    /// Where it came from: `claude-transcript`, `claude-json`, `codex-json`, `gemini-json`,
    /// `manual`.
    pub source: String,
    pub model: Option<String>,
    pub tokens: Tokens,
    /// USD; `None` when the model is not in the price table (the tokens still count).
    pub usd: Option<f64>,
}

impl Spend {
    /// Why this record cannot be a real call's cost, if it cannot: a negative, NaN, infinite
    /// or absurd figure.
    pub fn invalid(&self) -> Option<String> {
        if let Some(u) = self.usd
            && !(u.is_finite() && (0.0..=MAX_CALL_USD).contains(&u))
        {
            return Some(format!("{} USD from {}", u, self.source));
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

/// `claude-opus-4-8[1m]` → `claude-opus-4-8`: the `modelUsage` keys carry a context suffix.
fn base_model(m: &str) -> &str {
    m.split('[').next().unwrap_or(m).trim()
}

/// Prices `tokens` of `model`: config prices first, then the built-in table.
pub fn price(config: &BudgetConfig, model: Option<&str>, t: &Tokens) -> Option<f64> {
    let m = base_model(model?);
    let from_config = config
        .prices
        .iter()
        .filter(|(k, _)| m.starts_with(k.as_str()))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, p)| *p);
    let p = from_config.or_else(|| {
        PRICES
            .iter()
            .filter(|(k, ..)| m.starts_with(k))
            .max_by_key(|(k, ..)| k.len())
            .map(|(_, i, o, w, r)| Price {
                input: *i,
                output: *o,
                cache_write: Some(*w),
                cache_write_1h: None,
                cache_read: Some(*r),
            })
    })?;
    let hour = t.cache_write_1h.min(t.cache_write);
    Some(
        (t.input as f64 * p.input
            + t.output as f64 * p.output
            + (t.cache_write - hour) as f64 * p.cache_write.unwrap_or(p.input * 1.25)
            + hour as f64 * p.cache_write_1h.unwrap_or(p.input * 2.0)
            + t.cache_read as f64 * p.cache_read.unwrap_or(p.input * 0.1))
            / 1e6,
    )
}

/// What to tell a person about a model with no price, once: that its tokens count toward token
/// limits only, and the config lines that price it.
pub fn price_hint(model: Option<&str>) -> String {
    match model {
        Some(m) => format!(
            "model `{m}` has no price, so its tokens count toward token limits only. Add its price (USD per million tokens) to .forge/config.yaml:\n  budget:\n    prices:\n      {}: {{ input: 3.0, output: 15.0 }}   # the model's own rates",
            serde_json::to_string(base_model(m)).unwrap_or_default()
        ),
        None => "spend of an unnamed model has no price, so its tokens count toward token limits only: name the model (`forge budget record … --model M`; Codex's JSON does not name it)".to_string(),
    }
}

/// Spend from a `claude -p --output-format json` result: `modelUsage` per model, with the cost
/// Claude Code computed.
pub fn from_claude_json(v: &Value) -> std::result::Result<Vec<Spend>, String> {
    let models = v
        .get("modelUsage")
        .and_then(|m| m.as_object())
        .ok_or("not a `claude -p --output-format json` result: no `modelUsage`")?;
    let mut out = Vec::new();
    for (model, u) in models {
        let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        out.push(Spend {
            source: "claude-json".into(),
            model: Some(base_model(model).to_string()),
            tokens: Tokens {
                input: n("inputTokens"),
                output: n("outputTokens"),
                cache_write: n("cacheCreationInputTokens"),
                // `modelUsage` does not split cache writes by time to live; `costUSD` is Claude
                // Code's own price, which does.
                cache_write_1h: 0,
                cache_read: n("cacheReadInputTokens"),
            },
            usd: u.get("costUSD").and_then(|x| x.as_f64()),
        });
    }
    Ok(out)
}

/// Spend from `codex exec --json` output (JSONL): the `usage` of every `turn.completed`. Codex
/// does not name the model in this stream; `model` comes from the caller.
pub fn from_codex_jsonl(text: &str, model: Option<&str>, config: &BudgetConfig) -> Vec<Spend> {
    let mut t = Tokens::default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(|x| x.as_str()) != Some("turn.completed") {
            continue;
        }
        let u = &v["usage"];
        let n = |k: &str| u.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        let cached = n("cached_input_tokens");
        t.input = t
            .input
            .saturating_add(n("input_tokens").saturating_sub(cached));
        t.cache_read = t.cache_read.saturating_add(cached);
        t.cache_write = t.cache_write.saturating_add(n("cache_write_input_tokens"));
        t.output = t
            .output
            .saturating_add(n("output_tokens").saturating_add(n("reasoning_output_tokens")));
    }
    if t.total() == 0 {
        return vec![];
    }
    vec![Spend {
        source: "codex-json".into(),
        model: model.map(str::to_string),
        usd: price(config, model, &t),
        tokens: t,
    }]
}

/// Spend from `gemini --output-format json`: `stats.models.<name>.tokens`.
pub fn from_gemini_json(
    v: &Value,
    config: &BudgetConfig,
) -> std::result::Result<Vec<Spend>, String> {
    let models = v
        .pointer("/stats/models")
        .and_then(|m| m.as_object())
        .ok_or("not a `gemini --output-format json` result: no `stats.models`")?;
    let mut out = Vec::new();
    for (model, m) in models {
        let n = |k: &str| {
            m.pointer(&format!("/tokens/{k}"))
                .and_then(|x| x.as_u64())
                .unwrap_or(0)
        };
        let cached = n("cached");
        let t = Tokens {
            input: n("prompt").saturating_sub(cached),
            output: n("candidates") + n("thoughts"),
            cache_write: 0,
            cache_write_1h: 0,
            cache_read: cached,
        };
        out.push(Spend {
            source: "gemini-json".into(),
            model: Some(model.clone()),
            usd: price(config, Some(model), &t),
            tokens: t,
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
    /// Tokens of models with no known price: counted, flagged, never priced at zero silently.
    pub unpriced_tokens: u64,
    pub records: u64,
    #[serde(default)]
    pub unpriced_models: Vec<String>,
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
            .unpriced_models
            .iter()
            .map(|m| serde_json::to_string(m).unwrap_or_default())
            .collect();
        format!(
            "usd: {}\ntokens: {}\ninput_tokens: {}\noutput_tokens: {}\ncache_write_tokens: {}\ncache_write_1h_tokens: {}\ncache_read_tokens: {}\nunpriced_tokens: {}\nrecords: {}\nunpriced_models: [{}]\n",
            self.usd,
            self.tokens,
            self.input_tokens,
            self.output_tokens,
            self.cache_write_tokens,
            self.cache_write_1h_tokens,
            self.cache_read_tokens,
            self.unpriced_tokens,
            self.records,
            models.join(", ")
        )
    }
}

impl Ledger {
    fn add(&mut self, s: &Spend) {
        self.usd += s.usd.unwrap_or(0.0);
        self.tokens += s.tokens.total();
        self.input_tokens += s.tokens.input;
        self.output_tokens += s.tokens.output;
        self.cache_write_tokens += s.tokens.cache_write;
        self.cache_write_1h_tokens += s.tokens.cache_write_1h;
        self.cache_read_tokens += s.tokens.cache_read;
        self.records += 1;
        if s.usd.is_none() {
            self.unpriced_tokens += s.tokens.total();
            let m = s.model.clone().unwrap_or_else(|| "unknown".into());
            if !self.unpriced_models.contains(&m) {
                self.unpriced_models.push(m);
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
/// Returns the unpriced models this project had not seen before — `None` for spend that names
/// no model — so the caller tells the person once, with [`price_hint`], rather than on every
/// record.
pub fn record(
    project: &Project,
    change: Option<&str>,
    session: Option<&str>,
    spends: &[Spend],
) -> Result<Vec<Option<String>>> {
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
    first_sight_of_unpriced(project, spends)
}

/// The models seen unpriced so far in this project (`.tmp/.forge/unpriced-models.json`).
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

fn first_sight_of_unpriced(project: &Project, spends: &[Spend]) -> Result<Vec<Option<String>>> {
    let mut unpriced: Vec<Option<String>> = Vec::new();
    for s in spends.iter().filter(|s| s.usd.is_none()) {
        let m = s.model.as_deref().map(|m| base_model(m).to_string());
        if !unpriced.contains(&m) {
            unpriced.push(m);
        }
    }
    if unpriced.is_empty() {
        return Ok(unpriced);
    }
    let path = project.tmp_dir().join("unpriced-models.json");
    state::update_or_recover(&path, |seen: std::result::Result<Option<Named>, String>| {
        // A broken list only means a model is named again.
        let mut seen = seen.ok().flatten().map_or_else(Vec::new, |n| n.0);
        let new: Vec<Option<String>> = unpriced.into_iter().filter(|m| !seen.contains(m)).collect();
        seen.extend(new.iter().cloned());
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
    pub unpriced_tokens: u64,
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
            unpriced_tokens: l.unpriced_tokens,
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
        if self.unpriced_tokens > 0 {
            parts.push(format!(
                "{} tokens of unpriced models",
                self.unpriced_tokens
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
