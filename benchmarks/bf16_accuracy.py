#!/usr/bin/python3
"""What ephost's cpu option precision=bf16 costs in accuracy: per model, its outputs against the f32 run's.

    /usr/bin/python3 benchmarks/bf16_accuracy.py [--cases bert,vit,resnet50,...] [--runner PATH]
        [--ort DIR] [--models DIR]

Each case runs on its benchmark input and its calibration inputs (model_bench.py makes both, in
--models). For every input set, ephost runs the model at precision=f32 and at precision=bf16, and ONNX
Runtime (f32, benchmarks/ort_eval.js) gives the shapes and a second f32 reference. Per case and output:
- max abs: the largest |bf16 - f32| (ephost f32 as the reference);
- max rel: max abs over the largest |f32| of that output (a scale-free figure);
- f32 ephost vs ORT: the same max rel between the two f32 runs (how far two f32 runtimes already differ);
- top-1: where an output's last axis holds classes (classifiers, the encoder's per-token logits), the
  share of rows whose argmax agrees between bf16 and f32.
Needs a CPU with AVX512_BF16 or AMX-BF16 (ephost refuses precision=bf16 elsewhere).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = ['bert', 'vit', 'resnet50', 'effnet', 'mnv3', 'det', 'rec', 'cls']
OCR_FILES = {'det': 'ch_PP-OCRv4_det_infer.onnx', 'rec': 'ch_PP-OCRv4_rec_infer.onnx',
             'cls': 'ch_ppocr_mobile_v2.0_cls_infer.onnx'}
CLASSIFIERS = {'vit', 'resnet50', 'effnet', 'mnv3', 'cls', 'rec'}  # argmax over the last axis is a class (rec: per step)


def model_path(case, models):
    if case in OCR_FILES:
        folder = subprocess.run([os.path.join(ROOT, 'tests', 'models', 'fetch_models.sh')], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.strip()
        return os.path.join(folder, OCR_FILES[case])
    return os.path.join(models, case, 'model.onnx')


def input_specs(case, models):
    folder = os.path.join(models, case)
    specs = [os.path.join(folder, 'inputs.json')]
    calib = os.path.join(folder, 'calib')
    if os.path.isdir(calib):
        specs += [os.path.join(calib, d, 'inputs.json') for d in sorted(os.listdir(calib))]
    return [s for s in specs if os.path.exists(s)]


def ephost_outputs(args, model, spec, precision, path):
    subprocess.run([args.runner, '--model', model, '--inputs', spec, '--warmup', '0', '--min-runs', '1',
                    '--min-seconds', '0', '--provider-option', f'precision={precision}', '--dump-outputs', path],
                   check=True, stdout=subprocess.DEVNULL)
    return np.fromfile(path, dtype=np.float32)


def ort_outputs(args, model, spec, path):
    subprocess.run(['node', os.path.join(ROOT, 'benchmarks', 'ort_eval.js'), '--ort', args.ort, '--model', model,
                    '--inputs', spec, '--optimization', 'all', '--dump-outputs', path], check=True,
                   stdout=subprocess.DEVNULL)
    with open(path + '.json') as f:
        shapes = json.load(f)
    return np.fromfile(path, dtype=np.float32), shapes


def split(flat, shapes):
    """The raw concatenation cut into the outputs ORT reported (name -> array)."""
    out, at = {}, 0
    for entry in shapes:
        shape = entry['shape'] if isinstance(entry, dict) else entry
        name = entry.get('name', str(len(out))) if isinstance(entry, dict) else str(len(out))
        n = int(np.prod(shape)) if shape else 1
        out[name] = flat[at:at + n].reshape(shape)
        at += n
    if at != flat.size:
        raise RuntimeError(f'outputs hold {flat.size} floats, the shapes say {at}')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cases', default=','.join(CASES))
    ap.add_argument('--runner', default=os.path.join(ROOT, 'build', 'benchmarks', 'ephost_model_runner'))
    ap.add_argument('--ort', default=os.path.expanduser('~/.cache/ephost/ort'))
    ap.add_argument('--models', default=os.path.expanduser('~/.cache/ephost/bench-models'))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in [c for c in args.cases.split(',') if c]:
            model = model_path(case, args.models)
            stats = {}
            for spec in input_specs(case, args.models):
                ref_flat, shapes = ort_outputs(args, model, spec, os.path.join(tmp, 'ort.bin'))
                ref = split(ref_flat, shapes)
                f32 = split(ephost_outputs(args, model, spec, 'f32', os.path.join(tmp, 'f32.bin')), shapes)
                bf16 = split(ephost_outputs(args, model, spec, 'bf16', os.path.join(tmp, 'bf16.bin')), shapes)
                for name in f32:
                    s = stats.setdefault(name, {'abs': 0.0, 'rel': 0.0, 'ort_rel': 0.0, 'agree': 0, 'rows': 0})
                    scale = max(float(np.abs(f32[name]).max()), 1e-30)
                    err = float(np.abs(bf16[name] - f32[name]).max())
                    s['abs'] = max(s['abs'], err)
                    s['rel'] = max(s['rel'], err / scale)
                    s['ort_rel'] = max(s['ort_rel'], float(np.abs(ref[name] - f32[name]).max()) / scale)
                    if case in CLASSIFIERS and f32[name].ndim >= 2 and f32[name].shape[-1] > 1:
                        a = f32[name].reshape(-1, f32[name].shape[-1]).argmax(axis=1)
                        b = bf16[name].reshape(-1, bf16[name].shape[-1]).argmax(axis=1)
                        s['agree'] += int((a == b).sum())
                        s['rows'] += int(a.size)
            n_inputs = len(input_specs(case, args.models))
            for name, s in stats.items():
                top1 = f'{s["agree"]}/{s["rows"]}' if s['rows'] else '-'
                rows.append([case, name, str(n_inputs), f'{s["abs"]:.3g}', f'{s["rel"]:.3g}', f'{s["ort_rel"]:.3g}', top1])
                print(' | '.join(rows[-1]), file=sys.stderr, flush=True)
    head = ['model', 'output', 'inputs', 'max abs bf16-f32', 'max rel bf16-f32', 'max rel ephost f32-ORT f32',
            'top-1 agreement']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for r in rows:
        print('| ' + ' | '.join(r) + ' |')


if __name__ == '__main__':
    main()
