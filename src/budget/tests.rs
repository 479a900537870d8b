//! The spend budget's unit tests, on real agent outputs (`tests/fixtures/spend/`).

use super::*;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spend");

#[test]
fn built_in_prices_match_a_real_claude_run() {
    // From a real `claude -p` result: 7,289 input + 131 output tokens = $0.03972.
    let t = Tokens {
        input: 7289,
        output: 131,
        ..Tokens::default()
    };
    let (usd, estimate) = price(&BudgetConfig::default(), Some("claude-opus-4-8[1m]"), &t);
    assert!((usd - 0.03972).abs() < 1e-9, "{usd}");
    assert_eq!(estimate, None);
}

#[test]
fn claude_json_result() {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/claude-p-result.json")).unwrap(),
    )
    .unwrap();
    let s = from_claude_json(&v, &BudgetConfig::default()).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!((s[0].tokens.input, s[0].tokens.output), (7289, 131));
    assert_eq!((s[0].usd, &s[0].estimate), (0.03972, &None));
}

#[test]
fn transcript_is_read_incrementally_and_deduplicated() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let real = std::fs::read_to_string(format!("{FIX}/claude-transcript.jsonl")).unwrap();
    std::fs::write(&t, &real).unwrap();
    let cfg = BudgetConfig::default();
    let cur = dir.path().join("cursors");
    let first = ingest_transcript(&t, &cur, &cfg).unwrap();
    let total: u64 = first.iter().map(|s| s.tokens.total()).sum();
    // The real session: four assistant messages, 7,289 input and 131 output tokens in all
    // (matching the `claude -p` result of the same run).
    assert_eq!(first.iter().map(|s| s.tokens.input).sum::<u64>(), 7289);
    assert_eq!(first.iter().map(|s| s.tokens.output).sum::<u64>(), 131);
    assert_eq!(total, 7420);
    // Nothing new: nothing counted again.
    assert!(ingest_transcript(&t, &cur, &cfg).unwrap().is_empty());
    // A repeated line of an already counted message (several content blocks) is not counted.
    let dup = real.lines().find(|l| l.contains("\"assistant\"")).unwrap();
    let mut f = std::fs::OpenOptions::new().append(true).open(&t).unwrap();
    use std::io::Write;
    writeln!(f, "{dup}").unwrap();
    assert!(ingest_transcript(&t, &cur, &cfg).unwrap().is_empty());
    // A new message is.
    let new = dup
        .replace("msg_000000000000000000000002", "msg_new")
        .replace("\"input_tokens\":1669", "\"input_tokens\":10");
    writeln!(f, "{new}").unwrap();
    let s = ingest_transcript(&t, &cur, &cfg).unwrap();
    assert_eq!(s[0].tokens.input, 10);
}

#[test]
fn codex_and_gemini_results() {
    let text = std::fs::read_to_string(format!("{FIX}/codex-exec.jsonl")).unwrap();
    let s = from_codex_jsonl(&text, Some("gpt-5"), &BudgetConfig::default());
    assert_eq!((s[0].tokens.input, s[0].tokens.output), (400, 40));
    assert!((s[0].usd - (400.0 * 1.25 + 40.0 * 10.0) / 1e6).abs() < 1e-12);
    // Codex does not name its model: an unnamed model is priced as the dearest in the table.
    let unknown = from_codex_jsonl(&text, None, &BudgetConfig::default());
    let dearest = rate(&BudgetConfig::default(), Some("mystery-model-9"));
    assert!(unknown[0].usd > s[0].usd, "{unknown:?}");
    assert_eq!(unknown[0].usd, dearest.cost(&unknown[0].tokens));
    assert!(matches!(dearest.basis, Basis::Dearest { .. }));
    // Shape from the Gemini CLI headless documentation.
    let g: Value = serde_json::from_str(r#"{"response":"ok","stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":2,"totalErrors":0,"totalLatencyMs":1800},"tokens":{"prompt":1200,"candidates":300,"total":1550,"cached":200,"thoughts":50,"tool":0}}},"tools":{"totalCalls":1},"files":{"totalLinesAdded":3,"totalLinesRemoved":0}}}"#).unwrap();
    let s = from_gemini_json(&g, &BudgetConfig::default()).unwrap();
    assert_eq!(
        (
            s[0].tokens.input,
            s[0].tokens.output,
            s[0].tokens.cache_read
        ),
        (1000, 350, 200)
    );
    assert!(s[0].usd > 0.0 && s[0].estimate.is_none());
}

#[test]
fn a_limit_change_is_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let mut cfg = BudgetConfig {
        change: Limit {
            usd: Some(1.0),
            tokens: None,
        },
        ..BudgetConfig::default()
    };
    note_limit_changes(&p, &cfg);
    note_limit_changes(&p, &cfg);
    assert!(
        crate::timeline::files(dir.path()).unwrap().is_empty(),
        "first sight records nothing"
    );
    cfg.change.usd = Some(9.0);
    note_limit_changes(&p, &cfg);
    note_limit_changes(&p, &cfg);
    let evs = crate::timeline::read(dir.path(), &Default::default()).unwrap();
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].data["event"], "limits-changed");
    assert_eq!(evs[0].data["to"]["change"]["usd"], 9.0);
    assert!(evs[0].actor.starts_with("human:"));
}

