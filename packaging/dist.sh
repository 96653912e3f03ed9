#!/usr/bin/env bash
# make dist: writes dist/ — memdecay.so and memworker built stripped, the
# Python wheel (memdecay-VERSION-py3-none-PLATFORM.whl) and the npm package
# (memdecay-VERSION.tgz), each bundling the same memdecay.so.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' sqlfuncs/doc.go) # the one place it is written
out=$PWD/dist
stage=$PWD/build/dist
tags=sqlite_math_functions
rm -rf "$out" "$stage"
mkdir -p "$out" "$stage"
# Python runs from an empty directory: from the project's root, its build/
# folder would stand in for the module build (python3 -m build).
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT

go build -trimpath -ldflags "-s -w" -buildmode=c-shared -tags "memdecay_loadable,$tags" -o "$out/memdecay.so" ./ext
rm -f "$out/memdecay.h"
go build -trimpath -ldflags "-s -w" -tags "$tags" -o "$out/memworker" ./cmd/memworker

# The wheel: the package, the library beside it, the version written in.
if ! (cd "$empty" && /usr/bin/python3 -m build --version && /usr/bin/python3 -m wheel version &&
  /usr/bin/python3 -c 'import setuptools') >/dev/null 2>&1; then
  echo "make dist: Debian's python3-build, python3-setuptools and python3-wheel are needed: sudo apt-get install -y --no-install-recommends python3-build python3-setuptools python3-wheel (make prereqs checks all make test needs)" >&2
  exit 1
fi
cp -r packaging/python "$stage/python"
cp LICENSE "$stage/python/"
cp "$out/memdecay.so" "$stage/python/memdecay/"
printf '__version__ = "%s"\n' "$version" > "$stage/python/memdecay/_version.py"
(cd "$empty" && /usr/bin/python3 -m build --wheel --no-isolation --outdir "$out" "$stage/python") >"$stage/wheel.log" 2>&1 ||
  { cat "$stage/wheel.log" >&2; exit 1; }

# The npm package.
mkdir -p "$stage/npm/lib"
cp packaging/npm/index.js packaging/npm/index.d.ts packaging/npm/README.md LICENSE "$stage/npm/"
cp "$out/memdecay.so" "$stage/npm/lib/"
sed "s/@VERSION@/$version/" packaging/npm/package.json.in > "$stage/npm/package.json"
(cd "$stage/npm" && npm pack --silent --pack-destination "$out" >/dev/null)

ls -l dist
