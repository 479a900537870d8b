//! What a token costs: the built-in price table (one row per model, with the date it was
//! checked), the families an unlisted model is priced by, and how a model's rate is resolved
//! from the table and `budget.prices`. Money fails closed here: every model gets a rate — its
//! own, else the dearest of its family, else the dearest of all — and never a rate of zero.
//! Reading agents' records and booking spend are left to the rest of `budget`.

use super::{BudgetConfig, Price, Tokens};
use serde::Serialize;

/// The day the rows below were checked against the vendors' price pages.
pub const AS_OF: &str = "2026-12-01";

/// One model's list price, USD per million tokens. `model` is a model-name prefix: a model
/// takes the row of the longest prefix of its name (`claude-opus-4-8[1m]`, `…-20251001`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub model: &'static str,
    pub input: f64,
    pub output: f64,
    /// Cache writes that live 5 minutes (Anthropic), or the cache-write rate of the others.
    pub cache_write: f64,
    /// Cache writes that live 1 hour.
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

const fn row(model: &'static str, i: f64, o: f64, w: f64, w1h: f64, r: f64) -> Row {
    Row {
        model,
        input: i,
        output: o,
        cache_write: w,
        cache_write_1h: w1h,
        cache_read: r,
    }
}

/// The built-in table, as of [`AS_OF`]. Sources: platform.claude.com/docs/en/about-claude/pricing
/// (Anthropic), developers.openai.com/api/docs/pricing (OpenAI, Codex's models),
/// ai.google.dev/gemini-api/docs/pricing (Gemini CLI's models). Where a price has tiers by
/// prompt length (Claude Haiku 5.5 above 100K tokens, Gemini Pro above 200K, GPT-6 above
/// 272K), the row is the short-prompt tier: long prompts cost more than it says.
pub const TABLE: &[Row] = &[
    // Anthropic (Claude Code): input, output, 5-minute write, 1-hour write, cache read.
    row("claude-fable-5-1", 10.0, 50.0, 12.5, 20.0, 0.25),
    row("claude-fable-5", 10.0, 50.0, 12.5, 20.0, 1.0),
    row("claude-mythos-5-1", 10.0, 50.0, 12.5, 20.0, 0.25),
    row("claude-mythos-5", 10.0, 50.0, 12.5, 20.0, 1.0),
    row("claude-opus-5-5", 4.0, 20.0, 5.0, 8.0, 0.2),
    row("claude-opus-5", 5.0, 25.0, 6.25, 10.0, 0.5),
    row("claude-opus-4-8", 5.0, 25.0, 6.25, 10.0, 0.5),
    row("claude-opus-4-7", 5.0, 25.0, 6.25, 10.0, 0.5),
    row("claude-opus-4-6", 5.0, 25.0, 6.25, 10.0, 0.5),
    row("claude-opus-4-5", 5.0, 25.0, 6.25, 10.0, 0.5),
    row("claude-opus-4-1", 15.0, 75.0, 18.75, 30.0, 1.5),
    row("claude-opus-4", 15.0, 75.0, 18.75, 30.0, 1.5),
    row("claude-sonnet-5-5", 2.0, 10.0, 2.5, 4.0, 0.1),
    row("claude-sonnet-5", 2.0, 10.0, 2.5, 4.0, 0.2),
    row("claude-sonnet-4", 3.0, 15.0, 3.75, 6.0, 0.3),
    row("claude-3-7-sonnet", 3.0, 15.0, 3.75, 6.0, 0.3),
    row("claude-3-5-sonnet", 3.0, 15.0, 3.75, 6.0, 0.3),
    row("claude-haiku-5-5", 0.1, 0.5, 0.125, 0.2, 0.01),
    row("claude-haiku-4", 1.0, 5.0, 1.25, 2.0, 0.1),
    row("claude-3-5-haiku", 0.8, 4.0, 1.0, 1.6, 0.08),
    // OpenAI (Codex): cache writes at the input rate (1.25 × from GPT-5.6 on).
    row("gpt-6-astra", 10.0, 50.0, 12.5, 12.5, 1.0),
    row("gpt-6.1-sol", 2.0, 10.0, 2.5, 2.5, 0.1),
    row("gpt-5.6-sol", 4.0, 20.0, 5.0, 5.0, 0.4),
    row("gpt-5.6-terra", 2.0, 12.0, 2.5, 2.5, 0.2),
    row("gpt-5.6-luna", 0.2, 1.2, 0.25, 0.25, 0.02),
    row("gpt-5.5", 5.0, 30.0, 5.0, 5.0, 0.5),
    row("gpt-5.4-mini", 0.75, 4.5, 0.75, 0.75, 0.075),
    row("gpt-5.4", 2.5, 15.0, 2.5, 2.5, 0.25),
    row("gpt-5-mini", 0.25, 2.0, 0.25, 0.25, 0.025),
    row("gpt-5-nano", 0.05, 0.4, 0.05, 0.05, 0.005),
    row("gpt-5", 1.25, 10.0, 1.25, 1.25, 0.125),
    row("gpt-4.1", 2.0, 8.0, 2.0, 2.0, 0.5),
    row("o1", 15.0, 60.0, 15.0, 15.0, 7.5),
    row("o3", 2.0, 8.0, 2.0, 2.0, 0.5),
    row("o4-mini", 1.1, 4.4, 1.1, 1.1, 0.275),
    // Google (Gemini CLI). The Flash-Lite rows (Gemini CLI 0.61's model router runs
    // `gemini-3.5-flash-lite`) are from third-party catalogs (docs.sim.ai's of 2026-07-21,
    // Vercel's AI Gateway), not Google's page.
    row("gemini-3.5-flash-lite", 0.3, 2.5, 0.3, 0.3, 0.03),
    row("gemini-3.1-flash-lite", 0.25, 1.5, 0.25, 0.25, 0.025),
    row("gemini-3.1-pro", 2.0, 12.0, 2.0, 2.0, 0.2),
    row("gemini-3-pro", 2.0, 12.0, 2.0, 2.0, 0.2),
    row("gemini-3-flash", 0.5, 3.0, 0.5, 0.5, 0.05),
    row("gemini-2.5-pro", 1.25, 10.0, 1.25, 1.25, 0.31),
    row("gemini-2.5-flash", 0.3, 2.5, 0.3, 0.3, 0.075),
];

