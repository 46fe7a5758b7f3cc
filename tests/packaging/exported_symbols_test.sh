#!/usr/bin/env bash
# libephost exports the application C API and nothing else: the defined dynamic symbols (nm -D
# --defined-only) must be exactly the functions ephost_c_api.h declares with EPHOST_EXPORT, each
# versioned EPHOST_<soversion> (host/app_api/libephost.map), plus that version node itself.
#   exported_symbols_test.sh LIBRARY HEADER SOVERSION
set -euo pipefail
LIB=$1
HEADER=$2
NODE=EPHOST_$3
declared=$(grep -oE 'EPHOST_EXPORT[^(]*\b(Ephost[A-Za-z0-9_]*)\(' "$HEADER" | grep -oE 'Ephost[A-Za-z0-9_]*\($' | tr -d '(' | sort -u)
[ -n "$declared" ] || { echo "no EPHOST_EXPORT function found in $HEADER"; exit 1; }
defined=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort -u)
echo "declared in $(basename "$HEADER"): $(echo "$declared" | wc -l) functions"
echo "exported by $(basename "$LIB"): $(echo "$defined" | wc -l) symbols"
echo "$defined" | sed 's/^/  /'
expected=$( (echo "$declared" | sed "s/\$/@@$NODE/"; echo "$NODE") | sort -u)
if [ "$defined" != "$expected" ]; then
  echo "mismatch (< expected, > exported):"
  diff <(echo "$expected") <(echo "$defined") || true
  exit 1
fi
echo "exported symbols match the header"
