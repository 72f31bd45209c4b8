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
import fnmatch
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
    """Per class: cases, then the failures of each kind (COLUMNS)."""
    COLUMNS = ("crashes", "wrong", "hangs", "over_budget", "accepted_invalid", "messages")

    def __init__(self):
        self.rows = {}

    def add(self, cls, crash=False, wrong=False, hang=False, note=None, over_budget=False,
            accepted_invalid=False, message=False):
        r = self.rows.setdefault(cls, [0] * (1 + len(self.COLUMNS)) + [[]])
        bad = (crash, wrong, hang, over_budget, accepted_invalid, message)
        r[0] += 1
        for i, b in enumerate(bad):
            r[1 + i] += bool(b)
        if note and len(r[-1]) < 3 and any(bad):
            r[-1].append(note)

    def skip(self, cls):
        self.rows.setdefault(cls, [0] * (1 + len(self.COLUMNS)) + [[]])

    def print(self):
        heads = ["cases"] + [c.replace("_", " ") for c in self.COLUMNS]
        width = max([34] + [len(c) for c in self.rows])
        print(f"{'class':{width}} " + " ".join(f"{h:>{max(6, len(h))}}" for h in heads))
        bad = 0
        for cls, r in self.rows.items():
            print(f"{cls:{width}} " + " ".join(f"{v:{max(6, len(h))}d}"
                                                  for h, v in zip(heads, r[:-1])))
            for note in r[-1]:
                print(f"    {note}")
            bad += sum(r[1:-1])
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


def inspect_json(cli, model):
    import json
    rc, text = run([cli, "inspect", model, "--json"])
    return json.loads(text.split(b"\n{", 1)[-1] if not text.startswith(b"{") else text)


def payload_end(cli, model):
    """End of the payload region: payloads come first in a compiled data file."""
    end = 0
    for ct in inspect_json(cli, model).get("compiled_tensors", []):
        if "offset" in ct:
            end = max(end, int(ct["offset"]) + int(ct["payload_bytes"]))
    return end


def mutate_compiled(cli, tally, rng, n, work, pristine, label):
    """`n` mutations of pristine/c.onnx and its data file, each judged against
    --weights plain; `label(kind, policy)` names the class of each."""
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
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
        case.judge(tally, label(cls, policy), c, ["--verify", policy], work)


def compile_pristine(cli, model, pristine, memo):
    """Compiles `model` into pristine/c.onnx; the error, or None."""
    rc, text = run([cli, "compile", model, "-o", os.path.join(pristine, "c.onnx"), "--target",
                    "host", "--memo-dir", memo])
    return None if rc == 0 else f"compile failed (rc {rc}): {text[-300:]!r}"


def mutation_classes(cli, base, tally, rng, n, work):
    memo = os.path.join(work, "memo")
    pristine = os.path.join(work, "pristine")
    os.makedirs(pristine)
    m = os.path.join(pristine, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "3", "--width", "96", "-o", m])
    err = compile_pristine(cli, m, pristine, memo)
    if err:
        sys.exit(err)
    mutate_compiled(cli, tally, rng, n, work, pristine, lambda cls, policy: f"{cls} ({policy})")


