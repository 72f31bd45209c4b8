"""Verdicts for the differences the fuzzer finds (tools/difffuzz/run.py).

A class that is not agreement gets a verdict: a rule below that explains it (the model is
invalid per the ONNX spec and ours says so; ORT has no kernel for the type), or a KNOWN entry:
a difference examined by hand where ours follows the ONNX specification and ORT does not,
listed in docs/reliability.md as ORT's. Anything else is "untriaged" and fails the run.
"""
import re

import numpy as np



def _feed(case, dtype_kinds):
    return [a for a in case.feeds.values() if a.dtype.kind in dtype_kinds]


def _has_inf(case):
    return any(np.isinf(a).any() for a in _feed(case, "f"))


def _nonfinite(case):
    return any((~np.isfinite(a)).any() for a in _feed(case, "f"))


def _str_attr(case, name):
    for a in case.model.graph.node[0].attribute:
        if a.name == name:
            return a.s.decode()
    return ""


def _align_corners_fraction(case):
    """align_corners with a scale whose scale * in is not an integer on some axis."""
    if _str_attr(case, "coordinate_transformation_mode") != "align_corners":
        return False
    from onnx import numpy_helper
    x = next(iter(case.feeds.values()), None)
    for init in case.model.graph.initializer:
        if init.name.startswith("scales") and x is not None:
            sc = numpy_helper.to_array(init).astype(np.float32)
            if sc.size == x.ndim and any(
                    float(s) * d != np.floor(float(s) * d) for s, d in zip(sc, x.shape)):
                return True
    return False


def _prod_overflows(case):
    """An integer product over some axis that leaves its type's range (exact in Python ints)."""
    for a in _feed(case, "iu"):
        info = np.iinfo(a.dtype)
        flat = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
        for axis in range(a.ndim or 1):
            for row in np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis]) if a.ndim else flat:
                p = 1
                for v in row.tolist():
                    p *= int(v)
                if p < info.min or p > info.max:
                    return True
        prod = 1
        for v in a.ravel().tolist():
            prod *= int(v)
        if prod < info.min or prod > info.max:
            return True
    return False


def _int_edge(case):
    """An integer input holding its type's minimum or maximum (sums and |x| overflow)."""
    return any(a.size and (a.min() == np.iinfo(a.dtype).min or a.max() == np.iinfo(a.dtype).max)
               for a in _feed(case, "iu"))


def _empty_input(case):
    return any(a.size == 0 for a in case.feeds.values())


def _cast_out_of_range(case):
    to = [a for a in case.model.graph.node[0].attribute if a.name == "to"]
    vals = _feed(case, "f")
    return bool(vals) and (not to or to[0].i in INT_TYPES)


def _zero_k(case):
    a = case.feeds.get("a_0")
    return a is not None and a.ndim >= 1 and a.shape[-1] == 0


INT_TYPES = {2, 3, 4, 5, 6, 7, 12, 13}


def _unit_groups(case):
    """Normalisation groups of one element (spatial size 1, and one channel per group)."""
    x = next(iter(case.feeds.values()), None)
    if x is None or x.ndim < 3 or int(np.prod(x.shape[2:])) != 1:
        return False
    groups = [a.i for a in case.model.graph.node[0].attribute if a.name == "num_groups"]
    return not groups or groups[0] == x.shape[1]

def _k_zero_a(case):
    """An A input whose last (inner) dimension is 0."""
    return any(n.startswith("A") and a.ndim >= 1 and a.shape[-1] == 0
               for n, a in case.feeds.items())


def _trans_truncates_to_0(case):
    """transA/transB non-zero with its low 32 bits 0 (2^40, 2^62, -2^63): true as an int64, 0
    through a 32-bit int."""
    return any(a.name in ("transA", "transB") and a.i != 0 and a.i % 2 ** 32 == 0
               for a in case.model.graph.node[0].attribute)

