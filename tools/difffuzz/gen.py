"""Random single-operator models from the ONNX operator schemas (issue 18).

`generate(op, index, seed)` builds one model for `op` deterministically from (seed, index): an
opset the schema exists at (7..17, python3-onnx 1.12's range; a few newer operators from the
hand-written schemas of schemas_extra.py), a dtype per type constraint, optional inputs kept or
dropped, variadic inputs repeated, ranks 0-4 with dims from {0, 1, 2, 3, 5, 7}, attributes from
their schema types (values chosen by name: axes in range, kernel shapes that fit, modes from
their lists), edge values in the data (NaN, +-inf, -0.0, INT_MIN/MAX), and for a share of
models one mutation that makes them invalid (wrong attribute type, axis out of range, huge or
negative attribute ints, mismatched shapes, a dtype outside the constraint). recipes.py shapes
the inputs of operators with structure (convolutions, recurrences, subgraphs, ...).

The model's outputs are declared untyped: both runtimes infer them, so a wrong guess here
never turns into a refusal.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import onnx.defs
import onnx.shape_inference

from . import recipes
from .schemas_extra import EXTRA_SCHEMAS, Formal, Schema

MIN_OPSET = 7
MAX_ONNX_OPSET = 17  # python3-onnx 1.12
DIMS = [0, 1, 2, 3, 5, 7]
DIM_WEIGHTS = [0.06, 0.22, 0.26, 0.22, 0.14, 0.10]
INVALID_SHARE = 0.2

# Types .npy and onnxruntime-node both carry (no string, bfloat16, complex, float8).
NP_OF = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32,
    "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}
ONNX_OF = {np.dtype(v): helper.np_dtype_to_tensor_dtype(np.dtype(v)) if hasattr(
    helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(v)]
           for v in NP_OF.values()}

STRING_ATTRS = {
    "auto_pad": ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"],
    "mode": None,  # per operator, below
    "direction": ["forward", "reverse", "bidirectional"],
    "coordinate_transformation_mode": ["half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_crop_and_resize"],
    "nearest_mode": ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
    "reduction": ["none", "add", "mul", "max", "min", "mean", "sum"],
    "padding_mode": ["zeros", "border", "reflection"],
    "approximate": ["none", "tanh"],
    "coordinate_transformation_mode_roi": ["half_pixel", "output_half_pixel"],
}
MODES = {
    "Pad": ["constant", "reflect", "edge", "wrap"],
    "Resize": ["nearest", "linear", "cubic"], "Upsample": ["nearest", "linear"],
    "DepthToSpace": ["DCR", "CRD"], "GridSample": ["bilinear", "nearest", "bicubic"],
    "RoiAlign": ["avg", "max"], "TfIdfVectorizer": ["TF", "IDF", "TFIDF"],
}
BINARY_ATTRS = {
    "keepdims", "noop_with_empty_axes", "exclusive", "reverse", "transA", "transB", "ceil_mode",
    "count_include_pad", "select_last_index", "largest", "sorted", "upper", "center", "onesided",
    "inverse", "layout", "linear_before_reset", "input_forget", "detect_negative",
    "detect_positive", "fmod", "align_corners", "exclude_outside", "saturate", "allowzero",
    "center_point_box", "storage_order", "periodic", "training_mode", "broadcast",
}
NUMERIC_DTYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT8,
                  TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
                  TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64, TensorProto.BOOL]


class Case:
    """One generated model and what was meant by it."""

    def __init__(self, op, index, opset):
        self.op, self.index, self.opset = op, index, opset
        self.model = None
        self.feeds = {}  # graph input name -> array
        self.mutation = None  # the invalidating mutation, or None (meant valid)
        self.skip = None  # a reason no model could be made
        self.notes = []

    @property
    def name(self):
        return "%05d_%s" % (self.index, self.op.replace("::", "_"))


def load_schema(op, opset):
    if op in EXTRA_SCHEMAS:
        return EXTRA_SCHEMAS[op](opset)
    try:
        s = onnx.defs.get_schema(op, opset)
    except Exception:
        return None
    return Schema.from_onnx(s)


def opsets_of(op):
    """The opsets a model of `op` may import: where its schema exists."""
    if op in EXTRA_SCHEMAS:
        return list(EXTRA_SCHEMAS[op].opsets)
    out = []
    for v in range(MIN_OPSET, MAX_ONNX_OPSET + 1):
        try:
            s = onnx.defs.get_schema(op, v)
        except Exception:
            continue
        if not s.deprecated:
            out.append(v)
    return out


def random_shape(rng, rank=None):
    if rank is None:
        rank = int(rng.choice(5, p=[0.1, 0.2, 0.25, 0.25, 0.2]))
    return [int(rng.choice(DIMS, p=DIM_WEIGHTS)) for _ in range(rank)]


def broadcast_variant(rng, shape):
    s = list(shape)
    k = int(rng.integers(0, len(s) + 1))
    s = s[k:]
    return [1 if rng.random() < 0.3 else d for d in s]


def random_data(rng, dtype, shape, edge=True):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) if shape else 1
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        a = rng.standard_normal(n).astype(np.float64) * 2
        if edge and n and rng.random() < 0.35:
            specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e-30, 65504.0]
            for _ in range(int(rng.integers(1, 3))):
                a[int(rng.integers(0, n))] = specials[int(rng.integers(0, len(specials)))]
        with np.errstate(over="ignore"):
            return a.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -20), min(info.max, 20)
    a = rng.integers(lo, hi + 1, n, dtype=np.int64 if dtype != np.uint64 else np.uint64)
    a = a.astype(dtype)
    if edge and n and rng.random() < 0.25:
        a[int(rng.integers(0, n))] = info.min if rng.random() < 0.5 else info.max
    return a.reshape(shape)


def pick_bindings(rng, schema):
    bind = {}
    for param, allowed in schema.constraints.items():
        ok = [t for t in allowed if t in NP_OF]
        bind[param] = NP_OF[ok[int(rng.integers(0, len(ok)))]] if ok else None
    return bind


def dtype_of(formal, bind):
    if formal.type_str in NP_OF:
        return NP_OF[formal.type_str]
    return bind.get(formal.type_str)


def int_attr(rng, name, rank, op):
    if name == "axis":
        return int(rng.integers(-rank, rank)) if rank else 0
    if name in BINARY_ATTRS:
        return int(rng.integers(0, 2))
    if name in ("to", "dtype", "output_datatype"):
        return int(NUMERIC_DTYPES[int(rng.integers(0, len(NUMERIC_DTYPES)))])
    if name == "blocksize":
        return int(rng.integers(1, 3))
    if name == "hidden_size":
        return int(rng.integers(1, 4))
    if name == "group":
        return 1
    if name in ("num_scan_inputs",):
        return 1
    return int(rng.integers(0, 4))


def float_attr(rng, name):
    if name in ("epsilon",):
        return float(10.0 ** rng.integers(-6, -2))
    if name in ("spatial_scale",):
        return 1.0
    if name in ("ratio",):
        return float(rng.random() * 0.9)
    return float(np.round(rng.standard_normal() * 1.5, 3))


def ints_attr(rng, name, rank, op):
    spatial = max(rank - 2, 1)
    if name in ("axes",):
        k = int(rng.integers(1, max(rank, 1) + 1))
        return [int(a) for a in rng.permutation(range(-rank, 0) if rank else [0])[:k]]
    if name == "perm":
        return [int(a) for a in rng.permutation(rank)]
    if name in ("kernel_shape",):
        return [int(rng.integers(1, 4)) for _ in range(spatial)]
    if name in ("strides", "dilations"):
        return [int(rng.integers(1, 3)) for _ in range(spatial)]
    if name == "pads":
        n = 2 * (rank if op == "Pad" else spatial)
        return [int(rng.integers(0, 2)) for _ in range(n)]
    if name in ("output_padding",):
        return [0] * spatial
    return [int(rng.integers(0, 4)) for _ in range(max(rank, 1))]


def string_attr(rng, name, op):
    choices = MODES.get(op) if name == "mode" else STRING_ATTRS.get(name)
    if not choices:
        return None
    return choices[int(rng.integers(0, len(choices)))]


def make_attrs(rng, schema, rank, op, fixed):
    attrs = {}
    for name, a in schema.attributes.items():
        if name in fixed:
            if fixed[name] is not None:
                attrs[name] = fixed[name]
            continue
        if not a.required and rng.random() < 0.5:
            continue
        t = a.type
        if t == "INT":
            attrs[name] = int_attr(rng, name, rank, op)
        elif t == "FLOAT":
            attrs[name] = float_attr(rng, name)
        elif t == "INTS":
            attrs[name] = ints_attr(rng, name, rank, op)
        elif t == "FLOATS":
            attrs[name] = [float_attr(rng, name) for _ in range(int(rng.integers(1, 4)))]
        elif t == "STRING":
            v = string_attr(rng, name, op)
            if v is not None:
                attrs[name] = v
        elif t == "STRINGS" and name == "activations":
            k = int(rng.integers(1, 4))
            attrs[name] = [["Relu", "Tanh", "Sigmoid", "HardSigmoid"][int(rng.integers(0, 4))]
                           for _ in range(k)]
        elif t == "TENSOR" and name == "value":
            attrs[name] = numpy_helper.from_array(random_data(rng, np.float32, [1]), "value")
        # GRAPH / SPARSE_TENSOR / other STRINGS: only when a recipe provides them
    return attrs


def mutate(rng, case, inputs, attrs, rank):
    """One change that makes the model invalid per the ONNX spec (mostly); returns its name."""
    kinds = ["attr_type", "axis_range", "huge_int", "negative_int", "shape_mismatch",
             "dtype_swap", "drop_input"]
    kind = kinds[int(rng.integers(0, len(kinds)))]
    names = list(attrs)
    if kind == "attr_type" and names:
        n = names[int(rng.integers(0, len(names)))]
        v = attrs[n]
        attrs[n] = "bad" if not isinstance(v, str) else 3
        return "attr_type:" + n
    int_names = [n for n in names if isinstance(attrs[n], int) and not isinstance(attrs[n], bool)]
    ints_names = [n for n in names if isinstance(attrs[n], list) and attrs[n] and
                  isinstance(attrs[n][0], int)]
    if kind == "axis_range" and "axis" in attrs:
        attrs["axis"] = rank + int(rng.integers(0, 4)) if rng.random() < 0.5 else -rank - 1 - int(
            rng.integers(0, 4))
        return "axis_range"
    if kind == "huge_int" and (int_names or ints_names):
        pool = int_names + ints_names
        n = pool[int(rng.integers(0, len(pool)))]
        big = [2 ** 62, 2 ** 31 - 1, -2 ** 63, 2 ** 40][int(rng.integers(0, 4))]
        if isinstance(attrs[n], list):
            attrs[n] = [big] * len(attrs[n])
        else:
            attrs[n] = big
        return "huge_int:" + n
    if kind == "negative_int" and (int_names or ints_names):
        pool = int_names + ints_names
        n = pool[int(rng.integers(0, len(pool)))]
        if isinstance(attrs[n], list):
            attrs[n] = [-int(rng.integers(1, 5)) for _ in attrs[n]]
        else:
            attrs[n] = -int(rng.integers(1, 5))
        return "negative_int:" + n
    data = [i for i, x in enumerate(inputs) if x is not None]
    if kind == "shape_mismatch" and data:
        i = data[int(rng.integers(0, len(data)))]
        name, arr, init = inputs[i]
        shape = list(arr.shape)
        shape = shape + [int(rng.integers(2, 6))] if not shape or rng.random() < 0.5 else \
            [d + int(rng.integers(1, 3)) for d in shape]
        inputs[i] = (name, random_data(rng, arr.dtype, shape), init)
        return "shape_mismatch:%d" % i
    if kind == "dtype_swap" and data:
        i = data[int(rng.integers(0, len(data)))]
        name, arr, init = inputs[i]
        dts = [d for d in NP_OF.values() if np.dtype(d) != arr.dtype]
        dt = dts[int(rng.integers(0, len(dts)))]
        with np.errstate(all="ignore"):
            inputs[i] = (name, arr.astype(dt) if arr.size else np.zeros(arr.shape, dt), init)
        return "dtype_swap:%d" % i
    if kind == "drop_input" and len(data) > 1:
        i = data[-1]
        inputs[i] = None
        return "drop_input:%d" % i
    if names:
        n = names[int(rng.integers(0, len(names)))]
        attrs[n] = 1.5 if not isinstance(attrs[n], float) else "x"
        return "attr_type:" + n
    # No attribute, no input to change: one input too many.
    inputs.append(("extra", random_data(rng, np.float32, [2]), False))
    return "extra_input"


def generate(op, index, seed):
    rng = np.random.default_rng([seed, index, sum(op.encode())])
    opsets = opsets_of(op)
    case = Case(op, index, opsets[int(rng.integers(0, len(opsets)))] if opsets else None)
    if not opsets:
        case.skip = "no schema in python3-onnx %s or schemas_extra.py" % onnx.__version__
        return case
    schema = load_schema(op, case.opset)
    bind = pick_bindings(rng, schema)
    rank = int(rng.choice(5, p=[0.1, 0.2, 0.25, 0.25, 0.2]))
    shape = random_shape(rng, rank)
    plan = recipes.build(op, rng, schema, bind, shape, case.opset)
    if plan is None:  # the generic plan: elementwise-style inputs
        plan = recipes.generic(op, rng, schema, bind, shape, case.opset)
    if isinstance(plan, str):
        case.skip = plan
        return case
    inputs, fixed_attrs, n_out = plan.inputs, plan.attrs, plan.outputs
    rank = plan.rank if plan.rank is not None else rank
    attrs = make_attrs(rng, schema, rank, op, fixed_attrs)
    for k, v in fixed_attrs.items():
        if v is not None:
            attrs[k] = v
    if rng.random() < INVALID_SHARE:
        case.mutation = mutate(rng, case, inputs, attrs, rank)
    case.model, case.feeds = assemble(op, schema, case.opset, inputs, attrs, n_out, plan.outer)
    return case


def assemble(op, schema, opset, inputs, attrs, n_out, outer=()):
    domain = schema.domain
    in_names, graph_inputs, inits, feeds = [], [], [], {}
    for name, arr in outer:
        graph_inputs.append(helper.make_tensor_value_info(name, ONNX_OF[arr.dtype], list(arr.shape)))
        feeds[name] = arr
    while inputs and inputs[-1] is None:
        inputs.pop()
    for i, item in enumerate(inputs):
        if item is None:
            in_names.append("")
            continue
        name, arr, init = item
        name = "%s_%d" % (name, i)
        in_names.append(name)
        if init:
            inits.append(numpy_helper.from_array(np.asarray(arr), name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, ONNX_OF[np.dtype(arr.dtype)],
                                                              list(arr.shape)))
            feeds[name] = np.asarray(arr)
    out_names = ["y%d" % i for i in range(n_out)]
    node = helper.make_node(op.split("::")[-1], in_names, out_names, name="fuzz_" + op.split(
        "::")[-1], domain=domain)
    for k, v in attrs.items():
        node.attribute.append(helper.make_attribute(k, v))
    outputs = [onnx.ValueInfoProto(name=n) for n in out_names]
    g = helper.make_graph([node], "difffuzz", graph_inputs, outputs, inits)
    imports = [helper.make_opsetid("", opset if not domain else 17)]
    if domain:
        imports.append(helper.make_opsetid(domain, 1))
    m = helper.make_model(g, opset_imports=imports, producer_name="difffuzz")
    m.ir_version = 8
    return m, feeds


def valid_hint(case):
    """onnx's strict shape inference, then the checker: a hint (None when it cannot judge).
    The model's outputs are untyped, so inference types them first (the checker wants types)."""
    if case.op in EXTRA_SCHEMAS:
        return None
    m = onnx.ModelProto()
    m.CopyFrom(case.model)
    try:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    except Exception:
        return False
    if any(not o.type.HasField("tensor_type") or not o.type.tensor_type.elem_type
           for o in m.graph.output):
        return None  # inference could not type an output: no judgement
    try:
        onnx.checker.check_model(m)
        return True
    except Exception:
        return False


__all__ = ["generate", "opsets_of", "valid_hint", "Case", "Formal"]
