#!/usr/bin/python3
"""The hostile single-operator models of issue 18, as cases for matrix.py to
run end to end with the CLI (tests/runtime/hostile_ops_test.cc holds the
same cases as unit tests). Uses Debian's python3-onnx and numpy.

Every case is a model, its fed inputs and what must happen:
  error=[parts]    refused with exit 2, the message holding every part (the
                   node's name and op, the rule, the values)
  invalid=[parts]  a model ONNX Runtime refuses: accepting it is the failure
  want={out: arr}  runs and gives exactly these outputs (known answers, or
                   numpy's: Debian's onnx 1.12 has no onnx.reference); within
                   rtol when given (float products in another order)
  seconds=S        the command (or, with plan_seconds, the plan) takes < S
"""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

I64_MAX = 2**63 - 1
I64_MIN = -2**63
X6 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)


class Case:
    def __init__(self, cls, name, model, feeds=None, error=None, invalid=None, want=None,
                 rtol=None, seconds=None, plan_seconds=None):
        self.cls, self.name, self.model = cls, name, model
        self.feeds = feeds or {}
        self.error, self.invalid, self.want = error, invalid, want
        self.rtol, self.seconds, self.plan_seconds = rtol, seconds, plan_seconds


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def one(op, name, inputs, outputs, opset=13, inits=(), attrs=None, out_type=T.FLOAT):
    """A graph of one node; `inputs` are (name, dtype, shape) graph inputs or
    initializer names (listed in `inits`)."""
    init_names = {t.name for t in inits}
    node_inputs, graph_inputs = [], []
    for i in inputs:
        if isinstance(i, tuple):
            graph_inputs.append(vi(*i))
            node_inputs.append(i[0])
        else:
            node_inputs.append(i)
            assert i == "" or i in init_names, i
    node = h.make_node(op, node_inputs, outputs, name=name, **(attrs or {}))
    g = h.make_graph([node], op, graph_inputs, [vi(o, out_type, None) for o in outputs],
                     list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ints(name, values, scalar=False):
    return h.make_tensor(name, T.INT64, [] if scalar else [len(values)], values)


def index_cases():
    cls = "ops: index bounds"
    ge = lambda rows: one("GatherElements", "ge", [("X", T.FLOAT, [2, 3]),
                                                   ("I", T.INT64, [rows, 1])], ["Y"],
                          attrs={"axis": 1})
    se = lambda cols: one("ScatterElements", "se", [("X", T.FLOAT, [2, 3]),
                                                    ("I", T.INT64, [1, cols]),
                                                    ("U", T.FLOAT, [1, cols])], ["Y"],
                          attrs={"axis": 0})
    i64 = lambda v, shape: np.array(v, np.int64).reshape(shape)
    upd = lambda n: np.full((1, n), 9, np.float32)
    gather = one("Gather", "ga", [("X", T.FLOAT, [2, 3]), ("I", T.INT64, [2])], ["Y"],
                 attrs={"axis": 1})
    return [
        Case(cls, "GatherElements indices [3, 1] over data [2, 3]", ge(3),
             {"X": X6, "I": i64([0, 0, 0], (3, 1))},
             error=["node 'ge' (GatherElements)", "exceed data", "axis 0 (3 > 2)"]),
        Case(cls, "ScatterElements indices [1, 4] over data [2, 3]", se(4),
             {"X": X6, "I": i64([0] * 4, (1, 4)), "U": upd(4)},
             error=["node 'se' (ScatterElements)", "exceed data", "axis 1 (4 > 3)"]),
        Case(cls, "GatherElements negative index", ge(2), {"X": X6, "I": i64([-1, 1], (2, 1))},
             want={"Y": np.array([[3], [5]], np.float32)}),
        Case(cls, "GatherElements index 3 of 3", ge(2), {"X": X6, "I": i64([0, 3], (2, 1))},
             error=["node 'ge' (GatherElements)", "index 3 is out of range for dimension 3"]),
        Case(cls, "ScatterElements negative index", se(2),
             {"X": X6, "I": i64([-1, 0], (1, 2)), "U": np.array([[7, 8]], np.float32)},
             want={"Y": np.array([[1, 8, 3], [7, 5, 6]], np.float32)}),
        Case(cls, "Gather index INT64_MAX", gather, {"X": X6, "I": i64([0, I64_MAX], (2,))},
             error=["node 'ga' (Gather)", f"index {I64_MAX} is out of range for dimension 3"]),
    ]


def tfidf(indexes, max_gram, max_skip, mode="TF", weights=None):
    attrs = {"min_gram_length": 1, "max_gram_length": max_gram, "max_skip_count": max_skip,
             "mode": mode, "ngram_counts": [0, 2], "ngram_indexes": indexes,
             "pool_int64s": [1, 2, 1, 3]}  # unigrams 1 and 2, the bigram (1, 3)
    if weights is not None:
        attrs["weights"] = weights
    return one("TfIdfVectorizer", "tf", [("X", T.INT64, [5])], ["Y"], opset=9, attrs=attrs)


def tfidf_cases():
    cls = "ops: TfIdfVectorizer"
    x = {"X": np.array([1, 2, 3, 1, 3], np.int64)}
    big = 60_000_000  # a 240 MB output row and as large a weight table
    return [
        Case(cls, "ngram_indexes INT64_MAX", tfidf([0, I64_MAX, 1], 2, 0), x,
             error=["node 'tf' (TfIdfVectorizer)", f"ngram_indexes[1] = {I64_MAX}",
                    "out of range of the output"]),
        Case(cls, "ngram_indexes 2^60", tfidf([0, 2**60, 1], 2, 0), x,
             error=["node 'tf' (TfIdfVectorizer)", "too large"]),
        Case(cls, "max_skip_count 2^62, max_gram_length 2^40", tfidf([0, 1, 2], 2**40, 2**62), x,
             want={"Y": np.array([2, 1, 3], np.float32)}, seconds=5),
        Case(cls, "weight table of 60M columns under 256 MiB",
             tfidf([0, big, 1], 2, 0, "TFIDF", [1.0, 2.0, 3.0]), x,
             error=["node 'tf' (TfIdfVectorizer)", "memory budget", "bytes"]),
    ]


def attribute_cases():
    cls = "ops: attribute overflow"
    x4 = {"X": np.ones((1, 4, 1, 1), np.float32)}
    out = [Case(cls, f"{op} blocksize 2^32",
                one(op, "ds", [("X", T.FLOAT, [1, 4, 1, 1])], ["Y"], attrs={"blocksize": 2**32}),
                x4, error=[f"node 'ds' ({op})", "blocksize 4294967296 overflows"])
           for op in ("DepthToSpace", "SpaceToDepth")]
    x2 = {"X": np.array([1, 2], np.float32)}
    out.append(Case(cls, "Pad INT64_MAX - 1 + dim",
                    one("Pad", "pd", [("X", T.FLOAT, [2]), "P"], ["Y"],
                        inits=[ints("P", [I64_MAX - 1, 5])]), x2,
                    error=["node 'pd' (Pad)", "overflow dimension 0 of size 2"]))
    out.append(Case(cls, "Pad INT64_MIN", one("Pad", "pd", [("X", T.FLOAT, [2]), "P"], ["Y"],
                                              inits=[ints("P", [I64_MIN, I64_MAX])]), x2,
                    error=["node 'pd' (Pad)", "crop dimension 0 below zero"]))
    for k, upper, kept in ((I64_MAX, 1, False), (I64_MAX, 0, True), (I64_MIN, 1, True),
                           (I64_MIN, 0, False)):
        m = one("Trilu", "tr", [("X", T.FLOAT, [2, 3]), ("K", T.INT64, [])], ["Y"], opset=14,
                attrs={"upper": upper})
        out.append(Case(cls, f"Trilu k={k} upper={upper}", m,
                        {"X": X6, "K": np.array(k, np.int64)},
                        want={"Y": X6 if kept else np.zeros_like(X6)}))
    return out


def loop_growing():
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c_out"]),
         h.make_node("Concat", ["v_in", "one"], ["v_out"], axis=0)], "body",
        [onnx.ValueInfoProto(name=n) for n in ("i", "c", "v_in")],
        [onnx.ValueInfoProto(name=n) for n in ("c_out", "v_out")],
        [h.make_tensor("one", T.FLOAT, [1], [1.0])])
    node = h.make_node("Loop", ["M", "cond", "v0"], ["v"], name="grow", body=body)
    g = h.make_graph([node], "loop", [], [vi("v", T.FLOAT, None)],
                     [ints("M", [1000000], scalar=True), h.make_tensor("cond", T.BOOL, [], [1]),
                      h.make_tensor("v0", T.FLOAT, [1], [1.0])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def work_cases():
    cls = "ops: work bounds"
    roi_in = [("X", T.FLOAT, [1, 1, 4, 4]), ("rois", T.FLOAT, [1, 4]), ("bi", T.INT64, [1])]
    feeds = lambda rois: {"X": np.ones((1, 1, 4, 4), np.float32),
                          "rois": np.array([rois], np.float32), "bi": np.array([0], np.int64)}
    roi = one("RoiAlign", "roi", roi_in, ["Y"], opset=16,
              attrs={"output_height": 2, "output_width": 2})
    roi2 = one("RoiAlign", "roi2", roi_in, ["Y"], opset=16, attrs={"sampling_ratio": 2**40})
    letters = [chr(ord("a") + i) for i in range(26)] + [chr(ord("A") + i) for i in range(10)]
    einsum = lambda eq, shapes, dtype=T.FLOAT: one(
        "Einsum", "es", [(f"x{i}", dtype, s) for i, s in enumerate(shapes)], ["y"],
        attrs={"equation": eq})
    many = einsum(",".join(letters) + "->", [[2]] * 36)
    outer = einsum("a,b,c,d,e,f->abcdef", [[1024]] * 6)
    loop = einsum("ij,jk->ik", [[2048, 2048]] * 2, T.INT64)
    return [
        Case(cls, "RoiAlign fed roi of 1e9 (2.5e17 samples a bin)", roi,
             feeds([0, 0, 1e9, 1e9]), error=["'roi'", "RoiAlign", "work bound"], seconds=5),
        Case(cls, "RoiAlign normal roi", roi, feeds([0, 0, 3, 3]),
             want={"Y": np.ones((1, 1, 2, 2), np.float32)}),
        Case(cls, "RoiAlign sampling_ratio 2^40", roi2, feeds([0, 0, 3, 3]),
             error=["'roi2'", "sampling_ratio", "work bound"], seconds=5),
        # 36 operands: planned pairwise, the product of their sums (3^36).
        Case(cls, "Einsum of 36 operands", many,
             {f"x{i}": np.array([1, 2], np.float32) for i in range(36)},
             want={"y": np.array(3.0**36, np.float32)}, rtol=1e-5, seconds=5),
        Case(cls, "Einsum outer product of 2^60 elements", outer,
             {f"x{i}": np.ones(1024, np.float32) for i in range(6)},
             error=["node 'es' (Einsum)", "memory budget"], seconds=5),
        Case(cls, "Einsum int64 product of 2^33 multiply-adds", loop,
             {f"x{i}": np.ones((2048, 2048), np.int64) for i in range(2)},
             error=["node 'es' (Einsum)", "work bound"], seconds=5),
        Case(cls, "plan-time Loop growing its carried value", loop_growing(),
             error=["'grow'", "planned"], seconds=10),
    ]


def memory_cases():
    cls = "ops: memory budget 256 MiB"
    resize = one("Resize", "up", [("x", T.FLOAT, [1, 1, 1, 4]), "", "scales"], ["y"],
                 inits=[h.make_tensor("scales", T.FLOAT, [4], [1, 1, 1, 2.5e7])],
                 attrs={"mode": "linear"})
    # Six values of 200 MB (each under the budget), all live at the Sum.
    n = 50_000_000
    nodes = [h.make_node("Expand", ["x", "shape"], ["e"], name="expand")]
    nodes += [h.make_node("Add", ["e", f"c{i}"], [f"v{i}"], name=f"add{i}") for i in range(6)]
    nodes.append(h.make_node("Sum", [f"v{i}" for i in range(6)], ["y"], name="sum"))
    g = h.make_graph(nodes, "six", [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, None)],
                     [ints("shape", [n])] +
                     [h.make_tensor(f"c{i}", T.FLOAT, [1], [float(i)]) for i in range(6)])
    six = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    six.ir_version = 8
    return [
        Case(cls, "Resize tap tables of 5.6 GB", resize, {"x": np.ones((1, 1, 1, 4), np.float32)},
             error=["node 'up' (Resize)", "memory budget"]),
        Case(cls, "six live 200 MB values", six, {"x": np.ones((1,), np.float32)},
             error=["memory budget", "node '", "bytes"]),
    ]


def invalid_cases():
    cls = "ops: invalid models ORT refuses"
    x23 = {"X": X6}
    pad = one("Pad", "pd", [("X", T.FLOAT, [2, 3]), "P", "", "A"], ["Y"], opset=18,
              inits=[ints("P", [1, 1, 1, 1]), ints("A", [1, -1])])
    maxpool = one("MaxPool", "mp", [("X", T.FLOAT, [1, 1, 4])], ["Y"], opset=12,
                  attrs={"kernel_shape": [2], "pads": [2, 0]})
    deconv = one("ConvTranspose", "ct", [("X", T.FLOAT, [1, 1, 2]), ("W", T.FLOAT, [1, 1, 2])],
                 ["Y"], attrs={"output_shape": [-5]})
    split = one("Split", "sp", [("X", T.FLOAT, [2, 3])], ["Y0", "Y1", "Y2", "Y3"], opset=18,
                attrs={"axis": 1, "num_outputs": 4})
    nms = one("NonMaxSuppression", "nms", [("B", T.FLOAT, [1, 1, 4]), ("S", T.FLOAT, [1, 1, 1])],
              ["Y"], opset=11, attrs={"center_point_box": 7}, out_type=T.INT64)
    lrn = one("LRN", "lrn", [("X", T.FLOAT, [1, 4, 1, 1])], ["Y"], attrs={"size": 2})
    unpool = one("MaxUnpool", "mu", [("X", T.FLOAT, [1, 1, 2]), ("I", T.INT64, [1, 1, 2])], ["Y"],
                 opset=11, attrs={"kernel_shape": [0], "strides": [1]})
    repeated = one("LeakyRelu", "lr", [("X", T.FLOAT, [2])], ["Y"], attrs={"alpha": 0.5})
    repeated.graph.node[0].attribute.append(h.make_attribute("alpha", 0.25))
    convint = one("ConvInteger", "ci", [("X", T.UINT8, [1, 1, 4]), ("W", T.UINT8, [1, 1, 2])],
                  ["Y"], opset=10, attrs={"pads": [-1, 0]}, out_type=T.INT32)
    dup = one("Relu", "r", [("X", T.FLOAT, [2])], ["Y"])
    dup.graph.input.append(dup.graph.input[0])
    f = lambda *shape: np.ones(shape, np.float32)
    return [
        Case(cls, "Pad repeated axes", pad, x23,
             invalid=["node 'pd' (Pad)", "axes repeat axis 1 (given as -1)"]),
        Case(cls, "MaxPool pads >= kernel", maxpool, {"X": f(1, 1, 4)},
             invalid=["node 'mp' (MaxPool)", "smaller than kernel_shape 2"]),
        Case(cls, "ConvTranspose output_shape -5", deconv, {"X": f(1, 1, 2), "W": f(1, 1, 2)},
             invalid=["node 'ct' (ConvTranspose)"]),
        Case(cls, "Split num_outputs 4 > dim 3", split, x23,
             invalid=["node 'sp' (Split)", "num_outputs 4 is larger than the dimension"]),
        Case(cls, "NonMaxSuppression center_point_box 7", nms,
             {"B": np.array([[[0, 0, 1, 1]]], np.float32), "S": f(1, 1, 1)},
             invalid=["node 'nms' (NonMaxSuppression)", "center_point_box must be 0 or 1, got 7"]),
        Case(cls, "LRN even size", lrn, {"X": f(1, 4, 1, 1)},
             invalid=["node 'lrn' (LRN)", "size must be positive and odd, got 2"]),
        Case(cls, "MaxUnpool kernel 0", unpool,
             {"X": f(1, 1, 2), "I": np.array([[[0, 1]]], np.int64)},
             invalid=["node 'mu' (MaxUnpool)", "kernel_shape[0] = 0"]),
        Case(cls, "repeated attribute", repeated, {"X": np.array([-2, 4], np.float32)},
             invalid=["node 'lr' (LeakyRelu)", "attribute 'alpha' is given more than once"]),
        Case(cls, "ConvInteger negative pads", convint,
             {"X": np.ones((1, 1, 4), np.uint8), "W": np.ones((1, 1, 2), np.uint8)},
             invalid=["node 'ci' (ConvInteger)", "pads[0] = -1 is negative"]),
        Case(cls, "duplicate graph input names", dup, {"X": np.array([-2, 4], np.float32)},
             invalid=["input 'X' is given more than once"]),
    ]


def wide_case():
    wide = 20000
    nodes = [h.make_node("Add", ["X", "one"], [f"v{i}"], name=f"add{i}") for i in range(wide)]
    nodes.append(h.make_node("Concat", [f"v{i}" for i in range(wide)], ["Y"], name="cat", axis=0))
    g = h.make_graph(nodes, "wide", [vi("X", T.FLOAT, [1])], [vi("Y", T.FLOAT, [wide])],
                     [h.make_tensor("one", T.FLOAT, [1], [1.0])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return [Case("ops: wide graph (20,000 live values)", "plan and run", m,
                 {"X": np.ones((1,), np.float32)}, want={"Y": np.full((wide,), 2, np.float32)},
                 plan_seconds=1.0)]


def d2s_crd(x, b):
    n, c, hh, w = x.shape
    y = x.reshape(n, c // (b * b), b, b, hh, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), hh * b, w * b)


def valid_cases():
    """Valid models next to the hostile ones, their answers computed by numpy
    (the Debian onnx 1.12 has no onnx.reference)."""
    cls = "ops: valid answers (numpy)"
    rng = np.random.default_rng(5)
    out = []
    gn = one("GatherND", "gn", [("X", T.FLOAT, [2, 3]), ("I", T.INT64, [2, 2])], ["Y"])
    out.append(Case(cls, "GatherND negative index", gn,
                    {"X": X6, "I": np.array([[1, -1], [0, 0]], np.int64)},
                    want={"Y": np.array([6, 1], np.float32)}))
    x = rng.standard_normal((1, 8, 2, 3)).astype(np.float32)
    d2s = one("DepthToSpace", "ds", [("X", T.FLOAT, [1, 8, 2, 3])], ["Y"],
              attrs={"blocksize": 2, "mode": "CRD"})
    out.append(Case(cls, "DepthToSpace CRD", d2s, {"X": x}, want={"Y": d2s_crd(x, 2)}))
    # pads [begin0, begin1, end0, end1] = [1, -1, 0, 2]: crop a column, pad rows and columns.
    pad = one("Pad", "pd", [("X", T.FLOAT, [2, 3]), "P"], ["Y"], inits=[ints("P", [1, -1, 0, 2])])
    out.append(Case(cls, "Pad with a crop", pad, {"X": X6},
                    want={"Y": np.pad(X6[:, 1:], ((1, 0), (0, 2)))}))
    x = rng.standard_normal((3, 4)).astype(np.float32)
    tr = one("Trilu", "tr", [("X", T.FLOAT, [3, 4]), ("K", T.INT64, [])], ["Y"], opset=14)
    out.append(Case(cls, "Trilu k=-1", tr, {"X": x, "K": np.array(-1, np.int64)},
                    want={"Y": np.triu(x, -1)}))
    return out


def all_cases():
    return (index_cases() + tfidf_cases() + attribute_cases() + work_cases() + memory_cases() +
            invalid_cases() + wide_case() + valid_cases())
