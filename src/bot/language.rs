//! Building a program from its source, by language, the way the judges
//! of the Kattis/DOMjudge problem package format do: the language comes
//! from the file extensions, the compiler flags are the judges' defaults,
//! and the result is a [`BotSpec`] to run. The commands are listed in
//! `docs/languages.md`.
//!
//! A build never writes beside the sources (a problem package may be
//! read-only, and a source tree is not a scratch space): everything goes
//! into the output directory the caller gives. Compilers run through
//! [`run_build`], so a build has a time limit, a memory bound and its own
//! process group like every other process of the referee; under
//! `sandbox` they also run in bubblewrap, writing only the output
//! directory.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::command::{Completed, run_build};
use super::program::{self, SpawnError};
use super::{BotSpec, Environment};

/// A language a program may be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Language {
    C,
    Cpp,
    Java,
    Kotlin,
    Python3,
    Rust,
}

impl Language {
    pub const ALL: [Language; 6] = [
        Language::C,
        Language::Cpp,
        Language::Java,
        Language::Kotlin,
        Language::Python3,
        Language::Rust,
    ];

    /// The language's name, as messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Language::C => "C",
            Language::Cpp => "C++",
            Language::Java => "Java",
            Language::Kotlin => "Kotlin",
            Language::Python3 => "Python 3",
            Language::Rust => "Rust",
        }
    }

    /// The language of a file, by its extension (case matters: `.C` is
    /// C++, `.c` is C, as in the package format).
    pub fn of_file(path: &Path) -> Option<Language> {
        let extension = path.extension()?.to_str()?;
        Some(match extension {
            "c" => Language::C,
            "cc" | "cpp" | "cxx" | "c++" | "C" => Language::Cpp,
            "java" => Language::Java,
            "kt" => Language::Kotlin,
            "py" | "py3" => Language::Python3,
            "rs" => Language::Rust,
            _ => return None,
        })
    }

    /// The compiler, or for Python the interpreter (which checks the
    /// syntax at build time).
    fn compiler(self) -> &'static str {
        match self {
            Language::C => "gcc",
            Language::Cpp => "g++",
            Language::Java => "javac",
            Language::Kotlin => "kotlinc",
            Language::Python3 => "python3",
            Language::Rust => "rustc",
        }
    }

    /// The runtime the built program needs, if it is not a binary.
    fn runtime(self) -> Option<&'static str> {
        match self {
            Language::Java => Some("java"),
            Language::Kotlin => Some("kotlin"),
            Language::Python3 => Some("python3"),
            _ => None,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Files that may sit beside C and C++ sources without being compiled.
const HEADERS: [&str; 4] = ["h", "hpp", "hh", "hxx"];

/// A program's sources: their language, the files, and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub language: Language,
    /// The path as given (a file or a directory), for messages.
    pub path: PathBuf,
    /// The directory holding the sources, absolute.
    pub dir: PathBuf,
    /// Every source file of the language, absolute, sorted by name.
    pub files: Vec<PathBuf>,
    /// Where the program starts: for Python and Rust the main file's name
    /// (the one run, or compiled); for Java and Kotlin the main class
    /// (`pkg.Main`, `MainKt`); for C and C++, which compile every file,
    /// the first file's name.
    pub entry: String,
}

