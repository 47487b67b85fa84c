//! The package's settings and limits: problem.yaml in either format version
//! (legacy, and 2023-07), DOMjudge's `.timelimit` and
//! `domjudge-problem.ini`, and how they combine with the command line into
//! the limits each test case is judged by.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::bot::usage::human_bytes;
use crate::units::human_duration;

/// The time limit when neither the command line nor the package gives one.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(10);
/// The wall-clock cap, as a multiple of the time limit, when
/// `--wall-limit` is not given: problemtools' choice.
pub const WALL_FACTOR: u32 = 2;
/// Passes of a multi-pass problem when problem.yaml does not say (the
/// 2023-07 format's default).
pub const DEFAULT_PASSES: u32 = 2;

/// problem.yaml as the referee reads it: the keys of both format versions
/// that matter to judging. Anything else in the file is left alone.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ProblemYaml {
    problem_format_version: Option<String>,
    /// 2023-07: `interactive`, `multi-pass`, ... (a string or a list).
    #[serde(rename = "type")]
    kind: Option<Words>,
    /// Legacy: `custom interactive`.
    validation: Option<String>,
    /// Legacy: flags for the output validator, in one string.
    validator_flags: Option<String>,
    limits: LimitsYaml,
}

/// A string of words, or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Words {
    One(String),
    Many(Vec<String>),
}

impl Words {
    /// The words, one per item.
    pub(super) fn list(self) -> Vec<String> {
        match self {
            Words::One(text) => text.split_whitespace().map(String::from).collect(),
            Words::Many(list) => list,
        }
    }