/// Copies a fixture folder tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn subagent_transcripts_count_and_cache_writes_are_priced_by_their_ttl() {
    // A real Claude Code 2.1.197 session (agent rig, fake_cache_model.py): the main agent
    // (claude-opus-4-8) writes 1,000 cache tokens for 5 minutes and 2,000 for an hour, then
    // starts a subagent (claude-haiku-4-5) that writes 4,000 for 5 minutes. The client's
    // own total for it all is in result.json.
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new(&format!("{FIX}/claude-subagents")), dir.path());
    let main = dir
        .path()
        .join("0b8b9da3-7a02-4252-bc16-461e8db8eb36.jsonl");
    assert_eq!(subagent_transcripts(&main).len(), 1);
    let cfg = BudgetConfig::default();
    let cur = dir.path().join("cursors");
    let s = ingest_transcript(&main, &cur, &cfg).unwrap();
    let by = |src: &str| s.iter().find(|x| x.source == src).unwrap();
    let (m, sub) = (by("claude-transcript"), by("claude-subagent"));
    assert_eq!(m.model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!(
        (
            m.tokens.cache_write,
            m.tokens.cache_write_1h,
            m.tokens.cache_read
        ),
        (3000, 2000, 3000)
    );
    assert_eq!(sub.model.as_deref(), Some("claude-haiku-4-5-20251001"));
    assert_eq!((sub.tokens.input, sub.tokens.output), (16, 45));
    assert_eq!(
        (sub.tokens.cache_write, sub.tokens.cache_write_1h),
        (4000, 0)
    );
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/claude-subagents/result.json")).unwrap(),
    )
    .unwrap();
    let total: f64 = s.iter().map(|x| x.usd).sum();
    let claude = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (total - claude).abs() < 1e-9,
        "Forge ${total} vs Claude Code ${claude}"
    );
    for (model, u) in result["modelUsage"].as_object().unwrap() {
        let ours = s
            .iter()
            .find(|x| model.starts_with(x.model.as_deref().unwrap()))
            .unwrap();
        let theirs = u["costUSD"].as_f64().unwrap();
        assert!(
            (ours.usd - theirs).abs() < 1e-9,
            "{model}: {ours:?} vs {theirs}"
        );
    }
    // Read once: a second call finds nothing new in either file, and rewrites no cursor
    // (the hooks run this on every tool call, for every subagent of the session).
    let stamps = || -> Vec<_> {
        std::fs::read_dir(&cur)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().modified().unwrap())
            .collect()
    };
    let before = stamps();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(ingest_transcript(&main, &cur, &cfg).unwrap().is_empty());
    assert_eq!(stamps(), before);
}

#[test]
fn limits_read_as_written() {
    assert_eq!(dollars(5.0), "5.00");
    assert_eq!(dollars(0.045), "0.045");
    assert_eq!(dollars(7.5), "7.50");
}

#[test]
fn a_one_hour_cache_write_costs_more_than_a_five_minute_one() {
    let cfg = BudgetConfig::default();
    let five = Tokens {
        cache_write: 1_000_000,
        ..Tokens::default()
    };
    let hour = Tokens {
        cache_write_1h: 1_000_000,
        ..five
    };
    let m = Some("claude-sonnet-4-5");
    assert_eq!(price(&cfg, m, &five).0, 3.75);
    assert_eq!(price(&cfg, m, &hour).0, 6.0);
    // A configured price may name its own 1-hour rate.
    let mut cfg = BudgetConfig::default();
    cfg.prices.insert(
        "my-model".into(),
        Price {
            input: 1.0,
            output: 2.0,
            cache_write: None,
            cache_write_1h: Some(3.0),
            cache_read: None,
        },
    );
    assert_eq!(price(&cfg, Some("my-model-1"), &hour), (3.0, None));
    assert_eq!(price(&cfg, Some("my-model-1"), &five), (1.25, None));
}

