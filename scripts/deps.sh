#!/usr/bin/env bash
# Install what siselect needs on Debian 12 (as root) and the Python client; idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

apt_packages=(postgresql-15 postgresql-server-dev-15 postgresql-plpython3-15
              postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl sqlite3
              chromium)  # the browser tests' (Playwright drives it; no downloaded browser)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing Debian packages ${missing[*]}; install them as root" >&2; exit 1
  fi
  echo "deps: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python="${PYTHON:-python3}"
if ! { "$python" -c "import siselect, pglast, psycopg, pytest_postgresql, matplotlib, jinja2, ruff, mypy, hypothesis, playwright, jsonschema, importlinter, faker" 2>/dev/null \
       && command -v hadolint >/dev/null; } \
   || [[ "$("$python" -c 'import siselect,os;print(os.path.realpath(siselect.__file__))')" != "$here"/* ]]; then
  echo "deps: installing the siselect client and test tools for $python" >&2
  "$python" -m pip install --quiet --disable-pip-version-check -e "$here[test]"
fi
