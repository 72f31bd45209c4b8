#!/usr/bin/env bash
# Bounded libFuzzer run of every fuzz target: tools/run_fuzz.sh BUILD_DIR SECONDS [TARGET...]
# Each target runs on a scratch copy of its seed corpus (tests/fuzz/corpus/<name>/,
# never modified) for SECONDS with a 2 GiB RSS limit and a 10 s per-input
# timeout, as many targets at once as there are cores (FUZZ_JOBS overrides).
# Prints the executions per target; exits non-zero on any crash, leak, UB
# report, timeout or out-of-memory.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: tools/run_fuzz.sh BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build="$(cd "$1" && pwd)"
seconds=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"

targets=("${@:3}")
[ ${#targets[@]} -gt 0 ] || targets=(check resolve run cache_entry json)
for target in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/fuzz_$target" ]; then
    echo "run_fuzz: $build/tests/fuzz/fuzz_$target is missing (build the fuzz_targets target with -DONNX_PREPACK_FUZZ=ON)" >&2
    exit 2
  fi
done
# Failing inputs are kept beside the build (the scratch folder is removed).
mkdir -p "$build/fuzz-artifacts"

# One target: fuzz a scratch copy of its corpus, then write its verdict to $scratch/<target>.rc.
fuzz_one() {
  local target=$1 corpus="$scratch/$1" log="$scratch/$1.log" rc
  mkdir -p "$corpus"
  cp -r "$root/tests/fuzz/corpus/$target/." "$corpus/"
  set +e
  (cd "$scratch" && "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$target-" "$corpus") >"$log" 2>&1
  rc=$?
  set -e
  echo "$rc" >"$scratch/$target.rc"
}

# libFuzzer is single-threaded: run as many targets at once as there are cores.
parallel=${FUZZ_JOBS:-$(nproc)}
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

status=0
for target in "${targets[@]}"; do
  log="$scratch/$target.log"
  rc=$(cat "$scratch/$target.rc" 2>/dev/null || echo 1)
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "run_fuzz: fuzz_$target FAILED (exit $rc) after ${runs:-?} executions" >&2
    status=1
  else
    echo "run_fuzz: fuzz_$target clean: ${runs:-?} executions in ${seconds}s"
  fi
done
exit $status