#[test]
fn a_model_priced_by_estimate_is_named_once_per_project() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let cfg = BudgetConfig::default();
    let spend = |model: Option<&str>| {
        let tokens = Tokens {
            input: 10,
            ..Tokens::default()
        };
        let (usd, estimate) = price(&cfg, model, &tokens);
        Spend {
            source: "codex-json".into(),
            model: model.map(str::to_string),
            tokens,
            usd,
            estimate,
        }
    };
    let named = |n: Vec<PriceNotice>| n.into_iter().map(|n| n.model).collect::<Vec<_>>();
    let first = record(
        &p,
        Some("c"),
        Some("s"),
        &[spend(Some("mystery-9")), spend(None), spend(Some("gpt-5"))],
    )
    .unwrap();
    assert_eq!(named(first), [Some("mystery-9".to_string()), None]);
    assert!(
        record(&p, Some("d"), Some("t"), &[spend(Some("mystery-9"))])
            .unwrap()
            .is_empty()
    );
    let other = record(&p, Some("c"), None, &[spend(Some("claude-opus-9"))]).unwrap();
    assert_eq!(other[0].model.as_deref(), Some("claude-opus-9"));
    let hint = other[0].hint();
    assert!(
        hint.contains("has no price in Forge's table (of ")
            && hint.contains(
                "dearest known model of its family (claude-opus), `claude-opus-4-1` ($15/$75"
            )
            && hint.contains("USD limits still apply")
            && hint.contains("budget:\n    prices:\n      \"claude-opus-9\": { input:"),
        "{hint}"
    );
    assert_eq!(other[0].event()["event"], "estimated-price");
    assert_eq!(other[0].event()["like"], "claude-opus-4-1");
    let e = rate(&cfg, None).estimate().unwrap();
    assert!(price_hint(None, &e).contains("--model"));
    assert!(price_hint(Some("x"), &e).contains("the dearest model in the price table"));
}

#[test]
fn remaining_dollars_are_the_tightest_usd_limit_left() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let mut cfg = BudgetConfig::default();
    assert_eq!(remaining_usd(&p, &cfg, Some("c"), Some("s")).unwrap(), None);
    let paid = Spend {
        source: "manual".into(),
        model: None,
        tokens: Tokens::default(),
        usd: 1.5,
        estimate: None,
    };
    record(&p, Some("c"), Some("s"), &[paid]).unwrap();
    cfg.change.usd = Some(5.0);
    assert_eq!(
        remaining_usd(&p, &cfg, Some("c"), Some("s")).unwrap(),
        Some(3.5)
    );
    cfg.session.usd = Some(2.0);
    assert_eq!(
        remaining_usd(&p, &cfg, Some("c"), Some("s")).unwrap(),
        Some(0.5)
    );
    cfg.session.usd = Some(1.0);
    assert_eq!(
        remaining_usd(&p, &cfg, Some("c"), Some("s")).unwrap(),
        Some(0.0)
    );
}

#[test]
fn ledgers_flag_estimated_prices_and_standings_compare_to_limits() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let spends = vec![
        Spend {
            source: "manual".into(),
            model: None,
            tokens: Tokens::default(),
            usd: 1.5,
            estimate: None,
        },
        Spend {
            source: "codex-json".into(),
            model: Some("mystery".into()),
            tokens: Tokens {
                input: 100,
                ..Tokens::default()
            },
            usd: 0.25,
            estimate: rate(&BudgetConfig::default(), Some("mystery")).estimate(),
        },
    ];
    record(&p, Some("c"), Some("s"), &spends).unwrap();
    let l = load_ledger(&change_ledger_path(&p, "c")).unwrap();
    assert_eq!((l.usd, l.estimated_tokens, l.records), (1.75, 100, 2));
    assert_eq!(l.estimated_models, ["mystery"]);
    let cfg = BudgetConfig {
        change: Limit {
            usd: Some(1.0),
            tokens: None,
        },
        session: Limit {
            usd: Some(1.8),
            tokens: None,
        },
        ..BudgetConfig::default()
    };
    let st = standings(&p, &cfg, Some("c"), Some("s")).unwrap();
    assert!(st[0].over);
    assert!(!st[1].over && st[1].warn);
    // Fail closed on a tampered ledger.
    std::fs::write(change_ledger_path(&p, "c"), "usd: -5\n").unwrap();
    assert!(standings(&p, &cfg, Some("c"), None).is_err());
}

#[test]
fn a_limit_is_shown_as_written_not_rounded_to_cents() {
    assert_eq!(LimitKey::ChangeUsd.show(Some(0.045)), "$0.045");
    assert_eq!(LimitKey::SessionUsd.show(Some(0.095)), "$0.095");
    assert_eq!(LimitKey::ChangeUsd.show(Some(5.0)), "$5.00");
    assert_eq!(LimitKey::ChangeUsd.show(None), "no limit");
}

#[test]
fn current_default_models_have_their_own_price() {
    let cfg = BudgetConfig::default();
    let m = Tokens {
        input: 1_000_000,
        output: 1_000_000,
        ..Tokens::default()
    };
    // Claude Code ≥ 2.1.220 runs claude-opus-5 and claude-opus-5-5 by default; Codex the
    // gpt-5.6 tiers; Gemini CLI gemini-3.1-pro and gemini-3-flash, and its router's Flash-Lite.
    for (model, usd) in [
        ("claude-opus-5", 30.0),
        ("claude-opus-5[1m]", 30.0),
        ("claude-opus-5-5", 24.0),
        ("claude-opus-5-5-20260915", 24.0),
        ("claude-sonnet-5-5", 12.0),
        ("claude-haiku-5-5", 0.6),
        ("gpt-5.6-terra", 14.0),
        ("gemini-3.1-pro-preview", 14.0),
        ("gemini-3-flash-preview", 3.5),
        // Gemini CLI 0.61's model router.
        ("gemini-3.5-flash-lite", 2.8),
    ] {
        assert_eq!(price(&cfg, Some(model), &m), (usd, None), "{model}");
    }
    // Opus 5.5 reads its cache at 0.05 × input, not the usual 0.1 ×.
    let read = Tokens {
        cache_read: 1_000_000,
        ..Tokens::default()
    };
    assert_eq!(price(&cfg, Some("claude-opus-5-5"), &read).0, 0.2);
}