/// A family of models, for pricing one the table does not list: the name it starts with, and
/// a word its name holds after that (`claude-opus-7` is a `claude` name holding `opus`).
pub struct Family {
    pub name: &'static str,
    starts: &'static str,
    holds: &'static str,
    /// The o-series: `o` then a digit (`o3`, `o4-mini`), not every name starting with `o`.
    digit_next: bool,
}

const fn family(name: &'static str, starts: &'static str, holds: &'static str) -> Family {
    Family {
        name,
        starts,
        holds,
        digit_next: false,
    }
}

pub const FAMILIES: &[Family] = &[
    family("claude-fable", "claude", "fable"),
    family("claude-mythos", "claude", "mythos"),
    family("claude-opus", "claude", "opus"),
    family("claude-sonnet", "claude", "sonnet"),
    family("claude-haiku", "claude", "haiku"),
    family("gpt", "gpt-", ""),
    Family {
        name: "o-series",
        starts: "o",
        holds: "",
        digit_next: true,
    },
    family("gemini-pro", "gemini-", "-pro"),
    family("gemini-flash", "gemini-", "flash"),
];

impl Family {
    pub fn of(model: &str) -> Option<&'static Family> {
        FAMILIES.iter().find(|f| f.holds_model(model))
    }

    fn holds_model(&self, model: &str) -> bool {
        let Some(rest) = model.strip_prefix(self.starts) else {
            return false;
        };
        if self.digit_next && !rest.starts_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
        rest.contains(self.holds)
    }
}

/// How a model's rate was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Basis {
    /// Its own row, in `budget.prices` or the built-in table.
    Listed,
    /// No row of its own: the dearest row of its family.
    Family { family: String, like: String },
    /// No row and no family (or no model named): the dearest row of all.
    Dearest { like: String },
}

/// A model's rate and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub price: Price,
    pub basis: Basis,
}

impl Rate {
    pub fn cost(&self, t: &Tokens) -> f64 {
        cost(&self.price, t)
    }

