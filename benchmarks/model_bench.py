#!/usr/bin/python3
"""ephost against ONNX Runtime, side by side, in f32 and int8 (QDQ), on PP-OCR and on exporter-made
model families.

    /usr/bin/python3 benchmarks/model_bench.py [--cases det,rec,...] [--precisions f32,u8s7,s8s8]
        [--int8-cases bert,vit,...] [--modes 1t,2t,pair,pair1t] [--rounds N] [--isa avx2|avx512|scalar]
        [--runner PATH] [--baseline-runner PATH] [--ort DIR] [--models DIR] [--no-accuracy]
        [--ghz F] [--fma-per-cycle N] [--json-out FILE] [--free-dim NAME=VALUE ...]

For every case, precision and mode, ephost (benchmarks/model_runner.cpp, built as ephost_model_runner)
and ONNX Runtime (benchmarks/ort_runner.js over the npm package onnxruntime-node, CPU EP, graph
optimisation "all") run the same model on the same input files, one after the other (ephost first in
odd rounds, ORT first in even ones); with --rounds N the medians of the N rounds are reported.

Precisions: f32 (the model as exported), and int8 QDQ models made by models/qdq_quantize.py at
benchmark time (calibrated on the case's input sets): u8s7 (uint8 asymmetric activations, int8
per-channel weights in 7 bits) and s8s8 (int8 symmetric activations, full-range int8 weights). int8
runs on the --int8-cases (default: the five of issue 27).

Modes:
  1t    one process, 1 intra-op thread
  2t    one process, 2 intra-op threads
  pair  two workers side by side: a second copy of the same runtime runs the same model at 2 threads
        in a loop while the measured copy runs it at 2 threads
  pair1t  the same with both workers at 1 thread (issue 27's two-worker goal: a server running one
        single-threaded session per core)

Tables:
  speed       median latency per mode and ephost/ORT; the 1t CPU-time ratio (steadier than latency
              while other jobs load the machine); the first run after session creation and its ratio
              to the steady run (latency, and CPU time); session creation (latency, CPU time of the
              process, and the page faults it took: first touches of new memory); peak RSS (VmHWM
              minus the RSS just before session creation, 1t)
  arithmetic  GMACs per run (models/flops.py) and the share of the machine's peak (cpu_peak.py, with
              the clock and FMA rates ephost_cpu_clock measures where it is built beside the runner:
              f32 FMA peak for f32, u8*s8 peak for int8) each runtime reaches, from 1t and 2t latency
              and from 1t CPU time
  int8 vs f32 the 1t latencies side by side, as issue 27's table
  accuracy    per int8 model and output: the largest deviation, in quantization steps of the output, of
              ephost's output and of ORT's from the exact QDQ semantics (ORT with graph optimisation
              disabled: Q and DQ evaluated one by one in float) and from each other, and how closely the
              int8 output follows the f32 model's (correlation)

Cases: det, rec, cls (PP-OCR, tests/models/fetch_models.sh), and vad, bert, vit, effnet, mnv3,
resnet50, gru (made by benchmarks/models/make_models.py with Debian's python3-torch and
python3-torchvision, random weights). Needs: node and npm (onnxruntime-node is installed into
~/.cache/ephost/ort on first use), Debian's python3-numpy, python3-onnx, python3-torch,
python3-torchvision.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks', 'models'))

import cpu_peak  # noqa: E402

ORT_VERSION = '1.30.0'
OCR = {  # case -> (file, shape) as in tests/data/ocr_reference.json
    'det': ('ch_PP-OCRv4_det_infer.onnx', (1, 3, 640, 640)),
    'rec': ('ch_PP-OCRv4_rec_infer.onnx', (1, 3, 48, 320)),
    'cls': ('ch_ppocr_mobile_v2.0_cls_infer.onnx', (1, 3, 48, 192)),
}
FAMILIES = ['vad', 'bert', 'vit', 'effnet', 'mnv3', 'resnet50', 'gru']
ALL_CASES = list(OCR) + FAMILIES
INT8_CASES = ['resnet50', 'effnet', 'mnv3', 'bert', 'vit']  # issue 27's int8 goal
SCHEMES = ['u8s7', 's8s8']
PYTHON = '/usr/bin/python3'


def log(msg):
    print(f'model_bench: {msg}', file=sys.stderr, flush=True)


def ensure_ort(folder):
    if os.path.exists(os.path.join(folder, 'node_modules', 'onnxruntime-node', 'package.json')):
        return
    os.makedirs(folder, exist_ok=True)
    log(f'installing onnxruntime-node@{ORT_VERSION} into {folder}')
    subprocess.run(['npm', 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error',
                    f'onnxruntime-node@{ORT_VERSION}'], cwd=folder, check=True, stdout=sys.stderr)


def write_image_inputs(folder, shape, values):
    import numpy as np
    os.makedirs(folder, exist_ok=True)
    np.asarray(values, dtype=np.float32).reshape(shape).tofile(os.path.join(folder, 'x.bin'))
    with open(os.path.join(folder, 'inputs.json'), 'w') as f:
        json.dump([{'name': 'x', 'dtype': 'float32', 'shape': list(shape), 'file': 'x.bin'}], f)


def ocr_case(case, cache):
    """PP-OCR model path and an inputs.json with the reference's mod7919 input (and four calibration
    sets of uniform noise in the same range, for the quantizer)."""
    import numpy as np
    models = subprocess.run([os.path.join(ROOT, 'tests', 'models', 'fetch_models.sh')], check=True,
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    fname, shape = OCR[case]
    folder = os.path.join(cache, case)
    spec = os.path.join(folder, 'inputs.json')
    if not os.path.exists(spec):
        i = np.arange(int(np.prod(shape)), dtype=np.int64)
        write_image_inputs(folder, shape, ((i * 7919) % 1000).astype(np.float32) / np.float32(1000.0) - np.float32(0.5))
    for k in range(4):
        sub = os.path.join(folder, 'calib', str(k))
        if not os.path.exists(os.path.join(sub, 'inputs.json')):
            write_image_inputs(sub, shape, np.random.RandomState(100 + k).uniform(-0.5, 0.5, int(np.prod(shape))))
    return os.path.join(models, fname), spec


def family_case(case, cache):
    folder = os.path.join(cache, case)
    spec = os.path.join(folder, 'inputs.json')
    if not os.path.exists(spec):
        subprocess.run([PYTHON, os.path.join(ROOT, 'benchmarks', 'models', 'make_models.py'), cache,
                        '--only', case], check=True, stdout=sys.stderr, stderr=sys.stderr)
    return os.path.join(folder, 'model.onnx'), spec


def calibration_specs(spec):
    folder = os.path.join(os.path.dirname(spec), 'calib')
    extra = sorted(os.path.join(folder, d, 'inputs.json') for d in os.listdir(folder)) if os.path.isdir(folder) else []
    return [spec] + [e for e in extra if os.path.exists(e)]


def quantized_model(case, model, spec, scheme, args):
    """cache/<case>/model.qdq_<scheme>.onnx, made by qdq_quantize.py when missing or older than the model."""
    out = os.path.join(os.path.dirname(spec), f'model.qdq_{scheme}.onnx')
    if args.requantize or not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(model):
        calib = calibration_specs(spec)
        log(f'quantizing {case} ({scheme}, calibrated on {len(calib)} input sets)')
        cmd = [PYTHON, os.path.join(ROOT, 'benchmarks', 'models', 'qdq_quantize.py'), model, out, '--scheme', scheme,
               '--ort', args.ort]
        for c in calib:
            cmd += ['--calib', c]
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    # A flat name beside the folders too (<models>/resnet50.qdq_u8s7.onnx), for whoever looks for it.
    flat = os.path.join(args.models, f'{case}.qdq_{scheme}.onnx')
    if not os.path.lexists(flat):
        os.symlink(os.path.relpath(out, args.models), flat)
    return out


class Runner:
    def __init__(self, args):
        self.args = args

    def env(self, runtime):
        env = dict(os.environ)
        if runtime in ('ephost', 'base') and self.args.isa:
            env['EPHOST_CPU_ISA'] = self.args.isa
        return env

    def command(self, runtime, model, spec, threads, background=False):
        common = ['--model', model, '--inputs', spec, '--threads', str(threads), '--warmup', str(self.args.warmup),
                  '--min-runs', str(self.args.min_runs), '--min-seconds', str(self.args.min_seconds)]
        if background:
            common.append('--background')
        for kv in self.args.free_dim:
            common += ['--free-dim', kv]
        if runtime in ('ephost', 'base'):
            extra = []
            for kv in self.args.provider_option:
                extra += ['--provider-option', kv]
            if runtime == 'ephost' and self.args.ephost_precision != 'f32':
                extra += ['--provider-option', f'precision={self.args.ephost_precision}']
            return [self.args.runner if runtime == 'ephost' else self.args.baseline_runner] + common + extra
        return ['node', os.path.join(ROOT, 'benchmarks', 'ort_runner.js'), '--ort', self.args.ort] + common

    def measure(self, runtime, model, spec, mode):
        threads = 1 if mode in ('1t', 'pair1t') else 2
        bg = None
        if mode in ('pair', 'pair1t'):
            bg = subprocess.Popen(self.command(runtime, model, spec, threads, background=True), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=self.env(runtime))
            line = bg.stdout.readline()
            if '"ready"' not in line:
                bg.kill()
                raise RuntimeError(f'{runtime} background worker did not start')
        try:
            out = subprocess.run(self.command(runtime, model, spec, threads), check=True, stdout=subprocess.PIPE,
                                 text=True, timeout=self.args.timeout, env=self.env(runtime)).stdout
        finally:
            if bg is not None:
                bg.stdin.close()
                try:
                    bg.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    bg.kill()
        return json.loads(out.strip().splitlines()[-1])

    def dump_outputs(self, runtime, model, spec, path, optimization='all'):
        """Every float output of one run, raw float32 in output order (and, for ORT, PATH.json: shapes)."""
        if runtime == 'ephost':
            cmd = [self.args.runner, '--model', model, '--inputs', spec, '--warmup', '0', '--min-runs', '1',
                   '--min-seconds', '0', '--dump-outputs', path]
            for kv in self.args.provider_option:
                cmd += ['--provider-option', kv]
        else:
            cmd = ['node', os.path.join(ROOT, 'benchmarks', 'ort_eval.js'), '--ort', self.args.ort, '--model', model,
                   '--inputs', spec, '--optimization', optimization, '--dump-outputs', path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=self.args.timeout, env=self.env(runtime))


# ---- accuracy of the int8 models ---------------------------------------------------------------------------

def output_steps(qdq_model):
    """Graph output -> the scale of the DequantizeLinear that produces it (None: not a DQ output)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(qdq_model, load_external_data=False)
    inits = {i.name: i for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}
    steps = {}
    for o in m.graph.output:
        n = producer.get(o.name)
        if n is not None and n.op_type == 'DequantizeLinear' and n.input[1] in inits:
            scale = numpy_helper.to_array(inits[n.input[1]])
            steps[o.name] = float(scale.max()) if scale.size else None
        else:
            steps[o.name] = None
    return steps


