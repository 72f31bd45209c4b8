#!/usr/bin/env node
// ONNX Runtime steady runs of one model with float inputs of given shapes, for
// bench/einsum_bench.py: CPU EP, one intra-op and one inter-op thread; after
// one warm-up run, the median and min of RUNS timed runs. Prints one JSON line.
//
// usage: node ort_einsum.js MODEL RUNS NAME=DxD... (a scalar input: NAME=)
'use strict';
const path = require('path');
const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', 'tools', 'peers', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

async function main() {
  const [model, runs, ...specs] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(
      model, {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'});
  const feeds = {};
  for (const spec of specs) {
    const [name, dims] = spec.split('=');
    const shape = dims ? dims.split('x').map(Number) : [];
    const n = shape.reduce((a, b) => a * b, 1);
    // The same values as `onnx-prepack run` does not matter: only time is compared.
    feeds[name] = new ort.Tensor('float32', new Float32Array(n).map((_, i) => Math.sin(i)), shape);
  }
  const t0 = process.hrtime.bigint();
  await s.run(feeds);
  const first = Number(process.hrtime.bigint() - t0) / 1e6;
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t = process.hrtime.bigint();
    await s.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({first_run_ms: first, steady_median_ms: times[times.length >> 1],
                              steady_min_ms: times[0]}));
}

main().catch(e => { console.error(e.message); process.exit(1); });
