#!/usr/bin/python3
"""ConvInteger / QLinearConv benchmark: a CNN as onnxruntime's quantize_dynamic writes it
(--form dynamic, the default), blocks of

  x float -> DynamicQuantizeLinear -> ConvInteger(W uint8 [Co, Ci, 3, 3], pads 1, zero point)
    -> Cast(float) -> Mul(x_scale * w_scale) -> Add(bias [Co, 1, 1]) -> Relu

or in the QOperator form quantize_static writes (--form qlinear):

  x float -> QuantizeLinear(uint8) -> QLinearConv(W int8 [Co, Ci, 3, 3], per-channel w_scale,
    w_zero_point 0, int32 B, pads 1, y uint8) x 5 -> DequantizeLinear

(--form qlinear-u8: W uint8 with w_zero_point 128, where ONNX Runtime sums exactly as we do;
with int8 W its x86 kernels sum pairs of products in saturating int16, docs/decisions.md)

over channels 16 -> 32 -> 64 -> 64 -> 32 -> 16 (5 blocks) on 64 x 64 maps (--size), run by
our CLI (`run --repeat`) and ONNX Runtime (bench/ort_load.js) at each thread count. Every
measurement is a fresh process; the configurations are interleaved in a shuffled order per
round; steady-run medians (min-max) are printed as a markdown table. --cli-before adds a
second build of ours (e.g. the direct loops before the int8 GEMM path).

usage: bench/convint_cnn_bench.py --cli build/src/cli/onnx-prepack [--cli-before OLD_CLI]
         [--form dynamic|dynamic-resnet|qlinear|qlinear-u8] [--workdir DIR] [--rounds 5] [--runs 10] [--threads 1]
         [--size 64]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHANNELS = [16, 32, 64, 64, 32, 16]


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def make_model(path, size):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    inits, nodes = [], []
    x = "x"
    for i, (ci, co) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        t = "c%d" % i
        w = rng.integers(0, 256, size=(co, ci, 3, 3)).astype(np.uint8)
        inits.extend([numpy_helper.from_array(w, t + "_w"),
                      numpy_helper.from_array(np.array(128, np.uint8), t + "_wzp"),
                      numpy_helper.from_array(np.array(0.002, np.float32), t + "_ws"),
                      numpy_helper.from_array(
                          (rng.standard_normal((co, 1, 1)) * 0.1).astype(np.float32), t + "_b")])
        nodes.extend([
            helper.make_node("DynamicQuantizeLinear", [x], [t + "_q", t + "_s", t + "_z"]),
            helper.make_node("ConvInteger", [t + "_q", t + "_w", t + "_z", t + "_wzp"],
                             [t + "_i"], pads=[1, 1, 1, 1]),
            helper.make_node("Cast", [t + "_i"], [t + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [t + "_s", t + "_ws"], [t + "_scale"]),
            helper.make_node("Mul", [t + "_f", t + "_scale"], [t + "_m"]),
            helper.make_node("Add", [t + "_m", t + "_b"], [t + "_a"]),
            helper.make_node("Relu", [t + "_a"], [t + "_y"]),
        ])
        x = t + "_y"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    g = helper.make_graph(
        nodes, "convint_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS[0], size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS[-1], size, size])],
        initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def make_qlinear_model(path, size, w_type="s8"):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(np.array(1.0 / 64, np.float32), "x_s"),
             numpy_helper.from_array(np.array(128, np.uint8), "x_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["q_in"])]
    x, xs, xz = "q_in", "x_s", "x_z"
    for i, (ci, co) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        t = "c%d" % i
        if w_type == "u8":  # ORT's exact u8 x u8 kernels (its u8 x s8 pairs saturate in int16)
            w = rng.integers(1, 256, size=(co, ci, 3, 3)).astype(np.uint8)
            wz = np.full(co, 128, np.uint8)
        else:
            w = rng.integers(-127, 128, size=(co, ci, 3, 3)).astype(np.int8)
            wz = np.zeros(co, np.int8)
        # y_scale keeps typical outputs inside uint8 (sums of ci * 9 products).
        inits.extend([numpy_helper.from_array(w, t + "_w"),
                      numpy_helper.from_array(
                          (0.002 + 0.002 * rng.random(co)).astype(np.float32), t + "_ws"),
                      numpy_helper.from_array(wz, t + "_wz"),
                      numpy_helper.from_array(np.array(0.05 * np.sqrt(ci), np.float32), t + "_ys"),
                      numpy_helper.from_array(np.array(64, np.uint8), t + "_yz"),
                      numpy_helper.from_array(
                          rng.integers(-2000, 2000, size=co).astype(np.int32), t + "_b")])
        nodes.append(helper.make_node(
            "QLinearConv", [x, xs, xz, t + "_w", t + "_ws", t + "_wz", t + "_ys", t + "_yz",
                            t + "_b"], [t + "_y"], pads=[1, 1, 1, 1]))
        x, xs, xz = t + "_y", t + "_ys", t + "_yz"
    nodes.append(helper.make_node("DequantizeLinear", [x, xs, xz], ["y"]))
    g = helper.make_graph(
        nodes, "qlinear_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS[0], size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS[-1], size, size])],
        initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def make_resnet_model(path, size):
    """A ResNet-like stack in quantize_dynamic's Conv form (--form dynamic-resnet): a 3 -> 16
    stride-2 stem, a residual block (two 3x3 convs, the input added before the last Relu) at 16,
    32 and 64 channels with stride-2 3x3 convs between them, and a 1x1 conv; every Conv is
    DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul -> Add(bias) [-> Add(residual)] -> Relu."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    inits, nodes = [], []
    count = [0]

    def conv(x, ci, co, k, stride, residual=None):
        t = "c%d" % count[0]
        count[0] += 1
        w = rng.integers(0, 256, size=(co, ci, k, k)).astype(np.uint8)
        inits.extend([numpy_helper.from_array(w, t + "_w"),
                      numpy_helper.from_array(np.array(128, np.uint8), t + "_wzp"),
                      numpy_helper.from_array(np.array(0.02 / np.sqrt(ci * k * k), np.float32),
                                              t + "_ws"),
                      numpy_helper.from_array(
                          (rng.standard_normal((co, 1, 1)) * 0.1).astype(np.float32), t + "_b")])
        p = k // 2
        nodes.extend([
            helper.make_node("DynamicQuantizeLinear", [x], [t + "_q", t + "_s", t + "_z"]),
            helper.make_node("ConvInteger", [t + "_q", t + "_w", t + "_z", t + "_wzp"],
                             [t + "_i"], pads=[p, p, p, p], strides=[stride, stride]),
            helper.make_node("Cast", [t + "_i"], [t + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [t + "_s", t + "_ws"], [t + "_scale"]),
            helper.make_node("Mul", [t + "_f", t + "_scale"], [t + "_m"]),
            helper.make_node("Add", [t + "_m", t + "_b"], [t + "_a"]),
        ])
        y = t + "_a"
        if residual is not None:
            nodes.append(helper.make_node("Add", [y, residual], [t + "_r"]))
            y = t + "_r"
        nodes.append(helper.make_node("Relu", [y], [t + "_y"]))
        return t + "_y"

    x = conv("x", 3, 16, 3, 2)
    ci = 16
    for co in (16, 32, 64):
        if co != ci:
            x = conv(x, ci, co, 3, 2)
        x = conv(conv(x, co, co, 3, 1), co, co, 3, 1, residual=x)
        ci = co
    x = conv(x, 64, 64, 1, 1)
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    out = size // 16
    g = helper.make_graph(
        nodes, "convint_resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, out, out])],
        initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def dims(size, channels=CHANNELS[0]):
    return "1x%dx%dx%d" % (channels, size, size)


def ours(cli, model, size, threads, runs):
    j = json.loads(sh([cli, "run", model, "--input", "x=random:" + model_dims(model, size),
                       "--threads",
                       str(threads), "--repeat", str(runs), "--cache", "off", "--json"]))
    return j["timings_ms"]["steady_run_median"]


def ort(model, size, threads, runs):
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x",
                       model_dims(model, size),
                       "--threads", str(threads), "--runs", str(runs)]))
    return j["steady_median_ms"]


