#!/usr/bin/python3
"""Exports the benchmark models of benchmarks/model_bench.py with Debian's PyTorch 1.13 and
torchvision 0.14 (apt-get install python3-torch python3-torchvision): random weights, nothing
downloaded, nothing committed. Each model gets a folder OUT/<key>/ with model.onnx, its inputs as raw
little-endian files and inputs.json (the format ephost_model_runner and ort_runner.js read), and
calib/<i>/inputs.json: four more input sets of the same kind (other seeds), on which
qdq_quantize.py calibrates its ranges.

Random weights are made well-scaled before export, so that activations stay in a normal range
through the whole network (quantization ranges and output comparisons mean something):
  - BatchNorm statistics are recalibrated on random inputs (train-mode passes with a cumulative
    average), instead of torchvision's mean 0 / variance 1, under which ResNet-50's activations
    grow by orders of magnitude from block to block;
  - classifier heads get random non-zero weights (torchvision zero-initialises ViT's), re-scaled
    layer by layer so that each head Linear's output has unit standard deviation on random inputs.

    /usr/bin/python3 benchmarks/models/make_models.py OUT_DIR [--only key,key] [--force]

Models (keys):
  vad        a small voice-activity LSTM (64 hidden units) with an If on the sample rate, 512-sample
             frames at 16 kHz, state in and out (Silero-VAD-shaped)
  bert       BERT-style encoder: 4 layers, d=256, 4 heads, seq 128, padding mask, GELU (erf); dynamic
             batch and sequence axes, as transformer exports have
  vit        torchvision ViT-B/16 at 224x224
  effnet     torchvision EfficientNet-B0
  mnv3       torchvision MobileNetV3-small
  resnet50   torchvision ResNet-50
  gru        2-layer bidirectional GRU (128 hidden) over 100 frames of 80 features
Opset 14 (torch 1.13's default): LayerNorm stays decomposed (ReduceMean/Sub/Pow/Sqrt/Div), GELU is
the Erf form, HardSwish is an op.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 14


def save_inputs(folder, named):
    spec = []
    for name, arr in named:
        arr = np.array(arr, order="C")  # (ascontiguousarray would make a scalar 1-D)
        dtype = {np.dtype('float32'): 'float32', np.dtype('int64'): 'int64', np.dtype('int32'): 'int32',
                 np.dtype('bool'): 'bool'}[arr.dtype]
        fname = name + '.bin'
        arr.tofile(os.path.join(folder, fname))
        spec.append({'name': name, 'dtype': dtype, 'shape': list(arr.shape), 'file': fname})
    with open(os.path.join(folder, 'inputs.json'), 'w') as f:
        json.dump(spec, f, indent=1)


def save_calibration_sets(folder, make_named, count=4):
    """calib/<i>/inputs.json: more input sets of the same kind, for qdq_quantize.py's ranges."""
    for i in range(count):
        sub = os.path.join(folder, 'calib', str(i))
        os.makedirs(sub, exist_ok=True)
        save_inputs(sub, make_named(100 + i))


@torch.no_grad()
def recalibrate_batchnorm(model, make_batch, passes=4):
    """BatchNorm running statistics measured on random inputs (cumulative average over the passes)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    model.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average
        bn.train()
    for i in range(passes):
        model(make_batch(i))
    model.eval()


@torch.no_grad()
def rescale_linears(model, linears, make_batch):
    """Scales each Linear of `linears` (in forward order) so that its output has unit standard
    deviation on a random batch: a random head's logits are then O(1), neither all 0 nor huge."""
    model.eval()
    for lin in linears:
        seen = {}
        hook = lin.register_forward_hook(lambda mod, inp, out: seen.__setitem__('out', out))
        model(make_batch(0))
        hook.remove()
        std = float(seen['out'].std())
        if std > 0:
            lin.weight.mul_(1.0 / std)
            if lin.bias is not None:
                lin.bias.mul_(1.0 / std)


@torch.no_grad()
def activation_report(model, x):
    """Largest |activation| over the model's leaf modules: a scale check printed at export."""
    peak = [0.0]

    def hook(mod, inp, out):
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            peak[0] = max(peak[0], float(out.abs().max()))
    hooks = [m.register_forward_hook(hook) for m in model.modules() if not list(m.children())]
    out = model(x)
    for h in hooks:
        h.remove()
    return peak[0], float(out.std())


