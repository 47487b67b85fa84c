//! The package's output validator: built once, started once per case.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::testcase::Case;
use super::{InteractiveConfig, MAX_LINE, is_executable, names};
use crate::bot::command::{Completed, run_to_end};
use crate::bot::language::{BuildSettings, Language, Source, build};
use crate::bot::{Bot, BotLimits, BotSpec, Environment, Resources};

/// Time limit of a validator's `build` script or compilation.
pub(super) const BUILD_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of a `build` script's output is kept.
const LOG_KEEP: usize = 64 * 1024;

/// How to run the validator (after any build).
#[derive(Clone, Debug)]
pub(super) struct Validator {
    pub(super) program: OsString,
    /// Before INPUT ANSWER FEEDBACK_DIR (a Python source's path).
    pub(super) before: Vec<OsString>,
    /// After them: problem.yaml's `validator_flags`.
    pub(super) flags: Vec<OsString>,
    pub(super) dir: PathBuf,
}

/// Finds the validator's directory: `output_validator/` (the 2023-07
/// format; when it holds exactly one directory and no file, problemtools'
/// transitional form, that directory), or else the one directory in
/// `output_validators/` (the legacy format).
pub(super) fn validator_dir(problem: &Path) -> Result<PathBuf, String> {
    let newer = problem.join("output_validator");
    if newer.is_dir() {
        let (files, dirs) = entries(&newer)?;
        return match (files.as_slice(), dirs.as_slice()) {
            ([], [only]) => Ok(only.clone()),
            ([], []) => Err(format!(
                "{}: empty; expected the output validator's sources, or `build`/`run`",
                newer.display()
            )),
            _ => Ok(newer),
        };
    }
    let dir = problem.join("output_validators");
    if !dir.exists() {
        return Err(format!(
            "{}: no output_validator/ (nor legacy output_validators/); an interactive \
             problem needs its validator there",
            problem.display()
        ));
    }
    let (_, dirs) = entries(&dir)?;
    match dirs.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "{}: no validator directory in it (expected one, output_validators/<name>/)",
            dir.display()
        )),
        _ => Err(format!(
            "{}: more than one validator directory ({}); keep one",
            dir.display(),
            names(&dirs)
        )),
    }
}

/// The files and the directories in `dir` (hidden ones aside), sorted.
fn entries(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
        })
        .collect();
    paths.sort();
    let (dirs, files) = paths.into_iter().partition(|p| p.is_dir());
    Ok((files, dirs))
}

/// Runs the validator's `build` script in its directory, through the bot
/// layer (its own process group, a time limit, a memory bound); its last
/// lines of output are in the error when it fails.
async fn run_build_script(script: &Path, dir: &Path) -> Result<(), String> {
    let spec = BotSpec {
        program: script.into(),
        args: vec![],
        dir: Some(dir.to_owned()),
        hide: vec![],
        // The organiser's program: the referee's environment.
        env: Environment::Inherited,
    };
    let completed = run_to_end(&spec, BUILD_TIMEOUT, LOG_KEEP, false, None)
        .await
        .map_err(|e| format!("cannot start `build`: {e}"))?;
    if completed.success() {
        return Ok(());
    }
    Err(failure("`build`", &completed, BUILD_TIMEOUT))
}

/// Why the program `what` ran as `completed` failed (how it ended, or
/// that it ran out of `limit` or memory), and its last lines of output.
pub(super) fn failure(what: &str, completed: &Completed, limit: Duration) -> String {
    let why = match completed.ended {
        Some(ended) => format!("{what} {ended}"),
        None if completed.memory_overrun.is_some() => format!("{what} held too much memory"),
        None => format!(
            "{what} did not finish within {}",
            crate::units::human_duration(limit)
        ),
    };
    let lines: Vec<&str> = completed.log.lines().collect();
    let tail: String = lines[lines.len().saturating_sub(10)..]
        .iter()
        .map(|l| format!("\n  | {}", crate::text::terminal(l)))
        .collect();
    format!("{why}{tail}")
}

