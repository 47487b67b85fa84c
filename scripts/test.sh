#!/usr/bin/env bash
# Runs the whole test suite, on a fresh Debian machine too: installs what
# the tests need and is missing, then runs `cargo test --release` (any
# arguments are passed on to it, e.g. `scripts/test.sh --test dealer`).
#
# Needed besides Rust: bubblewrap (the --sandbox tests), GNU parallel (the
# sharding test), Debian's chromium and chromium-driver (for browser
# tests), a JDK and Node.js (tests/languages.rs: bots in Java and
# JavaScript; Debian's default-jdk-headless and nodejs), and Slurm with
# munge (tests/slurm.rs starts a one-node cluster as root; slurm-wlm,
# munge, installed only when the script runs as root), Debian's stockfish
# (tests/chess.rs, tests/chess_fastchess.rs) and python3-venv
# (tests/chess_judges.rs compares the chess judge with the Python one; the
# script then makes that one's venv, games/chess/.venv, from PyPI), and
# Debian's postgresql
# (tests/league_db.rs and tests/league_postgres.rs start a server of their
# own as root; installed only when the script runs as root, without
# starting the system's cluster). They are
# installed with apt-get, without questions, only when missing, and only
# as root or with sudo; otherwise the script says what to install and runs
# the tests anyway.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each needed command, and the Debian package that provides it.
missing=()
need() {
  local command=$1 package=$2
  command -v "$command" >/dev/null 2>&1 || missing+=("$package")
}
need bwrap bubblewrap
# tests/kernel.rs counts the referee's system calls.
need strace strace
# moreutils has a `parallel` too, which is not the one the tests use.
if ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
  missing+=(parallel)
fi
need chromium chromium
need chromedriver chromium-driver
need javac default-jdk-headless
need java default-jdk-headless
need node nodejs
# Debian puts it in /usr/games, which a user's PATH may lack.
[[ -x /usr/games/stockfish ]] || missing+=(stockfish)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
# Slurm's daemons run only as root, so the cluster test skips for anyone
# else, and installing Slurm then would only start services for nothing.
# They live in /usr/sbin, which a user's PATH may lack.
if [[ $(id -u) == 0 ]]; then
  PATH=$PATH:/usr/sbin:/sbin need slurmctld slurm-wlm
  PATH=$PATH:/usr/sbin:/sbin need munged munge
  # Likewise the PostgreSQL tests: initdb and pg_ctl run as the postgres
  # user, which only root can become.
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
fi

if ((${#missing[@]} > 0)); then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if ! command -v apt-get >/dev/null 2>&1; then
    as_root=()
    can_install=false
  elif [[ $(id -u) == 0 ]]; then
    as_root=()
    can_install=true
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
    can_install=true
  else
    can_install=false
  fi
  if [[ $can_install == true ]]; then
    echo "scripts/test.sh: installing ${missing[*]}" >&2
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # No service starts while installing (the system's PostgreSQL cluster
    # above all: the tests start servers of their own), unless the machine
    # already says what may start.
    refuse_starts=false
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee /usr/sbin/policy-rc.d >/dev/null
      "${as_root[@]}" chmod +x /usr/sbin/policy-rc.d
      refuse_starts=true
    fi
    installed=0
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq "${missing[@]}" >/dev/null || installed=$?
    [[ $refuse_starts == true ]] && "${as_root[@]}" rm -f /usr/sbin/policy-rc.d
    ((installed == 0)) || exit "$installed"
  else
    echo "scripts/test.sh: missing ${missing[*]}; some tests will fail without them." >&2
    echo "  On Debian, as root: apt-get install ${missing[*]}" >&2
  fi
fi

# No root needed: a venv of its own (Debian has no python3-chess), for the
# Python chess judge that tests/chess_judges.rs compares with the referee's.
if ! games/chess/make-venv.sh; then
  echo "scripts/test.sh: could not make games/chess/.venv; tests/chess_judges.rs will skip." >&2
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "scripts/test.sh: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
# The reference bots' folders build with `cargo build --release` (their
# Makefiles), inside tests that wait two minutes at most: built here first,
# their builds find everything up to date instead of compiling the package
# while the suite runs.
cargo build --release --bins
exec cargo test --release "$@"