def model_dims(model, size):
    return dims(size, 3) if "resnet" in os.path.basename(model) else dims(size)


def fmt(values):
    return "%.1f (%.1f-%.1f)" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cli-before")
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-convint-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--runs-before", type=int, default=2)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--form", choices=["dynamic", "dynamic-resnet", "qlinear", "qlinear-u8"], default="dynamic")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    qlinear = a.form.startswith("qlinear")
    resnet = a.form == "dynamic-resnet"
    model = os.path.join(a.workdir, "%s_cnn_%d.onnx" % (
        a.form.replace("-", "_") if qlinear else "convint_resnet" if resnet else "convint", a.size))
    if not os.path.exists(model):
        if resnet:
            make_resnet_model(model, a.size)
        elif qlinear:
            make_qlinear_model(model, a.size, "u8" if a.form == "qlinear-u8" else "s8")
        else:
            make_model(model, a.size)
    macs = sum(ci * co * 9 for ci, co in zip(CHANNELS, CHANNELS[1:])) * a.size * a.size
    if resnet:
        print("quantize_dynamic ResNet-like CNN: 1x3x%dx%d, 9 ConvInteger (stride-2 stem and "
              "downsampling, residual blocks at 16/32/64 channels, a 1x1), %d rounds, %d steady "
              "runs each\n" % (a.size, a.size, a.rounds, a.runs))
    else:
        print("%s CNN: %s, %d %s 3x3 on %dx%d maps (%.0f M MACs), "
          "%d rounds, %d steady runs each\n" % ("QOperator" if qlinear else "quantize_dynamic",
                                               dims(a.size), len(CHANNELS) - 1,
                                               "QLinearConv" if qlinear else "ConvInteger", a.size,
                                               a.size, macs / 1e6, a.rounds, a.runs))
    head = "| threads | ours steady (ms) | ORT steady (ms) | ours / ORT |"
    if a.cli_before:
        head += " ours before (ms) |"
    print(head)
    print("|---|---|---|---|" + ("---|" if a.cli_before else ""))
    for t in (int(v) for v in a.threads.split(",")):
        configs = {"ours": lambda: ours(a.cli, model, a.size, t, a.runs),
                   "ort": lambda: ort(model, a.size, t, a.runs)}
        if a.cli_before:
            configs["before"] = lambda: ours(a.cli_before, model, a.size, t, a.runs_before)
        results = {k: [] for k in configs}
        for _ in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                results[k].append(configs[k]())
        ratio = statistics.median(results["ours"]) / statistics.median(results["ort"])
        row = "| %d | %s | %s | %.2f |" % (t, fmt(results["ours"]), fmt(results["ort"]), ratio)
        if a.cli_before:
            row += " %s |" % fmt(results["before"])
        print(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
