#!/usr/bin/env python3
"""Self-test of tools/check_layers.py: a fake tree with one layering violation and one
order violation must fail with the expected messages; the same tree fixed must pass."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools', 'check_layers.py')


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    with tempfile.TemporaryDirectory() as root:
        write(root, 'docs/architecture.md', '# A\n\n```\nbase     low\nformat   mid\n'
              'engine   high\n```\n')
        write(root, 'src/base/CMakeLists.txt', 'op_add_layer(base EXTRA Threads::Threads)\n')
        write(root, 'src/format/CMakeLists.txt', 'op_add_layer(format DEPS onnx_prepack_base onnx_prepack_proto)\n')
        write(root, 'src/engine/CMakeLists.txt', 'op_add_layer(engine DEPS onnx_prepack_format)\n')
        write(root, 'src/base/status.h', '#pragma once\n#include <string>\n')
        write(root, 'src/format/model.h', '#include "base/status.h"\n#include "onnx_prepack.pb.h"\n')
        write(root, 'src/engine/engine.cc', '#include "format/model.h"\n#include "base/status.h"\n'
              '#include "onnx_prepack/engine.hpp"\n')
        write(root, 'include/onnx_prepack/engine.hpp', '#include "onnx_prepack/status.h"\n')
        # The violation: format (below engine) includes an engine header.
        write(root, 'src/format/reader.cc', '#include "format/model.h"\n\n#include "engine/engine.h"\n')

        rc, out = run(root)
        expected = ("src/format/reader.cc:3: layer 'format' includes 'engine/engine.h' "
                    "but format does not depend on engine")
        assert rc == 1, (rc, out)
        assert expected in out, out
        assert '1 violations' in out, out

        # An allow-list entry accepts it.
        write(root, 'tools/layering_allow.txt',
              '# reason: test\nsrc/format/reader.cc:engine/engine.h  # fake exception\n')
        rc, out = run(root)
        assert rc == 0, (rc, out)
        os.remove(os.path.join(root, 'tools/layering_allow.txt'))

        # A dependency on a later layer (and the cycle it makes) is reported too.
        write(root, 'src/format/CMakeLists.txt', 'op_add_layer(format DEPS onnx_prepack_base onnx_prepack_engine)\n')
        rc, out = run(root)
        assert rc == 1, (rc, out)
        assert "layer 'format' depends on 'engine' but 'engine' is not listed before 'format'" in out, out
        assert 'dependency cycle' in out, out

        # Fixed tree passes.
        write(root, 'src/format/CMakeLists.txt', 'op_add_layer(format DEPS onnx_prepack_base)\n')
        write(root, 'src/format/reader.cc', '#include "format/model.h"\n')
        rc, out = run(root)
        assert rc == 0, (rc, out)
        assert out.startswith('layers: 5 files, 4 includes checked, 0 violations'), out
    print('check_layers self-test: ok')


if __name__ == '__main__':
    main()
