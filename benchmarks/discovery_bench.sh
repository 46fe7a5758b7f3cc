#!/usr/bin/env bash
# Plugin discovery time for N plugins, cold (every library probed by the crash-isolated scanner) and
# warm (every result read from the registry cache), measured with `ephost plugins`.
#
#   benchmarks/discovery_bench.sh [--ephost PATH] [--plugin LIB] [--count N] [--repeat R]
#
# Copies one plugin library (default: the build's test plugin libephost_test_alpha.so) N times (default
# 50) into a temporary folder under distinct file names. Each copy says the same plugin name, so the
# host loads the first and skips the others as duplicates after probing them (the scanner and the
# registry do the same work for each). Times, each the median of R (default 5) runs:
#   base   `ephost plugins` over an empty folder (process start, the built-in CPU plugin)
#   cold   the N copies with an empty $XDG_CACHE_HOME: the scanner probes all of them
#   warm   the same again: the registry cache answers, nothing is probed out of process
# and prints cold and warm less base, in total and per plugin. Goals (issue 12): warm <= 5 ms in all,
# cold <= 50 ms per plugin.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EPHOST_BIN="${EPHOST:-$ROOT/build/tools/cli/ephost}"
PLUGIN="$ROOT/build/tests/test_plugins/libephost_test_alpha.so"
COUNT=50
REPEAT=5
while [ $# -gt 0 ]; do
  case "$1" in
    --ephost) EPHOST_BIN=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    *) echo "discovery_bench.sh: unknown argument '$1' (--ephost, --plugin, --count, --repeat)" >&2; exit 2 ;;
  esac
done
[ -x "$EPHOST_BIN" ] || { echo "discovery_bench.sh: no ephost at $EPHOST_BIN (build it, or pass --ephost)" >&2; exit 2; }
[ -f "$PLUGIN" ] || { echo "discovery_bench.sh: no plugin at $PLUGIN (build ephost_test_plugins, or pass --plugin)" >&2; exit 2; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/plugins" "$WORK/empty"
for i in $(seq -w 1 "$COUNT"); do cp "$PLUGIN" "$WORK/plugins/libbench_plugin_$i.so"; done

# Milliseconds (3 decimals) of one `ephost plugins` over folder $1 with cache $2; fails loudly.
one_run() {
  local t0 t1
  t0=$(date +%s%N)
  if ! env -u EPHOST_PLUGIN_REGISTRY EPHOST_PLUGIN_PATH="$1" XDG_CACHE_HOME="$2" "$EPHOST_BIN" plugins \
      >"$WORK/out.txt" 2>&1; then
    echo "discovery_bench.sh: ephost plugins failed:" >&2
    cat "$WORK/out.txt" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000 ))" | awk '{ printf "%.3f", $1 / 1000 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

base=$(for _ in $(seq "$REPEAT"); do one_run "$WORK/empty" "$WORK/cache-empty"; done | median)
cold=$(for r in $(seq "$REPEAT"); do one_run "$WORK/plugins" "$WORK/cache-cold-$r"; done | median)
# The registry written by the first cold run: every later start reads it.
warm=$(for _ in $(seq "$REPEAT"); do one_run "$WORK/plugins" "$WORK/cache-cold-1"; done | median)
# Who answered for the copies on a warm start (all "registry" when the cache works).
probed_by=$(env -u EPHOST_PLUGIN_REGISTRY EPHOST_PLUGIN_PATH="$WORK/plugins" XDG_CACHE_HOME="$WORK/cache-cold-1" \
  "$EPHOST_BIN" plugins --json 2>/dev/null | python3 -c '
import collections, json, sys
text = sys.stdin.read()
report = json.loads(text[text.index("["):])
count = collections.Counter(r["probed_by"] for r in report if "libbench_plugin_" in r["path"])
print(", ".join(f"{n} by {who}" for who, n in sorted(count.items())))')

awk -v n="$COUNT" -v b="$base" -v c="$cold" -v w="$warm" -v pb="$probed_by" 'BEGIN {
  printf "plugins: %d copies, median of runs\n", n
  printf "base (empty folder):  %8.2f ms\n", b
  printf "cold (scanner):       %8.2f ms  -> %7.2f ms for %d plugins, %6.2f ms per plugin (goal <= 50)\n", c, c - b, n, (c - b) / n
  printf "warm (registry):      %8.2f ms  -> %7.2f ms for %d plugins, %6.3f ms per plugin (goal <= 5 in all)\n", w, w - b, n, (w - b) / n
  printf "warm start, copies probed: %s\n", pb
}'
