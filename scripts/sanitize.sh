#!/usr/bin/env bash
# Sanitizer runs (not part of CI: on 2 cores the instrumented builds alone take longer than its budget).
#
#   bash scripts/sanitize.sh [asan] [tsan]      # default: both, asan first
#
# asan: builds everything with ASan+UBSan (EPHOST_SANITIZE="address;undefined", gcc) into
#       ${ASAN_BUILD_DIR:-build-asan} (ASAN_COMPILER=clang: clang in the fuzz build's configuration,
#       ${ASAN_BUILD_DIR:-build-fuzz}, which shares what scripts/fuzz.sh compiled) and runs the whole
#       CTest suite, the ONNX node suite (onnx_node_conformance) included. Left out: the packaging tests (CPack and lintian over an
#       instrumented build say nothing) and the Python package (an extension module cannot load the
#       ASan runtime into a Python that was not started with it). CTEST_ARGS adds ctest arguments
#       (e.g. CTEST_ARGS="-R Discovery" for a subset).
# tsan: builds the stress test alone with ThreadSanitizer (EPHOST_SANITIZE=thread) into
#       ${TSAN_BUILD_DIR:-build-tsan} and runs ${STRESS_THREADS:-8} threads x ${STRESS_RUNS:-1000} runs
#       on one session of PP-OCR's mobile classifier (tests/stress/), checking that every output is
#       bit-identical to a run made alone. oneDNN is left out of this build (EPHOST_BUILD_DNNL_PLUGIN=OFF)
#       and the session runs its kernels on one thread (OpenMP teams of one): neither runtime is
#       instrumented, and TSan would report their internal synchronization as races. What is checked is
#       the host's own concurrency: one session, its plans, frames, memory patterns and the CPU plugin's
#       kernels shared by 8 threads.
#
# Any sanitizer report fails the run (halt_on_error). Exit status: 0 when every part passed.
set -euo pipefail
cd "$(dirname "$0")/.."
PARTS=("$@")
[ ${#PARTS[@]} -gt 0 ] || PARTS=(asan tsan)
JOBS=${JOBS:-2}
status=0
summary=()

for part in "${PARTS[@]}"; do
  case "$part" in
    asan)
      if [ "${ASAN_COMPILER:-gcc}" = clang ]; then
        bash scripts/install_deps.sh fuzz
        # The fuzz build's configuration (clang, ASan+UBSan, libFuzzer's coverage hooks, which only slow
        # the suite down): the libraries that scripts/fuzz.sh built are shared through ccache.
        BUILD=${ASAN_BUILD_DIR:-build-fuzz}
        echo "== ASan+UBSan build (clang, the fuzz configuration): $BUILD"
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
          -DEPHOST_FUZZ=ON -DEPHOST_BUILD_BENCHMARKS=OFF -DEPHOST_BUILD_PYTHON=OFF >/dev/null
      else
        bash scripts/install_deps.sh
        BUILD=${ASAN_BUILD_DIR:-build-asan}
        echo "== ASan+UBSan build: $BUILD"
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DEPHOST_SANITIZE=address;undefined" \
          -DEPHOST_BUILD_BENCHMARKS=OFF -DEPHOST_BUILD_PYTHON=OFF >/dev/null
      fi
      cmake --build "$BUILD" -j"$JOBS"
      # handle_segv=0 and friends: the host's fault reporter and the plugin scanner must see a broken
      # plugin's signal as it is (ASan would turn it into an exit with its own report). No leak check:
      # the scanner child leaves the library it probed loaded on purpose, and so do death tests.
      export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_stack_use_after_return=0}
      export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
      echo "== ASan+UBSan: the whole suite and the node suite"
      start=$(date +%s)
      set +e
      (cd "$BUILD" && ctest -j"$JOBS" --timeout 1800 --output-on-failure -E '^(packaging_|python_package)' ${CTEST_ARGS:-}) \
        >"$BUILD/sanitize-ctest.log" 2>&1
      rc=$?
      set -e
      tail -n 30 "$BUILD/sanitize-ctest.log"
      result=$(grep -E 'tests passed, [0-9]+ tests failed' "$BUILD/sanitize-ctest.log" | tail -1)
      reports=$(grep -cE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$BUILD/sanitize-ctest.log" || true)
      summary+=("asan+ubsan: ${result:-no result} ($((($(date +%s) - start) / 60)) min), $reports sanitizer report(s)")
      [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ] || status=1
      unset ASAN_OPTIONS UBSAN_OPTIONS
      ;;
    tsan)
      bash scripts/install_deps.sh
      BUILD=${TSAN_BUILD_DIR:-build-tsan}
      echo "== TSan build: $BUILD (ephost_stress_tests)"
      cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEPHOST_SANITIZE=thread \
        -DEPHOST_BUILD_BENCHMARKS=OFF -DEPHOST_BUILD_PYTHON=OFF -DEPHOST_BUILD_DNNL_PLUGIN=OFF >/dev/null
      cmake --build "$BUILD" -j"$JOBS" --target ephost_stress_tests ephost_plugin_scanner
      bash tests/models/fetch_models.sh >/dev/null
      echo "== TSan: ${STRESS_THREADS:-8} threads x ${STRESS_RUNS:-1000} runs, one session of the PP-OCR classifier"
      start=$(date +%s)
      set +e
      TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} OMP_NUM_THREADS=1 EPHOST_STRESS_SESSION_THREADS=1 \
        EPHOST_STRESS_THREADS=${STRESS_THREADS:-8} EPHOST_STRESS_RUNS=${STRESS_RUNS:-1000} \
        EPHOST_PLUGIN_PATH= EPHOST_PLUGIN_REGISTRY= \
        "$BUILD/tests/ephost_stress_tests" >"$BUILD/sanitize-tsan.log" 2>&1
      rc=$?
      set -e
      tail -n 20 "$BUILD/sanitize-tsan.log"
      reports=$(grep -c 'WARNING: ThreadSanitizer' "$BUILD/sanitize-tsan.log" || true)
      summary+=("tsan: exit $rc, $reports ThreadSanitizer report(s), $((($(date +%s) - start))) s")
      [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ] || status=1
      ;;
    *)
      echo "sanitize.sh: unknown part '$part' (asan, tsan)" >&2
      exit 2
      ;;
  esac
done

echo "== sanitizer summary"
printf '%s\n' "${summary[@]}"
exit $status