    /// `None` when the model has a price of its own.
    pub fn estimate(&self) -> Option<Estimate> {
        match &self.basis {
            Basis::Listed => None,
            Basis::Family { family, like } => Some(Estimate {
                like: like.clone(),
                family: Some(family.clone()),
                price: self.price,
            }),
            Basis::Dearest { like } => Some(Estimate {
                like: like.clone(),
                family: None,
                price: self.price,
            }),
        }
    }
}

/// A price Forge had to assume for a model with none of its own, and whose it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// The row whose price was used.
    pub like: String,
    /// The model's family, when it has one.
    pub family: Option<String>,
    #[serde(skip)]
    pub price: Price,
}

impl From<&Row> for Price {
    fn from(r: &Row) -> Price {
        Price {
            input: r.input,
            output: r.output,
            cache_write: Some(r.cache_write),
            cache_write_1h: Some(r.cache_write_1h),
            cache_read: Some(r.cache_read),
        }
    }
}

/// USD for `t` at `p`, with Anthropic's multiples of the input rate where `p` names none.
pub fn cost(p: &Price, t: &Tokens) -> f64 {
    let hour = t.cache_write_1h.min(t.cache_write);
    (t.input as f64 * p.input
        + t.output as f64 * p.output
        + (t.cache_write - hour) as f64 * p.cache_write.unwrap_or(p.input * 1.25)
        + hour as f64 * p.cache_write_1h.unwrap_or(p.input * 2.0)
        + t.cache_read as f64 * p.cache_read.unwrap_or(p.input * 0.1))
        / 1e6
}

/// The table in force: the built-in rows, each replaced by a `budget.prices` entry of the same
/// name, then the entries that name new models.
pub fn merged(config: &BudgetConfig) -> Vec<(String, Price)> {
    let mut rows: Vec<(String, Price)> = TABLE
        .iter()
        .map(|r| {
            let p = config.prices.get(r.model).copied().unwrap_or(r.into());
            (r.model.to_string(), p)
        })
        .collect();
    for (k, p) in &config.prices {
        if !TABLE.iter().any(|r| r.model == k) {
            rows.push((k.clone(), *p));
        }
    }
    rows
}

/// Orders prices by what a call costs at them: output first (agents' bills follow it), then
/// input.
fn dearer(a: &Price, b: &Price) -> std::cmp::Ordering {
    a.output
        .total_cmp(&b.output)
        .then(a.input.total_cmp(&b.input))
}

/// The dearest row of the table in force, or of a family: what an unlisted model is priced
/// at. Of rows priced alike, the first (the table lists newer models first).
pub fn dearest<'a>(
    rows: &'a [(String, Price)],
    family: Option<&Family>,
) -> Option<&'a (String, Price)> {
    rows.iter()
        .rev()
        .filter(|(k, _)| family.is_none_or(|f| f.holds_model(k)))
        .max_by(|a, b| dearer(&a.1, &b.1))
}

/// `claude-opus-4-8[1m]` → `claude-opus-4-8`: the `modelUsage` keys carry a context suffix.
pub fn base_model(m: &str) -> &str {
    m.split('[').next().unwrap_or(m).trim()
}

/// The rate of `model`: its own row (the longest prefix in the table in force), else the
/// dearest of its family, else the dearest of all. Never none, never zero by default.
pub fn rate(config: &BudgetConfig, model: Option<&str>) -> Rate {
    let rows = merged(config);
    let m = model.map(base_model).unwrap_or("");
    if !m.is_empty()
        && let Some((_, p)) = rows
            .iter()
            .filter(|(k, _)| m.starts_with(k.as_str()))
            .max_by_key(|(k, _)| k.len())
    {
        return Rate {
            price: *p,
            basis: Basis::Listed,
        };
    }
    let fam = if m.is_empty() { None } else { Family::of(m) };
    if let Some(f) = fam
        && let Some((k, p)) = dearest(&rows, Some(f))
    {
        return Rate {
            price: *p,
            basis: Basis::Family {
                family: f.name.to_string(),
                like: k.clone(),
            },
        };
    }
    let (k, p) = dearest(&rows, None).expect("the built-in table has rows");
    Rate {
        price: *p,
        basis: Basis::Dearest { like: k.clone() },
    }
}
