#!/usr/bin/env bash
# `cmake --install BUILD --prefix P` writes only below P: the CLI, the shared
# library, the C API headers, a pkg-config file, a CMake package and the Python
# package; a C program builds and runs with `pkg-config --cflags --libs
# onnx-prepack` and with find_package(onnx_prepack); the Python package imports
# from P; `pip install` of the source tree (pyproject.toml, offline, reusing
# BUILD) into a fresh venv imports and runs a model.
# usage: install_test.sh BUILD SOURCE
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
outside=$(grep -v "^$prefix/" "$build/install_manifest.txt" || true)
if [ -n "$outside" ]; then
  echo "FAIL: installed outside $prefix:"; echo "$outside"; exit 1
fi
for f in bin/onnx-prepack include/onnx_prepack/c_api.h include/onnx_prepack/onnx_prepack.hpp \
         lib/pkgconfig/onnx-prepack.pc lib/cmake/onnx_prepack/onnx_prepackConfig.cmake; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $prefix/$f is missing"; exit 1; }
done
ls "$prefix"/lib/libonnx_prepack.so* >/dev/null
echo "ok: $(wc -l <"$build/install_manifest.txt") files, all below the prefix"

# C with pkg-config.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$work/consumer_pc" "$src/tests/install/consumer.c" \
  $(pkg-config --cflags --libs onnx-prepack)
LD_LIBRARY_PATH="$prefix/lib" "$work/consumer_pc"

# C with find_package.
cmake -S "$src/tests/install/cmake_consumer" -B "$work/cmake_consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake_consumer" >/dev/null
"$work/cmake_consumer/consumer"   # the imported target carries the library's path (RPATH)

# The Python package from the prefix.
site=$(cd "$prefix" && ls -d lib/python3*/*-packages)
PYTHONPATH="$prefix/$site" /usr/bin/python3 -c \
  "import onnx_prepack, sys; assert onnx_prepack.__file__.startswith('$prefix'), onnx_prepack.__file__; print('ok: import from', onnx_prepack.__file__)"

# pip install . into a fresh venv (offline: no index), reusing BUILD's objects.
if /usr/bin/python3 -m venv --system-site-packages "$work/venv" 2>/dev/null; then
  ONNX_PREPACK_BUILD_DIR="$build" "$work/venv/bin/pip" install --no-index --quiet "$src" \
    >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; echo "FAIL: pip install"; exit 1; }
  (cd "$work" && "$work/venv/bin/python" - <<'PY'
import numpy as np, onnx, onnx_prepack
from onnx import helper, numpy_helper
w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", 1, [2, 3])],
                      [helper.make_tensor_value_info("y", 1, [2, 4])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
sess = onnx_prepack.InferenceSession(m.SerializeToString())
x = np.ones((2, 3), np.float32)
(y,) = sess.run(None, {"x": x})
assert np.array_equal(y, x @ numpy_helper.to_array(w)), y
assert "/venv/" in onnx_prepack.__file__, onnx_prepack.__file__
print("ok: pip-installed package runs a model from", onnx_prepack.__file__)
PY
  )
else
  echo "FAIL: python3 -m venv is not available (Debian package python3-venv)"; exit 1
fi
echo "install_test: all passed"
