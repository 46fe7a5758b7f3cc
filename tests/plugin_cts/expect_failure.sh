#!/usr/bin/env bash
# The conformance kit must fail a broken plugin: exit status 1, and a FAIL line matching the expected
# one (an extended regular expression) in the section it breaks. The kit itself must survive (a crash
# of the plugin is a verdict, not the kit's death).
#   expect_failure.sh KIT PLUGIN SECTION EXPECTED_LINE_REGEX
set -uo pipefail
KIT=$1 PLUGIN=$2 SECTION=$3 EXPECTED=$4
out=$("$KIT" "$PLUGIN" --section "$SECTION" 2>&1)
status=$?
echo "$out" | grep -v '^SKIP' | tail -40
if [ "$status" -ne 1 ]; then
  echo "expect_failure: the kit exited $status, not 1 (a failed check)"
  exit 1
fi
if ! echo "$out" | grep -Eq "^$EXPECTED"; then
  echo "expect_failure: no line matching: $EXPECTED"
  exit 1
fi
echo "expect_failure: the kit failed $(basename "$PLUGIN") as expected"
