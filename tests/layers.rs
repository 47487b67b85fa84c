//! The crate's modules depend on each other in one direction only: games
//! use the bot layer, never the other way; nothing below the command line
//! uses it; no two modules import each other. This reads `crate::` paths
//! in the sources, so a new arrow upward fails here, naming the file.

use std::collections::BTreeMap;
use std::path::Path;

/// Each top-level module and the modules it may use (besides itself).
/// Listed from the bottom up: a module may only use modules above it in
/// this list.
const LAYERS: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("manifest", &[]),
    ("text", &[]),
    ("rng", &[]),
    ("stats", &[]),
    ("interrupt", &[]),
    ("parallel", &[]),
    ("manifest", &[]),
    ("record", &["interrupt"]),
    ("outcome", &["text"]),
    ("bot", &["interrupt", "outcome", "text", "units"]),
    ("exit", &["bot", "outcome"]),
    (
        "games",
        &[
            "bot",
            "exit",
            "interrupt",
            "manifest",
            "outcome",
            "record",
            "rng",
            "stats",
            "text",
            "units",
            "parallel",
            "manifest",
        ],
    ),
    (
        "interactive",
        &[
            "bot",
            "exit",
            "interrupt",
            "outcome",
            "record",
            "text",
            "units",
        ],
    ),
    (
        "game",
        &["bot", "games", "outcome", "record", "rng", "text", "units"],
    ),
    (
        "replay",
        &["bot", "game", "games", "outcome", "record", "units", "exit"],
    ),
    (
        "tournament",
        &[
            "bot",
            "exit",
            "game",
            "games",
            "interrupt",
            "outcome",
            "parallel",
            "replay",
            "record",
            "rng",
            "stats",
            "text",
            "units",
        ],
    ),
    (
        "league",
        &[
            "bot",
            "exit",
            "game",
            "games",
            "interrupt",
            "manifest",
            "outcome",
            "parallel",
            "record",
            "replay",
            "rng",
            "stats",
            "text",
            "tournament",
            "units",
            "manifest",
        ],
    ),
    (
        "ci",
        &[
            "bot",
            "exit",
            "game",
            "games",
            "outcome",
            "parallel",
            "record",
            "stats",
            "text",
            "tournament",
            "units",
        ],
    ),
];

fn module_of(path: &Path, src: &Path) -> String {
    let relative = path.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap();
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_owned()
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_only_use_the_layers_below_them() {
    let src = Path::new("src");
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let module = module_of(&file, src);
        let Some(may) = allowed.get(module.as_str()) else {
            // The command line (cli, main, lib) may use anything.
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("crate::") {
            let used: String = text[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if used != module && !may.contains(&used.as_str()) {
                let line = text[..at].lines().count().max(1);
                wrong.push(format!("{}:{line}: {module} uses {used}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows pointing up or sideways:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_module_has_a_place_in_the_layers() {
    let known: Vec<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    for file in files {
        let module = module_of(&file, Path::new("src"));
        if ["cli", "main", "lib", "bin"].contains(&module.as_str()) {
            continue;
        }
        assert!(
            known.contains(&module.as_str()),
            "{}: module {module} is not in tests/layers.rs's LAYERS",
            file.display()
        );
    }
}
