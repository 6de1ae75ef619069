// Raw DEFLATE of a byte range of a file on the threads the caller gives
// (the CPUs the build has: base/jobs/job_limits.hpp's figure), streamed: the range is
// read in 1 MiB chunks, each compressed on its own by libdeflate (whole-
// buffer, its ratio at level 6 is zlib's -6 or better), and the chunks are
// joined into one stream: every chunk but the last has its final-block bit
// cleared and ends in an empty stored block, which byte-aligns it (the
// position of the last block header and of the end are found by running
// zlib's inflate over the chunk with Z_BLOCK, which also checks it). At most
// 2 x threads chunks are in memory at once. The output goes to the sink in
// order; every input chunk is also handed, in order, to `on_input` (hashes,
// CRC), and each chunk's digests (its content's SHA-256 and its output's,
// computed on the worker: wheel_digests.hpp) are appended to `chunks`. A stop
// signal ends the work between chunks (throw_if_stopped).
// The same workers run other work too (run(): the checks of a previous
// wheel's entries), so everything the writer spreads runs on the threads the
// caller gave.
#pragma once

#include "base/wheel/wheel_digests.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ascend_setup {

inline constexpr size_t deflate_chunk_size = size_t{1} << 20;

// One chunk compressed on its own; with `last` false, made joinable.
std::string deflate_chunk(std::string_view input, bool last, int level);

class ParallelDeflater {
 public:
  // `threads` workers (0 counts as 1): the caller's CPU figure, never the
  // host's core count (a pod sees all of the host's cores).
  ParallelDeflater(unsigned threads, int level);
  ParallelDeflater(const ParallelDeflater&) = delete;
  ParallelDeflater& operator=(const ParallelDeflater&) = delete;
  ~ParallelDeflater();

  // Compresses `size` bytes given by `read(n)` (the next n bytes, exactly);
  // returns the compressed size.
  uint64_t deflate(uint64_t size, const std::function<std::string(size_t)>& read,
                   const std::function<void(std::string_view)>& on_input,
                   const std::function<void(std::string_view)>& sink,
                   std::vector<ChunkDigest>& chunks);

  // Runs every job on the workers and returns when all have ended. A job
  // that throws does not stop the others; the first one's exception is
  // thrown after, as it was (an Error keeps its kind). A stop signal drops
  // the jobs not yet started (throw_if_stopped).
  void run(std::vector<std::function<void()>> jobs);

  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

 private:
  struct Task {
    std::function<void()> job;  // run() work, else a chunk to compress
    std::string input;
    bool last = false;
    std::string output;
    std::string input_digest;
    std::string output_digest;
    std::exception_ptr error;  // what the work threw
    bool done = false;
  };
  // Waits for `tasks`, dropping those still queued.
  void abandon(const std::deque<std::shared_ptr<Task>>& tasks);
  void work();

  int level_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<std::shared_ptr<Task>> queue_;
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ascend_setup
