// Times one ONNX model with ONNX Runtime's CPU provider, as docs' baselines (f) did:
// intraOpNumThreads T, interOpNumThreads 1, sequential execution, all graph optimizations,
// --warmup warm-up runs (default 5), then `runs` timed run() calls on the model's input.
//
//   node time_model.js MODEL.onnx INPUT.bin THREADS RUNS [--shape 1x3x224x224] [--ref OUTPUT.bin]
//                      [--warmup N]
//
// INPUT.bin holds the model's one float32 input, little-endian, row-major; its shape comes from
// --shape, else from the model (every dimension must then be fixed). With --ref, the first
// output is compared with OUTPUT.bin (float32) and max|y - ref| / max|ref| is reported.
// Prints one JSON line: {"threads", "runs", "median_ms", "mean_ms", "std_ms", "min_ms",
// "max_ms", "times_ms" (each run's), "rel_err"?}; on failure an {"error": "..."} line and exit
// code 1.
'use strict';

const fs = require('fs');
const path = require('path');

function fail(message) {
  console.log(JSON.stringify({error: message}));
  process.exit(1);
}

function parseArgs(argv) {
  const positional = [];
  const options = {};
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--shape' || argv[i] === '--ref' || argv[i] === '--warmup') {
      if (i + 1 >= argv.length) fail(`${argv[i]} needs a value`);
      options[argv[i].slice(2)] = argv[++i];
    } else {
      positional.push(argv[i]);
    }
  }
  if (positional.length !== 4) {
    fail('usage: time_model.js MODEL.onnx INPUT.bin THREADS RUNS [--shape DIMS] [--ref OUT.bin] ' +
         '[--warmup N]');
  }
  const [model, input, threads, runs] = positional;
  const t = Number(threads), r = Number(runs);
  if (!Number.isInteger(t) || t < 1) fail(`threads '${threads}' is not a positive integer`);
  if (!Number.isInteger(r) || r < 1) fail(`runs '${runs}' is not a positive integer`);
  const w = options.warmup === undefined ? 5 : Number(options.warmup);
  if (!Number.isInteger(w) || w < 1) fail(`--warmup '${options.warmup}' is not a positive integer`);
  return {model, input, threads: t, runs: r, warmup: w, shape: options.shape, ref: options.ref};
}

function readFloats(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  if (bytes.length % 4 !== 0) fail(`${file}: ${bytes.length} bytes is not a float32 array`);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; ++i) out[i] = bytes.readFloatLE(4 * i);
  return out;
}

function stats(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const mean = ms.reduce((a, b) => a + b, 0) / n;
  const variance = ms.reduce((a, b) => a + (b - mean) * (b - mean), 0) / n;
  return {median_ms: median, mean_ms: mean, std_ms: Math.sqrt(variance), min_ms: sorted[0],
          max_ms: sorted[n - 1]};
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    fail(`onnxruntime-node is not installed in ${__dirname}/node_modules (run scripts/install-ort.sh)`);
  }
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  if (session.inputNames.length !== 1) {
    fail(`${args.model}: ${session.inputNames.length} inputs; time_model.js feeds exactly one`);
  }
  const name = session.inputNames[0];
  let dims;
  if (args.shape) {
    dims = args.shape.split('x').map(Number);
    if (dims.some((d) => !Number.isInteger(d) || d < 1)) fail(`bad --shape '${args.shape}'`);
  } else {
    const meta = session.inputMetadata && session.inputMetadata[0];
    if (!meta || !meta.shape || meta.shape.some((d) => typeof d !== 'number')) {
      fail(`${args.model}: input '${name}' has no fixed shape; give --shape`);
    }
    dims = meta.shape;
  }
  const data = readFloats(args.input);
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count) {
    fail(`${args.input}: ${data.length} floats, input '${name}' of shape ${dims.join('x')} needs ${count}`);
  }
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};

  let outputs;
  for (let i = 0; i < args.warmup; ++i) outputs = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < args.runs; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const result = {threads: args.threads, runs: args.runs, ...stats(ms), times_ms: ms};
  if (args.ref) {
    const ref = readFloats(args.ref);
    const y = outputs[session.outputNames[0]].data;
    if (y.length !== ref.length) fail(`${args.ref}: ${ref.length} floats, the output has ${y.length}`);
    let err = 0, scale = 0;
    for (let i = 0; i < y.length; ++i) {
      err = Math.max(err, Math.abs(y[i] - ref[i]));
      scale = Math.max(scale, Math.abs(ref[i]));
    }
    result.rel_err = scale > 0 ? err / scale : err;
  }
  await session.release();
  console.log(JSON.stringify(result));
}

main().catch((e) => fail(String(e && e.message ? e.message : e).replace(/\s+/g, ' ')));
