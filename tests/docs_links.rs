//! Every link between the project's own pages leads somewhere: the file
//! exists, and an anchor (`docs/chess.md#time-margins`) names a heading of
//! that file as GitHub renders it, or an `id` the page gives itself. A
//! page renamed or a heading reworded would otherwise leave readers at the
//! top of a page, or at nothing, without any test failing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Markdown pages a reader follows links in: the README, `docs/`, and
/// the READMEs of the shipped games and examples.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut pages = vec![root.join("README.md")];
    for dir in ["docs", "games", "examples", "tournaments", "bots"] {
        collect(&root.join(dir), &mut pages);
    }
    pages.sort();
    pages
}

fn collect(dir: &Path, pages: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() && !name.starts_with('.') && name != "target" && name != "node_modules" {
            collect(&path, pages);
        } else if name.ends_with(".md") {
            pages.push(path);
        }
    }
}

/// A page's lines outside fenced code blocks, with their numbers, inline
/// code spans blanked: links are only read where a reader sees them.
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut fence: Option<String> = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker: String = trimmed
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        if marker.len() >= 3 {
            match &fence {
                None => fence = Some(marker),
                Some(open) if marker.starts_with(open.as_str()) => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_none() {
            lines.push((i + 1, without_code_spans(line)));
        }
    }
    lines
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// The targets of a line's inline links, `[text](target)` and
/// `![alt](target)`, without a title.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    targets
}

/// The anchors GitHub gives a page's headings (lower case, punctuation
/// dropped but `-` and `_`, spaces made `-`, a repeated one numbered), and
/// the `id`s and `name`s of its HTML anchors.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut anchors = BTreeSet::new();
    for (_, line) in prose_raw(text) {
        if let Some(heading) = heading_text(&line) {
            let slug = slug(&heading);
            let mut candidate = slug.clone();
            let mut n = 0;
            while !seen.insert(candidate.clone()) {
                n += 1;
                candidate = format!("{slug}-{n}");
            }
            anchors.insert(candidate);
        }
        for key in ["id=\"", "name=\""] {
            let mut rest = line.as_str();
            while let Some(at) = rest.find(key) {
                let value = &rest[at + key.len()..];
                let Some(end) = value.find('"') else { break };
                anchors.insert(value[..end].to_owned());
                rest = &value[end..];
            }
        }
    }
    anchors
}

/// Like [`prose`], with code spans kept (a heading's code is in its anchor).
fn prose_raw(text: &str) -> Vec<(usize, String)> {
    let blanked = prose(text);
    let lines: Vec<&str> = text.lines().collect();
    blanked
        .into_iter()
        .map(|(n, _)| (n, lines[n - 1].to_owned()))
        .collect()
}

fn heading_text(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
        return None;
    }
    Some(
        line[hashes..]
            .trim()
            .trim_end_matches('#')
            .trim()
            .to_owned(),
    )
}

fn slug(heading: &str) -> String {
    // Links in headings read as their text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// What is wrong with one link of `page`, if anything.
fn check(page: &Path, target: &str) -> Option<String> {
    if target.is_empty()
        || target.contains("://")
        || target.starts_with("mailto:")
        || target.starts_with("data:")
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_owned()
    } else {
        page.parent()?.join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no such file ({})", file.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!(
            "{target}: no heading of {} has the anchor #{anchor}",
            file.strip_prefix(ROOT).unwrap_or(&file).display()
        ))
    }
}

#[test]
fn every_link_between_the_pages_leads_somewhere() {
    let mut broken = Vec::new();
    let mut links = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(ROOT).unwrap().display().to_string();
        for (number, line) in prose(&text) {
            for target in link_targets(&line) {
                links += 1;
                if let Some(wrong) = check(&page, &target) {
                    broken.push(format!("{name}:{number}: {wrong}"));
                }
            }
        }
    }
    assert!(
        links > 100,
        "only {links} links found: is the reader right?"
    );
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        slug("15. Beside fastchess: one Stockfish match both ways"),
        "15-beside-fastchess-one-stockfish-match-both-ways"
    );
    assert_eq!(
        slug("Where the engines run: two placements, and `--pin` (issue 50)"),
        "where-the-engines-run-two-placements-and---pin-issue-50"
    );
    assert_eq!(
        slug("Time margins: Move Overhead and `time_margin`"),
        "time-margins-move-overhead-and-time_margin"
    );
    assert_eq!(slug("See [bots](bots.md) here"), "see-bots-here");
    let page = "# A\n## A\n```\n# not a heading\n```\n<a id=\"x\"></a>\n";
    let found = anchors(page);
    assert_eq!(found, ["a", "a-1", "x"].map(String::from).into());
    assert_eq!(
        link_targets("see [a](b.md#c) and ![i](img/p.png \"t\") and [f(x)](f.md)"),
        ["b.md#c", "img/p.png", "f.md"]
    );
}
