#include "base/util/loaded_library.hpp"

#include "base/util/error.hpp"

#include <dlfcn.h>

namespace ascend_setup {

LoadedLibrary::LoadedLibrary(std::string soname, const std::string& package)
    : soname_(std::move(soname)) {
  handle_ = ::dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* reason = ::dlerror();
    throw Error("cannot load " + soname_ + " (" + (reason != nullptr ? reason : "unknown error") +
                    "): install " + package,
                ErrorKind::local_io);
  }
}

void* LoadedLibrary::symbol(const char* name) const {
  ::dlerror();
  void* address = ::dlsym(handle_, name);
  if (address == nullptr) {
    throw Error(soname_ + " has no " + name +
                    ": it is older than the one ascend-setup was built "
                    "against; install a newer one",
                ErrorKind::local_io);
  }
  return address;
}

}  // namespace ascend_setup
