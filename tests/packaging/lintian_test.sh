#!/usr/bin/env bash
# lintian on every .deb: 0 errors. Warnings are printed; each one that remains is justified in
# packaging/README.md ("lintian"), and a warning not listed there fails the test too, so a new one
# gets looked at instead of scrolling by.
#   lintian_test.sh PACKAGE_DIR SOURCE_DIR
set -euo pipefail
PKG=$1
SRC=$2
if ! command -v lintian >/dev/null; then
  echo "lintian is not installed (scripts/install_deps.sh installs it)"
  exit 77  # CTest: skipped
fi
out=$(lintian --no-tag-display-limit --display-level ">=warning" "$PKG"/*.deb 2>&1 || true)
echo "$out"
errors=$(echo "$out" | grep -c '^E: ' || true)
warnings=$(echo "$out" | grep -c '^W: ' || true)
echo "lintian: $errors errors, $warnings warnings"
[ "$errors" -eq 0 ] || { echo "lintian reports errors"; exit 1; }
# Accepted warnings are listed in packaging/README.md as "- `tag`" lines under "## lintian".
accepted=$(sed -n '/^## lintian/,/^## /p' "$SRC/packaging/README.md" | grep -oE '^- `[a-z0-9-]+`' | sed -E 's/^- `(.*)`$/\1/')
unexplained=0
while read -r tag; do
  [ -z "$tag" ] && continue
  if ! grep -qx "$tag" <<<"$accepted"; then
    echo "warning $tag is not justified in packaging/README.md"
    unexplained=1
  fi
done < <(echo "$out" | grep '^W: ' | awk '{print $3}' | sort -u)
exit $unexplained
