#!/usr/bin/env bash
# The same Stockfish match through the referee and through fastchess, side
# by side: results, time losses, wall time (docs/PERFORMANCE.md, section 15).
#
# The match: Stockfish at Skill Level 3 against Skill Level 8 (Threads 1,
# Hash 16 each, as tournaments/chess.toml), the openings of
# games/chess/openings.epd in order, each played twice with colours swapped
# (fastchess: -openings ... order=sequential -repeat; the referee: its
# pairing rule), one game at a time, adjudicated alike (docs/chess.md:
# resignation at 1000 cp for 4 moves, a draw within 10 cp for 8 plies, 400
# plies at most). Two regimes:
#   default   fixed work per move, `go nodes 5000`, 40 games (fastchess:
#             -each tc=inf nodes=5000; the referee: the chess judge's option
#             nodes = 5000 in a game file without a clock); under a minute
#             a run on a quiet 2-CPU machine
#   --clock   the documented time control, 2s+50ms, 20 games; about 10
#             minutes a run
#   --tc T    another time control, as the referee writes it (BASE+INC in
#             s or ms: 1s+20ms; fastchess gets tc=1+0.02); implies --clock.
#             With --games, a clock regime fits many runs: --tc 2s+50ms
#             --games 10 --runs 10 takes about 25 minutes
# --identical plays two identical engines at full strength instead, without
# draw or resignation adjudication: at fixed nodes Stockfish with one thread
# is deterministic, so both tools play the very same games, move for move
# (the table counts them), and the wall times compare the same work.
#
# The ways: fastchess as it runs by default (one process per engine for the
# whole match) and `referee tournament` as games/chess/game.toml sets it up
# (one judge and one process per engine on its job thread: reuse and
# keep_players), with the chess judge built into the referee
# (`referee __chess-judge`, run inside the referee; --judge-process: the same
# judge as a process of its own, named by the binary's path; --python-judge:
# games/chess/judge.py instead). With --all-ways also fastchess with -each restart=on
# (fresh engines every game), `referee tournament` without keep_players
# (fresh engines every game), `referee play` (fresh engines every game, one
# judge for the run: reuse = true) and `referee play` with keep_players =
# true (one process per engine for the run), which tell apart what the
# engines' starts and the judge's cost. Within a run every way plays once; each run
# starts with another.
#
# Each tool runs under /usr/bin/time, and each engine under its own
# /usr/bin/time (a wrapper in the work directory): the table gives each
# tool's CPU time a ply, its judge's included and its engines' left out.
# --pin binds each tool's game to one CPU, as both offer: fastchess
# -use-affinity (each game's engines on a CPU of its own), the referee's
# --pin (each job's thread, judge and engines on CPU w mod CPUs; the
# tournament ways: `referee play` has no --pin).
# --load N keeps N busy loops (`yes > /dev/null`) running beside the
# whole measurement, a machine kept busy by others.
#
# Needs: /usr/games/stockfish (apt-get install stockfish; or STOCKFISH=path),
# /usr/bin/time (apt-get install time), python3 (the table; with
# --python-judge its venv too: games/chess/make-venv.sh is run), cargo
# (builds target/release/referee when missing; or REFEREE=path), and fastchess:
#   FASTCHESS=/path/to/fastchess   use that binary;
#   otherwise a build cached in $FASTCHESS_CACHE (default
#   ~/.cache/referee/fastchess), made there with g++ and make (apt-get
#   install g++ make) from a `git clone --depth 1` of
#   https://github.com/Disservin/fastchess. Without network, put a fastchess
#   source tree in $FASTCHESS_CACHE/src (a clone or an unpacked archive) and
#   run again, or set FASTCHESS. Nothing of fastchess goes into this tree.
#
# Run it when the machine is otherwise quiet (it prints the load average and
# the CPU time the host stole): every way is timed by its wall clock.
#   scripts/compare-fastchess.sh                      # nodes 5000, 40 games, 1 run a way
#   scripts/compare-fastchess.sh --runs 3 --all-ways  # the four ways, 3 runs each; medians
#   scripts/compare-fastchess.sh --runs 3 --all-ways --identical
#   scripts/compare-fastchess.sh --clock              # 2s+50ms, 20 games
#   scripts/compare-fastchess.sh --tc 2s+50ms --games 10 --runs 10
#   scripts/compare-fastchess.sh --nodes 20000 --games 26 --keep /tmp/cmp
#   scripts/compare-fastchess.sh --nodes 1 --runs 5      # the tools' own CPU a ply
#   scripts/compare-fastchess.sh --runs 5 --load 2       # beside two busy loops
#   scripts/compare-fastchess.sh --runs 5 --load 2 --pin # both tools pinned
#   scripts/compare-fastchess.sh --report /tmp/cmp    # the table of a kept run again
# Options: --clock, --tc BASE+INC, --nodes N, --games N (even), --runs N, --all-ways,
# --identical, --python-judge, --judge-process, --load N, --pin, --keep DIR (keep every run's output
# there; else a temporary directory, removed at the end), --report DIR.
#
# Prints a table, one column a way: the second engine's wins/draws/losses
# over all runs (from the PGNs), time losses (PGN Termination "time
# forfeit"), plies, the games whose moves are those of fastchess's game of
# the same number and run, wall time of each run and the median, each
# tool's CPU time a ply without its engines', the engines' own move times (the PGNs' per-move times, summed) and what is
# left of the wall time per game and per ply, the engines' set-up time in
# the referee's records, each way's median wall time and wall time per ply
# over fastchess's; then each run's Elo as each tool printed it (the second
# engine's against the first; fastchess's sign flipped, as it prints the
# first engine's). Exit status 0, or 1 if a way failed (its output's end is
# printed), 64 for a usage error, 69 for something missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
REFEREE=${REFEREE:-$ROOT/target/release/referee}
CACHE=${FASTCHESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/referee/fastchess}

