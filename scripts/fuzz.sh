#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang-14, ASan and UBSan in
# build-fuzz/, writes the seed corpus from the repository's .gir files, and runs
# each target for FUZZ_SECONDS (default 60) on one core.
#   scripts/fuzz.sh                   # every target: fuzz_gir fuzz_npy fuzz_graph
#   FUZZ_SECONDS=600 scripts/fuzz.sh fuzz_graph
# The corpus grows in build-fuzz/corpus/<target>; findings (crash-*, leak-*,
# timeout-*) are written to build-fuzz/findings/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_gir fuzz_npy fuzz_graph)

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++-14}" -DGRAPHC_SANITIZE=address,undefined \
  -DGRAPHC_FUZZ=ON -DGRAPHC_CUDA=OFF
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

# Seeds: every case of every .gir file (golden files split at their `// -----`
# lines), and a few .npy files of each dtype.
corpus="$build_dir/corpus"
mkdir -p "$corpus/fuzz_gir" "$corpus/fuzz_npy" "$build_dir/findings"
git ls-files '*.gir' | while read -r file; do
  awk -v out="$corpus/fuzz_gir/$(echo "$file" | tr / _)" '
    /^\/\/ -----/ { n++; next } { print > (out "." n) }' "$file"
done
[ -d "$corpus/fuzz_graph" ] || cp -r "$corpus/fuzz_gir" "$corpus/fuzz_graph"
python3 - "$corpus/fuzz_npy" <<'PY'
import struct, sys
def npy(descr, shape, data, name):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    while (10 + len(h) + 1) % 64:
        h += ' '
    h += '\n'
    with open('%s/seed_%s.npy' % (sys.argv[1], name), 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + data)
npy('<f8', '(2,)', struct.pack('<2d', 1, 2), 'f8')
npy('<f4', '(1, 2)', struct.pack('<2f', 1, 2), 'f4')
npy('<i8', '()', struct.pack('<q', 7), 'i8')
npy('<i4', '(0, 3)', b'', 'i4')
npy('|b1', '(3,)', b'\x01\x00\x01', 'b1')
PY

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in "${targets[@]}"; do
  dict=()
  [ "$t" = fuzz_npy ] || dict=(-dict=tests/fuzz/gir.dict)
  echo "== $t: ${seconds}s"
  "$build_dir/tests/fuzz/$t" "$corpus/$t" -max_total_time="$seconds" -max_len=8192 \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$build_dir/findings/$t-" 2>&1 | tail -n 25 || status=1
done
exit $status
