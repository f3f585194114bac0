#!/usr/bin/env bash
# Runs clang-tidy 16 (scripts/setup.sh installs it) with the checks of .clang-tidy, which
# makes every warning an error, over C++ sources of BUILD_DIR/compile_commands.json
# (default: build/), GRAPHC_TIDY_JOBS at a time (default: every core); lists the findings
# and exits 1 when there are any, or exits 77 (a skip for ctest) when clang-tidy-16, git
# or the compilation database is missing. Generated sources in the build folder are
# left out. Which sources:
#   scripts/check-tidy.sh BUILD_DIR FILE...   the files named
#   GRAPHC_TIDY_BASE=all                      every source (192 with CUDA: about 32 CPU
#                                             minutes, so 16 on CI's 2 cores)
#   otherwise                                 the sources changed since a base (committed or
#                                             not, new files too) and the sources that
#                                             include a changed header; all of them when
#                                             .clang-tidy or this script changed. The base is
#                                             GRAPHC_TIDY_BASE, else the merge base with
#                                             origin/main, else (on main itself) HEAD~1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

build_dir=$(realpath "${1:-${BUILD_DIR:-build}}")
shift || true
db="$build_dir/compile_commands.json"
if ! command -v clang-tidy-16 > /dev/null || [ ! -f "$db" ] || ! git rev-parse --git-dir > /dev/null 2>&1; then
  echo "check-tidy: clang-tidy-16, git or $db is missing; skipped"
  exit 77
fi

# Every project source of the database, one per line.
sources=$(python3 - "$db" "$root" "$build_dir" << 'PY'
import json, sys
db, root, build = sys.argv[1:4]
for f in sorted({e["file"] for e in json.load(open(db))}):
    if f.startswith(root + "/") and not f.startswith(build + "/"):
        print(f)
PY
)

files=()
what=""
if [ $# -gt 0 ]; then
  for f in "$@"; do files+=("$(realpath "$f")"); done
  what="named"
elif [ "${GRAPHC_TIDY_BASE:-}" = all ]; then
  mapfile -t files <<< "$sources"
  what="all"
else
  base="${GRAPHC_TIDY_BASE:-}"
  if [ -z "$base" ]; then
    base=$(git merge-base HEAD origin/main 2> /dev/null || true)
    if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then
      base=$(git rev-parse --verify -q HEAD~1 || git hash-object -t tree /dev/null)
    fi
  fi
  changed=$( (git diff --name-only "$base" --; git ls-files --others --exclude-standard) | sort -u)
  if grep -qxE '\.clang-tidy|scripts/check-tidy\.sh' <<< "$changed"; then
    mapfile -t files <<< "$sources"
  else
    declare -A pick=()
    while IFS= read -r f; do
      case "$f" in
      *.cpp) grep -qxF "$root/$f" <<< "$sources" && pick["$root/$f"]=1 ;;
      *.h)
        # The sources that include the header by its path from the root (or build/include).
        while IFS= read -r s; do
          [ -n "$s" ] && pick["$s"]=1
        done < <(grep -lF "#include \"$f\"" $sources 2> /dev/null || true)
        ;;
      esac
    done <<< "$changed"
    files=("${!pick[@]}")
  fi
  what="changed since $(git rev-parse --short "$base" 2> /dev/null || echo "$base")"
fi
if [ ${#files[@]} -eq 0 ] || [ -z "${files[0]}" ]; then
  echo "check-tidy: no sources to check ($what)"
  exit 0
fi

start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\0' "${files[@]}" |
  xargs -0 -n 1 -P "${GRAPHC_TIDY_JOBS:-$(nproc)}" \
    sh -c 'out=$(clang-tidy-16 --quiet -p "$0" "$1" 2>&1) ||
           { printf "%s\n" "$out"; echo "check-tidy: findings in $1"; }' \
    "$build_dir" > "$log" || status=$?
failed=$(grep -c '^check-tidy: findings in' "$log" || true)
if [ "$status" -ne 0 ] || [ "$failed" -gt 0 ]; then
  grep -v ' warnings\? generated\.$' "$log" || true
  echo "check-tidy: $failed of ${#files[@]} file(s) ($what) have findings ($((SECONDS - start)) s)"
  exit 1
fi
echo "check-tidy: ${#files[@]} file(s) ($what), no findings ($((SECONDS - start)) s)"
