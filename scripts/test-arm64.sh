#!/usr/bin/env bash
# make test-arm64: the formulas' tests (golden bits included) and the
# SQLite shim's tests, cross-compiled for linux/arm64 and run under qemu.
# arm64's Go fuses multiply-adds and its math.Exp is FMA assembly: the
# golden files pin the bits memdecay must give there too (docs/sweep.md).
#
# Needs Debian's gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and
# qemu-user-static. SKIP_ARM64=1 skips (for a machine without them).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${SKIP_ARM64:-}" = 1 ]; then
  echo "test-arm64: skipped (SKIP_ARM64=1)"
  exit 0
fi
QEMU=${QEMU:-qemu-aarch64-static}
CC_ARM64=${CC_ARM64:-aarch64-linux-gnu-gcc}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}
for tool in "$QEMU" "$CC_ARM64"; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-arm64: $tool not found (apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static, or SKIP_ARM64=1)" >&2
    exit 1
  fi
done

out=build/arm64
mkdir -p "$out"
go=${GO:-go}

# sqlfuncs is pure Go: a static binary.
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "$go" test -c -o "$out/sqlfuncs.test" ./sqlfuncs
# The shim links SQLite (cgo): built with the cross compiler, run against
# the arm64 C library.
CGO_ENABLED=1 CC="$CC_ARM64" GOOS=linux GOARCH=arm64 \
  "$go" test -c -tags sqlite_math_functions -o "$out/shim.test" ./ext/shim

abs=$(pwd)/$out
echo "test-arm64: sqlfuncs (linux/arm64 under $QEMU)"
(cd sqlfuncs && "$QEMU" "$abs/sqlfuncs.test" -test.count=1 -test.short)
echo "test-arm64: ext/shim (linux/arm64 under $QEMU)"
(cd ext/shim && "$QEMU" -L "$SYSROOT" "$abs/shim.test" -test.count=1 -test.short)
echo "test-arm64: ok"
