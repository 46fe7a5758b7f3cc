#!/usr/bin/env bash
# Configures and builds ephost into ${BUILD_DIR:-build} (Release, -j2: the reference machine has 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-2}"
