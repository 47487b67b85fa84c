#!/usr/bin/env bash
# Makes games/chess/.venv, the judge's Python with python-chess (Debian has
# no package of it, hence a venv from PyPI), unless it already imports
# chess. Needs python3's venv module (Debian's python3-venv). .ci/run and
# scripts/test.sh run it; by hand: games/chess/make-venv.sh
set -euo pipefail
cd "$(dirname "$0")"
if .venv/bin/python3 -c 'import chess' 2>/dev/null; then
  exit 0
fi
echo "games/chess/make-venv.sh: making games/chess/.venv (python-chess)" >&2
python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
