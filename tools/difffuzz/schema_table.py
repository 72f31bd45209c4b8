#!/usr/bin/env python3
"""Writes src/runtime/op_signatures.inc: the signature of every registered operator.

usage: schema_table.py --cli build/src/cli/onnx-prepack [-o src/runtime/op_signatures.inc]

For each operator `onnx-prepack ops` lists and each version of it from opset 1 to 17
(python3-onnx 1.12's operator schemas), one line: name, since_version, the input and output
count bounds and the attributes (name, AttributeProto type, required). The runtime checks a
node against it before building (runtime/op_signature.h): the differential fuzzer (issue 18)
found nodes with too many inputs or unknown attributes run as if they were valid. The versions
newer than opset 17 and the operators onnx 1.12 lacks are listed by hand in LATER below, from
the ONNX operator documentation; past opset 17 only counts are checked for operators not there.
"""
import argparse
import json
import os
import subprocess
import sys

import onnx.defs

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TYPES = {"FLOAT": 1, "INT": 2, "STRING": 3, "TENSOR": 4, "GRAPH": 5, "FLOATS": 6, "INTS": 7,
         "STRINGS": 8, "TENSORS": 9, "GRAPHS": 10, "SPARSE_TENSOR": 11, "SPARSE_TENSORS": 12,
         "TYPE_PROTO": 13, "TYPE_PROTOS": 14}
VARIADIC = 2 ** 31 - 1
ELEM = {k: v for k, v in onnx.TensorProto.DataType.items()}

# (name, since, min_in, max_in, min_out, max_out, {attribute: (type, required)}): versions
# after opset 17, and operators python3-onnx 1.12 does not know.
REDUCE18 = {"keepdims": ("INT", False), "noop_with_empty_axes": ("INT", False)}
LATER = [
    ("BitwiseAnd", 18, 2, 2, 1, 1, {}, "0", "T T", "T"),
    ("BitwiseOr", 18, 2, 2, 1, 1, {}, "0", "T T", "T"),
    ("BitwiseXor", 18, 2, 2, 1, 1, {}, "0", "T T", "T"),
    ("BitwiseNot", 18, 1, 1, 1, 1, {}, "0", "T", "T"),
    ("Mish", 18, 1, 1, 1, 1, {}, "0", "T", "T"),
    ("Gelu", 20, 1, 1, 1, 1, {"approximate": ("STRING", False)}, "0", "T", "T"),
    ("GroupNormalization", 18, 3, 3, 1, 1,
     {"epsilon": ("FLOAT", False), "num_groups": ("INT", True)}, "0", "T T T", "T"),
    ("GroupNormalization", 21, 3, 3, 1, 1,
     {"epsilon": ("FLOAT", False), "num_groups": ("INT", True), "stash_type": ("INT", False)},
     "0", "T T T", "T"),
    ("Pad", 18, 2, 4, 1, 1, {"mode": ("STRING", False)}),
    ("DFT", 20, 1, 3, 1, 1, {"inverse": ("INT", False), "onesided": ("INT", False)}),
    ("Swish", 24, 1, 1, 1, 1, {"alpha": ("FLOAT", False)}, "0", "T", "T"),
    ("TensorScatter", 24, 2, 3, 1, 1, {"axis": ("INT", False), "mode": ("STRING", False)}, "0",
     "T T -", "T"),
] + [(op, 18, 1, 2, 1, 1, REDUCE18) for op in (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSumSquare")]


# onnx 1.12's GridSample-16 says grid: T1, Y: T2; the operator (and later onnx) has grid: T2
# (float types), Y: T1, the type of X.
CORRECTIONS = {
    ("GridSample", 16): lambda r: r[:7] + ("%x %x" % (int(r[7].split()[0], 16), 0xc02),
                                           "T1 T2", "T1"),
}


def versions(op):
    seen = {}
    for v in range(1, 18):
        try:
            s = onnx.defs.get_schema(op, v)
        except Exception:
            continue
        seen[s.since_version] = s
    return [seen[k] for k in sorted(seen)]


def bounds(formals, lo, hi):
    if any("Variadic" in str(f.option) for f in formals):
        hi = VARIADIC
    return lo, min(hi, VARIADIC)


def type_masks(s):
    """One hex mask of TensorProto element types per formal input (0: not checked)."""
    constraints = {t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints}
    masks = []
    for f in s.inputs:
        mask = 0
        for t in constraints.get(f.typeStr, [f.typeStr]):
            if t.startswith("tensor(") and t[7:-1].upper() in ELEM:
                mask |= 1 << ELEM[t[7:-1].upper()]
            elif not t.startswith("tensor("):  # sequences, optionals: not checked here
                mask = 0
                break
        masks.append("%x" % mask)
    return " ".join(masks)


def type_params(s, formals=None):
    """The type parameter of each formal input ("-" for a fixed type): inputs sharing one
    must have one element type (and an output has the type of the inputs sharing its)."""
    params = {t.type_param_str for t in s.type_constraints}
    return " ".join(f.typeStr if f.typeStr in params else "-"
                    for f in (s.inputs if formals is None else formals))


def line(name, since, min_in, max_in, min_out, max_out, attrs, types="", params="", out=""):
    text = " ".join("%s%s=%d" % ("!" if req else "", a, TYPES[t])
                    for a, (t, req) in sorted(attrs.items()))
    return '    {"%s", %d, %d, %d, %d, %d, "%s", "%s", "%s", "%s"},' % (
        name, since, min_in, max_in, min_out, max_out, text, types, params, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("-o", "--output", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "src", "runtime", "op_signatures.inc"))
    args = ap.parse_args()
    ops = json.loads(subprocess.run([args.cli, "ops", "--json"], check=True, capture_output=True,
                                    text=True).stdout)["operators"]
    rows = []
    for op in ops:
        if "::" in op:
            continue  # other domains: their builders check their inputs
        for s in versions(op):
            lo, hi = bounds(s.inputs, s.min_input, s.max_input)
            olo, ohi = bounds(s.outputs, s.min_output, s.max_output)
            attrs = {a: (str(v.type).split(".")[-1], v.required) for a, v in s.attributes.items()}
            rows.append((op, s.since_version, lo, hi, olo, ohi, attrs, type_masks(s),
                         type_params(s), type_params(s, s.outputs)))
    rows = [CORRECTIONS.get((r[0], r[1]), lambda r: r)(r) for r in rows]
    rows += [r for r in LATER if r[0] in ops]
    rows.sort(key=lambda r: (r[0], r[1]))
    out = ["// Generated by tools/difffuzz/schema_table.py from python3-onnx %s's operator schemas"
           % onnx.__version__,
           "// (opsets 1-17) and its LATER list; do not edit. {op, since_version, min inputs,",
           "// max inputs, min outputs, max outputs, attributes: '[!]name=AttributeProto type',",
           "// '!' when required, input element types: one hex mask of TensorProto types per",
           "// input, the last repeated for variadic ones, 0 or none: not checked; the type",
           "// parameter of each input, '-' for a fixed type: inputs sharing one agree; the",
           "// type parameter of each output}.",
           "// Read by op_signature.cc."]
    out += [line(*r) for r in rows]
    open(args.output, "w").write("\n".join(out) + "\n")
    print("schema_table.py: %d signatures of %d operators -> %s" % (
        len(rows), len({r[0] for r in rows}), os.path.normpath(args.output)))


if __name__ == "__main__":
    main()
