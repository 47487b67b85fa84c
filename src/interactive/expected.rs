//! DOMjudge's `@EXPECTED_RESULTS@:` tags: the verdicts a submission may
//! get, written in its own source (`// @EXPECTED_RESULTS@: CORRECT,
//! TIMELIMIT`), for submissions a folder cannot describe (`mixed/`).
//!
//! Read as DOMjudge reads them (`SubmissionService::parseExpectedAnnotation`):
//! the key anywhere in a file, its case ignored; the rest of its line, a
//! comma-separated list of verdicts in DOMjudge's spellings or the problem
//! package format's; a second tag in one file is an error. How a tag and its
//! submission's folder combine is [`Expectation`]'s rule.

use std::fmt;

use super::verdict::Verdict;

/// The key, compared without regard to case.
const KEY: &[u8] = b"@EXPECTED_RESULTS@:";

/// A verdict a tag names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expected {
    Accepted,
    /// `NO-OUTPUT` too: DOMjudge's wrong answer with no output.
    WrongAnswer,
    TimeLimit,
    /// A memory limit too, as the folders count it.
    RunError,
    MemoryLimit,
    /// The submission does not build.
    CompileError,
    /// DOMjudge's `OUTPUT-LIMIT`: the referee gives no such verdict (its
    /// output cap is a WRONG ANSWER), so it matches nothing.
    OutputLimit,
}

impl Expected {
    /// The verdict `word` names (already upper case and trimmed); `None`
    /// for `CHECK-MANUALLY`, which names no verdict (BAPCtools ignores it
    /// too).
    fn parse(word: &str) -> Result<Option<Expected>, String> {
        Ok(Some(match word.replace('_', "-").as_str() {
            "CORRECT" | "ACCEPTED" => Expected::Accepted,
            "WRONG-ANSWER" | "NO-OUTPUT" => Expected::WrongAnswer,
            "TIMELIMIT" | "TIME-LIMIT-EXCEEDED" => Expected::TimeLimit,
            "RUN-ERROR" | "RUN-TIME-ERROR" => Expected::RunError,
            "MEMORY-LIMIT" => Expected::MemoryLimit,
            "COMPILER-ERROR" => Expected::CompileError,
            "OUTPUT-LIMIT" => Expected::OutputLimit,
            "CHECK-MANUALLY" => return Ok(None),
            _ => {
                return Err(format!(
                    "`{}` is not a verdict (CORRECT, WRONG-ANSWER, NO-OUTPUT, TIMELIMIT, \
                     RUN-ERROR, MEMORY-LIMIT, COMPILER-ERROR, or their package-format \
                     names: ACCEPTED, WRONG_ANSWER, ...)",
                    crate::text::terminal(word)
                ));
            }
        }))
    }

    /// Whether `verdict` is this one.
    pub(super) fn is(self, verdict: &Verdict) -> bool {
        match self {
            Expected::Accepted => *verdict == Verdict::Accepted,
            Expected::WrongAnswer => matches!(verdict, Verdict::WrongAnswer(_)),
            Expected::TimeLimit => *verdict == Verdict::TimeLimit,
            Expected::RunError => {
                matches!(verdict, Verdict::RuntimeError(_) | Verdict::MemoryLimit(_))
            }
            Expected::MemoryLimit => matches!(verdict, Verdict::MemoryLimit(_)),
            Expected::CompileError | Expected::OutputLimit => false,
        }
    }

    /// DOMjudge's name.
    fn name(self) -> &'static str {
        match self {
            Expected::Accepted => "CORRECT",
            Expected::WrongAnswer => "WRONG-ANSWER",
            Expected::TimeLimit => "TIMELIMIT",
            Expected::RunError => "RUN-ERROR",
            Expected::MemoryLimit => "MEMORY-LIMIT",
            Expected::CompileError => "COMPILER-ERROR",
            Expected::OutputLimit => "OUTPUT-LIMIT",
        }
    }

    /// The verdict of a standard folder of `submissions/`.
    pub(super) fn of_folder(folder: &str) -> Option<Expected> {
        Some(match folder {
            "accepted" => Expected::Accepted,
            "wrong_answer" => Expected::WrongAnswer,
            "time_limit_exceeded" => Expected::TimeLimit,
            "run_time_error" => Expected::RunError,
            _ => return None,
        })
    }
}

/// The verdicts of one tag, in its order, without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Tag(pub(super) Vec<Expected>);

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|e| e.name()).collect();
        write!(f, "{}", names.join(", "))
    }
}

/// The tag in `source`, if it has one. Two tags in one file are an error,
/// as is a word that names no verdict; a tag that names only
/// `CHECK-MANUALLY` is no tag.
pub(super) fn parse_tag(source: &[u8]) -> Result<Option<Tag>, String> {
    let Some(at) = find_key(source) else {
        return Ok(None);
    };
    let rest = &source[at + KEY.len()..];
    if find_key(rest).is_some() {
        return Err("more than one @EXPECTED_RESULTS@ tag".into());
    }
    let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line).to_uppercase();
    let mut verdicts = Vec::new();
    for word in line.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if let Some(verdict) = Expected::parse(word)?
            && !verdicts.contains(&verdict)
        {
            verdicts.push(verdict);
        }
    }
    Ok((!verdicts.is_empty()).then_some(Tag(verdicts)))
}

