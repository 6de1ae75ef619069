#!/usr/bin/env bash
# Builds every fuzz target (tests/fuzz/, clang's libFuzzer with ASan and
# UBSan) and runs each on its seed corpus and the inputs of its past findings,
# then fuzzes it for SECONDS (default 60), as many at once as there are CPUs.
# One line per target: its name, the executions, the result. Exits 1 on any
# crash, leak, timeout, out-of-memory or sanitizer report; the input that
# caused it is saved under tests/fuzz/<target>/crashes/ (a regression case
# once fixed: FuzzReplay.<target> runs every file there).
#
#   bash scripts/fuzz.sh [SECONDS]      open-ended: what it finds depends on the run
#   bash scripts/fuzz.sh --runs N       deterministic: N inputs after the corpus,
#                                       seed 1 (CI's step: the same result on
#                                       every run of the same code)
#
# ASCEND_SETUP_FUZZ_BUILD_DIR: the build directory (default build-fuzz/). One
# already configured with ASCEND_SETUP_FUZZ=ON (the sanitized suite's, in
# the README's test command) is built as it is, not configured again.
# ASCEND_SETUP_FUZZ_TARGETS: only these targets (blank-separated).
# ASCEND_SETUP_FUZZ_JOBS: targets run at once (default: the CPUs).
# New inputs the fuzzer finds go to the build directory's corpus/<target>/,
# never into the seed corpora under tests/fuzz/ (make_seeds.py writes those).
set -euo pipefail

runs=""
if [ "${1:-}" = --runs ]; then
  runs=${2:-}
  case "$runs" in
    '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS | --runs N]" >&2; exit 2 ;;
  esac
  seconds=600 # a bound, not the plan
  budget=(-runs="$runs" -seed=1)
else
  seconds=${1:-60}
  case "$seconds" in
    '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS | --runs N]" >&2; exit 2 ;;
  esac
  budget=(-max_total_time="$seconds")
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ASCEND_SETUP_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${ASCEND_SETUP_FUZZ_JOBS:-$(nproc)}

if ! grep -qs '^ASCEND_SETUP_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  # -O1: a few times the executions of -O0 under the sanitizers; assertions on.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
    -DASCEND_SETUP_FUZZ=ON -DASCEND_SETUP_TESTS=OFF -DASCEND_SETUP_BENCH=OFF \
    -DASCEND_SETUP_WERROR=ON "-DASCEND_SETUP_PYTHONS=/usr/bin/python3" \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" >&2
fi
cmake --build "$build" --target fuzz_targets >&2

read -r -a targets <<< "${ASCEND_SETUP_FUZZ_TARGETS:-$(tr '\n' ' ' < "$build/fuzz-targets.txt")}"
logs="$build/fuzz-logs"
mkdir -p "$logs"

# Runs one target; its summary line goes to $logs/<target>.line. No input
# is over 64 KiB, so one allocation over 512 MiB is a finding (a size taken
# from the input unchecked).
run_target() {
  local name=$1 dir="$root/tests/fuzz/$1"
  local work="$build/corpus/$name" log="$logs/$name.log"
  mkdir -p "$work" "$dir/crashes"
  local dict=()
  [ -f "$dir/$name.dict" ] && dict=("-dict=$dir/$name.dict")
  local status=0
  # The first corpus directory takes the new inputs; the seeds and the past
  # findings are read only (and run first).
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:symbolize=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer \
    timeout --kill-after=30 $((seconds + 120)) \
    "$build/tests/fuzz/fuzz_$name" "$work" "$dir/corpus" "$dir/crashes" "${dict[@]}" \
    "${budget[@]}" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$dir/crashes/" > "$log" 2>&1 || status=$?
  local runs result
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    result=ok
  elif grep -q 'ERROR: LeakSanitizer' "$log"; then
    result=leak
  elif grep -q 'ERROR: libFuzzer: timeout' "$log"; then
    result=timeout
  elif grep -q 'out-of-memory' "$log"; then
    result=out-of-memory
  elif grep -q 'FUZZ FINDING' "$log"; then
    result="invariant: $(grep -m1 'FUZZ FINDING' "$log" | cut -c15- | cut -c1-160)"
  elif grep -q 'runtime error' "$log"; then
    result="undefined behaviour: $(grep -m1 'runtime error' "$log" | cut -c1-160)"
  elif grep -q 'ERROR: AddressSanitizer' "$log"; then
    result="address: $(grep -m1 'ERROR: AddressSanitizer' "$log" | cut -c1-160)"
  else
    result="failed (exit $status)"
  fi
  local saved
  saved=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  [ -z "$saved" ] || result="$result; input: ${saved#"$root/"}"
  printf '%-16s %12s runs  %s\n' "$name" "${runs:-0}" "$result" > "$logs/$name.line"
  [ "$result" = ok ]
}

if [ -n "$runs" ]; then
  rm -rf "$build/corpus" # the same start on every run
  echo "fuzz: ${#targets[@]} targets, their corpus and findings then $runs inputs each (seed 1), $jobs at once ($build)" >&2
else
  echo "fuzz: ${#targets[@]} targets, ${seconds} s each, $jobs at once ($build)" >&2
fi
failed=0
names=()
for name in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/fuzz_$name" ]; then
    echo "fuzz: no target $name" >&2
    exit 2
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  rm -f "$logs/$name.line"
  run_target "$name" &
  names+=("$name")
done
wait || true
for name in "${names[@]}"; do
  if [ -f "$logs/$name.line" ]; then
    cat "$logs/$name.line"
    grep -q '  ok$' "$logs/$name.line" || failed=1
  else
    printf '%-16s %12s runs  %s\n' "$name" 0 "no result (see $logs/$name.log)"
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings (logs in $logs)" >&2
  exit 1
fi