# (operator or "*", class, regular expression on the detail, predicate on the case or None,
#  kind, reason). kind "ort": ours follows the ONNX specification and ORT does not (listed
# in docs/reliability.md as ORT's); "undefined": the specification leaves the result
# undefined, both answers stand; "precision": ours is the more precise (wider accumulation);
# "unsupported": a feature ours documents as not supported; "open": a shortcoming of ours found
# and reported but not fixed yet (docs/reliability.md lists them).
KNOWN = [
    ("QLinearMatMul", "differ", "", _zero_k, "ort",
     "inner dimension K = 0: each output is y_zero_point (an empty sum); ORT returns "
     "uninitialised bytes"),
    ("DynamicQuantizeLinear", "differ", "y1",
     lambda c: all(a.size == 0 or not a.any() for a in c.feeds.values()), "ort",
     "x empty or all zeros: the spec's formula gives y_scale = (max(0, max x) - min(0, min x))"
     " / 255 = 0; ORT writes 1"),
    ("*", "differ", "", lambda c: c.op in ("LogSoftmax", "Softmax") and _has_inf(c), "ort",
     "a row holding +inf: the ONNX reference (x - max - log(sum(exp(x - max)))) gives NaN "
     "for the whole row, ORT -inf for the finite entries"),
    ("*", "differ", "", lambda c: c.op in ("LogSoftmax", "Softmax", "Hardmax") and any(
        np.isnan(a).any() for a in _feed(c, "f")), "ort",
     "a row holding NaN: the reference's max is NaN, so LogSoftmax/Softmax give NaN for the "
     "row and Hardmax (numpy argmax) marks the first NaN; ORT gives finite numbers (43.8 for "
     "a LogSoftmax of [-2.25, NaN, ...]) and an all-zero Hardmax row"),
    ("*", "differ", r"inf vs ORT -?65504", lambda c: any(
        a.dtype == np.float16 for a in c.feeds.values()), "ort",
     "float16 results past 65504: IEEE rounding gives +-inf (ours narrows the float result); "
     "ORT clamps to +-65504"),
    ("Pad", "ort_refuses", "exceeds maximum allowed", None, "ort",
     "reflect pads longer than the axis: numpy.pad (onnx's reference) reflects repeatedly; "
     "ORT refuses"),
    ("Loop", "differ", r"shape \[0, [0-9, ]*\] vs ORT \[0\]", None, "ort",
     "zero iterations: a scan output is the concatenation of no per-iteration values, "
     "[0, *iteration shape]; ORT returns shape [0]"),
    ("Shrink", "differ", "", lambda c: bool(_feed(c, "u")) or bool(_feed(c, "i")), "ort",
     "32/64-bit integers: ORT computes through float and loses integers past 2^24 "
     "(4294967279 becomes 0); ours computes exactly"),
    ("*", "differ", "", lambda c: c.op in ("ReduceL1", "ReduceSum", "ReduceSumSquare",
                                           "ReduceProd", "ReduceL2", "ReduceMean",
                                           "CumSum") and _int_edge(c), "undefined",
     "integer overflow (an INT_MIN/INT_MAX input): ours wraps like numpy's reference, ORT "
     "saturates or wraps differently; ONNX does not define integer overflow"),
    ("*", "differ", "", lambda c: c.op in ("ReduceLogSum", "ReduceLogSumExp", "ReduceL2") and
     bool(_feed(c, "iu")), "undefined",
     "log or sqrt of an integer sum, converted back to the integer type: NaN or inf of a "
     "negative or overflowed sum has no integer value"),
    ("*", "differ", "", lambda c: c.op in ("Cast", "CastLike") and _cast_out_of_range(c),
     "undefined", "float to integer outside the target's range (or NaN, inf): undefined in "
     "the Cast specification"),
    ("Mod", "ort_refuses", "Integer modulo by zero", None, "undefined",
     "integer modulo by zero: ONNX leaves it undefined; ORT fails at run time, ours answers"),
    ("*", "ort_refuses", "Integer division by zero", None, "undefined",
     "integer division by zero: ONNX leaves it undefined; ORT fails at run time, ours answers"),
    ("LRN", "ort_refuses", r"alpha_ > 0", None, "ort",
     "alpha <= 0: ONNX puts no bound on alpha; ORT refuses it"),
    ("Pad", "ort_refuses", r"data_rank > 0", None, "ort",
     "a scalar: ONNX pads it with 2 * 0 pads (the scalar itself); ORT refuses rank 0"),
    ("Slice", "ort_refuses", "Cannot slice scalars", None, "ort",
     "a scalar with empty starts/ends/axes: slicing no axis returns the scalar; ORT refuses"),
    ("LayerNormalization", "ort_refuses", r"X.shape\[axis:\] must be at", None, "ort",
     "an empty normalised extent: the output is as empty as X; ORT refuses"),
    ("GroupNormalization", "ort_refuses", "Reshape", _empty_input, "ort",
     "an empty X: ORT's function expansion reshapes with 0 as 'copy the dimension' and fails"),
    ("MeanVarianceNormalization", "ort_refuses", "bound to different types", None, "ort",
     "double or float16 X: ORT's function body mixes float constants into the graph and "
     "fails its own type check (the schema allows every float type)"),
    ("LRN", "ort_refuses", r"NumDimensions\(\) == 4", None, "ort",
     "X of rank 3 or 5: ONNX defines LRN over (N x C x D1 ... Dk); ORT runs 4-D only"),
    ("Resize", "ort_refuses", "exclude_outside can be set to 1 when", None, "ort",
     "exclude_outside=1 with nearest mode: ONNX puts no condition on it (nearest has no "
     "outside weights to drop); ORT refuses"),
    ("*", "differ", r"shape \[[0-9, ]*\] vs ORT \[[0-9, ]*\b0\b", lambda c: c.op.startswith(
        "Reduce") and _empty_input(c), "ort",
     "a reduction over an empty extent: ONNX gives the identity (0, -inf for LogSumExp, as in "
     "onnx's test_reduce_*_empty_set) in the reduced shape; ORT returns an empty tensor"),
    ("Squeeze", "differ", "", lambda c: any(
        i.name.startswith("axes") and not i.dims[0] for i in c.model.graph.initializer), "ort",
     "an empty axes input: onnx's reference squeezes the axes listed, none; ORT squeezes every "
     "1-dim as if axes were absent"),
    ("MeanVarianceNormalization", "differ", "nan", lambda c: any(
        a.dtype == np.float16 for a in c.feeds.values()), "ort",
     "float16 X with zero variance: the spec's epsilon 1e-9 (a float constant of its function) "
     "keeps 0 / (0 + 1e-9) = 0; ORT adds it in float16, where it is 0, and gets 0 / 0"),
    ("DynamicQuantizeLinear", "differ", "", lambda c: not all(
        np.isfinite(a).all() for a in c.feeds.values()), "undefined",
     "x holding inf or NaN: y_scale is inf or NaN and the zero point NaN, which has no uint8 "
     "value"),
    ("*", "differ", "", lambda c: c.op in ("Upsample", "Resize") and bool(_feed(c, "iu")),
     "undefined", "linear or cubic interpolation of integers: ONNX does not say how the "
     "interpolated value is rounded; ours rounds to nearest, ORT truncates"),
    ("*", "differ", "", lambda c: c.op in ("MaxPool", "AveragePool", "LpPool") and any(
        a.name == "ceil_mode" and a.i not in (0, 1) for a in c.model.graph.node[0].attribute),
     "undefined", "ceil_mode outside {0, 1} (a flag): ours takes any non-zero value as ceil, "
     "ORT floors for it"),
    ("Einsum", "ort_refuses", "Ellipsis represents incompatible dimensions", None, "ort",
     "ellipses of different ranks ('...ij,...jk' on [2, 1, 3] and [3, 2]): they broadcast as "
     "in numpy.einsum; ORT's inference refuses them"),
    ("*", "ort_refuses", r"layout == 1\) are not supported", None, "ort",
     "layout=1 (batch-major) RNN/GRU/LSTM: defined since opset 14; ORT has no kernel for it"),
    ("Clip", "ort_refuses", r"min_ <= max_", None, "ort",
     "Clip-6 with min > max: the spec puts no order on them (later versions define the result "
     "as max); ORT refuses"),
    ("LRN", "ort_refuses", r"beta_ > 0", None, "ort",
     "beta <= 0: ONNX puts no bound on beta; ORT refuses it"),
    ("Pow", "differ", "", lambda c: bool(_feed(c, "iu")), "undefined",
     "an integer base whose real power is NaN or past the type's range (a negative base to a "
     "fractional exponent, overflow): no integer value; ours saturates, ORT converts"),
    ("*", "differ", "", lambda c: c.op in ("TopK", "QuantizeLinear") and any(
        np.isnan(a).any() for a in _feed(c, "f")), "undefined",
     "NaN in the input: ONNX does not order NaN for TopK nor give it a quantized value"),
    ("*", "differ", "nan vs ORT", lambda c: c.op in ("ReduceMin", "ReduceMax") and any(
        np.isnan(a).any() for a in _feed(c, "f")), "ort",
     "NaN in the reduced values: the reference (numpy minimum/maximum) propagates NaN; ORT "
     "skips it"),
    ("MatMulInteger", "differ", "", lambda c: any(
        n.startswith("A") and a.ndim >= 1 and a.shape[-1] == 0 for n, a in c.feeds.items()), "ort",
     "inner dimension K = 0: each output is the empty sum 0; ORT returns uninitialised int32s"),
    ("MatMulInteger", "ort_refuses", "cannot broadcast on dim", _empty_input, "ort",
     "a batch dimension 0 against a missing one: numpy.matmul broadcasts it ([3, 0] x [0, 0, 4] "
     "is [0, 3, 4]); ORT refuses"),
    ("TfIdfVectorizer", "ort_refuses", "Duplicate ngram detected", None, "undefined",
     "a pool listing one n-gram twice: ONNX does not say which index it counts in; ORT "
     "refuses, ours counts the first"),
    ("MeanVarianceNormalization", "differ", "nan", None, "ort",
     "zero variance: the spec's function adds epsilon 1e-9 to the standard deviation, so "
     "0 / (0 + 1e-9) = 0; ORT's kernel (and its float16 arithmetic) divides 0 / 0"),
    ("Resize", "ort_refuses", "mode only supports", None, "ort",
     "linear or cubic scaling of axes other than the 2 innermost (or N, C of NHWC): ONNX "
     "defines it for every axis (separable); ORT runs only those layouts"),
    ("*", "differ", r"e\+30 vs ORT inf", lambda c: c.op in ("GlobalLpPool", "LpPool"), "precision",
     "an Lp norm of 1e30 in float: ours accumulates in double (1e30), ORT in float where "
     "|x|^2 overflows to inf"),
    ("ReduceMean", "differ", "nan vs ORT 0", _empty_input, "ort",
     "the mean of an empty extent: 0 / 0 = NaN (numpy.mean, onnx's reference); ORT gives 0"),
    ("LayerNormalization", "ort_refuses", "Missing Input", _empty_input, "ort",
     "an empty Scale initializer: ORT reads it as a missing input; ONNX defines the empty "
     "output"),
    ("Clip", "differ", r"inf vs ORT 65504", None, "ort",
     "float16 inf with no max: nothing bounds it, so it stays inf; ORT clamps to 65504"),
    ("ConvTranspose", "ort_refuses", r"Computed output dimension is <= 0", None, "ort",
     "pads that leave an output extent of 0: the spec's output shape formula gives 0, an "
     "empty output; ORT refuses"),
    ("*", "differ", "", lambda c: c.op in ("MaxPool", "GlobalMaxPool") and any(
        np.isnan(a).any() for a in _feed(c, "f")), "undefined",
     "NaN in a pooling window: ONNX does not order NaN; ours takes the first tap when it is "
     "NaN and skips later NaNs, ORT differs"),
    ("*", "differ", "", lambda c: c.op in ("ArgMax", "ArgMin") and any(
        np.isnan(a).any() for a in _feed(c, "f")), "ort",
     "NaN in ArgMax/ArgMin input: numpy's argmax/argmin (onnx's reference) pick the NaN; ORT "
     "skips it"),
    ("*", "differ", r"shape \[[0-9, ]*\] vs ORT \[[0-9, ]*\]", lambda c: c.op in (
        "ArgMax", "ArgMin") and _empty_input(c), "ort",
     "an empty input with keepdims=0: the reduced axis goes ([0, 2] over axis -1 is [0]); ORT "
     "keeps the input shape"),
    ("*", "ort_refuses", "cannot broadcast on dim", lambda c: c.op == "MatMul" and _empty_input(c),
     "ort", "an empty [0, K] x [K] MatMul: numpy.matmul gives [0]; ORT refuses the 1-D B"),
    ("Resize", "ort_refuses", "Scale value should be greater than 0", None, "ort",
     "sizes holding 0: the output extent is 0, an empty tensor; ORT turns it into scale 0 and "
     "refuses"),
    ("Pad", "ort_refuses", "with zero effective input extent", None, "ort",
     "reflect/edge after negative pads crop an axis to 0 with nothing to add on it: the "
     "result is empty; ORT refuses"),
    ("ConvInteger", "ort_refuses", "Non per-tensor quantization is not supported", None, "ort",
     "per-output-channel w_zero_point: allowed by ConvInteger-10; ORT has no kernel for it"),
    ("Upsample", "ort_refuses", "mode only supports", None, "ort",
     "linear scaling of axes other than the 2 innermost: ONNX defines it for every axis; "
     "ORT runs only those layouts"),
    ("InstanceNormalization", "differ", "", lambda c: any(
        np.abs(a[np.isfinite(a)]).max(initial=0) > 1e18 for a in _feed(c, "f")), "precision",
     "a 1e30 element: ours accumulates mean and variance in double (a float64 evaluation of the "
     "formula agrees to 1e-6); in float its square overflows and ORT's output is the bias"),
    ("ReduceProd", "differ", "", lambda c: bool(_feed(c, "iu")) and _prod_overflows(c),
     "undefined", "integer overflow of the product: ours wraps like numpy.prod, ORT differs; "
     "ONNX does not define integer overflow"),
    ("Mod", "differ", "", lambda c: any(a.dtype.itemsize == 8 and a.dtype.kind in "iu" and
                                        np.abs(a.astype(np.float64)).max(initial=0) > 2**53
                                        for a in c.feeds.values()), "ort",
     "64-bit integers past 2^53: ORT's fmod goes through double and loses the low bits "
     "(2^64 - 1 mod 7 gives 2); ours computes exactly (1), as numpy.fmod does"),
    ("GroupNormalization", "differ", "nan", lambda c: any(
        np.abs(a[np.isfinite(a)]).max(initial=0) > 1e18 for a in _feed(c, "f")), "precision",
     "a 1e30 element: ours accumulates mean and variance in double; in float its square "
     "overflows and ORT's function gives NaN"),
    ("*", "differ", "", lambda c: c.op in ("InstanceNormalization", "GroupNormalization") and
     _unit_groups(c), "ort",
     "groups of one element: x - mean is 0, so y is the bias exactly; ORT's x * s + (b - mean"
     " * s) leaves rounding of the size of x / sqrt(epsilon)"),
    ("MatMulInteger", "ort_refuses", "zero point must be a scalar or 1D tensor of size 1", None,
     "ort", "a per-row a_zero_point ([M]): allowed by MatMulInteger-10; ORT takes per-tensor "
     "zero points only"),
    ("Pad", "ort_refuses", "reflect requires axis length >= 2", None, "ort",
     "reflect on an axis of length 1: numpy.pad (onnx's reference) repeats the element; ORT "
     "refuses"),
    ("OneHot", "ort_refuses", "Depth is negative", None, "ort",
     "depth 0: the new axis has 0 entries, an empty output; ORT refuses it as negative"),
    ("Gemm", "differ", "", lambda c: any(
        n.startswith("A") and a.ndim == 2 and 0 in a.shape for n, a in c.feeds.items()), "ort",
     "inner dimension K = 0: Y = beta * C (the product is an empty sum); ORT returns C without "
     "beta"),
    ("*", "differ", r"e\+30 vs ORT inf", lambda c: c.op in ("ReduceL2", "ReduceSumSquare"),
     "precision", "squares of 1e30 in float: ours accumulates in double, ORT in float where "
     "they overflow to inf"),
    ("GlobalMaxPool", "differ", r"-inf vs ORT -3\.40282", None, "ort",
     "a window of -inf only: its max is -inf; ORT starts from -FLT_MAX and returns that"),
    ("*", "differ", "nan", lambda c: c.op in ("Resize", "Upsample") and _nonfinite(c), "ort",
     "inf or NaN beside a sample point that lies on a pixel: onnx's reference takes that pixel "
     "(weight 1) and the previous one (weight 0, so 0 x inf = NaN); ORT takes the next one with "
     "weight 0, so the NaN lands one output over"),
    ("Resize", "differ", "", _align_corners_fraction, "ort",
     "align_corners where scale * in is not an integer: onnx's reference divides by "
     "scale * in - 1, ORT by the integer output length - 1"),
    ("Resize", "ort_refuses", "Tensor type mismatch", lambda c: bool(_feed(c, "iu")), "ort",
     "cubic or linear Resize of 8-bit integers: ORT's kernel fails its own type check at run "
     "time (Tensor type mismatch)"),
    ("*", "ours_refuses", r"index -?\d+ is out of range for dimension 0",
     lambda c: c.op in ("Gather", "GatherND"), "ort",
     "an index into a dimension of size 0 where the output is empty: ONNX makes any index out "
     "of bounds an error; ORT checks nothing when there is nothing to copy"),
    ("Resize", "ours_refuses", r"mode 'cubic' is not supported", lambda c: c.opset == 10, "ort",
     "cubic at opset 10, where Resize defines nearest and linear only: ours refuses, ORT runs "
     "it"),
    ("Pad", "ours_refuses", r"mode 'wrap' is not supported at opset", None, "ort",
     "mode 'wrap' before opset 19, where Pad does not define it: ours refuses, ORT runs it"),
    ("Pad", "ours_refuses", r"pads crop dimension \d+ below zero", None, "ort",
     "negative pads past the axis: the output extent would be negative; ours refuses, ORT "
     "runs it"),
    ("RoiAlign", "ours_refuses", r"coordinate_transformation_mode '.*' is not supported", None,
     "ort", "a coordinate_transformation_mode RoiAlign does not define (half_pixel and "
     "output_half_pixel only): ours refuses, ORT runs it"),
    ("MeanVarianceNormalization", "ours_refuses", r"axis \d+ is out of range for rank", None,
     "ort", "axes past the rank (the default [0, 2, 3] on a 2-D or 3-D X): ours refuses, ORT "
     "runs it"),
    ("MatMul", "differ", "", lambda c: any(
        n.startswith("A") and a.ndim >= 1 and a.shape[-1] == 0 for n, a in c.feeds.items()), "ort",
     "inner dimension K = 0: the product is the empty sum 0; ORT returns uninitialised floats"),
    ("MatMul", "ort_refuses", "Tensor type mismatch", _k_zero_a, "ort",
     "uint32/uint64 with inner dimension K = 0: the product is the empty sum 0; ORT fails at run "
     "time (\"Tensor type mismatch\": its zero fill takes the output as a signed type)"),
    ("Gemm", "ort_refuses", r"ShapeInferenceError", _trans_truncates_to_0, "ort",
     "transA/transB 2^40, 2^62 or -2^63: non-zero, so true for ONNX's reference and ORT's "
     "kernel; onnx's shape inference reads it through a 32-bit int (0) and ORT refuses the model"),
    ("*", "ours_refuses", r"axis -?\d+ is out of range for rank 0", lambda c: c.op.startswith(
        "Reduce"), "ort", "axes on a scalar: ONNX's axes lie in [-r, r-1], none for r = 0; ours "
     "refuses, ORT runs it"),
    ("*", "ours_refuses", r"input must have rank >= 1, got a scalar", lambda c: c.op in (
        "ArgMax", "ArgMin"), "ort",
     "a scalar: ArgMax/ArgMin reduce along `axis`, which lies in [-r, r-1], none for r = 0 "
     "(onnx's inference refuses it from opset 11; earlier schemas do not check); ours refuses, "
     "ORT runs it"),
    ("GroupNormalization", "differ", r"shape \[", lambda c: any(
        n.startswith("X") and a.ndim >= 2 and a.shape[1] == 0 for n, a in c.feeds.items()), "ort",
     "X with 0 channels: Y has X's shape (ours); ORT returns num_groups channels"),
    ("*", "ours_refuses", r"axis -?\d+ is out of range for rank", lambda c: c.op in (
        "Softmax", "LogSoftmax", "Hardmax") and _empty_input(c), "undefined",
     "an axis outside [-r, r-1] (the default 1 on a 1-D X) before opset 11, whose schemas give "
     "axis no range: ours refuses it, as ORT does for every non-empty input; on an empty one "
     "ORT checks no axis and returns it"),
    ("ArgMax", "ours_refuses", "cannot take the arg of an empty axis", None, "undefined",
     "the arg of an empty axis: there is no element to point at; ours refuses, ORT answers"),
    ("ArgMin", "ours_refuses", "cannot take the arg of an empty axis", None, "undefined",
     "the arg of an empty axis: there is no element to point at; ours refuses, ORT answers"),
    ("Resize", "ours_refuses", "tf_crop_and_resize needs a roi", None, "undefined",
     "tf_crop_and_resize without a roi: the spec gives it no default; ORT refuses it at some "
     "opsets (\"size of roi array should be 2 * N\") and runs it at others"),
]

