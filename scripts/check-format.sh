#!/usr/bin/env bash
# Checks that every tracked C++ and CUDA file is formatted as .clang-format says (clang-format
# 14, which scripts/setup.sh installs): lists the files that differ and exits 1, or
# exits 77 (a skip for ctest) when clang-format-14 or git is missing. Fix them with
#   git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format-14 > /dev/null || ! git rev-parse --git-dir > /dev/null 2>&1; then
  echo "check-format: clang-format-14 or a git checkout is missing; skipped"
  exit 77
fi
bad=()
while IFS= read -r f; do
  clang-format-14 --dry-run --Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) differ from .clang-format:"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: every C++ and CUDA file is formatted"
