# Cross build for aarch64 (arm64) Linux against an arm64 Debian root as the
# sysroot: the root holds the target's -dev packages (libgit2-dev, python3-dev
# and the rest of the quick start's list) and its C and C++ runtime headers
# (libc6-dev, libstdc++-12-dev); scripts/release-check-arm64 makes one with
# scripts/debian-root and builds this way.
#
#   cmake -S . -B build-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DASCEND_SETUP_SYSROOT=/var/tmp/ascend-setup-arm64 \
#     [-DASCEND_SETUP_CROSS_COMPILER=gcc]
#
# The compiler: clang (default: Debian's clang is a cross compiler for every
# target; it finds the root's GCC installation, C++ headers and crt files by
# itself) with lld, or Debian's g++-aarch64-linux-gnu. The hosts are built for
# the root's CPythons (cmake/PythonHosts.cmake reads their headers); the
# tests and benchmarks, which run what they build, are off by default.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ascend_setup_triple aarch64-linux-gnu)

# try_compile projects read this file again: they get the two settings too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ASCEND_SETUP_SYSROOT ASCEND_SETUP_CROSS_COMPILER)
set(ASCEND_SETUP_SYSROOT "" CACHE PATH "The arm64 Debian root to build against")
set(ASCEND_SETUP_CROSS_COMPILER clang CACHE STRING "clang or gcc")
if(NOT IS_DIRECTORY "${ASCEND_SETUP_SYSROOT}/usr/lib/${ascend_setup_triple}")
  message(FATAL_ERROR "ASCEND_SETUP_SYSROOT (\"${ASCEND_SETUP_SYSROOT}\") is not an arm64 Debian "
                      "root: make one with scripts/debian-root make DIR --arch arm64 ...")
endif()
set(CMAKE_SYSROOT "${ASCEND_SETUP_SYSROOT}")

if(ASCEND_SETUP_CROSS_COMPILER STREQUAL "clang")
  set(CMAKE_C_COMPILER clang)
  set(CMAKE_CXX_COMPILER clang++)
  set(CMAKE_C_COMPILER_TARGET ${ascend_setup_triple})
  set(CMAKE_CXX_COMPILER_TARGET ${ascend_setup_triple})
  foreach(kind EXE SHARED MODULE)
    set(CMAKE_${kind}_LINKER_FLAGS_INIT -fuse-ld=lld)
  endforeach()
elseif(ASCEND_SETUP_CROSS_COMPILER STREQUAL "gcc")
  set(CMAKE_C_COMPILER ${ascend_setup_triple}-gcc)
  set(CMAKE_CXX_COMPILER ${ascend_setup_triple}-g++)
  # Debian's cross g++ looks for its C++ headers at its own layout under the
  # sysroot (/usr/aarch64-linux-gnu/include/c++/N), which a Debian root does
  # not have: it has them where a native g++ looks, from libstdc++-N-dev.
  # The root's must be the compiler's own version (the library it links is
  # the compiler's).
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -dumpversion OUTPUT_VARIABLE gcc_major
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE gcc_rc)
  if(NOT gcc_rc EQUAL 0)
    message(FATAL_ERROR "no ${CMAKE_CXX_COMPILER} (Debian's g++-${ascend_setup_triple})")
  endif()
  set(cxx_headers "${CMAKE_SYSROOT}/usr/include/c++/${gcc_major}")
  if(NOT IS_DIRECTORY "${cxx_headers}")
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} is GCC ${gcc_major}, and the root has no "
                        "/usr/include/c++/${gcc_major} (libstdc++-${gcc_major}-dev)")
  endif()
  set(CMAKE_CXX_FLAGS_INIT "-nostdinc++ -isystem ${cxx_headers} \
-isystem ${CMAKE_SYSROOT}/usr/include/${ascend_setup_triple}/c++/${gcc_major} \
-isystem ${cxx_headers}/backward")
else()
  message(FATAL_ERROR "ASCEND_SETUP_CROSS_COMPILER: clang or gcc, not \"${ASCEND_SETUP_CROSS_COMPILER}\"")
endif()

# What a project's configure runs (try_run: curl's and libarchive's checks,
# scripts/build-static-deps.sh) runs under qemu-user with the root's loader
# and libraries.
if(EXISTS /usr/bin/qemu-aarch64-static)
  set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64-static -L ${CMAKE_SYSROOT})
endif()

# Libraries, headers and CMake packages from the root only; programs from
# this machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config: the root's .pc files, their paths prefixed with the root.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CMAKE_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${CMAKE_SYSROOT}/usr/lib/${ascend_setup_triple}/pkgconfig:${CMAKE_SYSROOT}/usr/share/pkgconfig")