def export(model, args, path, input_names, output_names, dynamic_axes=None):
    model.eval()
    # Gradients stay enabled: under no_grad nn.MultiheadAttention (ViT) takes its fused fast path,
    # which torch 1.13 cannot export.
    with torch.enable_grad():
        torch.onnx.export(model, args, path, opset_version=OPSET, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)


# ---- BERT-style encoder -------------------------------------------------------------------------------

class BertLayer(nn.Module):
    def __init__(self, d=256, heads=4, ff=1024):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.inter = nn.Linear(d, ff)
        self.out = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def heads(self, t):
        return t.view(t.size()[:-1] + (self.h, self.dh)).permute(0, 2, 1, 3)

    def forward(self, x, mask_add):
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        probs = F.softmax(scores + mask_add, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.h * self.dh,))
        x = self.ln1(self.attn_out(ctx) + x)
        return self.ln2(self.out(F.gelu(self.inter(x))) + x)


class Bert(nn.Module):
    def __init__(self, vocab=30522, d=256, layers=4, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.tok = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(d) for _ in range(layers)])
        self.pool = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        pos = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.pos(pos) + self.tok(torch.zeros_like(input_ids))
        x = self.ln(x)
        mask_add = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_add)
        return x, torch.tanh(self.pool(x[:, 0]))


def make_bert(folder):
    torch.manual_seed(1)
    m = Bert()
    ids = torch.randint(0, 30522, (1, 128), dtype=torch.long)
    mask = torch.ones(1, 128, dtype=torch.long)
    mask[0, 100:] = 0  # 28 padding tokens
    export(m, (ids, mask), os.path.join(folder, 'model.onnx'), ['input_ids', 'attention_mask'],
           ['last_hidden_state', 'pooler_output'],
           dynamic_axes={'input_ids': {0: 'batch', 1: 'sequence'}, 'attention_mask': {0: 'batch', 1: 'sequence'},
                         'last_hidden_state': {0: 'batch', 1: 'sequence'}, 'pooler_output': {0: 'batch'}})
    save_inputs(folder, [('input_ids', ids.numpy()), ('attention_mask', mask.numpy())])

    def calib(seed):
        g = torch.Generator().manual_seed(seed)
        cids = torch.randint(0, 30522, (1, 128), dtype=torch.long, generator=g)
        cmask = torch.ones(1, 128, dtype=torch.long)
        cmask[0, int(torch.randint(64, 129, (1,), generator=g)):] = 0
        return [('input_ids', cids.numpy()), ('attention_mask', cmask.numpy())]
    save_calibration_sets(folder, calib)


# ---- voice-activity LSTM with an If on the sample rate ---------------------------------------------------

class VadBranch(nn.Module):
    """Learned filterbank (strided Conv1d), two conv layers, one LSTM step per frame, a sigmoid head."""

    def __init__(self, win, hop):
        super().__init__()
        self.win, self.hop = win, hop
        self.frontend = nn.Conv1d(1, 128, win, stride=hop, bias=False)
        self.conv1 = nn.Conv1d(128, 128, 3, padding=1)
        self.conv2 = nn.Conv1d(128, 64, 3, stride=2, padding=1)
        self.lstm = nn.LSTM(64, 64)
        self.head = nn.Linear(64, 1)

    def forward(self, x, h, c):
        f = torch.abs(self.frontend(x.unsqueeze(1)))
        f = torch.log(f + 1e-3)
        f = F.relu(self.conv1(f))
        f = F.relu(self.conv2(f))
        seq = f.permute(2, 0, 1)  # [T, 1, 64]
        y, (h2, c2) = self.lstm(seq, (h, c))
        p = torch.sigmoid(self.head(F.relu(y)))  # [T, 1, 1]
        return p.mean(0), h2, c2


class Vad(nn.Module):
    def __init__(self, b16, b8):
        super().__init__()
        self.b16, self.b8 = b16, b8

    def forward(self, x, sr: torch.Tensor, h, c):
        if bool(sr == 16000):
            out = self.b16(x, h, c)
        else:
            out = self.b8(x, h, c)
        return out


