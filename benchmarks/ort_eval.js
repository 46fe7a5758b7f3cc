#!/usr/bin/env node
// One evaluation of a model by ONNX Runtime (npm onnxruntime-node, CPU EP), for the benchmark's
// calibration and accuracy checks (benchmarks/models/qdq_quantize.py, benchmarks/model_bench.py);
// timings are ort_runner.js's job.
//
//   node ort_eval.js --ort DIR --model M.onnx --inputs A/inputs.json [--inputs B/inputs.json ...]
//                    [--optimization all|disabled] [--threads N]
//                    (--ranges OUT.json | --dump-outputs OUT.bin | --shapes OUT.json)
//
// --ranges: runs the model on every input set and writes {output name: [min, max]} over all of them,
//   for every float output (the quantizer adds the tensors it calibrates as graph outputs).
// --dump-outputs: runs the first input set and writes every float output, in output order, as raw
//   float32 (the layout of ephost_model_runner --dump-outputs), and OUT.bin.json with the names and
//   shapes.
// --shapes: runs the first input set and writes {output name: dims} (models/flops.py asks for the
//   shapes that shape inference leaves unknown).
// --optimization disabled runs every node as it stands in the graph: for a QDQ model, Q and DQ one by
//   one in float, i.e. the exact QDQ semantics the int8 accuracy check compares with.
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`ort_eval: ${msg}\n`);
  process.exit(1);
}

const opt = { inputs: [], optimization: 'all', threads: 1 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; ++i) {
  const a = argv[i];
  const next = () => { if (i + 1 >= argv.length) die(`missing value after ${a}`); return argv[++i]; };
  if (a === '--ort') opt.ort = next();
  else if (a === '--model') opt.model = next();
  else if (a === '--inputs') opt.inputs.push(next());
  else if (a === '--optimization') opt.optimization = next();
  else if (a === '--threads') opt.threads = parseInt(next(), 10);
  else if (a === '--ranges') opt.ranges = next();
  else if (a === '--dump-outputs') opt.dump = next();
  else if (a === '--shapes') opt.shapes = next();
  else die(`unknown argument ${a}`);
}
if (!opt.model || opt.inputs.length === 0) die('--model and --inputs are required');
if ([opt.ranges, opt.dump, opt.shapes].filter((x) => x).length !== 1) {
  die('give exactly one of --ranges, --dump-outputs and --shapes');
}
if (!['all', 'disabled', 'basic', 'extended'].includes(opt.optimization)) die(`unknown --optimization ${opt.optimization}`);

let ortPath;
try {
  ortPath = require.resolve('onnxruntime-node', opt.ort ? { paths: [opt.ort] } : undefined);
} catch (e) {
  die(`cannot find onnxruntime-node: ${e.message}`);
}
const ort = require(ortPath);

const TYPED = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array };

function readFeeds(specPath) {
  const feeds = {};
  for (const e of JSON.parse(fs.readFileSync(specPath, 'utf8'))) {
    const buf = fs.readFileSync(path.join(path.dirname(specPath), e.file));
    const T = TYPED[e.dtype];
    if (!T) die(`unknown dtype ${e.dtype}`);
    const copy = new Uint8Array(buf.length);
    copy.set(buf);
    feeds[e.name] = new ort.Tensor(e.dtype, new T(copy.buffer, 0, buf.length / T.BYTES_PER_ELEMENT), e.shape);
  }
  return feeds;
}

async function main() {
  const session = await ort.InferenceSession.create(opt.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: opt.optimization, intraOpNumThreads: opt.threads,
    interOpNumThreads: 1, executionMode: 'sequential',
  });
  if (opt.shapes) {
    const out = await session.run(readFeeds(opt.inputs[0]));
    const dims = {};
    for (const name of session.outputNames) dims[name] = out[name].dims;
    fs.writeFileSync(opt.shapes, JSON.stringify(dims));
    return;
  }
  if (opt.dump) {
    const out = await session.run(readFeeds(opt.inputs[0]));
    const fd = fs.openSync(opt.dump, 'w');
    const manifest = [];
    for (const name of session.outputNames) {
      const t = out[name];
      if (t.type !== 'float32') continue;
      fs.writeSync(fd, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      manifest.push({ name, shape: t.dims });
    }
    fs.closeSync(fd);
    fs.writeFileSync(`${opt.dump}.json`, JSON.stringify(manifest));
    return;
  }
  const ranges = {};
  for (const spec of opt.inputs) {
    const out = await session.run(readFeeds(spec));
    for (const name of session.outputNames) {
      const t = out[name];
      if (t.type !== 'float32' || t.data.length === 0) continue;
      let lo = Infinity, hi = -Infinity;
      for (const v of t.data) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      const r = ranges[name];
      ranges[name] = r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi];
    }
  }
  fs.writeFileSync(opt.ranges, JSON.stringify(ranges));
}

main().then(() => process.exit(0)).catch((e) => die(e && e.stack ? e.stack : String(e)));
