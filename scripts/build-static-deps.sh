#!/usr/bin/env bash
# build-static-deps.sh PREFIX
#
# Builds the static, position-independent libraries that the portable wheel
# (py3-none-manylinux_2_34_x86_64) links into its shared objects, and installs
# them into PREFIX:
#   PREFIX/lib/libgit2.a   libgit2, Debian 12's source package (Debian's
#                          patches), HTTPS by OpenSSL, SSH by libssh2, regexes
#                          by PCRE2, Debian's http-parser, zlib; no GSSAPI,
#                          NTLM or iconv, no CA path baked in
#   PREFIX/lib/libcurl.a   curl, Debian 12's source package (Debian's patches),
#                          HTTP and HTTPS (OpenSSL) only, proxies, zlib
#   PREFIX/lib/libarchive.a  libarchive, Debian 12's source package (Debian's
#                          patches), every format; gzip (zlib) and xz (liblzma)
#                          filters in-process, the others through their
#                          programs (bzip2, zstd, ...) as libarchive falls back
#                          to; digests and zip encryption by OpenSSL; no ACL,
#                          xattr, XML (xar) or other libraries
#   PREFIX/lib/libz.a      zlib, Debian 12's source package
#   PREFIX/include/{git2.h,git2/*.h,curl/*.h,archive.h,archive_entry.h,
#   zlib.h,zconf.h}, PREFIX/lib/pkgconfig/*.pc, PREFIX/lib/cmake/CURL/
#   (curl's CMake package), PREFIX/bin/curl-config
# Not built: Debian's own static archives of OpenSSL (libssl.a, libcrypto.a;
# libssl-dev), libssh2 (libssh2.a; libssh2-1-dev), http-parser
# (libhttp_parser.a; libhttp-parser-dev), PCRE2 (libpcre2-8.a; libpcre2-dev)
# and xz (liblzma.a; liblzma-dev) link into a shared object (compiled
# position-independent, PIC or Debian's default PIE, with no direct reference
# to libc's data) and need nothing newer than GLIBC_2.34 (the self-check below
# proves both), so the consumer links them from /usr/lib/<multiarch>. The
# exact static link lines are printed at the end, written into the stamp
# (link: for all, link-libgit2:, link-libcurl:, link-libarchive:) and into
# libgit2.pc, libcurl.pc and libarchive.pc.
#
# Why not Debian's binary packages: libcurl4-openssl-dev's libcurl.a needs
# nghttp2, librtmp, libpsl, GSSAPI (Kerberos has no static library in Debian),
# LDAP, zstd, brotli, ... and, like zlib1g-dev's libz.a, is not compiled with
# -fPIC, so neither can go into a shared object. libgit2-dev's libgit2.a is
# built as PIE too (diff_print.o references libc's stdout directly, which a
# shared object cannot), uses mbedTLS with Debian's CA bundle path baked in,
# and needs GSSAPI. libarchive-dev's libarchive.a needs libacl, libbz2, liblz4,
# libzstd, libxml2 and nettle (several have no static archive in Debian) and
# arc4random_buf, new in GLIBC_2.36.
#
# PREFIX/versions.json records what a build links, for the binaries'
# --host-version and the wheel's SBOM (cmake/Dependencies.cmake reads it):
# each library built here with its upstream version (its header's macro) and
# the Debian source version built, and each Debian static archive linked
# with its package's installed version; "newer_debian_version" names the
# newest version Debian lists when it is newer than that (a security update
# the mirror lists but cannot serve, or an archive apt would upgrade).
#
# Idempotent: once PREFIX holds a finished build of the same recipe (the stamp
# file, written last, after versions.json), a run does nothing but bring
# versions.json up to date (the installed archives' versions). An interrupted
# run leaves no stamp and the next run starts over. The machine's apt configuration is never
# changed: the deb-src lists live in PREFIX/.work with private apt options.
#
# Environment (all optional):
#   CURL_DEB_VERSION, ZLIB_DEB_VERSION, LIBGIT2_DEB_VERSION,
#   LIBARCHIVE_DEB_VERSION  pin the Debian source version (e.g.
#       7.88.1-10+deb12u15); default: the newest the archive serves.
#   STATIC_DEPS_KEEP_WORK=1  keep PREFIX/.work (sources, build trees, logs).
#   STATIC_DEPS_SYSROOT=DIR  cross-build for DIR, a Debian root of another
#       architecture (scripts/debian-root --arch), which provides the
#       target's -dev packages, the static archives above among them: with
#       Debian's cross gcc (gcc-<triple>) and cmake/toolchains/<triple>.cmake;
#       the self-check's executable runs under qemu-user.
# CFLAGS/LDFLAGS/CPPFLAGS from the environment are ignored on purpose: the
# result must depend only on what the stamp records (a stray -march=native
# would make the wheel non-portable).
set -euo pipefail

log() { printf 'build-static-deps: %s\n' "$*" >&2; }
die() {
  printf 'build-static-deps: error: %s\n' "$*" >&2
  exit 1
}

