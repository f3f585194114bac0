#!/usr/bin/env bash
# Builds graphc with sanitizers in build-asan/ (build-tsan/ for thread) and runs
# the CPU suite (ctest without the `gpu` label and the static checks) under them.
#   scripts/sanitize.sh                    # ASan + UBSan, build-asan/
#   scripts/sanitize.sh thread             # TSan, build-tsan/ (also: tsan)
#   scripts/sanitize.sh asan               # the same as address,undefined
#   scripts/sanitize.sh address,undefined -R Fused   # extra arguments go to ctest
# The build is Debug at -O1: assertions (LLVM's ADT, libstdc++'s) stay on and the
# sanitizers' reports keep their frames. The CUDA backend is left out (the CPU
# suite needs none of it, and the CUDA runtime needs ASan options of its own).
# Any report aborts its test (no recovery), so a finding is a failing test.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers="${1:-address,undefined}"
shift || true
case "$sanitizers" in
tsan | thread) sanitizers=thread build_dir="${SANITIZE_BUILD_DIR:-build-tsan}" ;;
asan) sanitizers=address,undefined build_dir="${SANITIZE_BUILD_DIR:-build-asan}" ;;
*) build_dir="${SANITIZE_BUILD_DIR:-build-asan}" ;;
esac

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DGRAPHC_SANITIZE="$sanitizers" -DGRAPHC_CUDA=OFF ${GRAPHC_SANITIZE_CMAKE_ARGS:-}
cmake --build "$build_dir" -j"$(nproc)"

# allocator_may_return_null: the tests of impossible sizes (terabytes) expect the
# allocation to fail as it does without the sanitizers, not ASan or TSan to abort.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1}"
# OpenBLAS's own threads are not instrumented: one thread keeps TSan's reports ours.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# The static checks (format.check, tidy.check) are left out: they are about the
# sources, not the sanitizers, and clang-tidy cannot parse the sanitizer builds'
# flags (LLVM's headers then include GCC's sanitizer headers, which clang lacks).
ctest --test-dir "$build_dir" -LE gpu -E '^(format|tidy)[.]check$' --output-on-failure \
  -j"$(nproc)" "$@"
