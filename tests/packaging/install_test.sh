#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds a third-party plugin and app against the installed
# CMake package (find_package(ephost): ephost::sdk, ephost::ephost), and checks that the installed
# `ephost` discovers the plugin from its default plugin directory.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cmake -S "$SRC/tests/packaging/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/consumer" >/dev/null
LD_LIBRARY_PATH="$WORK/prefix/lib" "$WORK/consumer/app"
cp "$WORK/consumer/libmyep.so" "$WORK/prefix/lib/ephost/plugins/"
out=$(env -u EPHOST_PLUGIN_PATH "$WORK/prefix/bin/ephost" plugins --json)
echo "$out" | /usr/bin/python3 -c '
import json, sys
report = json.load(sys.stdin)
mine = [p for p in report if p["name"] == "myep"]
sys.exit(0 if mine and mine[0]["loaded"] else "installed ephost did not load myep: " + json.dumps(report))'

echo "install test: package consumed, plugin discovered from the default directory"
