//! A problem package: its test cases, problem.yaml, and where its
//! validator is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::validator::{Validator, prepare_validator, validator_dir};

/// One test case of the package.
#[derive(Clone, Debug)]
pub struct Case {
    /// `sample/1`, `secret/group1/big`: the group's path and the file's
    /// stem.
    pub name: String,
    pub input: PathBuf,
    pub answer: PathBuf,
}

/// A problem package, read and checked.
#[derive(Debug)]
pub(super) struct Package {
    pub(super) cases: Vec<Case>,
    pub(super) validator: Validator,
}

/// The test cases of `data/GROUP` (`sample`, `secret`) and of every test
/// group under it, at any depth: each `*.in` with the `.ans` beside it.
/// Files and groups are taken in natural order (`2` before `10`), and a
/// case is named by its group's path (`secret/group1/3`). A missing group
/// is empty. A symbolic link to a directory is not followed (it could
/// loop).
pub(super) fn cases_of(problem: &Path, group: &str) -> Result<Vec<Case>, String> {
    let dir = problem.join("data").join(group);
    let mut cases = Vec::new();
    if dir.is_dir() {
        collect_cases(&dir, group, &mut cases)?;
    }
    Ok(cases)
}

pub(super) fn collect_cases(dir: &Path, group: &str, cases: &mut Vec<Case>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    let name = |p: &PathBuf| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    paths.sort_by(|a, b| crate::text::natural_cmp(&name(a), &name(b)));
    for path in paths {
        let real_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if real_dir {
            collect_cases(&path, &format!("{group}/{}", name(&path)), cases)?;
            continue;
        }
        if !(path.extension().is_some_and(|x| x == "in") && path.is_file()) {
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
        cases.push(Case {
            name: format!("{group}/{stem}"),
            input: path,
            answer,
        });
    }
    Ok(())
}

/// Reads problem.yaml, if any: it must not name another kind of validation
/// than interactive; its `validator_flags` are passed to the validator. A
/// few lines are read by hand (no YAML library): `validation:`, `type:` and
/// `validator_flags:` at the top level, each on one line.
pub(super) fn read_problem_yaml(problem: &Path) -> Result<Vec<OsString>, String> {
    let path = problem.join("problem.yaml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut flags = vec![];
    let mut interactive = false;
    let mut validation = None;
    for (i, line) in text.lines().enumerate() {
        let value = |key: &str| {
            line.strip_prefix(key).map(|v| {
                v.split('#')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_matches(['"', '\''])
            })
        };
        // `validation: custom interactive` (the legacy format), or `type:
        // ... interactive` (the 2023 format, where legacy `type` is
        // pass-fail or scoring).
        for key in ["validation:", "type:"] {
            if let Some(v) = value(key) {
                interactive |= v.split_whitespace().any(|w| w == "interactive");
                if key == "validation:" {
                    validation = Some((i + 1, v.to_string()));
                }
            }
        }
        if let Some(v) = value("validator_flags:") {
            flags = v.split_whitespace().map(OsString::from).collect();
        }
    }
    if let Some((line, v)) = validation
        && !interactive
    {
        return Err(format!(
            "{} line {line}: `validation: {v}` is not an interactive problem \
             (expected `validation: custom interactive`)",
            path.display(),
        ));
    }
    Ok(flags)
}

pub(super) fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.file_name().unwrap_or_default().to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Reads and checks the package, and gets its validator ready.
pub(super) async fn load(problem: &Path, work: &Path) -> Result<Package, String> {
    if !problem.is_dir() {
        return Err(format!("{}: not a directory", problem.display()));
    }
    let problem =
        std::path::absolute(problem).map_err(|e| format!("{}: {e}", problem.display()))?;
    let flags = read_problem_yaml(&problem)?;
    let mut cases = cases_of(&problem, "sample")?;
    cases.extend(cases_of(&problem, "secret")?);
    if cases.is_empty() {
        return Err(format!(
            "{}: no test cases (*.in under data/sample/ or data/secret/)",
            problem.display()
        ));
    }
    let dir = validator_dir(&problem)?;
    let mut validator = prepare_validator(&dir, work).await?;
    validator.flags = flags;
    Ok(Package { cases, validator })
}
