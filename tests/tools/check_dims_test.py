#!/usr/bin/env python3
"""Self-test of tools/check_dims.py: a fake tree with one planted violation of each kind must
fail naming the file, line and kind; each marked with `dims-lint: ok` (or fixed) must pass."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools', 'check_dims.py')

CLEAN = '''// An operator that computes its sizes through the helpers.
#include "runtime/kernel.h"

Result<int64_t> build(BuildContext& ctx, const ValueDesc* x) {
  int64_t n = shape_numel(x->shape);  // a value's shape: checked by the session
  int64_t m = shape_numel(ctx.input(1).shape);
  int64_t rows = x->shape[0] * x->shape[1];  // dims of one shape
  double d = 0.5;
  double sq = d * d;  // not an int64
  auto b2 = checked_square(ctx.attr_int("blocksize", 1));
  // shape_numel(out) in a comment is not code; nor is "a * a" in a string.
  return n + m + rows + int64_t(sq) + b2.value_or(0);
}
'''

PLANTED = {
    'numel': 'int64_t bad(const Shape& out) { return shape_numel(out); }\n',
    'cross': 'int64_t bad(const ValueDesc* x, const ValueDesc* w) {\n'
             '  return x->shape[0] * w->shape[1];\n}\n',
    'square': 'int64_t bad(BuildContext& ctx) {\n'
              '  const int64_t b = ctx.attr_int("blocksize", 0);\n  return b * b;\n}\n',
    'attr': 'int64_t bad(BuildContext& ctx, int64_t c) { return c * ctx.attr_int("k", 1); }\n',
    'builtin': 'bool bad(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }\n',
}


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
        write(root, 'src/runtime/ops/tensor/clean.cc', CLEAN)
        # The helper header itself may use the builtins.
        builtin = 'bool f(long a, long b, long* r) { return __builtin_mul_overflow(a, b, r); }\n'
        write(root, 'src/base/checked_arith.h', builtin)
        rc, out = run(root)
        assert rc == 0, (rc, out)
        assert 'no raw size arithmetic' in out, out
        # Any other layer may not: the one helper set is base's.
        write(root, 'src/types/reader.cc', builtin)
        rc, out = run(root)
        assert rc == 1 and 'src/types/reader.cc:1: [builtin]' in out, (rc, out)
        os.remove(os.path.join(root, 'src/types/reader.cc'))

        for kind, text in PLANTED.items():
            rel = 'src/runtime/ops/math/planted.cc'
            write(root, rel, '// planted\n' + text)
            rc, out = run(root)
            assert rc == 1, (kind, rc, out)
            assert '%s:' % rel in out and '[%s]' % kind in out, (kind, out)
            assert '1 findings' in out, (kind, out)
            # The marker on the line above accepts it.
            lines = text.split('\n')
            marked = '\n'.join(
                ('  // dims-lint: ok (self-test)\n' + l) if any(
                    k in l for k in ('shape_numel(out)', 'w->shape', 'b * b', 'attr_int("k"',
                                     '__builtin')) else l for l in lines)
            write(root, rel, '// planted\n' + marked)
            rc, out = run(root)
            assert rc == 0, (kind, rc, out)
            os.remove(os.path.join(root, rel))

        # An allow-list entry skips a file.
        write(root, 'src/runtime/ops/math/planted.cc', PLANTED['numel'])
        rc, out = run(root)
        assert rc == 1, (rc, out)
        write(root, 'tools/dims_allow.txt', '# reason\nsrc/runtime/ops/math/planted.cc  # test\n')
        rc, out = run(root)
        assert rc == 0, (rc, out)
        os.remove(os.path.join(root, 'tools/dims_allow.txt'))
        os.remove(os.path.join(root, 'src/runtime/ops/math/planted.cc'))

        # `builtin` covers all of src/runtime, not only ops/.
        write(root, 'src/runtime/session.cc', PLANTED['builtin'])
        rc, out = run(root)
        assert rc == 1 and 'src/runtime/session.cc:1: [builtin]' in out, out
    print('check_dims self-test: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
