# The libraries ascend-setup uses, as one interface target, ascend_setup_deps,
# found one of two ways:
# - the system's (default): Debian's -dev packages, shared libraries;
# - ASCEND_SETUP_PORTABLE=ON: everything linked in, for the wheel that
#   installs anywhere (py3-none-manylinux_2_34_<arch>): Debian's static
#   archives where they are position-independent (they go into the host
#   modules, shared objects), libgit2, libcurl, libarchive and zlib built
#   from Debian's sources by scripts/build-static-deps.sh into
#   ASCEND_SETUP_STATIC_DEPS, spdlog, fmt and toml++ header-only, the C++
#   runtime static. What is left to the system is the manylinux policy's
#   libraries (libc, libm, libgcc_s).
option(ASCEND_SETUP_PORTABLE "Link every dependency in (the portable wheel)" OFF)
set(ASCEND_SETUP_STATIC_DEPS "" CACHE PATH
    "With ASCEND_SETUP_PORTABLE: the prefix scripts/build-static-deps.sh filled")

find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
add_library(ascend_setup_deps INTERFACE)
set(ASCEND_SETUP_SHIPPED_LINK_OPTIONS)
target_link_libraries(ascend_setup_deps INTERFACE CLI11::CLI11 nlohmann_json::nlohmann_json)

# The libraries linked and their versions (include/base/launch/linked_libraries.hpp):
# ASCEND_SETUP_LINKED_LIBRARIES_CPP (initializers, compiled in for
# --host-version) and ASCEND_SETUP_LINKED_LIBRARIES_JSON (objects, for the
# build directory's linked-libraries.json, the wheel's SBOM). Each value is
# checked to be plain text: it goes into C++ and JSON strings as it is.
set(ASCEND_SETUP_LINKED_LIBRARIES_CPP "")
set(ASCEND_SETUP_LINKED_LIBRARIES_JSON "")
set(ASCEND_SETUP_LINKED_DISTRO "{}")
function(ascend_setup_linked_library name version origin debian_source debian_version newer)
  if(version STREQUAL "")
    set(version unknown)
  endif()
  set(cpp "    {")
  set(json "{")
  set(separator "")
  foreach(field name version origin debian_source debian_version newer)
    if(NOT "${${field}}" MATCHES "^[A-Za-z0-9.+~:_ -]*$")
      message(FATAL_ERROR "the version record of ${name} has a ${field} that is not plain text: "
                          "\"${${field}}\"")
    endif()
    set(key ${field})
    if(field STREQUAL "newer")
      set(key newer_debian_version)
    endif()
    string(APPEND cpp "${separator}\"${${field}}\"")
    string(APPEND json "${separator}\"${key}\": \"${${field}}\"")
    set(separator ", ")
  endforeach()
  set(ASCEND_SETUP_LINKED_LIBRARIES_CPP "${ASCEND_SETUP_LINKED_LIBRARIES_CPP}${cpp}},\n" PARENT_SCOPE)
  set(ASCEND_SETUP_LINKED_LIBRARIES_JSON ${ASCEND_SETUP_LINKED_LIBRARIES_JSON} "${json}}" PARENT_SCOPE)
endfunction()

# The SONAME of the shared library `library` (a path), which dlopen names it by.
function(ascend_setup_soname var library)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${library}" OUTPUT_VARIABLE dump
                  RESULT_VARIABLE failed ERROR_QUIET)
  if(failed OR NOT dump MATCHES "SONAME +([^ \n]+)")
    message(FATAL_ERROR "cannot read the SONAME of ${library} (${CMAKE_OBJDUMP} -p)")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