def make_vad(folder):
    torch.manual_seed(2)
    x = torch.randn(1, 512) * 0.1
    h = torch.zeros(1, 1, 64)
    c = torch.zeros(1, 1, 64)
    b16 = torch.jit.trace(VadBranch(128, 32).eval(), (x, h, c))
    b8 = torch.jit.trace(VadBranch(64, 16).eval(), (x[:, :256], h, c))
    m = torch.jit.script(Vad(b16, b8))
    sr = torch.tensor(16000, dtype=torch.long)
    export(m, (x, sr, h, c), os.path.join(folder, 'model.onnx'), ['input', 'sr', 'h', 'c'], ['prob', 'hn', 'cn'],
           dynamic_axes={'input': {1: 'samples'}})
    hs = (np.random.RandomState(3).randn(1, 1, 64) * 0.1).astype(np.float32)
    save_inputs(folder, [('input', x.numpy()), ('sr', np.array(16000, dtype=np.int64)), ('h', hs), ('c', hs)])


# ---- torchvision and GRU ----------------------------------------------------------------------------------

def make_vision(folder, ctor, head, size=224):
    """A torchvision classifier: BatchNorm recalibrated and head re-scaled on random images."""
    torch.manual_seed(4)
    m = ctor()
    gen = torch.Generator().manual_seed(40)
    batches = [torch.randn(8, 3, size, size, generator=gen) for _ in range(4)]
    recalibrate_batchnorm(m, lambda i: batches[i])
    rescale_linears(m, [mod for mod in head(m).modules() if isinstance(mod, nn.Linear)], lambda i: batches[i])
    x = torch.randn(1, 3, size, size)
    peak, out_std = activation_report(m.eval(), x)
    print(f'make_models: {os.path.basename(folder)}: largest |activation| {peak:.3g}, logits std {out_std:.3g}',
          file=sys.stderr)
    export(m, (x,), os.path.join(folder, 'model.onnx'), ['input'], ['logits'])
    save_inputs(folder, [('input', x.numpy())])
    save_calibration_sets(
        folder, lambda seed: [('input', torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(seed)).numpy())])


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(80, 128, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(256, 32)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.head(y)


def make_gru(folder):
    torch.manual_seed(5)
    x = torch.randn(1, 100, 80)
    export(Gru(), (x,), os.path.join(folder, 'model.onnx'), ['features'], ['scores'])
    save_inputs(folder, [('features', x.numpy())])
    save_calibration_sets(
        folder, lambda seed: [('features', torch.randn(1, 100, 80, generator=torch.Generator().manual_seed(seed)).numpy())])


def vit():
    import torchvision.models as tvm
    m = tvm.vit_b_16(weights=None)
    # torchvision zero-initialises the classification head: random weights make the logits depend on
    # everything before them, so that comparisons of outputs mean something (make_vision re-scales them).
    nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


def main():
    import torchvision.models as tvm
    makers = {
        'vad': make_vad,
        'bert': make_bert,
        'vit': lambda f: make_vision(f, vit, lambda m: m.heads),
        'effnet': lambda f: make_vision(f, lambda: tvm.efficientnet_b0(weights=None), lambda m: m.classifier),
        'mnv3': lambda f: make_vision(f, lambda: tvm.mobilenet_v3_small(weights=None), lambda m: m.classifier),
        'resnet50': lambda f: make_vision(f, lambda: tvm.resnet50(weights=None), lambda m: m.fc),
        'gru': make_gru,
    }
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out')
    ap.add_argument('--only', default='')
    ap.add_argument('--force', action='store_true')
    a = ap.parse_args()
    keys = [k for k in a.only.split(',') if k] or list(makers)
    torch.set_num_threads(1)
    for k in keys:
        if k not in makers:
            sys.exit(f'make_models: unknown model {k} (one of {", ".join(makers)})')
        folder = os.path.join(a.out, k)
        if not a.force and os.path.exists(os.path.join(folder, 'inputs.json')):
            continue
        os.makedirs(folder, exist_ok=True)
        print(f'make_models: exporting {k}', file=sys.stderr)
        makers[k](folder)


if __name__ == '__main__':
    main()
