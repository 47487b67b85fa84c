//! The crate's modules depend on each other in one direction only: games
//! use the bot layer, never the other way; nothing below the command line
//! uses it; no two modules import each other. This reads `crate::` paths
//! in the sources, so a new arrow upward fails here, naming the file.
//! Within a module, no files use each other in a circle: that reads every
//! path at file level (`super::`, `self::`, a child's name, inline paths
//! too), as `scripts/structure.py` does.

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

// ---------------------------------------------------------------------------
// Circles among files.
//
// Within a top-level module, files use each other too: `use super::x::Y`,
// `use self::x`, a child module's name, or the same paths written inline
// (`super::groups::read_stat(...)`, `crate::bot::usage::human_bytes`). A
// circle of such uses means no file of it can be read, changed or tested
// without the others. The reading below is the one `scripts/structure.py`
// does: a path names the file that defines its item, through `pub use`
// re-exports; a folder's `mod.rs` and the files of its folder are one unit
// (it declares them and re-exports them, they share what it defines), so
// the arrows between a file and its own module's file are not counted; the
// tests' modules (`#[cfg(test)] mod ...`) are not read.

/// Circles known and left for later: each to be broken, and then taken off
/// this list. Any other circle fails the test, and so does a file joining
/// one of these.
const KNOWN_CIRCLES: &[&[&str]] = &[];

mod files {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use regex::Regex;

