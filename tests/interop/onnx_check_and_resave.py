"""Loads a model with Debian's python3-onnx, runs onnx.checker on it, and saves
it again (without touching external data) so the caller can verify that the
compiled-tensor extension fields survive onnx's load/save.

usage: onnx_check_and_resave.py MODEL OUT
"""
import sys

import onnx


def main() -> int:
    src, out = sys.argv[1], sys.argv[2]
    onnx.checker.check_model(src)  # path form: resolves external data beside the model
    model = onnx.load(src, load_external_data=False)
    onnx.save(model, out)
    print(f"ok ir_version={model.ir_version} nodes={len(model.graph.node)} "
          f"initializers={len(model.graph.initializer)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
