//! A test case as the package gives it: its files and the arguments its
//! group's `testdata.yaml` gives the validators. Read by the package,
//! used by the validators: it knows neither.

use std::ffi::OsString;
use std::path::PathBuf;

/// One test case of the package.
#[derive(Clone, Debug)]
pub struct Case {
    /// `sample/1`, `secret/group1/big`: the group's path and the file's
    /// stem.
    pub name: String,
    pub input: PathBuf,
    pub answer: PathBuf,
    /// From its group's `testdata.yaml`: passed to the validator after
    /// the package's own flags.
    pub validator_args: Vec<OsString>,
    /// From its group's `testdata.yaml`: passed to the input validators.
    pub(super) input_validator_args: InputArgs,
}

/// A group's arguments for the input validators: the same for each
/// (legacy `input_validator_flags: "--max 10"`, 2023-07
/// `input_validator_args: [--max, "10"]`), or for the validators named,
/// the others getting none (legacy `{name: validate, flags: ...}`,
/// 2023-07 `{validate: [...]}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum InputArgs {
    Each(Vec<String>),
    Named(Vec<(String, Vec<String>)>),
}

impl Default for InputArgs {
    fn default() -> InputArgs {
        InputArgs::Each(vec![])
    }
}