impl Source {
    /// The sources at `path`, a source file or a directory of a program's
    /// sources. `Ok(None)` when `path` is a file that is not a source (an
    /// executable, a script without a known extension: to be run as it
    /// is); an error naming the file when the sources are unusable or
    /// ambiguous.
    pub fn detect(path: &Path) -> Result<Option<Source>, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let absolute = std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_dir() {
            let Some(language) = Language::of_file(path) else {
                return Ok(None);
            };
            let dir = absolute.parent().unwrap_or(Path::new("/")).to_owned();
            return Source::of(language, path, dir, vec![absolute]).map(Some);
        }
        let files = source_files(&absolute).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut languages: Vec<Language> =
            files.iter().filter_map(|f| Language::of_file(f)).collect();
        languages.sort();
        languages.dedup();
        let language = match languages.as_slice() {
            [one] => *one,
            [] => {
                return Err(format!(
                    "{}: no source file in it (expected files of one language: {})",
                    path.display(),
                    extensions_list()
                ));
            }
            several => {
                let names: Vec<&str> = several.iter().map(|l| l.name()).collect();
                return Err(format!(
                    "{}: sources of several languages ({}); a program is written in one",
                    path.display(),
                    names.join(", ")
                ));
            }
        };
        let sources: Vec<PathBuf> = files
            .into_iter()
            .filter(|f| Language::of_file(f) == Some(language))
            .collect();
        Source::of(language, path, absolute, sources).map(Some)
    }

    /// The source of `files` (absolute, sorted) in `dir`: finds its entry.
    fn of(
        language: Language,
        path: &Path,
        dir: PathBuf,
        files: Vec<PathBuf>,
    ) -> Result<Source, String> {
        let entry = match language {
            Language::C | Language::Cpp => crate::text::name_of(&files[0]),
            Language::Python3 | Language::Rust => {
                crate::text::name_of(&main_file(language, path, &dir, &files)?)
            }
            Language::Java => java_main_class(path, &files)?,
            Language::Kotlin => {
                let main = main_file(language, path, &dir, &files)?;
                kotlin_class(&main)
            }
        };
        Ok(Source {
            language,
            path: path.to_owned(),
            dir,
            files,
            entry,
        })
    }

    /// The main file, for Python and Rust: the source named `entry`.
    fn main_path(&self) -> PathBuf {
        self.dir.join(&self.entry)
    }
}

fn extensions_list() -> &'static str {
    ".c; .cc .cpp .cxx .c++ .C; .java; .kt; .py .py3; .rs"
}

/// The regular files of `dir` (not its subdirectories, nor hidden files)
/// that are sources of some language or C/C++ headers, sorted; other files
/// (a README, test data) are not the program's.
fn source_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let hidden = path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."));
        if hidden || !path.is_file() {
            continue;
        }
        if Language::of_file(&path).is_some() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn is_header(path: &Path) -> bool {
    path.extension()
        .and_then(|x| x.to_str())
        .is_some_and(|x| HEADERS.contains(&x))
}

/// The file a Python, Rust or Kotlin program starts from: the only
/// source, or the one named `main` (any case), or (problemtools' rule for
/// a directory) the one named as the directory.
fn main_file(
    language: Language,
    path: &Path,
    dir: &Path,
    files: &[PathBuf],
) -> Result<PathBuf, String> {
    if let [one] = files {
        return Ok(one.clone());
    }
    let stem = |f: &PathBuf| {
        f.file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let named = |name: &str| -> Vec<&PathBuf> {
        files
            .iter()
            .filter(|f| stem(f).eq_ignore_ascii_case(name))
            .collect()
    };
    if let [main] = named("main").as_slice() {
        return Ok((*main).clone());
    }
    let dir_name = dir.file_name().unwrap_or_default().to_string_lossy();
    if let [main] = named(&dir_name).as_slice() {
        return Ok((*main).clone());
    }
    let names: Vec<String> = files.iter().map(|f| crate::text::name_of(f)).collect();
    Err(format!(
        "{}: {} {} sources ({}) and none is the main file: name it main{} (or as the directory)",
        path.display(),
        files.len(),
        language.name(),
        names.join(", "),
        files[0]
            .extension()
            .map(|x| format!(".{}", x.to_string_lossy()))
            .unwrap_or_default()
    ))
}

/// Kotlin's class for the top-level functions of `file`: its stem with
/// the first letter capitalized, then `Kt` (`main.kt` runs as `MainKt`).
fn kotlin_class(file: &Path) -> String {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let mut chars = stem.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
    format!("{}{}Kt", first.unwrap_or_default(), chars.as_str())
}

/// Java's main class: the class of the source that declares `public
/// static void main` (its file's stem, since a public class is named as
/// its file), with its package; among several, the one named `Main`.
fn java_main_class(path: &Path, files: &[PathBuf]) -> Result<String, String> {
    let mut mains = Vec::new();
    for file in files {
        let text = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let code = strip_comments(&String::from_utf8_lossy(&text));
        if declares_main(&code) {
            let class = file.file_stem().unwrap_or_default().to_string_lossy();
            mains.push(match package(&code) {
                Some(package) => format!("{package}.{class}"),
                None => class.into_owned(),
            });
        }
    }
    let plain = |class: &String| class.rsplit('.').next() == Some("Main");
    match mains.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "{}: no Java class declares `public static void main(String[] args)`",
            path.display()
        )),
        several => match several
            .iter()
            .filter(|c| plain(c))
            .collect::<Vec<_>>()
            .as_slice()
        {
            [main] => Ok((*main).clone()),
            _ => Err(format!(
                "{}: several Java classes declare main ({}); keep one, or name one Main",
                path.display(),
                several.join(", ")
            )),
        },
    }
}

