#!/usr/bin/env python3
"""Runs the ONNX backend node tests through `onnx-prepack run`, as a user would.

For every test folder (model.onnx + test_data_set_*/input_*.pb, output_*.pb) the
inputs are written as .npy files, the CLI runs the model with
`--input NAME=FILE.npy ... --output-dir DIR`, and the .npy outputs are compared
with the expected ones the way onnx's backend runner does (same number of
outputs, same dtype, same shape, |got - want| <= atol + rtol |want| with
atol 1e-7, rtol 1e-3, NaN equal to NaN; integers and bools exactly).

Prints the pass count, the failures counted by reason and by operator, and
writes one line per test to --report. Exits 1 when fewer than --floor pass.

usage: node_tests.py --cli ONNX_PREPACK [--data DIR] [--jobs N] [--floor N]
                     [--report FILE] [--filter SUBSTRING] [--keep DIR]
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

RTOL = 1e-3
ATOL = 1e-7
CASE_TIMEOUT_S = 60


# numpy has no bfloat16: the CLI reads and writes its bit patterns as uint16
# .npy (docs/cli.md). Test data may hold them as uint16 already (older onnx) or
# as float32 values (newer onnx's to_array); both are mapped to that form.
BFLOAT16 = onnx.TensorProto.BFLOAT16


def bfloat16_bits(arr):
    """uint16 bit patterns of float values that are exact bfloat16 numbers."""
    return (np.asarray(arr, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def npy_name(output_name):
    """The file name `run --output-dir` gives an output (docs/cli.md)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", output_name) + ".npy"


def op_types(model):
    ops = sorted({(n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                  for n in model.graph.node})
    return ops


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(got, want):
    """'' when `got` matches `want` as onnx's backend runner requires, else why not."""
    if got.dtype != want.dtype:
        return "mismatch", f"dtype {got.dtype} vs {want.dtype}"
    if got.shape != want.shape:
        return "mismatch", f"shape {got.shape} vs {want.shape}"
    if want.dtype.kind in "fc":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        nan_ok = np.isnan(g) == np.isnan(w)
        inf_ok = np.where(np.isinf(w), g == w, True)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - w) <= ATOL + RTOL * np.abs(w)
        ok = np.where(np.isnan(w), np.isnan(g), np.where(np.isinf(w), inf_ok, close)) & nan_ok
    else:
        ok = got == want
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok).reshape(got.shape))
        i = tuple(bad[0])
        return "mismatch", (f"{len(bad)} of {got.size} elements differ, first at {list(i)}: "
                            f"got {got[i]!r}, want {want[i]!r}")
    return "", ""


def classify_cli_error(stderr):
    """(reason, detail) from the CLI's error message."""
    text = stderr.strip().splitlines()
    msg = text[-1] if text else "(no message)"
    m = re.search(r"unsupported operators?: (.*)", msg)
    if m:
        return "unsupported operator", m.group(1)
    if re.search(r"opset \d+ is not supported", msg):
        return "opset refused", msg
    if "element type" in msg and "not supported" in msg:
        return "npy type refused", msg
    if re.search(r"input '[^']*': type \w+, the graph declares", msg):
        return "input type refused", msg
    return "run error", msg