    fn has(&self, word: &str) -> bool {
        match self {
            Words::One(text) => text.split_whitespace().any(|w| w == word),
            Words::Many(list) => list.iter().any(|w| w.trim() == word),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LimitsYaml {
    /// 2023-07: seconds.
    time_limit: Option<f64>,
    /// Legacy: limit = slowest accepted submission × this.
    time_multiplier: Option<f64>,
    /// Legacy: how far beyond the limit a TLE submission must be.
    time_safety_margin: Option<f64>,
    /// 2023-07: the same pair, renamed.
    time_multipliers: Option<TimeMultipliers>,
    /// MiB.
    memory: Option<f64>,
    /// 2023-07 multi-pass problems.
    validation_passes: Option<u32>,
}

/// A time factor's key, its value in the file, and its default.
type Factor = (&'static str, Option<f64>, f64);

impl LimitsYaml {
    /// The slowest accepted submission's factor to the time limit, and
    /// the time limit's to a time-limit submission's, in the format's
    /// own keys and defaults.
    fn factors(&self, modern: bool) -> [Factor; 2] {
        let multipliers = self.time_multipliers.as_ref();
        match modern {
            true => [
                (
                    "time_multipliers.ac_to_time_limit",
                    multipliers.and_then(|m| m.ac_to_time_limit),
                    2.0,
                ),
                (
                    "time_multipliers.time_limit_to_tle",
                    multipliers.and_then(|m| m.time_limit_to_tle),
                    1.5,
                ),
            ],
            false => [
                ("time_multiplier", self.time_multiplier, 5.0),
                ("time_safety_margin", self.time_safety_margin, 2.0),
            ],
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TimeMultipliers {
    ac_to_time_limit: Option<f64>,
    time_limit_to_tle: Option<f64>,
}

/// Where a whole-package run takes its time limit from (`--time-limit-from`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeLimitFrom {
    /// The command line's --timeout, else the package's explicit limit
    /// (problem.yaml, .timelimit, domjudge-problem.ini), else derived from
    /// the accepted submissions.
    #[default]
    Package,
    /// Always derived from the accepted submissions, as problemtools'
    /// verifyproblem does, even when the package gives a limit: their
    /// slowest case times the package's multiplier, rounded up to a second.
    Accepted,
}

/// verifyproblem's rule for a limit derived from the accepted
/// submissions, with the package's factors: `their slowest case's CPU
/// time times 5 (the default of limits.time_multiplier), rounded up to a
/// whole second`.
pub fn derived_rule(settings: &PackageSettings) -> String {
    let factor = &settings.ac_to_time_limit;
    format!(
        "their slowest case's CPU time times {} ({}), rounded up to a whole second",
        factor.value, factor.from
    )
}

/// A value and where it came from, for the run's first line.
#[derive(Clone, Debug, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub from: String,
}

/// What a package says about judging, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PackageSettings {
    /// The 2023-07 format (or a draft of it), rather than legacy.
    pub modern: bool,
    /// problem.yaml's `validator_flags` (legacy), passed to every case.
    pub validator_flags: Vec<OsString>,
    /// An explicit time limit, when the package gives one.
    pub time_limit: Option<Sourced<Duration>>,
    /// Without an explicit limit: limit = slowest accepted × this.
    pub ac_to_time_limit: Sourced<f64>,
    /// A time-limit submission must take more than limit × this.
    pub time_limit_to_tle: Sourced<f64>,
    /// Memory, bytes.
    pub memory: Option<Sourced<u64>>,
    /// Passes of a multi-pass problem; `None` for a single pass.
    pub passes: Option<u32>,
}

/// Reads problem.yaml (if any), `.timelimit` and `domjudge-problem.ini`.
pub fn read_settings(problem: &Path) -> Result<PackageSettings, String> {
    let path = problem.join("problem.yaml");
    let text = read_optional(&path)?.unwrap_or_default();
    let yaml: ProblemYaml = match text.trim() {
        "" => ProblemYaml::default(),
        _ => parse_yaml(&text).map_err(|e| format!("{}: {e}", path.display()))?,
    };
    // Where a key is, for an error about its value.
    let at = |key: &str, what: String| {
        let name = key.rsplit('.').next().unwrap_or(key);
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("{name}:")))
            .map(|i| format!(" line {}", i + 1))
            .unwrap_or_default();
        format!("{}{line}: {what}", path.display())
    };
    let modern = yaml
        .problem_format_version
        .as_deref()
        .is_some_and(|v| v.trim() != "legacy");
    check_interactive(&yaml, modern).map_err(|(key, e)| at(key, e))?;
    let limits = &yaml.limits;
    let factor = |(name, value, default): Factor| match value {
        None => Ok(Sourced {
            value: default,
            from: format!("the default of limits.{name}"),
        }),
        Some(v) if v.is_finite() && v >= 1.0 => Ok(Sourced {
            value: v,
            from: format!("problem.yaml limits.{name}"),
        }),
        Some(v) => Err(at(
            name,
            format!("limits.{name} must be a number of at least 1, not {v}"),
        )),
    };
    let [ac_to_time_limit, time_limit_to_tle] = limits.factors(modern);
    let passes = match (is_multi_pass(&yaml), limits.validation_passes) {
        (false, _) => None,
        (true, None) => Some(DEFAULT_PASSES),
        (true, Some(n)) if n >= 2 => Some(n),
        (true, Some(n)) => {
            return Err(at(
                "validation_passes",
                format!("limits.validation_passes must be at least 2, not {n}"),
            ));
        }
    };
    Ok(PackageSettings {
        modern,
        validator_flags: yaml
            .validator_flags
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(OsString::from)
            .collect(),
        time_limit: match limits.time_limit {
            Some(seconds) => Some(Sourced {
                value: seconds_limit(seconds)
                    .map_err(|e| at("time_limit", format!("limits.time_limit {e}")))?,
                from: "problem.yaml limits.time_limit".into(),
            }),
            None => domjudge_time_limit(problem)?,
        },
        ac_to_time_limit: factor(ac_to_time_limit)?,
        time_limit_to_tle: factor(time_limit_to_tle)?,
        memory: memory_limit(limits.memory).map_err(|e| at("memory", e))?,
        passes,
    })
}

/// Reads a YAML file of the package (problem.yaml, testdata.yaml).
/// serde_yaml_ng's errors say the line and column; a document that is
/// not a mapping at all is said plainly. A document nested deeper than
/// [`MOST_NESTING`] is refused first, at once: the parser takes time
/// quadratic in the nesting (50,000 `[` after a key: seconds of CPU
/// time, 200,000: minutes), and serde_yaml_ng refuses more than 128
/// levels anyway, but only once it has read them all.
pub(super) fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    check_nesting(text.as_bytes())?;
    serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
}

/// The deepest the collections of a package's YAML file may nest. Real
/// ones nest two or three levels.
pub const MOST_NESTING: usize = 64;

/// Refuses `text` when its collections nest more than [`MOST_NESTING`]
/// deep, reading it as libyaml parses it, one event at a time, and
/// stopping there: the nesting is counted exactly as serde_yaml_ng will
/// see it, and never more than that many levels are parsed. A syntax
/// error is left to serde_yaml_ng, which says it with its line.
fn check_nesting(text: &[u8]) -> Result<(), String> {
    use std::mem::MaybeUninit;

    /// The parser, boxed: libyaml keeps pointers into it, so it must not
    /// move once initialized; deleted when dropped.
    struct Parser(Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>);
    impl Drop for Parser {
        fn drop(&mut self) {
            // SAFETY: only made once `yaml_parser_initialize` succeeded.
            unsafe { unsafe_libyaml::yaml_parser_delete(self.0.as_mut_ptr()) }
        }
    }

    let mut boxed = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
    // SAFETY: initializes the parser in place; on failure (no memory)
    // nothing is to be deleted, and serde_yaml_ng is left to say it.
    if unsafe { unsafe_libyaml::yaml_parser_initialize(boxed.as_mut_ptr()) }.fail {
        return Ok(());
    }
    let mut parser = Parser(boxed);
    let raw = parser.0.as_mut_ptr();
    // SAFETY: `raw` is initialized and does not move (boxed); `text`
    // outlives the parser, which is dropped at the end of this function.
    unsafe {
        unsafe_libyaml::yaml_parser_set_encoding(raw, unsafe_libyaml::YAML_UTF8_ENCODING);
        unsafe_libyaml::yaml_parser_set_input_string(raw, text.as_ptr(), text.len() as u64);
    }
    let mut depth = 0usize;
    loop {
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: `raw` is a live parser; a parsed event is read, then
        // deleted once, before the next one is parsed.
        let (kind, line) = unsafe {
            if unsafe_libyaml::yaml_parser_parse(raw, event.as_mut_ptr()).fail {
                return Ok(());
            }
            let event = event.as_mut_ptr();
            let seen = ((*event).type_, (*event).start_mark.line);
            unsafe_libyaml::yaml_event_delete(event);
            seen
        };
        match kind {
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT
            | unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                depth += 1;
                if depth > MOST_NESTING {
                    return Err(format!(
                        "line {}: lists and mappings nested more than {MOST_NESTING} levels \
                         deep: refused without reading further",
                        line + 1
                    ));
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT | unsafe_libyaml::YAML_MAPPING_END_EVENT => {
                depth = depth.saturating_sub(1);
            }
            unsafe_libyaml::YAML_STREAM_END_EVENT => return Ok(()),
            _ => {}
        }
    }
}

/// The problem must be interactive, when it says what it is.
/// An `Err` names the key that says otherwise.
fn check_interactive(yaml: &ProblemYaml, modern: bool) -> Result<(), (&'static str, String)> {
    if modern {
        if let Some(kind) = &yaml.kind
            && !kind.has("interactive")
        {
            return Err((
                "type",
                format!(
                    "`type: {}` is not an interactive problem (expected `type: interactive`)",
                    words(kind)
                ),
            ));
        }
        return Ok(());
    }
    match &yaml.validation {
        Some(v) if !v.split_whitespace().any(|w| w == "interactive") => Err((
            "validation",
            format!(
                "`validation: {v}` is not an interactive problem \
                 (expected `validation: custom interactive`)"
            ),
        )),
        _ => Ok(()),
    }
}

fn words(kind: &Words) -> String {
    match kind {
        Words::One(text) => text.clone(),
        Words::Many(list) => list.join(", "),
    }
}

fn is_multi_pass(yaml: &ProblemYaml) -> bool {
    yaml.kind.as_ref().is_some_and(|k| k.has("multi-pass"))
        || yaml
            .validation
            .as_deref()
            .is_some_and(|v| v.split_whitespace().any(|w| w == "multi-pass"))
}

/// Where DOMjudge's time limits come from, as the first line says.
const DOTFILE: &str = ".timelimit";
const INI: &str = "domjudge-problem.ini timelimit";

/// DOMjudge's explicit time limit: `.timelimit`, else `timelimit` in
/// `domjudge-problem.ini`.
fn domjudge_time_limit(problem: &Path) -> Result<Option<Sourced<Duration>>, String> {
    let dotfile = problem.join(".timelimit");
    if let Some(text) = read_optional(&dotfile)? {
        let value =
            parse_seconds(text.trim()).map_err(|e| format!("{}: {e}", dotfile.display()))?;
        return Ok(Some(Sourced {
            value,
            from: DOTFILE.into(),
        }));
    }
    let ini = problem.join("domjudge-problem.ini");
    if let Some(text) = read_optional(&ini)? {
        for (i, line) in text.lines().enumerate() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if key.trim() == "timelimit" {
                let value = parse_seconds(value.trim().trim_matches(['\'', '"']))
                    .map_err(|e| format!("{} line {}: {e}", ini.display(), i + 1))?;
                return Ok(Some(Sourced {
                    value,
                    from: INI.into(),
                }));
            }
        }
    }
    Ok(None)
}

fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("expected a number of seconds, found `{text}`"))?;
    seconds_limit(seconds)
}

