#include "fuzz_support.hpp"

#include "base/tree/file_lock.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace fs = std::filesystem;

namespace fuzz {

void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void escaped(const char* type, const char* what) {
  fail(std::string("an exception other than Error left the parser: ") + type + ": " + what);
}

namespace {

// The parsers' log lines (a warning per refused wheel, ...) would be most of
// a run's time and its log's size.
[[maybe_unused]] const bool quiet = [] {
  spdlog::set_level(spdlog::level::off);
  return true;
}();

void remove_scratch() {
  std::error_code ignored;
  fs::remove_all(scratch(), ignored);
}

}  // namespace

const fs::path& scratch() {
  static const fs::path path = [] {
    const char* tmp = std::getenv("TMPDIR");
    fs::path base = tmp != nullptr && *tmp != '\0' ? fs::path(tmp)
                    : fs::is_directory("/dev/shm") ? fs::path("/dev/shm")
                                                   : fs::temp_directory_path();
    fs::path dir = base / ("ascend-setup-fuzz-" + std::to_string(::getpid()));
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    fs::create_directories(dir);
    std::atexit(remove_scratch);
    return dir;
  }();
  return path;
}

const ascend_setup::HeldLock& writer_lock() {
  static const ascend_setup::FileLock lock(scratch() / "writer.lock", "fuzzing");
  return lock;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path dir = scratch() / name;
  std::error_code ec;
  // Entries the target left unwritable are made removable first.
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(dir, ec);
  if (ec) {
    fail("cannot empty " + dir.string() + ": " + ec.message());
  }
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    fail("cannot write " + path.string());
  }
}

std::vector<std::string> fields(std::string_view input, char separator, std::size_t count) {
  std::vector<std::string> result;
  while (result.size() + 1 < count) {
    const auto at = input.find(separator);
    if (at == std::string_view::npos) {
      break;
    }
    result.emplace_back(input.substr(0, at));
    input.remove_prefix(at + 1);
  }
  result.emplace_back(input);
  result.resize(count);
  return result;
}

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace fuzz