def split_outputs(path, manifest):
    import numpy as np
    flat = np.fromfile(path, dtype=np.float32)
    out, at = {}, 0
    for e in manifest:
        n = 1
        for d in e['shape']:
            n *= d
        out[e['name']] = flat[at:at + n].astype(np.float64)
        at += n
    if at != flat.size:
        raise RuntimeError(f'{path}: {flat.size} floats, the outputs hold {at}')
    return out


def accuracy(runner, case, f32_model, qdq_model, spec):
    """Per output: deviations in quantization steps (ephost vs exact QDQ, ORT vs exact, ephost vs ORT) and
    the correlation of the exact int8 output with the f32 model's."""
    import numpy as np
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {k: os.path.join(tmp, k + '.bin') for k in ('exact', 'ort', 'ephost', 'f32')}
        runner.dump_outputs('ort', qdq_model, spec, paths['exact'], optimization='disabled')
        runner.dump_outputs('ort', qdq_model, spec, paths['ort'])
        runner.dump_outputs('ort', f32_model, spec, paths['f32'])
        manifest = json.load(open(paths['exact'] + '.json'))
        got = {k: split_outputs(paths[k], manifest) for k in ('exact', 'ort', 'f32')}
        try:
            runner.dump_outputs('ephost', qdq_model, spec, paths['ephost'])
            got['ephost'] = split_outputs(paths['ephost'], manifest)
        except Exception as e:  # ephost's cells stay empty
            log(f'{case}: ephost could not run {os.path.basename(qdq_model)}: {e}')
        steps = output_steps(qdq_model)
        for e in manifest:
            name = e['name']
            step = steps.get(name)
            unit = step if step else 1.0
            exact = got['exact'][name]

            def dev(a, b):
                if a is None or b is None:
                    return None
                return float(np.abs(a - b).max()) / unit
            ep = got.get('ephost', {}).get(name)
            f32 = got['f32'][name]
            corr = float(np.corrcoef(exact, f32)[0, 1]) if exact.size > 1 and exact.std() > 0 and f32.std() > 0 else None
            rows.append({'output': name, 'step': step, 'ephost_vs_exact': dev(ep, exact),
                         'ort_vs_exact': dev(got['ort'][name], exact), 'ephost_vs_ort': dev(ep, got['ort'][name]),
                         'int8_vs_f32_corr': corr})
    return rows


