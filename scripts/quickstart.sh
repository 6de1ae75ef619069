#!/usr/bin/env bash
# The README's quick start: installs what is missing (Debian 12, as root),
# builds ascend-setup, then either runs the main job on the bundled example
# tree (`example`), or runs every test (`test`): the suite, then the suite
# built with ASan, UBSan and LSan in a second build directory (see
# sanitized_build() and sanitized_suite() below).
set -euo pipefail

mode=${1:-example}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ASCEND_SETUP_BUILD_DIR:-$root/build}

# Each phase's wall time, printed as a table when the script ends, on every
# path (doc/developing.md, "Where CI's time goes", is made of these).
phase_names=()
phase_seconds=()
phase() {
  local name=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  phase_names+=("$name")
  phase_seconds+=($((SECONDS - started)))
  return "$status"
}
print_phases() {
  local i
  [ ${#phase_names[@]} -gt 0 ] || return 0
  echo "quickstart: phase times (wall, s):" >&2
  for i in "${!phase_names[@]}"; do
    printf 'quickstart:   %-28s %5d\n' "${phase_names[$i]}" "${phase_seconds[$i]}" >&2
  done
  printf 'quickstart:   %-28s %5d\n' total "$SECONDS" >&2
}
trap print_phases EXIT

# A failed test's reasons (the [ REASON ] lines tests/support/test_support.cpp
# prints as each failed test's last lines), gathered as the run's last lines.
reasons=""
run_ctest() {
  local dir=$1 status=0
  shift
  ctest --test-dir "$dir" --output-on-failure "$@" || status=$?
  if [ "$status" -ne 0 ]; then
    reasons+=$(grep -h '^\[ REASON   \]' "$dir/Testing/Temporary/LastTest.log" 2>/dev/null | head -400)
    reasons+=$'\n'
  fi
  return "$status"
}

# What building needs (both modes), then what only the tests need.
packages=(
  cmake ninja-build g++ git pkg-config
  python3 python3-dev python3-setuptools python3-wheel python3-pybind11 pybind11-dev
  libexpat1-dev zlib1g-dev
  libgit2-dev libpcre2-dev libssl-dev libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
  nlohmann-json3-dev libcurl4-openssl-dev libarchive-dev libdeflate-dev
)
test_packages=(
  clang lld libclang-rt-14-dev binutils util-linux python3-venv python3-pip python3-build
  python3-setuptools-whl python3-wheel-whl python3-pip-whl libgtest-dev googletest
  nginx-light curl distcc ccache
  # The build report rendered headless (tests/e2e/build_report_e2e_test.cpp).
  chromium
  # The proxy and CA tests (tests/e2e/network_test.cpp): a CONNECT proxy, git's
  # smart HTTP behind nginx, the test CA.
  tinyproxy fcgiwrap openssl
  # The shared compile cache (tests/e2e/compile_cache_e2e_test.cpp, bench/run
  # compile-cache): redis for ccache's remote storage.
  redis-server
  # The portable build (scripts/build-static-deps.sh: Debian's sources and
  # the static archives it links) and its wheel's policy check.
  dpkg-dev libssh2-1-dev libhttp-parser-dev liblzma-dev python3-pyelftools
)
[ "$mode" = test ] && packages+=("${test_packages[@]}")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
install_missing() {
  echo "quickstart: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
if [ ${#missing[@]} -gt 0 ]; then
  phase "apt-get" install_missing
fi
# distccd runs only the compilers linked in /usr/lib/distcc; distcc's package
# links those installed when it is configured, so clang installed in the same
# or a later run would be missing (the distcc tests compile with clang++).
if [ "$mode" = test ] && command -v update-distcc-symlinks >/dev/null; then
  update-distcc-symlinks
fi

# The suite built with ASan, UBSan and LSan (leak-free: LSan on, the
# suppressions, each explained, in tests/sanitizers/lsan.supp), in a second
# build directory. PYTHONMALLOC=malloc: pymalloc's arenas are mmap'ed and LSan
# does not scan them, so blocks referenced only from Python objects look
# leaked (58 KB for a plain `python3 setup.py --name` on the same libpython,
# none with malloc); with malloc every Python object is a heap block LSan
# scans and checks, so a reference our code leaks is reported too. To fit CI
# on two cores: one host, for the default interpreter (its shared libpython),
# built with -O0 -g1 (line tables for the reports; measured: -O0 compiles a
# unit in 55-60% of the CPU time -O1 takes under the sanitizers, and the
# tests' time is spent in Python and the tools, not in our code). The tests
# it leaves out are listed by full name, each with its reason, in
# tests/sanitizers/not-sanitized.txt (each runs in the normal suite, where
# SanitizedSuite.ExclusionsNameRealTests checks that every name listed is a
# test).
# Built with clang (the normal build is GCC's), so that CI builds with both
# compilers, warnings as errors in each; instrumented for libFuzzer too, so
# that the fuzz targets build here and run after the suite.
sanitized_build() {
  local dir="$build-sanitized" status=0
  {
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DASCEND_SETUP_WERROR=ON \
      -DCMAKE_CXX_COMPILER=clang++ -DASCEND_SETUP_BENCH=OFF -DASCEND_SETUP_FUZZ=ON \
      "-DASCEND_SETUP_PYTHONS=/usr/bin/python3" \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" \
      "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" &&
      cmake --build "$dir"
  } || status=$?
  return "$status"
}

sanitized_suite() {
  local dir="$build-sanitized"
  # Every report goes to a file as well as failing its process, so that one
  # from a process whose exit code no test checks still fails the run.
  local reports="$dir/sanitizer-reports" status=0
  rm -rf "$reports"
  mkdir -p "$reports"
  # clang's runtime symbolizes with llvm-symbolizer: the suppressions match
  # function names.
  PYTHONMALLOC=malloc ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer \
    ASAN_OPTIONS="detect_leaks=1:log_path=$reports/asan" \
    LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan" \
    phase "sanitized suite" run_ctest "$dir" -j "$(nproc)" \
    -E "$(/usr/bin/python3 "$root/tests/sanitizers/check_exclusions.py" --regex "$root/tests/sanitizers/not-sanitized.txt")" ||
    status=$?
  if [ -n "$(ls -A "$reports")" ]; then
    echo "quickstart: sanitizer reports:" >&2
    cat "$reports"/* >&2
    status=1
  fi
  # Every fuzz target on its corpus and past findings, then 1000 inputs with
  # seed 1, two at a time (tests/fuzz/README.md): deterministic, so a green
  # change stays green; open-ended fuzzing is `scripts/fuzz.sh SECONDS`. In
  # this build: it is clang's, instrumented for libFuzzer with the sanitizers.
  phase "fuzz targets" env ASCEND_SETUP_FUZZ_BUILD_DIR="$dir" bash "$root/scripts/fuzz.sh" --runs 1000 || status=1
  return "$status"
}

case "$mode" in
  example)
    # Only what the example needs: the host of the interpreter it runs on (a
    # venv's, else Debian's python3), no tests, no benchmarks, optimised at
    # -O1 (it compiles in 40% of -O2 -g's time; the run's time is Python's).
    python_for_host=/usr/bin/python3
    [ -z "${VIRTUAL_ENV:-}" ] || python_for_host="$VIRTUAL_ENV/bin/python"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DASCEND_SETUP_PYTHONS=$python_for_host" \
      -DASCEND_SETUP_TESTS=OFF -DASCEND_SETUP_BENCH=OFF -DASCEND_SETUP_WERROR=OFF >&2
    cmake --build "$build" >&2
    # The example trees, one per upstream line (3.6.0; 3.7.0 with its nested
    # AscendNPU-IR patch; 3.8.0, whose CMake resolves LLVM and JSON through
    # python/build_helpers.py), each built by the same binary with its own
    # profile and no option, in a copy under the build directory, so the
    # checkout stays clean and rebuilds are incremental.
    export LLVM_SYSPATH="$root/examples/stub-llvm" TRITON_OFFLINE_BUILD=1
    export JSON_SYSPATH="$root/examples/stub-json"
    export TRITON_HOME="$build/example/home"
    # Debian's python3 (it has setuptools, wheel and pybind11), unless a venv is active.
    python=()
    [ -n "${VIRTUAL_ENV:-}" ] || python=(--python /usr/bin/python3)
    for example in triton-3.6 triton-3.7 triton-3.8; do
      tree="$build/example/$example"
      mkdir -p "$tree"
      cp -R -u "$root/examples/$example/." "$tree/"
      "$build/ascend-setup" "${python[@]}" -C "$tree" --dump-kwargs
      "$build/ascend-setup" "${python[@]}" -C "$tree" bdist_wheel
      ls -1 "$tree"/dist/*.whl
    done
    ;;
  test)
    export ASCEND_SETUP_ALLOW_OLDER_STATIC=1 # doc/portable.md, "Checks"
    echo "quickstart: ASCEND_SETUP_ALLOW_OLDER_STATIC=1: the wheel check allows static libraries older than Debian's security versions (a release must not)" >&2
    # Every served CPython, the tests and benchmarks, warnings as errors; its
    # own build directory, so that switching modes rebuilds nothing needlessly.
    # Portable (every dependency linked in, as the wheel ships): the suite
    # tests what ships, and the wheel tests pack this very build.
    # Optimised at -O1 without debug info: measured, a host's unity unit
    # compiles in 68% of -O2 -g's time, and the suite's time is spent in
    # Python and the tools, not in our code. The static libraries are built
    # once per machine, outside the checkout, and reused while their recipe
    # and versions match (the script's stamp; a clean clone on a warm
    # machine skips them).
    build=${ASCEND_SETUP_BUILD_DIR:-$root/build-test}
    cache=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
    deps=${ASCEND_SETUP_STATIC_DEPS_DIR:-${cache:-$build}/ascend-setup/static-deps-$(uname -m)}
    phase "static libraries" bash "$root/scripts/build-static-deps.sh" "$deps"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
      -DASCEND_SETUP_PYTHONS= -DASCEND_SETUP_TESTS=ON -DASCEND_SETUP_BENCH=ON \
      -DASCEND_SETUP_PORTABLE=ON "-DASCEND_SETUP_STATIC_DEPS=$deps" \
      -DASCEND_SETUP_WERROR=ON >&2
    phase "build" cmake --build "$build" >&2
    # Both suites run whatever the first gave, so one run reports every
    # failure; the reasons come last.
    status=0
    phase "suite" run_ctest "$build" -j "$(nproc)" || status=1
    # The sanitized build after the suite, not beside the static libraries
    # and the normal build: measured, beside them the three took longer than
    # one after the other (589 s against about 410 s).
    if phase "sanitized build" sanitized_build >&2; then
      sanitized_suite || status=1
    else
      status=1
    fi
    if [ "$status" -ne 0 ] && [ -n "${reasons//$'\n'/}" ]; then
      echo "quickstart: why the failed tests failed:" >&2
      printf '%s\n' "$reasons" >&2
    fi
    exit "$status"
    ;;
  *)
    echo "usage: scripts/quickstart.sh [example|test]" >&2
    exit 2
    ;;
esac