/// Where the key starts in `text`, its case ignored.
fn find_key(text: &[u8]) -> Option<usize> {
    text.windows(KEY.len())
        .position(|w| w.eq_ignore_ascii_case(KEY))
}

/// What a submission is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Expectation {
    /// Its folder's verdict: a standard folder, untagged or tagged with
    /// that verdict among others (DOMjudge narrows such a tag to the
    /// folder's verdict).
    Folder(Expected),
    /// Its tag's verdicts: in a folder of another name (`mixed/`), or in
    /// a standard folder whose verdict the tag leaves out (DOMjudge keeps
    /// the tag and warns that it does not match the folder).
    Tag(Tag),
    /// Not checked: another folder, no tag.
    None,
    /// Its tag could not be read (or, under `--strict`, leaves out its
    /// folder's verdict): the submission fails, judged or not; says why.
    Bad(String),
}

impl Expectation {
    /// The rule for `folder` and the tag found in the submission's files.
    pub(super) fn of(folder: &str, tag: Result<Option<Tag>, String>) -> Expectation {
        let folder = Expected::of_folder(folder);
        match (folder, tag) {
            (_, Err(why)) => {
                Expectation::Bad(format!("its @EXPECTED_RESULTS@ tag cannot be read: {why}"))
            }
            (Some(verdict), Ok(Some(tag))) if tag.0.contains(&verdict) => {
                Expectation::Folder(verdict)
            }
            (_, Ok(Some(tag))) => Expectation::Tag(tag),
            (Some(verdict), Ok(None)) => Expectation::Folder(verdict),
            (None, Ok(None)) => Expectation::None,
        }
    }

    /// Whether `verdict` is expected; `None` when nothing is.
    pub(super) fn allows(&self, verdict: &Verdict) -> Option<bool> {
        match self {
            Expectation::Folder(expected) => Some(expected.is(verdict)),
            Expectation::Tag(tag) => Some(tag.0.iter().any(|e| e.is(verdict))),
            Expectation::None => None,
            Expectation::Bad(_) => Some(false),
        }
    }

    /// Whether a submission that does not build is expected not to.
    pub(super) fn allows_compile_error(&self) -> bool {
        matches!(self, Expectation::Tag(tag) if tag.0.contains(&Expected::CompileError))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(text: &str) -> Result<Option<Tag>, String> {
        parse_tag(text.as_bytes())
    }

    #[test]
    fn tags_are_read_as_domjudge_reads_them() {
        assert_eq!(tag("int main() {}\n"), Ok(None));
        assert_eq!(
            tag("/*\n * @EXPECTED_RESULTS@: CORRECT, TIMELIMIT\n */\n"),
            Ok(Some(Tag(vec![Expected::Accepted, Expected::TimeLimit])))
        );
        // Case, spacing, package-format names and DOMjudge's aliases.
        assert_eq!(
            tag("# @expected_results@:  accepted,time_limit_exceeded, no-output\r\n"),
            Ok(Some(Tag(vec![
                Expected::Accepted,
                Expected::TimeLimit,
                Expected::WrongAnswer
            ])))
        );
        assert_eq!(
            tag("@EXPECTED_RESULTS@: RUN-ERROR,WRONG-ANSWER,WRONG_ANSWER"),
            Ok(Some(Tag(vec![Expected::RunError, Expected::WrongAnswer])))
        );
        assert_eq!(tag("@EXPECTED_RESULTS@: CHECK-MANUALLY\n"), Ok(None));
        let unknown = tag("@EXPECTED_RESULTS@: CORRECT, MAYBE\n").unwrap_err();
        assert!(unknown.contains("`MAYBE` is not a verdict"), "{unknown}");
        let twice = tag("@EXPECTED_RESULTS@: CORRECT\n@expected_results@: TIMELIMIT\n");
        assert!(twice.unwrap_err().contains("more than one"));
    }

    #[test]
    fn a_tag_and_a_folder_combine_as_in_domjudge() {
        let both = || Ok(Some(Tag(vec![Expected::Accepted, Expected::TimeLimit])));
        // A standard folder whose verdict the tag names: the folder's.
        assert_eq!(
            Expectation::of("accepted", both()),
            Expectation::Folder(Expected::Accepted)
        );
        // One the tag leaves out: the tag wins.
        assert_eq!(
            Expectation::of("wrong_answer", both()),
            Expectation::Tag(Tag(vec![Expected::Accepted, Expected::TimeLimit]))
        );
        assert!(matches!(
            Expectation::of("mixed", both()),
            Expectation::Tag(_)
        ));
        assert_eq!(Expectation::of("mixed", Ok(None)), Expectation::None);
        let tagged = Expectation::of("mixed", both());
        assert_eq!(tagged.allows(&Verdict::TimeLimit), Some(true));
        assert_eq!(
            tagged.allows(&Verdict::WrongAnswer("x".into())),
            Some(false)
        );
        let run_error = Expectation::of("run_time_error", Ok(None));
        assert_eq!(
            run_error.allows(&Verdict::MemoryLimit("x".into())),
            Some(true)
        );
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_read_without_a_panic(
            before in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
            after in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
        ) {
            let _ = parse_tag(&after);
            let mut tagged = before;
            tagged.extend_from_slice(b"@Expected_Results@:");
            tagged.extend_from_slice(&after);
            let _ = parse_tag(&tagged);
        }
    }
}
