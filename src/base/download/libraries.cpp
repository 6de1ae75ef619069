#include "base/download/libraries.hpp"

namespace ascend_setup {

namespace {

// Where the library is loaded: by its SONAME, each function looked up.
#define ASCEND_SETUP_LOOK_UP(name) library.function(table.name, #name);
// Where it is linked in: the function's own address.
#define ASCEND_SETUP_ADDRESS_OF(name) table.name = &::name;

Libcurl make_libcurl() {
  Libcurl table;
#ifdef ASCEND_SETUP_LIBCURL_SONAME
  static const LoadedLibrary library(ASCEND_SETUP_LIBCURL_SONAME, "libcurl (Debian: libcurl4)");
  ASCEND_SETUP_LIBCURL_FUNCTIONS(ASCEND_SETUP_LOOK_UP)
#else
  ASCEND_SETUP_LIBCURL_FUNCTIONS(ASCEND_SETUP_ADDRESS_OF)
#endif
  return table;
}

Libarchive make_libarchive() {
  Libarchive table;
#ifdef ASCEND_SETUP_LIBARCHIVE_SONAME
  static const LoadedLibrary library(ASCEND_SETUP_LIBARCHIVE_SONAME,
                                     "libarchive (Debian: libarchive13)");
  ASCEND_SETUP_LIBARCHIVE_FUNCTIONS(ASCEND_SETUP_LOOK_UP)
#else
  ASCEND_SETUP_LIBARCHIVE_FUNCTIONS(ASCEND_SETUP_ADDRESS_OF)
#endif
  return table;
}

#undef ASCEND_SETUP_LOOK_UP
#undef ASCEND_SETUP_ADDRESS_OF

}  // namespace

const Libcurl& libcurl() {
  static const Libcurl table = make_libcurl();
  return table;
}

const Libarchive& libarchive() {
  static const Libarchive table = make_libarchive();
  return table;
}

}  // namespace ascend_setup