if [ $# -ne 1 ] || [ -z "$1" ]; then die "usage: $0 PREFIX"; fi
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
stamp="$prefix/build-static-deps.stamp"
work="$prefix/.work"
logs="$work/logs"
jobs=2 # the machines have 2 cores; more only thrashes
unset CFLAGS CXXFLAGS CPPFLAGS LDFLAGS

# The target: this machine, or (STATIC_DEPS_SYSROOT) a root's architecture,
# its triple named by the directory that holds its libc.
sysroot=
triple=
cc=(gcc)
objdump=objdump
cmake_cross=()
run_target=()
dpkg_admin=()
if [ -n "${STATIC_DEPS_SYSROOT:-}" ]; then
  sysroot=$(cd "$STATIC_DEPS_SYSROOT" && pwd) || die "STATIC_DEPS_SYSROOT: no directory $STATIC_DEPS_SYSROOT"
  for libdir in "$sysroot"/usr/lib/*-linux-gnu*; do
    if [ -e "$libdir/libc.so.6" ]; then triple=$(basename "$libdir"); fi
  done
  [ -n "$triple" ] || die "STATIC_DEPS_SYSROOT: $sysroot holds no usr/lib/<triple>/libc.so.6 (not a Debian root)"
  toolchain="$(cd "$(dirname "$0")/.." && pwd)/cmake/toolchains/$triple.cmake"
  [ -f "$toolchain" ] || die "no CMake toolchain file for $triple ($toolchain)"
  command -v "$triple-gcc" >/dev/null || die "$triple-gcc is missing (apt-get install gcc-$triple g++-$triple)"
  qemu=/usr/bin/qemu-${triple%%-*}-static
  [ -x "$qemu" ] || die "$qemu is missing (apt-get install qemu-user-static): the self-check runs under it"
  cc=("$triple-gcc" "--sysroot=$sysroot")
  objdump=$triple-objdump
  cmake_cross=(-DCMAKE_TOOLCHAIN_FILE="$toolchain" -DASCEND_SETUP_SYSROOT="$sysroot"
    -DASCEND_SETUP_CROSS_COMPILER=gcc)
  run_target=("$qemu" -L "$sysroot")
  dpkg_admin=(--admindir="$sysroot/var/lib/dpkg")
fi

# ---------------------------------------------------------------------------
# The recipe. Everything that decides what the libraries contain is here and
# is written into the stamp; a change of any of it rebuilds. Bump
# recipe_version when the steps change in a way these lines do not show.
recipe_version=3

# All the libraries go into a shared object: -fPIC. Debian's hardening flags
# keep parity with Debian's own builds; the sections let a --gc-sections link
# drop what ascend-setup never calls. The optimisation level of curl,
# libgit2 and libarchive comes from CMAKE_BUILD_TYPE=Release (-O3).
common_cflags="-fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2 -ffunction-sections -fdata-sections"
# Debian builds zlib with -O3 -D_REENTRANT (debian/rules).
zlib_cflags="-O3 -D_REENTRANT $common_cflags"

# curl 7.88.1's CMake switches (names from its CMakeLists.txt). Only HTTP(S),
# OpenSSL, zlib and proxies stay; every optional dependency is off explicitly
# so that a -dev package installed later on the build machine cannot sneak in
# (several are ON or AUTO by default: libidn2, libpsl, libssh2, zlib).
curl_options=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DBUILD_CURL_EXE=OFF
  -DBUILD_TESTING=OFF
  -DENABLE_MANUAL=OFF
  -DCURL_LTO=OFF             # LTO objects in a .a would tie users to this gcc
  -DPICKY_COMPILER=OFF
  -DCURL_WERROR=OFF
  -DCURL_HIDDEN_SYMBOLS=ON   # only curl_* are global in the archive
  # Protocols: HTTP and HTTPS only.
  -DHTTP_ONLY=ON
  -DCURL_DISABLE_DICT=ON -DCURL_DISABLE_FILE=ON -DCURL_DISABLE_FTP=ON
  -DCURL_DISABLE_GOPHER=ON -DCURL_DISABLE_IMAP=ON -DCURL_DISABLE_LDAP=ON
  -DCURL_DISABLE_LDAPS=ON -DCURL_DISABLE_MQTT=ON -DCURL_DISABLE_POP3=ON
  -DCURL_DISABLE_RTSP=ON -DCURL_DISABLE_SMB=ON -DCURL_DISABLE_SMTP=ON
  -DCURL_DISABLE_TELNET=ON -DCURL_DISABLE_TFTP=ON -DENABLE_WEBSOCKETS=OFF
  # Features the downloader never turns on; each is code and attack surface.
  -DCURL_DISABLE_COOKIES=ON -DCURL_DISABLE_ALTSVC=ON -DCURL_DISABLE_HSTS=ON
  -DCURL_DISABLE_DOH=ON -DCURL_DISABLE_MIME=ON -DCURL_DISABLE_NETRC=ON
  -DCURL_DISABLE_GETOPTIONS=ON -DCURL_DISABLE_PROGRESS_METER=ON
  -DENABLE_UNIX_SOCKETS=OFF
  # Kept on purpose: proxies (http_proxy/https_proxy/all_proxy/no_proxy,
  # SOCKS, HTTPS proxies), HTTP auth incl. Digest/NTLM (corporate proxies),
  # ranges, date parsing (Retry-After), verbose error strings, IPv6, and the
  # threaded resolver (timeouts on name lookups without SIGALRM, which a
  # library inside someone else's process must not use).
  -DCURL_DISABLE_PROXY=OFF -DCURL_DISABLE_HTTP_AUTH=OFF -DCURL_DISABLE_CRYPTO_AUTH=OFF
  -DENABLE_IPV6=ON -DENABLE_THREADED_RESOLVER=ON -DENABLE_ARES=OFF
  # TLS: OpenSSL only, Debian's static archives.
  -DCURL_ENABLE_SSL=ON -DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=TRUE
  -DCURL_USE_MBEDTLS=OFF -DCURL_USE_BEARSSL=OFF -DCURL_USE_NSS=OFF -DCURL_USE_WOLFSSL=OFF
  # No openssl.cnf read at curl_global_init: the path is baked into Debian's
  # libcrypto.a (/usr/lib/ssl) and means something else, or nothing, on the
  # machines the wheel runs on.
  -DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON
  # No CA bundle or directory baked in: Debian's paths are wrong on RHEL and
  # SUSE. The caller sets CURLOPT_CAINFO/CURLOPT_CAPATH at run time; without
  # them verification fails (it is never skipped). No fallback to OpenSSL's
  # default paths either (also Debian's, baked into libcrypto.a).
  -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_CA_FALLBACK=OFF
  # Optional libraries: all off, zlib on (ours, below).
  -DUSE_NGHTTP2=OFF -DUSE_NGTCP2=OFF -DUSE_QUICHE=OFF -DUSE_MSH3=OFF
  -DUSE_LIBIDN2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF
  -DCURL_USE_GSSAPI=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DCURL_ZLIB=ON
)

# libgit2 1.5.1's CMake switches (names from its CMakeLists.txt and
# cmake/Select*.cmake), compared with Debian's debian/rules: the same
# library, but static and PIC, with OpenSSL instead of mbedTLS and without
# GSSAPI. Debian's source is repacked without deps/ (no bundled http-parser,
# PCRE, zlib or ntlmclient), so every dependency is a system one, each named
# by its archive's file below (never found by search: the .so would win).
libgit2_options=(
  -DCMAKE_BUILD_TYPE=Release # libgit2's default is Debug (-O0)
  -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DBUILD_TESTS=OFF -DBUILD_CLI=OFF -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF
  -DENABLE_WERROR=OFF
  -DENABLE_REPRODUCIBLE_BUILDS=ON # Debian's: ar D (no timestamps/uids)
  -DDEPRECATE_HARD=OFF            # the deprecated names stay callable
  -DUSE_THREADS=ON -DUSE_NSEC=ON
  # TLS: OpenSSL, Debian's static archives, as curl's. No CERT_LOCATION: the
  # OpenSSL backend never uses one (only mbedTLS's does; Debian bakes
  # /etc/ssl/certs/ca-certificates.crt in for it). The caller sets
  # GIT_OPT_SET_SSL_CERT_LOCATIONS to the system's bundle at run time.
  -DUSE_HTTPS=OpenSSL -DOPENSSL_USE_STATIC_LIBS=TRUE
  # SHA-1: the collision-detecting implementation (libgit2's and git's
  # default, in libgit2's own tree); SHA-256 from OpenSSL.
  -DUSE_SHA1=CollisionDetection -DUSE_SHA256=OpenSSL
  # SSH: Debian's libssh2.a (OpenSSL and zlib inside, no more archives).
  -DUSE_SSH=ON
  # Debian's choices for the rest (deps/ is not in its source): the system's
  # http-parser 2.9 and PCRE2, the latter already a dependency of
  # ascend-setup itself (one PCRE2 for both, as in the non-portable build).
  -DUSE_HTTP_PARSER=system -DREGEX_BACKEND=pcre2 -DUSE_BUNDLED_ZLIB=OFF
  # Off: GSSAPI/SPNEGO (Kerberos has no static library in Debian), NTLM
  # (bundled ntlmclient, removed from Debian's source); iconv is a macOS-only
  # switch in libgit2 (Linux paths are bytes).
  -DUSE_GSSAPI=OFF -DUSE_NTLMCLIENT=OFF
)
# Patched into Debian's source (one line, checked to apply): libgit2's OpenSSL
# init does not read openssl.cnf either, like curl's
# (CURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG). The path is baked into Debian's
# libcrypto.a and means something else, or nothing, where the wheel runs, and
# whichever of the two libraries initialises OpenSSL first (ascend-setup
# starts libgit2 on a thread of its own) would decide for both.
libgit2_openssl_init='OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);'

# libarchive 3.6.2's CMake switches (names from its CMakeLists.txt; Debian
# builds with autotools and nettle). ascend-setup reads whatever
# archive_read_support_{filter,format}_all accept and extracts with
# archive_write_disk (no ACLs, no xattrs). Every optional library is off
# explicitly (most are ON or AUTO by default) except zlib (ours), liblzma
# (Debian's archive; .tar.xz) and OpenSSL (already linked, for digests and zip
# encryption). A filter without its library is run through its program
# (bzip2 -d, zstd -d, lz4 -d, ...) where the system has one.
libarchive_options=(
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF
  -DENABLE_COVERAGE=OFF -DENABLE_WERROR=OFF
  -DENABLE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=TRUE
  -DENABLE_NETTLE=OFF -DENABLE_MBEDTLS=OFF -DENABLE_CNG=OFF
  -DENABLE_ZLIB=ON -DENABLE_LZMA=ON
  -DENABLE_BZip2=OFF -DENABLE_ZSTD=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF
  -DENABLE_LIBB2=OFF # BLAKE2 (RAR5): libarchive's own copy
  -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF # the xar format only
  -DENABLE_ACL=OFF -DENABLE_XATTR=OFF
  -DENABLE_ICONV=ON # glibc's (archive entry names in other charsets)
  -DENABLE_PCREPOSIX=OFF -DENABLE_LIBGCC=OFF -DPOSIX_REGEX_LIB=LIBC
  # glibc 2.36 has arc4random_buf (GLIBC_2.36, above the wheel's 2.34): not
  # used; libarchive's own arc4random (seeded from /dev/urandom) is.
  -DHAVE_ARC4RANDOM_BUF=
)
# Patched into Debian's source (checked to apply): that own arc4random_buf is
# a static function of the same name as the one glibc 2.36's <stdlib.h>
# declares, which does not compile; it is renamed in archive_random.c.
libarchive_random_rename='arc4random_buf -> la_arc4random_buf in libarchive/archive_random.c'

# The stamp's recipe part: compared line by line with an existing stamp.
recipe() {
  printf 'recipe: %s\n' "$recipe_version"
  printf 'target: %s\n' "${triple:-this machine}${sysroot:+ (sysroot $sysroot)}"
  printf 'cflags: %s\n' "$common_cflags"
  printf 'zlib-cflags: %s\n' "$zlib_cflags"
  printf 'zlib-configure: --static\n'
  printf 'curl-cmake: %s\n' "${curl_options[@]}"
  printf 'libgit2-cmake: %s\n' "${libgit2_options[@]}"
  printf 'libgit2-openssl-init: %s\n' "$libgit2_openssl_init"
  printf 'libarchive-cmake: %s\n' "${libarchive_options[@]}"
  printf 'libarchive-patch: %s\n' "$libarchive_random_rename"
}

# ---------------------------------------------------------------------------
# PREFIX/versions.json (see the top), written before the stamp and brought up
# to date by a run that finds the build done. The libraries built here: their
# Debian versions from the stamp's -source and -newest lines, their upstream
# versions from their installed headers. Debian's static archives the
# consumer links: the installed package's version (dpkg), and on a build for
# this machine the newer version apt would install (its candidate).
versions="$prefix/versions.json"
built_libraries=( # name, Debian source package, header, version macro
  "libgit2 libgit2 git2/version.h LIBGIT2_VERSION"
  "libcurl curl curl/curlver.h LIBCURL_VERSION"
  "libarchive libarchive archive.h ARCHIVE_VERSION_ONLY_STRING"
  "zlib zlib zlib.h ZLIB_VERSION"
)
static_archives=( # name, -dev package, header, version macros (joined by dots)
  "openssl libssl-dev openssl/opensslv.h OPENSSL_VERSION_STR"
  "libssh2 libssh2-1-dev libssh2.h LIBSSH2_VERSION"
  "http-parser libhttp-parser-dev http_parser.h HTTP_PARSER_VERSION_MAJOR HTTP_PARSER_VERSION_MINOR HTTP_PARSER_VERSION_PATCH"
  "pcre2 libpcre2-dev pcre2.h PCRE2_MAJOR PCRE2_MINOR"
  "liblzma liblzma-dev lzma/version.h LZMA_VERSION_MAJOR LZMA_VERSION_MINOR LZMA_VERSION_PATCH"
  "libdeflate libdeflate-dev libdeflate.h LIBDEFLATE_VERSION_STRING"
)

# The values of a header's #define MACRO lines, joined by dots; "unknown"
# when the header or a macro is missing.
header_version() {
  local file=$1 macro value parts=()
  shift
  for macro in "$@"; do
    value=$(sed -n "s/^#[[:space:]]*define[[:space:]]\{1,\}${macro}[[:space:]]\{1,\}\"\{0,1\}\([^\"[:space:]]*\).*/\1/p" \
      "$file" 2>/dev/null | sed -n 1p)
    if [ -z "$value" ]; then
      echo unknown
      return
    fi
    parts+=("$value")
  done
  (
    IFS=.
    printf '%s\n' "${parts[*]}"
  )
}

