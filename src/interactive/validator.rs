//! The package's output validator: built once, started once per case.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::package::{Case, is_executable, names};
use super::{InteractiveConfig, MAX_LINE, MAX_OUTPUT};
use crate::bot::{Bot, BotLimits, BotSpec, Resources};

/// Time limit of a validator's `build` script or compilation.
pub(super) const BUILD_TIMEOUT: Duration = Duration::from_secs(120);

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

/// Finds the validator's directory: the one directory in
/// `output_validators/`, or `output_validator/` (the newer format's name).
pub(super) fn validator_dir(problem: &Path) -> Result<PathBuf, String> {
    let newer = problem.join("output_validator");
    if newer.is_dir() {
        return Ok(newer);
    }
    let dir = problem.join("output_validators");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "{}: {e} (an interactive problem needs its validator there)",
            dir.display()
        )
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    match dirs.len() {
        1 => Ok(dirs.remove(0)),
        0 => Err(format!("{}: no validator directory in it", dir.display())),
        _ => Err(format!(
            "{}: more than one validator directory ({}); keep one",
            dir.display(),
            names(&dirs)
        )),
    }
}

/// Runs a build command (a `build` script, or a compiler) in `dir`, with
/// [`BUILD_TIMEOUT`], through the bot layer (its own process group, killed
/// at the end). Its output is returned in the error when it fails.
pub(super) async fn build(program: &str, args: Vec<OsString>, dir: &Path) -> Result<(), String> {
    let spec = BotSpec {
        program: program.into(),
        args,
        dir: Some(dir.to_owned()),
        hide: vec![],
    };
    let limits = BotLimits {
        max_line: MAX_LINE,
        resources: Resources::NONE,
        memory: Some(crate::bot::command::BUILD_MEMORY),
        ..BotLimits::default()
    };
    let mut bot = Bot::spawn(&spec, limits).map_err(|e| format!("cannot start {program}: {e}"))?;
    bot.close_input();
    let deadline = crate::bot::deadline_after(BUILD_TIMEOUT);
    let output = bot.read_to_end(deadline, MAX_OUTPUT).await;
    let ended = match &output {
        Ok(_) => Some(bot.wait_exit(deadline).await),
        Err(_) => None,
    };
    let _ = bot.kill().await;
    let mut tail = bot.stderr(|t| t.last_lines(10));
    if let Ok(lines) = &output {
        tail.extend(lines.iter().rev().take(10).rev().cloned());
    }
    let tail = tail
        .iter()
        .map(|l| format!("\n  | {l}"))
        .collect::<String>();
    match (output, ended) {
        (Ok(_), Some(Ok(ended))) if ended.success() => Ok(()),
        (Ok(_), Some(Ok(ended))) => Err(format!("{program} {ended}{tail}")),
        (Err(e), _) | (_, Some(Err(e))) => Err(format!("{program}: {e}{tail}")),
        (Ok(_), None) => unreachable!("waited for"),
    }
}

/// How to run the validator in `dir`, building it first when needed
/// (a compiled source goes into `work`).
pub(super) async fn prepare_validator(dir: &Path, work: &Path) -> Result<Validator, String> {
    let at = |what: String| format!("{}: {what}", dir.display());
    let validator = |program: PathBuf, before: Vec<OsString>| Validator {
        program: program.into_os_string(),
        before,
        flags: vec![],
        dir: dir.to_owned(),
    };
    let run = dir.join("run");
    let build_script = dir.join("build");
    if run.exists() || build_script.exists() {
        if build_script.exists() {
            if !is_executable(&build_script) {
                return Err(at("`build` is not executable; try `chmod +x`".into()));
            }
            build(&build_script.to_string_lossy(), vec![], dir)
                .await
                .map_err(|e| at(format!("build failed: {e}")))?;
        }
        if !run.exists() {
            return Err(at("`build` left no `run` program".into()));
        }
        if !is_executable(&run) {
            return Err(at("`run` is not executable; try `chmod +x`".into()));
        }
        return Ok(validator(run, vec![]));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| at(e.to_string()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .starts_with('.')
                && !p.extension().is_some_and(|x| x == "h" || x == "hpp")
        })
        .collect();
    files.sort();
    let [file] = files.as_slice() else {
        return Err(at(format!(
            "expected an executable `run` (with an optional `build`), or a single executable \
             file or Python, C or C++ source; found {}",
            if files.is_empty() {
                "no file".to_string()
            } else {
                names(&files)
            }
        )));
    };
    let extension = file
        .extension()
        .map(|x| x.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let compiled = work.join("validator");
    let compile = |compiler: &'static str, extra: &[&str]| {
        let mut args: Vec<OsString> = vec!["-O2".into(), "-o".into(), compiled.clone().into()];
        args.extend(extra.iter().map(OsString::from));
        args.push("-I".into());
        args.push(dir.into());
        args.push(file.into());
        args.push("-lm".into());
        (compiler, args)
    };
    let (compiler, args) = match extension.as_str() {
        "py" => return Ok(validator("python3".into(), vec![file.into()])),
        "c" => compile("cc", &[]),
        "cc" | "cpp" | "cxx" | "c++" => compile("c++", &["-std=gnu++17"]),
        _ if is_executable(file) => return Ok(validator(file.clone(), vec![])),
        _ => {
            return Err(at(format!(
                "{}: neither executable nor a Python, C or C++ source",
                names(std::slice::from_ref(file))
            )));
        }
    };
    build(compiler, args, dir)
        .await
        .map_err(|e| at(format!("compiling {} failed: {e}", names(&files))))?;
    Ok(validator(compiled, vec![]))
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