/// Runs `validator` (an input validator) with `args` and the file `input`
/// on its standard input, as `validator args < input`, until it ends or
/// `limit` passes; what it came to, its output kept.
pub(super) async fn run_on_input(
    validator: &Validator,
    input: &Path,
    args: &[OsString],
    limit: Duration,
) -> Result<Completed, String> {
    // The shell opens the input and becomes the validator (`exec`): the
    // same process, in the group the bot layer kills at the end.
    let mut shell_args: Vec<OsString> = vec![
        "-c".into(),
        "input=$1; shift; exec \"$@\" < \"$input\"".into(),
        "sh".into(),
        input.into(),
        validator.program.clone(),
    ];
    shell_args.extend(validator.before.iter().cloned());
    shell_args.extend(args.iter().cloned());
    let spec = BotSpec {
        program: "sh".into(),
        args: shell_args,
        dir: Some(validator.dir.clone()),
        hide: vec![],
        // The organiser's program: the referee's environment.
        env: Environment::Inherited,
    };
    run_to_end(&spec, limit, LOG_KEEP, false, None)
        .await
        .map_err(|e| format!("cannot start it: {e}"))
}

/// How to run the validator in `dir`, building it first when needed: an
/// executable `run` (made by `build` when there is one), a single
/// executable file, or sources of one language (compiled into `work`).
pub(super) async fn prepare_validator(dir: &Path, work: &Path) -> Result<Validator, String> {
    let at = |what: String| format!("{}: {what}", dir.display());
    let validator = |program: OsString, before: Vec<OsString>, run_in: PathBuf| Validator {
        program,
        before,
        flags: vec![],
        dir: run_in,
    };
    let run = dir.join("run");
    let build_script = dir.join("build");
    if run.exists() || build_script.exists() {
        if build_script.exists() {
            if !is_executable(&build_script) {
                return Err(at("`build` is not executable; try `chmod +x`".into()));
            }
            run_build_script(&build_script, dir)
                .await
                .map_err(|e| at(format!("build failed: {e}")))?;
        }
        if !run.exists() {
            return Err(at("`build` left no `run` program".into()));
        }
        if !is_executable(&run) {
            return Err(at("`run` is not executable; try `chmod +x`".into()));
        }
        return Ok(validator(run.into(), vec![], dir.to_owned()));
    }
    let (files, _) = entries(dir)?;
    if let [file] = files.as_slice()
        && Language::of_file(file).is_none()
    {
        if is_executable(file) {
            return Ok(validator(file.into(), vec![], dir.to_owned()));
        }
        return Err(at(format!(
            "{}: neither executable nor a source ({})",
            names(std::slice::from_ref(file)),
            "C, C++, Java, Kotlin, Python 3 or Rust"
        )));
    }
    let expected = "expected an executable `run` (with an optional `build`), a single \
                    executable file, or the validator's sources";
    let source = match Source::detect(dir) {
        Ok(Some(source)) => source,
        Ok(None) => return Err(at(format!("not a directory; {expected}"))),
        Err(e) => return Err(format!("{e}; {expected}")),
    };
    build_validator(&source, dir, work).await
}

/// `source` built into `work` (a validator of `dir`), ready to run.
async fn build_validator(source: &Source, dir: &Path, work: &Path) -> Result<Validator, String> {
    let settings = BuildSettings {
        timeout: BUILD_TIMEOUT,
        env: Environment::Inherited,
        ..BuildSettings::default()
    };
    let spec = build(source, &work.join("validator"), &settings)
        .await
        .map_err(|e| format!("{}: cannot build the validator: {e}", dir.display()))?;
    Ok(Validator {
        program: spec.program,
        before: spec.args,
        flags: vec![],
        dir: spec.dir.unwrap_or_else(|| dir.to_owned()),
    })
}

