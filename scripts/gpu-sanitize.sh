#!/usr/bin/env bash
# Runs a GPU test binary under compute-sanitizer's tools, on a machine with a GPU:
#   scripts/gpu-sanitize.sh [TEST_BINARY] [LOG_DIR]
#     TEST_BINARY  default build/tests/gpu/gpu_tests
#     LOG_DIR      default sanitize-logs (one log per tool and shard)
#   SANITIZE_TOOLS   default "memcheck racecheck initcheck synccheck"
#   SANITIZE_SHARDS  processes per tool (gtest shards), default 4
#   SANITIZE_FILTER  gtest filter of the tests to run, default all
#   SANITIZE_TIMEOUT seconds a process may take before it is killed, default none
#   SANITIZE_EXCLUDE kernels left unchecked, as compute-sanitizer's kernel-name
#                    filter (kns=SUBSTRING), e.g. a library's kernel it reports
# Every tool's shards run at once (one GPU serves them all; each process has its
# own kernel cache folder), except the tests that take the device's memory away
# (OutOfMemory.*), which would starve the others: they run afterwards, one tool
# at a time. Errors of CUDA API calls are not reported: the tests provoke some on
# purpose (out of memory, a device that does not exist), and graphc checks every
# call's result itself. Neither are the allocations alive at exit (memcheck's leak
# check): the device and pinned host pools keep their blocks for the process's
# life; the tests check with DevicePool::statistics() that runs give back what
# they take.
# The exit status is 0 when every tool reports no error and every test passed;
# the last lines say, per tool, the errors reported and the tests passed.
set -uo pipefail

binary="${1:-build/tests/gpu/gpu_tests}"
logs="${2:-sanitize-logs}"
tools="${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}"
shards="${SANITIZE_SHARDS:-4}"
filter="${SANITIZE_FILTER:-*}"
sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
mkdir -p "$logs"
exclude=()
if [ -n "${SANITIZE_EXCLUDE:-}" ]; then # the option's name before 2023: --exclude
  if "$sanitizer" --help | grep -q -- --kernel-name-exclude; then
    exclude=(--kernel-name-exclude "$SANITIZE_EXCLUDE")
  else
    exclude=(--exclude "$SANITIZE_EXCLUDE")
  fi
fi

# run TOOL LOG FILTER [ENV...]: one sanitized process.
run() {
  local tool="$1" log="$2" tests="$3"
  shift 3
  env GRAPHC_CACHE_DIR="$(mktemp -d)" "$@" timeout -s KILL "${SANITIZE_TIMEOUT:-0}" \
    "$sanitizer" --tool "$tool" "${exclude[@]}" --report-api-errors no --error-exitcode 3 --print-limit 20 \
    "$binary" --gtest_filter="$tests" >"$log" 2>&1
}

negative="${filter#*-}"
[ "$negative" = "$filter" ] && negative="" || negative=":$negative"
positive="${filter%%-*}"
for tool in $tools; do
  for ((i = 0; i < shards; ++i)); do
    run "$tool" "$logs/$tool-$i.log" "${positive:-*}-OutOfMemory.*$negative" \
      GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" &
  done
done
wait
case "$positive" in
'*' | *OutOfMemory*)
  for tool in $tools; do
    run "$tool" "$logs/$tool-oom.log" "OutOfMemory.*${negative:+-${negative#:}}"
  done
  ;;
esac

status=0
for tool in $tools; do
  errors=0 passed=0 failed=0
  for log in "$logs/$tool"-*.log; do
    # memcheck, initcheck, synccheck: "ERROR SUMMARY: N errors"; racecheck:
    # "RACECHECK SUMMARY: N hazards displayed (...)", errors and warnings both.
    e=$(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
    p=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$')
    f=$(grep -oE '^ *[0-9]+ FAILED TESTS?' "$log" | grep -oE '[0-9]+')
    [ -z "$e" ] && { echo "$log: no error summary (the process did not finish)"; status=1; }
    errors=$((errors + ${e:-0})) passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
  done
  echo "$tool: $errors errors, $passed tests passed, $failed failed"
  [ "$errors" = 0 ] && [ "$failed" = 0 ] || status=1
done
exit "$status"
