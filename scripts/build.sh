#!/usr/bin/env bash
# Configures and builds ephost into ${BUILD_DIR:-build} (Release, -j2: the reference machine has 2 cores).
# EPHOST_BUILD_TARGETS (space-separated) builds only those targets and what they need; unset, everything.
# ccache, where installed, caches the compiler's work between builds and build folders.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}" "$@" >/dev/null
TARGETS=()
[ -n "${EPHOST_BUILD_TARGETS:-}" ] && read -r -a TARGETS <<<"$EPHOST_BUILD_TARGETS"
cmake --build "$BUILD_DIR" -j"${JOBS:-2}" ${TARGETS[@]:+--target "${TARGETS[@]}"}
