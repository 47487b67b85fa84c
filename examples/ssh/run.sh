#!/usr/bin/env bash
# A tournament over several machines with GNU parallel and SSH, one shard
# per job, then the merge:
#
#   examples/ssh/run.sh HOSTS FILE OUT N [tournament options]
#
# HOSTS is GNU parallel's --sshloginfile: one host per line (`user@host`,
# `:` for this machine). Each host plays one shard at a time, with as many
# games at once as it has CPUs (the referee's default --jobs). The
# standings of the whole tournament end up in OUT/all.
#
# Every host must see this folder at the same path, with FILE, the
# entrants' folders and OUT in it, and run the same system (the entrants
# are built once, here). That is a shared file system (NFS) by default.
# Without one, give every host the same copy of the folder first, and set
# RETURN=1: each host then writes its shard into its own copy, and parallel
# copies OUT/shard-K back here (--return) before the merge.
#
# The referee is `referee` from PATH, or $REFEREE: on every host, at the
# same path (parallel runs the same command line there).
set -euo pipefail

if (($# < 4)); then
  echo "usage: $0 HOSTS FILE OUT N [tournament options]" >&2
  exit 64
fi
hosts=$1 file=$2 out=$3 n=$4
shift 4
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: N must be a number of shards, 1 or more: $n" >&2
  exit 64
fi
referee=${REFEREE:-referee}

# Build every entrant once, here, rather than on every host at once in
# the same shared folders (build logs in OUT/build). An entrant that does
# not build stops everything: the shards would refuse to play without it.
"$referee" tournament "$file" --build-only --out "$out" "$@"

return=()
if [[ ${RETURN:-0} == 1 ]]; then
  return=(--return "$out/shard-{}" --cleanup)
fi

# --workdir . runs each shard in this folder's path on its host. -q quotes
# the command, so that options with spaces reach the referee whole over
# SSH. --retries runs a shard that failed (a host that went away) again,
# maybe elsewhere: the same command continues the records already in
# OUT/shard-K (idempotent shards), in the shared folder at least.
# --halt now,fail=1 stops at a shard that fails for good, as a merge of
# the others would lack its games.
parallel --will-cite --sshloginfile "$hosts" --workdir . --jobs 1 -q \
  --retries 3 --halt now,fail=1 "${return[@]}" \
  "$referee" tournament "$file" --shard "{}/$n" --out "$out/shard-{}" \
  --no-build --no-progress "$@" ::: $(seq "$n")

"$referee" merge "$out"/shard-* --out "$out/all"
