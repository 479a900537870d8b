//! `forge timeline --html`: one self-contained page (inline CSS and SVG, no script, no network)
//! showing each session on a time axis with its verdicts, breaker moves, guard decisions and
//! spend, the breaker streak per change, cumulative spend, and the events as a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::timeline::{Event, summary};

/// Escapes text for HTML: test output and agent commands end up on this page.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn seconds(ts: &str) -> f64 {
    ts.parse::<jiff::Timestamp>()
        .map(|t| t.as_microsecond() as f64 / 1e6)
        .unwrap_or(0.0)
}

/// Colour and shape of an event's mark.
fn mark(e: &Event) -> (&'static str, &'static str, f64) {
    let d = &e.data;
    let s = |k: &str| d.get(k).and_then(|v| v.as_str()).unwrap_or("");
    match e.kind.as_str() {
        "verify" if s("verdict") == "PASS" => ("#1a7f37", "circle", 7.0),
        "verify" => ("#cf222e", "circle", 7.0),
        "breaker" if s("event") == "opened" || s("event") == "still-open" => {
            ("#82071e", "square", 9.0)
        }
        "breaker" if s("event") == "reset" => ("#0969da", "diamond", 9.0),
        "breaker" => ("#9a6700", "square", 5.0),
        "guard" if s("decision") == "deny" => ("#bc4c00", "cross", 7.0),
        "guard" if s("decision") == "ask" => ("#bf8700", "cross", 6.0),
        "guard" => ("#8c959f", "tick", 4.0),
        "budget" => ("#8250df", "circle", 5.0),
        "repair" => ("#000000", "diamond", 6.0),
        "net" if s("decision") == "refused" => ("#bc4c00", "cross", 6.0),
        _ => ("#afb8c1", "circle", 3.0),
    }
}

fn shape(o: &mut String, kind: &str, x: f64, y: f64, r: f64, color: &str, title: &str) {
    let t = format!("<title>{}</title>", esc(title));
    let _ = match kind {
        "square" => write!(
            o,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}">{t}</rect>"#,
            x - r / 2.0,
            y - r / 2.0,
            r,
            r
        ),
        "diamond" => write!(
            o,
            r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{color}">{t}</polygon>"#,
            x,
            y - r,
            x + r,
            y,
            x,
            y + r,
            x - r,
            y
        ),
        "cross" => write!(
            o,
            r#"<path d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="{color}" stroke-width="2.5">{t}</path>"#,
            x - r / 2.0,
            y - r / 2.0,
            x + r / 2.0,
            y + r / 2.0,
            x - r / 2.0,
            y + r / 2.0,
            x + r / 2.0,
            y - r / 2.0
        ),
        "tick" => write!(
            o,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5">{t}</line>"#,
            y - r,
            y + r
        ),
        _ => write!(
            o,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{:.1}" fill="{color}">{t}</circle>"#,
            r / 1.4
        ),
    };
}

