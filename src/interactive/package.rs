//! A problem package: its test cases, problem.yaml, and where its
//! validator is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::limits::{PackageSettings, Words, parse_yaml, read_settings};
pub use super::testcase::Case;
pub(super) use super::testcase::InputArgs;
use super::validator::{Validator, prepare_validator, validator_dir};
pub(super) use super::{is_executable, names};

impl InputArgs {
    /// The arguments of the input validator `name` (`validate.py`), which
    /// a map may name by its file name or without its extension.
    pub(super) fn of(&self, name: &str) -> Vec<OsString> {
        let stem = Path::new(name).file_stem().unwrap_or_default();
        let words = match self {
            InputArgs::Each(words) => words.as_slice(),
            InputArgs::Named(named) => named
                .iter()
                .find(|(key, _)| key == name || Path::new(key).as_os_str() == stem)
                .map_or(&[][..], |(_, words)| words.as_slice()),
        };
        words.iter().map(OsString::from).collect()
    }
}

/// The arguments a group gives its cases, and its subgroups unless they
/// give their own, each kind on its own.
#[derive(Clone, Debug, Default)]
struct GroupArgs {
    output: Vec<OsString>,
    input: InputArgs,
}

/// A problem package, read and checked.
#[derive(Debug)]
pub(super) struct Package {
    pub(super) cases: Vec<Case>,
    pub(super) validator: Validator,
    pub(super) settings: PackageSettings,
}

/// The test cases of `data/GROUP` (`sample`, `secret`) and of every test
/// group under it, at any depth: each `*.in` with the `.ans` beside it.
/// Files and groups are taken in natural order (`2` before `10`), and a
/// case is named by its group's path (`secret/group1/3`). A missing group
/// is empty. A symbolic link to a directory is not followed (it could
/// loop). Each group's `testdata.yaml` gives its cases' validator
/// arguments, and its subgroups' unless they have their own. An answer
/// file without an input beside it is no test case: it is noted.
fn read_group(problem: &Path, group: &str) -> Result<Group, String> {
    let data = problem.join("data");
    let dir = data.join(group);
    let mut found = Group::default();
    if dir.is_dir() {
        let inherited = group_args(&data, &GroupArgs::default())?;
        collect_cases(&dir, group, &inherited, &mut found)?;
    }
    Ok(found)
}

/// What `data/GROUP` holds: its test cases, and the answer files that
/// have no input beside them (`secret/9.ans`), which are not test cases.
#[derive(Default)]
struct Group {
    cases: Vec<Case>,
    lone_answers: Vec<String>,
}

/// The entries of `dir`, in natural order of their names (`2` before
/// `10`).
pub(super) fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort_by(|a, b| {
        crate::text::natural_cmp(&crate::text::name_of(a), &crate::text::name_of(b))
    });
    Ok(paths)
}

fn collect_cases(
    dir: &Path,
    group: &str,
    inherited: &GroupArgs,
    found: &mut Group,
) -> Result<(), String> {
    let args = &group_args(dir, inherited)?;
    for path in sorted_entries(dir)? {
        let real_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if real_dir {
            collect_cases(
                &path,
                &format!("{group}/{}", crate::text::name_of(&path)),
                args,
                found,
            )?;
            continue;
        }
        let extension = path.extension().unwrap_or_default();
        if extension == "ans" && path.is_file() && !path.with_extension("in").is_file() {
            found
                .lone_answers
                .push(format!("{group}/{}", crate::text::name_of(&path)));
        }
        if !(extension == "in" && path.is_file()) {
            continue;
        }
        let answer = path.with_extension("ans");
        if !answer.is_file() {
            return Err(format!(
                "{}: no answer file {} beside it",
                path.display(),
                answer.display()
            ));
        }
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        found.cases.push(Case {
            name: format!("{group}/{stem}"),
            input: path,
            answer,
            validator_args: args.output.clone(),
            input_validator_args: args.input.clone(),
        });
    }
    Ok(())
}

/// A group's `testdata.yaml`, as far as the referee reads it: the
/// validators' arguments, as the legacy format's one string or the
/// 2023-07 format's list.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(super) struct TestdataYaml {
    output_validator_flags: Option<String>,
    output_validator_args: Option<Words>,
    input_validator_flags: Option<InputArgsYaml>,
    input_validator_args: Option<InputArgsYaml>,
}

/// The input validators' arguments as written.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum InputArgsYaml {
    Words(Words),
    /// Legacy: one validator's flags.
    Legacy {
        name: String,
        flags: String,
    },
    /// 2023-07: each validator's, by name.
    Map(std::collections::BTreeMap<String, Words>),
}

impl From<InputArgsYaml> for InputArgs {
    fn from(yaml: InputArgsYaml) -> InputArgs {
        match yaml {
            InputArgsYaml::Words(words) => InputArgs::Each(words.list()),
            InputArgsYaml::Legacy { name, flags } => InputArgs::Named(vec![(
                name,
                flags.split_whitespace().map(String::from).collect(),
            )]),
            InputArgsYaml::Map(map) => InputArgs::Named(
                map.into_iter()
                    .map(|(name, words)| (name, words.list()))
                    .collect(),
            ),
        }
    }
}

