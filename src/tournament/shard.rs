//! Which shard a run plays: given on the command line (`--shard K/N`), or
//! read from the scheduler that started it (`--shard auto`): a Slurm job
//! array's task, or a Kubernetes Indexed Job's completion index.

/// `--shard` as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardArg {
    /// `K/N`.
    Fixed(u64, u64),
    /// `auto`, or `auto/N` with the number of shards given.
    Auto(Option<u64>),
}

/// Reads `--shard`: `K/N` with 1 ≤ K ≤ N, `auto` or `auto/N`.
pub fn parse(text: &str) -> Result<ShardArg, String> {
    if text == "auto" {
        return Ok(ShardArg::Auto(None));
    }
    if let Some(n) = text.strip_prefix("auto/") {
        return match n.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(ShardArg::Auto(Some(n))),
            _ => Err(format!("{text:?}: expected auto/N with N at least 1")),
        };
    }
    let (k, n) = text
        .split_once('/')
        .ok_or("expected K/N (e.g. 2/4), auto (from Slurm), or auto/N")?;
    match (k.parse::<u64>(), n.parse::<u64>()) {
        (Ok(k), Ok(n)) if n >= 1 && (1..=n).contains(&k) => Ok(ShardArg::Fixed(k, n)),
        _ => Err(format!("{text:?}: expected K/N with 1 <= K <= N")),
    }
}

/// The shard `(K, N)` of `arg`, an `auto` one read through `env` (the
/// process's environment, in a run): Slurm's `SLURM_ARRAY_TASK_ID` with
/// `SLURM_ARRAY_TASK_COUNT`, or with `SLURM_ARRAY_TASK_MIN`/`MAX` for an
/// array that does not start at 1 (`--array=0-3`); else Kubernetes'
/// `JOB_COMPLETION_INDEX` (from 0), whose count must be given (`auto/N`).
pub fn resolve(arg: ShardArg, env: impl Fn(&str) -> Option<String>) -> Result<(u64, u64), String> {
    let count = match arg {
        ShardArg::Fixed(k, n) => return Ok((k, n)),
        ShardArg::Auto(count) => count,
    };
    let number = |name: &str| -> Result<Option<u64>, String> {
        match env(name) {
            None => Ok(None),
            Some(text) => text
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("--shard auto: {name}={text:?} is not a number")),
        }
    };
    let shard = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        from_slurm(id, count, &number)?
    } else if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let n = count.ok_or(
            "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but not the \
             number of shards: give it as --shard auto/N (N = the Job's completions)",
        )?;
        (index + 1, n)
    } else {
        return Err(
            "--shard auto: no scheduler's variables: neither SLURM_ARRAY_TASK_ID \
                    (a Slurm job array: sbatch --array=1-N) nor JOB_COMPLETION_INDEX (a \
                    Kubernetes Indexed Job) is set; give the shard as --shard K/N"
                .into(),
        );
    };
    match shard {
        (k, n) if (1..=n).contains(&k) => Ok((k, n)),
        (k, n) => Err(format!(
            "--shard auto: the scheduler's variables make shard {k} of {n}, which does not exist"
        )),
    }
}

/// Slurm's task `id`: numbered from the array's first task (its `MIN`),
/// out of its `COUNT` (or `MAX - MIN + 1`), unless the count is given.
fn from_slurm(
    id: u64,
    count: Option<u64>,
    number: &dyn Fn(&str) -> Result<Option<u64>, String>,
) -> Result<(u64, u64), String> {
    let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(1);
    let max = number("SLURM_ARRAY_TASK_MAX")?;
    let n = match (count, number("SLURM_ARRAY_TASK_COUNT")?, max) {
        (Some(n), _, _) => n,
        (None, Some(n), _) => n,
        (None, None, Some(max)) if max >= min => max - min + 1,
        _ => {
            return Err(
                "--shard auto: SLURM_ARRAY_TASK_ID is set but not the array's size \
                        (SLURM_ARRAY_TASK_COUNT, or SLURM_ARRAY_TASK_MIN/MAX): give it as \
                        --shard auto/N"
                    .into(),
            );
        }
    };
    let k = id.checked_sub(min).ok_or(format!(
        "--shard auto: SLURM_ARRAY_TASK_ID {id} is below the array's first task {min}"
    ))? + 1;
    Ok((k, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn slurm_and_kubernetes_give_the_shard() {
        let auto = ShardArg::Auto(None);
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(resolve(auto, slurm), Ok((3, 4)));
        // An array from 0: --array=0-3.
        let from_zero = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
        ]);
        assert_eq!(resolve(auto, from_zero), Ok((1, 4)));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(resolve(ShardArg::Auto(Some(5)), &k8s), Ok((1, 5)));
        assert!(resolve(auto, &k8s).unwrap_err().contains("auto/N"));
        assert!(
            resolve(auto, env(&[]))
                .unwrap_err()
                .contains("SLURM_ARRAY_TASK_ID")
        );
        let past = env(&[
            ("SLURM_ARRAY_TASK_ID", "9"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert!(resolve(auto, past).unwrap_err().contains("does not exist"));
        let bad = env(&[("SLURM_ARRAY_TASK_ID", "x")]);
        assert!(resolve(auto, bad).unwrap_err().contains("not a number"));
        assert_eq!(resolve(ShardArg::Fixed(2, 3), env(&[])), Ok((2, 3)));
    }

    #[test]
    fn shard_arguments_parse() {
        assert_eq!(parse("2/4"), Ok(ShardArg::Fixed(2, 4)));
        assert_eq!(parse("auto"), Ok(ShardArg::Auto(None)));
        assert_eq!(parse("auto/8"), Ok(ShardArg::Auto(Some(8))));
        for bad in ["0/4", "5/4", "auto/0", "auto/x", "x", "1/0", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn any_text_and_environment_is_read_or_refused(text in ".{0,12}", id in ".{0,6}", count in ".{0,6}") {
            if let Ok(arg) = parse(&text) {
                let vars = env(&[("SLURM_ARRAY_TASK_ID", &id), ("SLURM_ARRAY_TASK_COUNT", &count)]);
                if let Ok((k, n)) = resolve(arg, vars) {
                    prop_assert!((1..=n).contains(&k));
                }
            }
        }
    }
}
