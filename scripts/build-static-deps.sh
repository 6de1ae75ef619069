#!/usr/bin/env bash
# build-static-deps.sh PREFIX
#
# Builds the static, position-independent libraries that the portable wheel
# (py3-none-manylinux_2_34_x86_64) links into its shared objects, and installs
# them into PREFIX:
#   PREFIX/lib/libcurl.a   curl, Debian 12's source package (Debian's patches),
#                          HTTP and HTTPS (OpenSSL) only, proxies, zlib
#   PREFIX/lib/libz.a      zlib, Debian 12's source package
#   PREFIX/include/{curl/*.h,zlib.h,zconf.h}, PREFIX/lib/pkgconfig/*.pc,
#   PREFIX/lib/cmake/CURL/ (curl's CMake package), PREFIX/bin/curl-config
# OpenSSL is not built: Debian's own libssl.a/libcrypto.a (libssl-dev) are
# already position-independent and need nothing newer than GLIBC_2.34, so the
# consumer links them from /usr/lib/<multiarch>. The exact static link line is
# printed at the end, written into the stamp (link:) and into libcurl.pc.
#
# Why not Debian's binary packages: libcurl4-openssl-dev's libcurl.a needs
# nghttp2, librtmp, libpsl, GSSAPI (Kerberos has no static library in Debian),
# LDAP, zstd, brotli, ... and, like zlib1g-dev's libz.a, is not compiled with
# -fPIC, so neither can go into a shared object.
#
# Idempotent: once PREFIX holds a finished build of the same recipe (the stamp
# file, written last), a run does nothing. An interrupted run leaves no stamp
# and the next run starts over. The machine's apt configuration is never
# changed: the deb-src lists live in PREFIX/.work with private apt options.
#
# Environment (all optional):
#   CURL_DEB_VERSION, ZLIB_DEB_VERSION  pin the Debian source version (e.g.
#       7.88.1-10+deb12u15); default: the newest the archive serves.
#   STATIC_DEPS_KEEP_WORK=1  keep PREFIX/.work (sources, build trees, logs).
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

# ---------------------------------------------------------------------------
# The recipe. Everything that decides what the libraries contain is here and
# is written into the stamp; a change of any of it rebuilds. Bump
# recipe_version when the steps change in a way these lines do not show.
recipe_version=1

# Both libraries go into a shared object: -fPIC. Debian's hardening flags keep
# parity with Debian's own builds; the sections let a --gc-sections link drop
# what the downloader never calls. curl's optimisation level comes from
# CMAKE_BUILD_TYPE=Release (-O3).
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

# The stamp's recipe part: compared line by line with an existing stamp.
recipe() {
  printf 'recipe: %s\n' "$recipe_version"
  printf 'cflags: %s\n' "$common_cflags"
  printf 'zlib-cflags: %s\n' "$zlib_cflags"
  printf 'zlib-configure: --static\n'
  printf 'curl-cmake: %s\n' "${curl_options[@]}"
}

# ---------------------------------------------------------------------------
# Already done? Checked before anything touches the network or the machine.
already_built() {
  [ -f "$stamp" ] && [ -f "$prefix/lib/libcurl.a" ] && [ -f "$prefix/lib/libz.a" ] || return 1
  [ "$(sed -n '/^recipe: /,$p' "$stamp")" = "$(recipe)" ] || return 1
  # A pinned version must be the one built; unpinned, any finished build is.
  if [ -n "${CURL_DEB_VERSION:-}" ]; then
    grep -qxF "curl-source: curl $CURL_DEB_VERSION" "$stamp" || return 1
  fi
  if [ -n "${ZLIB_DEB_VERSION:-}" ]; then
    grep -qxF "zlib-source: zlib $ZLIB_DEB_VERSION" "$stamp" || return 1
  fi
}
if already_built; then
  log "$prefix already holds $(sed -n 's/^curl-source: //p' "$stamp") and $(sed -n 's/^zlib-source: //p' "$stamp") built with this recipe ($stamp): nothing to do"
  exit 0
fi

# Two builds into one PREFIX (two CMake configures sharing a cache) would
# wreck each other's work tree: one waits for the other, then finds it done.
exec 9>"$prefix/.build-static-deps.lock"
if ! flock -n 9; then
  log "another build into $prefix is running; waiting for it (at most 30 min)"
  flock -w 1800 9 || die "$prefix stayed locked for 30 min by another build"
  if already_built; then
    log "the other build finished $prefix: nothing to do"
    exit 0
  fi
fi

start=$(date +%s)
log "building static PIC curl + zlib into $prefix"
# From here PREFIX is being rewritten: a stamp of an earlier build must not
# outlive an interruption of this one.
rm -f "$stamp"

# A fresh work tree: whatever an interrupted run left is not trusted.
rm -rf "$work"
mkdir -p "$logs"

# ---------------------------------------------------------------------------
# Tools. dpkg-dev (dpkg-source, for apt-get source) and libssl-dev (the static
# OpenSSL archives) are installed if missing, as root; nothing else is.
multiarch=$(gcc -print-multiarch 2>/dev/null || true)
[ -n "$multiarch" ] || die "gcc -print-multiarch gave nothing: a Debian gcc is needed"
ssl_dir="/usr/lib/$multiarch"
for tool in cmake make gcc patch flock apt-get apt-cache dpkg-query; do
  command -v "$tool" >/dev/null || die "$tool is missing (install it: apt-get install cmake make gcc patch)"
