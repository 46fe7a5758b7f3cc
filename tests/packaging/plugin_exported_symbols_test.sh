#!/usr/bin/env bash
# A plugin library exports the plugin ABI's entry point under the name ephost_plugin.h gives it
# (EPHOST_PLUGIN_ENTRY_POINT) and nothing else of its own: its strong defined dynamic symbols (nm -D
# --defined-only, types T, D, B and R) must be exactly that name. Weak and unique symbols (W, V, u, i)
# are left out: GCC emits the C++ standard library's template instantiations with default visibility
# whatever the plugin's own -fvisibility, and they are no part of the plugin ABI.
#   plugin_exported_symbols_test.sh HEADER PLUGIN_LIBRARY...
set -euo pipefail
HEADER=$1
shift
entry=$(sed -nE 's/^#define EPHOST_PLUGIN_ENTRY_POINT "([A-Za-z0-9_]+)"$/\1/p' "$HEADER")
[ -n "$entry" ] || { echo "no EPHOST_PLUGIN_ENTRY_POINT in $HEADER"; exit 1; }
echo "entry point named by $(basename "$HEADER"): $entry"
status=0
for plugin in "$@"; do
  exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u)
  if [ "$exported" = "$entry" ]; then
    echo "ok: $(basename "$plugin") exports $entry only"
  else
    echo "FAILED: $(basename "$plugin") exports, instead of $entry alone:"
    echo "${exported:-  (nothing)}" | sed 's/^/  /'
    status=1
  fi
done
exit $status
