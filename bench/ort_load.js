#!/usr/bin/env node
// One ONNX Runtime load measurement in this (fresh) process, for
// bench/load_bench.py, conv_class_bench.py and cnn_suite_bench.py: InferenceSession.create wall time, first run, median of
// the steady runs (their minimum, the CPU time they took), peak RSS and RssAnon/RssFile, output sum. CPU EP, default
// options (prepacking on), interOp 1, intraOp --threads. Prints one JSON line.
//
// usage: node ort_load.js MODEL INPUT_NAME DIMS(1x4096) [--threads N] [--runs N] [--int BOUND]
'use strict';
const fs = require('fs');
const path = require('path');
const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', 'tools', 'peers', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function rss() {
  const s = fs.readFileSync('/proc/self/status', 'utf8');
  const kib = k => Number((new RegExp(k + ':\\s+(\\d+)')).exec(s)[1]);
  return {anon_kib: kib('RssAnon'), file_kib: kib('RssFile')};
}

async function main() {
  const a = process.argv.slice(2);
  let threads = 1, runs = 10, bound = 0;
  const pos = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--threads') threads = Number(a[++i]);
    else if (a[i] === '--runs') runs = Number(a[++i]);
    else if (a[i] === '--int') bound = Number(a[++i]);
    else pos.push(a[i]);
  }
  const [model, input, dimsText] = pos;
  const dims = dimsText.split('x').map(Number);
  const n = dims.reduce((x, y) => x * y, 1);
  let tensor;
  if (bound > 0) {
    const v = new BigInt64Array(n);
    for (let i = 0; i < n; i++) v[i] = BigInt((i * 7919 + 13) % bound);
    tensor = new ort.Tensor('int64', v, dims);
  } else {
    const v = new Float32Array(n);
    for (let i = 0; i < n; i++) v[i] = ((i * 7919 + 13) % 2001) / 1000 - 1;
    tensor = new ort.Tensor('float32', v, dims);
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const t1 = process.hrtime.bigint();
  let out = await session.run({[input]: tensor});
  const t2 = process.hrtime.bigint();
  const steady = [];
  const cpu0 = process.cpuUsage();  // user + system of every thread of the process
  for (let i = 0; i < runs; i++) {
    const s = process.hrtime.bigint();
    out = await session.run({[input]: tensor});
    steady.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  steady.sort((x, y) => x - y);
  const o = out[session.outputNames[0]].data;
  let sum = 0;
  for (let i = 0; i < o.length; i++) sum += o[i];
  const mem = rss();
  console.log(JSON.stringify({
    create_ms: Number(t1 - t0) / 1e6, first_run_ms: Number(t2 - t1) / 1e6,
    time_to_first_output_ms: Number(t2 - t0) / 1e6,
    steady_median_ms: steady.length ? steady[steady.length >> 1] : null,
    steady_min_ms: steady.length ? steady[0] : null,
    steady_cpu_ms: (cpu.user + cpu.system) / 1e3,
    peak_rss_kib: process.resourceUsage().maxRSS, rss_anon_kib: mem.anon_kib,
    rss_file_kib: mem.file_kib, sum,
  }));
}
main().catch(e => { console.error('ort_load.js: ' + (e && e.message || e)); process.exit(1); });