/// How to run the program at `path`, an entry of `input_validators/`: a
/// directory as [`prepare_validator`] has it; a file as itself when it is
/// an executable that is not a source, else built from its source into
/// `work`. It runs in the directory that holds it.
pub(super) async fn prepare_entry(path: &Path, work: &Path) -> Result<Validator, String> {
    if path.is_dir() {
        return prepare_validator(path, work).await;
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    if Language::of_file(path).is_some() {
        let source =
            Source::detect(path)?.ok_or_else(|| format!("{}: no source", path.display()))?;
        return build_validator(&source, dir, work).await;
    }
    if is_executable(path) {
        return Ok(Validator {
            program: path.into(),
            before: vec![],
            flags: vec![],
            dir: dir.to_owned(),
        });
    }
    Err(format!(
        "{}: neither executable nor a source (C, C++, Java, Kotlin, Python 3 or Rust)",
        path.display()
    ))
}

/// Starts the validator on `case`. It is the judge's own program: no
/// sandbox (it writes its feedback directory), no resource or memory
/// limits, but its own process group and the same shutdown as any bot.
pub(super) fn start_validator(
    config: &InteractiveConfig,
    validator: &ValidatorSpec,
    case: &Case,
    feedback_dir: &Path,
) -> Result<Bot, String> {
    let mut args = validator.0.before.clone();
    args.extend([
        case.input.clone().into_os_string(),
        case.answer.clone().into_os_string(),
        feedback_dir.to_owned().into_os_string(),
    ]);
    args.extend(validator.0.flags.iter().cloned());
    args.extend(case.validator_args.iter().cloned());
    let v_spec = BotSpec {
        program: validator.0.program.clone(),
        args,
        dir: Some(validator.0.dir.clone()),
        hide: vec![],
        env: Environment::Inherited,
    };
    let v_limits = BotLimits {
        max_line: MAX_LINE,
        echo_stderr: config.limits.echo_stderr,
        resources: Resources::NONE,
        memory: None,
        sandbox: false,
        ..BotLimits::default()
    };
    Bot::spawn(&v_spec, v_limits).map_err(|e| format!("cannot start the validator: {e}"))
}

/// A validator ready to run (see [`super::judge`]).
pub struct ValidatorSpec(pub(super) Validator);

#[cfg(test)]
mod tests {
    use super::*;

    use crate::bot::block_on as run;

    #[test]
    fn the_2023_layout_and_its_transitional_form_are_found() {
        let problem = tempfile::tempdir().unwrap();
        let newer = problem.path().join("output_validator");
        std::fs::create_dir_all(newer.join("checker")).unwrap();
        // One subdirectory and no file: problemtools' transitional form.
        assert_eq!(
            validator_dir(problem.path()).unwrap(),
            newer.join("checker")
        );
        std::fs::write(newer.join("validate.py"), "").unwrap();
        assert_eq!(validator_dir(problem.path()).unwrap(), newer);
        std::fs::remove_dir_all(&newer).unwrap();
        std::fs::create_dir_all(&newer).unwrap();
        let empty = validator_dir(problem.path()).unwrap_err();
        assert!(empty.contains("output_validator: empty"), "{empty}");
        std::fs::remove_dir_all(&newer).unwrap();
        let none = validator_dir(problem.path()).unwrap_err();
        assert!(none.contains("no output_validator/"), "{none}");
    }

    #[test]
    fn sources_of_two_languages_are_named_with_what_was_expected() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.c"), "").unwrap();
        std::fs::write(dir.path().join("b.py"), "").unwrap();
        let work = tempfile::tempdir().unwrap();
        let error = run(prepare_validator(dir.path(), work.path())).unwrap_err();
        assert!(error.contains("several languages"), "{error}");
        assert!(error.contains("expected an executable `run`"), "{error}");
    }
}
