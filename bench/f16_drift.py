#!/usr/bin/env python3
"""FLOAT16 drift: how far `onnx-prepack run` and ONNX Runtime land from float64 on FLOAT16 CNNs,
and how many float16 ulps each FLOAT16 operator is off on its own.

Networks (tests/runtime/f16_models.py): U-Net-like FLOAT16 models of --blocks Conv+Relu
blocks with MaxPool, Resize (nearest, linear) or ConvTranspose upsampling, Concat and
Sigmoid. Each runtime's outputs are compared with
  float:    float64 throughout, not even rounded at the output (a float evaluation);
  exact:    float64 with every node's output rounded to float16 (ONNX semantics, exact);
and with each other, ours both as ONNX defines (every node rounded) and with
`--float16-intermediates float` (float between float-computed nodes, as ONNX Runtime). Each
network twice: y = Sigmoid of the last Conv, and y = the last Conv (`_logits`).

Operators (--ops): single-node FLOAT16 models on random inputs; ulps from the correctly
rounded result (float64 then one rounding): the max, and the share of elements off by any.

Speed (--speed): steady-run median of one 20-block network, ours both ways and ONNX Runtime
(bench/ort_steady.js), fresh processes, interleaved rounds.

usage: f16_drift.py --cli build/src/cli/onnx-prepack [--blocks 4,10,20] [--ups ...] [--ops]
       [--seeds N] [--speed] [--keep DIR] [--extra-run-args "..."]
ONNX Runtime runs through tests/runtime/ort_batch.js in one node process.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "runtime"))
import f16_models  # noqa: E402

F16 = TensorProto.FLOAT16


def run_ours(cli, model_path, feeds, out_dir, extra):
    args = [cli, "run", model_path, "--threads", "1", "--output-dir", out_dir] + extra
    for n, p in feeds.items():
        args += ["--input", f"{n}={p}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"onnx-prepack run {model_path}: {p.stderr.strip()}")


def run_ort(manifest_path):
    subprocess.run(["node", os.path.join(ROOT, "tests", "runtime", "ort_batch.js"), manifest_path],
                   check=True)


def prepare(work, name, proto, feeds):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    onnx.save(proto, os.path.join(d, "model.onnx"))
    ins = {}
    for n, a in feeds.items():
        ins[n] = os.path.join(d, n + ".npy")
        np.save(ins[n], a)
    return d, ins


def load(d, who, name):
    err = os.path.join(d, who, "error.txt")
    if os.path.exists(err):
        raise RuntimeError(f"{who} {d}: {open(err).read().strip()}")
    return np.load(os.path.join(d, who, name + ".npy")).astype(np.float64)


# --- single operators -------------------------------------------------------------------------

def op_cases(rng):
    """(name, node, inputs {name: float16 array}, initializers {name: array}, float64 ref fn)."""
    cases = []

    def f16(a):
        return np.asarray(a, np.float64).astype(np.float16)

    for cin, k in ((16, 3), (64, 3), (256, 1)):
        x = f16(rng.uniform(-1, 1, (1, cin, 16, 16)))
        w = f16(rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (32, cin, k, k)))
        b = f16(rng.normal(0, 0.1, 32))
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], pads=[k // 2] * 4)
        ref = (lambda x, w=w, b=b, k=k: f16_models._conv(x, w.astype(np.float64), b.astype(np.float64), k // 2))
        cases.append((f"Conv_c{cin}_k{k}", node, {"x": x}, {"w": w, "b": b}, ref))
    x = f16(rng.uniform(-1, 1, (1, 32, 8, 8)))
    w = f16(rng.normal(0, 0.2, (32, 16, 2, 2)))
    b = f16(rng.normal(0, 0.1, 16))
    cases.append(("ConvTranspose_2x2s2",
                  helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
                  {"x": x}, {"w": w, "b": b},
                  lambda x, w=w, b=b: f16_models._conv_transpose2(x, w.astype(np.float64), b.astype(np.float64))))
    x = f16(rng.uniform(-8, 8, (1, 16, 32, 32)))
    cases.append(("Sigmoid", helper.make_node("Sigmoid", ["x"], ["y"]), {"x": x}, {},
                  lambda x: 1 / (1 + np.exp(-x))))
    cases.append(("Tanh", helper.make_node("Tanh", ["x"], ["y"]), {"x": x}, {}, np.tanh))
    cases.append(("Exp", helper.make_node("Exp", ["x"], ["y"]), {"x": f16(rng.uniform(-8, 8, (16, 256)))}, {},
                  np.exp))
    cases.append(("Relu", helper.make_node("Relu", ["x"], ["y"]), {"x": x}, {}, lambda x: np.maximum(x, 0)))
    cases.append(("MaxPool_2x2", helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
                  {"x": x}, {}, f16_models._maxpool2))
    cases.append(("AveragePool_3x3",
                  helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[1, 1]),
                  {"x": x}, {},
                  lambda x: np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3)).mean(axis=(4, 5))))
    cases.append(("GlobalAveragePool", helper.make_node("GlobalAveragePool", ["x"], ["y"]), {"x": x}, {},
                  lambda x: x.mean(axis=(2, 3), keepdims=True)))
    scales = np.array([1, 1, 2, 2], np.float32)
    cases.append(("Resize_nearest",
                  helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest",
                                   coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
                  {"x": x}, {"s": scales}, lambda x: f16_models._resize2(x, "nearest")))
    cases.append(("Resize_linear",
                  helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear",
                                   coordinate_transformation_mode="half_pixel"),
                  {"x": x}, {"s": scales}, lambda x: f16_models._resize2(x, "linear")))
    xs = f16(rng.uniform(-6, 6, (64, 100)))
    cases.append(("Softmax", helper.make_node("Softmax", ["x"], ["y"], axis=-1), {"x": xs}, {},
                  lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)))
    a, b2 = f16(rng.uniform(-4, 4, (64, 100))), f16(rng.uniform(-4, 4, (64, 100)))
    cases.append(("Add", helper.make_node("Add", ["x", "z"], ["y"]), {"x": a, "z": b2}, {}, lambda x, z: x + z))
    cases.append(("Mul", helper.make_node("Mul", ["x", "z"], ["y"]), {"x": a, "z": b2}, {}, lambda x, z: x * z))
    cases.append(("Div", helper.make_node("Div", ["x", "z"], ["y"]), {"x": a, "z": b2 + f16(8)}, {},
                  lambda x, z: x / z))
    sc, bi, mu = f16(rng.uniform(0.5, 2, 16)), f16(rng.normal(0, 1, 16)), f16(rng.normal(0, 1, 16))
    var = f16(rng.uniform(0.5, 2, 16))
    cases.append(("BatchNormalization",
                  helper.make_node("BatchNormalization", ["x", "sc", "bi", "mu", "var"], ["y"], epsilon=1e-5),
                  {"x": x}, {"sc": sc, "bi": bi, "mu": mu, "var": var},
                  lambda x: ((x - mu.astype(np.float64).reshape(1, -1, 1, 1)) /
                             np.sqrt(var.astype(np.float64).reshape(1, -1, 1, 1) + np.float64(np.float32(1e-5))) *
                             sc.astype(np.float64).reshape(1, -1, 1, 1) + bi.astype(np.float64).reshape(1, -1, 1, 1))))
    return cases


def op_model(name, node, inputs, inits):
    g = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, F16, list(a.shape)) for n, a in inputs.items()],
        [helper.make_tensor_value_info("y", F16, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def ulps(got, exact):
    """(max ulps from the correctly rounded result, share of elements not correctly rounded)."""
    cr = exact.astype(np.float16)
    d = np.abs(f16_models.ordered(got.astype(np.float16)) - f16_models.ordered(cr))
    return int(d.max()), float((d > 0).mean())


def ops_report(a, work, rng):
    cases = op_cases(rng)
    manifest, dirs = [], []
    for name, node, inputs, inits, _ in cases:
        d, ins = prepare(work, "op_" + name, op_model(name, node, inputs, inits), inputs)
        manifest.append({"model": os.path.join(d, "model.onnx"), "out_dir": os.path.join(d, "ort"), "inputs": ins})
        dirs.append((d, ins))
    mp = os.path.join(work, "ops_manifest.json")
    json.dump(manifest, open(mp, "w"))
    run_ort(mp)
    print("| operator | ours: max ulps, share off | ONNX Runtime: max ulps, share off |")
    print("|---|---|---|")
    for (name, node, inputs, inits, ref), (d, ins) in zip(cases, dirs):
        run_ours(a.cli, os.path.join(d, "model.onnx"), ins, os.path.join(d, "ours"), a.extra)
        exact = ref(*[v.astype(np.float64) for v in inputs.values()])
        o = ulps(load(d, "ours", "y"), exact)
        r = ulps(load(d, "ort", "y"), exact)
        print(f"| {name} | {o[0]}, {o[1]:.2%} | {r[0]}, {r[1]:.2%} |")


# --- networks ---------------------------------------------------------------------------------

def nets_report(a, work):
    models = []
    for blocks in a.blocks:
        for up in a.ups:
            for head in ("sigmoid", "logits"):
                for seed in range(a.seeds):
                    models.append(f16_models.unet(blocks, up=up, seed=seed, width=a.width,
                                                  size=a.size, head=head))
    manifest, dirs = [], []
    for m in models:
        d, ins = prepare(work, f"{m.name}_s{len(dirs)}", m.proto, m.inputs)
        manifest.append({"model": os.path.join(d, "model.onnx"), "out_dir": os.path.join(d, "ort"), "inputs": ins})
        dirs.append((d, ins))
    mp = os.path.join(work, "nets_manifest.json")
    json.dump(manifest, open(mp, "w"))
    run_ort(mp)
    rows = {}
    for m, (d, ins) in zip(models, dirs):
        run_ours(a.cli, os.path.join(d, "model.onnx"), ins, os.path.join(d, "ours"), a.extra)
        run_ours(a.cli, os.path.join(d, "model.onnx"), ins, os.path.join(d, "chains"),
                 a.extra + ["--float16-intermediates", "float"])
        raw = m.reference(m.inputs, round_each=False, round_outputs=False)["y"]
        each = m.reference(m.inputs, round_each=True)["y"]
        ours, chains, ort = load(d, "ours", "y"), load(d, "chains", "y"), load(d, "ort", "y")
        mean = lambda x, r: float(np.abs(x - r).mean())
        mx = lambda x, r: float(np.abs(x - r).max())
        row = [mean(ours, raw), mean(ort, raw), mean(chains, raw), mean(each, raw), mx(ours, raw),
               mx(ort, raw), mean(ours, each), mx(chains, ort), float((chains != ort).mean())]
        rows.setdefault(m.name, []).append(row)
    print("Mean |error| against float64 without any rounding (a float evaluation), median over "
          f"{a.seeds} seeds; `ours` rounds every node (ONNX), `chains` is "
          "`--float16-intermediates float`, `exact` is every node correctly rounded (float64 then one "
          "rounding).\n")
    print("| model | ours | ORT | ours / ORT | chains | chains / ORT | exact | ours max | ORT max "
          "| ours vs exact | chains vs ORT: max, share differing |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, rs in rows.items():
        r = np.median(np.array(rs), axis=0)
        print(f"| {name} | {r[0]:.2e} | {r[1]:.2e} | {r[0] / r[1]:.2f} | {r[2]:.2e} | {r[2] / r[1]:.2f} "
              f"| {r[3]:.2e} | {r[4]:.2e} | {r[5]:.2e} | {r[6]:.2e} | {r[7]:.2e}, {r[8]:.2%} |")


def speed_report(a, work):
    """Steady-run time of one larger network: ours both ways and ONNX Runtime, fresh processes,
    interleaved rounds, medians (the machine is shared)."""
    m = f16_models.unet(20, up="mixed", seed=0, width=a.speed_width, size=a.speed_size)
    d, ins = prepare(work, "speed_" + m.name, m.proto, m.inputs)
    model = os.path.join(d, "model.onnx")
    feeds = [f"{n}={p}" for n, p in ins.items()]
    times = {"ours": [], "chains": [], "ort": []}
    for _ in range(a.speed_rounds):
        for who in times:
            if who == "ort":
                p = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_steady.js"), model,
                                    str(a.speed_runs)] + feeds, capture_output=True, text=True,
                                   check=True)
                times[who].append(json.loads(p.stdout)["median_ms"])
                continue
            args = [a.cli, "run", model, "--threads", "1", "--repeat", str(a.speed_runs), "--json"]
            if who == "chains":
                args += ["--float16-intermediates", "float"]
            for f in feeds:
                args += ["--input", f]
            p = subprocess.run(args, capture_output=True, text=True, check=True)
            times[who].append(json.loads(p.stdout)["timings_ms"]["steady_run_median"])
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"\nSteady run, {m.name} width {a.speed_width} input 1x3x{a.speed_size}x{a.speed_size}, "
          f"1 thread, median of {a.speed_rounds} interleaved rounds x {a.speed_runs} runs (ms):\n")
    print("| ours (float16) | ours (float chains) | ONNX Runtime | ours / ORT | chains / ORT |")
    print("|---|---|---|---|---|")
    print(f"| {med['ours']:.1f} | {med['chains']:.1f} | {med['ort']:.1f} | "
          f"{med['ours'] / med['ort']:.2f} | {med['chains'] / med['ort']:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--blocks", default="4,10,20")
    ap.add_argument("--ups", default="resize_nearest,resize_linear,convtranspose,mixed")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--ops", action="store_true", help="also the single-operator ulp table")
    ap.add_argument("--no-nets", action="store_true")
    ap.add_argument("--speed", action="store_true", help="also steady-run times against ORT")
    ap.add_argument("--speed-width", type=int, default=32)
    ap.add_argument("--speed-size", type=int, default=128)
    ap.add_argument("--speed-rounds", type=int, default=5)
    ap.add_argument("--speed-runs", type=int, default=10)
    ap.add_argument("--extra-run-args", default="", help="more `onnx-prepack run` arguments")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    a.blocks = [int(b) for b in a.blocks.split(",")]
    a.ups = a.ups.split(",")
    a.extra = shlex.split(a.extra_run_args)
    work = a.keep or tempfile.mkdtemp(prefix="f16_drift.")
    if a.ops:
        ops_report(a, work, np.random.default_rng(7))
        print()
    if not a.no_nets:
        nets_report(a, work)
    if a.speed:
        speed_report(a, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