clock=0 tc=2s+50ms nodes=5000 games='' runs=1 all=0 identical=0 keep='' report=''
python_judge=0 judge_process=0 load=0 pin=0
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
while (($#)); do
  case $1 in
    --clock) clock=1 ;;
    --tc) clock=1 tc=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --games) games=$2; shift ;;
    --runs) runs=$2; shift ;;
    --all-ways) all=1 ;;
    --identical) identical=1 ;;
    --python-judge) python_judge=1 ;;
    --judge-process) judge_process=1 ;;
    --load) load=$2; shift ;;
    --pin) pin=1 ;;
    --keep) keep=$2; shift ;;
    --report) report=$2; shift ;;
    -h|--help) usage ;;
    *) echo "compare-fastchess: unknown argument $1" >&2; usage ;;
  esac
  shift
done
games=${games:-$((clock ? 20 : 40))}
if ((games < 2 || games % 2)); then
  echo "compare-fastchess: --games must be even (colour-swapped pairs): $games" >&2; exit 64
fi
say() { echo "compare-fastchess: $*" >&2; }
seconds() {  # seconds DURATION: the referee's 2s or 50ms in fastchess's seconds
  case $1 in
    *ms) awk -v v="${1%ms}" 'BEGIN { print v / 1000 }' ;;
    *) echo "${1%s}" ;;
  esac
}
if ((clock)); then
  [[ $tc == *+* ]] || tc+="+0s"
  duration='[0-9]+(\.[0-9]+)?(s|ms)'
  if ! [[ $tc =~ ^$duration\+$duration$ ]]; then
    echo "compare-fastchess: --tc $tc: BASE+INC in s or ms, e.g. 2s+50ms" >&2; exit 64
  fi
  fastchess_tc="$(seconds "${tc%%+*}")+$(seconds "${tc#*+}")"
fi

# --- the table --------------------------------------------------------------
table() {  # the table of work directory $W (python3's standard library only)
python3 - "$W" <<'EOF'
import json, re, statistics, subprocess, sys
from pathlib import Path

W = Path(sys.argv[1])
params = dict(line.split("=", 1) for line in (W / "params").read_text().splitlines())
runs, games, ways = int(params["runs"]), int(params["games"]), params["ways"].split()
first, second = params["engines"].split()
LABEL = {"fastchess": "fastchess", "fastchess-restart": "fastchess restart=on",
         "tournament": "referee tournament", "tournament-fresh": "referee tournament fresh",
         "play-fresh": "referee play", "play-kept": "referee play kept"}
ENGINES = {"fastchess": "kept for the match", "fastchess-restart": "fresh every game",
           "tournament": "kept per job thread", "tournament-fresh": "fresh every game",
           "play-fresh": "fresh every game", "play-kept": "kept for the run"}
JUDGE = {"fastchess": "-", "fastchess-restart": "-", "tournament": "one per job thread",
         "tournament-fresh": "one per job thread",
         "play-fresh": "one for the run", "play-kept": "one for the run"}

def pgns(way, d):
    if way.startswith("fastchess"):
        text = (d / "games.pgn").read_text()
    elif way.startswith("tournament"):
        text = (d / "out" / "games.pgn").read_text()
    else:
        text = "\n\n".join(json.loads(line)["summary"]["pgn"]
                           for line in (d / "results.jsonl").read_text().splitlines())
    return [g for g in re.split(r"\n\s*\n(?=\[)", text.strip()) if g.strip()]

def game(text):
    """Its tags, its moves, and the engines' move times summed (seconds)."""
    tags = dict(re.findall(r'^\[(\w+) "(.*)"\]$', text, re.M))
    body = "\n".join(l for l in text.splitlines() if not l.startswith("["))
    think = sum(float(m.group(1)) for c in re.findall(r"\{([^}]*)\}", body)
                for m in [re.search(r"(\d+(?:\.\d+)?)s\b", c)] if m)
    moves = re.sub(r"\{[^}]*\}|\d+\.(\.\.)?|1-0|0-1|1/2-1/2|\*", " ", body).split()
    return tags, moves, think

def elo(way, d):
    out = (d / "out.txt").read_text(errors="replace")
    if way.startswith("fastchess"):  # the first engine's: flip it
        m = re.findall(r"^Elo: (\S+) \+/- ([^,]+),", out, re.M)
        if not m:
            return "?"
        value, margin = m[-1]
        value = value[1:] if value.startswith("-") else "+" + value.lstrip("+")
        return "%s +/- %s" % (value, margin)
    if way.startswith("tournament"):  # the Elo column of the second engine's row
        rows = [[c.strip() for c in l.strip().strip("|").split("|")]
                for l in out.splitlines() if l.startswith("|")]
        if rows and "Elo" in rows[0]:
            col = rows[0].index("Elo")
            for row in rows[2:]:
                if row[1] == second:
                    return row[col]
        return "?"
    return "-"

def med(xs):
    return statistics.median(xs) if xs else float("nan")

moves_of = {}  # (way, run) -> each game's moves, for the comparison with fastchess's
cols = {}
for way in ways:
    wdl, losses, plies, walls, thinks, elos, setups, same = [0, 0, 0], 0, [], [], [], [], [], 0
    cpus = []  # the tool's CPU seconds a run, its judge's in, its engines' out
    for r in range(1, runs + 1):
        d = W / ("%s-%d" % (way, r))
        ply = think = 0
        gs = [game(text) for text in pgns(way, d)]
        moves_of[way, r] = [m for _, m, _ in gs]
        for tags, moves, t in gs:
            ply, think = ply + len(moves), think + t
            res = tags.get("Result")
            white = tags.get("White") == second
            if res == "1/2-1/2":
                wdl[1] += 1
            elif res in ("1-0", "0-1"):
                wdl[0 if (res == "1-0") == white else 2] += 1
            losses += tags.get("Termination") == "time forfeit"
        if len(gs) != games:
            print("warning: %s run %d has %d games, not %d" % (way, r, len(gs), games))
        same += sum(a == b for a, b in zip(moves_of[way, r], moves_of.get(("fastchess", r), [])))
        plies.append(ply)
        walls.append(int((d / "wall_ms").read_text()) / 1000)
        if (d / "cpu").exists():
            total = sum(map(float, (d / "cpu").read_text().split()[-2:]))
            engines = (d / "engines_cpu").read_text().split() if (d / "engines_cpu").exists() else []
            cpus.append(total - sum(float(x) for x in engines if re.fullmatch(r"[0-9.]+", x)))
        thinks.append(think)
        elos.append(elo(way, d))
        if not way.startswith("fastchess"):  # the engines' set-up (uci .. readyok): records
            recs = d / ("out/records.jsonl" if way.startswith("tournament") else "results.jsonl")
            recs = [json.loads(l) for l in recs.read_text().splitlines()]
            setups.append(sum(p.get("startup_micros", 0) for g in recs
                              for p in g.get("results") or g.get("players")) / 1e6)
    rest = [w - t for w, t in zip(walls, thinks)]
    cols[way] = {
        "engines": ENGINES[way],
        "judge": JUDGE[way],
        "%s W/D/L, all runs" % second: "%d/%d/%d" % tuple(wdl),
        "time losses, all runs": str(losses),
        "plies a run (median)": "%d" % med(plies),
        "games as fastchess's": "%d of %d" % (same, games * runs),
        "wall s, each run": " ".join("%.1f" % w for w in walls),
        "wall s, median": "%.2f" % med(walls),
        "engines' move times s": "%.2f" % med(thinks),
        "rest of the wall s": "%.2f" % med(rest),
        "  per game, ms": "%.0f" % (med(rest) * 1000 / games),
        "  per ply, ms": "%.2f" % (med([o / p for o, p in zip(rest, plies) if p]) * 1000),
        "engines' set-up s": "%.2f" % med(setups) if setups else "-",
        "CPU s, without the engines": " ".join("%.2f" % c for c in cpus) or "-",
        "  per ply, ms (median)": "%.3f" % (med([c / p for c, p in zip(cpus, plies) if p]) * 1000)
                                  if cpus else "-",
        "wall per ply, ms": "%.2f" % (med([w / p for w, p in zip(walls, plies) if p]) * 1000),
        "_wall": med(walls),
        "_perply": med([w / p for w, p in zip(walls, plies) if p]),
        "_elos": elos,
    }
base = cols["fastchess"]
for c in cols.values():
    c["wall / fastchess's"] = "%.3f" % (c["_wall"] / base["_wall"])
    c["wall per ply / fastchess's"] = "%.3f" % (c["_perply"] / base["_perply"])

def version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, input="quit\n")
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except Exception:
        return "?"

print("compare-fastchess: %s, %s against %s, %d games (openings in order, each with colours"
      " swapped), one game at a time, %d run(s) a way"
      % (params["regime"], second, first, games, runs))
print("fastchess: %s (%s)" % (params["fastchess"], version([params["fastchess"], "-version"])))
print("referee:   %s" % params["referee"])
print("engines:   %s (%s)" % (params["stockfish"], version([params["stockfish"]])))
print("judge:     %s" % params.get("judge", "?"))
print((W / "machine").read_text().strip())
print()
rows = [k for k in cols[ways[0]] if not k.startswith("_")]
width = max(len(r) for r in rows) + 2
cw = max(max(len(LABEL[w]), *(len(str(c[k])) for k in rows)) for w, c in cols.items()) + 2
print("".ljust(width) + "".join(LABEL[w].ljust(cw) for w in ways).rstrip())
for k in rows:
    print(k.ljust(width) + "".join(str(cols[w][k]).ljust(cw) for w in ways).rstrip())
print()
print("Elo of %s against %s, each run, as each tool printed it:" % (second, first))
for w in ways:
    print("  %s: %s" % (LABEL[w], "; ".join(cols[w]["_elos"])))
EOF
}