#[test]
fn an_unlisted_model_is_priced_by_its_family_and_never_free() {
    let cfg = BudgetConfig::default();
    for (model, family, like) in [
        ("claude-opus-7", Some("claude-opus"), "claude-opus-4-1"),
        (
            "claude-3-opus-20240229",
            Some("claude-opus"),
            "claude-opus-4-1",
        ),
        ("claude-sonnet-9", Some("claude-sonnet"), "claude-sonnet-4"),
        ("claude-haiku-9", Some("claude-haiku"), "claude-haiku-4"),
        ("claude-fable-6", Some("claude-fable"), "claude-fable-5-1"),
        ("gpt-7", Some("gpt"), "gpt-6-astra"),
        ("o9-mini", Some("o-series"), "o1"),
        ("gemini-4-pro", Some("gemini-pro"), "gemini-3.1-pro"),
        (
            "gemini-4-flash-lite",
            Some("gemini-flash"),
            "gemini-3-flash",
        ),
        ("mystery-model-9", None, "claude-opus-4-1"),
        ("ollama-llama", None, "claude-opus-4-1"),
    ] {
        let r = rate(&cfg, Some(model));
        let e = r.estimate().unwrap_or_else(|| panic!("{model} is listed"));
        assert_eq!(
            (e.family.as_deref(), e.like.as_str()),
            (family, like),
            "{model}"
        );
        assert_eq!(r.price, rate(&cfg, Some(like)).price, "{model}");
        assert!(r.price.input > 0.0 && r.price.output > 0.0, "{model}");
    }
    // No model named at all: the dearest of the table.
    assert_eq!(
        rate(&cfg, None).basis,
        Basis::Dearest {
            like: "claude-opus-4-1".into()
        }
    );
}

#[test]
fn the_table_has_one_row_per_model_every_family_a_row_and_a_date() {
    use prices::{FAMILIES, TABLE};
    for (i, r) in TABLE.iter().enumerate() {
        assert!(
            !TABLE[..i].iter().any(|o| o.model == r.model),
            "{} twice",
            r.model
        );
        assert!(
            [
                r.input,
                r.output,
                r.cache_write,
                r.cache_write_1h,
                r.cache_read
            ]
            .iter()
            .all(|&x| x > 0.0),
            "{}",
            r.model
        );
        assert_eq!(
            rate(&BudgetConfig::default(), Some(r.model)).basis,
            Basis::Listed
        );
    }
    let rows = prices::merged(&BudgetConfig::default());
    for f in FAMILIES {
        assert!(prices::dearest(&rows, Some(f)).is_some(), "{}", f.name);
    }
    let d: Vec<&str> = AS_OF.split('-').collect();
    assert!(d.len() == 3 && d[0].len() == 4 && d.iter().all(|p| p.parse::<u32>().is_ok()));
}

#[test]
fn config_prices_add_override_and_set_the_family_price() {
    let mut cfg = BudgetConfig::default();
    let p = |input, output| Price {
        input,
        output,
        cache_write: None,
        cache_write_1h: None,
        cache_read: None,
    };
    cfg.prices.insert("claude-opus-5".into(), p(6.0, 30.0));
    cfg.prices.insert("claude-opus-9".into(), p(50.0, 250.0));
    let m = Tokens {
        output: 1_000_000,
        ..Tokens::default()
    };
    assert_eq!(price(&cfg, Some("claude-opus-5"), &m), (30.0, None));
    assert_eq!(price(&cfg, Some("claude-opus-9-1"), &m), (250.0, None));
    // An unlisted opus is now priced as the dearest opus the config knows.
    let (usd, e) = price(&cfg, Some("claude-opus-8"), &m);
    assert_eq!((usd, e.unwrap().like.as_str()), (250.0, "claude-opus-9"));
    let rows = prices::merged(&cfg);
    assert_eq!(rows.len(), prices::TABLE.len() + 1);
}

#[test]
fn claude_json_takes_the_clients_cost_for_an_unlisted_model() {
    let text = std::fs::read_to_string(format!("{FIX}/claude-p-result.json")).unwrap();
    let v: Value = serde_json::from_str(&text.replace("claude-opus-4-8", "claude-opus-7")).unwrap();
    let s = from_claude_json(&v, &BudgetConfig::default()).unwrap();
    assert_eq!((s[0].usd, &s[0].estimate), (0.03972, &None));
    // Without the client's cost: the family's dearest price, flagged as an estimate.
    let mut v = v;
    for (_, u) in v["modelUsage"].as_object_mut().unwrap() {
        u.as_object_mut().unwrap().remove("costUSD");
    }
    let s = from_claude_json(&v, &BudgetConfig::default()).unwrap();
    assert!(
        (s[0].usd - (7289.0 * 15.0 + 131.0 * 75.0) / 1e6).abs() < 1e-12,
        "{s:?}"
    );
    assert_eq!(s[0].estimate.as_ref().unwrap().like, "claude-opus-4-1");
}