/// A positive, finite number of seconds, at most a day.
fn seconds_limit(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "must be a positive number of seconds, not {seconds}"
        ))
    }
}

fn memory_limit(mebibytes: Option<f64>) -> Result<Option<Sourced<u64>>, String> {
    match mebibytes {
        None => Ok(None),
        Some(m) if m.is_finite() && m >= 1.0 && m <= (1u64 << 30) as f64 => Ok(Some(Sourced {
            value: (m * 1024.0 * 1024.0) as u64,
            from: "problem.yaml limits.memory".into(),
        })),
        Some(m) => Err(format!(
            "limits.memory must be a positive number of MiB, not {m}"
        )),
    }
}

/// The limits each test case is judged by, and where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseLimits {
    /// The program's CPU time per case.
    pub time: Sourced<Duration>,
    /// The program's wall-clock time per case (a program that waits is
    /// stopped too).
    pub wall: Duration,
    /// The program's memory, bytes (`None`: measured only).
    pub memory: Option<Sourced<u64>>,
}

impl CaseLimits {
    /// The limits from the command line where it gives them, else the
    /// package's, else the defaults. `wall` defaults to [`WALL_FACTOR`]
    /// times the time limit.
    pub fn resolve(
        time: Option<Duration>,
        wall: Option<Duration>,
        memory: Option<Option<u64>>,
        default_memory: Option<u64>,
        package: &PackageSettings,
    ) -> CaseLimits {
        let time = match (time, &package.time_limit) {
            (Some(value), _) => Sourced {
                value,
                from: "--timeout".into(),
            },
            (None, Some(limit)) => limit.clone(),
            (None, None) => Sourced {
                value: DEFAULT_TIME_LIMIT,
                from: "the default; the package gives none".into(),
            },
        };
        let memory = match (memory, &package.memory) {
            (Some(value), _) => value.map(|value| Sourced {
                value,
                from: "--limit-memory".into(),
            }),
            (None, Some(limit)) => Some(limit.clone()),
            (None, None) => default_memory.map(|value| Sourced {
                value,
                from: "the default".into(),
            }),
        };
        CaseLimits {
            wall: wall.unwrap_or(time.value * WALL_FACTOR),
            time,
            memory,
        }
    }

