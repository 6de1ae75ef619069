#!/bin/bash
# Stand-in for AscendNPU-IR's build-tools/build.sh (the real one builds LLVM,
# MLIR and BishengIR for hours). Run by ascend-setup's NPUIR build in the
# AscendNPU-IR directory. It records its arguments (one a line) and the
# variables the build reads into $NPUIR_STAND_IN_LOG (ccache's remote
# settings into compile-cache-env), checks that the nested repositories are
# there, compiles a file with the --cxx-compiler wrapper
# (which must add -include cstdint: the file uses std::uint32_t without it),
# and writes bishengir-output/ as --collect-binary does. NPUIR_STAND_IN_EXIT=N
# makes it fail with N after recording.
set -eu
log=${NPUIR_STAND_IN_LOG:?}
mkdir -p "$log"
printf '%s\n' "$@" > "$log/args"
printf 'CCACHE_DIR=%s\n' "${CCACHE_DIR-}" > "$log/env"
printf '%s\n' "CCACHE_REMOTE_STORAGE=${CCACHE_REMOTE_STORAGE-}" "CCACHE_BASEDIR=${CCACHE_BASEDIR-}" \
  "CCACHE_STATSLOG=${CCACHE_STATSLOG-}" > "$log/compile-cache-env"
pwd > "$log/cwd"
echo "stand-in build.sh: building AscendNPU-IR"
if [ -n "${NPUIR_STAND_IN_EXIT-}" ]; then
  exit "$NPUIR_STAND_IN_EXIT"
fi
for nested in llvm-project torch-mlir shmem; do
  test -f "third-party/$nested/CMakeLists.txt" || { echo "no third-party/$nested" >&2; exit 9; }
done
cxx=
for arg in "$@"; do
  case $arg in --cxx-compiler=*) cxx=${arg#--cxx-compiler=} ;; esac
done
printf 'std::uint32_t answer() { return 42; }\n' > "$log/uses_cstdint.cpp"
"$cxx" -c "$log/uses_cstdint.cpp" -o "$log/uses_cstdint.o"
mkdir -p bishengir-output/bin bishengir-output/lib
for tool in bishengir-compile bishengir-opt hivmc hivmc-a5; do
  printf '#!/bin/sh\necho %s\n' "$tool" > "bishengir-output/bin/$tool"
  chmod 755 "bishengir-output/bin/$tool"
done
echo bc1 > bishengir-output/lib/libdevice.bc
echo bc2 > bishengir-output/lib/hivm.bc
echo not-an-artifact > bishengir-output/lib/notes.txt
