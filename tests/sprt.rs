//! `referee ci` head to head: a bot against a baseline version of itself,
//! decided by a pentanomial SPRT (see docs/ci.md), through the real binary.

mod common;

use std::path::Path;

use common::runs::assert_verdicts;
use common::{fixture, referee, write_file};

/// A head-to-head case: name, game, bot, baseline, extra lines.
type Case<'a> = (&'a str, &'a str, Vec<String>, Vec<String>, &'a str);

/// A suite in `dir` with these cases.
fn suite(dir: &Path, cases: &[Case]) -> String {
    let mut text = String::new();
    for (name, game, bot, baseline, extra) in cases {
        text.push_str(&format!(
            "[[case]]\nname = \"{name}\"\ngame = \"{game}\"\ncommand = {bot:?}\nbaseline = {baseline:?}\n\
             games = 400\nseed = 3\njobs = 2\n{extra}\n[case.expect]\nsprt = {{ elo0 = 0, elo1 = 20, alpha = 0.05, beta = 0.05 }}\n"
        ));
    }
    let path = write_file(dir, "sprt.toml", text);
    path.to_str().unwrap().to_owned()
}

fn reference() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_evensteven").to_owned()]
}

fn in_order() -> Vec<String> {
    vec![fixture("misbehave.sh"), "play".into(), "0".into()]
}

#[test]
fn a_clearly_better_version_passes_and_a_clearly_worse_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = suite(
        dir.path(),
        &[
            ("better", "evensteven", reference(), in_order(), ""),
            ("worse", "evensteven", in_order(), reference(), ""),
        ],
    );
    let junit = dir.path().join("junit.xml");
    let run = referee(["ci", &file, "--junit", junit.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_verdicts(
        &run.stdout,
        &[
            (
                "PASS better: ",
                &[
                    "SPRT [0, 20] vs baseline: LLR ",
                    "(-2.94, 2.94)",
                    "H1 accepted",
                    "Elo +",
                ],
            ),
            (
                "FAIL worse: ",
                &[
                    "H0 accepted",
                    "Elo -",
                    "not better than the baseline: the SPRT accepted H0 (Elo <= 0)",
                ],
            ),
        ],
    );
    let better = run.stdout_lines()[0];
    // Stopped as soon as it decided: far fewer than the 400 games allowed.
    let games: u64 = better["PASS better: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(games < 400, "{better}");
    assert!(run.stdout.ends_with("ci: 1 of 2 cases passed\n"));

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(name))
            .unwrap()
    };
    let property = |name: &str, key: &str| {
        case(name)
            .descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some(key))
            .and_then(|n| n.attribute("value").map(str::to_owned))
    };
    assert_eq!(
        property("better", "sprt.result").as_deref(),
        Some("H1 accepted")
    );
    assert_eq!(
        property("worse", "sprt.result").as_deref(),
        Some("H0 accepted")
    );
    let llr: f64 = property("worse", "sprt.llr").unwrap().parse().unwrap();
    assert!(llr <= -2.94, "{llr}");
    let elo: f64 = property("worse", "sprt.elo").unwrap().parse().unwrap();
    assert!(elo < 0.0, "{elo}");
    let failure = case("worse")
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert!(failure.text().unwrap_or("").contains("LLR"), "{xml}");
}

#[test]
fn chomp_head_to_head_on_shared_setups() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path(),
        "a.txt",
        "ABCDEFGHIJ\nKLMNOPQRST\nUVWXYZTHIS\nISNOTATEST\nITISASQUID\n",
    );
    let limits = "[case.limits]\nprep = \"0s\"\narrays = \"a.txt\"\n";
    let strong = vec![env!("CARGO_BIN_EXE_chomp").to_owned()];
    let greedy = vec![env!("CARGO_BIN_EXE_chomp-greedy").to_owned()];
    let file = suite(
        dir.path(),
        &[
            ("strong", "chomp", strong.clone(), greedy.clone(), limits),
            ("greedy", "chomp", greedy, strong, limits),
        ],
    );
    let run = referee(["ci", &file], b"");
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_verdicts(
        &run.stdout,
        &[
            ("PASS strong: ", &["H1 accepted"]),
            ("FAIL greedy: ", &["H0 accepted"]),
        ],
    );
}

#[test]
fn a_bad_head_to_head_case_is_named_before_play() {
    let file = fixture("sprt/bad.toml");
    let run = referee(["ci", &file], b"");
    assert_eq!(run.code, Some(64), "{run:?}");
    for part in [
        "case \"bad test\": line 9: expect.sprt: alpha must be above 0 and below 1, not 1.5",
        "case \"bad test\": line 9: expect.sprt: elo0 must be below elo1",
        "case \"bad test\": line 9: expect.sprt plays games in pairs: games must be at least 2",
        "case \"no baseline\": expect.sprt needs a baseline to test against",
        "case \"no test\": a baseline needs expect.sprt",
    ] {
        assert!(run.stderr.contains(part), "{part} in {}", run.stderr);
    }
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}
