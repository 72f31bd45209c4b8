#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup, release build + all tests
# (unit, interop with python3-onnx and ONNX Runtime, CLI), a sanitizer build
# (ASan + UBSan) running the unit tests, a bounded libFuzzer run, and an aarch64
# cross build run under qemu (tools/test_aarch64.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
jobs=$(nproc)
# Each stage header says how long the suite has run (the CI budget is 40 minutes).
stage() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }

stage "release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 900

# The AVX2 and portable paths on any host (an AVX-512 machine would only test
# its widest kernels otherwise): kernels, digest and runtime again, capped. On a
# host without AVX-512 the release run above already was the avx2 run. The
# reruns leave out the agreement tests against ONNX Runtime (*Ort*): their Node
# processes are most of their time, and what the cap changes, the kernels, is
# compared bit for bit with the ref twins by the kernel tests.
isas="avx2 ref"
if ! grep -qw avx512f /proc/cpuinfo; then
  isas="ref"
  echo "== no AVX-512 on this host: the release run was the avx2 run"
fi
for isa in $isas; do
  stage "ONNX_PREPACK_MAX_ISA=$isa: kernel, digest and runtime tests"
  for t in kernels digest runtime; do
    ONNX_PREPACK_MAX_ISA=$isa "build/tests/$t/${t}_tests" --gtest_filter='-*Ort*' --gtest_brief=1
  done
done

stage "sanitizer build (clang, ASan + UBSan + libFuzzer coverage): unit tests, then bounded fuzzing"
# One build serves both: every source compiled with -fsanitize=address,undefined and
# libFuzzer's coverage hooks (ONNX_PREPACK_FUZZ), the fuzz targets linked with its driver.
# clang here, g++ above: both compilers build everything with -Werror.
# -O1 -gline-tables-only: sanitizer checks and file:line in reports at a fraction of -O2 -g's
# compile time. No Python module: python3 cannot load an ASan-built module, so its tests run in
# the release build only. Without ONNX_PREPACK_FUZZ the fuzz targets' seed corpora replay as
# unit tests; with it, the fuzzing below runs each target on its corpus first.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_C_FLAGS="-O1 -gline-tables-only" \
  -DONNX_PREPACK_SANITIZE=ON -DONNX_PREPACK_FUZZ=ON \
  -DONNX_PREPACK_BENCH=OFF -DONNX_PREPACK_PYTHON_MODULE=OFF >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit --timeout 900

if [ -d tests/fuzz ] && ls tests/fuzz/*.cc >/dev/null 2>&1; then
  stage "fuzz (libFuzzer, bounded)"
  # 4 targets x 40 s, two at a time on 2 cores: about 80 s in all.
  bash tools/run_fuzz.sh build-asan "${FUZZ_SECONDS:-40}"
fi

# aarch64: cross build + qemu user mode (detection under three CPU models, the
# unit tests, the CLI on two real models against build/'s outputs).
stage "aarch64 cross build and qemu (tools/test_aarch64.sh)"
bash tools/test_aarch64.sh
stage "all tests passed"