# ---- tables --------------------------------------------------------------------------------------------------

def fmt_ms(v):
    if v is None:
        return '-'
    return f'{v:.3f}' if v < 1 else (f'{v:.2f}' if v < 100 else f'{v:.0f}')


def ratio(a, b):
    return f'{a / b:.2f}' if a is not None and b else '-'


def pct(v):
    return f'{100 * v:.0f}%' if v is not None else '-'


def print_table(title, head, rows):
    print()
    print(title)
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for r in rows:
        print('| ' + ' | '.join(r) + ' |')


def label(case, precision):
    return case if precision == 'f32' else f'{case} int8 {precision}'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cases', default=','.join(ALL_CASES))
    ap.add_argument('--precisions', default='f32,u8s7', help='f32 and/or int8 schemes: u8s7, s8s8')
    ap.add_argument('--int8-cases', default=','.join(INT8_CASES), help='cases that also run in int8')
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
    ap.add_argument('--free-dim', action='append', default=[],
                    help='NAME=VALUE: fix symbolic input dimension NAME in both runtimes (ephost\'s '
                         'session.free_dimension_override.NAME, onnxruntime-node\'s freeDimensionOverrides)')
    ap.add_argument('--runtimes', default='ephost,ort')
    ap.add_argument('--isa', default='', help='EPHOST_CPU_ISA for ephost (scalar, avx2, avx512); ORT has no cap')
    ap.add_argument('--baseline-runner', default='',
                    help='a second ephost_model_runner (an older build) measured in the same rounds: adds "before" '
                         'columns and the after/before ratio')
    ap.add_argument('--ephost-precision', default='f32', choices=['f32', 'bf16'],
                    help='ephost\'s cpu option precision for the measured runs (ORT stays f32); with bf16 the '
                         'same runner at f32 is the "before" baseline unless --baseline-runner names another')
    ap.add_argument('--requantize', action='store_true', help='make the int8 models again')
    ap.add_argument('--no-accuracy', action='store_true', help='skip the int8 accuracy table')
    ap.add_argument('--ghz', type=float, help='core frequency for the peak (default: cpu_peak.py\'s reading)')
    ap.add_argument('--fma-per-cycle', type=int, help='f32 FMAs per cycle per core (default: cpu_peak.py\'s table)')
    ap.add_argument('--json-out', default='')
    args = ap.parse_args()
    cases = [c for c in args.cases.split(',') if c]
    precisions = [p for p in args.precisions.split(',') if p]
    int8_cases = {c for c in args.int8_cases.split(',') if c}
    modes = [m for m in args.modes.split(',') if m]
    runtimes = [r for r in args.runtimes.split(',') if r]
    if args.ephost_precision != 'f32' and not args.baseline_runner:
        args.baseline_runner = args.runner
    if args.baseline_runner and 'base' not in runtimes:
        runtimes.append('base')
    for c in cases + sorted(int8_cases):
        if c not in ALL_CASES:
            sys.exit(f'model_bench: unknown case {c} (one of {", ".join(ALL_CASES)})')
    for p in precisions:
        if p != 'f32' and p not in SCHEMES:
            sys.exit(f'model_bench: unknown precision {p} (f32, {", ".join(SCHEMES)})')
    if 'ephost' in runtimes and not os.access(args.runner, os.X_OK):
        sys.exit(f'model_bench: no runner at {args.runner} (build the benchmarks, or give --runner)')
    ensure_ort(args.ort)  # the quantizer and the accuracy check need it too
    import flops
    peak = cpu_peak.machine_peak(args.ghz, args.fma_per_cycle,
                                 os.path.join(os.path.dirname(args.runner), 'ephost_cpu_clock'))
    runner = Runner(args)
    load_start = os.getloadavg()
    results, accuracy_rows, macs, plugin_isa = {}, {}, {}, set()
    rows_order = []
    for case in cases:
        model, spec = ocr_case(case, args.models) if case in OCR else family_case(case, args.models)
        try:
            macs[case] = flops.model_macs(model, spec, args.ort)
        except Exception as e:
            log(f'{case}: no FLOPs count: {e}')
        for precision in precisions:
            if precision != 'f32' and case not in int8_cases:
                continue
            key = label(case, precision)
            try:
                m = model if precision == 'f32' else quantized_model(case, model, spec, precision, args)
            except Exception as e:
                log(f'{key}: cannot make the model: {e}')
                continue
            rows_order.append((case, precision))
            results[key] = {}
            for mode in modes:
                per = {r: [] for r in runtimes}
                for rnd in range(args.rounds):
                    order = runtimes if rnd % 2 == 0 else list(reversed(runtimes))
                    for rt in order:
                        try:
                            per[rt].append(runner.measure(rt, m, spec, mode))
                        except Exception as e:  # a failing runtime leaves its cells empty
                            log(f'{key} {mode} {rt}: {e}')
                agg = {}
                for rt, rs in per.items():
                    if rs:
                        agg[rt] = {k: statistics.median(r[k] for r in rs if k in r)
                                   for k in ('median_ms', 'cpu_ms', 'first_run_ms', 'first_run_cpu_ms', 'peak_rss_mb',
                                             'create_ms', 'create_cpu_ms', 'create_page_faults')
                                   if any(k in r for r in rs)}
                        agg[rt]['runs'] = [r['runs'] for r in rs]
                        plugin_isa.update(r['cpu_plugin_architecture'] for r in rs if 'cpu_plugin_architecture' in r)
                results[key][mode] = agg
                cells = '  '.join(f'{rt} {fmt_ms(a["median_ms"])} ms (CPU {fmt_ms(a.get("cpu_ms"))})'
                                  for rt, a in agg.items())
                log(f'{key} {mode}: {cells}')
            if precision != 'f32' and not args.no_accuracy and 'ort' in runtimes:
                try:
                    accuracy_rows[key] = accuracy(runner, key, model, m, spec)
                except Exception as e:
                    log(f'{key}: accuracy check failed: {e}')
    load_end = os.getloadavg()

    def get(key, mode, rt, k):
        return results.get(key, {}).get(mode, {}).get(rt, {}).get(k)

    print(f'ephost vs ONNX Runtime {ORT_VERSION} (onnxruntime-node, CPU EP, graph optimisation all); latency = median ms; '
          f'load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end (on {os.cpu_count()} CPUs); '
          f'rounds {args.rounds}')
    print(f'CPU: {peak["cpu"]}; ephost CPU plugin: {", ".join(sorted(plugin_isa)) or "-"}'
          f'{" (EPHOST_CPU_ISA=" + args.isa + ")" if args.isa else ""}; ONNX Runtime (MLAS, from CPUID): '
          f'{peak["ort_isa"]}')
    print(f'peak per core: {peak["f32_gflops_per_core"]:.1f} GFLOP/s f32 = {peak["ghz"]:.2f} GHz ({peak["ghz_source"]}) '
          f'x {peak["fma_per_cycle"]} FMA/cycle ({peak["fma_source"]}) x 2; int8 {peak["int8_gops_per_core"]:.0f} GOP/s '
          f'= {peak["int8_factor"]}x ({peak["int8_source"]})')

    base = 'base' in runtimes
    head = ['model']
    for m in modes:
        head += [f'{m} ephost', f'{m} ORT', f'{m} ratio']
        if base:
            head += [f'{m} before', f'{m} after/before']
    if '1t' in modes:
        head += ['1t CPU-time ratio', 'first ephost (x steady)', 'first ORT (x steady)',
                 'first CPU ephost/ORT (x steady CPU)', 'create ephost/ORT ms',
                 'create CPU ephost/ORT ms', 'create page faults ephost/ORT', 'RSS ephost MB', 'RSS ORT MB', 'RSS ratio']
        if base:
            head += ['first before (x steady)', 'create CPU before ms', 'RSS before MB', '1t CPU-time after/before']
    rows = []
    for case, precision in rows_order:
        key = label(case, precision)
        row = [key]
        for m in modes:
            e, o = get(key, m, 'ephost', 'median_ms'), get(key, m, 'ort', 'median_ms')
            row += [fmt_ms(e), fmt_ms(o), ratio(e, o)]
            if base:
                b = get(key, m, 'base', 'median_ms')
                row += [fmt_ms(b), ratio(e, b)]
        if '1t' in modes:
            row.append(ratio(get(key, '1t', 'ephost', 'cpu_ms'), get(key, '1t', 'ort', 'cpu_ms')))
            for rt in ('ephost', 'ort'):
                f, st = get(key, '1t', rt, 'first_run_ms'), get(key, '1t', rt, 'median_ms')
                row.append(f'{fmt_ms(f)} ({ratio(f, st)})' if f is not None else '-')
            row.append(' / '.join(ratio(get(key, '1t', rt, 'first_run_cpu_ms'), get(key, '1t', rt, 'cpu_ms'))
                                  for rt in ('ephost', 'ort')))
            ce, co = get(key, '1t', 'ephost', 'create_ms'), get(key, '1t', 'ort', 'create_ms')
            row.append(f'{fmt_ms(ce)} / {fmt_ms(co)} ({ratio(ce, co)})')
            ce, co = get(key, '1t', 'ephost', 'create_cpu_ms'), get(key, '1t', 'ort', 'create_cpu_ms')
            row.append(f'{fmt_ms(ce)} / {fmt_ms(co)} ({ratio(ce, co)})')
            ce, co = get(key, '1t', 'ephost', 'create_page_faults'), get(key, '1t', 'ort', 'create_page_faults')
            row.append(f'{ce:.0f} / {co:.0f}' if ce is not None and co is not None else '-')
            e, o = get(key, '1t', 'ephost', 'peak_rss_mb'), get(key, '1t', 'ort', 'peak_rss_mb')
            row += [f'{e:.0f}' if e is not None else '-', f'{o:.0f}' if o is not None else '-', ratio(e, o)]
            if base:
                f, st = get(key, '1t', 'base', 'first_run_ms'), get(key, '1t', 'base', 'median_ms')
                b = get(key, '1t', 'base', 'peak_rss_mb')
                row += [f'{fmt_ms(f)} ({ratio(f, st)})' if f is not None else '-',
                        fmt_ms(get(key, '1t', 'base', 'create_cpu_ms')), f'{b:.0f}' if b is not None else '-',
                        ratio(get(key, '1t', 'ephost', 'cpu_ms'), get(key, '1t', 'base', 'cpu_ms'))]
        rows.append(row)
    print_table('Speed', head, rows)

    # Share of peak: 2 * MACs per run over (time x cores x peak per core).
    head = ['model', 'GMAC/run', 'peak/core']
    for m in [m for m in modes if m in ('1t', '2t')]:
        head += [f'{m} share ephost', f'{m} share ORT']
    head += ['1t CPU-time share ephost', '1t CPU-time share ORT']
    rows = []
    for case, precision in rows_order:
        key = label(case, precision)
        n, unknown = macs.get(case, (None, []))
        per_core = peak['f32_gflops_per_core'] if precision == 'f32' else peak['int8_gops_per_core']

        def share(ms, cores):
            return 2 * n / (ms / 1e3) / (cores * per_core * 1e9) if n and ms else None
        row = [key, (f'{n / 1e9:.3f}' if n is not None else '-') + (f' (+{len(unknown)} unknown)' if unknown else ''),
               f'{per_core:.0f} G{"FLOP" if precision == "f32" else "OP"}/s']
        for m in [m for m in modes if m in ('1t', '2t')]:
            cores = 1 if m == '1t' else min(2, os.cpu_count())
            row += [pct(share(get(key, m, rt, 'median_ms'), cores)) for rt in ('ephost', 'ort')]
        row += [pct(share(get(key, '1t', rt, 'cpu_ms'), 1)) for rt in ('ephost', 'ort')]
        rows.append(row)
    print_table('Arithmetic: share of the peak (f32 rows: f32 FMA peak; int8 rows: u8*s8 peak)', head, rows)

    schemes = [p for p in precisions if p != 'f32']
    if schemes and 'f32' in precisions and '1t' in modes:
        head = ['model', 'ORT f32', 'ephost f32', 'f32 ephost/ORT']
        for s in schemes:
            head += [f'ORT {s}', f'ephost {s}', f'{s} ephost/ORT', f'ephost {s} vs own f32', f'ORT {s} vs own f32']
        rows = []
        for case in cases:
            if case not in int8_cases:
                continue
            f = label(case, 'f32')
            ef, of = get(f, '1t', 'ephost', 'median_ms'), get(f, '1t', 'ort', 'median_ms')
            cf_e, cf_o = get(f, '1t', 'ephost', 'cpu_ms'), get(f, '1t', 'ort', 'cpu_ms')
            row = [case, f'{fmt_ms(of)} ({fmt_ms(cf_o)})', f'{fmt_ms(ef)} ({fmt_ms(cf_e)})',
                   f'{ratio(ef, of)} ({ratio(cf_e, cf_o)})']
            for s in schemes:
                q = label(case, s)
                eq, oq = get(q, '1t', 'ephost', 'median_ms'), get(q, '1t', 'ort', 'median_ms')
                cq_e, cq_o = get(q, '1t', 'ephost', 'cpu_ms'), get(q, '1t', 'ort', 'cpu_ms')
                row += [f'{fmt_ms(oq)} ({fmt_ms(cq_o)})', f'{fmt_ms(eq)} ({fmt_ms(cq_e)})',
                        f'{ratio(eq, oq)} ({ratio(cq_e, cq_o)})', f'{ratio(ef, eq)}x ({ratio(cf_e, cq_e)}x)',
                        f'{ratio(of, oq)}x ({ratio(cf_o, cq_o)}x)']
            rows.append(row)
        print_table('f32 and int8 at 1 thread: median ms (CPU ms per run); "vs own f32" is f32 time / int8 time '
                    '(above 1: int8 is faster)', head, rows)

    if accuracy_rows:
        head = ['model', 'output', 'step', 'ephost vs exact (steps)', 'ORT vs exact (steps)', 'ephost vs ORT (steps)',
                'int8 vs f32 correlation']
        rows = []
        for key, outs in accuracy_rows.items():
            for r in outs:
                unit = '' if r['step'] else ' (abs: not a DQ output)'
                f = lambda v: f'{v:.2f}' if v is not None else '-'
                rows.append([key, r['output'], f'{r["step"]:.4g}' if r['step'] else '-',
                             f(r['ephost_vs_exact']) + unit, f(r['ort_vs_exact']) + unit, f(r['ephost_vs_ort']) + unit,
                             f'{r["int8_vs_f32_corr"]:.4f}' if r['int8_vs_f32_corr'] is not None else '-'])
        print_table('int8 accuracy: largest deviation in quantization steps of the output; exact = ORT with graph '
                    'optimisation disabled (Q and DQ one by one in float)', head, rows)

    if args.json_out:
        with open(args.json_out, 'w') as f:
            json.dump({'load_start': load_start, 'load_end': load_end, 'peak': peak, 'cpu_plugin': sorted(plugin_isa),
                       'macs': {c: v[0] for c, v in macs.items()}, 'results': results, 'accuracy': accuracy_rows},
                      f, indent=1)


if __name__ == '__main__':
    main()
