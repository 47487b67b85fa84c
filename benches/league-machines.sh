#!/usr/bin/env bash
# A league on separate machines, timed (docs/PERFORMANCE.md §19, issue 48):
# the coordinator and each worker in a mount namespace of its own, with a
# private tmpfs on /tmp and a private HOME (as tests/separate_machines.rs
# runs them), sharing only the PostgreSQL server (over TCP on 127.0.0.1),
# the versions' folder and the league's folder. It measures
#
#   rate   games a second with 1, 2 and 4 workers of `--jobs 1`, compiled
#          entrants (C, built by their Makefile) and interpreted ones
#          (Python), REPS runs each; and in the same runs each worker's
#          time from its start to its first game (the coordinator up, every
#          version entered and a table dealt before any worker starts);
#   push   an entrant's folder changed (its C source), PUSHES times in a
#          league played by 2 and by 4 workers: the time from the file's
#          change to the new version entering, and to its first game on
#          each worker (the coordinator's --scan-every is SCAN_EVERY).
#
# The game is the tests' duel (tests/fixtures/duel: one move a game, its
# judge a Python script, run by PYTHON as the interpreted entrants are):
# its moves cost nearly nothing, so what a game costs is the league's own
# work (claim, bots started, judge, commit).
#
# Needs root (the server runs as `postgres`; unshare -m and mount), Debian's
# postgresql (/usr/lib/postgresql/*/bin), gcc, make, python3, and the
# release referee (`cargo build --release`). Nothing is asserted: it prints
# figures. Every process it starts is killed and the server stopped and its
# folder removed when it ends, even on failure or Ctrl-C (trap); the tmpfs
# mounts live only in the machines' private namespaces, which end with them.
#
#   sudo benches/league-machines.sh                     # all, about 10 minutes
#   sudo PARTS=push SCAN_EVERY=5s benches/league-machines.sh
#
# Settings (environment): PARTS ("rate push"), KINDS ("compiled
# interpreted"), WORKERS ("1 2 4"), REPS (3), GAMES (300 a run),
# PUSH_WORKERS ("2 4"), PUSHES (3), SCAN_EVERY (1s), PYTHON
# (/usr/bin/python3), REFEREE (target/release/referee), DEADLINE (120 s a
# step); KEEP=1 keeps the work folder (logs, the stopped server's data).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REFEREE=${REFEREE:-$ROOT/target/release/referee}
PARTS=${PARTS:-rate push}
KINDS=${KINDS:-compiled interpreted}
WORKERS=${WORKERS:-1 2 4}
REPS=${REPS:-3}
GAMES=${GAMES:-300}
PUSH_WORKERS=${PUSH_WORKERS:-2 4}
PUSHES=${PUSHES:-3}
SCAN_EVERY=${SCAN_EVERY:-1s}
# The Python of the judge and the interpreted entrants, by its path: a
# `python3` found on PATH may be a version manager's shim (pyenv's is a
# bash script that costs some 0.25 s a start), which would be timed instead.
PYTHON=${PYTHON:-/usr/bin/python3}
# The most one step may take before the script gives up.
DEADLINE=${DEADLINE:-120}