ORT_NO_KERNEL = re.compile(r"Could not find an implementation for|NOT_IMPLEMENTED|"
                           r"Failed to find kernel for|does not support double yet")


def known(case, cls, detail):
    for op, k, pattern, pred, kind, reason in KNOWN:
        if (op == "*" or op == case.op) and k == cls and re.search(pattern, detail or "") and (
                pred is None or pred(case)):
            return kind, reason
    return None


def verdict(case, cls, detail, ours_message):
    """(verdict, failing) for one classified case."""
    if cls == "agree":
        return "equal", False
    if cls in ("ours_crash", "ours_hang", "ours_rss", "ours_internal"):
        return "bug in ours", True
    if cls == "ort_failed":
        return "ORT crashed or hung", False
    hit = known(case, cls, detail)
    if hit:
        kind, reason = hit
        return {"ort": "ORT's: ", "undefined": "undefined by ONNX: ",
                "precision": "precision: ", "open": "open (ours, reported): ",
                "unsupported": "unsupported in ours (documented): "}[kind] + reason, False
    if cls == "both_refuse":
        return "both refuse", False
    if cls == "ours_refuses":
        if not case.valid:
            return "invalid model, ours refuses", False
        return "untriaged: ours refuses a valid model ORT runs", True
    if cls == "ort_refuses":
        if ORT_NO_KERNEL.search(detail or ""):
            return "ORT has no kernel for this type or opset", False
        return "untriaged: ours answers, ORT refuses", True
    return "untriaged: the answers differ", True
