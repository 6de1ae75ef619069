#!/usr/bin/env bash
# stress-tests.sh [-n RUNS] [-b BUILD_DIR] [-j JOBS] [TEST...]
#
# Runs each chosen test RUNS times (default 20) while the machine is
# loaded, and prints, per test, how many runs passed: the proof that a test
# that stops, kills, races or counts waits for events, not for the machine's
# speed. The load, started first and ended on every path (its own process
# group): a CPU hog on every core (`nproc` busy loops) and an I/O hog (256 MiB
# written with fsync and removed, over and over, in BUILD_DIR).
#
# TEST is a full GoogleTest name or a gtest filter pattern, looked up in both
# test executables (unit and e2e); without one, the list below: every test
# that signals, kills, races or counts. A run is bounded by `timeout` (600 s)
# and counts as failed when it times out. BUILD_DIR (default build-test, the
# quick start's test build) holds tests/unit_tests and tests/e2e_tests. JOBS
# (default 1) runs as many tests at once, which loads the machine further.
#
# Prints "stress-tests: NAME P/RUNS" per test, then "N passed, M failed"
# (runs); the log of a failed run is kept under BUILD_DIR/stress-logs/.
# Exit 0 when every run passed, 1 otherwise, 2 for bad input.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=20
build="$root/build-test"
jobs=1
while getopts "n:b:j:" option; do
  case "$option" in
    n) runs=$OPTARG ;;
    b) build=$(cd "$OPTARG" && pwd) ;;
    j) jobs=$OPTARG ;;
    *) echo "usage: $0 [-n RUNS] [-b BUILD_DIR] [-j JOBS] [TEST...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "$runs" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "stress-tests: -n takes 1 to 9999" >&2; exit 2; }
[[ "$jobs" =~ ^[1-8]$ ]] || { echo "stress-tests: -j takes 1 to 8" >&2; exit 2; }
binaries=("$build/tests/unit_tests" "$build/tests/e2e_tests")
for binary in "${binaries[@]}"; do
  [ -x "$binary" ] || { echo "stress-tests: no $binary (build the tests first)" >&2; exit 2; }
done

# Every test that sends a signal, kills a process or a server, races
# another run or a server, or counts what a stopped run left (compiles,
# bytes served, retries).
default_tests=(
  'StopSignals.*'
  'DownloadTest.FaultServer*'
  'DownloadTest.*Stop*'
  'DownloadTest.*Mirror*'
  'InterruptionTest.ASecondBuild*'
  'InterruptionTest.StopDuring*'
  'InterruptionTest.Stop*Lock*'
  'InterruptionTest.SecondRunWaits*'
  'InterruptionTest.Concurrent*'
  'InterruptionTest.StopBeforeTheHandlersExist*'
  'InterruptionTest.StopEnds*'
  'SharedCacheTest.*'
  'DownloadE2eTest.KilledMidDownloadThenTheRerunResumes'
  'DownloadE2eTest.StoppedThenAMirrorThatCannotServeLeavesTheOriginsPartToResume'
  'NetworkTest.StopDuring*'
  'NetworkTest.KilledDuring*'
  'NetworkTest.*ThroughAProxyThat*'
  'NpuirTest.NestedRemoteAppearingBeforeTheSecondAttemptIsFetched_StandInNpuIrRepo'
  'DistccCmakeBuildTest.*Killed*'
  'FullDiskTest.*'
  'Line370Test.PowerLoss*'
  'Line380Test.PowerLoss*'
)
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || patterns=("${default_tests[@]}")

# Every pattern must select a test: a stale name would leave a test out
# silently.
for pattern in "${patterns[@]}"; do
  found=0
  for binary in "${binaries[@]}"; do
    if "$binary" --gtest_list_tests --gtest_filter="$pattern" | grep -q '^  '; then
      found=1
    fi
  done
  [ "$found" = 1 ] || { echo "stress-tests: no test matches $pattern" >&2; exit 2; }
done

# The full names the patterns select, each once, and the executable of each.
declare -A binary_of
mapfile -t tests < <(
  for pattern in "${patterns[@]}"; do
    for binary in "${binaries[@]}"; do
      "$binary" --gtest_list_tests --gtest_filter="$pattern" |
        awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }'
    done
  done | awk '!seen[$0]++'
)
for name in "${tests[@]}"; do
  for binary in "${binaries[@]}"; do
    if "$binary" --gtest_list_tests --gtest_filter="$name" | grep -q '^  '; then
      binary_of[$name]=$binary
      break
    fi
  done
done
[ ${#tests[@]} -gt 0 ] || { echo "stress-tests: no test matches ${patterns[*]}" >&2; exit 2; }

logs="$build/stress-logs"
rm -rf "$logs"
mkdir -p "$logs"
load_dir=$(mktemp -d "$build/stress-load.XXXXXX")

# The load, in a process group of its own; ended on every path.
load_group=""
stop_load() {
  [ -z "$load_group" ] || kill -KILL -- "-$load_group" 2>/dev/null || true
  load_group=""
  rm -rf "$load_dir"
}
trap 'stop_load' EXIT
trap 'stop_load; exit 130' INT
trap 'stop_load; exit 143' TERM
cores=$(nproc)
# Each busy loop is bounded (a day) in case nothing ends it; --foreground
# keeps it in the load's process group (timeout makes a group of its own
# otherwise, which the group kill at the end would miss).
setsid bash -c '
  dir=$1 cores=$2
  for _ in $(seq "$cores"); do
    timeout --foreground 86400 sh -c "while :; do :; done" &
  done
  for _ in $(seq 100000); do
    dd if=/dev/zero of="$dir/io" bs=1M count=256 conv=fsync status=none
    rm -f "$dir/io"
  done &
  wait
' stress-load "$load_dir" "$cores" </dev/null >/dev/null 2>&1 &
load_group=$!
disown "$load_group" # its end is ours, not news
echo "stress-tests: ${#tests[@]} tests x $runs runs, $jobs at a time, under load ($cores CPU hogs, an fsync'ing writer)" >&2

# One test's runs, in sequence; writes "NAME PASSED" to $logs/NAME.result.
stress_one() {
  local name=$1 passed=0 run
  for run in $(seq "$runs"); do
    if timeout --kill-after=10 600 "${binary_of[$name]}" --gtest_filter="$name" \
      >"$logs/$name.$run.log" 2>&1; then
      passed=$((passed + 1))
      rm -f "$logs/$name.$run.log"
    fi
  done
  echo "$name $passed" >"$logs/$name.result"
}

# The tests' runners only: a plain `wait` would wait for the load too.
runners=()
for name in "${tests[@]}"; do
  stress_one "$name" &
  runners+=($!)
  if [ ${#runners[@]} -ge "$jobs" ]; then
    wait -n "${runners[@]}" || true
    alive=()
    for pid in "${runners[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive+=("$pid")
    done
    runners=("${alive[@]}")
  fi
done
[ ${#runners[@]} -eq 0 ] || wait "${runners[@]}" || true

passed_runs=0
failed_runs=0
for name in "${tests[@]}"; do
  read -r _ passed <"$logs/$name.result"
  echo "stress-tests: $name $passed/$runs"
  passed_runs=$((passed_runs + passed))
  failed_runs=$((failed_runs + runs - passed))
done
echo "$passed_runs passed, $failed_runs failed"
[ "$failed_runs" -eq 0 ]
