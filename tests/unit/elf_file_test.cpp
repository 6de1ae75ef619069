#include "base/util/elf_file.hpp"
#include "base/util/whole_file.hpp"
#include "test_support.hpp"

#include <elf.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <sstream>

namespace {

using ascend_setup::elf_needed;
using ascend_setup::elf_needed_of_file;
using ascend_setup::is_elf_file;
using namespace test_support;

// What binutils' readelf says the file needs, in its order: the oracle.
std::vector<std::string> readelf_needed(const fs::path& file) {
  std::istringstream lines(must_run({"readelf", "-d", "--wide", file.string()}, "/"));
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) {
    const auto open = line.find("(NEEDED)");
    const auto start = line.find('[', open);
    if (open != std::string::npos && start != std::string::npos) {
      names.push_back(line.substr(start + 1, line.rfind(']') - start - 1));
    }
  }
  return names;
}

// Files of every kind the launcher reads or builds: Debian's python3 (the
// interpreter in the executable), this test (which loads libpython), the
// launcher and the host modules (shared objects).
std::vector<fs::path> real_elf_files() {
  std::vector<fs::path> files{fs::canonical(SYSTEM_PYTHON), fs::canonical("/proc/self/exe"),
                              ASCEND_SETUP_BINARY};
  for (const auto& entry : fs::directory_iterator(fs::path(BUILD_DIR) / "libexec/ascend-setup")) {
    if (entry.path().extension() == ".so") {
      files.push_back(entry.path());
    }
  }
  return files;
}

TEST(ElfFile, NeededLibrariesAreWhatReadelfSays) {
  for (const auto& file : real_elf_files()) {
    SCOPED_TRACE(file.string());
    const auto needed = elf_needed_of_file(file);
    ASSERT_TRUE(needed.has_value());
    EXPECT_EQ(*needed, readelf_needed(file));
    EXPECT_FALSE(needed->empty());
    EXPECT_TRUE(is_elf_file(file));
    // The same bytes read whole give the same names.
    EXPECT_EQ(elf_needed(*ascend_setup::read_whole_file(file)), needed);
  }
  // Debian's python3 carries the interpreter; this test loads libpython.
  const auto python = elf_needed_of_file(fs::canonical(SYSTEM_PYTHON));
  const auto self = elf_needed_of_file("/proc/self/exe");
  const auto is_libpython = [](const std::string& name) { return name.starts_with("libpython"); };
  EXPECT_TRUE(std::none_of(python->begin(), python->end(), is_libpython));
  EXPECT_TRUE(std::any_of(self->begin(), self->end(), is_libpython));
}

// A successful read stays inside the file: bytes after it change nothing.
TEST(ElfFile, BytesAppendedChangeNothing) {
  const std::string image = *ascend_setup::read_whole_file(ASCEND_SETUP_BINARY);
  EXPECT_EQ(elf_needed(image + std::string(4096, '\xff')), elf_needed(image));
}

TEST(ElfFile, TruncatedOrForeignImagesAreRefused) {
  const std::string image = *ascend_setup::read_whole_file(ASCEND_SETUP_BINARY);
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  size_t dynamic_at = 0;
  for (size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, image.data() + header.e_phoff + i * sizeof segment, sizeof segment);
    if (segment.p_type == PT_DYNAMIC) {
      dynamic_at = segment.p_offset;
    }
  }
  ASSERT_NE(dynamic_at, 0u);
  // Cut inside the header, the program headers, the first dynamic entry.
  for (const size_t size : {size_t{0}, size_t{4}, sizeof header - 1, sizeof header,
                            size_t(header.e_phoff + header.e_phnum * sizeof(Elf64_Phdr) - 1),
                            dynamic_at + sizeof(Elf64_Dyn) - 1}) {
    SCOPED_TRACE(size);
    EXPECT_EQ(elf_needed(image.substr(0, size)), std::nullopt);
  }
  // Another class, another byte order, another program header size.
  for (const auto& [at, value] :
       std::vector<std::pair<size_t, char>>{{EI_CLASS, ELFCLASS32},
                                            {EI_DATA, ELFDATA2MSB},
                                            {offsetof(Elf64_Ehdr, e_phentsize), 32},
                                            {0, 'x'}}) {
    std::string changed = image;
    changed[at] = value;
    EXPECT_EQ(elf_needed(changed), std::nullopt) << "byte " << at;
  }
  EXPECT_EQ(elf_needed("#!/bin/sh\nexec python3 \"$@\"\n"), std::nullopt);
}

TEST(ElfFile, AnythingButARegularElfFileIsNoAnswer) {
  TempDir dir;
  write_file(dir.path() / "script", "#!/bin/sh\nexit 0\n");
  write_file(dir.path() / "empty", "");
  for (const auto& file :
       {dir.path() / "script", dir.path() / "empty", dir.path() / "missing", dir.path()}) {
    EXPECT_EQ(elf_needed_of_file(file), std::nullopt) << file;
  }
  EXPECT_FALSE(is_elf_file(dir.path() / "script"));
  EXPECT_FALSE(is_elf_file(dir.path() / "missing"));
}

}  // namespace
