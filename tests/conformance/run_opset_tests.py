#!/usr/bin/python3
"""Runs `ephost test` over the cases of generate_opset_tests.py (operator versions of opsets above 17)
and compares the cases that do not pass with opset_expected_failures.txt, as run_node_tests.py does for
onnx's own node cases; prints the cases, passes and cases whose expected outputs came from ONNX Runtime
per opset.

    run_opset_tests.py --ephost BUILD/tools/cli/ephost [--cache-dir DIR] [--update]
"""
import argparse
import os
import re
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_node_tests as node  # noqa: E402
from ort_oracle import ORACLE_FILE  # noqa: E402

DEFAULT_LIST = os.path.join(HERE, "opset_expected_failures.txt")
OPSET = re.compile(r"_opset(\d+)_")


def log(message):
    print(f"onnx_opset_conformance: {message}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ephost", required=True)
    parser.add_argument("--cache-dir", help="passed to generate_opset_tests.py as --default-cache-dir")
    parser.add_argument("--list", default=DEFAULT_LIST)
    parser.add_argument("--update", action="store_true", help="rewrite the list from this run")
    args = parser.parse_args()

    command = [sys.executable, os.path.join(HERE, "generate_opset_tests.py")]
    if args.cache_dir:
        command += ["--default-cache-dir", args.cache_dir]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"generate_opset_tests.py failed (exit status {done.returncode})")
    cases = done.stdout.strip()

    oracles = {}
    with open(os.path.join(cases, ORACLE_FILE)) as f:
        for line in f:
            name, kind = line.rstrip("\n").split("\t")[:2]
            oracles[name] = kind

    def per_opset(results):
        total, passed, by_ort = Counter(), Counter(), Counter()
        for name, (outcome, _) in results.items():
            m = OPSET.search(name)
            opset = int(m.group(1)) if m else 0
            total[opset] += 1
            passed[opset] += outcome == "PASS"
            by_ort[opset] += oracles.get(name) == "ort"
        for opset in sorted(total):
            log(f"opset {opset}: {passed[opset]} of {total[opset]} cases pass "
                f"({by_ort[opset]} with ONNX Runtime's outputs, the rest numpy's)")
        log(f"in all: {sum(passed.values())} of {sum(total.values())} pass; ONNX Runtime is the oracle of "
            f"{sum(by_ort.values())} (see {ORACLE_FILE} in {cases})")

    return node.judge_against_list(args.ephost, cases, args.list, args.update, os.path.abspath(__file__),
                                   per_opset, log)

if __name__ == "__main__":
    sys.exit(main())
