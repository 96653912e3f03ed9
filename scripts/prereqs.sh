#!/usr/bin/env bash
# What make test (and so .ci/run) needs on the machine, checked before the tests
# start. Each tool is asked for by its own command, run from an empty directory,
# so that no folder of the project's (build/ above all) stands in for a Python
# module. As root, whatever is missing is installed with apt-get; otherwise, or
# with --check-only (or MEMDECAY_NO_INSTALL=1), one line names the missing
# packages and the command that installs them, and the exit status is 1.
#
# GO names the go command (default go); MEMDECAY_PYTHON the Python the tests
# and make dist use (default Debian's /usr/bin/python3, whose sqlite3 module
# loads extensions).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
py=${MEMDECAY_PYTHON:-/usr/bin/python3}
gomin=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$root/go.mod")

install=1
[ "${MEMDECAY_NO_INSTALL:-}" = 1 ] && install=
case "${1:-}" in
  --check-only) install= ;;
  "") ;;
  *) echo "usage: $0 [--check-only]" >&2; exit 2 ;;
esac

# One row per tool: the Debian package that brings it | the command that asks
# for it. "-" is Go, which is not taken from Debian (bookworm's is too old).
table=$(cat <<'ROWS'
-                      | go_recent
gcc                    | gcc --version
make                   | make --version
sqlite3                | sqlite3 -version
libsqlite3-dev         | test -f /usr/include/sqlite3ext.h
python3                | "$py" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)'
python3-build          | "$py" -m build --version
python3-setuptools     | "$py" -c 'import setuptools'
python3-wheel          | "$py" -m wheel version
python3-venv           | "$py" -m ensurepip --version
npm                    | npm --version
g++                    | g++ --version
gcc-aarch64-linux-gnu  | aarch64-linux-gnu-gcc --version
libc6-dev-arm64-cross  | test -f /usr/aarch64-linux-gnu/include/stdio.h
qemu-user-static       | qemu-aarch64-static --version
binutils               | readelf --version
gcc-mingw-w64-x86-64   | x86_64-w64-mingw32-gcc --version
wine64                 | test -x /usr/lib/wine/wine64
ROWS
)

# go_recent: go runs and is at least the version go.mod names.
go_recent() {
  local v
  v=$("$go" env GOVERSION) || return 1
  printf '%s\n%s\n' "$gomin" "${v#go}" | sort -V -C
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# check sets missing (Debian packages, in table order) and nogo (Go is missing).
check() {
  missing=() nogo=
  local pkg test
  while IFS='|' read -r pkg test; do
    pkg=${pkg//[[:space:]]/}
    [ -n "$pkg" ] || continue
    if ! (cd "$scratch" && eval "$test") </dev/null >/dev/null 2>&1; then
      if [ "$pkg" = - ]; then
        nogo=1
      elif [[ " ${missing[*]} " != *" $pkg "* ]]; then
        missing+=("$pkg")
      fi
    fi
  done <<<"$table"
}

# report prints the one line that says what is missing and how to add it.
report() {
  local line="make test needs" sudo=
  [ -n "$nogo" ] && line+=" Go $gomin or newer on PATH (go.dev/dl; Debian's golang-go may be older)"
  if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || sudo="sudo "
    [ -n "$nogo" ] && line+=" and"
    line+=" the Debian packages ${missing[*]}: ${sudo}apt-get install -y --no-install-recommends ${missing[*]}"
  fi
  echo "$line" >&2
}

check
[ -z "$nogo" ] && [ ${#missing[@]} -eq 0 ] && exit 0
if [ ${#missing[@]} -gt 0 ] && [ -n "$install" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]} (apt-get; MEMDECAY_NO_INSTALL=1 only checks)" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  check
  [ -z "$nogo" ] && [ ${#missing[@]} -eq 0 ] && exit 0
fi
report
exit 1
