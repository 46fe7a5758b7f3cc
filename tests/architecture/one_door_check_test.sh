#!/bin/bash
# The build's provider-door check (host/provider/one_door_check.cmake) passes on the host as it is,
# having read it, and fails on a copy of the host with a plugin call outside host/provider/, naming the
# line, and on a folder that is not the host.
#   one_door_check_test.sh <cmake> <source dir>
set -euo pipefail
cmake="$1"
source_dir="$2"
check="$source_dir/host/provider/one_door_check.cmake"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect() {  # expect <what> <command...>: the command succeeds
  local what="$1"
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
fails() { ! "$@" >/dev/null 2>&1; }
check_host() { "$cmake" -DEPHOST_HOST_DIR="$1" -P "$check"; }

# 1. The host as it is: passes, and says how much it read (the host has well over 100 sources).
out=$(check_host "$source_dir/host" 2>&1) && rc=0 || rc=$?
echo "$out"
expect "the host passes" test "$rc" = 0
scanned=$(sed -n 's/.*one_door_check: \([0-9]*\) host sources.*/\1/p' <<<"$out")
expect "it scanned the host's sources (${scanned:-none})" test "${scanned:-0}" -ge 100

# 2. A copy with a call into the plugin table outside the door: fails, naming the file and the line.
cp -r "$source_dir/host" "$work/host"
echo '  step.provider->plugin()->compile(nullptr, nullptr, nullptr, nullptr);' >> "$work/host/exec/graph_executor.cpp"
echo '  if (p.plugin().on_run_end) {}' >> "$work/host/session/session.cpp"
out=$(check_host "$work/host" 2>&1) && rc=0 || rc=$?
expect "a plugin call outside host/provider/ fails the check" test "$rc" != 0
expect "the failure names the line" grep -q 'host/session/session.cpp: if (p.plugin().on_run_end) {}' <<<"$out"
expect "plugin()-> is caught too" grep -q 'host/exec/graph_executor.cpp: step.provider->plugin()->compile' <<<"$out"

# 3. The same call inside host/provider/ is the door's business: passes.
rm -rf "$work/host" && cp -r "$source_dir/host" "$work/host"
echo '// p.plugin().compile' >> "$work/host/provider/native_provider.cpp"
expect "calls inside host/provider/ pass" check_host "$work/host"

# 4. Not the host (nothing to read, or no provider folder): refuses to pass.
mkdir -p "$work/empty"
expect "an empty folder fails" fails check_host "$work/empty"
expect "a folder that does not exist fails" fails check_host "$work/nowhere"
rm -rf "$work/host/provider"
expect "a host without host/provider/ fails" fails check_host "$work/host"

[ "$failures" = 0 ]