def run_case(cli, case_dir, work_root):
    """Returns (name, ops, status, reason, detail): status 'pass' or 'fail'."""
    name = os.path.basename(case_dir)
    try:
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
    except Exception as e:  # a model onnx itself cannot read
        return name, [], "fail", "unreadable model", str(e)
    ops = op_types(model)
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    fed_names = [v.name for v in graph.input if v.name not in inits]
    work = tempfile.mkdtemp(prefix=name + ".", dir=work_root)
    try:
        sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set*")))
        if not sets:
            return name, ops, "fail", "no test data", ""
        for s in sets:
            n_in = len(glob.glob(os.path.join(s, "input_*.pb")))
            n_out = len(glob.glob(os.path.join(s, "output_*.pb")))
            args = [cli, "run", os.path.join(case_dir, "model.onnx"), "--threads", "1"]
            for i in range(n_in):
                vi = graph.input[i] if i < len(graph.input) else None
                if vi is None or not vi.type.HasField("tensor_type"):
                    kind = vi.type.WhichOneof("value") if vi is not None else "extra input"
                    return name, ops, "fail", "non-tensor input", f"input {i}: {kind}"
                arr = load_tensor(os.path.join(s, f"input_{i}.pb"))
                if arr.dtype == object:
                    return name, ops, "fail", "string tensor", f"input {i}"
                if vi.type.tensor_type.elem_type == BFLOAT16 and arr.dtype != np.uint16:
                    arr = bfloat16_bits(arr)
                in_name = fed_names[i] if i < len(fed_names) else vi.name
                path = os.path.join(work, f"in{i}.npy")
                np.save(path, arr, allow_pickle=False)
                args += ["--input", f"{in_name}={path}"]
            out_dir = os.path.join(work, "out")
            args += ["--output-dir", out_dir]
            try:
                p = subprocess.run(args, capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                return name, ops, "fail", "timeout", f"over {CASE_TIMEOUT_S} s"
            if p.returncode != 0:
                reason, detail = classify_cli_error(p.stderr)
                if p.returncode not in (1, 2, 3):
                    reason, detail = "crash", f"exit {p.returncode}: {detail}"
                return name, ops, "fail", reason, detail
            for i in range(n_out):
                vo = graph.output[i]
                if not vo.type.HasField("tensor_type"):
                    return name, ops, "fail", "non-tensor output", f"output {i}"
                want = load_tensor(os.path.join(s, f"output_{i}.pb"))
                if want.dtype == object:
                    return name, ops, "fail", "string tensor", f"output {i}"
                path = os.path.join(out_dir, npy_name(vo.name))
                if not os.path.exists(path):
                    return name, ops, "fail", "missing output", vo.name
                try:
                    got = np.load(path, allow_pickle=False)
                except Exception as e:
                    return name, ops, "fail", "unreadable output npy", f"{vo.name}: {e}"
                if (vo.type.tensor_type.elem_type == BFLOAT16 and got.dtype == np.uint16
                        and want.dtype != np.uint16):
                    got = (got.astype(np.uint32) << 16).view(np.float32)
                reason, detail = compare(got, want)
                if reason:
                    return name, ops, "fail", reason, f"{os.path.basename(s)} {vo.name}: {detail}"
            shutil.rmtree(out_dir, ignore_errors=True)
        return name, ops, "pass", "", ""
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--floor", type=int, default=0)
    ap.add_argument("--expect-cases", type=int, default=0,
                    help="fail unless exactly this many test folders are found")
    ap.add_argument("--report", default="node_tests_report.txt")
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", default="", help="work folder (default: a temporary one)")
    a = ap.parse_args()

    cases = sorted(d for d in glob.glob(os.path.join(a.data, "test_*"))
                   if os.path.isdir(d) and a.filter in os.path.basename(d))
    if a.expect_cases and len(cases) != a.expect_cases:
        print(f"node_tests: found {len(cases)} test folders under {a.data}, expected "
              f"{a.expect_cases}; is libonnx-testdata installed?", file=sys.stderr)
        return 1
    work_root = a.keep or tempfile.mkdtemp(prefix="node_tests.")
    os.makedirs(work_root, exist_ok=True)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda c: run_case(a.cli, c, work_root), cases))
    if not a.keep:
        shutil.rmtree(work_root, ignore_errors=True)
    elapsed = time.time() - t0

    passed = [r for r in results if r[2] == "pass"]
    failed = [r for r in results if r[2] != "pass"]
    by_reason = collections.Counter(r[3] for r in failed)
    unsupported = collections.Counter()
    for r in failed:
        if r[3] == "unsupported operator":
            for op in r[4].split(", "):
                unsupported[op] += 1
    with open(a.report, "w") as f:
        f.write(f"# onnx-prepack node tests: {len(passed)} of {len(results)} pass\n")
        for name, ops, status, reason, detail in results:
            f.write(f"{status}\t{name}\t{' '.join(ops)}\t{reason}\t{detail}\n")

    print(f"node_tests: {len(passed)} of {len(results)} pass, {len(failed)} fail "
          f"({elapsed:.1f} s, {a.jobs} jobs); list in {a.report}")
    print("failures by reason:")
    for k, v in by_reason.most_common():
        print(f"  {v:4d}  {k}")
    print("unsupported operators (tests needing each):")
    for k, v in unsupported.most_common():
        print(f"  {v:4d}  {k}")
    print("failures by operators of the test (other than unsupported):")
    other = collections.Counter(" ".join(r[1]) for r in failed if r[3] != "unsupported operator")
    for k, v in sorted(other.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {v:4d}  {k}")
    if len(passed) < a.floor:
        print(f"node_tests: {len(passed)} pass, below the floor of {a.floor}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
