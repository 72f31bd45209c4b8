#!/usr/bin/env node
// Runs many models with ONNX Runtime in one process (tests/runtime/tensor_ops_vs_ort.py).
// usage: node ort_batch.js MANIFEST.json
// The manifest is a list of {"model", "out_dir", "inputs": {name: file.npy}}; each
// case's outputs go to out_dir/<name>.npy, a failure to out_dir/error.txt.
'use strict';
const fs = require('fs');
const path = require('path');
const {ort, readNpy, writeNpy} = require('./ort_run.js');

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const c of cases) {
    fs.mkdirSync(c.out_dir, {recursive: true});
    try {
      const feeds = {};
      for (const [name, file] of Object.entries(c.inputs)) feeds[name] = readNpy(file);
      const session = await ort.InferenceSession.create(c.model, {
        executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      });
      const out = await session.run(feeds);
      for (const name of session.outputNames) {
        writeNpy(path.join(c.out_dir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), out[name]);
      }
    } catch (e) {
      fs.writeFileSync(path.join(c.out_dir, 'error.txt'), String(e && e.message || e));
    }
  }
}

main().catch(e => { console.error('ort_batch.js: ' + (e && e.message || e)); process.exit(1); });
