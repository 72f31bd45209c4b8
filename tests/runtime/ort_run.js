#!/usr/bin/env node
// Runs a model with ONNX Runtime (onnxruntime-node, CPU EP) on .npy inputs and
// writes each output as OUT_DIR/<name>.npy (name sanitised like `onnx-prepack
// run --output-dir`). The reference for tests/runtime/ort_agreement_test.cc.
//
// usage: node ort_run.js MODEL OUT_DIR NAME=FILE.npy... [--threads N]
// ORT_NODE_MODULES (env) overrides the node_modules holding onnxruntime-node
// (default: tools/peers/node_modules of this repository).
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'tools', 'peers', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

const kTypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '<f2': ['float16', Uint16Array],
};

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not a .npy file');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
      .filter(s => s.length).map(Number);
  const [type, Ctor] = kTypes[descr] || (() => { throw new Error(file + ': type ' + descr); })();
  const start = hstart + hlen;
  const data = b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length);
  let arr = new Ctor(data.slice(0));
  if (type === 'bool') arr = Uint8Array.from(arr);
  return new ort.Tensor(type, arr, shape);
}

function writeNpy(file, tensor) {
  const descr = {float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', bool: '|b1',
                 uint8: '|u1', int8: '|i1', float16: '<f2'}[tensor.type];
  const dims = tensor.dims.map(String);
  const shape = '(' + dims.join(', ') + (dims.length === 1 ? ',' : '') + ')';
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - 10 - header.length - 1) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

async function main() {
  const argv = process.argv.slice(2);
  let threads = 1;
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--threads') threads = Number(argv[++i]);
    else pos.push(argv[i]);
  }
  if (pos.length < 2) throw new Error('usage: node ort_run.js MODEL OUT_DIR NAME=FILE.npy...');
  const [model, outDir, ...specs] = pos;
  const feeds = {};
  for (const s of specs) {
    const j = s.indexOf('=');
    feeds[s.slice(0, j)] = readNpy(s.slice(j + 1));
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const out = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  for (const name of session.outputNames) {
    writeNpy(path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy'), out[name]);
  }
}

module.exports = {ort, readNpy, writeNpy};  // for ort_batch.js

if (require.main === module) {
  main().catch(e => { console.error('ort_run.js: ' + (e && e.message || e)); process.exit(1); });
}
