#!/usr/bin/env node
// ONNX Runtime's side of benchmarks/model_bench.py: the protocol and measurements of
// ephost_model_runner (benchmarks/model_runner.cpp), through the npm package onnxruntime-node (CPU EP,
// graph optimisation "all", default spinning). onnxruntime-node is not a dependency of ephost:
// model_bench.py installs it into a cache folder and passes --ort DIR.
//
//   node ort_runner.js --ort DIR --model M.onnx --inputs INPUTS.json [--threads N] [--warmup W]
//                      [--min-runs R] [--max-runs R] [--min-seconds S] [--background]
//                      [--free-dim NAME=VALUE]...   (freeDimensionOverrides, as ephost_model_runner's)
//                      [--config KEY=VALUE]...      (a session config entry, e.g.
//                                                    session.qdq_matmulnbits_accuracy_level=0)
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`ort_runner: ${msg}\n`);
  process.exit(1);
}

const opt = { threads: 1, warmup: 3, minRuns: 10, maxRuns: 100000, minSeconds: 2.0, background: false, freeDims: {},
  config: {} };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; ++i) {
  const a = argv[i];
  const next = () => { if (i + 1 >= argv.length) die(`missing value after ${a}`); return argv[++i]; };
  if (a === '--ort') opt.ort = next();
  else if (a === '--model') opt.model = next();
  else if (a === '--inputs') opt.inputs = next();
  else if (a === '--threads') opt.threads = parseInt(next(), 10);
  else if (a === '--warmup') opt.warmup = parseInt(next(), 10);
  else if (a === '--min-runs') opt.minRuns = parseInt(next(), 10);
  else if (a === '--max-runs') opt.maxRuns = parseInt(next(), 10);
  else if (a === '--min-seconds') opt.minSeconds = parseFloat(next());
  else if (a === '--background') opt.background = true;
  else if (a === '--free-dim') {
    const m = next().match(/^([^=]+)=(\d+)$/);
    if (!m) die('--free-dim wants NAME=VALUE');
    opt.freeDims[m[1]] = parseInt(m[2], 10);
  } else if (a === '--config') {
    // onnxruntime-node takes config entries as SessionOptions.extra, nested at the dots.
    const m = next().match(/^([^=]+)=(.*)$/);
    if (!m) die('--config wants KEY=VALUE');
    let node = opt.config;
    const keys = m[1].split('.');
    for (const k of keys.slice(0, -1)) node = node[k] = node[k] || {};
    node[keys[keys.length - 1]] = m[2];
  }
  else die(`unknown argument ${a}`);
}
if (!opt.model || !opt.inputs) die('--model and --inputs are required');

let ortPath;
try {
  ortPath = require.resolve('onnxruntime-node', opt.ort ? { paths: [opt.ort] } : undefined);
} catch (e) {
  die(`cannot find onnxruntime-node: ${e.message}`);
}
const ort = require(ortPath);
const ortVersion = JSON.parse(fs.readFileSync(
  path.join(path.dirname(require.resolve('onnxruntime-node/package.json', { paths: [path.dirname(ortPath)] })),
            'package.json'), 'utf8')).version;

function statusKb(field) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s*(\\d+)`, 'm'));
  return m ? parseInt(m[1], 10) : -1;
}

const TYPED = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array };

async function main() {
  const spec = JSON.parse(fs.readFileSync(opt.inputs, 'utf8'));
  const feeds = {};
  for (const e of spec) {
    const buf = fs.readFileSync(path.join(path.dirname(opt.inputs), e.file));
    const T = TYPED[e.dtype];
    if (!T) die(`unknown dtype ${e.dtype}`);
    const copy = new Uint8Array(buf.length);
    copy.set(buf);
    const data = new T(copy.buffer, 0, buf.length / T.BYTES_PER_ELEMENT);
    feeds[e.name] = new ort.Tensor(e.dtype === 'bool' ? 'bool' : e.dtype, data, e.shape);
  }
  const so = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (Object.keys(opt.freeDims).length) so.freeDimensionOverrides = opt.freeDims;
  if (Object.keys(opt.config).length) so.extra = opt.config;
  const rssBase = statusKb('VmRSS');
  const createCpu0 = process.cpuUsage();
  const createFaults0 = process.resourceUsage().minorPageFault;
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(opt.model, so);
  const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
  const createMs = ms(t0);
  const cc = process.cpuUsage(createCpu0);
  const createCpuMs = (cc.user + cc.system) / 1000;
  const createFaults = process.resourceUsage().minorPageFault - createFaults0;

  const firstCpu0 = process.cpuUsage();
  t0 = process.hrtime.bigint();
  await session.run(feeds);
  const firstMs = ms(t0);
  const fc = process.cpuUsage(firstCpu0);
  const firstCpuMs = (fc.user + fc.system) / 1000;
  for (let i = 0; i < opt.warmup; ++i) await session.run(feeds);

  if (opt.background) {
    let stop = false;
    process.stdin.on('data', () => {});
    process.stdin.on('end', () => { stop = true; });
    process.stdin.on('close', () => { stop = true; });
    process.stdout.write('{"ready": true}\n');
    let runs = 0;
    while (!stop) {
      await session.run(feeds);
      ++runs;
      if (runs % 4 === 0) await new Promise((r) => setImmediate(r));  // let the stdin events in
    }
    process.stdout.write(`{"background_runs": ${runs}}\n`);
    process.exit(0);
  }

  const times = [], cpu = [];
  const start = process.hrtime.bigint();
  while (times.length < opt.maxRuns && (times.length < opt.minRuns || ms(start) < opt.minSeconds * 1000)) {
    const c0 = process.cpuUsage();
    t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(ms(t0));
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const sorted = times.slice().sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const hwm = statusKb('VmHWM');
  cpu.sort((a, b) => a - b);
  const cpuMedian = n % 2 ? cpu[(n - 1) / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2;
  process.stdout.write(JSON.stringify({
    runtime: 'ort', version: ortVersion, threads: opt.threads, create_ms: createMs, create_cpu_ms: createCpuMs, create_page_faults: createFaults, first_run_ms: firstMs, first_run_cpu_ms: firstCpuMs,
    median_ms: median, cpu_ms: cpuMedian, min_ms: sorted[0], p90_ms: sorted[Math.min(n - 1, Math.floor(0.9 * n))], runs: n,
    rss_baseline_mb: rssBase / 1024, peak_rss_mb: (hwm - rssBase) / 1024,
  }) + '\n');
  process.exit(0);
}

main().catch((e) => die(e && e.stack ? e.stack : String(e)));
