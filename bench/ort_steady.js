// ONNX Runtime steady-run wall time of a model fed from .npy files (any input type
// tests/runtime/ort_run.js reads, float16 included): 3 warm-ups, then the median of N runs,
// 1 thread. Prints one JSON line {"median_ms", "min_ms"}.
//   node bench/ort_steady.js MODEL N NAME=FILE.npy...
'use strict';
const {ort, readNpy} = require('../tests/runtime/ort_run.js');
(async () => {
  const [model, n] = [process.argv[2], +process.argv[3]];
  const feeds = {};
  for (const a of process.argv.slice(4)) {
    const i = a.indexOf('=');
    feeds[a.slice(0, i)] = readNpy(a.slice(i + 1));
  }
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  for (let i = 0; i < 3; ++i) await s.run(feeds);
  const ms = [];
  for (let i = 0; i < n; ++i) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(JSON.stringify({median_ms: ms[Math.floor(n / 2)], min_ms: ms[0]}));
})().catch(e => { console.error('ort_steady.js: ' + (e && e.message || e)); process.exit(1); });