pub fn render(events: &[Event]) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Forge timeline</title><style>
body{{font:14px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1f2328;background:#fff}}
h1{{font-size:20px;margin:0 0 4px}} h2{{font-size:16px;margin:24px 0 8px}} .muted{{color:#656d76}}
svg{{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px}} text{{font-size:11px;fill:#424a53}}
table{{border-collapse:collapse;width:100%;font-size:12px}} td,th{{border-bottom:1px solid #eaeef2;padding:3px 6px;text-align:left;vertical-align:top}}
th{{background:#f6f8fa}} .k-verify{{font-weight:600}} .legend span{{margin-right:14px}} code{{font-size:12px}}
</style></head><body><h1>Forge timeline</h1>"#
    );
    if events.is_empty() {
        o.push_str("<p class=\"muted\">No events.</p></body></html>\n");
        return o;
    }
    let t0 = events
        .iter()
        .map(|e| seconds(&e.ts))
        .fold(f64::MAX, f64::min);
    let t1 = events
        .iter()
        .map(|e| seconds(&e.ts))
        .fold(f64::MIN, f64::max)
        .max(t0 + 1.0);
    let mut sessions: Vec<&str> = Vec::new();
    for e in events {
        if !sessions.contains(&e.session.as_str()) {
            sessions.push(&e.session);
        }
    }
    let verdicts = |v: &str| {
        events
            .iter()
            .filter(|e| {
                e.kind == "verify" && e.data.get("verdict").and_then(|x| x.as_str()) == Some(v)
            })
            .count()
    };
    let denials = events
        .iter()
        .filter(|e| {
            e.kind == "guard" && e.data.get("decision").and_then(|x| x.as_str()) == Some("deny")
        })
        .count();
    let spend: f64 = events
        .iter()
        .filter(|e| e.kind == "budget")
        .filter_map(|e| e.data.get("usd").and_then(|x| x.as_f64()))
        .sum();
    let _ = write!(
        o,
        r#"<p class="muted">{} events in {} session(s), {} → {} · verify: {} PASS, {} FAIL · guard denials: {} · spend: ${:.4}</p>"#,
        events.len(),
        sessions.len(),
        esc(&events[0].ts),
        esc(&events[events.len() - 1].ts),
        verdicts("PASS"),
        verdicts("FAIL"),
        denials,
        spend
    );
    o.push_str(r##"<p class="legend"><span style="color:#1a7f37">● PASS</span><span style="color:#cf222e">● FAIL</span><span style="color:#82071e">■ circuit open</span><span style="color:#0969da">◆ reset</span><span style="color:#bc4c00">✕ guard deny</span><span style="color:#bf8700">✕ ask</span><span style="color:#8c959f">| allowed</span><span style="color:#8250df">● spend</span></p>"##);

    // Sessions on a time axis.
    let (w, left, lane) = (1100.0, 190.0, 34.0);
    let h = 40.0 + lane * sessions.len() as f64;
    let x = |t: f64| left + (t - t0) / (t1 - t0) * (w - left - 20.0);
    o.push_str("<h2>Sessions</h2>");
    let _ = write!(
        o,
        r#"<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="sessions on a time axis">"#
    );
    for i in 0..=4 {
        let t = t0 + (t1 - t0) * i as f64 / 4.0;
        let label = jiff::Timestamp::from_microsecond((t * 1e6) as i64)
            .map(|ts| ts.strftime("%H:%M:%S").to_string())
            .unwrap_or_default();
        let _ = write!(
            o,
            r##"<line x1="{0:.1}" y1="20" x2="{0:.1}" y2="{1:.1}" stroke="#d0d7de"/><text x="{0:.1}" y="14" text-anchor="middle">{2}</text>"##,
            x(t),
            h - 6.0,
            label
        );
    }
    for (i, s) in sessions.iter().enumerate() {
        let y = 40.0 + lane * i as f64;
        let _ = write!(
            o,
            r##"<text x="8" y="{:.1}">{}</text><line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eaeef2"/>"##,
            y + 4.0,
            esc(&crate::text::clip(s, 28)),
            w - 20.0
        );
        for e in events.iter().filter(|e| e.session == *s) {
            let (color, kind, r) = mark(e);
            let title = format!("{} {} {} {}", e.ts, e.actor, e.kind, summary(e));
            shape(&mut o, kind, x(seconds(&e.ts)), y, r, color, &title);
        }
    }
    o.push_str("</svg>");

    // Breaker streak per change, as a step line.
    let mut changes: BTreeMap<&str, Vec<(f64, u64, bool)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "breaker") {
        if let Some(c) = &e.change {
            let n = e
                .data
                .get("consecutive_failures")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let open = e
                .data
                .get("open")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            changes
                .entry(c)
                .or_default()
                .push((seconds(&e.ts), n, open));
        }
    }
    if !changes.is_empty() {
        o.push_str("<h2>Breaker streak per change</h2>");
        let band = 60.0;
        let h = 20.0 + band * changes.len() as f64;
        let _ = write!(
            o,
            r#"<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="breaker streak">"#
        );
        for (i, (c, pts)) in changes.iter().enumerate() {
            let base = 10.0 + band * (i as f64 + 1.0) - 8.0;
            let top = pts.iter().map(|p| p.1).max().unwrap_or(1).max(1) as f64;
            let y = |n: u64| base - (n as f64 / top) * (band - 20.0);
            let _ = write!(o, r#"<text x="8" y="{:.1}">{}</text>"#, base - 10.0, esc(c));
            let mut d = format!("M{:.1},{:.1}", x(pts[0].0), y(0));
            for p in pts {
                let _ = write!(d, " H{:.1} V{:.1}", x(p.0), y(p.1));
            }
            let _ = write!(d, " H{:.1}", w - 20.0);
            let _ = write!(
                o,
                r##"<path d="{d}" fill="none" stroke="#9a6700" stroke-width="2"/>"##
            );
            for p in pts.iter().filter(|p| p.2) {
                shape(
                    &mut o,
                    "square",
                    x(p.0),
                    y(p.1),
                    8.0,
                    "#82071e",
                    &format!("circuit open at {} failures", p.1),
                );
            }
        }
        o.push_str("</svg>");
    }

    // Cumulative spend.
    let spends: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e.kind == "budget")
        .filter_map(|e| {
            e.data
                .get("usd")
                .and_then(|v| v.as_f64())
                .map(|u| (seconds(&e.ts), u))
        })
        .collect();
    if !spends.is_empty() {
        o.push_str("<h2>Cumulative spend</h2>");
        let hh = 140.0;
        let total: f64 = spends.iter().map(|s| s.1).sum::<f64>().max(1e-9);
        let _ = write!(
            o,
            r#"<svg width="{w}" height="{hh}" viewBox="0 0 {w} {hh}" role="img" aria-label="cumulative spend">"#
        );
        let mut acc = 0.0;
        let mut d = format!("M{:.1},{:.1}", x(t0), hh - 10.0);
        for (t, u) in &spends {
            acc += u;
            let _ = write!(
                d,
                " H{:.1} V{:.1}",
                x(*t),
                hh - 10.0 - acc / total * (hh - 30.0)
            );
        }
        let _ = write!(
            o,
            r##"<path d="{d}" fill="none" stroke="#8250df" stroke-width="2"/><text x="8" y="16">${total:.4} total</text></svg>"##
        );
    }

    // Events as a table (newest first, at most 2,000).
    o.push_str("<h2>Events</h2><table><tr><th>time</th><th>session</th><th>actor</th><th>kind</th><th>change</th><th>what</th></tr>");
    for e in events.iter().rev().take(2000) {
        let _ = write!(
            o,
            r#"<tr><td>{}</td><td>{}</td><td>{}</td><td class="k-{}">{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&e.ts),
            esc(&crate::text::clip(&e.session, 24)),
            esc(&e.actor),
            esc(&e.kind),
            esc(&e.kind),
            esc(e.change.as_deref().unwrap_or("")),
            esc(&summary(e))
        );
    }
    o.push_str("</table></body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s/timeline.jsonl");
        crate::timeline::append(&p, "s", Some("c"), "claude:s", "guard", serde_json::json!({"decision": "deny", "rule": "rm-repo", "tool": "Bash", "target": "<script>alert(1)</script>"})).unwrap();
        crate::timeline::append(
            &p,
            "s",
            Some("c"),
            "human:ada",
            "verify",
            serde_json::json!({"verdict": "FAIL", "passed": 1, "failed": 1}),
        )
        .unwrap();
        crate::timeline::append(&p, "s", Some("c"), "human:ada", "breaker", serde_json::json!({"event": "opened", "consecutive_failures": 3, "max_failures": 3, "open": true})).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let events: Vec<Event> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let html = render(&events);
        assert!(!html.contains("<script>"), "unescaped agent input");
        assert!(html.contains("&lt;script&gt;"));
        assert!(
            !html.contains("http://") && !html.contains("https://") && !html.contains("src="),
            "no network"
        );
        assert!(html.contains("Breaker streak per change"));
        assert!(html.contains("verify: 0 PASS, 1 FAIL"));
    }
}
