"""The schema view the generator reads, and schemas python3-onnx 1.12 does not have.

`Schema.from_onnx` turns an onnx.defs OpSchema into plain fields. EXTRA_SCHEMAS holds the
registered operators newer than onnx 1.12's opset 17 (or outside the default domain), written
from the ONNX / ONNX Runtime operator documentation: name -> factory(opset) with `.opsets`.
"""

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"

FLOATS = ["tensor(float)", "tensor(double)", "tensor(float16)"]
INTS = ["tensor(int8)", "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)",
        "tensor(uint16)", "tensor(uint32)", "tensor(uint64)"]


class Formal:
    def __init__(self, name, type_str, option=SINGLE):
        self.name, self.type_str, self.option = name, type_str, option


class Attr:
    def __init__(self, type_, required=False):
        self.type, self.required = type_, required


class Schema:
    def __init__(self, name, domain, inputs, outputs, constraints, attributes, min_output=1):
        self.name, self.domain = name, domain
        self.inputs, self.outputs = inputs, outputs
        self.constraints, self.attributes = constraints, attributes
        self.min_output = min_output

    @staticmethod
    def from_onnx(s):
        def opt(p):
            o = str(p.option)
            return OPTIONAL if "Optional" in o else VARIADIC if "Variadic" in o else SINGLE

        return Schema(s.name, s.domain, [Formal(p.name, p.typeStr, opt(p)) for p in s.inputs],
                      [Formal(p.name, p.typeStr, opt(p)) for p in s.outputs],
                      {t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints},
                      {n: Attr(str(a.type).split(".")[-1], a.required)
                       for n, a in s.attributes.items()}, s.min_output)


def _factory(opsets, make):
    make.opsets = opsets
    return make


def _bitwise(name, arity):
    return _factory([18], lambda opset: Schema(
        name, "", [Formal(n, "T") for n in "AB"[:arity]], [Formal("C", "T")], {"T": INTS}, {}))


EXTRA_SCHEMAS = {
    "BitwiseAnd": _bitwise("BitwiseAnd", 2),
    "BitwiseOr": _bitwise("BitwiseOr", 2),
    "BitwiseXor": _bitwise("BitwiseXor", 2),
    "BitwiseNot": _bitwise("BitwiseNot", 1),
    "Mish": _factory([18], lambda opset: Schema(
        "Mish", "", [Formal("X", "T")], [Formal("Y", "T")], {"T": FLOATS}, {})),
    "Gelu": _factory([20], lambda opset: Schema(
        "Gelu", "", [Formal("X", "T")], [Formal("Y", "T")], {"T": FLOATS},
        {"approximate": Attr("STRING")})),
    "GroupNormalization": _factory([18], lambda opset: Schema(
        "GroupNormalization", "", [Formal("X", "T"), Formal("scale", "T"), Formal("bias", "T")],
        [Formal("Y", "T")], {"T": FLOATS},
        {"epsilon": Attr("FLOAT"), "num_groups": Attr("INT", True)})),
    "com.microsoft::MatMulNBits": _factory([1], lambda opset: Schema(
        "MatMulNBits", "com.microsoft",
        [Formal("A", "T1"), Formal("B", "tensor(uint8)"), Formal("scales", "T1"),
         Formal("zero_points", "T3", OPTIONAL)],
        [Formal("Y", "T1")], {"T1": ["tensor(float)"], "T3": ["tensor(uint8)"]},
        {"K": Attr("INT", True), "N": Attr("INT", True), "bits": Attr("INT"),
         "block_size": Attr("INT", True), "accuracy_level": Attr("INT")})),
}
