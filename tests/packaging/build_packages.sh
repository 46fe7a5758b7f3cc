#!/usr/bin/env bash
# CTest fixture: builds the release packages (three .deb and one .tar.gz) from the build tree with CPack,
# into OUT_DIR (emptied first), the way `cmake --build build --target package` does.
#   build_packages.sh BUILD_DIR OUT_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"
if ! (cd "$OUT" && cpack --config "$BUILD/CPackConfig.cmake" -B "$OUT" >"$OUT/cpack.log" 2>&1); then
  cat "$OUT/cpack.log" >&2
  echo "build_packages: cpack failed (log above)" >&2
  exit 1
fi
ls -1 "$OUT"/*.deb "$OUT"/*.tar.gz
