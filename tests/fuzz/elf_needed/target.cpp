// An interpreter's executable, read for the shared libraries it names
// (DT_NEEDED), which decides how the launcher starts the host. Invariants:
// nothing throws; at most 1024 names, none holding a NUL or longer than 4096
// bytes; a successful read stays inside the image (the image with bytes
// appended reads the same); the file read through its mapping reads as the
// bytes do; is_elf_file says whether the bytes start with the ELF magic.
#include "base/util/elf_file.hpp"
#include "fuzz_support.hpp"

#include <elf.h>

#include <cstring>

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view image = fuzz::as_text(data, size);
  std::optional<std::vector<std::string>> names;
  FUZZ_CHECK(fuzz::accepts([&] { names = elf_needed(image); }), "elf_needed threw");
  if (names) {
    FUZZ_CHECK(names->size() <= 1024, std::to_string(names->size()) + " names");
    for (const auto& name : *names) {
      FUZZ_CHECK(name.find('\0') == std::string::npos && name.size() <= 4096,
                 "a name of " + std::to_string(name.size()) + " bytes");
    }
    FUZZ_CHECK(elf_needed(std::string(image) + std::string(64, '\x7f')) == names,
               "bytes appended after the image changed what it names");
  }
  const std::filesystem::path file = fuzz::scratch() / "executable";
  fuzz::write_file(file, image);
  FUZZ_CHECK(elf_needed_of_file(file) == (size == 0 ? std::nullopt : names),
             "the mapped file reads otherwise than its bytes");
  FUZZ_CHECK(is_elf_file(file) == (size >= SELFMAG && std::memcmp(data, ELFMAG, SELFMAG) == 0),
             "is_elf_file disagrees with the magic");
  return 0;
}
