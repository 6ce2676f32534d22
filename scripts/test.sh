#!/usr/bin/env bash
# The test command: lint, pytest (unit + integration), then the pgTAP suite with pg_prove.
# Runs against a private cluster under $SISELECT_HOME (default /tmp/siselect-tests-$UID).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
export SISELECT_HOME="${SISELECT_TEST_HOME:-/tmp/siselect-tests-$(id -u)}"
unset SISELECT_DSN

"$python" -m ruff check plpy tests bench
"$python" -m mypy --no-error-summary
# Imports go one way: client above the pipeline's stages above runtime, no loops.
PYTHONPATH=plpy "$python" -c "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())" --no-cache

# The superuser's DSN: fixtures create databases and load. It names the cluster's passfile
# (no password in it); PGPASSFILE hands that file to psql and pg_prove below.
dsn="$("$python" -m siselect server start --admin | tail -n 1)"
export SISELECT_TEST_DSN="$dsn"
PGPASSFILE="$("$python" -c "import urllib.parse,sys; print(urllib.parse.parse_qs(urllib.parse.urlparse(sys.argv[1]).query)['passfile'][0])" "$dsn")"
export PGPASSFILE
trap '"$python" -m siselect server stop >/dev/null' EXIT

status=0
"$python" -m pytest "$@" || status=$?

# pgTAP: a fresh database with pgtap and siselect, one file per area.
port="$("$python" -c "import urllib.parse,sys; print(urllib.parse.urlparse(sys.argv[1]).port)" "$dsn")"
psql_base=(-h 127.0.0.1 -p "$port" -U postgres)
psql "${psql_base[@]}" -d postgres -qAt -c "DROP DATABASE IF EXISTS siselect_tap" \
     -c "CREATE DATABASE siselect_tap" >/dev/null
psql "${psql_base[@]}" -d siselect_tap -qAt -c "CREATE EXTENSION pgtap" \
     -c "CREATE EXTENSION siselect CASCADE" >/dev/null
pg_prove "${psql_base[@]}" -d siselect_tap tests/pgtap/*.sql || status=$?

# pg_regress, PGXS's own convention: sql/regress_*.sql against expected/.
PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres make --no-print-directory installcheck \
    || { status=$?; cat regression.diffs 2>/dev/null | head -100; }
exit $status
