#!/usr/bin/env bash
# Builds the Debian package postgresql-<pg>-siselect into build/deb/ (dpkg-buildpackage with
# pg_buildext, see debian/rules), from a copy of the tree so that the build's `make install`
# and `make clean` leave the work tree's build/ alone.
#
#   scripts/build_deb.sh          the current version, from the work tree (what `make deb` runs)
#   scripts/build_deb.sh 0.1.0    the 0.1.0 release, for the upgrade test: the tree of the last
#                                 0.1.0 commit with today's debian/ (changelog cut to 0.1.0) and
#                                 the 0.1.0 SQL script kept in sql/
#
# Prints the path of the .deb it built on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
release="${1:-}"
# The last commit whose Python package and control file say 0.1.0.
release_0_1_0=68697de4650946484c3aa1cb7324b56b2d40c613

build_deps=(debhelper postgresql-server-dev-all dpkg-dev fakeroot python3-pip)
missing=()
for p in "${build_deps[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "build_deb: missing Debian packages ${missing[*]}; install them as root" >&2; exit 1
  fi
  echo "build_deb: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

out="$here/build/deb"
src="$out/src-${release:-current}"
rm -rf "$src" && mkdir -p "$src"
case "$release" in
  "")
    tar -C "$here" --exclude=__pycache__ --exclude='*.egg-info' -cf - \
        Makefile tap.mk extension sql plpy debian README.md docs/dba.md | tar -C "$src" -xf -
    ;;
  0.1.0)
    git -C "$here" cat-file -e "$release_0_1_0^{commit}" 2>/dev/null \
      || { echo "build_deb: commit $release_0_1_0 (0.1.0) is not in this clone" >&2; exit 1; }
    git -C "$here" archive "$release_0_1_0" | tar -C "$src" -xf -
    cp "$here/sql/siselect--0.1.0.sql" "$src/sql/"
    cp -r "$here/debian" "$src/"
    # The changelog's newest entry is the package's version: keep 0.1.0's and older.
    sed -n '/^siselect (0\.1\.0)/,$p' "$here/debian/changelog" > "$src/debian/changelog"
    ;;
  *) echo "build_deb: unknown release '$release' (known: 0.1.0)" >&2; exit 2 ;;
esac

version="$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)"
log="$out/build-$version.log"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b >"$log" 2>&1); then
  tail -40 "$log" >&2
  echo "build_deb: dpkg-buildpackage failed, full log in $log" >&2
  exit 1
fi
rm -rf "$src"
ls "$out"/postgresql-*-siselect_"${version}"_*.deb
