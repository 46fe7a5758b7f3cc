#!/usr/bin/python3
"""ephost against ONNX Runtime, side by side, on PP-OCR and on exporter-made model families.

    /usr/bin/python3 benchmarks/model_bench.py [--cases det,rec,...] [--modes 1t,2t,pair]
        [--runner PATH] [--ort DIR] [--models DIR] [--min-seconds S] [--rounds N] [--json-out FILE]

For every case and mode, ephost (benchmarks/model_runner.cpp, built as ephost_model_runner) and ONNX
Runtime (benchmarks/ort_runner.js over the npm package onnxruntime-node, CPU EP, graph optimisation
"all") run the same model on the same input files, one after the other (ephost first in odd rounds,
ORT first in even ones); with --rounds N the medians of the N rounds are reported.

Modes:
  1t    one process, 1 intra-op thread
  2t    one process, 2 intra-op threads
  pair  two workers side by side: a second copy of the same runtime runs the same model at 2 threads
        in a loop while the measured copy runs it at 2 threads
Columns: steady-state median latency per mode and the ephost/ORT ratio; at 1 thread also the ratio of
the process CPU time per run (steadier than latency while other jobs load the machine), and the first
run's CPU time over the steady run's (a single sample: its latency is at the mercy of the scheduler on
a loaded machine); first run (the first Run
after session creation, 1t) and its ratio to the steady median; peak RSS (VmHWM minus the RSS just
before session creation, 1t).

Cases: det, rec, cls (PP-OCR, tests/models/fetch_models.sh), and vad, bert, vit, effnet, mnv3,
resnet50, gru (made by benchmarks/models/make_models.py with Debian's python3-torch and
python3-torchvision, random weights). Needs: node and npm (onnxruntime-node is installed into
~/.cache/ephost/ort on first use), Debian's python3-numpy, python3-torch, python3-torchvision.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_VERSION = '1.30.0'
OCR = {  # case -> (file, shape) as in tests/data/ocr_reference.json
    'det': ('ch_PP-OCRv4_det_infer.onnx', (1, 3, 640, 640)),
    'rec': ('ch_PP-OCRv4_rec_infer.onnx', (1, 3, 48, 320)),
    'cls': ('ch_ppocr_mobile_v2.0_cls_infer.onnx', (1, 3, 48, 192)),
}
FAMILIES = ['vad', 'bert', 'vit', 'effnet', 'mnv3', 'resnet50', 'gru']
ALL_CASES = list(OCR) + FAMILIES


def log(msg):
    print(f'model_bench: {msg}', file=sys.stderr, flush=True)


def ensure_ort(folder):
    if os.path.exists(os.path.join(folder, 'node_modules', 'onnxruntime-node', 'package.json')):
        return
    os.makedirs(folder, exist_ok=True)
    log(f'installing onnxruntime-node@{ORT_VERSION} into {folder}')
    subprocess.run(['npm', 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error',
                    f'onnxruntime-node@{ORT_VERSION}'], cwd=folder, check=True, stdout=sys.stderr)


def ocr_case(case, cache):
    """PP-OCR model path and an inputs.json with the reference's mod7919 input."""
    import numpy as np
    models = subprocess.run([os.path.join(ROOT, 'tests', 'models', 'fetch_models.sh')], check=True,
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    fname, shape = OCR[case]
    folder = os.path.join(cache, case)
    spec = os.path.join(folder, 'inputs.json')
    if not os.path.exists(spec):
        os.makedirs(folder, exist_ok=True)
        i = np.arange(int(np.prod(shape)), dtype=np.int64)
        x = (((i * 7919) % 1000).astype(np.float32) / np.float32(1000.0) - np.float32(0.5)).astype(np.float32)
        x.reshape(shape).tofile(os.path.join(folder, 'x.bin'))
        with open(spec, 'w') as f:
            json.dump([{'name': 'x', 'dtype': 'float32', 'shape': list(shape), 'file': 'x.bin'}], f)
    return os.path.join(models, fname), spec


def family_case(case, cache):
    folder = os.path.join(cache, case)
    spec = os.path.join(folder, 'inputs.json')
    if not os.path.exists(spec):
        subprocess.run(['/usr/bin/python3', os.path.join(ROOT, 'benchmarks', 'models', 'make_models.py'), cache,
                        '--only', case], check=True, stdout=sys.stderr, stderr=sys.stderr)
    return os.path.join(folder, 'model.onnx'), spec


class Runner:
    def __init__(self, args):
        self.args = args

    def command(self, runtime, model, spec, threads, background=False):
        common = ['--model', model, '--inputs', spec, '--threads', str(threads), '--warmup', str(self.args.warmup),
                  '--min-runs', str(self.args.min_runs), '--min-seconds', str(self.args.min_seconds)]
        if background:
            common.append('--background')
        if runtime in ('ephost', 'base'):
            extra = []
            for kv in self.args.provider_option:
                extra += ['--provider-option', kv]
            return [self.args.runner if runtime == 'ephost' else self.args.baseline_runner] + common + extra
        return ['node', os.path.join(ROOT, 'benchmarks', 'ort_runner.js'), '--ort', self.args.ort] + common

    def measure(self, runtime, model, spec, mode):
        threads = 1 if mode == '1t' else 2
        bg = None
        if mode == 'pair':
            bg = subprocess.Popen(self.command(runtime, model, spec, threads, background=True), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
            line = bg.stdout.readline()
            if '"ready"' not in line:
                bg.kill()
                raise RuntimeError(f'{runtime} background worker did not start')
        try:
            out = subprocess.run(self.command(runtime, model, spec, threads), check=True, stdout=subprocess.PIPE,
                                 text=True, timeout=self.args.timeout).stdout
        finally:
            if bg is not None:
                bg.stdin.close()
                try:
                    bg.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    bg.kill()
        return json.loads(out.strip().splitlines()[-1])


def fmt_ms(v):
    if v is None:
        return '-'
    return f'{v:.3f}' if v < 1 else (f'{v:.2f}' if v < 100 else f'{v:.0f}')


def ratio(a, b):
    return f'{a / b:.2f}' if a is not None and b else '-'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cases', default=','.join(ALL_CASES))
    ap.add_argument('--modes', default='1t,2t,pair')
    ap.add_argument('--runner', default=os.environ.get('EPHOST_MODEL_RUNNER',
                                                       os.path.join(ROOT, 'build', 'benchmarks', 'ephost_model_runner')))
    ap.add_argument('--ort', default=os.path.expanduser('~/.cache/ephost/ort'))
    ap.add_argument('--models', default=os.path.expanduser('~/.cache/ephost/bench-models'))
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--min-runs', type=int, default=5)
    ap.add_argument('--min-seconds', type=float, default=3.0)
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--timeout', type=float, default=900)
    ap.add_argument('--provider-option', action='append', default=[], help='KEY=VALUE for ephost\'s cpu provider')
    ap.add_argument('--runtimes', default='ephost,ort')
    ap.add_argument('--baseline-runner', default='',
                    help='a second ephost_model_runner (an older build) measured in the same rounds: adds "before" '
                         'columns and the after/before ratio')
    ap.add_argument('--json-out', default='')
    args = ap.parse_args()
    cases = [c for c in args.cases.split(',') if c]
    modes = [m for m in args.modes.split(',') if m]
    runtimes = [r for r in args.runtimes.split(',') if r]
    if args.baseline_runner and 'base' not in runtimes:
        runtimes.append('base')
    for c in cases:
        if c not in ALL_CASES:
            sys.exit(f'model_bench: unknown case {c} (one of {", ".join(ALL_CASES)})')
    if 'ephost' in runtimes and not os.access(args.runner, os.X_OK):
        sys.exit(f'model_bench: no runner at {args.runner} (build the benchmarks, or give --runner)')
    if 'ort' in runtimes:
        ensure_ort(args.ort)
    runner = Runner(args)
    load_start = os.getloadavg()
    results = {}
    for case in cases:
        model, spec = ocr_case(case, args.models) if case in OCR else family_case(case, args.models)
        results[case] = {}
        for mode in modes:
            per = {r: [] for r in runtimes}
            for rnd in range(args.rounds):
                order = runtimes if rnd % 2 == 0 else list(reversed(runtimes))
                for rt in order:
                    try:
                        per[rt].append(runner.measure(rt, model, spec, mode))
                    except Exception as e:  # a failing runtime leaves its cells empty
                        log(f'{case} {mode} {rt}: {e}')
            agg = {}
            for rt, rs in per.items():
                if rs:
                    agg[rt] = {k: statistics.median(r[k] for r in rs if k in r)
                               for k in ('median_ms', 'cpu_ms', 'first_run_ms', 'first_run_cpu_ms', 'peak_rss_mb',
                                         'create_ms')
                               if any(k in r for r in rs)}
                    agg[rt]['runs'] = [r['runs'] for r in rs]
            results[case][mode] = agg
            cells = '  '.join(f'{rt} {fmt_ms(a["median_ms"])} ms' for rt, a in agg.items())
            log(f'{case} {mode}: {cells}')
    load_end = os.getloadavg()

    def get(case, mode, rt, key):
        return results[case].get(mode, {}).get(rt, {}).get(key)

    base = 'base' in runtimes
    head = ['model']
    for m in modes:
        head += [f'{m} ephost', f'{m} ORT', f'{m} ratio']
        if base:
            head += [f'{m} before', f'{m} after/before']
    if '1t' in modes:
        head += ['1t CPU-time ratio', 'first ephost (x steady)', 'first ORT (x steady)', 'first CPU ephost/ORT (x steady CPU)',
                 'RSS ephost MB', 'RSS ORT MB', 'RSS ratio']
        if base:
            head += ['first before (x steady)', 'RSS before MB']
    rows = []
    for case in cases:
        row = [case]
        for m in modes:
            e, o = get(case, m, 'ephost', 'median_ms'), get(case, m, 'ort', 'median_ms')
            row += [fmt_ms(e), fmt_ms(o), ratio(e, o)]
            if base:
                b = get(case, m, 'base', 'median_ms')
                row += [fmt_ms(b), ratio(e, b)]
        if '1t' in modes:
            row.append(ratio(get(case, '1t', 'ephost', 'cpu_ms'), get(case, '1t', 'ort', 'cpu_ms')))
            for rt in ('ephost', 'ort'):
                f, s = get(case, '1t', rt, 'first_run_ms'), get(case, '1t', rt, 'median_ms')
                row.append(f'{fmt_ms(f)} ({ratio(f, s)})' if f is not None else '-')
            cells = []
            for rt in ('ephost', 'ort'):
                f, s = get(case, '1t', rt, 'first_run_cpu_ms'), get(case, '1t', rt, 'cpu_ms')
                cells.append(ratio(f, s))
            row.append(' / '.join(cells))
            e, o = get(case, '1t', 'ephost', 'peak_rss_mb'), get(case, '1t', 'ort', 'peak_rss_mb')
            row += [f'{e:.0f}' if e is not None else '-', f'{o:.0f}' if o is not None else '-', ratio(e, o)]
            if base:
                f, st = get(case, '1t', 'base', 'first_run_ms'), get(case, '1t', 'base', 'median_ms')
                b = get(case, '1t', 'base', 'peak_rss_mb')
                row += [f'{fmt_ms(f)} ({ratio(f, st)})' if f is not None else '-', f'{b:.0f}' if b is not None else '-']
        rows.append(row)
    print(f'ephost vs ONNX Runtime {ORT_VERSION} (onnxruntime-node, CPU EP, graph optimisation all); latency = median ms; '
          f'load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end; rounds {args.rounds}')
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for r in rows:
        print('| ' + ' | '.join(r) + ' |')
    if args.json_out:
        with open(args.json_out, 'w') as f:
            json.dump({'load_start': load_start, 'load_end': load_end, 'results': results}, f, indent=1)


if __name__ == '__main__':
    main()
