#!/usr/bin/env bash
# Submits a whole tournament to Slurm: the entrants built once, N shards
# as a job array, and the merge, each job waiting for the one before:
#
#   examples/slurm/submit.sh FILE OUT N [tournament options]
#
# prints the three job ids (`build ID`, `tournament ID`, `merge ID`); the
# standings are in OUT/all once the merge job has finished, and every
# job's log in OUT/slurm/. Run it from the folder FILE and OUT are
# relative to, on a file system the nodes share: the jobs start there.
#
# sbatch's settings for all three jobs come from its environment as usual
# (SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...); those of the
# array's tasks alone from TASK_OPTIONS, e.g.
#   TASK_OPTIONS='--cpus-per-task=4 --mem=4G' examples/slurm/submit.sh ...
# (a task plays as many games at once as it has CPUs).
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 FILE OUT N [tournament options]" >&2
  exit 64
fi
file=$1 out=$2 n=$3
shift 3
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: N must be a number of shards, 1 or more: $n" >&2
  exit 64
fi
here=$(cd "$(dirname "$0")" && pwd)
read -ra task_options <<<"${TASK_OPTIONS:-}"

# Slurm opens each job's log before the job starts, so its folder must
# exist already.
mkdir -p "$out/slurm"

# sbatch --parsable prints `ID` or `ID;CLUSTER`; the dependencies want ID.
submit() {
  local id
  id=$(sbatch --parsable "$@")
  echo "${id%%;*}"
}

# A dependency that can no longer be met (the build or a task failed)
# cancels the job that waits for it, instead of leaving it pending forever.
build=$(submit --kill-on-invalid-dep=yes --output="$out/slurm/build-%j.out" \
  "$here/build.sbatch" "$file" "$out" "$@")
array=$(submit --kill-on-invalid-dep=yes --dependency="afterok:$build" \
  --array="1-$n" "${task_options[@]}" --output="$out/slurm/shard-%a-%A.out" \
  "$here/tournament.sbatch" "$file" "$out" "$@")
merge=$(submit --kill-on-invalid-dep=yes --dependency="afterok:$array" \
  --output="$out/slurm/merge-%j.out" "$here/merge.sbatch" "$out")
echo "build $build"
echo "tournament $array"
echo "merge $merge"