die() { echo "league-machines: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (a PostgreSQL server as postgres, unshare -m, mount)"
[ -x "$REFEREE" ] || die "no $REFEREE: cargo build --release first"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || die "no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql)"
[ -x "$PYTHON" ] || die "no $PYTHON (PYTHON=...)"
for tool in unshare setsid runuser gcc make python3; do
    command -v "$tool" >/dev/null || die "no $tool"
done

# Not under /tmp, which every machine here hides behind its own tmpfs.
mkdir -p "$ROOT/target"
WORK=$(mktemp -d "$ROOT/target/league-machines.XXXXXX")
chmod 755 "$WORK"
GROUPS_STARTED=()
PGDIR=$WORK/postgres
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for group in "${GROUPS_STARTED[@]}"; do
        kill -KILL -- "-$group" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [ -f "$PGDIR/data/postmaster.pid" ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" stop -m immediate -w >/dev/null 2>&1 || true
    fi
    if [ "${KEEP:-0}" = 1 ]; then
        echo "league-machines: kept $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }

# ---- the server ---------------------------------------------------------------
# As tests/common/postgres.rs starts one, but with PostgreSQL's own
# durability (fsync, synchronous commits), as the perf bench's §19 server;
# the referees run with --no-fsync, as there.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$PGDIR"
chown postgres:postgres "$PGDIR"
runuser -u postgres -- "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres >/dev/null
cat >>"$PGDIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$PGDIR'
max_connections = 100
EOF
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" start -w -t 60 >/dev/null

# psql DATABASE SQL: what it selects, unaligned, no headers.
psql() {
    runuser -u postgres -- "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -d "$1" \
        -v ON_ERROR_STOP=1 -AXqt -c "$2"
}

# ---- machines -------------------------------------------------------------------
# Run by `sh -c` in a new mount namespace before the referee: a tmpfs of
# its own on /tmp, HOME and the working folder in it (tests/separate_machines.rs).
OWN_MACHINE='mount -t tmpfs tmpfs /tmp && mkdir /tmp/home && cd /tmp/home && HOME=/tmp/home TMPDIR=/tmp exec "$@"'
declare -A PID STARTED

# machine LOGS NAME ARGS...: `referee --no-fsync ARGS` on a machine of its
# own, in a session of its own (setsid: its pid is its group's, killed
# whole by the cleanup), its output in LOGS/NAME.{out,err}; its start time
# in STARTED[NAME].
machine() {
    local logs=$1 name=$2
    shift 2
    STARTED[$name]=$(now)
    setsid unshare --mount --propagation private sh -c "$OWN_MACHINE" "$name" \
        "$REFEREE" --no-fsync "$@" >"$logs/$name.out" 2>"$logs/$name.err" </dev/null &
    PID[$name]=$!
    GROUPS_STARTED+=("$!")
}

# finish LOGS NAME: waits for its end by itself (status 0 wanted), and
# says so if it declined a version or voided a game (tests/separate_machines.rs
# fails on either: the records would not show it).
finish() {
    local status=0
    wait "${PID[$2]}" || status=$?
    [ "$status" = 0 ] || die "$2 ended with status $status:
$(tail -n 20 "$1/$2.err")"
    if grep -q ' cannot play \|a game void' "$1/$2.err"; then
        echo "league-machines: $2 declined a version or voided a game:" >&2
        grep ' cannot play \|a game void' "$1/$2.err" | head -n 5 >&2
    fi
}

# until_true WHAT LOGS NAME COMMAND...: runs COMMAND every 50 ms until it
# succeeds; fails if machine NAME ends or DEADLINE passes first.
until_true() {
    local what=$1 logs=$2 name=$3 start
    shift 3
    start=$(date +%s)
    until "$@"; do
        kill -0 "${PID[$name]}" 2>/dev/null || die "$name ended before $what:
$(tail -n 20 "$logs/$name.err")"
        [ $(($(date +%s) - start)) -lt "$DEADLINE" ] || die "never saw $what:
$(tail -n 20 "$logs/$name.err")"
        sleep 0.05
    done
}

# ---- the league's folder ----------------------------------------------------------
# compiled DIR K: a duel player in C, built by its Makefile into `pc2`,
# that answers (N * K) % 5 to game N (`go N`).
compiled() {
    mkdir -p "$1"
    cat >"$1/pc2.c" <<'EOF'
#include <stdio.h>
int main(void) {
    char line[64];
    long n;
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "go %ld", &n) != 1) n = 0;
        printf("%ld\n", (n * K) % 5);
        fflush(stdout);
    }
    return 0;
}
EOF
    printf 'pc2: pc2.c\n\tgcc -O1 -DK=%s -o pc2 pc2.c\n' "$2" >"$1/Makefile"
}

# interpreted DIR K: the same player in Python.
interpreted() {
    mkdir -p "$1"
    cat >"$1/pc2" <<EOF
#!$PYTHON
import sys

for line in sys.stdin:
    print(int(line.split()[1]) * $2 % 5, flush=True)
EOF
    chmod 755 "$1/pc2"
}