if(NOT ASCEND_SETUP_PORTABLE)
  find_package(spdlog REQUIRED)
  find_package(tomlplusplus REQUIRED)
  find_package(OpenSSL REQUIRED COMPONENTS Crypto)
  pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2>=1.5)
  pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
  # The package downloads (src/base/download): HTTP(S) with ranges, retries
  # and proxies by libcurl; the archives unpacked by libarchive, with its
  # secure flags.
  pkg_check_modules(LIBCURL REQUIRED IMPORTED_TARGET libcurl>=7.66)
  pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive>=3.4)
  # The wheel writer: libdeflate compresses, zlib's inflate checks and joins.
  pkg_check_modules(LIBDEFLATE REQUIRED IMPORTED_TARGET libdeflate)
  find_package(ZLIB REQUIRED)
  target_link_libraries(ascend_setup_deps INTERFACE
    spdlog::spdlog tomlplusplus::tomlplusplus OpenSSL::Crypto PkgConfig::LIBGIT2 PkgConfig::PCRE2
    PkgConfig::LIBDEFLATE ZLIB::ZLIB Threads::Threads ${CMAKE_DL_LIBS})
  # libcurl and libarchive are not linked: the first download or unpack
  # loads them by their SONAMEs (src/base/download/libraries.cpp). Named in
  # the dynamic section, they and their ~35 dependencies would be loaded by
  # every start (about 7 ms of a --dump-kwargs's 230, bench/RESULTS.md).
  target_include_directories(ascend_setup_deps SYSTEM INTERFACE
    ${LIBCURL_INCLUDE_DIRS} ${LIBARCHIVE_INCLUDE_DIRS})
  ascend_setup_soname(libcurl_soname "${LIBCURL_LINK_LIBRARIES}")
  ascend_setup_soname(libarchive_soname "${LIBARCHIVE_LINK_LIBRARIES}")
  target_compile_definitions(ascend_setup_deps INTERFACE
    ASCEND_SETUP_LIBCURL_SONAME="${libcurl_soname}" ASCEND_SETUP_LIBARCHIVE_SONAME="${libarchive_soname}")
  message(STATUS "ascend-setup: system libraries; loaded on first use: ${libcurl_soname}, ${libarchive_soname}")
  # The versions of the headers compiled against (pkg-config's, CMake's find modules').
  if(NOT ZLIB_VERSION_STRING)
    set(ZLIB_VERSION_STRING "${ZLIB_VERSION}")
  endif()
  foreach(library libgit2:LIBGIT2_VERSION libcurl:LIBCURL_VERSION libarchive:LIBARCHIVE_VERSION
                  zlib:ZLIB_VERSION_STRING openssl:OPENSSL_VERSION pcre2:PCRE2_VERSION
                  libdeflate:LIBDEFLATE_VERSION)
    string(REPLACE ":" ";" library ${library})
    list(GET library 0 name)
    list(GET library 1 version_var)
    ascend_setup_linked_library(${name} "${${version_var}}" system "" "" "")
  endforeach()
  return()
endif()

foreach(archive libgit2.a libcurl.a libarchive.a libz.a)
  if(NOT EXISTS "${ASCEND_SETUP_STATIC_DEPS}/lib/${archive}")
    message(FATAL_ERROR "ASCEND_SETUP_PORTABLE: ASCEND_SETUP_STATIC_DEPS (\"${ASCEND_SETUP_STATIC_DEPS}\") "
                        "holds no lib/${archive}: run scripts/build-static-deps.sh PREFIX first")
  endif()
endforeach()

# What the prefix holds and what is linked from Debian's archives, with their
# versions, as scripts/build-static-deps.sh recorded them (it brings the
# archives' versions up to date on each run; a new record reconfigures).
set(static_deps_versions "${ASCEND_SETUP_STATIC_DEPS}/versions.json")
if(NOT EXISTS "${static_deps_versions}")
  message(FATAL_ERROR "ASCEND_SETUP_PORTABLE: ${ASCEND_SETUP_STATIC_DEPS} holds no versions.json: "
                      "run scripts/build-static-deps.sh ${ASCEND_SETUP_STATIC_DEPS} again (it writes it)")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${static_deps_versions}")
file(READ "${static_deps_versions}" static_deps_record)
string(JSON linked_count ERROR_VARIABLE record_error LENGTH "${static_deps_record}" libraries)
if(record_error)
  message(FATAL_ERROR "${static_deps_versions}: ${record_error}")
endif()
foreach(field id version)
  string(JSON distro_${field} ERROR_VARIABLE record_error GET "${static_deps_record}" distro ${field})
  if(record_error OR NOT distro_${field} MATCHES "^[A-Za-z0-9._-]+$")
    message(FATAL_ERROR "${static_deps_versions}: no plain distro ${field} (${record_error})")
  endif()