    /// `text` with comments, strings and char literals blanked to spaces
    /// (newlines kept, so that lines and braces still count).
    pub fn strip(text: &str) -> String {
        let c: Vec<char> = text.chars().collect();
        let n = c.len();
        let mut out = String::with_capacity(text.len());
        let blank = |out: &mut String, s: &[char]| {
            out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }))
        };
        let word = |i: usize| i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        let at = |i: usize, s: &str| {
            s.chars()
                .enumerate()
                .all(|(k, ch)| c.get(i + k) == Some(&ch))
        };
        let mut i = 0;
        while i < n {
            if at(i, "//") {
                let mut j = i;
                while j < n && c[j] != '\n' {
                    j += 1;
                }
                blank(&mut out, &c[i..j]);
                i = j;
            } else if at(i, "/*") {
                let (mut depth, mut j) = (1, i + 2);
                while j < n && depth > 0 {
                    if at(j, "/*") {
                        depth += 1;
                        j += 2;
                    } else if at(j, "*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                let j = j.min(n);
                blank(&mut out, &c[i..j]);
                i = j;
            } else if !word(i) && (at(i, "r#") || at(i, "r\"") || at(i, "br#") || at(i, "br\"")) {
                let mut j = i + if c[i] == 'b' { 2 } else { 1 };
                let mut hashes = 0;
                while j < n && c[j] == '#' {
                    hashes += 1;
                    j += 1;
                }
                if j >= n || c[j] != '"' {
                    // `r#ident`, a raw identifier
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let mut k = j + 1;
                while k < n && !at(k, &close) {
                    k += 1;
                }
                let k = (k + close.chars().count()).min(n);
                blank(&mut out, &c[i..k]);
                i = k;
            } else if c[i] == '"' || (!word(i) && at(i, "b\"")) {
                let mut j = i + if c[i] == 'b' { 2 } else { 1 };
                while j < n && c[j] != '"' {
                    j += if c[j] == '\\' { 2 } else { 1 };
                }
                let j = (j + 1).min(n);
                blank(&mut out, &c[i..j]);
                i = j;
            } else if c[i] == '\'' {
                // A char literal ('x', '\n', '\u{1F600}'), else a lifetime.
                let end = if c.get(i + 1) == Some(&'\\') {
                    (i + 2..n.min(i + 12)).find(|&k| c[k] == '\'')
                } else {
                    (c.get(i + 2) == Some(&'\'')).then_some(i + 2)
                };
                match end {
                    Some(end) => {
                        blank(&mut out, &c[i..=end]);
                        i = end + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            } else {
                out.push(c[i]);
                i += 1;
            }
        }
        out
    }

    fn matching_brace(code: &str, open: usize) -> usize {
        let mut depth = 0;
        for (k, b) in code.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return k;
                    }
                }
                _ => {}
            }
        }
        code.len() - 1
    }

    fn blanked(s: &str) -> String {
        s.chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect()
    }

    /// `code` with the tests' modules blanked.
    pub fn without_tests(code: &str) -> String {
        let test = Regex::new(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{").unwrap();
        let mut code = code.to_owned();
        let found: Vec<(usize, usize)> = test
            .find_iter(&code)
            .map(|m| (m.start(), m.end()))
            .collect();
        for (start, end) in found.into_iter().rev() {
            let close = matching_brace(&code, end - 1);
            let blank = blanked(&code[start..=close]);
            code.replace_range(start..=close, &blank);
        }
        code
    }

    /// The paths of a use tree: `a::{b, c::{d, e as f}}` gives `a::b`,
    /// `a::c::d` and `a::c::e`.
    pub fn expand_use(tree: &str) -> Vec<Vec<String>> {
        let tree = Regex::new(r"\s+as\s+\w+").unwrap().replace_all(tree, "");
        let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
        let mut paths = Vec::new();
        fn walk(prefix: &[String], s: &str, paths: &mut Vec<Vec<String>>) {
            let mut parts = vec![String::new()];
            let mut depth = 0;
            for ch in s.chars() {
                match ch {
                    ',' if depth == 0 => {
                        parts.push(String::new());
                        continue;
                    }
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                parts.last_mut().unwrap().push(ch);
            }
            let split = |s: &str| -> Vec<String> {
                s.split("::")
                    .filter(|x| !x.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            for part in parts.iter().filter(|p| !p.is_empty()) {
                if let Some((head, rest)) = part.split_once('{') {
                    let mut inner = prefix.to_vec();
                    inner.extend(split(head));
                    walk(&inner, &rest[..rest.len() - 1], paths);
                } else {
                    let segments = split(part);
                    let mut path = prefix.to_vec();
                    if segments != ["self"] {
                        path.extend(segments);
                    }
                    paths.push(path);
                }
            }
        }
        walk(&[], &tree, &mut paths);
        paths.retain(|p| !p.is_empty());
        paths
    }

    fn line_of(code: &str, at: usize) -> usize {
        code[..at].matches('\n').count() + 1
    }

    pub struct Crate {
        files: BTreeMap<Vec<String>, PathBuf>,
        module: BTreeMap<PathBuf, Vec<String>>,
        code: BTreeMap<PathBuf, String>,
        reexports: BTreeMap<PathBuf, BTreeMap<String, Vec<String>>>,
    }

    /// A `use` item's paths, whether it is public, and its line.
    type Uses = Vec<(Vec<String>, bool, usize)>;

    impl Crate {
        /// The library crate in `src` (`main.rs` and `bin/` are crates of
        /// their own, outside it).
        pub fn read(src: &Path) -> Crate {
            let mut all = Vec::new();
            super::sources(src, &mut all);
            let mut files = BTreeMap::new();
            for path in all {
                let relative = path.strip_prefix(src).unwrap();
                if relative == Path::new("main.rs") || relative.starts_with("bin") {
                    continue;
                }
                let mut parts: Vec<String> = relative
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod") {
                    parts.pop();
                }
                if parts == ["lib"] {
                    parts.clear();
                }
                files.insert(parts, path);
            }
            let module = files.iter().map(|(m, f)| (f.clone(), m.clone())).collect();
            let code = files
                .values()
                .map(|f| {
                    (
                        f.clone(),
                        without_tests(&strip(&std::fs::read_to_string(f).unwrap())),
                    )
                })
                .collect();
            let mut krate = Crate {
                files,
                module,
                code,
                reexports: BTreeMap::new(),
            };
            let reexports = krate
                .module
                .keys()
                .map(|f| (f.clone(), krate.read_reexports(f)))
                .collect();
            krate.reexports = reexports;
            krate
        }

        fn children(&self, module: &[String]) -> BTreeSet<String> {
            self.files
                .keys()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
                .map(|m| m[module.len()].clone())
                .collect()
        }

        /// The `use` items of a file, and its code without them.
        fn uses(&self, file: &Path) -> (Uses, String) {
            let code = &self.code[file];
            let item = Regex::new(r"(pub(\([^)]*\))?\s+)?\buse\s+([^;]*);").unwrap();
            let mut uses = Vec::new();
            for m in item.captures_iter(code) {
                let whole = m.get(0).unwrap();
                for path in expand_use(&m[3]) {
                    uses.push((path, m.get(1).is_some(), line_of(code, whole.start())));
                }
            }
            let rest = item
                .replace_all(code, |m: &regex::Captures| blanked(&m[0]))
                .into_owned();
            (uses, rest)
        }

        fn read_reexports(&self, file: &Path) -> BTreeMap<String, Vec<String>> {
            let module = &self.module[file];
            let mut out = BTreeMap::new();
            for (path, public, _) in self.uses(file).0 {
                if let (true, Some(absolute)) = (public, self.absolute(module, &path)) {
                    out.insert(path.last().unwrap().clone(), absolute);
                }
            }
            out
        }

        /// A path written in `module`, from the crate's root; `None` when
        /// it leaves the crate.
        fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
            let mut base = module.to_vec();
            let rest = match path[0].as_str() {
                "crate" => &path[1..],
                "self" => &path[1..],
                "super" => {
                    let supers = path.iter().take_while(|p| *p == "super").count();
                    base.truncate(base.len().saturating_sub(supers));
                    &path[supers..]
                }
                first if self.children(module).contains(first) => path,
                _ => return None,
            };
            if path[0] == "crate" {
                base.clear();
            }
            base.extend(rest.iter().cloned());
            Some(base)
        }

        /// The file that defines what an absolute path names.
        fn resolve(&self, path: &[String], seen: &mut BTreeSet<(PathBuf, String)>) -> PathBuf {
            let mut module: Vec<String> = Vec::new();
            let mut rest = path;
            while let Some(first) = rest.first() {
                let mut deeper = module.clone();
                deeper.push(first.clone());
                if !self.files.contains_key(&deeper) {
                    break;
                }
                module = deeper;
                rest = &rest[1..];
            }
            let file = &self.files[&module];
            if let Some(first) = rest.first()
                && let Some(target) = self.reexports[file].get(first)
                && seen.insert((file.clone(), first.clone()))
            {
                let mut onward = target.clone();
                onward.extend(rest[1..].iter().cloned());
                return self.resolve(&onward, seen);
            }
            file.clone()
        }

        /// Whether one file is the other's module's file or below it.
        fn nested(&self, a: &Path, b: &Path) -> bool {
            let (a, b) = (&self.module[a], &self.module[b]);
            a.starts_with(b) || b.starts_with(a)
        }

        /// Each file and the files it uses, with the first line using each.
        pub fn arrows(&self) -> BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> {
            let inline = Regex::new(r"(?:^|[^\w:$])((?:crate|super|self)(?:::\w+)+)").unwrap();
            let mut graph: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
            for (file, module) in &self.module {
                let (uses, rest) = self.uses(file);
                let kids = self.children(module);
                let mut found: Vec<(Vec<String>, usize)> = uses
                    .into_iter()
                    .filter(|(path, public, _)| !public || !kids.contains(&path[0]))
                    .map(|(path, _, line)| (path, line))
                    .collect();
                let mut patterns = vec![inline.clone()];
                if !kids.is_empty() {
                    let names: Vec<&str> = kids.iter().map(String::as_str).collect();
                    patterns.push(
                        Regex::new(&format!(
                            r"(?:^|[^\w:$])((?:{})(?:::\w+)+)",
                            names.join("|")
                        ))
                        .unwrap(),
                    );
                }
                for pattern in patterns {
                    for m in pattern.captures_iter(&rest) {
                        let path = m.get(1).unwrap();
                        let segments = path.as_str().split("::").map(str::to_owned).collect();
                        found.push((segments, line_of(&rest, path.start())));
                    }
                }
                let arrows = graph.entry(file.clone()).or_default();
                for (path, line) in found {
                    let Some(absolute) = self.absolute(module, &path) else {
                        continue;
                    };
                    let target = self.resolve(&absolute, &mut BTreeSet::new());
                    if !self.nested(file, &target) {
                        arrows.entry(target).or_insert(line);
                    }
                }
            }
            graph
        }
    }

    /// The sets of files that reach each other (of more than one file).
    pub fn circles(graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>) -> Vec<BTreeSet<PathBuf>> {
        struct Walk<'a> {
            graph: &'a BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
            index: BTreeMap<&'a PathBuf, usize>,
            low: BTreeMap<&'a PathBuf, usize>,
            stack: Vec<&'a PathBuf>,
            found: Vec<BTreeSet<PathBuf>>,
        }
        fn visit<'a>(walk: &mut Walk<'a>, v: &'a PathBuf) {
            let n = walk.index.len();
            walk.index.insert(v, n);
            walk.low.insert(v, n);
            walk.stack.push(v);
            for w in walk.graph.get(v).into_iter().flat_map(|a| a.keys()) {
                if !walk.index.contains_key(w) {
                    visit(walk, w);
                    let low = walk.low[v].min(walk.low[w]);
                    walk.low.insert(v, low);
                } else if walk.stack.contains(&w) {
                    let low = walk.low[v].min(walk.index[w]);
                    walk.low.insert(v, low);
                }
            }
            if walk.low[v] == walk.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = walk.stack.pop() {
                    component.insert(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    walk.found.push(component);
                }
            }
        }
        let mut walk = Walk {
            graph,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            found: Vec::new(),
        };
        for v in graph.keys() {
            if !walk.index.contains_key(v) {
                visit(&mut walk, v);
            }
        }
        walk.found
    }
}

