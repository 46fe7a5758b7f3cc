#!/usr/bin/env bash
# Fuzzing with libFuzzer (tests/fuzz/README.md). Builds the harnesses with clang, every target
# instrumented with ASan and UBSan, into ${FUZZ_BUILD_DIR:-build-fuzz}; seeds their corpora from the
# ONNX node cases, the PP-OCR classifier, `ephost compile` outputs and registry files; runs each harness
# for SECONDS, one after the other; prints executions and findings per harness.
#
#   bash scripts/fuzz.sh [SECONDS] [HARNESS...]     # default: 60 s each (the CI smoke test), all harnesses
#
# Harnesses: fuzz_model fuzz_context_binary fuzz_context_model fuzz_registry fuzz_input_pb.
# The corpus grows in ${FUZZ_BUILD_DIR}/fuzz/corpus/<harness> across runs. A finding (crash, hang past
# the timeout, sanitizer report, leak) is written to ${FUZZ_BUILD_DIR}/fuzz/artifacts/<harness>/; keep it
# as a regression input in tests/fuzz/regressions/<harness>/ once fixed.
# Exit status: 0 when no harness found anything, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(fuzz_model fuzz_context_binary fuzz_context_model fuzz_registry fuzz_input_pb)
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
WORK=$BUILD/fuzz
PY=${EPHOST_ONNX_PYTHON:-/usr/bin/python3}

# ---- build -------------------------------------------------------------------------------------------
bash scripts/install_deps.sh fuzz
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DEPHOST_FUZZ=ON -DEPHOST_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$BUILD" -j"${JOBS:-2}" --target ephost_fuzzers
# The seeds are written with an ordinary build's `ephost` and test plugins when there is one
# (${SEED_BUILD_DIR:-build}): the instrumented ones are only built when it is missing.
SEED_BUILD=${SEED_BUILD_DIR:-build}
if [ ! -x "$SEED_BUILD/tools/cli/ephost" ] || [ ! -d "$SEED_BUILD/tests/test_plugins" ]; then
  SEED_BUILD=$BUILD
  cmake --build "$BUILD" -j"${JOBS:-2}" --target ephost_cli ephost_test_plugins
fi

# ---- seeds ----------------------------------------------------------------------------------------------
SEEDS=$WORK/seeds
if [ ! -f "$SEEDS/.complete" ]; then
  NODE_TESTS=$("$PY" tests/conformance/generate_node_tests.py | tail -1)  # prints the folder of the node cases
  MODELS=$(bash tests/models/fetch_models.sh 2>/dev/null || true)
  rm -rf "$SEEDS"
  mkdir -p "$SEEDS"
  ASAN_OPTIONS=detect_leaks=0 "$PY" tests/fuzz/make_seeds.py "$SEEDS" "$NODE_TESTS" "${MODELS:-/nonexistent}" \
    "$SEED_BUILD/tools/cli/ephost" "$SEED_BUILD/tests/test_plugins" \
    "$(dirname "$(find "$SEED_BUILD/samples" -name libephost_example_ep.so | head -1)")"
  touch "$SEEDS/.complete"
fi

# ---- run --------------------------------------------------------------------------------------------------
# allocator_may_return_null: a model asking for terabytes gets a clean error, not an allocator abort;
# EPHOST_TENSOR_BYTES_LIMIT bounds what a model may allocate for one value. 4 MiB, not more: a fuzzed
# model that asks for a 64 M-element tensor spends seconds in an element loop whose every comparison
# calls libFuzzer's trace-cmp hook (68% of fuzz_model's time at 256 MiB). Measured on the 966 seed
# models: 165 s at 256 MiB against 14.5 s at 4 MiB, for 20,370 against 20,281 edges covered. Byte
# counts are still computed and checked before the limit refuses them, so overflow paths stay fuzzed.
# malloc_context_size=0: ASan records no allocation stacks. Recording them took a quarter of
# fuzz_model's time (StackDepot::Put, 24% in perf, growing with the run); without them two fuzz_model
# processes did ~450 executions/s each instead of ~310. A report then shows no allocation stack:
# replay the artifact with the fuzz binary and ASAN_OPTIONS unset for the full one.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:handle_abort=1:malloc_context_size=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export EPHOST_TENSOR_BYTES_LIMIT=${EPHOST_TENSOR_BYTES_LIMIT:-4194304}
export EPHOST_PLUGIN_REGISTRY=
# fuzz_input_pb and fuzz_context_model write their input into files on every execution; on a disk,
# ext4's writeback showed in perf's profile of fuzz_input_pb. tmpfs when there is one.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
status=0
summary=()
for h in "${HARNESSES[@]}"; do
  mkdir -p "$WORK/corpus/$h" "$WORK/artifacts/$h" "$SEEDS/$h"
  log=$WORK/$h.log
  echo "== $h: ${SECONDS_EACH} s"
  set +e
  "$BUILD/tests/fuzz/$h" "$WORK/corpus/$h" "$SEEDS/$h" "tests/fuzz/regressions/$h" \
    -max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=2048 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="$WORK/artifacts/$h/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  findings=$(find "$WORK/artifacts/$h" -type f | wc -l)
  summary+=("$(printf '%-20s %12s execs %8s exec/s  %s finding(s)' "$h" "${execs:-?}" "${rate:-?}" "$findings")")
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    echo "$h: FOUND SOMETHING (exit $rc); see $log and $WORK/artifacts/$h/"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 || true
  fi
done
echo "== fuzzing summary"
printf '%s\n' "${summary[@]}"
exit $status
