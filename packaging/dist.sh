#!/usr/bin/env bash
# make dist: writes dist/, one folder per platform and the packages beside them:
#
#   linux-amd64/   memdecay.so, memworker     (stripped)
#   linux-arm64/   memdecay.so, memworker     (cross-built: aarch64-linux-gnu-gcc)
#   windows-amd64/ memdecay.dll               (cross-built: x86_64-w64-mingw32-gcc)
#   memdecay-VERSION-py3-none-manylinux_2_X_x86_64.whl   one wheel per Linux
#   memdecay-VERSION-py3-none-manylinux_2_X_aarch64.whl  platform, with memworker
#   memdecay-VERSION.tgz   the npm package, every platform's library in lib/
#   SHA256SUMS             sha256sum -c SHA256SUMS, from dist/
#
# dist.sh wheel / dist.sh npm (make wheel, make npm) build this machine's
# platform alone (linux-amd64 or linux-arm64): its folder, and its wheel or
# an npm package holding its library; no cross compiler is needed.
#
# X is the glibc floor: the highest GLIBC_2.X symbol version the platform's
# binaries need (PEP 600). The extension is not a Python extension module,
# so a wheel is py3-none: any Python 3 on that platform.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
case $mode in
all | wheel | npm) ;;
*) echo "dist.sh: mode $mode: want all, wheel or npm" >&2; exit 2 ;;
esac
case $(uname -m) in
x86_64) here=linux-amd64 here_arch=x86_64 ;;
aarch64 | arm64) here=linux-arm64 here_arch=aarch64 ;;
*) here= ;;
esac
if [ "$mode" != all ] && [ -z "$here" ]; then
  echo "make $mode: builds for linux-amd64 or linux-arm64 only; this machine is $(uname -sm)" >&2
  exit 1
fi
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' sqlfuncs/doc.go) # the one place it is written
go=${GO:-go}
out=$PWD/dist
stage=$PWD/build/dist
tags=sqlite_math_functions
# Python runs from an empty directory: from the project's root, its build/
# folder would stand in for the module build (python3 -m build).
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT

# Every missing tool is named at once, with the Debian packages that bring
# them, before anything is built.
missing=() packages=()
need() { # need COMMAND PACKAGE...: note COMMAND missing, and its packages
  command -v "$1" >/dev/null && return
  missing+=("$1")
  shift
  packages+=("$@")
}
if [ "$mode" = all ]; then
  need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  need x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64
fi
[ "$mode" = npm ] || need readelf binutils
if [ "$mode" = npm ]; then
  need npm npm
elif ! (cd "$empty" && /usr/bin/python3 -m build --version && /usr/bin/python3 -m wheel version &&
  /usr/bin/python3 -c 'import setuptools') >/dev/null 2>&1; then
  missing+=("python3's build, setuptools and wheel")
  packages+=(python3-build python3-setuptools python3-wheel)
fi
if [ "$mode" = all ]; then
  command -v npm >/dev/null || { missing+=(npm); packages+=(npm); }