# league_folder DIR KIND: the duel game (its file and judge copied in),
# four entrants e1..e4 of KIND under subs/, the league's file.
league_folder() {
    mkdir -p "$1/game"
    cp "$ROOT/tests/fixtures/duel/judge.py" "$1/game/"
    sed "s|^judge = \\[\"python3\"|judge = [\"$PYTHON\"|" "$ROOT/tests/fixtures/duel/game.toml" >"$1/game/game.toml"
    grep -q "^judge = \\[\"$PYTHON\"" "$1/game/game.toml" || die "the duel's judge is not python3 judge.py any more"
    for k in 1 2 3 4; do
        "$2" "$1/subs/e$k" $((k + 1))
    done
    cat >"$1/league.toml" <<EOF
game = "$1/game/game.toml"
seed = 3
[limits]
seats = 2
[[entrant]]
glob = "subs/*"
EOF
}

RUNS=0
# new_run KIND: a fresh league's folder, versions' folder, logs and
# database; sets RUN, DB, URL.
new_run() {
    RUNS=$((RUNS + 1))
    RUN=$WORK/run$RUNS
    mkdir -p "$RUN/logs"
    league_folder "$RUN/league" "$1"
    DB=run$RUNS
    psql postgres "CREATE DATABASE $DB" >/dev/null
    URL=postgres://postgres@127.0.0.1:$PORT/$DB
}

# coordinator GAMES: the league run by a coordinator of --jobs 0; returns
# once every version entered (built) and a table is dealt.
coordinator() {
    machine "$RUN/logs" coordinator league run "$RUN/league/league.toml" --db "$URL" \
        --versions "$RUN/versions" --jobs 0 --games "$1" --scan-every "$SCAN_EVERY"
    until_true "four versions and a table dealt" "$RUN/logs" coordinator ready
}
ready() {
    [ "$(psql "$DB" "SELECT (SELECT count(*) FROM versions WHERE build_ok = 1) = 4 AND EXISTS (SELECT 1 FROM tables)" 2>/dev/null)" = t ]
}

# has_games N: whether the league holds N games.
has_games() {
    [ "$(psql "$DB" "SELECT count(*) FROM games" 2>/dev/null || echo 0)" -ge "$1" ]
}

# workers N: N workers of --jobs 1, w1..wN, each on a machine of its own.
workers() {
    for w in $(seq 1 "$1"); do
        machine "$RUN/logs" "w$w" league work --db "$URL" --jobs 1 --name "w$w"
    done
}

# ---- statistics ---------------------------------------------------------------------
# range: "min / median / max" of the numbers on standard input.
range() {
    sort -g | awk -v f="${1:-%.1f}" '{ v[NR] = $1 }
        END { if (NR == 0) { print "none"; exit }
              m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf f " / " f " / " f "\n", v[1], m, v[NR] }'
}

EPOCH="extract(epoch FROM g.finished::timestamptz)"

