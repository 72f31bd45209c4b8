"""Verdicts for the differences the fuzzer finds (tools/difffuzz/run.py).

A class that is not agreement gets a verdict: a rule below that explains it (the model is
invalid per the ONNX spec and ours says so; ORT has no kernel for the type), or a KNOWN entry:
a difference examined by hand where ours follows the ONNX specification and ORT does not,
listed in docs/reliability.md as ORT's. Anything else is "untriaged" and fails the run.
"""
import re

# (operator or "*", class, regular expression on the detail or ORT's message, reason).
# Each was checked against the ONNX operator specification (docs/Operators.md of onnx).
KNOWN = [
]

ORT_NO_KERNEL = re.compile(r"Could not find an implementation for|NOT_IMPLEMENTED")


def known(case, cls, detail):
    for op, k, pattern, reason in KNOWN:
        if (op == "*" or op == case.op) and k == cls and re.search(pattern, detail or ""):
            return reason
    return None


def verdict(case, cls, detail, ours_message):
    """(verdict, failing) for one classified case."""
    if cls == "agree":
        return "equal", False
    if cls in ("ours_crash", "ours_hang", "ours_rss", "ours_internal"):
        return "bug in ours", True
    if cls == "ort_failed":
        return "ORT crashed or hung", False
    reason = known(case, cls, detail)
    if reason:
        return "ORT's: " + reason, False
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
