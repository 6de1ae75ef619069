# The CPythons ascend-setup serves: one host module per major.minor
# (ascend-setup-host-X.Y.so, linked with no libpython: the launcher loads it
# after the installation's own libpython, or a static interpreter imports it
# as an extension module; src/base/launch/launcher.hpp). A minor needs only
# its headers: a static interpreter's do.
#
#   ASCEND_SETUP_PYTHONS        interpreters to build for (default: found, see below)
#
# Found by default, in this order (the first of a minor wins; the very first is
# the default interpreter of the tests): /usr/bin/python3, every
# $(pyenv root)/versions/*/bin/python3, python3.X on PATH.
#
# A cross build (CMAKE_CROSSCOMPILING: cmake/toolchains/) cannot run the
# target's interpreters, and needs only their headers: ASCEND_SETUP_PYTHONS
# names include directories (<prefix>/include/python3.X), found by default
# under the sysroot's /usr and /usr/local; the version is read from
# patchlevel.h, and <prefix>/bin/python3.X is the default interpreter.
set(ASCEND_SETUP_MIN_PYTHON 3.10)
set(ASCEND_SETUP_PYTHONS "" CACHE STRING
    "Python interpreters to build hosts for (;-list); empty: find CPython >= ${ASCEND_SETUP_MIN_PYTHON}")

# The verdict of both probes below: sets <var>_OK, or <var>_WHY, in the
# probe's caller (a macro: PARENT_SCOPE is the probe's). `abi` names an ABI
# the hosts are not built for ("free-threaded"), or is empty.
macro(ascend_setup_judge_python var implementation version abi include)
  if(NOT "${implementation}" STREQUAL "cpython")
    set(${var}_WHY "${implementation}, not CPython" PARENT_SCOPE)
  elseif("${version}" VERSION_LESS ASCEND_SETUP_MIN_PYTHON)
    set(${var}_WHY "CPython ${version} < ${ASCEND_SETUP_MIN_PYTHON}" PARENT_SCOPE)
  elseif(NOT "${abi}" STREQUAL "")
    set(${var}_WHY "${abi}" PARENT_SCOPE)
  elseif(NOT EXISTS "${include}/Python.h")
    set(${var}_WHY "no Python.h" PARENT_SCOPE)
  else()
    set(${var}_OK TRUE PARENT_SCOPE)
  endif()
endmacro()