/// The circles among the files below `src` that are not (within) a known
/// one, each with the arrows that make it.
fn new_circles(src: &Path, known: &[&[&str]]) -> Vec<String> {
    let graph = files::Crate::read(src).arrows();
    let base = src.parent().unwrap_or(Path::new(""));
    let name = |f: &Path| f.strip_prefix(base).unwrap_or(f).display().to_string();
    let mut wrong = Vec::new();
    for circle in files::circles(&graph) {
        let names: Vec<String> = circle.iter().map(|f| name(f)).collect();
        if known
            .iter()
            .any(|k| names.iter().all(|n| k.contains(&n.as_str())))
        {
            continue;
        }
        let mut said = names.join(" <-> ");
        for a in &circle {
            for (b, line) in &graph[a] {
                if circle.contains(b) {
                    said += &format!("\n  {}:{line} uses {}", name(a), name(b));
                }
            }
        }
        wrong.push(said);
    }
    wrong
}

#[test]
fn no_files_use_each_other_in_a_circle() {
    let wrong = new_circles(Path::new("src"), KNOWN_CIRCLES);
    assert!(
        wrong.is_empty(),
        "files that use each other in a circle (a part that another needs stands below it):\n{}",
        wrong.join("\n")
    );
}

/// The reading finds circles however the paths are written, and leaves
/// out what is not a use.
#[test]
fn circles_are_found_through_super_self_children_and_inline_paths() {
    let dir = std::env::temp_dir().join(format!("referee-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let circles = |known: &[&[&str]]| new_circles(&dir.join("src"), known);
    write("src/lib.rs", "pub mod a;\n");
    write(
        "src/a/mod.rs",
        "mod x;\nmod y;\npub use x::Thing;\npub fn top() { y::f() }\n",
    );
    // Parent and child use each other: one unit, not a circle. Nor is what
    // names x.rs in a comment, a string or a test module.
    write(
        "src/a/x.rs",
        "pub struct Thing;\npub fn g() { super::top(); super::y::f() }\n",
    );
    write(
        "src/a/y.rs",
        "// super::x::g in a comment\npub fn f() { let _ = \"super::x::g\"; let _ = '\"'; }\n\
         #[cfg(test)]\nmod tests { use crate::a::x::g; }\n",
    );
    assert_eq!(circles(&[]), Vec::<String>::new());
    // `self::`, `crate::` inline one way, `super::` inline the other.
    write(
        "src/a/x.rs",
        "pub struct Thing;\npub fn g() { self::h(); crate::a::y::f() }\nfn h() {}\n",
    );
    write("src/a/y.rs", "pub fn f() {\n    super::x::g()\n}\n");
    let found = circles(&[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("src/a/x.rs <-> src/a/y.rs"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/a/x.rs:2 uses src/a/y.rs"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("src/a/y.rs:2 uses src/a/x.rs"),
        "{}",
        found[0]
    );
    // Through the parent's re-export: `super::Thing` is x.rs's.
    write("src/a/y.rs", "pub fn f() { let _ = super::Thing; }\n");
    assert_eq!(circles(&[]).len(), 1);
    // A `use` tree.
    write(
        "src/a/y.rs",
        "use super::{Thing as _, x::{self}};\npub fn f() {}\n",
    );
    assert_eq!(circles(&[]).len(), 1);
    assert!(circles(&[&["src/a/x.rs", "src/a/y.rs"]]).is_empty());
    // A file joining a known circle makes it new.
    write(
        "src/a/mod.rs",
        "mod x;\nmod y;\nmod z;\npub use x::Thing;\n",
    );
    write("src/a/z.rs", "pub fn z() { super::x::g() }\n");
    write("src/a/y.rs", "use super::z::z;\npub fn f() { z() }\n");
    assert_eq!(circles(&[&["src/a/x.rs", "src/a/y.rs"]]).len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
