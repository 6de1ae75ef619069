#include "base/util/elf_file.hpp"

#include "base/util/unique_fd.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace ascend_setup {

namespace {

// A T copied from `image` at `offset`, or nullopt when it does not fit.
template <typename T>
std::optional<T> read_at(std::string_view image, uint64_t offset) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) {
    return std::nullopt;
  }
  T value;
  std::memcpy(&value, image.data() + offset, sizeof(T));
  return value;
}

// Bounds no real file comes near (a few dozen libraries, names of a few
// dozen bytes), so that a crafted file cannot make the names take memory
// quadratic in its size.
constexpr size_t max_needed = 1024;
constexpr size_t max_name = 4096;

constexpr unsigned char native_byte_order =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

// The file offset of virtual address `address`, through the loaded segment
// whose file bytes hold it.
std::optional<uint64_t> file_offset(const std::vector<Elf64_Phdr>& loads, uint64_t address) {
  for (const auto& load : loads) {
    if (address >= load.p_vaddr && address - load.p_vaddr < load.p_filesz) {
      const uint64_t into = address - load.p_vaddr;
      if (load.p_offset > UINT64_MAX - into) {
        return std::nullopt;
      }
      return load.p_offset + into;
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_elf_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[SELFMAG] = {};
  in.read(magic, sizeof magic);
  return in && std::memcmp(magic, ELFMAG, SELFMAG) == 0;
}

std::optional<std::vector<std::string>> elf_needed(std::string_view image) {
  const auto header = read_at<Elf64_Ehdr>(image, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != native_byte_order ||
      header->e_phentsize != sizeof(Elf64_Phdr) || header->e_phoff > image.size()) {
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> loads;
  std::optional<Elf64_Phdr> dynamic;
  for (uint64_t i = 0; i < header->e_phnum; ++i) {
    // e_phoff is inside the image and i * 56 < 2^22: no overflow.
    const auto segment = read_at<Elf64_Phdr>(image, header->e_phoff + i * sizeof(Elf64_Phdr));
    if (!segment) {
      return std::nullopt;
    }
    if (segment->p_type == PT_LOAD) {
      loads.push_back(*segment);
    } else if (segment->p_type == PT_DYNAMIC && !dynamic) {
      dynamic = segment;
    }
  }
  if (!dynamic) {
    return std::vector<std::string>{};
  }
  if (dynamic->p_offset > image.size()) {
    return std::nullopt;
  }
  std::vector<uint64_t> needed;
  std::optional<uint64_t> strtab_address;
  uint64_t strtab_size = 0;
  const uint64_t entries = dynamic->p_filesz / sizeof(Elf64_Dyn);
  for (uint64_t i = 0; i < entries; ++i) {
    const auto entry = read_at<Elf64_Dyn>(image, dynamic->p_offset + i * sizeof(Elf64_Dyn));
    if (!entry) {
      return std::nullopt;  // the section runs past the image: i is bounded by its size
    }
    if (entry->d_tag == DT_NULL) {
      break;
    }
    if (entry->d_tag == DT_NEEDED) {
      if (needed.size() == max_needed) {
        return std::nullopt;
      }
      needed.push_back(entry->d_un.d_val);
    } else if (entry->d_tag == DT_STRTAB) {
      strtab_address = entry->d_un.d_ptr;
    } else if (entry->d_tag == DT_STRSZ) {
      strtab_size = entry->d_un.d_val;
    }
  }
  if (needed.empty()) {
    return std::vector<std::string>{};
  }
  const auto strtab_offset = strtab_address ? file_offset(loads, *strtab_address) : std::nullopt;
  if (!strtab_offset || *strtab_offset > image.size()) {
    return std::nullopt;
  }
  const std::string_view strtab = image.substr(*strtab_offset, strtab_size);
  std::vector<std::string> names;
  for (const uint64_t at : needed) {
    const size_t end = at < strtab.size() ? strtab.find('\0', at) : std::string_view::npos;
    if (end == std::string_view::npos || end - at > max_name) {
      return std::nullopt;
    }
    names.emplace_back(strtab.substr(at, end - at));
  }
  return names;
}

std::optional<std::vector<std::string>> elf_needed_of_file(const std::filesystem::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0) {
    return std::nullopt;
  }
  const auto size = static_cast<size_t>(info.st_size);
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (mapped == MAP_FAILED) {
    return std::nullopt;
  }
  auto names = elf_needed(std::string_view(static_cast<const char*>(mapped), size));
  ::munmap(mapped, size);
  return names;
}

}  // namespace ascend_setup
