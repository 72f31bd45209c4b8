// ORT steady-run CPU time (process.cpuUsage, median of 10 after 3 warm-ups) at 1 thread;
// with a 4th argument, ORT profiling on (per-node times in /tmp/ort-profile*.json).
//   node bench/ort_cpu.js MODEL H W [profile]
const ort = require(require('path').join(__dirname, '..', 'tools', 'peers', 'node_modules', 'onnxruntime-node'));
(async () => {
  const [model, h, w, prof] = [process.argv[2], +process.argv[3], +process.argv[4], process.argv[5]];
  const opts = {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'};
  if (prof) { opts.enableProfiling = true; opts.profileFilePrefix = '/tmp/ort-profile'; }
  const s = await ort.InferenceSession.create(model, opts);
  const x = new ort.Tensor('float32', new Float32Array(3 * h * w).map((_, i) => Math.sin(i)), [1, 3, h, w]);
  const feeds = {[s.inputNames[0]]: x};
  for (let i = 0; i < 3; ++i) await s.run(feeds);
  const cpu = [];
  for (let i = 0; i < 10; ++i) {
    const c0 = process.cpuUsage();
    await s.run(feeds);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  cpu.sort((a, b) => a - b);
  console.log('ort cpu ms median', cpu[5].toFixed(1), 'min', cpu[0].toFixed(1));
  if (prof) {
    const file = s.endProfiling ? s.endProfiling() : null;
    console.log('profile', file);
  }
})();
