#!/usr/bin/env node
// ONNX Runtime side of the differential fuzzer (tools/difffuzz/run.py): runs many models in
// one process. usage: node ort_batch.js MANIFEST.json
// The manifest is a list of {"model", "out_dir", "inputs": {name: file.npy}}. Before a case
// it prints "BEGIN i" and after it "END i" on stdout, so that the driver can time each model
// and kill and restart this process past its timeout. Outputs go to out_dir/<name>.npy, a
// refusal to out_dir/error.txt. Reads and writes every numeric .npy type ORT takes.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', 'peers', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

const kTypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '|i1': ['int8', Int8Array], '<i2': ['int16', Int16Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array],
  '<u2': ['uint16', Uint16Array], '<u4': ['uint32', Uint32Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};
const kDescr = Object.fromEntries(Object.entries(kTypes).map(([d, [t]]) => [t, d]));

function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
      .filter(s => s.length).map(Number);
  if (!kTypes[descr]) throw new Error(file + ': type ' + descr);
  const [type, Ctor] = kTypes[descr];
  const start = hstart + hlen;
  // A copy: typed arrays need aligned storage.
  const bytes = new Uint8Array(b.length - start);
  b.copy(Buffer.from(bytes.buffer), 0, start);
  return new ort.Tensor(type, new Ctor(bytes.buffer), shape);
}

function writeNpy(file, tensor) {
  const descr = kDescr[tensor.type];
  if (!descr) throw new Error('output type ' + tensor.type + ' has no .npy form here');
  const dims = tensor.dims.map(String);
  const shape = '(' + dims.join(', ') + (dims.length === 1 ? ',' : '') + ')';
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - 10 - header.length - 1) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    process.stdout.write('BEGIN ' + i + '\n');
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
    process.stdout.write('END ' + i + '\n');
  }
}

main().catch(e => { console.error('ort_batch.js: ' + (e && e.message || e)); process.exit(1); });
