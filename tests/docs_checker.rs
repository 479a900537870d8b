//! The docs checker itself (`tests/doc_checker/`): how it reads a block, what it normalises, and
//! that it fails when an example drifts from the binary.

#[path = "doc_checker/mod.rs"]
mod doc_checker;

use doc_checker::{Start, check, line_matches, normalise, output_matches, overwrite, parse};
use std::path::{Path, PathBuf};

fn forge() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_forge"))
}

fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

fn doc(name: &str, text: &str) -> Vec<(String, String)> {
    vec![(name.to_string(), text.to_string())]
}

#[test]
fn a_block_is_commands_their_output_and_exit_codes() {
    let text = "# Title\n\n```console setup=shop\n$ forge verify lnt\nforge: error: no such command\n# exit 2\n\n$ echo a\na\n\nb\n\n```\n\n```sh\n$ not checked\n```\n\n```console continue needs=python3\n$ true\n```\n";
    let blocks = parse("x.md", text).unwrap();
    assert_eq!(blocks.len(), 2);
    let b = &blocks[0];
    assert_eq!((b.line, &b.start), (3, &Start::Setup("shop".into())));
    assert_eq!(b.commands.len(), 2);
    let c = &b.commands[0];
    assert_eq!(
        (c.line, c.text.as_str(), c.exit),
        (4, "forge verify lnt", 2)
    );
    assert_eq!(c.expected, vec!["forge: error: no such command"]);
    assert_eq!(c.span, (5, 7), "the output and the exit line");
    let c = &b.commands[1];
    assert_eq!(
        c.expected,
        vec!["a", "", "b"],
        "inner blank lines are output"
    );
    assert_eq!(c.exit, 0);
    assert_eq!(blocks[1].start, Start::Continue);
    assert_eq!(blocks[1].needs, vec!["python3"]);
}

