#!/usr/bin/python3
"""Multiplies element INDEX of initializer NAME by FACTOR and saves the model
(external data references and compiled tensors are kept as they are).

usage: edit_initializer.py IN.onnx OUT.onnx NAME INDEX FACTOR
"""
import os
import sys

import onnx
from onnx import numpy_helper

src, dst, name, index, factor = sys.argv[1:6]
src, dst = os.path.abspath(src), os.path.abspath(dst)
os.chdir(os.path.dirname(src))  # external data paths are relative to the model
m = onnx.load(src, load_external_data=False)
for t in m.graph.initializer:
    if t.name == name:
        a = numpy_helper.to_array(t).copy()
        a.flat[int(index)] *= float(factor)
        t.CopyFrom(numpy_helper.from_array(a, name))
        break
else:
    sys.exit("no initializer " + name)
onnx.save(m, dst)