endforeach()
set(ASCEND_SETUP_LINKED_DISTRO "{\"id\": \"${distro_id}\", \"version\": \"${distro_version}\"}")
math(EXPR linked_last "${linked_count} - 1")
foreach(index RANGE ${linked_last})
  foreach(field name version origin debian_source debian_version newer_debian_version)
    string(JSON ${field} ERROR_VARIABLE record_error GET "${static_deps_record}" libraries ${index} ${field})
    if(record_error)
      message(FATAL_ERROR "${static_deps_versions}: ${record_error}")
    endif()
  endforeach()
  ascend_setup_linked_library("${name}" "${version}" "${origin}" "${debian_source}" "${debian_version}"
                              "${newer_debian_version}")
endforeach()

# A static archive of the system's, by file name; FATAL_ERROR when missing.
function(ascend_setup_static_archive var name)
  find_library(${var} NAMES lib${name}.a NO_CACHE NO_CMAKE_ENVIRONMENT_PATH NO_CMAKE_PATH)
  if(NOT ${var})
    message(FATAL_ERROR "ASCEND_SETUP_PORTABLE: no lib${name}.a (the static archive of its -dev package)")
  endif()
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()

# spdlog over fmt, both header-only; toml++ header-only.
target_compile_definitions(ascend_setup_deps INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY=1
                                                       TOML_HEADER_ONLY=1)
find_path(SPDLOG_INCLUDE spdlog/spdlog.h REQUIRED)
find_path(FMT_INCLUDE fmt/format.h REQUIRED)
find_path(TOMLPLUSPLUS_INCLUDE toml++/toml.h REQUIRED)
target_include_directories(ascend_setup_deps SYSTEM INTERFACE
  ${ASCEND_SETUP_STATIC_DEPS}/include ${SPDLOG_INCLUDE} ${FMT_INCLUDE} ${TOMLPLUSPLUS_INCLUDE})

# The static archives, in link order (each before what it uses): libgit2
# (HTTPS by OpenSSL, SSH by libssh2, Debian's http-parser, PCRE2, which
# ascend-setup uses too), libcurl, libarchive (xz), libdeflate, then OpenSSL
# and zlib, which all of them use.
set(OPENSSL_USE_STATIC_LIBS TRUE)
find_package(OpenSSL REQUIRED COMPONENTS SSL Crypto)
foreach(name ssh2 http_parser pcre2-8 lzma deflate)
  string(MAKE_C_IDENTIFIER "STATIC_${name}" var)
  ascend_setup_static_archive(${var} ${name})
endforeach()
# libgit2's init loads OpenSSL's default CA bundle (every certificate parsed,
# a quarter of a --dump-kwargs's instructions) though only its network
# operations check one: that call is wrapped, and made before the first of
# them instead (src/base/git/source_repo.cpp).
target_compile_definitions(ascend_setup_deps INTERFACE ASCEND_SETUP_DEFER_LIBGIT2_CA=1)
target_link_options(ascend_setup_deps INTERFACE LINKER:--wrap=SSL_CTX_set_default_verify_paths)
set(static_deps_lib ${ASCEND_SETUP_STATIC_DEPS}/lib)
target_link_libraries(ascend_setup_deps INTERFACE
  ${static_deps_lib}/libgit2.a ${STATIC_ssh2} ${STATIC_http_parser} ${STATIC_pcre2_8}
  ${static_deps_lib}/libcurl.a ${static_deps_lib}/libarchive.a ${STATIC_lzma} ${STATIC_deflate}
  OpenSSL::SSL OpenSSL::Crypto ${static_deps_lib}/libz.a Threads::Threads ${CMAKE_DL_LIBS})
# What ships (the launcher and the host modules) carries its C++ runtime;
# libgcc_s stays the system's (on the policy's list; its static unwinder
# would need GLIBC_2.35's _dl_find_object). --gc-sections: Debian's
# libstdc++.a (built on glibc 2.36) brings random.o, std::random_device,
# which needs arc4random@GLIBC_2.36, into every link that copies a standard
# exception (stdexcept.o -> cow-string-inst.o -> random.o); nothing calls
# it, and with its unused sections dropped the reference goes too. A use of
# std::random_device would bring GLIBC_2.36 back.
set(ASCEND_SETUP_SHIPPED_LINK_OPTIONS -static-libstdc++ -Wl,--gc-sections)
message(STATUS "ascend-setup: portable: dependencies linked in (${ASCEND_SETUP_STATIC_DEPS})")
