#!/usr/bin/env python3
"""tools/difffuzz can fail: run.py against fake CLIs that crash, hang, answer wrongly or
refuse, and the comparison rules (NaN equals NaN, dtype and shape count, float tolerance)."""
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from difffuzz import run  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


# A fake onnx-prepack: `ops --json` lists Abs and Neg; `run` does what BEHAVIOUR says.
FAKE = r'''#!/bin/sh
if [ "$1" = ops ]; then echo '{"operators": ["Abs", "Neg"], "count": 2}'; exit 0; fi
out=""
while [ $# -gt 0 ]; do [ "$1" = --output-dir ] && out="$2"; shift; done
case "%s" in
  crash) kill -SEGV $$ ;;
  hang) sleep 30 ;;
  refuse) echo "onnx-prepack run: node 'x' (Abs): refused" >&2; exit 2 ;;
  internal) echo "onnx-prepack run: internal error" >&2; exit 3 ;;
  wrong) /usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1] + '/y0.npy', np.full([7], 42.0, np.float32))" "$out" ;;
esac
'''


def fake_run(tmp, behaviour, count=4):
    cli = os.path.join(tmp, "fake_" + behaviour)
    open(cli, "w").write(FAKE % behaviour)
    os.chmod(cli, os.stat(cli).st_mode | stat.S_IEXEC)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "difffuzz", "run.py"),
                        "--cli", cli, "--count", str(count), "--seed", "3", "--timeout", "2"],
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for behaviour, cls in [("crash", "ours_crash"), ("hang", "ours_hang"),
                               ("internal", "ours_internal"), ("wrong", "FAIL")]:
            rc, out = fake_run(tmp, behaviour, count=2 if behaviour == "hang" else 4)
            check(rc == 1, "%s: run.py exits 1 (got %d)\n%s" % (behaviour, rc, out[-800:]))
            check(cls in out, "%s: reported as %s\n%s" % (behaviour, cls, out[-800:]))
        rc, out = fake_run(tmp, "refuse")
        # Abs and Neg models are valid unless mutated: refusing valid ones is untriaged.
        check("ours_refuses" in out or "both_refuse" in out, "refuse: classified\n" + out[-800:])

    f = np.float32
    check(run.compare({"y": np.array([np.nan, 1], f)}, {"y": np.array([np.nan, 1], f)}) is None,
          "NaN equals NaN")
    check(run.compare({"y": np.array([1.0], f)}, {"y": np.array([1.0 + 1e-6], f)}) is None,
          "within 1e-5 + 1e-4 |ort|")
    check(run.compare({"y": np.array([1.0], f)}, {"y": np.array([1.01], f)}) is not None,
          "a 1% difference is a difference")
    check(run.compare({"y": np.array([1], np.int32)}, {"y": np.array([1], np.int64)}) is not None,
          "dtypes must match")
    check(run.compare({"y": np.zeros([2, 1], f)}, {"y": np.zeros([2], f)}) is not None,
          "shapes must match")
    check(run.compare({"y": np.array([np.inf], f)}, {"y": np.array([-np.inf], f)}) is not None,
          "+inf is not -inf")
    check(run.compare({"y": np.array([5], np.int64)}, {"y": np.array([6], np.int64)}) is not None,
          "integers exactly")
    if FAILURES:
        print("difffuzz_test: %d failures" % len(FAILURES))
        return 1
    print("difffuzz_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
