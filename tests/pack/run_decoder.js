// Runs an ONNX model with no inputs in onnxruntime-node and writes the raw
// bytes of its first output. Used by tests/pack/gemm_b_format_test.cc.
//   node run_decoder.js <onnxruntime-node dir> <model.onnx> <out.bin>
'use strict';
const fs = require('fs');
const [, , ortDir, modelPath, outPath] = process.argv;
const ort = require(ortDir);

(async () => {
  const session = await ort.InferenceSession.create(modelPath);
  const results = await session.run({});
  const out = results[session.outputNames[0]];
  const data = out.data;
  fs.writeFileSync(outPath, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  console.log(`ok ${out.type} [${out.dims.join(', ')}]`);
})().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