def family_classes(cli, tally, rng, n, work):
    """The same mutations on a model of every pack family and layout
    (family_models.py): each must have compiled entries of its family's
    formats, or the class fails."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import family_models
    import onnx
    memo = os.path.join(work, "memo")
    for name, (model, prefix) in family_models.family_models().items():
        fam = os.path.join(work, name)
        pristine = os.path.join(fam, "pristine")
        os.makedirs(pristine)
        m = os.path.join(pristine, "m.onnx")
        onnx.save(model, m)
        label = lambda cls, policy, name=name: f"entries {name} ({policy})"
        err = compile_pristine(cli, m, pristine, memo)
        formats = [] if err else [ct.get("format", "") for ct in
                                  inspect_json(cli, os.path.join(pristine, "c.onnx"))
                                  .get("compiled_tensors", [])]
        hits = 0
        if formats:  # the pristine entries must be what the run uses
            import json
            rc, text = run([cli, "run", os.path.join(pristine, "c.onnx"), "--json", "--input",
                            "x=random", "--memo-dir", memo])
            hits = json.loads(text[text.index(b"{"):])["totals"]["hits"] if rc == 0 else 0
        pattern = prefix if "*" in prefix else prefix + "*"
        if err or not formats or not all(fnmatch.fnmatch(f, pattern) for f in formats) or not hits:
            for policy in ("full", "memo"):
                tally.add(label("", policy), wrong=True,
                          note=f"{name}: no {prefix}* entries hit: {err or formats}, {hits} hits")
            continue
        mutate_compiled(cli, tally, rng, n, fam, pristine, label)


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
        tally.skip("disk full (skipped: not root)")
        return
    memo = os.path.join(work, "memo")
    case = Case(cli, memo)
    m = os.path.join(work, "m.onnx")
    run([cli, "generate", "mlp", "--layers", "2", "--width", "384", "-o", m])
    mnt = os.path.join(work, "tmpfs")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt]).returncode != 0:
        tally.skip("disk full (skipped: mount failed)")
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


def run_measured(cmd, timeout, env):
    """Runs `cmd`; (exit code or 124 on timeout, output, the child's own peak
    RSS in KiB from wait4, seconds)."""
    import threading
    with tempfile.TemporaryFile() as out:
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        timed_out = []
        timer = threading.Timer(timeout, lambda: (timed_out.append(1), p.kill()))
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timer.cancel()
        seconds = time.time() - t0
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    return (124 if timed_out else rc), text, usage.ru_maxrss, seconds


OPS_BUDGET_MIB = 256
OPS_TIMEOUT = 10


def ops_classes(cli, tally, work):
    """The hostile operator cases (hostile_ops.py), each run by the CLI under
    a 256 MiB memory budget: crashes, hangs (10 s or the case's bound), peak
    RSS past the budget + 64 MiB, wrong answers, invalid models accepted,
    refusals without exit 2 or without the node, op and values."""
    import json
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hostile_ops
    import numpy as np
    import onnx
    env = dict(os.environ, ONNX_PREPACK_MEMORY_BUDGET=f"{OPS_BUDGET_MIB}M")
    for i, c in enumerate(hostile_ops.all_cases()):
        d = os.path.join(work, str(i))
        os.makedirs(d)
        model = os.path.join(d, "m.onnx")
        onnx.save(c.model, model)
        cmd = [cli, "run", model, "--json", "--output-dir", os.path.join(d, "out")]
        for name, value in c.feeds.items():
            np.save(os.path.join(d, f"in_{name}.npy"), value)
            cmd += ["--input", f"{name}={os.path.join(d, f'in_{name}.npy')}"]
        rc, text, rss_kib, seconds = run_measured(cmd, OPS_TIMEOUT, env)
        note = f"{c.name}: rc {rc}, {seconds:.1f} s, rss {rss_kib >> 10} MiB: {text[-400:]!r}"
        crash, hang = crashed(rc), rc == 124
        slow = c.seconds is not None and seconds > c.seconds
        over = rss_kib > (OPS_BUDGET_MIB + 64) * 1024
        wrong = accepted = message = False
        refusal = c.error or c.invalid
        if refusal is not None:
            if rc == 0:
                accepted, wrong = c.invalid is not None, c.error is not None
            elif not crash and not hang:
                message = rc != 2 or not all(part.encode() in text for part in refusal)
        elif rc != 0:
            wrong = not crash and not hang
        else:
            for name, value in c.want.items():
                f = os.path.join(d, "out", name + ".npy")
                got = np.load(f) if os.path.exists(f) else None
                if got is None or got.shape != value.shape or got.dtype != value.dtype:
                    wrong = True
                elif c.rtol is not None:
                    wrong = wrong or not np.allclose(got, value, rtol=c.rtol, atol=0)
                else:
                    wrong = wrong or not np.array_equal(got, value)
            if c.plan_seconds is not None:
                plan_s = json.loads(text[text.index(b"{"):])["timings_ms"]["plan"] / 1000
                slow = slow or plan_s > c.plan_seconds
                note = f"{c.name}: plan {plan_s:.2f} s; " + note
        tally.add(c.cls, crash, wrong, hang or slow, note, over_budget=over,
                  accepted_invalid=accepted, message=message)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutations", type=int, help="model payload/metadata mutations")
    ap.add_argument("--store-mutations", type=int)
    ap.add_argument("--kills", type=int, help="kill -9 during compile")
    ap.add_argument("--family-mutations", type=int, help="mutations per pack-family model")
    ap.add_argument("--only", help="run only these steps (comma-separated: mut, store, kill, "
                    "writers, full, hostile, family, ops)")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    rng = random.Random(a.seed)
    tally = Tally()
    sizes = dict(mut=2400, store=400, kills=100, writers=40, step=200, family=400) if a.long \
        else dict(mut=48, store=12, kills=6, writers=4, step=1024, family=16)
    for key, value in (("mut", a.mutations), ("store", a.store_mutations), ("kills", a.kills),
                       ("family", a.family_mutations)):
        if value is not None:
            sizes[key] = value
    with tempfile.TemporaryDirectory(prefix="op-matrix-") as work:
        def sub(name):
            p = os.path.join(work, name)
            os.makedirs(p)
            return p
        steps = [("mut", lambda: mutation_classes(cli, None, tally, rng, sizes["mut"],
                                                  sub("mut"))),
                 ("store", lambda: store_classes(cli, tally, rng, sizes["store"], sub("store"))),
                 ("kill", lambda: kill_compile(cli, tally, rng, sizes["kills"], sub("kill"))),
                 ("writers", lambda: kill_writers(cli, tally, rng, sizes["writers"],
                                                  sub("writers"))),
                 ("full", lambda: disk_full(cli, tally, sizes["step"], sub("full"))),
                 ("hostile", lambda: hostile(cli, tally, sub("hostile"))),
                 ("family", lambda: family_classes(cli, tally, rng, sizes["family"],
                                                   sub("family"))),
                 ("ops", lambda: ops_classes(cli, tally, sub("ops")))]
        only = set(a.only.split(",")) if a.only else None
        for name, step in steps:
            if only is not None and name not in only:
                continue
            t0 = time.time()
            step()
            print(f"[{name}] {time.time() - t0:.1f} s", flush=True)
            if a.long:  # partial tables while a long run goes on
                tally.print()
                print(flush=True)
    bad = tally.print()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