if [[ -n $report ]]; then
  W=$report
  table
  exit
fi

# --- the programs -----------------------------------------------------------
[[ -x $STOCKFISH ]] || { say "no Stockfish at $STOCKFISH (apt-get install stockfish, or STOCKFISH=path)"; exit 69; }
if [[ -z ${FASTCHESS:-} ]]; then
  FASTCHESS=$CACHE/fastchess
  if [[ ! -x $FASTCHESS ]]; then
    if ! command -v g++ >/dev/null || ! command -v make >/dev/null; then
      say "building fastchess needs g++ and make (apt-get install g++ make), or set FASTCHESS=path"
      exit 69
    fi
    if [[ ! -f $CACHE/src/Makefile ]]; then
      mkdir -p "$CACHE"
      say "cloning fastchess into $CACHE/src"
      if ! git clone -q --depth 1 https://github.com/Disservin/fastchess "$CACHE/src"; then
        rm -rf "$CACHE/src"
        say "cannot clone fastchess: put its source tree in $CACHE/src (git clone"
        say "https://github.com/Disservin/fastchess, or unpack an archive of it) and run"
        say "again, or build it anywhere with make and set FASTCHESS=/path/to/fastchess"
        exit 69
      fi
    fi
    say "building fastchess in $CACHE/src (a few minutes)"
    make -s -C "$CACHE/src" -j2 >&2
    cp "$CACHE/src/fastchess" "$FASTCHESS"
  fi