const PLACEHOLDER: &str = "claude-placeholder";
const PLACEHOLDER_SESSION: &str = "5e1b0c6a-2f4d-4c1e-9a7b-3d2f1e0c9b8a";
const PLACEHOLDER_AGENT: &str =
    "5e1b0c6a-2f4d-4c1e-9a7b-3d2f1e0c9b8a/subagents/agent-b7c2e19f40a6d3185.jsonl";

#[test]
fn a_placeholder_output_figure_is_never_booked() {
    // A session on claude-opus-5-5 (4/20 per million, 5-minute writes 5, 1-hour 8, reads
    // 0.2) whose subagent's stream was slow: message A's first two lines say
    // `output_tokens: 1`, its third 212; message B's final figure never came, and its text is
    // 1,200 characters (a floor of 300 tokens).
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new(&format!("{FIX}/{PLACEHOLDER}")), dir.path());
    let main = dir.path().join(format!("{PLACEHOLDER_SESSION}.jsonl"));
    let s =
        ingest_transcript(&main, &dir.path().join("cursors"), &BudgetConfig::default()).unwrap();
    let by = |src: &str| s.iter().find(|x| x.source == src).unwrap();
    let (m, sub) = (by("claude-transcript"), by("claude-subagent"));
    assert_eq!(m.model.as_deref(), Some("claude-opus-5-5"));
    assert_eq!((m.tokens.output, m.estimate.is_none()), (96, true));
    assert!((m.usd - (3.0 * 4.0 + 96.0 * 20.0 + 20000.0 * 8.0) / 1e6).abs() < 1e-12);
    assert_eq!(sub.tokens.output, 212 + 300, "{sub:?}");
    assert_eq!(
        (
            sub.tokens.input,
            sub.tokens.cache_write,
            sub.tokens.cache_read
        ),
        (13, 6000, 6000)
    );
    let want = (13.0 * 4.0 + 512.0 * 20.0 + 6000.0 * 5.0 + 6000.0 * 0.2) / 1e6;
    assert!((sub.usd - want).abs() < 1e-12, "{} vs {want}", sub.usd);
}

/// Reads `file` in two parts, cut after line `cut`, and returns the summed spend: what the
/// hooks book when a transcript grows between two calls.
fn read_in_two(file: &Path, cut: usize) -> (u64, u64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let cur = dir.path().join("cursors");
    let cfg = BudgetConfig::default();
    std::fs::write(&t, lines[..cut].concat()).unwrap();
    let mut all = ingest_transcript(&t, &cur, &cfg).unwrap();
    std::fs::write(&t, lines.concat()).unwrap();
    all.extend(ingest_transcript(&t, &cur, &cfg).unwrap());
    // Nothing new: nothing booked again.
    assert!(ingest_transcript(&t, &cur, &cfg).unwrap().is_empty());
    (
        all.iter().map(|s| s.tokens.output).sum(),
        all.iter().map(|s| s.tokens.total()).sum(),
        all.iter().map(|s| s.usd).sum(),
    )
}

#[test]
fn a_later_line_that_raises_the_figure_books_the_difference_once() {
    let f = Path::new(FIX).join(PLACEHOLDER).join(PLACEHOLDER_AGENT);
    let whole = read_in_two(&f, 0);
    assert_eq!(whole.0, 512);
    let n = std::fs::read_to_string(&f).unwrap().lines().count();
    for cut in 1..n {
        let (out, total, usd) = read_in_two(&f, cut);
        assert_eq!((out, total), (whole.0, whole.1), "cut after line {cut}");
        assert!((usd - whole.2).abs() < 1e-12, "cut after line {cut}: {usd}");
    }
}

#[test]
fn a_transcript_line_of_an_unlisted_model_is_booked_at_the_clients_cost() {
    // claude-opus-7: message C's lines carry `costUSD` (0.05 with a placeholder, then 0.06
    // with the final 300 tokens); message D's carry none, so it is priced as the dearest opus
    // (claude-opus-4-1, 15/75): 1,000 × 15 + 50 × 75 = $0.01875.
    let f = Path::new(FIX)
        .join(PLACEHOLDER)
        .join("unlisted-model.jsonl");
    let (out, _, usd) = read_in_two(&f, 0);
    assert_eq!(out, 350);
    assert!((usd - (0.06 + 0.01875)).abs() < 1e-12, "{usd}");
    let n = std::fs::read_to_string(&f).unwrap().lines().count();
    for cut in 1..n {
        let (o, _, u) = read_in_two(&f, cut);
        assert_eq!(o, 350, "cut after line {cut}");
        assert!((u - usd).abs() < 1e-12, "cut after line {cut}: {u}");
    }
    let dir = tempfile::tempdir().unwrap();
    let s = ingest_transcript(&f, dir.path(), &BudgetConfig::default()).unwrap();
    assert_eq!(s[0].estimate.as_ref().unwrap().like, "claude-opus-4-1");
}