json_string() { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"; }

# One library's JSON object from "field value" pairs.
json_object() {
  local out="{" sep=""
  while [ $# -ge 2 ]; do
    out+="$sep$(json_string "$1"): $(json_string "$2")"
    sep=", "
    shift 2
  done
  printf '%s}' "$out"
}

# One line per library built from an older Debian version than the newest
# listed, as the stamp $1 says: "name built newest".
older_built_libraries() {
  local name src header macro built newest
  for entry in "${built_libraries[@]}"; do
    read -r name src header macro <<<"$entry"
    built=$(sed -n "s/^$src-source: $src //p" "$1")
    newest=$(sed -n "s/^$src-newest: $src //p" "$1")
    if [ -n "$newest" ] && [ "$newest" != "$built" ]; then printf '%s %s %s\n' "$src" "$built" "$newest"; fi
  done
}

# Writes versions.json from the stamp $1 (the finished build's) and the
# machine's packages; a file of the same content is left untouched.
write_versions() {
  local stamp_file=$1 include="$sysroot/usr/include" os_release="$sysroot/etc/os-release" objects=()
  local name src dev header built newest installed source_name source_version candidate
  [ -f "$os_release" ] || os_release="$sysroot/usr/lib/os-release"
  local distro_id distro_version
  distro_id=$(sed -n 's/^ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$os_release" 2>/dev/null)
  distro_version=$(sed -n 's/^VERSION_ID="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$os_release" 2>/dev/null)
  for entry in "${built_libraries[@]}"; do
    read -r name src header macro <<<"$entry"
    built=$(sed -n "s/^$src-source: $src //p" "$stamp_file")
    newest=$(sed -n "s/^$src-newest: $src //p" "$stamp_file")
    [ "$newest" != "$built" ] || newest=
    objects+=("$(json_object name "$name" version "$(header_version "$prefix/include/$header" "$macro")" \
      origin source debian_source "$src" debian_version "$built" newer_debian_version "$newest")")
  done
  # apt's candidates, one call for all (a cross build's root has no apt state).
  local -A apt_candidates=()
  if [ -z "$sysroot" ] && command -v apt-cache >/dev/null; then
    local -a devs=()
    for entry in "${static_archives[@]}"; do
      read -r name dev _ <<<"$entry"
      devs+=("$dev")
    done
    while read -r dev candidate; do
      apt_candidates[$dev]=$candidate
    done < <(apt-cache policy "${devs[@]}" 2>/dev/null |
      awk '/^[^ \t].*:$/ { p = substr($0, 1, length($0) - 1); sub(/:.*/, "", p) }
           /^  Candidate:/ { print p, $2 }')
  fi
  for entry in "${static_archives[@]}"; do
    read -r name dev header _ <<<"$entry"
    # shellcheck disable=SC2086 # the macros after the header
    set -- $entry
    shift 3
    read -r installed source_name source_version < <(dpkg-query "${dpkg_admin[@]}" -W \
      -f='${Version} ${source:Package} ${source:Version}\n' "$dev" 2>/dev/null || true)
    if [ -z "$installed" ] || [ -z "$source_version" ]; then
      installed=unknown source_name=unknown source_version="not installed"
    fi
    newest=
    candidate=${apt_candidates[$dev]:-}
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && [ "$installed" != unknown ] &&
      dpkg --compare-versions "$candidate" gt "$installed"; then
      newest=$candidate
    fi
    objects+=("$(json_object name "$name" version "$(header_version "$include/$header" "$@")" \
      origin archive debian_package "$dev" debian_source "$source_name" debian_version "$source_version" \
      newer_debian_version "$newest")")
  done
  {
    printf '{\n  "format": 1,\n  "distro": %s,\n  "libraries": [\n' \
      "$(json_object id "${distro_id:-unknown}" version "${distro_version:-unknown}")"
    local i
    for ((i = 0; i < ${#objects[@]}; i++)); do
      printf '    %s%s\n' "${objects[i]}" "$([ $((i + 1)) -lt ${#objects[@]} ] && echo ,)"
    done
    printf '  ]\n}\n'
  } >"$versions.tmp"
  if cmp -s "$versions.tmp" "$versions"; then
    rm -f "$versions.tmp"
  else
    mv -f "$versions.tmp" "$versions"
  fi
}

# ---------------------------------------------------------------------------
# Already done? Checked before anything touches the network or the machine.
already_built() {
  [ -f "$stamp" ] && [ -f "$prefix/lib/libcurl.a" ] && [ -f "$prefix/lib/libz.a" ] &&
    [ -f "$prefix/lib/libgit2.a" ] && [ -f "$prefix/lib/libarchive.a" ] || return 1
  [ "$(sed -n '/^recipe: /,$p' "$stamp")" = "$(recipe)" ] || return 1
  # A pinned version must be the one built; unpinned, any finished build is.
  if [ -n "${CURL_DEB_VERSION:-}" ]; then
    grep -qxF "curl-source: curl $CURL_DEB_VERSION" "$stamp" || return 1
  fi
  if [ -n "${ZLIB_DEB_VERSION:-}" ]; then
    grep -qxF "zlib-source: zlib $ZLIB_DEB_VERSION" "$stamp" || return 1
  fi
  if [ -n "${LIBGIT2_DEB_VERSION:-}" ]; then
    grep -qxF "libgit2-source: libgit2 $LIBGIT2_DEB_VERSION" "$stamp" || return 1
  fi
  if [ -n "${LIBARCHIVE_DEB_VERSION:-}" ]; then
    grep -qxF "libarchive-source: libarchive $LIBARCHIVE_DEB_VERSION" "$stamp" || return 1
  fi
}
if already_built; then
  write_versions "$stamp"
  while read -r src built newest; do
    log "the portable build ships $src $built, OLDER than Debian's security version $newest (recorded in $versions)"
  done < <(older_built_libraries "$stamp")
  log "$prefix already holds $(sed -n 's/^libgit2-source: //p' "$stamp"), $(sed -n 's/^curl-source: //p' "$stamp"), $(sed -n 's/^libarchive-source: //p' "$stamp") and $(sed -n 's/^zlib-source: //p' "$stamp") built with this recipe ($stamp): nothing to do"
  exit 0
fi

# Two builds into one PREFIX (two CMake configures sharing a cache) would
# wreck each other's work tree: one waits for the other, then finds it done.
exec 9>"$prefix/.build-static-deps.lock"
if ! flock -n 9; then
  log "another build into $prefix is running; waiting for it (at most 30 min)"
  flock -w 1800 9 || die "$prefix stayed locked for 30 min by another build"
  if already_built; then
    write_versions "$stamp"
    log "the other build finished $prefix: nothing to do"
    exit 0
  fi
fi

start=$(date +%s)
log "building static PIC libgit2, curl, libarchive and zlib into $prefix"
# From here PREFIX is being rewritten: a stamp of an earlier build must not
# outlive an interruption of this one.
rm -f "$stamp" "$versions"

# A fresh work tree: whatever an interrupted run left is not trusted.
rm -rf "$work"
mkdir -p "$logs"

# ---------------------------------------------------------------------------
# Tools. dpkg-dev (dpkg-source, for apt-get source) and the -dev packages
# whose static archives are linked as Debian ships them (libssl-dev,
# libssh2-1-dev, libhttp-parser-dev, libpcre2-dev, liblzma-dev) are installed
# if missing, as root; nothing else is.
multiarch=${triple:-$(gcc -print-multiarch 2>/dev/null || true)}
[ -n "$multiarch" ] || die "gcc -print-multiarch gave nothing: a Debian gcc is needed"
sys_libdir="$sysroot/usr/lib/$multiarch"
sys_include="$sysroot/usr/include"
for tool in cmake make gcc patch flock apt-get apt-cache dpkg-query; do
  command -v "$tool" >/dev/null || die "$tool is missing (install it: apt-get install cmake make gcc patch)"
done
missing=()
[ -f "$sys_libdir/libssl.a" ] && [ -f "$sys_libdir/libcrypto.a" ] && [ -f "$sys_include/openssl/ssl.h" ] ||
  missing+=(libssl-dev)
[ -f "$sys_libdir/libssh2.a" ] && [ -f "$sys_include/libssh2.h" ] || missing+=(libssh2-1-dev)
[ -f "$sys_libdir/libhttp_parser.a" ] && [ -f "$sys_include/http_parser.h" ] || missing+=(libhttp-parser-dev)
[ -f "$sys_libdir/libpcre2-8.a" ] && [ -f "$sys_include/pcre2.h" ] || missing+=(libpcre2-dev)
[ -f "$sys_libdir/liblzma.a" ] && [ -f "$sys_include/lzma.h" ] || missing+=(liblzma-dev)
# A cross build's archives are the root's: its maker names them.
if [ -n "$sysroot" ] && [ ${#missing[@]} -gt 0 ]; then
  die "the root $sysroot lacks ${missing[*]} (make it with those packages)"
fi
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "${missing[*]} missing and not root: apt-get install ${missing[*]}"
  log "installing ${missing[*]} (missing)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; } \
    >"$logs/apt-install.log" 2>&1 ||
    die "apt-get install ${missing[*]} failed (network? see $logs/apt-install.log)"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# Runs a step with its output in a log; on failure shows the log's tail.
step() {
  local name=$1
  shift
  if ! "$@" >"$logs/$name.log" 2>&1; then
    tail -n 25 "$logs/$name.log" >&2
    die "step '$name' failed (full log: $logs/$name.log)"
  fi
}

# ---------------------------------------------------------------------------
# Private deb-src lists. Derived from the machine's own Debian entries (the
# deb822 stanzas in /etc/apt/sources.list.d/*.sources and the one-line ones in
# /etc/apt/sources.list*), so that the same mirror, suites and keys are used;
# third-party repositories (their keys sign no Debian source) are left out.
apt_dir="$work/apt"
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache"
shopt -s nullglob
deb822_files=(/etc/apt/sources.list.d/*.sources)
list_files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
shopt -u nullglob
# A stanza is Debian's when it is signed with Debian's archive keyring or its
# URI is a .../debian or .../debian-security archive. Its Types becomes
# deb-src; every other field (continuation lines too) is copied as is.
if [ ${#deb822_files[@]} -gt 0 ]; then
  awk '
    function flush() {
      if (n > 0 && enabled && (keyring || uri_debian)) {
        print "Types: deb-src"
        for (i = 1; i <= n; i++) print lines[i]
        print ""
      }
      n = 0; enabled = 1; keyring = 0; uri_debian = 0
    }
    BEGIN { n = 0; enabled = 1 }
    /^[ \t]*$/ { flush(); next }
    /^#/ { next }
    /^Types:/ { next }
    /^Enabled:[ \t]*(no|false|0)/ { enabled = 0 }
    /^Signed-By:.*debian-archive-keyring/ { keyring = 1 }
    /^URIs:/ { if ($0 ~ /\/debian(-security)?\/?([ \t]|$)/) uri_debian = 1 }
    { lines[++n] = $0 }
    END { flush() }
  ' "${deb822_files[@]}" >"$apt_dir/parts/debian-src.sources"
fi
# One-line entries: "deb [options] URI suite components".
for f in "${list_files[@]}"; do
  [ -f "$f" ] || continue
  awk '$1 == "deb" && ($0 ~ /debian-archive-keyring/ || $0 ~ /\/debian(-security)?\/?[ \t]/) {
         sub(/^deb[ \t]/, "deb-src "); print }' "$f"
done >"$apt_dir/parts/debian-src.list"
[ -s "$apt_dir/parts/debian-src.sources" ] || [ -s "$apt_dir/parts/debian-src.list" ] ||
  die "no Debian archive entry in /etc/apt/sources.list{,.d/*}: cannot derive deb-src lines"

apt_opts=(
  -o "Dir::Etc::SourceList=/dev/null"
  -o "Dir::Etc::SourceParts=$apt_dir/parts"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache" # pkgcache.bin/srcpkgcache.bin: not the machine's
  -o "APT::Get::Only-Source=true" # "zlib" means the source package
  -o "Acquire::Retries=3"         # apt's own bounded retries on a flaky mirror
)
log "fetching the deb-src lists (private apt state in $apt_dir)"
# apt-get update exits 0 when an index failed to download (it warns and
# ignores it), so its log is checked too.
if ! apt-get "${apt_opts[@]}" update >"$logs/apt-update.log" 2>&1 ||
  grep -q '^[WE]: Failed to fetch' "$logs/apt-update.log"; then
  die "cannot fetch the Debian deb-src lists (network, proxy or mirror?): $(grep -m 1 '^[WE]: ' "$logs/apt-update.log" | cut -c 1-200) (log: $logs/apt-update.log)"
fi

# Prints the versions of a source package, newest first (Debian's ordering).
versions_newest_first() {
  local -a v
  mapfile -t v < <(apt-cache "${apt_opts[@]}" showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -u)
  local i j t
  for ((i = 1; i < ${#v[@]}; i++)); do
    for ((j = i; j > 0; j--)); do
      dpkg --compare-versions "${v[j]}" gt "${v[j - 1]}" || break
      t=${v[j]} v[j]=${v[j - 1]} v[j - 1]=$t
    done
  done
  [ ${#v[@]} -eq 0 ] || printf '%s\n' "${v[@]}"
}

# Downloads and unpacks (dpkg-source -x applies Debian's quilt series) source
# package $1 into $work/src-$1; prints the version it got. The newest version
# first; a mirror that lists a version but lacks its files (seen: a security
# update listed, 404 in the pool) falls back to the next, at most 3 tries.
fetch_source() {
  local pkg=$1 pin=$2 dir="$work/src-$1" v tried=()
  local -a candidates
  if [ -n "$pin" ]; then
    candidates=("$pin")
  else
    mapfile -t candidates < <(versions_newest_first "$pkg" | head -n 3)
  fi
  [ ${#candidates[@]} -gt 0 ] || die "the Debian archive lists no source package '$pkg'"
  for v in "${candidates[@]}"; do
    rm -rf "$dir"
    mkdir -p "$dir"
    # apt downloads as the unprivileged _apt user where it can write.
    if id _apt >/dev/null 2>&1; then chown _apt "$dir"; fi
    if (cd "$dir" && apt-get "${apt_opts[@]}" source "$pkg=$v") >"$logs/source-$pkg.log" 2>&1; then
      printf '%s\n' "$v"
      return 0
    fi
    tried+=("$v")
    log "source $pkg $v could not be fetched: $(grep -m 1 '^E: ' "$logs/source-$pkg.log" || echo 'see the log')"
  done
  die "cannot download the source of $pkg from the Debian archive (tried ${tried[*]}; see $logs/source-$pkg.log)"
}

log "fetching Debian's source of libgit2, curl, libarchive and zlib"
libgit2_version=$(fetch_source libgit2 "${LIBGIT2_DEB_VERSION:-}")
libarchive_version=$(fetch_source libarchive "${LIBARCHIVE_DEB_VERSION:-}")
curl_version=$(fetch_source curl "${CURL_DEB_VERSION:-}")
zlib_version=$(fetch_source zlib "${ZLIB_DEB_VERSION:-}")
libgit2_src=$(find "$work/src-libgit2" -mindepth 1 -maxdepth 1 -type d -name 'libgit2-*' | head -n 1)
libarchive_src=$(find "$work/src-libarchive" -mindepth 1 -maxdepth 1 -type d -name 'libarchive-*' | head -n 1)
curl_src=$(find "$work/src-curl" -mindepth 1 -maxdepth 1 -type d -name 'curl-*' | head -n 1)
zlib_src=$(find "$work/src-zlib" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)
[ -f "$libgit2_src/CMakeLists.txt" ] || die "no unpacked libgit2 source in $work/src-libgit2"
[ -f "$libarchive_src/CMakeLists.txt" ] || die "no unpacked libarchive source in $work/src-libarchive"
[ -f "$curl_src/CMakeLists.txt" ] || die "no unpacked curl source in $work/src-curl"
[ -f "$zlib_src/configure" ] || die "no unpacked zlib source in $work/src-zlib"
log "libgit2 $libgit2_version, curl $curl_version, libarchive $libarchive_version, zlib $zlib_version unpacked"

# The newest version each source package lists is what a build wants: one it
# could not fetch (a security update the mirror lists but does not serve) or
# a pin to an older one means shipping an older library, said plainly here
# and recorded (the stamp's -newest lines, versions.json).
newest_listed() { versions_newest_first "$1" | sed -n 1p; }
libgit2_newest=$(newest_listed libgit2)
libarchive_newest=$(newest_listed libarchive)
curl_newest=$(newest_listed curl)
zlib_newest=$(newest_listed zlib)
for fetched in "libgit2 $libgit2_version ${libgit2_newest:-$libgit2_version} LIBGIT2_DEB_VERSION" \
  "libarchive $libarchive_version ${libarchive_newest:-$libarchive_version} LIBARCHIVE_DEB_VERSION" \
  "curl $curl_version ${curl_newest:-$curl_version} CURL_DEB_VERSION" \
  "zlib $zlib_version ${zlib_newest:-$zlib_version} ZLIB_DEB_VERSION"; do
  read -r src got newest pin <<<"$fetched"
  if [ "$got" != "$newest" ]; then
    why="the archive lists it but did not serve it"
    if [ -n "${!pin:-}" ]; then why="$pin pins $got"; fi
    log "the portable build ships $src $got, OLDER than Debian's security version $newest ($why)"
  fi
done

# Debian's series ends with 90_gnutls.patch and 99_nss.patch, which rename the
# library for the GnuTLS and NSS flavours (automake files and the symbol
# version script only). debian/rules pops both for the OpenSSL flavour
# (libcurl4); so do we, to build exactly that flavour's tree.
reverted=()
for p in 99_nss.patch 90_gnutls.patch; do
  if grep -qx "$p" "$curl_src/debian/patches/series" 2>/dev/null; then
    step "revert-$p" patch -d "$curl_src" -R -p1 --no-backup-if-mismatch -i "debian/patches/$p"
    reverted+=("$p")
  fi
done

# ---------------------------------------------------------------------------
# zlib: its configure, static only (its CMake always builds the shared one).
log "building zlib (static, PIC)"
(
  cd "$zlib_src"
  # CHOST: the cross ar and ranlib (${triple}-ar); CC: with the sysroot.
  step zlib-configure env CFLAGS="$zlib_cflags" CC="${cc[*]}" ${triple:+CHOST=$triple} \
    ./configure --static --prefix="$prefix"
  step zlib-build make -j"$jobs" libz.a
) || exit 1
# Installed by hand: "make install" also puts the man page in.
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
install -m 644 "$zlib_src/libz.a" "$prefix/lib/libz.a"
install -m 644 "$zlib_src/zlib.h" "$zlib_src/zconf.h" "$prefix/include/"
install -m 644 "$zlib_src/zlib.pc" "$prefix/lib/pkgconfig/zlib.pc"

# ---------------------------------------------------------------------------
# curl: CMake. zlib is named by file (not found by search) so that the
# machine's non-PIC /usr/lib/.../libz.a can never be picked instead.
log "configuring curl (${generator[*]:-Unix Makefiles})"
curl_build="$work/build-curl"
step curl-configure cmake -S "$curl_src" -B "$curl_build" "${generator[@]}" "${cmake_cross[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
  -DCMAKE_C_FLAGS="$common_cflags" \
  -DZLIB_INCLUDE_DIR="$prefix/include" -DZLIB_LIBRARY="$prefix/lib/libz.a" \
  -DOPENSSL_ROOT_DIR=/usr \
  "${curl_options[@]}"
# What CMake decided, checked rather than trusted: OpenSSL found static, zlib
# ours, the optional libraries absent.
cache="$curl_build/CMakeCache.txt"
grep -q "^OPENSSL_SSL_LIBRARY:FILEPATH=.*libssl\.a$" "$cache" ||
  die "curl's CMake did not pick a static libssl.a (see $cache)"
curl_config_h="$curl_build/lib/curl_config.h"
for want in USE_OPENSSL HAVE_LIBZ USE_THREADS_POSIX; do
  grep -q "^#define $want 1" "$curl_config_h" || die "curl configured without $want (see $curl_config_h)"
done
for unwanted in USE_NGHTTP2 USE_LIBIDN2 USE_LIBPSL USE_LIBSSH2 USE_LIBSSH HAVE_GSSAPI HAVE_BROTLI HAVE_ZSTD \
  USE_LIBRTMP CURL_CA_BUNDLE CURL_CA_PATH; do
  if grep -q "^#define $unwanted\b" "$curl_config_h"; then
    die "curl configured with $unwanted (see $curl_config_h)"
  fi
done

log "building curl ($jobs jobs)"
step curl-build cmake --build "$curl_build" --parallel "$jobs"
step curl-install cmake --install "$curl_build"
# The link lines of all the libraries are set together, below.

# ---------------------------------------------------------------------------
# libgit2: CMake, every dependency named by file (OpenSSL through
# OPENSSL_USE_STATIC_LIBS; libssh2 is found by pkg-config, which only decides
# GIT_SSH and the memory-credentials check: the archive is on the link line).
# The one local change to Debian's tree first (see libgit2_openssl_init).
openssl_c="$libgit2_src/src/libgit2/streams/openssl.c"
[ "$(grep -c '^[[:space:]]*OPENSSL_init_ssl(0, NULL);$' "$openssl_c")" = 1 ] ||
  die "libgit2's $openssl_c no longer has exactly one 'OPENSSL_init_ssl(0, NULL);': review libgit2_openssl_init"
sed -i "s|^\([[:space:]]*\)OPENSSL_init_ssl(0, NULL);\$|\1$libgit2_openssl_init|" "$openssl_c"
log "configuring libgit2 (${generator[*]:-Unix Makefiles})"
libgit2_build="$work/build-libgit2"
step libgit2-configure cmake -S "$libgit2_src" -B "$libgit2_build" "${generator[@]}" "${cmake_cross[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
  -DCMAKE_C_FLAGS="$common_cflags" \
  -DZLIB_INCLUDE_DIR="$prefix/include" -DZLIB_LIBRARY="$prefix/lib/libz.a" \
  -DOPENSSL_ROOT_DIR=/usr \
  -DHTTP_PARSER_INCLUDE_DIR="$sys_include" -DHTTP_PARSER_LIBRARY="$sys_libdir/libhttp_parser.a" \
  -DPCRE2_INCLUDE_DIR="$sys_include" -DPCRE2_LIBRARY="$sys_libdir/libpcre2-8.a" \
  "${libgit2_options[@]}"
# What CMake decided, checked rather than trusted.
cache="$libgit2_build/CMakeCache.txt"
grep -q "^OPENSSL_SSL_LIBRARY:FILEPATH=.*libssl\.a$" "$cache" ||
  die "libgit2's CMake did not pick a static libssl.a (see $cache)"
libgit2_features_h="$libgit2_build/src/git2/sys/features.h"
[ -f "$libgit2_features_h" ] || die "libgit2's CMake wrote no $libgit2_features_h"
for want in GIT_THREADS GIT_USE_NSEC GIT_HTTPS GIT_OPENSSL GIT_SSH GIT_SSH_MEMORY_CREDENTIALS \
  GIT_REGEX_PCRE2 GIT_SHA1_COLLISIONDETECT GIT_SHA256_OPENSSL; do
  grep -q "^#define $want\b" "$libgit2_features_h" || die "libgit2 configured without $want (see $libgit2_features_h)"
done
for unwanted in GIT_OPENSSL_DYNAMIC GIT_MBEDTLS GIT_GSSAPI GIT_NTLM GIT_USE_ICONV GIT_REGEX_BUILTIN; do
  if grep -q "^#define $unwanted\b" "$libgit2_features_h"; then
    die "libgit2 configured with $unwanted (see $libgit2_features_h)"
  fi
done
if grep -rqs --include=build.ninja --include=flags.make GIT_DEFAULT_CERT_LOCATION "$libgit2_build"; then
  die "libgit2 configured with a CA location baked in (see $cache)"
fi

log "building libgit2 ($jobs jobs)"
step libgit2-build cmake --build "$libgit2_build" --parallel "$jobs"
step libgit2-install cmake --install "$libgit2_build"

# ---------------------------------------------------------------------------
# libarchive: CMake, the static library target only (its install target
# builds and installs the shared library and a man page too), installed by
# hand. The one local change to Debian's tree first (libarchive_random_rename).
random_c="$libarchive_src/libarchive/archive_random.c"
grep -q '^static void arc4random_buf(void \*, size_t);$' "$random_c" ||
  die "libarchive's $random_c no longer declares its own arc4random_buf: review libarchive_random_rename"
sed -i 's/\barc4random_buf\b/la_arc4random_buf/g' "$random_c"
log "configuring libarchive (${generator[*]:-Unix Makefiles})"
libarchive_build="$work/build-libarchive"
step libarchive-configure cmake -S "$libarchive_src" -B "$libarchive_build" "${generator[@]}" "${cmake_cross[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_C_FLAGS="$common_cflags" \
  -DZLIB_INCLUDE_DIR="$prefix/include" -DZLIB_LIBRARY="$prefix/lib/libz.a" \
  -DOPENSSL_ROOT_DIR=/usr \
  -DLIBLZMA_INCLUDE_DIR="$sys_include" -DLIBLZMA_LIBRARY="$sys_libdir/liblzma.a" \
  "${libarchive_options[@]}"
cache="$libarchive_build/CMakeCache.txt"
grep -q "^OPENSSL_CRYPTO_LIBRARY:FILEPATH=.*libcrypto\.a$" "$cache" ||
  die "libarchive's CMake did not pick a static libcrypto.a (see $cache)"
libarchive_config_h="$libarchive_build/config.h"
for want in HAVE_ZLIB_H HAVE_LZMA_H HAVE_LIBCRYPTO ARCHIVE_CRYPTO_SHA256_OPENSSL HAVE_ICONV HAVE_PTHREAD_H; do
  grep -q "^#define $want\b" "$libarchive_config_h" || die "libarchive configured without $want (see $libarchive_config_h)"
done
for unwanted in HAVE_ARC4RANDOM_BUF HAVE_BZLIB_H HAVE_ZSTD_H HAVE_LZ4_H HAVE_LZO_LZOCONF_H HAVE_BLAKE2_H \
  HAVE_LIBXML_XMLREADER_H HAVE_EXPAT_H HAVE_LIBNETTLE HAVE_LIBMBEDCRYPTO HAVE_LIBACL HAVE_LIBATTR \
  HAVE_LIBPCREPOSIX; do
  if grep -q "^#define $unwanted\b" "$libarchive_config_h"; then
    die "libarchive configured with $unwanted (see $libarchive_config_h)"
  fi
done
log "building libarchive ($jobs jobs)"
step libarchive-build cmake --build "$libarchive_build" --target archive_static --parallel "$jobs"
install -m 644 "$libarchive_build/libarchive/libarchive.a" "$prefix/lib/libarchive.a"
install -m 644 "$libarchive_src/libarchive/archive.h" "$libarchive_src/libarchive/archive_entry.h" "$prefix/include/"
# libarchive's own .pc, its Libs lines replaced below.
install -m 644 "$libarchive_build/build/pkgconfig/libarchive.pc" "$prefix/lib/pkgconfig/libarchive.pc"

# ---------------------------------------------------------------------------
# The consumer's link lines, archives by absolute path, each before what it
# uses: no -L order elsewhere in a link can then pick the machine's shared
# libgit2.so, libcurl.so, libarchive.so or libz.so instead. The archives in
# /usr/lib are Debian's; -pthread for the threads of libgit2, curl's resolver,
# libarchive and OpenSSL (a no-op library on glibc >= 2.34, kept for clarity).
sys_ssl="$sys_libdir/libssl.a $sys_libdir/libcrypto.a"
sys_git="$sys_libdir/libssh2.a $sys_libdir/libhttp_parser.a $sys_libdir/libpcre2-8.a"
libgit2_link="$prefix/lib/libgit2.a $sys_git $sys_ssl $prefix/lib/libz.a -pthread"
curl_link="$prefix/lib/libcurl.a $sys_ssl $prefix/lib/libz.a -pthread"
libarchive_link="$prefix/lib/libarchive.a $sys_libdir/liblzma.a $sys_libdir/libcrypto.a $prefix/lib/libz.a -pthread"
link_archives="$prefix/lib/libgit2.a $sys_git $prefix/lib/libcurl.a $prefix/lib/libarchive.a"
link_archives+=" $sys_libdir/liblzma.a $sys_ssl $prefix/lib/libz.a -pthread"
# The CMake of curl, libgit2 and libarchive write the compiler's implicit
# libraries or names of shared libraries (-lgcc_s, -lrt, -llzma,
# Requires.private: openssl libssh2 ...) into their .pc files; the .pc files
# get exactly the lines above, so that pkg-config (pkg_check_modules) gives a
# correct static link.
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libcurl.a $sys_ssl \${libdir}/libz.a -pthread|" \
  -e 's|^Libs.private:.*|Libs.private:|' "$prefix/lib/pkgconfig/libcurl.pc"
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libgit2.a $sys_git $sys_ssl \${libdir}/libz.a -pthread|" \
  -e 's|^Libs.private:.*|Libs.private:|' -e '/^Requires\(\.private\)\?:/d' "$prefix/lib/pkgconfig/libgit2.pc"
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libarchive.a $sys_libdir/liblzma.a $sys_libdir/libcrypto.a \${libdir}/libz.a -pthread|" \
  -e 's|^Libs.private:.*|Libs.private:|' -e '/^Requires\(\.private\)\?:/d' "$prefix/lib/pkgconfig/libarchive.pc"
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libz.a|" "$prefix/lib/pkgconfig/zlib.pc"

# ---------------------------------------------------------------------------
# Self-check: what the wheel will do with these archives. A shared object
# that calls into libgit2 (a repository, a patch applied and printed, a
# regex, TLS set up), curl (TLS, zlib) and libarchive (.tar.gz and .tar.xz
# written, read with every filter and format, extracted as ascend-setup does)
# must link (every object PIC) with --exclude-libs,ALL as the host modules do,
# need only libraries of the manylinux policy, and no glibc symbol version
# above 2.34; an executable linked the same way must run and report the
# features.
log "self-check: linking a shared object and an executable against the archives"
check="$work/selfcheck"
mkdir -p "$check"
cat >"$check/check.c" <<'EOF'
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <git2.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

int check_curl(void) {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
  const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
  int ok = (v->features & CURL_VERSION_SSL) && (v->features & CURL_VERSION_LIBZ) &&
           v->ssl_version && strncmp(v->ssl_version, "OpenSSL/", 8) == 0 &&
           !v->cainfo && !v->capath;
  CURL *h = curl_easy_init();
  ok = ok && h && curl_easy_setopt(h, CURLOPT_URL, "https://localhost/") == CURLE_OK &&
       curl_easy_setopt(h, CURLOPT_PROXY, "http://localhost:1") == CURLE_OK &&
       curl_easy_setopt(h, CURLOPT_RANGE, "0-1") == CURLE_OK &&
       curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "") == CURLE_OK;
  curl_easy_cleanup(h);
  printf("%s (zlib.h %s) ssl=%s cainfo=%s capath=%s: %s\n", curl_version(), ZLIB_VERSION,
         v->ssl_version, v->cainfo ? v->cainfo : "(none)", v->capath ? v->capath : "(none)",
         ok ? "ok" : "FAILED");
  curl_global_cleanup();
  return ok ? 0 : 1;
}

static int count_entry(const git_config_entry *entry, void *count) {
  (void)entry;
  ++*(int *)count;
  return 0;
}

/* dir: an empty directory for a repository; ca_file: a CA bundle or NULL. */
int check_libgit2(const char *dir, const char *ca_file) {
  if (git_libgit2_init() < 1) return 1;
  int major = 0, minor = 0, rev = 0;
  git_libgit2_version(&major, &minor, &rev);
  const int features = git_libgit2_features();
  int ok = (features & GIT_FEATURE_THREADS) && (features & GIT_FEATURE_HTTPS) &&
           (features & GIT_FEATURE_SSH) && (features & GIT_FEATURE_NSEC);
  /* Only the OpenSSL backend takes a cipher list. */
  ok = ok && git_libgit2_opts(GIT_OPT_SET_SSL_CIPHERS, "HIGH:!aNULL") == 0;
  if (ca_file) ok = ok && git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca_file, NULL) == 0;
  /* A repository, a regex over its configuration (PCRE2), a patch parsed,
     applied to the index and printed (diff_print.o, whose stdout reference
     is what Debian's libgit2.a cannot put into a shared object). */
  static const char patch[] = "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n"
                              "+++ b/f\n@@ -0,0 +1 @@\n+x\n";
  git_repository *repo = NULL;
  git_config *config = NULL;
  git_diff *diff = NULL;
  git_buf printed = {0};
  int entries = 0;
  ok = ok && git_repository_init(&repo, dir, 0) == 0 && git_repository_config(&config, repo) == 0 &&
       git_config_foreach_match(config, "^core\\.(bare|filemode)$", count_entry, &entries) == 0 &&
       entries == 2 && git_diff_from_buffer(&diff, patch, sizeof patch - 1) == 0 &&
       git_diff_num_deltas(diff) == 1 && git_apply(repo, diff, GIT_APPLY_LOCATION_INDEX, NULL) == 0 &&
       git_diff_to_buf(&printed, diff, GIT_DIFF_FORMAT_PATCH) == 0 && strstr(printed.ptr, "+x\n");
  const git_error *error = git_error_last();
  printf("libgit2 %d.%d.%d features=%#x ca=%s: %s%s%s\n", major, minor, rev, features,
         ca_file ? ca_file : "(none)", ok ? "ok" : "FAILED", !ok && error ? ": " : "",
         !ok && error ? error->message : "");
  git_buf_dispose(&printed);
  git_diff_free(diff);
  git_config_free(config);
  git_repository_free(repo);
  git_libgit2_shutdown();
  return ok ? 0 : 1;
}
/* A tar.<gz|xz> with one file written into memory, read back with every
   filter and format and extracted into dir with ascend-setup's flags. */
static int archive_roundtrip(const char *dir, int xz) {
  static char data[1 << 16];
  size_t used = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, xz ? "xz.txt" : "gz.txt");
  struct archive *w = archive_write_new();
  struct archive_entry *entry = archive_entry_new();
  archive_entry_set_pathname(entry, path + strlen(dir) + 1);
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_perm(entry, 0644);
  archive_entry_set_size(entry, 3);
  int ok = archive_write_set_format_pax_restricted(w) == ARCHIVE_OK &&
           (xz ? archive_write_add_filter_xz(w) : archive_write_add_filter_gzip(w)) == ARCHIVE_OK &&
           archive_write_open_memory(w, data, sizeof data, &used) == ARCHIVE_OK &&
           archive_write_header(w, entry) == ARCHIVE_OK && archive_write_data(w, "hi\n", 3) == 3;
  ok = archive_write_close(w) == ARCHIVE_OK && ok;
  archive_write_free(w);
  archive_entry_free(entry);
  struct archive *r = archive_read_new();
  struct archive *disk = archive_write_disk_new();
  archive_read_support_filter_all(r);
  archive_read_support_format_all(r);
  archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                           ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                           ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  ok = ok && archive_read_open_memory(r, data, used) == ARCHIVE_OK &&
       archive_read_next_header(r, &entry) == ARCHIVE_OK &&
       archive_filter_code(r, 0) == (xz ? ARCHIVE_FILTER_XZ : ARCHIVE_FILTER_GZIP);
  if (ok) archive_entry_set_pathname(entry, path);
  ok = ok && archive_write_header(disk, entry) == ARCHIVE_OK;
  const void *block;
  size_t size;
  la_int64_t offset;
  int rc = ARCHIVE_FATAL;
  while (ok && (rc = archive_read_data_block(r, &block, &size, &offset)) == ARCHIVE_OK) {
    ok = archive_write_data_block(disk, block, size, offset) == ARCHIVE_OK;
  }
  ok = ok && rc == ARCHIVE_EOF && archive_write_finish_entry(disk) == ARCHIVE_OK;
  if (!ok) printf("libarchive (%s): %s / %s\n", xz ? "xz" : "gzip", archive_error_string(r),
                  archive_error_string(disk));
  archive_read_free(r);
  archive_write_free(disk);
  FILE *f = fopen(path, "r");
  char back[4] = {0};
  ok = ok && f && fread(back, 1, 3, f) == 3 && strcmp(back, "hi\n") == 0;
  if (f) fclose(f);
  return ok;
}

int check_libarchive(const char *dir) {
  int ok = archive_roundtrip(dir, 0) && archive_roundtrip(dir, 1);
  printf("%s: %s\n", archive_version_details(), ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
#ifdef MAIN
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  return check_libgit2(argv[1], argc > 3 ? argv[3] : NULL) | check_curl() | check_libarchive(argv[2]);
}
#endif
EOF
# shellcheck disable=SC2086 # link_archives is a list of words
step selfcheck-shared "${cc[@]}" -shared -fPIC -O2 -I"$prefix/include" -o "$check/check.so" "$check/check.c" \
  -Wl,--no-undefined -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $link_archives
# shellcheck disable=SC2086
step selfcheck-exe "${cc[@]}" -DMAIN -O2 -I"$prefix/include" -o "$check/check" "$check/check.c" $link_archives
# The loader too (aarch64's libraries name it for TLS): the policy allows it.
allowed_needed="libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libgcc_s.so.1"
allowed_needed+=" ld-linux-x86-64.so.2 ld-linux-aarch64.so.1"
for elf in "$check/check.so" "$check/check"; do
  for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case " $allowed_needed " in
    *" $lib "*) ;;
    *) die "$elf needs $lib, which the manylinux policy does not allow" ;;
    esac
  done
  newest=$("$objdump" -T "$elf" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
  if [ -n "$newest" ] && [ "$(printf '%s\n2.34\n' "$newest" | sort -V | tail -n 1)" != 2.34 ]; then
    die "$elf needs GLIBC_$newest (above 2.34): $("$objdump" -T "$elf" | grep "GLIBC_$newest" | awk '{print $NF}' | tr '\n' ' ')"
  fi
done
if command -v pkg-config >/dev/null; then
  for pc in "libcurl:$curl_link" "libgit2:$libgit2_link" "libarchive:$libarchive_link"; do
    pc_libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs "${pc%%:*}" | sed "s/ *$//")
    [ "$pc_libs" = "${pc#*:}" ] || die "${pc%%:*}.pc gives '$pc_libs', not '${pc#*:}'"
  done
fi
# The system's CA bundle where this machine has one, as ascend-setup passes it.
ca_file=
for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
  if [ -r "$f" ]; then
    ca_file=$f
    break
  fi
done
mkdir -p "$check/repo" "$check/extracted"
# shellcheck disable=SC2086 # no CA file: no argument
"${run_target[@]}" "$check/check" "$check/repo" "$check/extracted" $ca_file >"$logs/selfcheck-run.log" 2>&1 || {
  cat "$logs/selfcheck-run.log" >&2
  die "the self-check executable failed"
}
log "self-check: $(cat "$logs/selfcheck-run.log")"

# ---------------------------------------------------------------------------
# The stamp, last, through a rename: it exists only for a finished build.
{
  printf '# Written by scripts/build-static-deps.sh when the build finished; delete to rebuild.\n'
  printf 'libgit2-source: libgit2 %s\n' "$libgit2_version"
  printf 'curl-source: curl %s\n' "$curl_version"
  printf 'curl-reverted-patches: %s\n' "${reverted[*]:-(none)}"
  printf 'libarchive-source: libarchive %s\n' "$libarchive_version"
  printf 'zlib-source: zlib %s\n' "$zlib_version"
  printf 'libgit2-newest: libgit2 %s\n' "${libgit2_newest:-$libgit2_version}"
  printf 'curl-newest: curl %s\n' "${curl_newest:-$curl_version}"
  printf 'libarchive-newest: libarchive %s\n' "${libarchive_newest:-$libarchive_version}"
  printf 'zlib-newest: zlib %s\n' "${zlib_newest:-$zlib_version}"
  for dev in libssl-dev libssh2-1-dev libhttp-parser-dev libpcre2-dev liblzma-dev; do
    printf 'system-archives: %s\n' "$(dpkg-query "${dpkg_admin[@]}" -W -f='${Package} ${Version}' "$dev" 2>/dev/null || echo "$dev unknown")"
  done
  printf 'link: %s\n' "$link_archives"
  printf 'link-libgit2: %s\n' "$libgit2_link"
  printf 'link-libcurl: %s\n' "$curl_link"
  printf 'link-libarchive: %s\n' "$libarchive_link"
  recipe
} >"$stamp.tmp"
# versions.json from the stamp's lines; the stamp, the mark of a finished
# build, goes in place last.
write_versions "$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
if [ "${STATIC_DEPS_KEEP_WORK:-0}" != 1 ]; then
  rm -rf "$work"
fi
log "done in $(($(date +%s) - start)) s: $prefix/lib/{libgit2,libcurl,libarchive,libz}.a"
log "link with (all of them): $link_archives"
