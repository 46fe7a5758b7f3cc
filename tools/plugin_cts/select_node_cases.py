#!/usr/bin/python3
"""Builds the node cases ephost-plugin-cts ships: the ONNX backend node cases generated from Debian's
python3-onnx (tests/conformance/generate_node_tests.py) and, with --opset-generator, the project's cases
for the operator versions of opsets 18 to 27 (tests/conformance/generate_opset_tests.py, with their numpy
references only: no npm, no ONNX Runtime at build time), less the large ones and those the built-in CPU
plugin is known not to pass (tests/conformance/expected_failures.txt and opset_expected_failures.txt:
their data or our CPU kernels are wrong, so a plugin could not be judged on them).

    select_node_cases.py --generator GEN --cache-dir DIR --out OUT --exclude LIST
                         [--opset-generator GEN --opset-exclude LIST] [--max-bytes N]

OUT is replaced whole, and OUT/.complete written last.
"""
import argparse
import os
import shutil
import subprocess
import sys


def case_bytes(path):
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path) for f in files)


def read_exclusions(path):
    excluded = set()
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            excluded.add(line.split()[0])
    return excluded


def generate(command):
    return subprocess.run([sys.executable] + command, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def copy_cases(generated, excluded, max_bytes, scratch):
    """Copies the cases of folder `generated` not excluded nor over max_bytes into scratch; returns how many."""
    kept = 0
    for name in sorted(os.listdir(generated)):
        source = os.path.join(generated, name)
        if name in excluded or not os.path.isfile(os.path.join(source, "model.onnx")):
            continue
        if case_bytes(source) > max_bytes:
            continue
        target = os.path.join(scratch, name)
        if os.path.exists(target):
            raise SystemExit(f"select_node_cases: two generators make a case named {name}")
        shutil.copytree(source, target)
        kept += 1
    return kept


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--exclude", required=True)
    parser.add_argument("--opset-generator", help="generate_opset_tests.py: adds the opset 18-27 cases")
    parser.add_argument("--opset-exclude", help="the opset cases' known failures (with --opset-generator)")
    parser.add_argument("--max-bytes", type=int, default=65536)
    args = parser.parse_args()
    if bool(args.opset_generator) != bool(args.opset_exclude):
        parser.error("--opset-generator and --opset-exclude go together")

    scratch = args.out + ".building"
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    node_cases = generate([args.generator, "--cache-dir", args.cache_dir])
    kept_node = copy_cases(node_cases, read_exclusions(args.exclude), args.max_bytes, scratch)
    kept_opset = 0
    if args.opset_generator:
        opset_cases = generate([args.opset_generator, "--cache-dir", args.cache_dir, "--no-ort"])
        kept_opset = copy_cases(opset_cases, read_exclusions(args.opset_exclude), args.max_bytes, scratch)
    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(scratch, args.out)
    with open(os.path.join(args.out, ".complete"), "w") as f:
        f.write(f"{kept_node} node cases, {kept_opset} opset 18-27 cases\n")
    print(f"select_node_cases: {kept_node} node cases and {kept_opset} opset 18-27 cases in {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