#[test]
fn a_cursor_written_before_the_raised_figures_still_reads() {
    // What Forge wrote before it kept per-message figures: ids only.
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    std::fs::copy(format!("{FIX}/claude-transcript.jsonl"), &t).unwrap();
    let cur = dir.path().join("cursors");
    let cfg = BudgetConfig::default();
    assert!(!ingest_transcript(&t, &cur, &cfg).unwrap().is_empty());
    let file = std::fs::read_dir(&cur)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("open");
    std::fs::write(&file, v.to_string()).unwrap();
    assert!(ingest_transcript(&t, &cur, &cfg).unwrap().is_empty());
}

#[test]
fn a_ledger_written_before_estimates_still_parses() {
    // Ledgers are committed, and one that does not parse denies every tool call: the keys of
    // earlier versions (`unpriced_*`, tokens then booked at $0) read as the estimated ones.
    let old = "usd: 0.5\ntokens: 100\ninput_tokens: 100\noutput_tokens: 0\ncache_write_tokens: 0\ncache_write_1h_tokens: 0\ncache_read_tokens: 0\nunpriced_tokens: 100\nrecords: 1\nunpriced_models: [\"mystery\"]\n";
    let l = Ledger::parse(old).unwrap();
    assert_eq!(
        (l.estimated_tokens, l.estimated_models.as_slice()),
        (100, &["mystery".to_string()][..])
    );
    assert!(l.render().contains("estimated_tokens: 100\n"));
}

/// Reads `f` as a session's running record would grow: its first `cut` lines, then the rest,
/// then nothing new; returns all the spend booked.
fn grown_in_two(f: &Path, cut: usize, read: ReadRecord) -> Vec<Spend> {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join(f.file_name().unwrap());
    let text = std::fs::read_to_string(f).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(
        &t,
        lines[..cut]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let (cur, cfg) = (dir.path().join("cursors"), BudgetConfig::default());
    let mut all = read(&t, &cur, &cfg).unwrap();
    std::fs::write(&t, &text).unwrap();
    all.extend(read(&t, &cur, &cfg).unwrap());
    assert!(read(&t, &cur, &cfg).unwrap().is_empty(), "read again");
    all
}

fn sum(spends: &[Spend]) -> (Tokens, f64) {
    let mut t = Tokens::default();
    let mut usd = 0.0;
    for s in spends {
        t.add(&s.tokens);
        usd += s.usd;
    }
    (t, usd)
}

#[test]
fn a_gemini_chat_books_each_model_response_once_as_the_client_counts_it() {
    // Gemini CLI 0.61.0 through the rig, its fake reporting cached and thought tokens: three
    // model responses (two tool calls, each message written again with its result, then text).
    let chat = Path::new(FIX).join("gemini-chat-0.61.0.jsonl");
    let n = std::fs::read_to_string(&chat).unwrap().lines().count();
    // The client's own account of the same run: the main role's tokens per model.
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/gemini-result-0.61.0.json")).unwrap(),
    )
    .unwrap();
    let own = from_gemini_json(&result, &BudgetConfig::default()).unwrap();
    let own = own
        .iter()
        .find(|s| s.model.as_deref() == Some("gemini-3.1-pro-preview"))
        .unwrap();
    for cut in 0..=n {
        let s = grown_in_two(&chat, cut, ingest_chat);
        assert!(s.iter().all(|s| s.source == "gemini-chat"
            && s.model.as_deref() == Some("gemini-3.1-pro-preview")
            && s.estimate.is_none()));
        let (t, usd) = sum(&s);
        // 906 prompt tokens of which 452 cached, 21 candidates + 15 thoughts: 942 in all.
        assert_eq!(
            (t.input, t.cache_read, t.output, t.total()),
            (454, 452, 36, 942),
            "cut after line {cut}"
        );
        assert_eq!(t, own.tokens, "cut after line {cut}");
        let listed = (454.0 * 2.0 + 36.0 * 12.0 + 452.0 * 0.2) / 1e6;
        assert!((usd - listed).abs() < 1e-12, "cut after line {cut}: {usd}");
    }
    // The router's call is in the JSON result only, never in the chat.
    assert!(
        result["stats"]["models"]["gemini-3.5-flash-lite"]["roles"]
            .get("utility_router")
            .is_some()
    );
}

