#!/usr/bin/python3
"""Random mutation fuzzing without libFuzzer: mutates a target's seed corpus
(bit flips, byte runs, truncation, insertion, splicing) and feeds batches to
the replay build of the target (tests/fuzz/replay_main.cc). For machines where
a sanitizer/libFuzzer build is not available; coverage-guided fuzzing is
tools/run_fuzz.sh.

  tools/reliability/mutate_replay.py build/tests/fuzz/fuzz_resolve tests/fuzz/corpus/resolve 300
"""
import os
import random
import subprocess
import sys
import tempfile
import time


def mutate(rng, data, seeds):
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4, 8])):
        op = rng.randrange(6)
        if not b:
            b += os.urandom(8)
        at = rng.randrange(len(b))
        if op == 0:
            b[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[at] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        elif op == 2:
            del b[at:at + rng.randrange(1, 16)]
        elif op == 3:
            b[at:at] = os.urandom(rng.randrange(1, 16))
        elif op == 4:
            other = rng.choice(seeds)
            if other:
                o = rng.randrange(len(other))
                b[at:at + 16] = other[o:o + 16]
        else:
            del b[at:]
    return bytes(b)


def main():
    exe, corpus, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    seeds = [open(os.path.join(corpus, f), "rb").read() for f in sorted(os.listdir(corpus))]
    rng = random.Random(int(os.environ.get("SEED", "1")))
    end = time.time() + seconds
    runs = crashes = 0
    with tempfile.TemporaryDirectory() as work:
        while time.time() < end:
            batch = []
            for i in range(100):
                p = os.path.join(work, f"in{i}")
                with open(p, "wb") as f:
                    f.write(mutate(rng, rng.choice(seeds), seeds))
                batch.append(p)
            try:
                r = subprocess.run([exe] + batch, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=300)
                rc = r.returncode
            except subprocess.TimeoutExpired:
                rc = 124
            runs += len(batch)
            if rc != 0:
                # Find the input: replay one by one, keep it.
                for p in batch:
                    try:
                        one = subprocess.run([exe, p], stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, timeout=60).returncode
                    except subprocess.TimeoutExpired:
                        one = 124
                    if one != 0:
                        crashes += 1
                        keep = f"crash-{os.path.basename(exe)}-{crashes}"
                        os.replace(p, keep)
                        print(f"{exe}: rc {one} on {keep}", flush=True)
                        break
    print(f"{os.path.basename(exe)}: {runs} executions in {seconds:.0f} s, {crashes} failing inputs")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