done
missing=()
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
[ -f "$ssl_dir/libssl.a" ] && [ -f "$ssl_dir/libcrypto.a" ] && [ -f /usr/include/openssl/ssl.h ] ||
  missing+=(libssl-dev)
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

log "fetching Debian's source of curl and zlib"
curl_version=$(fetch_source curl "${CURL_DEB_VERSION:-}")
zlib_version=$(fetch_source zlib "${ZLIB_DEB_VERSION:-}")
curl_src=$(find "$work/src-curl" -mindepth 1 -maxdepth 1 -type d -name 'curl-*' | head -n 1)
zlib_src=$(find "$work/src-zlib" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)
[ -f "$curl_src/CMakeLists.txt" ] || die "no unpacked curl source in $work/src-curl"
[ -f "$zlib_src/configure" ] || die "no unpacked zlib source in $work/src-zlib"
log "curl $curl_version, zlib $zlib_version unpacked"

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
  step zlib-configure env CFLAGS="$zlib_cflags" ./configure --static --prefix="$prefix"
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
step curl-configure cmake -S "$curl_src" -B "$curl_build" "${generator[@]}" \
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
# The consumer's link line, archives by absolute path: no -L order elsewhere
# in a link can then pick the machine's shared libcurl.so or libz.so instead.
# OpenSSL's archives are Debian's (libssl-dev); -pthread for the threaded
# resolver and OpenSSL (a no-op library on glibc >= 2.34, kept for clarity).
link_archives="$prefix/lib/libcurl.a $ssl_dir/libssl.a $ssl_dir/libcrypto.a $prefix/lib/libz.a -pthread"
# curl's CMake writes the compiler's implicit libraries (-lgcc -lgcc_s -lc)
# into libcurl.pc and leaves -pthread out; the .pc files get exactly the line
# above, so that pkg-config (pkg_check_modules) gives a correct static link.
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libcurl.a $ssl_dir/libssl.a $ssl_dir/libcrypto.a \${libdir}/libz.a -pthread|" \
  -e 's|^Libs.private:.*|Libs.private:|' "$prefix/lib/pkgconfig/libcurl.pc"
sed -i -e "s|^Libs:.*|Libs: \${libdir}/libz.a|" "$prefix/lib/pkgconfig/zlib.pc"

# ---------------------------------------------------------------------------
# Self-check: what the wheel will do with these archives. A shared object
# that calls into curl, with TLS and zlib, must link (every object PIC), need
# only libraries of the manylinux policy, and no glibc symbol version above
# 2.34; an executable linked the same way must run and report the features.
log "self-check: linking a shared object and an executable against the archives"
check="$work/selfcheck"
mkdir -p "$check"
cat >"$check/check.c" <<'EOF'
#include <curl/curl.h>
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
#ifdef MAIN
int main(void) { return check_curl(); }
#endif
EOF
# shellcheck disable=SC2086 # link_archives is a list of words
step selfcheck-shared gcc -shared -fPIC -O2 -I"$prefix/include" -o "$check/check.so" "$check/check.c" \
  -Wl,--no-undefined -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $link_archives
# shellcheck disable=SC2086
step selfcheck-exe gcc -DMAIN -O2 -I"$prefix/include" -o "$check/check" "$check/check.c" $link_archives
allowed_needed="libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libgcc_s.so.1"
for elf in "$check/check.so" "$check/check"; do
  for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case " $allowed_needed " in
    *" $lib "*) ;;
    *) die "$elf needs $lib, which the manylinux policy does not allow" ;;
    esac
  done
  newest=$(objdump -T "$elf" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
  if [ -n "$newest" ] && [ "$(printf '%s\n2.34\n' "$newest" | sort -V | tail -n 1)" != 2.34 ]; then
    die "$elf needs GLIBC_$newest (above 2.34): $(objdump -T "$elf" | grep "GLIBC_$newest" | awk '{print $NF}' | tr '\n' ' ')"
  fi
done
if command -v pkg-config >/dev/null; then
  pc_libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs libcurl | sed "s/ *$//")
  [ "$pc_libs" = "$link_archives" ] || die "libcurl.pc gives '$pc_libs', not '$link_archives'"
fi
"$check/check" >"$logs/selfcheck-run.log" 2>&1 || {
  cat "$logs/selfcheck-run.log" >&2
  die "the self-check executable failed"
}
log "self-check: $(cat "$logs/selfcheck-run.log")"

# ---------------------------------------------------------------------------
# The stamp, last, through a rename: it exists only for a finished build.
{
  printf '# Written by scripts/build-static-deps.sh when the build finished; delete to rebuild.\n'
  printf 'curl-source: curl %s\n' "$curl_version"
  printf 'curl-reverted-patches: %s\n' "${reverted[*]:-(none)}"
  printf 'zlib-source: zlib %s\n' "$zlib_version"
  printf 'openssl: %s\n' "$(dpkg-query -W -f='libssl-dev ${Version}' libssl-dev 2>/dev/null || echo unknown)"
  printf 'link: %s\n' "$link_archives"
  recipe
} >"$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
if [ "${STATIC_DEPS_KEEP_WORK:-0}" != 1 ]; then
  rm -rf "$work"
fi
log "done in $(($(date +%s) - start)) s: $prefix/lib/libcurl.a, $prefix/lib/libz.a"
log "link with: $link_archives"