#[test]
fn a_gemini_chat_prices_tool_use_prompts_as_input_and_reads_subagent_chats() {
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("chats");
    std::fs::create_dir_all(chats.join("s_1")).unwrap();
    let chat = chats.join("session-2026-12-07T18-14-s_1.jsonl");
    // A session id with a character Gemini CLI's file names replace (`sanitizeFilenamePart`).
    std::fs::write(
        &chat,
        concat!(
            r#"{"sessionId":"s.1","projectHash":"x","kind":"main"}"#, "\n",
            r#"{"id":"m1","type":"gemini","content":"","tokens":null,"model":"gemini-3.1-pro-preview"}"#, "\n",
            r#"{"id":"m1","type":"gemini","content":"","tokens":{"input":100,"output":10,"cached":0,"thoughts":0,"tool":30,"total":140},"model":"gemini-3.1-pro-preview"}"#, "\n",
        ),
    )
    .unwrap();
    std::fs::write(
        chats.join("s_1/sub-1.jsonl"),
        concat!(
            r#"{"sessionId":"sub-1","projectHash":"x","kind":"subagent"}"#, "\n",
            r#"{"id":"a1","type":"gemini","content":"found it","tokens":{"input":50,"output":5,"cached":10,"thoughts":2,"tool":0,"total":57},"model":"gemini-3-flash-preview"}"#, "\n",
        ),
    )
    .unwrap();
    let s = ingest_chat(&chat, &dir.path().join("cursors"), &BudgetConfig::default()).unwrap();
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].source, "gemini-chat");
    // The usage came on the message's second line; the tool-use prompt is input.
    assert_eq!(
        (s[0].tokens.input, s[0].tokens.output, s[0].tokens.total()),
        (130, 10, 140)
    );
    assert_eq!(s[1].source, "gemini-subagent");
    assert_eq!(s[1].model.as_deref(), Some("gemini-3-flash-preview"));
    assert_eq!(
        (
            s[1].tokens.input,
            s[1].tokens.cache_read,
            s[1].tokens.output
        ),
        (40, 10, 7)
    );
}

#[test]
fn gemini_telemetry_books_the_calls_no_chat_holds_once_each() {
    // Gemini CLI 0.61.0 through the rig, telemetry to a local file, the fake reporting cached and
    // thought tokens: three main calls (in the chat) and the model router's call (not in it).
    let file = Path::new(FIX).join("gemini-telemetry-0.61.0.log");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/gemini-telemetry-result-0.61.0.json")).unwrap(),
    )
    .unwrap();
    let session = result["session_id"].as_str().unwrap();
    let own = from_gemini_json(&result, &BudgetConfig::default()).unwrap();
    let router = own
        .iter()
        .find(|s| s.model.as_deref() == Some("gemini-3.5-flash-lite"))
        .unwrap();
    // Cut anywhere, mid-event included: the file grows by whole batches, but a reader can see a
    // batch half written.
    for cut in (0..=lines.len()).step_by(97).chain([lines.len()]) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("forge-telemetry.log");
        let head: String = lines[..cut].iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&t, head).unwrap();
        let (cur, cfg) = (dir.path().join("cursors"), BudgetConfig::default());
        let mut all = ingest_telemetry(&t, &cur, &cfg).unwrap();
        std::fs::write(&t, &text).unwrap();
        all.extend(ingest_telemetry(&t, &cur, &cfg).unwrap());
        assert!(
            ingest_telemetry(&t, &cur, &cfg).unwrap().is_empty(),
            "read again"
        );
        let spends: Vec<&Spend> = all
            .iter()
            .inspect(|(s, _)| assert_eq!(s.as_deref(), Some(session), "cut {cut}"))
            .flat_map(|(_, s)| s)
            .collect();
        assert_eq!(spends.len(), 1, "cut after line {cut}: {spends:?}");
        let s = spends[0];
        assert_eq!(
            (s.source.as_str(), s.model.as_deref()),
            ("gemini-telemetry", Some("gemini-3.5-flash-lite"))
        );
        // 213 prompt tokens of which 106 cached, 7 candidates + 5 thoughts, as the client's own
        // `stats` count the router's call.
        assert_eq!(s.tokens, router.tokens, "cut after line {cut}");
        assert_eq!(
            (s.tokens.input, s.tokens.cache_read, s.tokens.output),
            (107, 106, 12)
        );
    }
}

