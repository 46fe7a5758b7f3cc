#!/usr/bin/env bash
# Fetches ONNX Runtime for Node (npm package onnxruntime-node, with its prebuilt CPU binaries) into
# the test-data cache and prints the folder to hand to require.resolve's `paths` (nothing else goes to
# stdout). ONNX Runtime is the oracle of the opset cases (generate_opset_tests.py); it is not a
# dependency of ephost.
#
#   tests/conformance/fetch_ort.sh [CACHE_DIR]
#
# CACHE_DIR defaults to ${EPHOST_TEST_CACHE:-$HOME/.cache/ephost}. Idempotent: when the package is
# already installed there, nothing is fetched.
#
# Exit status: 0 ok (path printed), 3 the npm registry cannot be reached or npm/node is missing (the
# cases then keep their numpy references), 1 any other failure (e.g. integrity mismatch).
set -euo pipefail

PKG="onnxruntime-node"
VERSION="1.30.0"
# sha1 of the registry tarball (npm view onnxruntime-node@1.30.0 dist.shasum).
SHA1="8d4c4a75f31088ec846f08cccb62f3272a7bf44a"

CACHE_DIR="${1:-${EPHOST_TEST_CACHE:-$HOME/.cache/ephost}}"
DEST="$CACHE_DIR/ort/$PKG-$VERSION"

msg() { echo "fetch_ort: $*" >&2; }

installed() { [[ -f "$DEST/.complete" ]] && compgen -G "$DEST/node_modules/$PKG/bin/napi-v*/linux/x64/onnxruntime_binding.node" >/dev/null; }

if installed; then
  echo "$DEST"
  exit 0
fi

for tool in npm node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    msg "$tool not found: cannot fetch $PKG@$VERSION (the opset cases keep their numpy references)"
    exit 3
  fi
done

mkdir -p "$CACHE_DIR/ort"
WORK="$(mktemp -d "$CACHE_DIR/ort/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

msg "fetching $PKG@$VERSION from the npm registry into $CACHE_DIR/ort"
# npm's own cache goes inside the scratch folder: the user's ~/.npm is neither read nor written.
# The prebuilt binaries are in the tarball (bin/napi-v*/linux/x64/), so the install script (which
# would download GPU libraries) is not run.
if ! (cd "$WORK" && timeout "${EPHOST_FETCH_TIMEOUT:-600}" npm pack "$PKG@$VERSION" --cache "$WORK/npm-cache" \
        --fetch-retries=1 --fetch-timeout=60000 --loglevel=error >npm.out 2>npm.err); then
  msg "cannot reach the npm registry (npm pack $PKG@$VERSION failed):"
  sed 's/^/  /' "$WORK/npm.err" | tail -n 5 >&2 || true
  exit 3
fi
TARBALL="$WORK/$PKG-$VERSION.tgz"
[[ -f "$TARBALL" ]] || { msg "npm pack did not produce $(basename "$TARBALL")"; exit 1; }
GOT="$(sha1sum "$TARBALL" | cut -d' ' -f1)"
if [[ "$GOT" != "$SHA1" ]]; then
  msg "checksum mismatch for $(basename "$TARBALL"): got $GOT, expected $SHA1"
  exit 1
fi
mkdir -p "$WORK/ready"
if ! (cd "$WORK/ready" && timeout "${EPHOST_FETCH_TIMEOUT:-600}" npm install "$TARBALL" --ignore-scripts --no-audit \
        --no-fund --no-save --cache "$WORK/npm-cache" --fetch-retries=1 --fetch-timeout=60000 --loglevel=error \
        >"$WORK/install.out" 2>"$WORK/install.err"); then
  msg "cannot install $PKG@$VERSION's dependencies from the npm registry:"
  sed 's/^/  /' "$WORK/install.err" | tail -n 5 >&2 || true
  exit 3
fi
rm -rf "$WORK/npm-cache"
touch "$WORK/ready/.complete"
# Publish atomically: another process may be fetching into the same cache at the same time.
[[ -e "$DEST" ]] && ! installed && rm -rf "$DEST"
if ! mv -T "$WORK/ready" "$DEST" 2>/dev/null && ! installed; then
  msg "could not install into $DEST"
  exit 1
fi
echo "$DEST"
