#!/usr/bin/python3
"""Session-creation timings (issue 24): for each model, runs ephost_model_runner ROUNDS times (one run
of the model each, no warm-up) and prints the median creation wall time and process CPU time, with the
IR builds and whole-model shape inferences the session report says creation did.

    /usr/bin/python3 benchmarks/creation_bench.py --runner build/benchmarks/ephost_model_runner \
        [--rounds 7] NAME=FOLDER ...

FOLDER holds model.onnx and inputs.json (benchmarks/models/make_models.py, make_function_model.py), or
inputs.json and a model given as NAME=FOLDER:MODEL. On a loaded machine read the CPU-time column.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def one_round(runner, model, inputs):
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        out = subprocess.run([runner, "--model", model, "--inputs", inputs, "--warmup", "0", "--min-runs", "1",
                              "--max-runs", "1", "--min-seconds", "0", "--partition-json", report.name],
                             check=True, capture_output=True, text=True).stdout
        line = json.loads(out.strip().splitlines()[-1])
        creation = json.load(open(report.name)).get("creation", {})
    return line["create_ms"], line["create_cpu_ms"], creation


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    print(f"{'model':<10} {'create ms':>10} {'create CPU ms':>14} {'IR builds':>10} {'shape inferences':>17}")
    for case in args.cases:
        name, where = case.split("=", 1)
        folder, _, model = where.partition(":")
        model = model or os.path.join(folder, "model.onnx")
        rounds = [one_round(args.runner, model, os.path.join(folder, "inputs.json")) for _ in range(args.rounds)]
        wall = statistics.median(r[0] for r in rounds)
        cpu = statistics.median(r[1] for r in rounds)
        creation = rounds[0][2]
        print(f"{name:<10} {wall:>10.1f} {cpu:>14.1f} {str(creation.get('ir_builds', '?')):>10} "
              f"{str(creation.get('shape_inferences', '?')):>17}", flush=True)


if __name__ == "__main__":
    main()
