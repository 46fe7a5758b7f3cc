#!/usr/bin/env node
// ONNX Runtime's side of the opset cases' oracle (ort_oracle.py): runs each case's model once on ONNX
// Runtime's CPU EP (onnxruntime-node, fetched by fetch_ort.sh) and writes its outputs.
//
//   node ort_oracle.js --ort DIR JOB.json RESULT.json
//
// JOB.json: [{name, model, inputs: [{name, type, dims, data}]}], data the raw little-endian bytes in
// base64, type an onnxruntime-node tensor type (float32, float16, int64, bool, ...).
// RESULT.json: {name: {outputs: [{name, type, dims, data}]}} or {name: {error}} for a case ONNX Runtime
// refuses or fails. ALLOW_RELEASED_ONNX_OPSET_ONLY=0 must be in the environment for opset-27 models.
'use strict';

const fs = require('fs');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array,
};

function die(msg) {
  process.stderr.write(`ort_oracle: ${msg}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
let ortDir = '';
const files = [];
for (let i = 0; i < argv.length; ++i) {
  if (argv[i] === '--ort') ortDir = argv[++i];
  else files.push(argv[i]);
}
if (!ortDir || files.length !== 2) die('usage: node ort_oracle.js --ort DIR JOB.json RESULT.json');
let ort;
try {
  ort = require(require.resolve('onnxruntime-node', { paths: [ortDir] }));
} catch (e) {
  die(`cannot load onnxruntime-node from ${ortDir}: ${e.message}`);
}

function toTensor(t) {
  const Array = ARRAYS[t.type];
  if (!Array) throw new Error(`input type ${t.type} is not supported here`);
  const bytes = Buffer.from(t.data, 'base64');
  const copy = new ArrayBuffer(bytes.length);  // aligned for the typed array
  new Uint8Array(copy).set(bytes);
  return new ort.Tensor(t.type, new Array(copy), t.dims);
}

function fromTensor(name, t) {
  if (!ARRAYS[t.type]) throw new Error(`output ${name} has type ${t.type}, not supported here`);
  const d = t.data;
  return { name, type: t.type, dims: Array.from(t.dims),
           data: Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('base64') };
}

(async () => {
  const job = JSON.parse(fs.readFileSync(files[0], 'utf8'));
  const result = {};
  for (const c of job) {
    try {
      const session = await ort.InferenceSession.create(c.model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
      const feeds = {};
      for (const t of c.inputs) feeds[t.name] = toTensor(t);
      const out = await session.run(feeds);
      result[c.name] = { outputs: session.outputNames.map((n) => fromTensor(n, out[n])) };
      await session.release();
    } catch (e) {
      result[c.name] = { error: String(e && e.message ? e.message : e).split('\n')[0].slice(0, 400) };
    }
  }
  fs.writeFileSync(files[1], JSON.stringify(result));
})();
