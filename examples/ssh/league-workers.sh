#!/usr/bin/env bash
# Workers of a running league on several machines, one per host, with
# GNU parallel over SSH:
#
#   examples/ssh/league-workers.sh HOSTS URL --sandbox [worker options]
#
# HOSTS is GNU parallel's --sshloginfile: one host per line (`user@host`,
# `:` for this machine). Each host runs `referee league work --db URL`,
# playing as many games at once as it has CPUs (the worker's default
# --jobs) unless the options say otherwise, until the league is finished
# (`league run --games N` reached) or you press Ctrl-C here: then every
# worker gives its tables back and exits.
#
# URL is the league's PostgreSQL database; what it leaves out comes from
# PGHOST, PGPORT, PGUSER and PGDATABASE, and PGPASSFILE names the password
# file: those set here are passed on to every host (parallel's --env).
# The password is each host's ~/.pgpass (mode 0600; or the file
# PGPASSFILE names there), as psql reads it, and is never passed on:
# PGPASSWORD would be in the remote shell's command line, and in the
# worker's environment, where a bot not sandboxed reads it. Give
# --sandbox among the worker options. Every host must see, at the same
# path as the coordinator: the versions' copies (its --versions DIR,
# which a worker reads from the database), the league's file and its
# folder (the game and its judge) and the entrants' interpreters.
#
# The referee is `referee` from PATH, or $REFEREE: on every host, at the
# same path (parallel runs the same command line there).
set -euo pipefail

if (($# < 2)); then
  echo "usage: $0 HOSTS URL [worker options]" >&2
  exit 64
fi
hosts=$1 url=$2
shift 2
referee=${REFEREE:-referee}
env=()
for var in PGHOST PGPORT PGUSER PGDATABASE PGPASSFILE; do
  if [[ -n ${!var:-} ]]; then
    env+=(--env "$var")
  fi
done

# --nonall runs the command once on every host of HOSTS, all at once
# (-j0). -q quotes it, so that options with spaces reach the referee
# whole over SSH. --tag prefixes each line of output with its host, and
# --line-buffer prints it as it comes rather than when the worker ends.
# When this script is stopped (Ctrl-C) each SSH connection ends, and
# parallel's wrapper on the host sends the worker --termseq's signals:
# SIGTERM, then 10 s to give its tables back before SIGKILL.
exec parallel --will-cite --nonall -j0 --sshloginfile "$hosts" -q --tag \
  --line-buffer --termseq TERM,10000,KILL,25 "${env[@]}" \
  "$referee" league work --db "$url" "$@"