/// Java (or C-like) code without its comments; string literals are kept
/// as they are (a `//` inside one ends the line early, which only matters
/// for finding `main` in it).
fn strip_comments(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |at| &after[at..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |at| &after[at + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn declares_main(code: &str) -> bool {
    static MAIN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    MAIN.get_or_init(|| {
        regex::Regex::new(r"\b(public\s+static|static\s+public)\s+(final\s+)?void\s+main\s*\(")
            .expect("valid")
    })
    .is_match(code)
}

fn package(code: &str) -> Option<String> {
    static PACKAGE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re =
        PACKAGE.get_or_init(|| regex::Regex::new(r"^\s*package\s+([\w.]+)\s*;").expect("valid"));
    re.captures(code).map(|c| c[1].to_owned())
}

/// How builds run.
#[derive(Clone, Debug)]
pub struct BuildSettings {
    /// Time limit of the compiler.
    pub timeout: Duration,
    /// Compile under bubblewrap: the compiler writes only the output
    /// directory, has no network, and sees a copy of the sources.
    pub sandbox: bool,
    /// How much of the compiler's output is kept.
    pub log_keep: usize,
    /// The environment of the compiler, and of the program built.
    pub env: Environment,
}

/// The default time limit of a build.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

impl Default for BuildSettings {
    fn default() -> BuildSettings {
        BuildSettings {
            timeout: DEFAULT_TIMEOUT,
            sandbox: false,
            log_keep: 64 * 1024,
            env: Environment::default(),
        }
    }
}

/// A build that failed: what went wrong, and the compiler's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    pub message: String,
    /// The compiler's output (its last bytes when it wrote a lot).
    pub log: String,
}

impl BuildError {
    fn new(message: String) -> BuildError {
        BuildError {
            message,
            log: String::new(),
        }
    }

    /// The lines of the log worth showing: from the first error on (where
    /// the compiler names the file and line), at most `max`; or the last
    /// `max` lines when no line reads as an error
    /// ([`crate::text::is_error_line`]).
    pub fn excerpt(&self, max: usize) -> Vec<&str> {
        let lines: Vec<&str> = self.log.lines().collect();
        let first = lines.iter().position(|l| crate::text::is_error_line(l));
        match first {
            // A line of context before it (gcc's "In function ...").
            Some(at) => lines[at.saturating_sub(1)..]
                .iter()
                .take(max)
                .copied()
                .collect(),
            None => lines[lines.len().saturating_sub(max)..].to_vec(),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for line in self.excerpt(12) {
            write!(f, "\n  | {line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

/// The name of the binary a C, C++ or Rust build makes in the output
/// directory.
const BINARY: &str = "prog";

/// Compiles `source` into `out_dir` (created if needed) and returns how to
/// run the result. C, C++ and Rust run the binary, in `out_dir`; Java and
/// Kotlin run the main class from `out_dir`, in `out_dir`; Python runs the
/// main file with `python3`, in the source's directory, after a syntax
/// check of every file.
pub async fn build(
    source: &Source,
    out_dir: &Path,
    settings: &BuildSettings,
) -> Result<BotSpec, BuildError> {
    let language = source.language;
    let needs = |tool: &str| {
        program::resolve(tool.as_ref()).map_err(|_| {
            BuildError::new(format!(
                "{tool} not found: needed to build {} submission {}",
                language.name(),
                source.path.display()
            ))
        })
    };
    needs(language.compiler())?;
    if let Some(runtime) = language.runtime() {
        needs(runtime)?;
    }
    crate::interrupt::make_dir_within(out_dir)
        .map_err(|e| BuildError::new(format!("{}: {e}", out_dir.display())))?;
    let out_dir = std::fs::canonicalize(out_dir)
        .map_err(|e| BuildError::new(format!("{}: {e}", out_dir.display())))?;
    // Under the sandbox the compiler sees only the output directory (the
    // sources may be under a directory it hides, /tmp say): it compiles a
    // copy of them there, and its messages are turned back to name the
    // originals.
    let (copy, compiled) = if settings.sandbox {
        let copy = copy_sources(source, &out_dir.join("src"))?;
        (Some(copy.dir.clone()), copy)
    } else {
        (None, source.clone())
    };
    let mut static_link = true;
    loop {
        let args = compile_args(&compiled, &out_dir, static_link);
        let completed = compile(language.compiler(), args, &out_dir, settings).await?;
        if completed.success() {
            break;
        }
        let mut log = completed.log.clone();
        if let Some(copy) = &copy {
            log = log.replace(&*copy.to_string_lossy(), &source.dir.to_string_lossy());
        }
        // A machine without the static C libraries still builds, linked
        // dynamically (the program then depends on the host's libraries).
        if static_link && links_statically(language) && static_libraries_missing(&log) {
            tracing::warn!(
                "static linking failed; building {} dynamically",
                source.path.display()
            );
            static_link = false;
            continue;
        }
        return Err(BuildError {
            message: failure(source, &completed),
            log,
        });
    }
    Ok(run_spec(source, &out_dir, &settings.env))
}

fn links_statically(language: Language) -> bool {
    matches!(language, Language::C | Language::Cpp)
}

/// Whether a failed link was for want of static libraries (`-lc`, `-lm`,
/// `-lstdc++`), rather than the program's own undefined symbols.
fn static_libraries_missing(log: &str) -> bool {
    log.contains("cannot find -l")
}

fn failure(source: &Source, completed: &Completed) -> String {
    let what = format!(
        "building {} ({}) failed",
        source.path.display(),
        source.language.name()
    );
    if completed.memory_overrun.is_some() {
        return format!("{what}: the compiler held more than its memory bound");
    }
    match completed.ended {
        Some(ended) => format!("{what}: {} {ended}", source.language.compiler()),
        None => format!(
            "{what}: {} did not finish within {}",
            source.language.compiler(),
            crate::units::human_duration(completed.elapsed)
        ),
    }
}

/// The compiler's arguments, the judges' default flags.
fn compile_args(source: &Source, out_dir: &Path, static_link: bool) -> Vec<OsString> {
    let binary = out_dir.join(BINARY).into_os_string();
    let words = |w: &[&str]| w.iter().map(OsString::from).collect::<Vec<_>>();
    let files = source.files.iter().map(|f| f.clone().into_os_string());
    let mut args;
    match source.language {
        Language::C | Language::Cpp => {
            args = if source.language == Language::C {
                words(&["-x", "c", "-g", "-O2", "-std=gnu17"])
            } else {
                words(&["-x", "c++", "-g", "-O2", "-std=gnu++17"])
            };
            if static_link {
                args.push("-static".into());
            }
            args.extend(words(&["-pipe", "-o"]));
            args.push(binary);
            args.extend(files);
            if source.language == Language::C {
                args.push("-lm".into());
            }
        }
        Language::Rust => {
            args = words(&["-C", "opt-level=3", "--edition", "2021", "-o"]);
            args.push(binary);
            args.push(source.main_path().into_os_string());
        }
        Language::Java => {
            args = words(&["-encoding", "UTF-8", "-d"]);
            args.push(out_dir.into());
            args.extend(files);
        }
        Language::Kotlin => {
            args = words(&["-d"]);
            args.push(out_dir.into());
            args.extend(files);
        }
        Language::Python3 => {
            // A syntax check that writes nothing (py_compile would write
            // __pycache__ beside the sources), reporting as gcc does.
            args = words(&["-c", PYTHON_CHECK]);
            args.extend(files);
        }
    }
    args
}

/// Python's "compilation": every file's syntax, each error as
/// `FILE:LINE: error: WHAT`.
const PYTHON_CHECK: &str = "\
import sys
failed = 0
for name in sys.argv[1:]:
    try:
        compile(open(name, 'rb').read(), name, 'exec')
    except SyntaxError as e:
        print(f'{name}:{e.lineno}: error: {e.msg}', file=sys.stderr)
        failed = 1
    except (OSError, ValueError) as e:
        print(f'{name}: error: {e}', file=sys.stderr)
        failed = 1
sys.exit(failed)
";

/// How to run the built program.
fn run_spec(source: &Source, out_dir: &Path, env: &Environment) -> BotSpec {
    let spec = |program: OsString, args: Vec<OsString>, dir: &Path| BotSpec {
        program,
        args,
        dir: Some(dir.to_owned()),
        hide: vec![],
        env: env.clone(),
    };
    // No -Xmx: the referee bounds a program by the memory it uses, and a
    // JVM sizes its heap from the machine; a stack as deep as the judges'.
    let jvm = ["-XX:+UseSerialGC", "-Xss64m"];
    match source.language {
        Language::C | Language::Cpp | Language::Rust => {
            spec(out_dir.join(BINARY).into_os_string(), vec![], out_dir)
        }
        Language::Java => {
            let mut args: Vec<OsString> = jvm.iter().map(OsString::from).collect();
            args.extend(["-cp".into(), out_dir.into(), source.entry.clone().into()]);
            spec("java".into(), args, out_dir)
        }
        Language::Kotlin => {
            let mut args: Vec<OsString> = jvm.iter().map(|o| format!("-J{o}").into()).collect();
            args.extend(["-cp".into(), out_dir.into(), source.entry.clone().into()]);
            spec("kotlin".into(), args, out_dir)
        }
        Language::Python3 => spec(
            "python3".into(),
            vec![source.main_path().into_os_string()],
            &source.dir,
        ),
    }
}

/// Runs `compiler` with `args` in `out_dir`, sandboxed when asked.
async fn compile(
    compiler: &str,
    args: Vec<OsString>,
    out_dir: &Path,
    settings: &BuildSettings,
) -> Result<Completed, BuildError> {
    let cannot = |e: SpawnError| BuildError::new(format!("cannot run {compiler}: {e}"));
    let spec = BotSpec {
        program: compiler.into(),
        args,
        dir: Some(out_dir.to_owned()),
        hide: vec![],
        env: super::build::build_environment(&settings.env, settings.sandbox),
    };
    run_build(&spec, settings.timeout, settings.log_keep, settings.sandbox)
        .await
        .map_err(cannot)
}

/// Copies the sources of `source` (and C/C++ headers beside them) into
/// `to`, a fresh directory; the copy's [`Source`].
fn copy_sources(source: &Source, to: &Path) -> Result<Source, BuildError> {
    let fail = |e: std::io::Error| BuildError::new(format!("{}: {e}", to.display()));
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(fail)?;
    let mut files = Vec::new();
    let headers = std::fs::read_dir(&source.dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_header(p))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for file in source.files.iter().chain(&headers) {
        let copy = to.join(file.file_name().unwrap_or_default());
        std::fs::copy(file, &copy).map_err(fail)?;
        if source.files.contains(file) {
            files.push(copy);
        }
    }
    Ok(Source {
        dir: to.to_owned(),
        files,
        ..source.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bot::{Bot, BotLimits};

    use crate::bot::block_on as run;

    /// A directory holding `files` (name, text).
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn detect(dir: &Path) -> Result<Option<Source>, String> {
        Source::detect(dir)
    }

    #[test]
    fn languages_come_from_extensions() {
        let of = |name: &str| Language::of_file(Path::new(name));
        assert_eq!(of("a.c"), Some(Language::C));
        for cpp in ["a.cc", "a.cpp", "a.cxx", "a.c++", "a.C"] {
            assert_eq!(of(cpp), Some(Language::Cpp), "{cpp}");
        }
        assert_eq!(of("A.java"), Some(Language::Java));
        assert_eq!(of("a.kt"), Some(Language::Kotlin));
        assert_eq!(of("a.py"), Some(Language::Python3));
        assert_eq!(of("a.py3"), Some(Language::Python3));
        assert_eq!(of("a.rs"), Some(Language::Rust));
        for other in ["a.h", "a", "a.txt", "Makefile", ".py"] {
            assert_eq!(of(other), None, "{other}");
        }
    }

    #[test]
    fn a_single_file_or_a_directory_of_one_language() {
        let dir = tree(&[
            ("validate.cc", "int main(){}"),
            ("validate.h", ""),
            ("README.md", "x"),
            ("run", "not a source"),
        ]);
        let source = detect(dir.path()).unwrap().unwrap();
        assert_eq!(source.language, Language::Cpp);
        assert_eq!(source.files, vec![dir.path().join("validate.cc")]);
        // A non-source file is run as it is.
        assert_eq!(detect(&dir.path().join("run")).unwrap(), None);
        let single = detect(&dir.path().join("validate.cc")).unwrap().unwrap();
        assert_eq!(single.dir, dir.path());
        assert!(
            detect(&dir.path().join("missing.c"))
                .unwrap_err()
                .contains("missing.c")
        );
    }

    #[test]
    fn ambiguous_directories_are_errors_naming_them() {
        let mixed = tree(&[("a.c", ""), ("b.py", "")]);
        let error = detect(mixed.path()).unwrap_err();
        assert!(error.contains("several languages (C, Python 3)"), "{error}");
        let empty = tree(&[("notes.txt", "")]);
        let error = detect(empty.path()).unwrap_err();
        assert!(error.contains("no source file"), "{error}");
        let python = tree(&[("a.py", ""), ("b.py", "")]);
        let error = detect(python.path()).unwrap_err();
        assert!(error.contains("none is the main file"), "{error}");
        assert!(
            error.contains(&python.path().display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn the_python_main_file_is_the_only_main_or_the_directorys_namesake() {
        let main = tree(&[("helper.py", ""), ("main.py", "")]);
        assert_eq!(detect(main.path()).unwrap().unwrap().entry, "main.py");
        let root = tempfile::tempdir().unwrap();
        let named = root.path().join("solve");
        std::fs::create_dir(&named).unwrap();
        std::fs::write(named.join("solve.py"), "").unwrap();
        std::fs::write(named.join("util.py"), "").unwrap();
        assert_eq!(detect(&named).unwrap().unwrap().entry, "solve.py");
    }

    #[test]
    fn the_java_main_class_declares_main_and_keeps_its_package() {
        let dir = tree(&[
            (
                "Helper.java",
                "class Helper { // public static void main(\n }",
            ),
            (
                "Solve.java",
                "/* x */ package contest.a;\npublic class Solve {\n  public static void main(String[] a) {}\n}",
            ),
        ]);
        assert_eq!(
            detect(dir.path()).unwrap().unwrap().entry,
            "contest.a.Solve"
        );
        let none = tree(&[("A.java", "class A {}")]);
        assert!(detect(none.path()).unwrap_err().contains("no Java class"));
        let two = tree(&[
            (
                "A.java",
                "class A { public static void main(String[] a) {} }",
            ),
            (
                "B.java",
                "class B { static public void main(String[] a) {} }",
            ),
        ]);
        assert!(
            detect(two.path())
                .unwrap_err()
                .contains("several Java classes")
        );
    }

    #[test]
    fn the_kotlin_class_is_the_capitalized_stem_with_kt() {
        let dir = tree(&[("main.kt", "fun main() {}")]);
        assert_eq!(detect(dir.path()).unwrap().unwrap().entry, "MainKt");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_file_names_never_panic(
            names in proptest::collection::vec("[a-zA-Z0-9_.+ -]{1,12}(\\.(c|cc|C|py|java|kt|rs|h|txt))?", 0..6)
        ) {
            let dir = tempfile::tempdir().unwrap();
            for name in &names {
                if name == "." || name == ".." {
                    continue;
                }
                let _ = std::fs::write(dir.path().join(name), "class X { public static void main(String[] a) {} }");
            }
            let _ = detect(dir.path());
            for name in &names {
                let _ = detect(&dir.path().join(name));
            }
        }
    }

    /// Whether `tool` is there; says so when it is not.
    fn have(tool: &str) -> bool {
        let found = program::resolve(tool.as_ref()).is_ok();
        if !found {
            eprintln!("{tool} not found: skipping its test");
        }
        found
    }

    /// Builds `files` and checks the program echoes a line.
    fn builds_and_echoes(files: &[(&str, &str)], settings: BuildSettings) {
        let dir = tree(files);
        let out = tempfile::tempdir().unwrap();
        let source = detect(dir.path()).unwrap().unwrap();
        run(async {
            let spec = build(&source, out.path(), &settings)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let mut bot = Bot::spawn(&spec, BotLimits::default()).unwrap();
            let reply = bot
                .exchange(b"hello\n", Duration::from_secs(20), None)
                .await
                .unwrap();
            assert_eq!(reply.text, "echo hello", "{}", source.language);
            bot.shutdown(None).await.unwrap();
        });
        // Nothing was written beside the sources.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), files.len());
    }

    const C: &str = "#include <stdio.h>\n#include \"echo.h\"\nint main(void) { char s[100]; \
                     if (scanf(\"%99s\", s) == 1) printf(PREFIX \"%s\\n\", s); return 0; }\n";
    const CPP: &str = "#include <iostream>\n#include <string>\nint main() { std::string s; \
                       std::cin >> s; std::cout << \"echo \" << s << std::endl; }\n";
    const PYTHON: &str = "import helper\nprint(helper.PREFIX + input(), flush=True)\n";
    const JAVA: &str = "package x;\nimport java.util.Scanner;\npublic class Echo {\n  public static void \
                        main(String[] a) { System.out.println(\"echo \" + new Scanner(System.in).next()); }\n}\n";
    const RUST: &str = "fn main() { let mut s = String::new(); std::io::stdin().read_line(&mut s).unwrap(); \
                        println!(\"echo {}\", s.trim()); }\n";

    #[test]
    fn c_is_built_with_its_header_and_runs() {
        if have("gcc") {
            let files = [("echo.c", C), ("echo.h", "#define PREFIX \"echo \"\n")];
            builds_and_echoes(&files, BuildSettings::default());
        }
    }

    #[test]
    fn cpp_builds_and_runs() {
        if have("g++") {
            builds_and_echoes(&[("echo.cpp", CPP)], BuildSettings::default());
        }
    }

    #[test]
    fn python_with_a_module_runs() {
        if have("python3") {
            let files = [("main.py", PYTHON), ("helper.py", "PREFIX = 'echo '\n")];
            // Python caches the imported module beside it when it runs (as
            // docs/languages.md says): only the build must write nothing.
            let settings = BuildSettings {
                env: Environment::clean(&[("PYTHONDONTWRITEBYTECODE".into(), "1".into())]),
                ..BuildSettings::default()
            };
            builds_and_echoes(&files, settings);
        }
    }

    #[test]
    fn java_builds_and_runs() {
        if have("javac") {
            builds_and_echoes(&[("Echo.java", JAVA)], BuildSettings::default());
        }
    }

    #[test]
    fn rust_builds_and_runs() {
        if have("rustc") {
            builds_and_echoes(&[("main.rs", RUST)], BuildSettings::default());
        }
    }

    #[test]
    fn kotlin_builds_and_runs() {
        if have("kotlinc") {
            let kotlin = "fun main() { println(\"echo \" + readLine()!!) }\n";
            builds_and_echoes(&[("main.kt", kotlin)], BuildSettings::default());
        }
    }

    #[test]
    fn a_sandboxed_build_sees_a_copy_and_names_the_original() {
        if !have("gcc") || super::super::sandbox::check_sandbox().is_err() {
            return;
        }
        let settings = BuildSettings {
            sandbox: true,
            ..BuildSettings::default()
        };
        let files = [("echo.c", C), ("echo.h", "#define PREFIX \"echo \"\n")];
        builds_and_echoes(&files, settings.clone());
        let dir = tree(&[("bad.c", "int main(void) {\n  return nope;\n}\n")]);
        let out = tempfile::tempdir().unwrap();
        let source = detect(dir.path()).unwrap().unwrap();
        let error = run(build(&source, out.path(), &settings)).unwrap_err();
        let original = dir.path().join("bad.c").display().to_string();
        assert!(
            error.to_string().contains(&format!("{original}:2:")),
            "{error}"
        );
    }

    #[test]
    fn a_compile_error_names_the_file_and_line() {
        let cases: [(&str, &str, &str); 3] = [
            ("gcc", "bad.c", "int main(void) {\n  return nope;\n}\n"),
            (
                "javac",
                "Bad.java",
                "public class Bad {\n public static void main(String[] a) {\n  nope();\n }\n}\n",
            ),
            ("python3", "bad.py", "x = 1\nif x\n"),
        ];
        for (tool, name, text) in cases {
            if !have(tool) {
                continue;
            }
            let dir = tree(&[(name, text)]);
            let out = tempfile::tempdir().unwrap();
            let source = detect(dir.path()).unwrap().unwrap();
            let error = run(build(&source, out.path(), &BuildSettings::default())).unwrap_err();
            let shown = error.to_string();
            assert!(shown.contains("failed"), "{shown}");
            let file = dir.path().join(name).display().to_string();
            let line = match tool {
                "gcc" => format!("{file}:2:"),
                "javac" => format!("{file}:3:"),
                _ => format!("{file}:2: error: "),
            };
            assert!(shown.contains(&line), "{tool}: {shown}");
        }
    }

    #[test]
    fn a_missing_compiler_is_named_with_the_language() {
        let dir = tree(&[("main.kt", "fun main() {}")]);
        let source = detect(dir.path()).unwrap().unwrap();
        if program::resolve("kotlinc".as_ref()).is_ok() {
            return;
        }
        let out = tempfile::tempdir().unwrap();
        let error = run(build(&source, out.path(), &BuildSettings::default())).unwrap_err();
        assert!(
            error
                .message
                .starts_with("kotlinc not found: needed to build Kotlin submission"),
            "{error}"
        );
    }
}
