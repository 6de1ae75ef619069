// libcurl and libarchive as the downloader calls them: tables of their
// functions (util/loaded_library.hpp), built on first use. Where they are
// linked in (the portable build) a table holds the functions' own addresses;
// where the system's shared libraries are used, the build names their
// SONAMEs (ASCEND_SETUP_LIBCURL_SONAME, ASCEND_SETUP_LIBARCHIVE_SONAME) and
// the first download or unpack loads them, so that a run that fetches
// nothing never loads them or their ~35 dependencies.
#pragma once

#include "base/util/loaded_library.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>

// The functions called, one a line.
// clang-format off
#define ASCEND_SETUP_LIBCURL_FUNCTIONS(X) \
  X(curl_global_init)                     \
  X(curl_easy_init)                       \
  X(curl_easy_cleanup)                    \
  X(curl_easy_setopt)                     \
  X(curl_easy_getinfo)                    \
  X(curl_easy_strerror)                   \
  X(curl_slist_append)                    \
  X(curl_slist_free_all)                  \
  X(curl_multi_init)                      \
  X(curl_multi_cleanup)                   \
  X(curl_multi_setopt)                    \
  X(curl_multi_add_handle)                \
  X(curl_multi_remove_handle)             \
  X(curl_multi_perform)                   \
  X(curl_multi_poll)                      \
  X(curl_multi_info_read)

#define ASCEND_SETUP_LIBARCHIVE_FUNCTIONS(X) \
  X(archive_read_new)                        \
  X(archive_read_free)                       \
  X(archive_read_support_filter_all)         \
  X(archive_read_support_format_all)         \
  X(archive_read_open_filename)              \
  X(archive_read_next_header)                \
  X(archive_read_data_block)                 \
  X(archive_write_disk_new)                  \
  X(archive_write_disk_set_options)          \
  X(archive_write_header)                    \
  X(archive_write_data_block)                \
  X(archive_write_finish_entry)              \
  X(archive_write_close)                     \
  X(archive_write_free)                      \
  X(archive_error_string)                    \
  X(archive_errno)                           \
  X(archive_entry_pathname)                  \
  X(archive_entry_set_pathname)              \
  X(archive_entry_hardlink)                  \
  X(archive_entry_set_hardlink)              \
  X(archive_entry_symlink)                   \
  X(archive_entry_filetype)                  \
  X(archive_entry_perm)                      \
  X(archive_entry_set_perm)                  \
  X(archive_entry_size)
// clang-format on

namespace ascend_setup {

struct Libcurl {
  ASCEND_SETUP_LIBCURL_FUNCTIONS(ASCEND_SETUP_LIBRARY_MEMBER)
};

struct Libarchive {
  ASCEND_SETUP_LIBARCHIVE_FUNCTIONS(ASCEND_SETUP_LIBRARY_MEMBER)
};

// The tables; the first call loads the library where it is not linked in,
// and throws Error (local I/O) naming it when it cannot be loaded.
const Libcurl& libcurl();
const Libarchive& libarchive();

}  // namespace ascend_setup