fi
[[ -x $FASTCHESS ]] || { say "FASTCHESS=$FASTCHESS is not an executable"; exit 69; }
if [[ ! -x $REFEREE ]]; then
  say "building the referee"
  (cd "$ROOT" && cargo build -q --release --bin referee)
fi
[[ -x /usr/bin/time ]] || { say "no /usr/bin/time (apt-get install time)"; exit 69; }

W=${keep:-$(mktemp -d /tmp/compare-fastchess.XXXXXX)}
mkdir -p "$W"
[[ -n $keep ]] || trap 'rm -rf "$W"' EXIT

# --- the chess judge ----------------------------------------------------------
# The referee's own (`referee` names its binary in a game file: it runs
# inside the referee), the same as a process (named by its path), or the
# Python one it replaced.
if ((python_judge)); then
  "$ROOT/games/chess/make-venv.sh"
  JUDGE="\"$ROOT/games/chess/.venv/bin/python3\", \"$ROOT/games/chess/judge.py\""
elif ((judge_process)); then
  JUDGE="\"$REFEREE\", \"__chess-judge\""
else
  JUDGE='"referee", "__chess-judge"'
fi

# --- the engines, each timed ------------------------------------------------
# Each engine process appends its CPU time (user, system) to the current
# run's engines_cpu, which the tool's own CPU time is then counted without.
ENGINE=$W/engine.sh
cat > "$ENGINE" <<EOF
#!/bin/sh
exec /usr/bin/time -a -f "%U %S" -o "\$(cat "$W/current")/engines_cpu" "$STOCKFISH" "\$@"
EOF
chmod +x "$ENGINE"

