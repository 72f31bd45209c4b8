// ONNX Runtime steady-run wall time of a model fed from .npy files (any input type
// tests/runtime/ort_run.js reads, float16 included): 3 warm-ups, then the median of N runs,
// 1 thread unless --threads T (intra-op). Prints one JSON line {"median_ms", "min_ms",
// "create_ms", "first_ms"} (session create and first run of this fresh process).
//   node bench/ort_steady.js MODEL N [--threads T] NAME=FILE.npy...
'use strict';
const {ort, readNpy} = require('../tests/runtime/ort_run.js');
(async () => {
  const [model, n] = [process.argv[2], +process.argv[3]];
  const feeds = {};
  let threads = 1;
  const args = process.argv.slice(4);
  for (let k = 0; k < args.length; ++k) {
    if (args[k] === '--threads') { threads = +args[++k]; continue; }
    const i = args[k].indexOf('=');
    feeds[args[k].slice(0, i)] = readNpy(args[k].slice(i + 1));
  }
  const t0c = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const t1c = process.hrtime.bigint();
  await s.run(feeds);
  const t2c = process.hrtime.bigint();
  for (let i = 0; i < 2; ++i) await s.run(feeds);
  const ms = [];
  for (let i = 0; i < n; ++i) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: ms[Math.floor(n / 2)], min_ms: ms[0],
                              create_ms: Number(t1c - t0c) / 1e6,
                              first_ms: Number(t2c - t1c) / 1e6}));
})().catch(e => { console.error('ort_steady.js: ' + (e && e.message || e)); process.exit(1); });
