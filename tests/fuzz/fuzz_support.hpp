// What every fuzz target shares (tests/fuzz/README.md): the invariant check
// that stops the run with a report, the rule that only ascend-setup's Error
// may leave a parser of outside input, a scratch directory of the process,
// and the input cut into fields.
#pragma once

#include "base/util/held_lock.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

// Stops the process with `what` on stderr (libFuzzer saves the input as a
// crash; the replay fails).
[[noreturn]] void fail(const std::string& what);

#define FUZZ_CHECK(condition, what)                                                            \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      ::fuzz::fail(std::string("invariant broken: ") + #condition + ": " + std::string(what)); \
    }                                                                                          \
  } while (false)

// Runs `parse`: returns true when it returned, false when it threw
// ascend_setup::Error (a refusal of bad input); any other exception is a
// finding (a std::out_of_range from std::stoi, a bad_alloc from a length
// taken from the input, ...) and stops the process naming it.
template <class Parse>
bool accepts(Parse&& parse);

// What `parse` returned, or nullopt when it refused the input with Error
// (any other exception stops the process, as in accepts()).
template <class Parse>
auto parsed(Parse&& parse) -> std::optional<decltype(parse())>;

// A directory of this process, empty at first use (under $TMPDIR, else
// /dev/shm when it exists: the targets that write files run from memory).
const std::filesystem::path& scratch();

// A lock on a file in scratch(), held for the process: the lock a writer
// shows (util/held_lock.hpp; the wheel writer asks for it).
const ascend_setup::HeldLock& writer_lock();

// An empty directory under scratch(), emptied again on each call.
std::filesystem::path fresh_directory(const std::string& name);

void write_file(const std::filesystem::path& path, std::string_view bytes);

// The input as fields separated by `separator` (at most `count`; the last
// holds the rest), so one input gives a target several files or values.
std::vector<std::string> fields(std::string_view input, char separator, std::size_t count);

std::string_view as_text(const std::uint8_t* data, std::size_t size);

// Called by accepts() for an exception that is not an Error.
[[noreturn]] void escaped(const char* type, const char* what);

}  // namespace fuzz

#include "base/util/error.hpp"

#include <exception>
#include <new>
#include <stdexcept>

template <class Parse>
bool fuzz::accepts(Parse&& parse) {
  try {
    parse();
    return true;
  } catch (const ascend_setup::Error&) {
    return false;
  } catch (const std::bad_alloc& e) {
    escaped("std::bad_alloc", e.what());
  } catch (const std::out_of_range& e) {
    escaped("std::out_of_range", e.what());
  } catch (const std::invalid_argument& e) {
    escaped("std::invalid_argument", e.what());
  } catch (const std::exception& e) {
    escaped("std::exception", e.what());
  }
}

template <class Parse>
auto fuzz::parsed(Parse&& parse) -> std::optional<decltype(parse())> {
  std::optional<decltype(parse())> result;
  accepts([&] { result.emplace(parse()); });
  return result;
}
