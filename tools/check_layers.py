#!/usr/bin/env python3
"""Layering check (issue 17): every layer library is built with `-I src`, so the
compiler alone does not stop a layer from including a higher one. This script does.

Usage: check_layers.py [SOURCE_DIR]

- The layer order is the first code block of docs/architecture.md (first word of
  each line that names a folder under src/), lowest first.
- A layer's declared dependencies are the `onnx_prepack_<layer>` names in the
  op_add_layer(... DEPS ...) and target_link_libraries(...) calls of
  src/<layer>/CMakeLists.txt, taken transitively.
- A file in src/L may include "L/...", "D/..." for any D that L depends on,
  "onnx_prepack/..." (public headers) and generated headers without a folder
  (onnx_prepack.pb.h). <...> includes are ignored. Public headers under
  include/onnx_prepack/ may include only other public headers and generated ones.
- The graph must be acyclic and each layer may depend only on layers listed
  before it in docs/architecture.md.
- tools/layering_allow.txt (optional) lists accepted exceptions, one
  `path:include` per line, `#` starts a comment (the reason).

Prints one line per violation and exits 1, or prints a summary and exits 0.
"""
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CALL_RE = re.compile(r'\b(op_add_layer|target_link_libraries)\s*\(([^)]*)\)', re.S)
LIB_RE = re.compile(r'\bonnx_prepack_(\w+)')


def layer_order(root, src_layers):
    """Layers in the order of the first code block of docs/architecture.md."""
    path = os.path.join(root, 'docs', 'architecture.md')
    order = []
    in_block = False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                if in_block:
                    break
                in_block = True
                continue
            if in_block and line[:1] not in (' ', '\t', '\n'):
                word = line.split()[0]
                if word in src_layers and word not in order:
                    order.append(word)
    return order


def declared_deps(root, layer, src_layers):
    path = os.path.join(root, 'src', layer, 'CMakeLists.txt')
    deps = set()
    if not os.path.exists(path):
        return deps
    with open(path, encoding='utf-8') as f:
        text = re.sub(r'#[^\n]*', '', f.read())
    for m in CALL_RE.finditer(text):
        args = m.group(2)
        if m.group(1) == 'op_add_layer':
            # op_add_layer(name DEPS a b EXTRA c): only DEPS are layer links.
            args = args.split('EXTRA')[0]
        for dep in LIB_RE.findall(args):
            if dep in src_layers and dep != layer:
                deps.add(dep)
    return deps


def load_allow(root):
    allow = set()
    path = os.path.join(root, 'tools', 'layering_allow.txt')
    if os.path.exists(path):
        with open(path, encoding='utf-8') as f:
            for line in f:
                line = line.split('#', 1)[0].strip()
                if line:
                    allow.add(line)
    return allow


def source_files(root):
    for base, exts in (('src', ('.h', '.cc')), (os.path.join('include', 'onnx_prepack'), None)):
        top = os.path.join(root, base)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if exts is None or name.endswith(exts):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, '/')


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
    src = os.path.join(root, 'src')
    src_layers = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    order = layer_order(root, src_layers)
    violations = []

    for layer in src_layers:
        if layer not in order:
            violations.append(f"src/{layer}/: layer '{layer}' is not listed in docs/architecture.md")
    rank = {l: i for i, l in enumerate(order)}

    direct = {l: declared_deps(root, l, src_layers) for l in src_layers}
    for layer in src_layers:
        for dep in sorted(direct[layer]):
            if layer in rank and dep in rank and rank[dep] >= rank[layer]:
                violations.append(f"src/{layer}/CMakeLists.txt:1: layer '{layer}' depends on '{dep}' "
                                  f"but '{dep}' is not listed before '{layer}' in docs/architecture.md")

    # Cycles: depth-first search over the declared graph.
    state = {}
    def visit(node, stack):
        state[node] = 1
        for dep in sorted(direct[node]):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep] if dep in stack else [node, dep]
                violations.append(f"src/{node}/CMakeLists.txt:1: dependency cycle: {' -> '.join(cycle)}")
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2
    for layer in src_layers:
        if layer not in state:
            visit(layer, [layer])

    closure = {}
    for layer in src_layers:
        seen, todo = set(), list(direct[layer])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(direct[d])
        closure[layer] = seen

    allow = load_allow(root)
    used_allow = set()
    files = checked = 0
    for rel in source_files(root):
        files += 1
        public = rel.startswith('include/')
        layer = None if public else rel.split('/')[1]
        if not public and '/' not in rel[len('src/'):]:
            continue  # a file directly under src/ belongs to no layer
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if '/' not in inc:
                    continue  # generated (onnx_prepack.pb.h) or same-folder header
                target = inc.split('/')[0]
                if target == 'onnx_prepack' or target not in src_layers:
                    continue
                checked += 1
                if not public and (target == layer or target in closure[layer]):
                    continue
                key = f'{rel}:{inc}'
                if key in allow:
                    used_allow.add(key)
                    continue
                if public:
                    violations.append(f"{rel}:{lineno}: public header includes '{inc}' "
                                      f"but public headers may include only onnx_prepack/...")
                else:
                    violations.append(f"{rel}:{lineno}: layer '{layer}' includes '{inc}' "
                                      f"but {layer} does not depend on {target}")

    for key in sorted(allow - used_allow):
        violations.append(f"tools/layering_allow.txt: stale entry '{key}' (no such include)")

    for v in violations:
        print(v)
    if violations:
        print(f'layers: {files} files, {checked} includes checked, {len(violations)} violations')
        return 1
    print(f'layers: {files} files, {checked} includes checked, 0 violations')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