# ---- rate (and a worker's first game) ------------------------------------------------
# rate_run KIND WORKERS: sets RATE (games a second) and FIRSTS (each
# worker's seconds from its start to its first game). Not in a subshell:
# the machines it starts must be the cleanup's to kill.
rate_run() {
    new_run "$1"
    coordinator "$GAMES"
    workers "$2"
    finish "$RUN/logs" coordinator
    for w in $(seq 1 "$2"); do finish "$RUN/logs" "w$w"; done
    local warm=$((2 * $2)) first
    # As §19: from the commit of game 2 × workers to the last's.
    RATE=$(psql "$DB" "SELECT $EPOCH FROM games g ORDER BY g.id" |
        awk -v warm="$warm" '{ t[NR - 1] = $1 } END { n = NR; print (n - 1 - warm) / (t[n - 1] - t[warm]) }')
    FIRSTS=()
    for w in $(seq 1 "$2"); do
        first=$(psql "$DB" "SELECT min($EPOCH) FROM games g JOIN tables t ON t.id = g.table_id WHERE t.worker = 'w$w'")
        FIRSTS+=("$(awk -v a="${STARTED[w$w]}" -v b="$first" 'BEGIN { printf "%.3f", b - a }')")
    done
    echo "league-machines: run $RUNS ($1, $2 workers): $RATE games a second; start to first game: ${FIRSTS[*]} s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}

rate_part() {
    echo "## Games a second (duel, $GAMES games a run, workers of --jobs 1 on $(nproc) CPUs; from the commit of game 2 × workers to the last; $REPS runs, min / median / max)"
    echo
    echo "| entrants | workers | games a second | each run | start to first game (s) |"
    echo "|---|---|---|---|---|"
    for kind in $KINDS; do
        for n in $WORKERS; do
            local rates=() firsts=()
            for _ in $(seq 1 "$REPS"); do
                rate_run "$kind" "$n"
                rates+=("$RATE")
                firsts+=("${FIRSTS[@]}")
            done
            echo "| $kind | $n | $(printf '%s\n' "${rates[@]}" | range) | $(printf '%.1f ' "${rates[@]}")| $(printf '%s\n' "${firsts[@]}" | range %.2f) |"
        done
    done
    echo
}

# ---- push ------------------------------------------------------------------------------
# first_games ENTRANT VERSION: "WORKER EPOCH" of each worker's first game of it.
first_games() {
    psql "$DB" "SELECT t.worker, min($EPOCH) FROM seats s JOIN versions v ON v.id = s.version \
        JOIN entrants e ON e.id = v.entrant JOIN games g ON g.id = s.game \
        JOIN tables t ON t.id = g.table_id WHERE e.name = '$1' AND v.version = $2 GROUP BY t.worker" |
        tr '|' ' '
}

push_part() {
    echo "## A push (subs/e1/pc2.c changed; compiled entrants; --scan-every $SCAN_EVERY; seconds from the change)"
    echo
    echo "| workers | push | entered | first game on each worker | on every worker |"
    echo "|---|---|---|---|---|"
    for n in $PUSH_WORKERS; do
        new_run compiled
        coordinator 1000000
        workers "$n"
        until_true "20 games" "$RUN/logs" coordinator has_games 20
        for p in $(seq 1 "$PUSHES"); do
            local version=$((p + 1)) t0 entered="" start
            sleep 2
            t0=$(now)
            echo "/* push $p */" >>"$RUN/league/subs/e1/pc2.c"
            start=$(date +%s)
            while :; do
                if [ -z "$entered" ] && [ "$(psql "$DB" "SELECT count(*) FROM versions v JOIN entrants e ON e.id = v.entrant WHERE e.name = 'e1' AND v.version = $version AND v.build_ok = 1")" = 1 ]; then
                    entered=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
                fi
                local rows
                rows=$(first_games e1 "$version")
                if [ "$(printf "%s" "$rows" | awk NF | wc -l)" -ge "$n" ] || [ $(($(date +%s) - start)) -ge "$DEADLINE" ]; then
                    break
                fi
                sleep 0.1
            done
            local each every
            each=$(printf '%s\n' "$rows" | awk NF | sort | awk -v a="$t0" '{ printf "%s %.2f, ", $1, $2 - a }')
            every=$(printf '%s\n' "$rows" | awk NF | awk -v a="$t0" -v n="$n" '{ if ($2 - a > m) m = $2 - a; c++ }
                END { if (c < n) print "never (" c " of " n " workers)"; else printf "%.2f\n", m }')
            echo "| $n | e1@v$version | ${entered:-never} | ${each%, } | $every |"
        done
        kill -TERM "${PID[coordinator]}" 2>/dev/null || true
        for w in $(seq 1 "$n"); do kill -TERM "${PID[w$w]}" 2>/dev/null || true; done
        wait 2>/dev/null || true
        if grep -q ' cannot play \|a game void' "$RUN"/logs/w*.err; then
            echo "league-machines: a worker declined a version or voided a game:" >&2
            grep ' cannot play \|a game void' "$RUN"/logs/w*.err | head -n 5 >&2
        fi
    done
    echo
}

echo "# league-machines: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r), PostgreSQL $("$PGBIN/postgres" --version | awk '{ print $3 }'), referee $("$REFEREE" --version 2>/dev/null | awk '{ print $NF }')"
echo
for part in $PARTS; do
    case $part in
    rate) rate_part ;;
    push) push_part ;;
    *) die "no part $part (rate, push)" ;;
    esac
done