    /// The run's description of its limits: `1s of CPU time per case
    /// (problem.yaml limits.time_limit), wall clock 2s, memory 256 MiB
    /// (problem.yaml limits.memory)`.
    pub fn describe(&self) -> String {
        format!(
            "{} of CPU time per case ({}), wall clock {}, {}",
            human_duration(self.time.value),
            self.time.from,
            human_duration(self.wall),
            self.describe_memory()
        )
    }

    /// `memory 256 MiB (problem.yaml limits.memory)`.
    pub fn describe_memory(&self) -> String {
        match &self.memory {
            Some(m) => format!("memory {} ({})", human_bytes(m.value), m.from),
            None => "memory measured only".into(),
        }
    }

    /// Whether the time limit is DOMjudge's, which verifyproblem does not
    /// read.
    pub fn is_domjudges(&self) -> bool {
        [DOTFILE, INI].contains(&self.time.from.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn settings(yaml: &str) -> Result<PackageSettings, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("problem.yaml"), yaml).unwrap();
        read_settings(dir.path())
    }

    #[test]
    fn both_format_versions_are_read() {
        let modern = settings(
            "problem_format_version: 2023-07-draft\ntype: interactive\nlimits:\n  time_limit: 1.5\n  memory: 256\n  time_multipliers:\n    time_limit_to_tle: 4\n",
        )
        .unwrap();
        assert!(modern.modern);
        assert_eq!(
            modern.time_limit.unwrap().value,
            Duration::from_millis(1500)
        );
        assert_eq!(modern.memory.unwrap().value, 256 << 20);
        assert_eq!(
            (
                modern.ac_to_time_limit.value,
                modern.time_limit_to_tle.value
            ),
            (2.0, 4.0)
        );
        let legacy = settings(
            "name: x\nvalidation: custom interactive\nvalidator_flags: --a b\nlimits:\n  time_multiplier: 3\n",
        )
        .unwrap();
        assert!(!legacy.modern);
        assert_eq!(
            legacy.validator_flags,
            vec![OsString::from("--a"), "b".into()]
        );
        assert_eq!(legacy.time_limit, None);
        assert_eq!(
            (
                legacy.ac_to_time_limit.value,
                legacy.time_limit_to_tle.value
            ),
            (3.0, 2.0)
        );
        assert_eq!(
            legacy.ac_to_time_limit.from,
            "problem.yaml limits.time_multiplier"
        );
        assert_eq!(
            legacy.time_limit_to_tle.from,
            "the default of limits.time_safety_margin"
        );
        let passes = settings("problem_format_version: 2023-07\ntype: [interactive, multi-pass]\n");
        assert_eq!(passes.unwrap().passes, Some(DEFAULT_PASSES));
    }