#[test]
fn a_block_must_say_where_it_starts_and_be_well_formed() {
    let bad = |text: &str, says: &str| {
        let e = parse("x.md", text).unwrap_err().join("\n");
        assert!(e.contains(says), "{e}");
        assert!(e.starts_with("x.md:"), "{e}");
    };
    bad("```console\n$ forge\n```\n", "names no starting state");
    bad("```console setup=a continue\n$ forge\n```\n", "one of");
    bad(
        "```console setup=a colour\n$ forge\n```\n",
        "unknown console block attribute",
    );
    bad(
        "```console skip=later\n$ forge\n```\n",
        "not a known reason",
    );
    bad("```console setup=a\nforge\n```\n", "starts with a command");
    bad(
        "```console setup=a\n$ forge\n# exit 2\nmore\n```\n",
        "output after `# exit 2`",
    );
    bad(
        "```console setup=a\n$ forge\n# exit 0\n```\n",
        "`# exit 0` is the default",
    );
    bad("```console setup=a\n$ forge\n", "never closed");
    bad(
        "- item\n  ```console setup=a\n  $ forge\n  ```\n",
        "beginning of the line",
    );
    bad(
        "```text\n$ forge verify\nVerdict: PASS\n```\n",
        "tag it ```console",
    );
    // A console block quoted inside another fence is an example, not a block.
    assert!(
        parse("x.md", "````markdown\n```console\n$ x\n```\n````\n")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn wildcards_match_within_a_line_and_across_lines_only_where_marked() {
    assert!(line_matches(
        "  test  ok    exit 0  [..]  $ sh tests/run.sh",
        "  test  ok    exit 0  0.01s  $ sh tests/run.sh"
    ));
    assert!(line_matches("log: [..]-test.log", "log: 123-9-test.log"));
    assert!(line_matches("a[..]b[..]c", "aXXbYbZc"));
    assert!(line_matches("[..]", ""));
    assert!(!line_matches("log: [..]-test.log", "log: 123-lint.log"));
    assert!(!line_matches("exit 0", "exit 01"), "no wildcard: exact");
    assert!(
        !line_matches("a[..]a", "a"),
        "prefix and suffix may not overlap"
    );
    assert!(line_matches("trailing  ", "trailing"));

    let exp = lines("first\n...\nlast");
    assert!(output_matches(&exp, &lines("first\nlast")));
    assert!(output_matches(&exp, &lines("first\n1\n2\nlast")));
    assert!(!output_matches(&exp, &lines("first\n1\nnot last")));
    assert!(
        !output_matches(&lines("a\nb"), &lines("a\nb\nc")),
        "no extra lines"
    );
    assert!(
        !output_matches(&lines("a\nb\nc"), &lines("a\nb")),
        "no missing lines"
    );
}

#[test]
fn the_scratch_folder_shows_as_tmp_and_trailing_blanks_go() {
    let got = normalise(
        "Wired Forge into claude (/tmp/forge-docs-x1/shop/.claude/settings.json)  \n\n\n",
        &["/tmp/forge-docs-x1".to_string()],
    );
    assert_eq!(
        got,
        vec!["Wired Forge into claude (<tmp>/shop/.claude/settings.json)"]
    );
}

/// A real page of the docs, copied to a scratch file: as it is, it passes; with one expected
/// line changed, or an exit code, the checker fails and names the line.
#[test]
fn the_checker_fails_when_an_example_drifts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/cli.md")).unwrap();
    // The cheapest self-contained session of the page: `forge completions tcsh`.
    let start = text
        .find("```console setup=empty\n$ forge completions tcsh")
        .unwrap();
    let end = start + text[start..].find("\n```\n").unwrap() + 5;
    let block = &text[start..end];
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("cli.md");
    std::fs::write(&copy, block).unwrap();

    let report = check(&doc("cli.md", block), &forge(), 1);
    assert!(report.ok(), "{:?}", report.failures);
    assert_eq!((report.blocks, report.commands), (1, 1));

    let drifted = block.replace("tip: a similar value exists: 'zsh'", "tip: try 'zsh'");
    assert_ne!(drifted, block);
    std::fs::write(&copy, &drifted).unwrap();
    let report = check(
        &doc("cli.md", &std::fs::read_to_string(&copy).unwrap()),
        &forge(),
        1,
    );
    assert!(!report.ok());
    let msg = report.failures.join("\n");
    assert!(
        msg.contains("cli.md:2: `$ forge completions tcsh`"),
        "{msg}"
    );
    assert!(msg.contains("output differs at cli.md:6:"), "{msg}");
    assert!(msg.contains("doc:      tip: try 'zsh'"), "{msg}");
    assert!(
        msg.contains("actual:   tip: a similar value exists: 'zsh'"),
        "{msg}"
    );

    let wrong_exit = block.replace("# exit 2", "# exit 1");
    let report = check(&doc("cli.md", &wrong_exit), &forge(), 1);
    let msg = report.failures.join("\n");
    assert!(msg.contains("exited 2, the doc says 1"), "{msg}");

    // Overwrite mode puts the real output back: the page is as it was.
    let report = check(&doc("cli.md", &drifted), &forge(), 1);
    let mismatches: Vec<&doc_checker::Mismatch> = report.mismatches.iter().collect();
    assert_eq!(overwrite(&drifted, &mismatches), block);
}

#[test]
fn sessions_continue_in_the_same_folder_and_skips_are_counted_with_why() {
    let text = "```console setup=empty\n$ echo made > f.txt\n```\n\ntext\n\n```console continue\n$ cat f.txt\nmade\n$ pwd\n<tmp>/work\n```\n\n```console skip=agent\n$ claude -p hello\nanything\n```\n\n```console setup=empty needs=no-such-program-here\n$ no-such-program-here\n```\n\n```console continue\n$ echo after\n```\n";
    let report = check(&doc("s.md", text), &forge(), 2);
    assert!(report.ok(), "{:?}", report.failures);
    assert_eq!(
        (report.blocks, report.ran_blocks, report.commands),
        (5, 2, 3)
    );
    let summary = report.summary();
    assert!(summary.contains("5 console block(s) in 1 file(s): 2 run (3 command(s)), 3 skipped"));
    assert!(
        summary.contains("skipped 1 block(s): needs a real agent client (Claude Code, Codex CLI, Gemini CLI) and its model: s.md:14"),
        "{summary}"
    );
    assert!(
        summary.contains("needs `no-such-program-here` (not installed here): s.md:19"),
        "{summary}"
    );
    assert!(
        summary.contains("continues a skipped block: s.md:23"),
        "{summary}"
    );
}

#[test]
fn commands_run_without_the_callers_environment() {
    // Nothing of the test's environment reaches the blocks (an agent's marker such as
    // CLAUDECODE would make a `forge budget raise` example refuse): cargo's own variables are
    // the witness.
    assert!(
        std::env::var_os("CARGO_MANIFEST_DIR").is_some() || std::env::var_os("CARGO").is_some()
    );
    let text = "```console setup=empty\n$ env | cut -d= -f1 | grep -v -x -E 'PATH|HOME|TMPDIR|TZ|LANG|GIT_CONFIG_NOSYSTEM|RUSTUP_HOME|CARGO_HOME|PWD|OLDPWD|SHLVL|_'\n# exit 1\n$ command -v forge\n<tmp>/bin/forge\n$ echo \"$HOME $TMPDIR $TZ\"\n<tmp>/home <tmp>/tmp UTC\n```\n";
    let report = check(&doc("e.md", text), &forge(), 1);
    assert!(report.ok(), "{:?}", report.failures);
}

#[test]
fn unknown_setups_and_orphan_continues_are_errors() {
    let report = check(
        &doc(
            "u.md",
            "```console continue\n$ true\n```\n\n```console setup=nope\n$ true\n```\n",
        ),
        &forge(),
        1,
    );
    let msg = report.failures.join("\n");
    assert!(
        msg.contains("u.md:1: `continue` but no console block comes before it"),
        "{msg}"
    );
    assert!(
        msg.contains("u.md:5: no setup named `nope`; the setups are: empty, "),
        "{msg}"
    );
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings (outside code blocks), and its headings' titles.
fn headings(text: &str) -> Vec<(String, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && let Some(h) = line.strip_prefix('#') {
            let title = h.trim_start_matches('#').trim().to_string();
            out.push((slug(&title), title));
        }
    }
    out
}

/// Every link between the docs lands on a heading that exists, and every mention of a README
/// section by name (`README "Install"`) names one.
#[test]
fn links_and_section_names_between_the_docs_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let mut broken = Vec::new();
    for f in &files {
        let text = read(f);
        let dir = f.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            if !file.is_empty() && !file.ends_with(".md") {
                continue;
            }
            let to = if file.is_empty() {
                f.clone()
            } else {
                dir.join(file)
            };
            if !to.is_file() {
                broken.push(format!("{}: {target}: no such file", f.display()));
                continue;
            }
            if !anchor.is_empty() && !headings(&read(&to)).iter().any(|(s, _)| s == anchor) {
                broken.push(format!("{}: {target}: no such heading", f.display()));
            }
        }
        for (i, _) in text.match_indices("README \"") {
            let rest = &text[i + 8..];
            let name = &rest[..rest.find('"').unwrap_or(0)];
            let readme = headings(&read(&root.join("README.md")));
            if !readme.iter().any(|(_, t)| t == name) {
                broken.push(format!(
                    "{}: README \"{name}\": no such section",
                    f.display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The README says where `cargo build --release` puts the binary: under the target that
/// `.cargo/config.toml` names, not `target/release/`.
#[test]
fn the_readme_names_where_the_release_binary_lands() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(root.join(".cargo/config.toml")).unwrap();
    let triple = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("target = \""))
        .and_then(|r| r.strip_suffix('"'))
        .expect("[build] target in .cargo/config.toml");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let install = &readme[readme.find("## Install").unwrap()..];
    let install = &install[..install[3..].find("\n## ").unwrap()];
    assert!(
        install.contains(&format!("target/{triple}/release/forge")),
        "{install}"
    );
}