#[test]
fn gemini_telemetry_books_each_session_to_itself_and_skips_what_is_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("forge-telemetry.log");
    let event = |session: &str, role: &str, ms: u64| {
        let v = serde_json::json!({
            "hrTime": [1796676892, ms * 1_000_000],
            "attributes": {"session.id": session, "event.name": "gemini_cli.api_response",
                "event.timestamp": format!("2026-12-07T20:54:52.{ms:03}Z"),
                "model": "gemini-3-flash-preview", "role": role, "input_token_count": 100,
                "output_token_count": 10, "cached_content_token_count": 40,
                "thoughts_token_count": 2, "tool_token_count": 5, "total_token_count": 112},
            "_body": "API response"});
        serde_json::to_string_pretty(&v).unwrap() + "\n"
    };
    let text = [
        event("s1", "utility_router", 1),
        event("s1", "main", 2),
        event("s2", "utility_next_speaker", 3),
        event("s1", "subagent", 4),
        "{\n  \"resource\": {},\n  \"scopeMetrics\": []\n}\n".to_string(),
        event("s1", "utility_loop_detector", 5),
    ]
    .concat();
    std::fs::write(&t, &text).unwrap();
    let got = ingest_telemetry(&t, &dir.path().join("c"), &BudgetConfig::default()).unwrap();
    let by: Vec<(Option<&str>, u64, u64)> = got
        .iter()
        .map(|(s, sp)| (s.as_deref(), sp[0].tokens.input, sp[0].tokens.total()))
        .collect();
    // The chats' own roles (main, subagent) are left to the chats; the rest, by session.
    assert_eq!(by, [(Some("s1"), 130, 234), (Some("s2"), 65, 117)]);
    // Rewritten whole (a file that shrank is read from its start): nothing is booked twice.
    std::fs::write(&t, event("s1", "utility_router", 1)).unwrap();
    assert!(
        ingest_telemetry(&t, &dir.path().join("c"), &BudgetConfig::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_codex_rollout_books_the_threads_running_total_once() {
    // Codex CLI 0.169.0 and 0.171.0 through the rig, the fake Responses API reporting two
    // responses: 100 then 150 input tokens (40 of them cached), 10 then 11 output tokens (3 of
    // each reasoning) — the `turn.completed` of the same runs says input 250, cached 40, output
    // 21, reasoning 6.
    for v in ["0.169.0", "0.171.0"] {
        let rollout = Path::new(FIX).join(format!("codex-rollout-{v}.jsonl"));
        let n = std::fs::read_to_string(&rollout).unwrap().lines().count();
        for cut in 0..=n {
            let s = grown_in_two(&rollout, cut, ingest_rollout);
            assert!(
                s.iter().all(
                    |s| s.source == "codex-rollout" && s.model.as_deref() == Some("gpt-5-fake")
                ),
                "{v}: {s:?}"
            );
            let (t, usd) = sum(&s);
            assert_eq!(
                (t.input, t.cache_read, t.output, t.total()),
                (210, 40, 21, 271),
                "{v}, cut after line {cut}"
            );
            // `gpt-5-fake` takes the `gpt-5` row.
            let listed = (210.0 * 1.25 + 40.0 * 0.125 + 21.0 * 10.0) / 1e6;
            assert!(
                (usd - listed).abs() < 1e-12,
                "{v}, cut after line {cut}: {usd}"
            );
        }
    }
}

#[test]
fn a_codex_rollout_books_a_response_before_its_tool_call_runs() {
    // What the rollout holds when the first call's PostToolUse hook reads it (0.169.0 and
    // 0.171.0): the response's `token_usage_record`, not yet its `token_count`.
    for v in ["0.169.0", "0.171.0"] {
        let text = std::fs::read_to_string(format!("{FIX}/codex-rollout-{v}.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let first = lines
            .iter()
            .position(|l| l.contains(r#""type":"token_usage_record""#))
            .unwrap();
        assert!(
            !lines[..first]
                .iter()
                .any(|l| l.contains(r#""token_count""#)),
            "{v}"
        );
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("rollout.jsonl");
        let head: String = lines[..=first].iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&t, head).unwrap();
        let s = ingest_rollout(&t, &dir.path().join("c"), &BudgetConfig::default()).unwrap();
        assert_eq!(sum(&s).0.total(), 110, "{v}: {s:?}");
    }
}

#[test]
fn a_codex_rollout_read_again_from_the_start_books_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("rollout.jsonl");
    let text = std::fs::read_to_string(format!("{FIX}/codex-rollout-0.171.0.jsonl")).unwrap();
    std::fs::write(&t, &text).unwrap();
    let (cur, cfg) = (dir.path().join("cursors"), BudgetConfig::default());
    assert_eq!(sum(&ingest_rollout(&t, &cur, &cfg).unwrap()).0.total(), 271);
    // Rewritten shorter, then grown again: the running total has not moved past what was booked.
    let half: String = text.lines().take(14).map(|l| format!("{l}\n")).collect();
    std::fs::write(&t, half).unwrap();
    assert!(ingest_rollout(&t, &cur, &cfg).unwrap().is_empty());
    std::fs::write(&t, &text).unwrap();
    assert!(ingest_rollout(&t, &cur, &cfg).unwrap().is_empty());
}

#[test]
fn codex_reasoning_tokens_are_part_of_its_output_not_more_of_it() {
    // `codex exec --json` of the rig runs above (0.169.0 and 0.171.0 print the same).
    let text = r#"{"type":"turn.completed","usage":{"input_tokens":250,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":21,"reasoning_output_tokens":6}}"#;
    let s = from_codex_jsonl(text, Some("gpt-5"), &BudgetConfig::default());
    assert_eq!(
        (
            s[0].tokens.input,
            s[0].tokens.cache_read,
            s[0].tokens.output
        ),
        (210, 40, 21)
    );
}