    #[test]
    fn bad_settings_name_the_file_and_the_key() {
        let e = settings("validation: default\n").unwrap_err();
        assert!(
            e.contains("problem.yaml") && e.contains("not an interactive"),
            "{e}"
        );
        let e = settings("problem_format_version: 2023-07\ntype: pass-fail\n").unwrap_err();
        assert!(e.contains("type: pass-fail"), "{e}");
        let e = settings("limits:\n  time_limit: -1\n").unwrap_err();
        assert!(e.contains("limits.time_limit"), "{e}");
        let e = settings("limits:\n  time_limit: fast\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn the_command_line_wins_then_the_package_then_the_default() {
        let package = settings("limits:\n  time_limit: 2\n").unwrap();
        let limits = CaseLimits::resolve(None, None, None, Some(1 << 31), &package);
        assert_eq!(limits.time.value, Duration::from_secs(2));
        assert_eq!(limits.wall, Duration::from_secs(4));
        assert!(limits.describe().contains("problem.yaml limits.time_limit"));
        let ms = Duration::from_millis(300);
        let limits = CaseLimits::resolve(Some(ms), Some(ms), Some(None), None, &package);
        assert_eq!(
            (limits.time.value, limits.wall, limits.memory),
            (ms, ms, None)
        );
    }

    proptest! {
        #[test]
        fn any_problem_yaml_is_read_or_refused_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_yaml::<ProblemYaml>(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn any_nesting_is_read_or_refused_and_deep_nesting_is_refused(
            text in "(\\[|\\]|\\{|\\}|a|: |, |- |\"|'|#|\n|  ){0,200}",
            depth in 0usize..200,
        ) {
            let _ = parse_yaml::<ProblemYaml>(&text);
            let nested = format!("limits: {}{}", "[".repeat(depth), "]".repeat(depth));
            let refused = check_nesting(nested.as_bytes()).is_err();
            // The mapping is one level, each list one more.
            prop_assert_eq!(refused, depth + 1 > MOST_NESTING);
        }

        #[test]
        fn any_yaml_like_text_is_read_or_refused(text in "(limits:|  time_limit:|type:| |-|\\[|\\]|[0-9.]{0,4}|interactive|\n){0,30}") {
            let _ = parse_yaml::<ProblemYaml>(&text);
        }
    }
}
