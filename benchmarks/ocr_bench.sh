#!/usr/bin/env bash
# Benchmarks ephost on the PaddleOCR models (tests/models/README.md) with `ephost bench` and prints a
# table next to ONNX Runtime's reference timings from tests/data/ocr_reference.json (measured on the
# development machine: compare on the same kind of machine only).
#
#   benchmarks/ocr_bench.sh [--ephost PATH] [--models DIR] [--threads "1 2"] [--repeat N] [--warmup N]
#                           [--providers LIST] [--cases "det cls rec"] [--json-out FILE]
#
# --ephost defaults to $EPHOST, then build/tools/cli/ephost, then `ephost` on PATH. --models defaults to
# what tests/models/fetch_models.sh prints (fetched once into its cache). Exit status 3 when the models
# cannot be fetched (no registry), like fetch_models.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REFERENCE="$ROOT/tests/data/ocr_reference.json"
EPHOST_BIN="${EPHOST:-}"
MODELS_DIR=""
THREADS="1 2"
REPEAT=10
WARMUP=2
PROVIDERS=""
CASES="det cls rec"
JSON_OUT=""

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ephost) EPHOST_BIN="$2"; shift 2 ;;
    --models) MODELS_DIR="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --providers) PROVIDERS="$2"; shift 2 ;;
    --cases) CASES="$2"; shift 2 ;;
    --json-out) JSON_OUT="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "ocr_bench: unknown argument $1" >&2; usage ;;
  esac
done

if [[ -z "$EPHOST_BIN" ]]; then
  for candidate in "$ROOT/build/tools/cli/ephost" "$(command -v ephost || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then EPHOST_BIN="$candidate"; break; fi
  done
fi
if [[ -z "$EPHOST_BIN" || ! -x "$EPHOST_BIN" ]]; then
  echo "ocr_bench: no ephost binary (build it, or give --ephost PATH / EPHOST=PATH)" >&2
  exit 1
fi

if [[ -z "$MODELS_DIR" ]]; then
  set +e
  MODELS_DIR="$("$ROOT/tests/models/fetch_models.sh")"
  rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then exit "$rc"; fi
fi

# case -> model file and input shape (the reference's).
model_of() {
  case "$1" in
    det) echo "ch_PP-OCRv4_det_infer.onnx" ;;
    cls) echo "ch_ppocr_mobile_v2.0_cls_infer.onnx" ;;
    rec) echo "ch_PP-OCRv4_rec_infer.onnx" ;;
    *) echo "ocr_bench: unknown case $1 (det, cls, rec)" >&2; exit 2 ;;
  esac
}
shape_of() {
  case "$1" in
    det) echo "1,3,640,640" ;;
    cls) echo "1,3,48,192" ;;
    rec) echo "1,3,48,320" ;;
  esac
}

# One number from ephost's one-line JSON.
json_num() { sed -n "s/.*\"$2\":\([-0-9.eE+]*\).*/\1/p" <<<"$1"; }

# ORT's median for a case and thread count from the reference file ("-" when unknown).
ort_median() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1; then
      "$py" - "$REFERENCE" "$1" "$2" <<'EOF' 2>/dev/null && return
import json, sys
ref = json.load(open(sys.argv[1]))
print(ref["models"][sys.argv[2]]["timing_ms"]["threads_" + sys.argv[3]]["run"]["median"])
EOF
    fi
  done
  if command -v node >/dev/null 2>&1; then
    node -e 'const r=require(process.argv[1]);console.log(r.models[process.argv[2]].timing_ms["threads_"+process.argv[3]].run.median)' \
      "$REFERENCE" "$1" "$2" 2>/dev/null && return
  fi
  echo "-"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "") printf "%.2fx", a / b; else print "-" }'; }

ORT_VERSION="$(sed -n 's/.*"version": "\([^"]*\)".*/\1/p' "$REFERENCE" | head -n1)"
echo "ephost: $EPHOST_BIN ($("$EPHOST_BIN" --version 2>/dev/null || echo '?'))"
echo "models: $MODELS_DIR"
echo "reference: ONNX Runtime ${ORT_VERSION:-?} (onnxruntime-node), $REFERENCE"
echo

ROWS=()
JSON_LINES=()
status=0
for c in $CASES; do
  model="$MODELS_DIR/$(model_of "$c")"
  shape="$(shape_of "$c")"
  for t in $THREADS; do
    args=(bench "$model" --shape "x=$shape" --threads "$t" --repeat "$REPEAT" --warmup "$WARMUP" --json)
    [[ -n "$PROVIDERS" ]] && args+=(--providers "$PROVIDERS")
    if ! out="$("$EPHOST_BIN" "${args[@]}" 2>&1 | tail -n 1)" || [[ "$out" != \{* ]]; then
      ROWS+=("$c|$shape|$t|error: ${out:0:80}|||||")
      status=1
      continue
    fi
    JSON_LINES+=("{\"case\":\"$c\",\"result\":$out}")
    med="$(json_num "$out" run_ms_median)"
    ort="$(ort_median "$c" "$t")"
    ROWS+=("$c|$shape|$t|$(json_num "$out" session_create_ms)|$med|$(json_num "$out" run_ms_p90)|$(json_num "$out" run_ms_min)|$ort|$(ratio "$med" "$ort")")
  done
done

{
  echo "case|shape|threads|create ms|median ms|p90 ms|min ms|ORT median ms|ephost/ORT"
  echo "----|-----|-------|---------|---------|------|------|-------------|----------"
  printf '%s\n' "${ROWS[@]}"
} | column -t -s '|'

if [[ -n "$JSON_OUT" ]]; then
  { echo "["; (IFS=$',\n'; echo "${JSON_LINES[*]}"); echo "]"; } >"$JSON_OUT"
  echo "wrote $JSON_OUT"
fi
exit "$status"