# --- the match, for each tool -----------------------------------------------
# Two entrants, each with its UCI options; the second one's results are shown.
if ((identical)); then
  names=(sf-a sf-b) skills=('' '')
  fc_adjudication=()  # the judge's: off (judge_options)
else
  names=(sf-skill-3 sf-skill-8) skills=(3 8)
  # The judge's defaults are fastchess's flags below (docs/chess.md).
  fc_adjudication=(-draw movenumber=40 movecount=4 score=10 -resign movecount=4 score=1000)
fi
# The chess judge's options (a game file's [options]) for the match: the one
# place that names them, beside fastchess's flags above and in run_fastchess
# (-maxmoves 200 is max_moves = 200). Its adjudication is its defaults,
# fastchess's own numbers (docs/chess.md), unless --identical turns it off
# (0 turns each off).
judge_options() {
  echo 'max_moves = 200'
  echo "openings = \"$ROOT/games/chess/openings.epd\""
  ((clock)) || echo "nodes = $nodes"
  if ((identical)); then
    echo 'draw_movecount = 0'
    echo 'resign_movecount = 0'
  fi
}
options() {  # options I: entrant I's UCI options as KEY=VALUE lines
  [[ -z ${skills[$1]} ]] || echo "Skill Level=${skills[$1]}"
  echo "Threads=1"
  echo "Hash=16"
}

# The referee's game files: games/chess/game.toml's, with absolute paths;
# at fixed nodes without a clock, with keep_players (game-kept.toml, as
# games/chess/game.toml) and without.
game_file() {  # game_file FILE KEEP
  cat > "$1" <<EOF
name = "chess"
judge = [$JUDGE]
protocol = 2
players = { min = 2, max = 2 }
read = "line"
reuse = true
keep_players = $2
[limits]
timeout = "30s"
startup = "10s"
$( ((clock)) && echo "time_control = \"$tc\"")
[options]
$(judge_options)
EOF
}
game_file "$W/game.toml" false
game_file "$W/game-kept.toml" true
tournament_file() {  # tournament_file FILE GAME-FILE: tournaments/chess.toml's
  {
    echo "game = \"$2\""; echo "games = $games"; echo "seed = 1"; echo "jobs = 1"
    for i in 0 1; do
      echo; echo "[[entrant]]"; echo "name = \"${names[$i]}\""
      echo "command = [\"$ENGINE\"]"
      echo "options = { $(options "$i" | sed 's/^\(.*\)=\(.*\)$/"\1" = \2/' | paste -sd, | sed 's/,/, /g') }"
    done
  } > "$1"
}
tournament_file "$W/tournament.toml" game-kept.toml
tournament_file "$W/tournament-fresh.toml" game.toml

