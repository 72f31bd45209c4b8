#!/usr/bin/python3
"""Reliability matrix (issue 11): repeats, as a user would with the CLI, the
classes of damage that must never change graph results.

  tools/reliability/matrix.py --cli build/src/cli/onnx-prepack [--long] [--seed N]

Classes: byte flips and truncations of payloads (model entries and cache-store
entries) and of the model's metadata, under --verify full and memo; kill -9 of
`compile` and of concurrent cache writers; disk full on a small tmpfs (root
only, else skipped); hostile models. The oracle of every case is the same
model run with --weights plain (the packed path must give exactly its outputs,
or fail where it fails). Prints per class: cases, crashes, wrong outputs,
hangs; exits 1 when any is non-zero.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 60


class Tally:
    def __init__(self):
        self.rows = {}

    def add(self, cls, crash=False, wrong=False, hang=False, note=None):
        r = self.rows.setdefault(cls, [0, 0, 0, 0, []])
        r[0] += 1
        r[1] += crash
        r[2] += wrong
        r[3] += hang
        if note and len(r[4]) < 3 and (crash or wrong or hang):
            r[4].append(note)

    def print(self):
        print(f"{'class':34} {'cases':>6} {'crashes':>8} {'wrong':>6} {'hangs':>6}")
        bad = 0
        for cls, (n, c, w, h, notes) in self.rows.items():
            print(f"{cls:34} {n:6d} {c:8d} {w:6d} {h:6d}")
            for note in notes:
                print(f"    {note}")
            bad += c + w + h
        return bad


def run(cmd, timeout=TIMEOUT, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, b"timeout"


def crashed(rc):
    return rc < 0 or rc >= 128 and rc != 124


class Case:
    """One model folder and its two runs (packed with a policy, plain)."""

    def __init__(self, cli, memo):
        self.cli = cli
        self.memo = memo

    def outputs(self, model, flags, outdir):
        shutil.rmtree(outdir, ignore_errors=True)
        rc, text = run([self.cli, "run", model, "--input", "x=random", "--output-dir", outdir,
                        "--memo-dir", self.memo] + flags)
        out = None
        if rc == 0:
            out = b"".join(open(os.path.join(outdir, f), "rb").read()
                           for f in sorted(os.listdir(outdir)))
        return rc, out, text

    def judge(self, tally, cls, model, flags, work):
        rc_p, out_p, _ = self.outputs(model, ["--weights", "plain"], os.path.join(work, "plain"))
        rc, out, text = self.outputs(model, flags, os.path.join(work, "packed"))
        crash = crashed(rc) or crashed(rc_p)
        hang = rc == 124 or rc_p == 124
        # Wrong: the packed run completes with other outputs than the plain
        # run of the same files, or completes where the plain run cannot.
        wrong = rc == 0 and (rc_p != 0 or out != out_p)
        tally.add(cls, crash, wrong, hang, f"{cls}: rc {rc} plain {rc_p}: {text[-300:]!r}")


def flip(path, rng, n, lo=0, hi=None):
    size = os.path.getsize(path)
    hi = size if hi is None else min(hi, size)
    if hi <= lo:
        return
    with open(path, "r+b") as f:
        for _ in range(n):
            at = rng.randrange(lo, hi)
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ (1 << rng.randrange(8))]))


def data_file(folder, model_name):
    for f in os.listdir(folder):
        if f.startswith(model_name + ".") and f.endswith(".data"):
            return os.path.join(folder, f)
    return None


def payload_end(cli, model):
    """End of the payload region: payloads come first in a compiled data file."""
    rc, text = run([cli, "inspect", model, "--json"])
    import json
    j = json.loads(text.split(b"\n{", 1)[-1] if not text.startswith(b"{") else text)
    end = 0
    for ct in j.get("compiled_tensors", []):
        if "offset" in ct:
            end = max(end, int(ct["offset"]) + int(ct["payload_bytes"]))
    return end


def mutation_classes(cli, base, tally, rng, n, work):
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    pristine = os.path.join(work, "pristine")
    os.makedirs(pristine)
    m = os.path.join(pristine, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "3", "--width", "96", "-o", m])
    rc, text = run([cli, "compile", m, "-o", os.path.join(pristine, "c.onnx"), "--target", "host",
                    "--memo-dir", memo])
    if rc != 0:
        sys.exit(f"compile failed: {text!r}")
    end = payload_end(cli, os.path.join(pristine, "c.onnx"))
    d = os.path.join(work, "case")
    for i in range(n):
        policy = ["full", "memo"][(i // 4) % 2]
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(pristine, d, copy_function=shutil.copy2)
        c = os.path.join(d, "c.onnx")
        data = data_file(d, "c.onnx")
        kind = i % 4
        if kind == 0:
            flip(data, rng, rng.choice([1, 1, 2, 8]), 0, end)
            cls = "payload byte flips"
        elif kind == 1:
            with open(data, "r+b") as f:
                f.truncate(rng.randrange(0, os.path.getsize(data)))
            cls = "payload truncations"
        elif kind == 2:
            flip(c, rng, rng.choice([1, 2, 4]))
            cls = "model metadata byte flips"
        else:
            # Swap in a same-size data file from another version of the weights.
            flip(data, rng, 1, 0, end)
            with open(c, "rb") as f:
                raw = bytearray(f.read())
            at = rng.randrange(len(raw))
            raw[at:at + 1] = b""  # a deleted byte: lengths and tags shift
            with open(c, "wb") as f:
                f.write(raw)
            cls = "payload flip + model byte deleted"
        case.judge(tally, f"{cls} ({policy})", c, ["--verify", policy], work)


def store_classes(cli, tally, rng, n, work):
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    m = os.path.join(work, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "2", "--width", "96", "-o", m])
    store = os.path.join(work, "store")
    for i in range(n):
        policy = ["full", "memo"][i % 2]
        run([cli, "run", m, "--cache", store, "--input", "x=random", "--memo-dir", memo])
        entries = os.path.join(store, "entries")
        ids = sorted(os.listdir(entries)) if os.path.isdir(entries) else []
        if not ids:
            tally.add("store entry mutations", wrong=True, note="store has no entries")
            continue
        e = os.path.join(entries, rng.choice(ids))
        target = os.path.join(e, rng.choice(["entry.data", "entry.data", "entry.onnx"]))
        if rng.random() < 0.7:
            flip(target, rng, rng.choice([1, 3]))
        else:
            with open(target, "r+b") as f:
                f.truncate(rng.randrange(0, os.path.getsize(target)))
        case.judge(tally, f"store entry mutations ({policy})", m,
                   ["--verify", policy, "--cache", store], work)


def kill_compile(cli, tally, rng, n, work):
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    m = os.path.join(work, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "4", "--width", "512", "-o", m])
    out = os.path.join(work, "out.onnx")
    run([cli, "compile", m, "-o", out, "--target", "host", "--no-memo"])
    t0 = time.time()
    run([cli, "compile", out, "-o", out, "--target", "host", "--no-memo"])
    full = max(time.time() - t0, 0.05)
    for i in range(n):
        src = m if i % 2 else out  # in place every other time
        p = subprocess.Popen([cli, "compile", src, "-o", out, "--target", "host", "--no-memo"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, full * 1.2))
        p.send_signal(signal.SIGKILL)
        p.wait()
        for policy in (["--verify", "off"], ["--verify", "full"]):
            case.judge(tally, "kill -9 during compile", out, policy, work)
    leftovers = [f for f in os.listdir(work) if ".tmp." in f]
    run([cli, "compile", m, "-o", out, "--target", "host", "--no-memo"])
    left = [f for f in os.listdir(work) if ".tmp." in f]
    tally.add("kill -9: temporaries cleaned", wrong=bool(left), note=f"left {left} (before {len(leftovers)})")


def kill_writers(cli, tally, rng, n, work):
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    m = os.path.join(work, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "4", "--width", "256", "-o", m])
    store = os.path.join(work, "store")
    for i in range(n):
        shutil.rmtree(store, ignore_errors=True) if i % 5 == 0 else None
        procs = [subprocess.Popen([cli, "run", m, "--cache", store, "--input", "x=random",
                                   "--memo-dir", memo],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(4)]
        time.sleep(rng.uniform(0, 0.3))
        for p in procs:
            if rng.random() < 0.5:
                p.send_signal(signal.SIGKILL)
        for p in procs:
            p.wait()
        case.judge(tally, "kill -9 of cache writers", m, ["--cache", store], work)


def disk_full(cli, tally, step_kib, work):
    if os.geteuid() != 0:
        tally.rows.setdefault("disk full (skipped: not root)", [0, 0, 0, 0, []])
        return
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    m = os.path.join(work, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "2", "--width", "384", "-o", m])
    mnt = os.path.join(work, "tmpfs")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt]).returncode != 0:
        tally.rows.setdefault("disk full (skipped: mount failed)", [0, 0, 0, 0, []])
        return
    try:
        for free_kib in range(0, 3072 + 1, step_kib):
            for f in os.listdir(mnt):
                os.unlink(os.path.join(mnt, f))
            out = os.path.join(mnt, "out.onnx")
            # An older output first (when it fits), then fill to leave `free_kib`.
            run([cli, "compile", m, "-o", out, "--target", "host", "--no-memo"])
            st = os.statvfs(mnt)
            avail = st.f_bavail * st.f_frsize
            fill = max(0, avail - free_kib * 1024)
            with open(os.path.join(mnt, "filler"), "wb") as f:
                try:
                    f.write(b"\0" * fill)
                except OSError:
                    pass
            rc, _ = run([cli, "compile", m, "-o", out, "--target", "host", "--no-memo"])
            crash = crashed(rc)
            os.unlink(os.path.join(mnt, "filler"))
            if os.path.exists(out):
                case.judge(tally, "disk full during compile", out, ["--verify", "off"], work)
                case.judge(tally, "disk full during compile", out, ["--verify", "full"], work)
            tally.add("disk full: compile exit (0 or 3)", crash, rc not in (0, 3), rc == 124,
                      f"free {free_kib} KiB: rc {rc}")
            half = [f for f in os.listdir(mnt) if ".tmp." in f]
            tally.add("disk full: no temporaries left", wrong=bool(half), note=str(half))
    finally:
        subprocess.run(["umount", mnt])


def hostile(cli, tally, work):
    hm = os.path.join(work, "hostile")
    os.makedirs(hm)
    r = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__),
                                                         "hostile_models.py"), hm])
    if r.returncode != 0:
        tally.add("hostile models", wrong=True, note="hostile_models.py failed")
        return
    os.mkfifo(os.path.join(hm, "fifo.onnx"))
    open(os.path.join(hm, "empty.onnx"), "wb").close()
    env = dict(os.environ, ONNX_PREPACK_MEMORY_BUDGET="1G")
    for f in sorted(os.listdir(hm)):
        for cmd in ("run", "inspect", "check", "explain"):
            rc, text = run([cli, cmd, os.path.join(hm, f)], timeout=30, env=env)
            tally.add("hostile models", crashed(rc), False, rc == 124, f"{cmd} {f}: rc {rc}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutations", type=int, help="model payload/metadata mutations")
    ap.add_argument("--store-mutations", type=int)
    ap.add_argument("--kills", type=int, help="kill -9 during compile")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    rng = random.Random(a.seed)
    tally = Tally()
    sizes = dict(mut=2400, store=400, kills=100, writers=40, step=200) if a.long else \
        dict(mut=48, store=12, kills=6, writers=4, step=1024)
    for key, value in (("mut", a.mutations), ("store", a.store_mutations), ("kills", a.kills)):
        if value is not None:
            sizes[key] = value
    with tempfile.TemporaryDirectory(prefix="op-matrix-") as work:
        def sub(name):
            p = os.path.join(work, name)
            os.makedirs(p)
            return p
        steps = [lambda: mutation_classes(cli, None, tally, rng, sizes["mut"], sub("mut")),
                 lambda: store_classes(cli, tally, rng, sizes["store"], sub("store")),
                 lambda: kill_compile(cli, tally, rng, sizes["kills"], sub("kill")),
                 lambda: kill_writers(cli, tally, rng, sizes["writers"], sub("writers")),
                 lambda: disk_full(cli, tally, sizes["step"], sub("full")),
                 lambda: hostile(cli, tally, sub("hostile"))]
        for step in steps:
            step()
            if a.long:  # partial tables while a long run goes on
                tally.print()
                print(flush=True)
    bad = tally.print()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
