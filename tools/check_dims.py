#!/usr/bin/env python3
"""Size-arithmetic lint (issue 18): sizes, strides and offsets computed from values a model
controls go through runtime/checked_math.h, never a raw int64 multiply.

Usage: check_dims.py [SOURCE_DIR]

Heuristics, over src/runtime/ops/**.cc|h (and `builtin` over all of src/):
- builtin:  a `__builtin_{mul,add,sub}_overflow` outside src/base/checked_arith.h: the one
            helper set is base/checked_arith.h (runtime/checked_math.h builds on it).
- numel:    `shape_numel(E)` where E is not the shape of a value (`x->shape`, `in.shape`,
            `ctx.input(i).shape`): a value's shape has been checked by the session, a local
            Shape was computed and must go through checked_product first.
- cross:    `a[i] * b[j]` of dims of two different shapes (`x->shape[0] * w->shape[1]`):
            each is bounded, their product is not (dims of one shape multiply safely).
- square:   `v * v`, one name times itself, where the closest declaration of v above is
            int64_t or an assignment from ctx.attr_int (an attribute such as blocksize squared).
- attr:     `ctx.attr_int(...)` as an operand of `*`.

A line is accepted when it, or the line above it, holds the marker `dims-lint: ok` followed by
the reason (e.g. `// dims-lint: ok (output shape, checked by the session)`). tools/dims_allow.txt
(optional) lists files not checked yet, one path per line, `#` starts a comment (the reason).

Prints one line per finding and exits 1, or prints a summary and exits 0.
"""
import os
import re
import sys

MARKER = 'dims-lint: ok'
BUILTIN_RE = re.compile(r'__builtin_(mul|add|sub)_overflow')
NUMEL_RE = re.compile(r'\bshape_numel\(')
# The shape of a value: `x->shape`, `in.shape`, `ctx.input(2).shape`, `outs[0].shape`.
VALUE_SHAPE_RE = re.compile(r'^\s*[\w\.\->\[\]\(\)]*(->|\.)shape\s*$')
DIM = r'((?:[A-Za-z_]\w*(?:\([^()]*\))?(?:->|\.))*(?:shape|dims))\s*\[[^\[\]]+\]'
CROSS_RE = re.compile(DIM + r'\s*\*\s*' + DIM)
# A lookahead, so that `c * b * b` yields `c * b` and `b * b`.
SQUARE_RE = re.compile(r'(?<![\w\.>\]])(?=([A-Za-z_]\w*)\s*\*\s*([A-Za-z_]\w*)(?![\w\(\[\.]))')
DECL_RE = r'\b(int64_t|uint64_t|int32_t|size_t|int|double|float|auto|bool|T|U|Acc)\s*[*&]?\s*%s\b\s*[=,;)\[{]'
ATTR_RE = re.compile(r'ctx\.attr_int\([^()]*\)\s*\*|\*\s*ctx\.attr_int\(')


def strip_comments_and_strings(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split('//', 1)[0]


def call_argument(text, start):
    """The argument of the call whose '(' is at text[start - 1], or None if unbalanced."""
    depth = 1
    i = start
    while i < len(text):
        if text[i] == '(':
            depth += 1
        elif text[i] == ')':
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1
    return None


def is_int64(name, lines, n):
    """True when the closest declaration of `name` at or above line n (1-based) is int64_t,
    or `name` is assigned from ctx.attr_int there."""
    decl = re.compile(DECL_RE % re.escape(name))
    attr = re.compile(r'\b%s\s*=\s*ctx\.attr_int\(' % re.escape(name))
    for i in range(n - 1, -1, -1):
        line = lines[i]
        if attr.search(line):
            return True
        m = decl.search(line)
        if m:
            return m.group(1) == 'int64_t'
    return False


def line_findings(code, in_ops, lines, n):
    found = []
    if BUILTIN_RE.search(code):
        found.append(('builtin', 'raw __builtin_*_overflow: use base/checked_arith.h'))
    if not in_ops:
        return found
    for m in NUMEL_RE.finditer(code):
        arg = call_argument(code, m.end())
        if arg is None or not VALUE_SHAPE_RE.match(arg):
            found.append(('numel', 'shape_numel(%s) of a computed shape: use checked_product, '
                          'or mark why the shape is already checked' % (arg or '...').strip()))
    for m in CROSS_RE.finditer(code):
        if m.group(1) != m.group(2):
            found.append(('cross', 'product of dims of two shapes (%s): use checked_mul'
                          % m.group(0).strip()))
    for m in SQUARE_RE.finditer(code):
        if m.group(1) == m.group(2) and is_int64(m.group(1), lines, n):
            found.append(('square', '%s * %s: use checked_square' % (m.group(1), m.group(2))))
    if ATTR_RE.search(code):
        found.append(('attr', 'an attribute int multiplied raw: use checked_mul'))
    return found


def check_file(path, rel, in_ops):
    if rel == os.path.join('src', 'base', 'checked_arith.h'):
        return []
    out = []
    with open(path, encoding='utf-8') as f:
        text = f.read()
    lines = text.split('\n')
    in_block_comment = False
    for n, line in enumerate(lines, 1):
        code = line
        if in_block_comment:
            if '*/' not in code:
                continue
            code = code.split('*/', 1)[1]
            in_block_comment = False
        if '/*' in code and '*/' not in code.split('/*', 1)[1]:
            in_block_comment = True
            code = code.split('/*', 1)[0]
        code = strip_comments_and_strings(code)
        findings = line_findings(code, in_ops, lines, n)
        if not findings:
            continue
        if MARKER in line or (n > 1 and MARKER in lines[n - 2]):
            continue
        for kind, msg in findings:
            out.append('%s:%d: [%s] %s' % (rel, n, kind, msg))
    return out


def allowed_files(root):
    path = os.path.join(root, 'tools', 'dims_allow.txt')
    if not os.path.exists(path):
        return set()
    with open(path, encoding='utf-8') as f:
        return {l.split('#', 1)[0].strip() for l in f} - {''}


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    allowed = allowed_files(root)
    runtime = os.path.join(root, 'src', 'runtime')
    ops = os.path.join(runtime, 'ops')
    problems = []
    files = 0
    for dirpath, _, names in os.walk(os.path.join(root, 'src')):
        for name in sorted(names):
            if not name.endswith(('.cc', '.h')):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel in allowed:
                continue
            # Outside the runtime only `builtin` applies (check_file's in_ops=False).
            if path.startswith(runtime + os.sep):
                files += 1
            problems += check_file(path, rel, path.startswith(ops + os.sep))
    for p in sorted(problems):
        print(p)
    if problems:
        print('%d findings (tools/check_dims.py: use runtime/checked_math.h or mark the line '
              'with "%s (reason)")' % (len(problems), MARKER))
        return 1
    print('check_dims: %d files under src/runtime, no raw size arithmetic; no raw overflow '
          'builtin in src/' % files)
    return 0


if __name__ == '__main__':
    sys.exit(main())
