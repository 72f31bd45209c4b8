#!/usr/bin/env node
// Runs the generated decoders and encoders with ONNX Runtime in one process
// (tests/runtime/generate_llm_test.py). usage: node generate_llm_ort.js JOBS.json
//
// A decoder job {"kind": "decoder", "model", "form": "genai"|"optimum", "layers",
// "kv_heads", "head_size", "prompts": [[ids]...], "steps", "out", optional "padding":
// "right"|"left"} runs the prompts (padded with id 0, on the right by default) and then `steps`
// greedy decode steps, feeding present.N.* back as past_key_values.N.*, and writes
// {"tokens": [B][steps + 1], "logits": [B][steps + 1][V]} (the logits of each sequence's last
// real position). The attention masks follow each layout: genai (GroupQueryAttention) reads
// only each row's sum, so a row is 1s then 0s; optimum (Concat cache) masks by position: the
// prompt's 1s, its padding's 0s, then a 1 per step. Left padding (optimum only, as Hugging
// Face batches): the padding's 0s first; position_ids count the real tokens from 0, padding at 1.
// tests/runtime/decoder_vs_ort.py builds the same feeds for onnx-prepack (keep them in step).
// An encoder job {"kind": "encoder", "model", "feeds": {name: [[int]]}, "out"} writes
// {"last_hidden_state": flat floats, "dims"}. A failure writes {"error": message}.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'tools', 'peers', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function i64(rows) {
  const b = rows.length, n = rows[0].length;
  const data = new BigInt64Array(b * n);
  rows.forEach((r, i) => r.forEach((v, j) => { data[i * n + j] = BigInt(v); }));
  return new ort.Tensor('int64', data, [b, n]);
}

function argmax(a, off, n) {
  let best = 0;
  for (let i = 1; i < n; ++i) if (a[off + i] > a[off + best]) best = i;
  return best;
}

async function decoder(job, session) {
  const B = job.prompts.length;
  const lens = job.prompts.map(p => p.length);
  const P = Math.max(...lens);
  const left = job.padding === 'left';
  if (left && job.form !== 'optimum') throw new Error('left padding needs the optimum form');
  const feeds = {};
  for (let l = 0; l < job.layers; ++l) {
    for (const kv of ['key', 'value']) {
      feeds[`past_key_values.${l}.${kv}`] =
          new ort.Tensor('float32', new Float32Array(0), [B, job.kv_heads, 0, job.head_size]);
    }
  }
  const tokens = job.prompts.map(() => []);
  const logits = job.prompts.map(() => []);
  for (let step = 0; step <= job.steps; ++step) {
    const T = P + step;
    let ids, mask, pos, S;
    if (step === 0 && left) {
      S = P;
      ids = job.prompts.map(p => new Array(P - p.length).fill(0).concat(p));
      mask = lens.map(n => Array.from({length: P}, (_, j) => (j >= P - n ? 1 : 0)));
      pos = lens.map(n => Array.from({length: P}, (_, j) => (j >= P - n ? j - (P - n) : 1)));
    } else if (step === 0) {
      S = P;
      ids = job.prompts.map(p => p.concat(new Array(P - p.length).fill(0)));
      mask = lens.map(n => Array.from({length: P}, (_, j) => (j < n ? 1 : 0)));
      pos = lens.map(n => Array.from({length: P}, (_, j) => (j < n ? j : 1)));
    } else {
      S = 1;
      ids = tokens.map(t => [t[t.length - 1]]);
      if (left) {
        mask = lens.map(n => Array.from({length: T}, (_, j) => (j >= P - n ? 1 : 0)));
      } else if (job.form === 'genai') {
        mask = lens.map(n => Array.from({length: T}, (_, j) => (j < n + step ? 1 : 0)));
      } else {
        mask = lens.map(n => Array.from({length: T}, (_, j) => (j < n || j >= P ? 1 : 0)));
      }
      pos = lens.map(n => [n + step - 1]);
    }
    feeds.input_ids = i64(ids);
    feeds.attention_mask = i64(mask);
    if (job.form === 'optimum') feeds.position_ids = i64(pos);
    const out = await session.run(feeds);
    const lg = out.logits;
    const V = lg.dims[2];
    for (let b = 0; b < B; ++b) {
      const row = step > 0 ? 0 : left ? P - 1 : lens[b] - 1;
      const off = (b * S + row) * V;
      logits[b].push(Array.from(lg.data.subarray(off, off + V)));
      tokens[b].push(argmax(lg.data, off, V));
    }
    for (let l = 0; l < job.layers; ++l) {
      for (const kv of ['key', 'value']) {
        feeds[`past_key_values.${l}.${kv}`] = out[`present.${l}.${kv}`];
      }
    }
  }
  return {tokens, logits};
}

async function encoder(job, session) {
  const feeds = {};
  for (const [name, rows] of Object.entries(job.feeds)) feeds[name] = i64(rows);
  const out = await session.run(feeds);
  const y = out.last_hidden_state;
  return {last_hidden_state: Array.from(y.data), dims: y.dims};
}

async function main() {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    let result;
    try {
      const session = await ort.InferenceSession.create(job.model, {
        executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
      });
      result = job.kind === 'decoder' ? await decoder(job, session) : await encoder(job, session);
    } catch (e) {
      result = {error: String(e && e.message || e)};
    }
    fs.writeFileSync(job.out, JSON.stringify(result));
  }
}

main().catch(e => { console.error('generate_llm_ort.js: ' + (e && e.message || e)); process.exit(1); });
