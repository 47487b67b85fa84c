//! The package's input validators, run on every test input before any
//! program is judged, as problemtools' `verifyproblem` and BAPCtools run
//! them: each program in `input_validators/` (or the legacy name
//! `input_format_validators/`), built as the output validator is, runs
//! as `validator ARGS < INPUT` with its group's `testdata.yaml` arguments;
//! exit status 42 accepts the input, anything else rejects it. One input
//! rejected stops the run (exit status 1) before any program is judged:
//! a verdict on a bad input says nothing about the program. They run once
//! the package is read and its output validator built, so that what
//! refuses a run (a bad package, `--sandbox` and a program among the
//! judge's files) refuses it first.

use std::path::{Path, PathBuf};

use super::package::{Case, names, sorted_entries};
use super::validator::{Validator, failure, prepare_entry, run_on_input};
use super::{ACCEPT, InteractiveConfig, WorkDir, fail};
use crate::bot::Ended;
use crate::exit::Status;

/// The folders input validators are in, the format's name first.
const FOLDERS: [&str; 2] = ["input_validators", "input_format_validators"];

/// Checks the input of every one of `cases` (the package's, read) with
/// the package's input validators, as `config` says
/// (`--no-input-validation`, `--strict`). `Err` ends the run with that
/// status, having said why.
pub(super) async fn check(config: &InteractiveConfig, cases: &[Case]) -> Result<(), Status> {
    if !config.input_validation {
        println!("interactive: input validators not run (--no-input-validation)");
        return Ok(());
    }
    let problem = std::path::absolute(&config.problem).map_err(|e| fail(Status::Usage, e))?;
    let entries = find(&problem).map_err(|e| fail(Status::Usage, e))?;
    let warn = |text: String| {
        eprintln!("referee interactive: warning: {text}");
        match config.strict {
            true => Err(fail(Status::Fail, "--strict: a warning fails the run")),
            false => Ok(()),
        }
    };
    let mut runnable = Vec::new();
    for entry in entries {
        match entry.extension().and_then(|e| e.to_str()) {
            Some("ctd" | "viva") => warn(format!(
                "{}: not run (checktestdata and VIVA files are not supported)",
                entry.display()
            ))?,
            _ => runnable.push(entry),
        }
    }
    if runnable.is_empty() {
        warn(format!(
            "{}: no input validator (input_validators/): the test inputs are not checked",
            config.problem.display()
        ))?;
        return Ok(());
    }
    let work = WorkDir::new().map_err(|e| {
        fail(
            Status::Internal,
            format!("cannot create a work directory: {e}"),
        )
    })?;
    let mut validators = Vec::new();
    for (i, entry) in runnable.iter().enumerate() {
        let ready = prepare_entry(entry, &work.0.join(format!("input-{i}")))
            .await
            .map_err(|e| fail(Status::Usage, format!("input validator: {e}")))?;
        validators.push((crate::text::name_of(entry), ready));
    }
    let rejected = run_all(config, &problem, cases, &validators).await?;
    let (count, inputs) = (validators.len(), cases.len());
    let named = names(&runnable);
    if rejected > 0 {
        return Err(fail(
            Status::Fail,
            format!(
                "{rejected} of {inputs} test input{} rejected by the input validator{} \
                 ({named}); no program judged",
                plural(inputs),
                plural(count)
            ),
        ));
    }
    println!(
        "interactive: {inputs} test input{} accepted by the input validator{} ({named})",
        plural(inputs),
        plural(count)
    );
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The input validators' programs (files and folders, hidden ones aside,
/// in natural order) in the first of [`FOLDERS`] the package has.
fn find(problem: &Path) -> Result<Vec<PathBuf>, String> {
    let Some(dir) = FOLDERS
        .iter()
        .map(|name| problem.join(name))
        .find(|dir| dir.is_dir())
    else {
        return Ok(vec![]);
    };
    Ok(sorted_entries(&dir)?
        .into_iter()
        .filter(|p| !crate::text::name_of(p).starts_with('.'))
        .collect())
}

/// Runs every validator on every case's input; says each rejection, with
/// the validator's last lines of output. How many inputs were rejected.
async fn run_all(
    config: &InteractiveConfig,
    problem: &Path,
    cases: &[Case],
    validators: &[(String, Validator)],
) -> Result<usize, Status> {
    let mut rejected = 0;
    for case in cases {
        let mut accepted = true;
        for (name, validator) in validators {
            let args = case.input_validator_args.of(name);
            let limit = config.validator_timeout;
            let completed = run_on_input(validator, &case.input, &args, limit)
                .await
                .map_err(|e| fail(Status::Usage, format!("input validator {name}: {e}")))?;
            if completed.ended == Some(Ended::Exited(ACCEPT)) {
                continue;
            }
            accepted = false;
            let input = case.input.strip_prefix(problem).unwrap_or(&case.input);
            eprintln!(
                "referee interactive: input validator {} did not accept {} ({}): {}",
                crate::text::terminal(name),
                crate::text::terminal_path(input),
                crate::text::terminal(&case.name),
                failure("it", &completed, limit)
            );
        }
        rejected += usize::from(!accepted);
    }
    Ok(rejected)
}