if ((clock)); then limit="tc=$fastchess_tc" regime=$tc; else limit="tc=inf nodes=$nodes" regime="go nodes $nodes"; fi
run_fastchess() {  # run_fastchess DIR [restart=on]
  local args=() i
  for i in 0 1; do
    args+=(-engine "name=${names[$i]}" "cmd=$ENGINE")
    while read -r opt; do args+=("option.$opt"); done < <(options "$i")
  done
  # shellcheck disable=SC2086  # $limit is two words on purpose
  (cd "$1" && /usr/bin/time -f "%U %S" -o cpu "$FASTCHESS" "${args[@]}" -each proto=uci $limit ${2:-} \
    -openings "file=$ROOT/games/chess/openings.epd" format=epd order=sequential \
    -rounds $((games / 2)) -repeat -concurrency 1 "${fc_adjudication[@]}" \
    -maxmoves 200 -pgnout file=games.pgn "${fc_pin[@]}" > out.txt 2>&1)
}
run_tournament() {  # run_tournament DIR TOURNAMENT-FILE
  /usr/bin/time -f "%U %S" -o "$1/cpu" "$REFEREE" tournament "$2" --games "$games" --seed 1 --jobs 1 --no-progress "${ref_pin[@]}" \
    --out "$1/out" > "$1/out.txt" 2>&1
}
run_play() {  # run_play DIR GAME-FILE
  local args=() i
  for i in 0 1; do
    while read -r opt; do args+=(--option "${names[$i]}:$opt"); done < <(options "$i")
  done
  /usr/bin/time -f "%U %S" -o "$1/cpu" \
    "$REFEREE" play --games "$games" --seed 1 --results "$1/results.jsonl" "${args[@]}" \
    "$2" "${names[0]}=$ENGINE" "${names[1]}=$ENGINE" > "$1/out.txt" 2>&1
}
fc_pin=() ref_pin=()
((pin)) && fc_pin=(-use-affinity) ref_pin=(--pin)
ways=(fastchess tournament)
((all)) && ways=(fastchess fastchess-restart tournament tournament-fresh play-fresh play-kept)

steal() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
busy=()
for ((i = 0; i < load; i++)); do
  yes > /dev/null &
  busy+=($!)
done
stop_load() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; busy=(); }
trap 'stop_load; [[ -n $keep ]] || rm -rf "$W"' EXIT
((load)) && say "load generator: $load busy loops (yes > /dev/null), pids ${busy[*]}"
read -r steal0 total0 < <(steal)
say "$regime, ${names[1]} against ${names[0]}, $games games, ${#ways[@]} ways, $runs run(s) each; work directory $W"
say "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= runs; r++)); do
  n=${#ways[@]}
  for ((i = 0; i < n; i++)); do  # each run starts with another way
    way=${ways[$(((i + r - 1) % n))]}
    dir=$W/$way-$r
    rm -rf "$dir"; mkdir -p "$dir"
    echo "$dir" > "$W/current"
    t0=$(date +%s%N)
    case $way in
      fastchess) run_fastchess "$dir" ;;
      fastchess-restart) run_fastchess "$dir" restart=on ;;
      tournament) run_tournament "$dir" "$W/tournament.toml" ;;
      tournament-fresh) run_tournament "$dir" "$W/tournament-fresh.toml" ;;
      play-fresh) run_play "$dir" "$W/game.toml" ;;
      play-kept) run_play "$dir" "$W/game-kept.toml" ;;
    esac || { say "$way failed (run $r); the end of its output:"; tail -20 "$dir/out.txt" >&2; exit 1; }
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) > "$dir/wall_ms"
    say "run $r: $way $(cat "$dir/wall_ms") ms (load average $(cut -d' ' -f1 /proc/loadavg))"
  done
done
read -r steal1 total1 < <(steal)
stop_load
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg);" \
  "CPU time stolen by the host: $(awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) \
    'BEGIN { printf "%.1f%%", t ? 100 * s / t : 0 }')$( ((load)) && echo "; load generator: $load busy loops (yes > /dev/null) throughout")$( ((pin)) && echo "; both tools pinned (fastchess -use-affinity, referee --pin)")" > "$W/machine"
{ echo "runs=$runs"; echo "games=$games"; echo "regime=$regime"; echo "ways=${ways[*]}"
  echo "engines=${names[*]}"; echo "fastchess=$FASTCHESS"; echo "referee=$REFEREE"
  echo "stockfish=$STOCKFISH"
  echo "judge=$( ((python_judge)) && echo "games/chess/judge.py (python-chess)" || echo "referee __chess-judge (compiled)")"
} > "$W/params"
table