# Sets <var>_VERSION, _PREFIX, _INCLUDE, _SHARED, _OK (and
# _WHY when not OK) for one interpreter.
function(ascend_setup_probe_python executable var)
  set(script [=[
import sys, sysconfig, os
v = sysconfig.get_config_var
shared = os.path.join(v('LIBDIR') or '', v('LDLIBRARY') or '') if v('Py_ENABLE_SHARED') else ''
for x in (sys.implementation.name, '%d.%d' % sys.version_info[:2], sys.base_prefix,
          sysconfig.get_paths()['include'], shared, v('Py_GIL_DISABLED') or 0):
    print(x)
]=])
  execute_process(COMMAND ${executable} -I -c "${script}" OUTPUT_VARIABLE out ERROR_QUIET
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${var}_OK FALSE PARENT_SCOPE)
  set(${var}_VERSION "" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    set(${var}_WHY "does not run" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "\n" ";" fields "${out}")
  list(LENGTH fields count)
  if(NOT count EQUAL 6)
    set(${var}_WHY "unexpected answer" PARENT_SCOPE)
    return()
  endif()
  list(GET fields 0 implementation)
  list(GET fields 1 version)
  list(GET fields 4 shared)
  list(GET fields 5 free_threaded)
  set(${var}_VERSION ${version} PARENT_SCOPE)
  list(GET fields 2 prefix)
  set(${var}_PREFIX ${prefix} PARENT_SCOPE)
  list(GET fields 3 include)
  set(${var}_INCLUDE ${include} PARENT_SCOPE)
  set(${var}_SHARED ${shared} PARENT_SCOPE)
  set(abi "")
  if(free_threaded)
    set(abi "free-threaded")
  endif()
  ascend_setup_judge_python(${var} "${implementation}" "${version}" "${abi}" "${include}")
endfunction()

# The same for a target interpreter's include directory (a cross build);
# _PREFIX is the prefix as the target sees it, _SHARED stays empty.
function(ascend_setup_probe_headers include var)
  set(${var}_OK FALSE PARENT_SCOPE)
  set(${var}_VERSION "" PARENT_SCOPE)
  set(${var}_INCLUDE ${include} PARENT_SCOPE)
  set(${var}_SHARED "" PARENT_SCOPE)
  get_filename_component(prefix "${include}/../.." ABSOLUTE)
  string(LENGTH "${CMAKE_SYSROOT}" sysroot_length)
  string(SUBSTRING "${prefix}" 0 ${sysroot_length} head)
  if(CMAKE_SYSROOT AND head STREQUAL CMAKE_SYSROOT)
    string(SUBSTRING "${prefix}" ${sysroot_length} -1 prefix)
  endif()
  set(${var}_PREFIX ${prefix} PARENT_SCOPE)
  set(patchlevel "${include}/patchlevel.h")
  if(NOT EXISTS "${patchlevel}")
    set(${var}_WHY "no patchlevel.h (not a CPython include directory)" PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${patchlevel}" major REGEX "^#define[ \t]+PY_MAJOR_VERSION[ \t]+[0-9]+")
  file(STRINGS "${patchlevel}" minor REGEX "^#define[ \t]+PY_MINOR_VERSION[ \t]+[0-9]+")
  string(REGEX REPLACE ".*[ \t]([0-9]+)$" "\\1" major "${major}")
  string(REGEX REPLACE ".*[ \t]([0-9]+)$" "\\1" minor "${minor}")
  set(version "${major}.${minor}")
  set(${var}_VERSION ${version} PARENT_SCOPE)
  set(abi "")
  if(include MATCHES "t/?$")       # python3.13t: the free-threaded build's headers
    set(abi "free-threaded")
  elseif(include MATCHES "d/?$")   # python3.Xd: a debug build's (another ABI)
    set(abi "a debug build's headers")
  endif()
  ascend_setup_judge_python(${var} cpython "${version}" "${abi}" "${include}")
endfunction()

if(ASCEND_SETUP_PYTHONS)
  set(candidates ${ASCEND_SETUP_PYTHONS})
elseif(CMAKE_CROSSCOMPILING)
  file(GLOB candidates LIST_DIRECTORIES true "${CMAKE_SYSROOT}/usr/include/python3.*"
                                             "${CMAKE_SYSROOT}/usr/local/include/python3.*")
  # Not python3.Xd (a debug build's ABI) nor python3.Xt (free-threaded).
  list(FILTER candidates INCLUDE REGEX "/python3\\.[0-9]+$")
  list(SORT candidates COMPARE NATURAL ORDER DESCENDING)
else()
  set(candidates)
  if(EXISTS /usr/bin/python3)
    list(APPEND candidates /usr/bin/python3)
  endif()
  set(pyenv_root "$ENV{PYENV_ROOT}")
  if(NOT pyenv_root)
    set(pyenv_root "$ENV{HOME}/.pyenv")
  endif()
  file(GLOB pyenv_pythons LIST_DIRECTORIES false "${pyenv_root}/versions/*/bin/python3")
  list(SORT pyenv_pythons COMPARE NATURAL)
  list(APPEND candidates ${pyenv_pythons})
  foreach(minor RANGE 10 13)
    unset(found_python)
    find_program(found_python python3.${minor} NO_CACHE)
    if(found_python)
      list(APPEND candidates ${found_python})
    endif()
  endforeach()
endif()

set(ASCEND_SETUP_HOST_VERSIONS)
set(ASCEND_SETUP_DEFAULT_PYTHON)
set(ASCEND_SETUP_FOUND_PYTHONS)      # every servable one (the tests run them all)
set(ASCEND_SETUP_TOO_OLD_PYTHONS)    # CPythons < the minimum (the tests expect exit 3)
set(found_prefixes)
foreach(candidate IN LISTS candidates)
  if(CMAKE_CROSSCOMPILING)
    ascend_setup_probe_headers(${candidate} probe)
  else()
    ascend_setup_probe_python(${candidate} probe)
  endif()
  if(NOT probe_OK)
    if(ASCEND_SETUP_PYTHONS)
      message(FATAL_ERROR "ASCEND_SETUP_PYTHONS: ${candidate} cannot be served: ${probe_WHY}")
    endif()
    message(STATUS "ascend-setup: skipping ${candidate} (${probe_WHY})")
    if(probe_VERSION AND probe_VERSION VERSION_LESS ASCEND_SETUP_MIN_PYTHON)
      list(APPEND ASCEND_SETUP_TOO_OLD_PYTHONS ${candidate})
    endif()
    continue()
  endif()
  # One installation found twice (a pyenv shim and the version behind it);
  # a cross build's candidates are include directories, several to a prefix.
  set(installation "${probe_PREFIX}")
  if(CMAKE_CROSSCOMPILING)
    set(installation "${probe_INCLUDE}")
  endif()
  if("${installation}" IN_LIST found_prefixes)
    continue()
  endif()
  list(APPEND found_prefixes "${installation}")
  list(APPEND ASCEND_SETUP_FOUND_PYTHONS ${candidate})
  if(NOT ASCEND_SETUP_DEFAULT_PYTHON)
    set(ASCEND_SETUP_DEFAULT_PYTHON ${candidate})
    if(CMAKE_CROSSCOMPILING)
      set(ASCEND_SETUP_DEFAULT_PYTHON ${probe_PREFIX}/bin/python${probe_VERSION})
    endif()
    set(ASCEND_SETUP_DEFAULT_VERSION ${probe_VERSION})
  endif()
  if(probe_VERSION IN_LIST ASCEND_SETUP_HOST_VERSIONS)
    continue()
  endif()
  list(APPEND ASCEND_SETUP_HOST_VERSIONS ${probe_VERSION})
  set(ASCEND_SETUP_PYTHON_${probe_VERSION}_EXECUTABLE ${candidate})
  set(ASCEND_SETUP_PYTHON_${probe_VERSION}_INCLUDE ${probe_INCLUDE})
  set(ASCEND_SETUP_PYTHON_${probe_VERSION}_SHARED ${probe_SHARED})
  message(STATUS "ascend-setup: host for CPython ${probe_VERSION} from ${candidate}")
endforeach()
if(NOT ASCEND_SETUP_HOST_VERSIONS)
  message(FATAL_ERROR "ascend-setup: no CPython >= ${ASCEND_SETUP_MIN_PYTHON} with its headers "
                      "found; name one with -DASCEND_SETUP_PYTHONS=...")
endif()

set(ASCEND_SETUP_HOST_DIR ${CMAKE_BINARY_DIR}/libexec/ascend-setup)
set(ASCEND_SETUP_HOST_TARGETS)
set(host_manifest "# VERSION FILE\n")

# The host flow and the Python-dependent units, compiled once per minor.
function(ascend_setup_add_host version)
  string(REPLACE "." "" tag ${version})
  add_library(ascend_setup_py${tag} STATIC ${ASCEND_SETUP_PYTHON_SOURCES})
  target_include_directories(ascend_setup_py${tag} SYSTEM PUBLIC ${ASCEND_SETUP_PYTHON_${version}_INCLUDE})
  target_include_directories(ascend_setup_py${tag} PUBLIC include)
  target_compile_options(ascend_setup_py${tag} PRIVATE ${ASCEND_SETUP_WARNINGS})
  target_link_libraries(ascend_setup_py${tag} PUBLIC ascend_setup_base pybind11::headers)
  if(ASCEND_SETUP_UNITY)
    # One batch: each minor's host compiles beside the others (CMakeLists.txt).
    set_target_properties(ascend_setup_py${tag} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  endif()
  if(ASCEND_SETUP_PCH)
    # pybind11 first: it includes Python.h, which must come before the standard headers.
    target_precompile_headers(ascend_setup_py${tag} PRIVATE <pybind11/pybind11.h>
                              ${ASCEND_SETUP_COMMON_HEADERS})
  endif()

  set_target_properties(ascend_setup_py${tag} PROPERTIES POSITION_INDEPENDENT_CODE ON)

  # The host module: no libpython linked (its Py* symbols come from the
  # libpython the launcher loads first, or from the static interpreter that
  # imports it); only its two entry points are exported, the static archives
  # in it stay hidden (an OpenSSL or libstdc++ of its own never meets the
  # interpreter's).
  set(host ascend-setup-host-${version})
  add_library(${host} MODULE src/mains/host_module.cpp)
  target_compile_options(${host} PRIVATE ${ASCEND_SETUP_WARNINGS})
  target_link_options(${host} PRIVATE ${ASCEND_SETUP_SHIPPED_LINK_OPTIONS} -Wl,--exclude-libs,ALL
                      -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/host_module.map)
  set_property(TARGET ${host} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/host_module.map)
  target_link_libraries(${host} PRIVATE ascend_setup_py${tag})
  if(ASCEND_SETUP_PCH)
    target_precompile_headers(${host} REUSE_FROM ascend_setup_py${tag})
  endif()
  set_target_properties(${host} PROPERTIES PREFIX "" SUFFIX ".so"
                                           LIBRARY_OUTPUT_DIRECTORY ${ASCEND_SETUP_HOST_DIR})
  set(ASCEND_SETUP_HOST_TARGETS ${ASCEND_SETUP_HOST_TARGETS} ${host} PARENT_SCOPE)
  set(host_manifest "${host_manifest}${version} ${host}.so\n" PARENT_SCOPE)
endfunction()

foreach(version IN LISTS ASCEND_SETUP_HOST_VERSIONS)
  ascend_setup_add_host(${version})
endforeach()

# Written only when it changes: a launcher may be reading it.
file(CONFIGURE OUTPUT ${ASCEND_SETUP_HOST_DIR}/hosts.txt CONTENT "${host_manifest}" @ONLY)

# What the tests and benchmarks link: the default interpreter's minor, shared.
string(REPLACE "." "" default_tag ${ASCEND_SETUP_DEFAULT_VERSION})
if((ASCEND_SETUP_TESTS OR ASCEND_SETUP_BENCH) AND
   NOT EXISTS "${ASCEND_SETUP_PYTHON_${ASCEND_SETUP_DEFAULT_VERSION}_SHARED}")
  message(FATAL_ERROR "ascend-setup: the tests and benchmarks link the default interpreter's "
                      "shared libpython, and ${ASCEND_SETUP_DEFAULT_PYTHON} has none: "
                      "-DASCEND_SETUP_TESTS=OFF -DASCEND_SETUP_BENCH=OFF, or name another first")
endif()
add_library(ascend_setup_core INTERFACE)
target_link_libraries(ascend_setup_core INTERFACE ascend_setup_py${default_tag}
                      ${ASCEND_SETUP_PYTHON_${ASCEND_SETUP_DEFAULT_VERSION}_SHARED})
