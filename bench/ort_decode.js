// ONNX Runtime's side of bench/llm_bench.py: a genai-form decoder's session
// create, its prompt step (the first token) and greedy decode steps, each
// step's present.N.* fed back as the next past_key_values.N.* (ORT's own
// non-shared cache; onnxruntime-genai is not on npm). Prints one JSON line
// {"create_ms", "first_token_ms", "decode_ms": [per step], "tokens": [...]}.
//   node bench/ort_decode.js MODEL --prompt 1,2,3 --steps N [--threads T]
'use strict';
const path = require('path');
const ort = require(path.join(process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', 'tools', 'peers', 'node_modules'), 'onnxruntime-node'));

function i64(row) {
  return new ort.Tensor('int64', BigInt64Array.from(row.map(BigInt)), [1, row.length]);
}

(async () => {
  const model = process.argv[2];
  let prompt = [1, 2, 3], steps = 16, threads = 1;
  const a = process.argv.slice(3);
  for (let k = 0; k < a.length; ++k) {
    if (a[k] === '--prompt') prompt = a[++k].split(',').map(Number);
    else if (a[k] === '--steps') steps = +a[++k];
    else if (a[k] === '--threads') threads = +a[++k];
    else throw new Error('unknown argument ' + a[k]);
  }
  const t0 = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  });
  const t1 = process.hrtime.bigint();
  // Empty pasts [1, kv_heads, 0, head_size], the dims read off the model's declared inputs.
  const feeds = {};
  for (const md of s.inputMetadata) {
    if (/^past_key_values\.\d+\.(key|value)$/.test(md.name)) {
      feeds[md.name] = new ort.Tensor('float32', new Float32Array(0), [1, md.shape[1], 0, md.shape[3]]);
    }
  }
  const tokens = [];
  let ids = prompt, T = prompt.length;
  const decode = [];
  let first = 0;
  for (let step = 0; step <= steps; ++step) {
    feeds.input_ids = i64(ids);
    feeds.attention_mask = i64(new Array(T).fill(1));
    const ts = process.hrtime.bigint();
    const out = await s.run(feeds);
    const lg = out.logits, V = lg.dims[2], off = (ids.length - 1) * V;
    let best = 0;
    for (let i = 1; i < V; ++i) if (lg.data[off + i] > lg.data[off + best]) best = i;
    const ms = Number(process.hrtime.bigint() - ts) / 1e6;
    if (step === 0) first = ms; else decode.push(ms);
    tokens.push(best);
    for (const name of Object.keys(feeds)) {
      const m = /^past_key_values\.(\d+)\.(key|value)$/.exec(name);
      if (m) feeds[name] = out[`present.${m[1]}.${m[2]}`];
    }
    ids = [best];
    T += 1;
  }
  console.log(JSON.stringify({create_ms: Number(t1 - t0) / 1e6, first_token_ms: first,
                              decode_ms: decode, tokens}));
})().catch(e => { console.error('ort_decode.js: ' + (e && e.message || e)); process.exit(1); });