/// `testdata.yaml`'s text, read (an empty file says nothing).
pub(super) fn parse_testdata(text: &str) -> Result<TestdataYaml, String> {
    if text.trim().is_empty() {
        return Ok(TestdataYaml::default());
    }
    parse_yaml(text)
}

/// The arguments `dir/testdata.yaml` gives, each kind it does not give
/// taken from `inherited`.
fn group_args(dir: &Path, inherited: &GroupArgs) -> Result<GroupArgs, String> {
    let path = dir.join("testdata.yaml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(inherited.clone()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let yaml = parse_testdata(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let output = match (yaml.output_validator_args, yaml.output_validator_flags) {
        (Some(args), _) => args.list().into_iter().map(OsString::from).collect(),
        (None, Some(flags)) => flags.split_whitespace().map(OsString::from).collect(),
        (None, None) => inherited.output.clone(),
    };
    let input = match yaml.input_validator_args.or(yaml.input_validator_flags) {
        Some(args) => args.into(),
        None => inherited.input.clone(),
    };
    Ok(GroupArgs { output, input })
}

/// Under `--sandbox`, why the test data cannot be used, if a case's input
/// or answer is a link that leads outside the package: the sandbox hides
/// the package, not where its links lead, which the program would read.
fn data_outside(problem: &Path, cases: &[Case]) -> Result<(), String> {
    let package =
        std::fs::canonicalize(problem).map_err(|e| format!("{}: {e}", problem.display()))?;
    let outside: Vec<String> = cases
        .iter()
        .flat_map(|case| [&case.input, &case.answer])
        .filter_map(|file| {
            let real = std::fs::canonicalize(file).ok()?;
            (!real.starts_with(&package))
                .then(|| format!("{} leads to {}", file.display(), real.display()))
        })
        .collect();
    if outside.is_empty() {
        return Ok(());
    }
    Err(format!(
        "--sandbox hides the problem package {} from the program, but not where a \
         link leads, and test data does lead outside it (copy the files in):\n  {}",
        problem.display(),
        outside.join("\n  ")
    ))
}

/// Says which answer files have no input beside them: they are not test
/// cases, and a package that has them has most likely lost its inputs.
fn warn_lone_answers(problem: &Path, groups: [&Group; 2]) {
    let lone: Vec<&str> = groups
        .iter()
        .flat_map(|g| g.lone_answers.iter().map(String::as_str))
        .collect();
    if lone.is_empty() {
        return;
    }
    eprintln!(
        "referee interactive: warning: {}: {} answer file{} without an input, not judged: {}",
        problem.join("data").display(),
        lone.len(),
        if lone.len() == 1 { "" } else { "s" },
        crate::text::terminal(&lone.join(", "))
    );
}

/// Reads and checks the package (for `sandbox`, that its test data is in
/// it), and gets its validator ready.
pub(super) async fn load(problem: &Path, work: &Path, sandbox: bool) -> Result<Package, String> {
    if !problem.is_dir() {
        return Err(format!("{}: not a directory", problem.display()));
    }
    let problem =
        std::path::absolute(problem).map_err(|e| format!("{}: {e}", problem.display()))?;
    let settings = read_settings(&problem)?;
    let (sample, secret) = (
        read_group(&problem, "sample")?,
        read_group(&problem, "secret")?,
    );
    warn_lone_answers(&problem, [&sample, &secret]);
    let mut cases = sample.cases;
    cases.extend(secret.cases);
    if cases.is_empty() {
        return Err(format!(
            "{}: no test cases (*.in under data/sample/ or data/secret/)",
            problem.display()
        ));
    }
    if sandbox {
        data_outside(&problem, &cases)?;
    }
    let dir = validator_dir(&problem)?;
    let mut validator = prepare_validator(&dir, work).await?;
    validator.flags = settings.validator_flags.clone();
    Ok(Package {
        cases,
        validator,
        settings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_validator_arguments_in_each_format() {
        let args = |text: &str| -> InputArgs {
            let yaml = parse_testdata(text).unwrap();
            yaml.input_validator_args
                .or(yaml.input_validator_flags)
                .map(InputArgs::from)
                .unwrap_or_default()
        };
        let each = args("input_validator_flags: --max 10\n");
        assert_eq!(each.of("validate.py"), ["--max", "10"]);
        let listed = args("input_validator_args: [--max, '10']\n");
        assert_eq!(listed, each);
        let legacy = args("input_validator_flags:\n  name: validate\n  flags: --small\n");
        assert_eq!(legacy.of("validate.py"), ["--small"]);
        assert!(legacy.of("other.py").is_empty());
        let named = args("input_validator_args:\n  validate.py: [--big]\n");
        assert_eq!(named.of("validate.py"), ["--big"]);
        assert!(named.of("check").is_empty());
        assert_eq!(args(""), InputArgs::default());
        assert!(parse_testdata("input_validator_args: 5\n").is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_testdata_yaml_is_read_without_a_panic(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            key in proptest::sample::select(vec![
                "input_validator_flags", "input_validator_args",
                "output_validator_flags", "output_validator_args",
            ]),
        ) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse_testdata(&text);
            if let Ok(yaml) = parse_testdata(&format!("{key}: {text}")) {
                let _ = yaml.input_validator_args.map(InputArgs::from);
            }
        }
    }
}
