#!/usr/bin/env bash
# The Debian package, installed as a DBA installs it, on a cluster it did not prepare:
#   builds the current .deb (make deb) and the 0.1.0 one (scripts/build_deb.sh 0.1.0);
#   takes away what `make install` put in place; starts a fresh cluster (initdb as postgres
#   in a temporary folder, a free port); installs the 0.1.0 package with apt-get and creates
#   the extension at 0.1.0; upgrades to the current package and runs ALTER EXTENSION UPDATE;
#   runs `make installcheck` against the packaged files; removes the package and checks that
#   its files are gone; reinstalls what `make install` provides (also when a step fails).
# Replaces the server's siselect files while it runs: .ci/run calls it after `make test`,
# never alongside other tests. Root only (apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."
here="$PWD"
pg=15
pg_config="/usr/lib/postgresql/$pg/bin/pg_config"
bindir="$("$pg_config" --bindir)"
sharedir="$("$pg_config" --sharedir)"
version="$(sed -n "s/^default_version = '\(.*\)'/\1/p" extension/siselect.control)"
package="postgresql-$pg-siselect"
[[ $(id -u) -eq 0 ]] || { echo "package_test: needs root (apt-get install)" >&2; exit 1; }

step() { printf '\n== package_test: %s (%ss)\n' "$*" "$SECONDS" >&2; }
fail() { echo "package_test: FAIL: $*" >&2; exit 1; }
# Quiet unless it fails: postgresql-common's triggers talk on every install.
apt_get() {
  DEBIAN_FRONTEND=noninteractive apt-get "$@" -y -qq -o Dpkg::Use-Pty=0 >"$log" 2>&1 \
    || { cat "$log" >&2; return 1; }
}
installed_version() { dpkg-query -W -f='${db:Status-Status} ${Version}' "$package" 2>/dev/null || true; }

log="$(mktemp /tmp/siselect-package-test-log.XXXXXX)"
step "build the packages"
deb_new="$(bash scripts/build_deb.sh | tail -n 1)"
# The 0.1.0 package comes from a fixed commit: rebuilt only when the packaging changed.
deb_old="$(ls "$here"/build/deb/"$package"_0.1.0_*.deb 2>/dev/null | tail -n 1 || true)"
if [[ -z "$deb_old" || -n "$(find debian scripts/build_deb.sh -newer "$deb_old" | head -n 1)" ]]; then
  deb_old="$(bash scripts/build_deb.sh 0.1.0 | tail -n 1)"
fi
ls -l "$deb_new" "$deb_old" >&2

tmp="$(mktemp -d /tmp/siselect-package-test.XXXXXX)"
chown postgres: "$tmp"
export PGHOST="$tmp" PGUSER=postgres
psql_() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

restore() {
  local status=$?
  set +e
  [[ -f "$tmp/data/postmaster.pid" ]] \
    && runuser -u postgres -- "$bindir/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null
  rm -rf "$tmp" "$log"
  if [[ "$(installed_version)" == installed* ]]; then apt_get remove "$package"; fi
  step "reinstall what make install provides"
  # A second try: a `make install` run by someone else in the same tree at the same time
  # removes build/python under this one's feet (never the case in CI).
  local try
  for try in 1 2; do
    make --no-print-directory -s install PG_CONFIG="$pg_config" >"$tmp.make-install.log" 2>&1 && break
    cat "$tmp.make-install.log" >&2
    echo "package_test: make install failed (try $try)" >&2
    ((try == 2)) && status=1
  done
  rm -f "$tmp.make-install.log"
  [[ -f "$sharedir/extension/siselect--$version.sql" && -d "$sharedir/siselect/python-$version" ]] \
    || { echo "package_test: make install left no siselect $version" >&2; status=1; }
  ((status == 0)) && echo "package_test: ok (${SECONDS}s)" >&2
  exit $status
}
trap restore EXIT

step "take away what make install put in place"
if [[ "$(installed_version)" == installed* ]]; then apt_get remove "$package"; fi
make --no-print-directory -s uninstall PG_CONFIG="$pg_config" >/dev/null
rm -rf "$sharedir/siselect"
[[ ! -e "$sharedir/extension/siselect.control" ]] || fail "siselect.control survived make uninstall"

step "a fresh cluster in $tmp"
runuser -u postgres -- "$bindir/initdb" -D "$tmp/data" -U postgres -A trust -E UTF8 \
    --no-sync >/dev/null
PGPORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export PGPORT
runuser -u postgres -- "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w \
    -o "-p $PGPORT -k $tmp -c listen_addresses=''" start >/dev/null

step "install the 0.1.0 package and create the extension at 0.1.0"
apt_get install "$deb_old"
[[ "$(installed_version)" == "installed 0.1.0" ]] || fail "dpkg says $(installed_version)"
psql_ -d postgres -c "CREATE DATABASE upgraded"
psql_ -d upgraded -c "CREATE EXTENSION siselect VERSION '0.1.0' CASCADE"
got="$(psql_ -d upgraded -c "SELECT extversion || ' ' || siselect.version() FROM pg_extension WHERE extname = 'siselect'")"
[[ "$got" == "0.1.0 0.1.0" ]] || fail "at 0.1.0, extension and Python package say: $got"

step "upgrade to the $version package, then ALTER EXTENSION UPDATE"
apt_get install "$deb_new"
[[ "$(installed_version)" == "installed $version" ]] || fail "dpkg says $(installed_version)"
[[ ! -e "$sharedir/siselect/python-0.1.0" ]] || fail "the upgrade left python-0.1.0 behind"
# Until the update, the 0.1.0 functions point at the folder the upgrade removed (docs/dba.md).
if out="$(psql_ -d upgraded -c "SELECT siselect.version()" 2>&1)"; then
  fail "a 0.1.0 function still ran after its package was replaced: $out"
fi
[[ "$out" == *"No module named 'siselect'"* ]] || fail "unexpected error before the update: $out"
psql_ -d upgraded -c "ALTER EXTENSION siselect UPDATE"
got="$(psql_ -d upgraded -c "SELECT extversion || ' ' || siselect.version() FROM pg_extension WHERE extname = 'siselect'")"
[[ "$got" == "$version $version" ]] || fail "after the update, extension and Python package say: $got"
status="$(psql_ -d upgraded -c "SELECT siselect.separate('SELECT 1', 'SELECT 2') ->> 'status'")"
[[ "$status" == separated ]] || fail "separate after the update: $status"

step "what the package installed"
files="$tmp/files"
dpkg -L "$package" > "$files"
dpkg --verify "$package" || fail "installed files differ from the package's checksums"
grep -qx "$sharedir/siselect/python-$version/siselect/dispatch.py" "$files" \
  || fail "the package does not own the server's Python package"
# Every vendored distribution is covered by debian/copyright.
for info in "$sharedir/siselect/python-$version"/*.dist-info; do
  name="$(basename "$info")"; name="${name%%-*}"
  grep -q "build/python/$name-\*\.dist-info/\*" debian/copyright || fail "debian/copyright misses $name"
done
# The server cannot write __pycache__: the shipped bytecode must be valid as shipped.
/usr/bin/python3 - "$sharedir/siselect/python-$version" <<'PY' || fail "stale bytecode in the package"
import importlib.util, pathlib, sys
stale = []
for pyc in pathlib.Path(sys.argv[1]).rglob("__pycache__/*.cpython-311.pyc"):
    source = pyc.parent.parent / (pyc.name.split(".")[0] + ".py")
    data = pyc.read_bytes()
    flags = int.from_bytes(data[4:8], "little")
    if source.exists() and (flags != 3 or data[8:16] != importlib.util.source_hash(source.read_bytes())):
        stale.append(str(pyc))
print(f"{len(stale)} stale .pyc", file=sys.stderr)
sys.exit(1 if stale else 0)
PY

step "make installcheck against the packaged extension"
regress="$tmp/regress"
mkdir -p "$regress"
make --no-print-directory installcheck PG_CONFIG="$pg_config" \
     EXTRA_REGRESS_OPTS="--outputdir=$regress" \
  || { cat "$regress/regression.diffs" 2>/dev/null | head -100; fail "make installcheck"; }

step "remove the package"
runuser -u postgres -- "$bindir/pg_ctl" -D "$tmp/data" -m fast stop >/dev/null
apt_get remove "$package"
[[ -z "$(installed_version)" || "$(installed_version)" == not-installed* ]] \
  || fail "dpkg still lists $package: $(installed_version)"
left=()
while read -r path; do
  [[ -f "$path" || -L "$path" ]] && left+=("$path")
done < "$files"
((${#left[@]} == 0)) || fail "apt-get remove left ${#left[@]} files, e.g. ${left[0]}"
[[ ! -e "$sharedir/siselect" ]] || fail "apt-get remove left $sharedir/siselect"
