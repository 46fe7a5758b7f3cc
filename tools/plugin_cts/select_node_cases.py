#!/usr/bin/python3
"""Builds the node cases ephost-plugin-cts ships: the ONNX backend node cases generated from Debian's
python3-onnx (tests/conformance/generate_node_tests.py), less the large ones and those the built-in
CPU plugin is known not to pass (tests/conformance/expected_failures.txt: their data or our CPU
kernels are wrong, so a plugin could not be judged on them).

    select_node_cases.py --generator GEN --cache-dir DIR --out OUT --exclude LIST [--max-bytes N]

OUT is replaced whole, and OUT/.complete written last.
"""
import argparse
import os
import shutil
import subprocess
import sys


def case_bytes(path):
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--exclude", required=True)
    parser.add_argument("--max-bytes", type=int, default=65536)
    args = parser.parse_args()

    generated = subprocess.run([sys.executable, args.generator, "--cache-dir", args.cache_dir],
                               check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    excluded = set()
    for line in open(args.exclude):
        if line.strip() and not line.startswith("#"):
            excluded.add(line.split()[0])
    scratch = args.out + ".building"
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    kept = 0
    for name in sorted(os.listdir(generated)):
        source = os.path.join(generated, name)
        if name in excluded or not os.path.isfile(os.path.join(source, "model.onnx")):
            continue
        if case_bytes(source) > args.max_bytes:
            continue
        shutil.copytree(source, os.path.join(scratch, name))
        kept += 1
    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(scratch, args.out)
    with open(os.path.join(args.out, ".complete"), "w") as f:
        f.write(f"{kept} node cases\n")
    print(f"select_node_cases: {kept} node cases in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
