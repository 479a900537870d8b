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
    let usd = price(&BudgetConfig::default(), Some("claude-opus-4-8[1m]"), &t).unwrap();
    assert!((usd - 0.03972).abs() < 1e-9, "{usd}");
    assert_eq!(
        price(&BudgetConfig::default(), Some("mystery-model-9"), &t),
        None
    );
}

#[test]
fn claude_json_result() {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/claude-p-result.json")).unwrap(),
    )
    .unwrap();
    let s = from_claude_json(&v).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!((s[0].tokens.input, s[0].tokens.output), (7289, 131));
    assert_eq!(s[0].usd, Some(0.03972));
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
    assert!((s[0].usd.unwrap() - (400.0 * 1.25 + 40.0 * 10.0) / 1e6).abs() < 1e-12);
    let unknown = from_codex_jsonl(&text, None, &BudgetConfig::default());
    assert_eq!(unknown[0].usd, None);
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
    assert!(s[0].usd.is_some());
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
    let total: f64 = s.iter().map(|x| x.usd.unwrap()).sum();
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
            (ours.usd.unwrap() - theirs).abs() < 1e-9,
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
    assert_eq!(price(&cfg, m, &five), Some(3.75));
    assert_eq!(price(&cfg, m, &hour), Some(6.0));
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
    assert_eq!(price(&cfg, Some("my-model-1"), &hour), Some(3.0));
    assert_eq!(price(&cfg, Some("my-model-1"), &five), Some(1.25));
}

#[test]
fn an_unpriced_model_is_named_once_per_project() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let spend = |model: Option<&str>| Spend {
        source: "codex-json".into(),
        model: model.map(str::to_string),
        tokens: Tokens {
            input: 10,
            ..Tokens::default()
        },
        usd: None,
    };
    let first = record(
        &p,
        Some("c"),
        Some("s"),
        &[spend(Some("mystery-9")), spend(None)],
    )
    .unwrap();
    assert_eq!(first, [Some("mystery-9".to_string()), None]);
    assert!(
        record(&p, Some("d"), Some("t"), &[spend(Some("mystery-9"))])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        record(&p, Some("c"), None, &[spend(Some("other"))]).unwrap(),
        [Some("other".to_string())]
    );
    let hint = price_hint(Some("mystery-9"));
    assert!(
        hint.contains("budget:\n    prices:\n      \"mystery-9\": { input:"),
        "{hint}"
    );
    assert!(price_hint(None).contains("--model"));
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
        usd: Some(1.5),
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
fn ledgers_flag_unpriced_models_and_standings_compare_to_limits() {
    let dir = tempfile::tempdir().unwrap();
    let p = Project::at(dir.path());
    let spends = vec![
        Spend {
            source: "manual".into(),
            model: None,
            tokens: Tokens::default(),
            usd: Some(1.5),
        },
        Spend {
            source: "codex-json".into(),
            model: Some("mystery".into()),
            tokens: Tokens {
                input: 100,
                ..Tokens::default()
            },
            usd: None,
        },
    ];
    record(&p, Some("c"), Some("s"), &spends).unwrap();
    let l = load_ledger(&change_ledger_path(&p, "c")).unwrap();
    assert_eq!((l.usd, l.unpriced_tokens, l.records), (1.5, 100, 2));
    assert_eq!(l.unpriced_models, ["mystery"]);
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
