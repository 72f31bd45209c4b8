#!/usr/bin/env bash
# Bounded libFuzzer run of every fuzz target: tools/run_fuzz.sh BUILD_DIR SECONDS [TARGET...]
# Each target runs on a scratch copy of its seed corpus (tests/fuzz/corpus/<name>/,
# never modified) for SECONDS with a 2 GiB RSS limit and a 10 s per-input
# timeout. Prints the executions per target; exits non-zero on any crash, leak,
# UB report, timeout or out-of-memory.
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

status=0
targets=("${@:3}")
[ ${#targets[@]} -gt 0 ] || targets=(check resolve run cache_entry)
for target in "${targets[@]}"; do
  exe="$build/tests/fuzz/fuzz_$target"
  if [ ! -x "$exe" ]; then
    echo "run_fuzz: $exe is missing (build the fuzz_targets target with -DONNX_PREPACK_FUZZ=ON)" >&2
    exit 2
  fi
  corpus="$scratch/$target"
  mkdir -p "$corpus"
  cp -r "$root/tests/fuzz/corpus/$target/." "$corpus/"
  log="$scratch/$target.log"
  set +e
  # Failing inputs are kept beside the build (the scratch folder is removed).
  mkdir -p "$build/fuzz-artifacts"
  (cd "$scratch" && "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$target-" "$corpus") >"$log" 2>&1
  rc=$?
  set -e
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
