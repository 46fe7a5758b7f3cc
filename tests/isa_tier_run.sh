#!/usr/bin/env bash
# tests/isa_tier_run.sh ISA COMMAND...: runs COMMAND with EPHOST_CPU_ISA=ISA (plugins/cpu/math/isa.h),
# so that a CTest entry runs a whole suite on a narrower ISA tier than the machine's widest. Exits 77
# (CTest's skip) when the processor lacks ISA, or when ISA is its widest tier: the suite's plain entry
# already runs that path.
set -euo pipefail
isa=$1
shift
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }
widest=scalar
if has avx2 && has fma; then
  widest=avx2
  if has avx512f && has avx512dq && has avx512vl && has avx512bw; then widest=avx512; fi
fi
rank() { case $1 in scalar) echo 0 ;; avx2) echo 1 ;; avx512) echo 2 ;; *) echo "isa_tier_run: unknown ISA '$1'" >&2; exit 2 ;; esac; }
if (( $(rank "$isa") > $(rank "$widest") )); then
  echo "SKIP: this CPU has no $isa (its widest tier is $widest)"
  exit 77
fi
if [[ $isa == "$widest" ]]; then
  echo "SKIP: $isa is this CPU's widest tier, which the suite's plain entry runs"
  exit 77
fi
export EPHOST_CPU_ISA=$isa
export EPHOST_TEST_KEEP_ENVIRONMENT=EPHOST_CPU_ISA${EPHOST_TEST_KEEP_ENVIRONMENT:+,$EPHOST_TEST_KEEP_ENVIRONMENT}
echo "isa_tier_run: EPHOST_CPU_ISA=$isa (this CPU's widest tier is $widest)"
exec "$@"
