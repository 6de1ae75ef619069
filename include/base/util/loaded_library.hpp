// A shared library loaded when a run first needs it rather than named in the
// program's dynamic section: every start pays the dynamic loader for each
// library named there and for each of its own dependencies (libcurl's and
// libarchive's are ~35 of Debian's shared libraries), though most runs
// (--dump-kwargs, a no-change rebuild) never call them.
//
// A library's functions are listed once, as an X-macro, and become the
// members of a table of pointers typed by the library's own declarations:
//
//   #define MY_LIBZ_FUNCTIONS(X) X(inflateInit_) X(inflate)
//   struct Libz { MY_LIBZ_FUNCTIONS(ASCEND_SETUP_LIBRARY_MEMBER) };
//
// Filled either from a LoadedLibrary (dlopen by its SONAME) or, where the
// library is linked in (the portable build), from the functions' own
// addresses: the call sites are the same either way.
#pragma once

#include <string>

#define ASCEND_SETUP_LIBRARY_MEMBER(name) decltype(&::name) name = nullptr;

namespace ascend_setup {

// Never unloaded: the tables built from it live as long as the process, and
// libcurl's global state is not meant to go before it.
class LoadedLibrary {
 public:
  // Loads `soname` (RTLD_NOW | RTLD_LOCAL: every symbol it needs resolved
  // now, none of its symbols visible to later loads). Throws Error (local
  // I/O: this machine lacks the library) naming it, what the dynamic loader
  // said, and `package`, what installs it.
  LoadedLibrary(std::string soname, const std::string& package);
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  // The function `name` of the library, typed as the caller's declaration
  // says it is. Throws Error (local I/O) when the library has no such symbol
  // (an older version than the one built against).
  template <typename Pointer>
  void function(Pointer& pointer, const char* name) const {
    pointer = reinterpret_cast<Pointer>(symbol(name));
  }

 private:
  void* symbol(const char* name) const;

  std::string soname_;
  void* handle_ = nullptr;
};

}  // namespace ascend_setup
