// Runs a model in ONNX Runtime (onnxruntime-node) with deterministic float
// inputs and prints every output as {"name": {"dims": [...], "hex": "..."}},
// so a caller can compare outputs bit for bit.
// usage: node ort_run.js MODEL NAME:D0xD1x... [NAME:DIMS...]
'use strict';
const path = require('path');
const peers = process.env.OP_PEERS_DIR || path.join(__dirname, '../../tools/peers/node_modules');
const ort = require(path.join(peers, 'onnxruntime-node'));

function inputData(n, seed) {
  const a = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    a[i] = ((s % 2001) - 1000) / 1000;
  }
  return a;
}

async function main() {
  const [model, ...specs] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  const feeds = {};
  specs.forEach((spec, k) => {
    const [name, dimText] = spec.split(':');
    const dims = dimText.split('x').map(Number);
    const n = dims.reduce((a, b) => a * b, 1);
    feeds[name] = new ort.Tensor('float32', inputData(n, k + 1), dims);
  });
  const out = await session.run(feeds);
  const result = {};
  for (const name of session.outputNames) {
    const t = out[name];
    result[name] = { dims: t.dims, hex: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('hex') };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}
main().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