fi
if [ ${#missing[@]} -gt 0 ]; then
  list=$(printf '%s, ' "${missing[@]}")
  echo "make ${mode/all/dist}: missing ${list%, }; Debian's packages: sudo apt-get install -y --no-install-recommends ${packages[*]} (make prereqs checks all make test needs)" >&2
  exit 1
fi
rm -rf "$out" "$stage"
mkdir -p "$out" "$stage"

# sqlite3ext.h and sqlite3.h are the same on every platform; a cross
# compiler is given them alone, not the host's /usr/include.
mkdir -p "$stage/include"
cp /usr/include/sqlite3.h /usr/include/sqlite3ext.h "$stage/include/"

# build PLATFORM GOOS GOARCH CC LIBRARY [memworker]: the extension (and the
# worker) for one platform into dist/PLATFORM.
build() {
  local platform=$1 goos=$2 goarch=$3 cc=$4 library=$5 worker=${6:-}
  local dir=$out/$platform
  mkdir -p "$dir"
  echo "make dist: $platform" >&2
  CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=$cc CGO_CFLAGS="-O2 -I$stage/include" \
    "$go" build -trimpath -ldflags "-s -w" -buildmode=c-shared -tags "memdecay_loadable,$tags" -o "$dir/$library" ./ext
  rm -f "$dir/memdecay.h"
  if [ -n "$worker" ]; then
    CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=$cc \
      "$go" build -trimpath -ldflags "-s -w" -tags "$tags" -o "$dir/memworker" ./cmd/memworker
  fi
}
if [ "$mode" != all ]; then
  build "$here" linux "${here#linux-}" "${CC:-gcc}" memdecay.so memworker
else
  build linux-amd64 linux amd64 "${CC:-gcc}" memdecay.so memworker
  build linux-arm64 linux arm64 aarch64-linux-gnu-gcc memdecay.so memworker
  build windows-amd64 windows amd64 x86_64-w64-mingw32-gcc memdecay.dll
fi

# glibc_floor FILE...: the highest GLIBC_2.X the files need, as X.
glibc_floor() {
  readelf -V --wide "$@" | grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1 | sed 's/^GLIBC_2\.//'
}

# The wheels: the package, the platform's library in memdecay/PLATFORM/, the
# version written in, the platform tag set (setup.cfg), then memworker added
# as a script (memdecay-VERSION.data/scripts/: pip installs it on PATH).
wheel() {
  local platform=$1 arch=$2
  local floor tag src=$stage/python-$platform unpacked=$stage/unpacked-$platform
  floor=$(glibc_floor "$out/$platform/memdecay.so" "$out/$platform/memworker")
  [ -n "$floor" ] || { echo "make dist: no GLIBC_2.X symbol version in $platform's binaries" >&2; exit 1; }
  tag=manylinux_2_${floor}_$arch
  cp -r packaging/python "$src"
  cp LICENSE "$src/"
  mkdir -p "$src/memdecay/$platform"
  cp "$out/$platform/memdecay.so" "$src/memdecay/$platform/"
  printf '__version__ = "%s"\n' "$version" > "$src/memdecay/_version.py"
  printf '[bdist_wheel]\nplat_name = %s\n' "$tag" > "$src/setup.cfg"
  (cd "$empty" && /usr/bin/python3 -m build --wheel --no-isolation --outdir "$stage/wheels-$platform" "$src") >"$stage/wheel-$platform.log" 2>&1 ||
    { cat "$stage/wheel-$platform.log" >&2; exit 1; }
  local built=$stage/wheels-$platform/memdecay-$version-py3-none-$tag.whl
  [ -f "$built" ] || { echo "make dist: expected $built; got: $(ls "$stage/wheels-$platform")" >&2; exit 1; }
  /usr/bin/python3 -m wheel unpack --dest "$unpacked" "$built" >/dev/null
  install -D -m 0755 "$out/$platform/memworker" "$unpacked/memdecay-$version/memdecay-$version.data/scripts/memworker"
  /usr/bin/python3 -m wheel pack --dest-dir "$out" "$unpacked/memdecay-$version" >/dev/null
}
case $mode in
all) wheel linux-amd64 x86_64 && wheel linux-arm64 aarch64 ;;
wheel) wheel "$here" "$here_arch" ;;
esac

# The npm package: one package for every platform built, its library in
# lib/PLATFORM/ (getLoadablePath picks the running one).
platforms=(linux-amd64 linux-arm64 windows-amd64)
[ "$mode" = all ] || platforms=("$here")
if [ "$mode" != wheel ]; then
mkdir -p "$stage/npm"
cp packaging/npm/index.js packaging/npm/index.d.ts packaging/npm/README.md LICENSE "$stage/npm/"
for platform in "${platforms[@]}"; do
  mkdir -p "$stage/npm/lib/$platform"
  cp "$out/$platform"/memdecay.* "$stage/npm/lib/$platform/"
done
sed "s/@VERSION@/$version/" packaging/npm/package.json.in > "$stage/npm/package.json"
(cd "$stage/npm" && npm pack --silent --pack-destination "$out" >/dev/null)
fi

(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)
(cd "$out" && ls -l -R .)
