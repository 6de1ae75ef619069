#include "base/wheel/parallel_deflate.hpp"

#include "base/process/stop_signals.hpp"
#include "base/util/digest.hpp"
#include "base/util/error.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>

namespace ascend_setup {

namespace {

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

libdeflate_compressor* compressor_for(int level) {
  thread_local std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor;
  thread_local int compressor_level = -1;
  if (!compressor || compressor_level != level) {
    compressor.reset(libdeflate_alloc_compressor(level));
    compressor_level = level;
    if (!compressor) {
      throw Error("libdeflate cannot make a compressor of level " + std::to_string(level),
                  ErrorKind::internal);
    }
  }
  return compressor.get();
}

// Clears the final-block bit of the stream's last block and appends an empty
// stored block, so that another stream can follow at the next byte.
void make_joinable(std::string& stream) {
  z_stream inflater{};
  if (inflateInit2(&inflater, -15) != Z_OK) {
    throw Error("zlib's inflateInit2 failed", ErrorKind::internal);
  }
  inflater.next_in = reinterpret_cast<Bytef*>(stream.data());
  inflater.avail_in = static_cast<uInt>(stream.size());
  unsigned char scratch[1 << 16];
  uint64_t last_header_bit = 0;
  uint64_t end_bit = 0;
  bool ended = false;
  // Each round ends at a block boundary or a full scratch buffer: far fewer
  // rounds than input bytes.
  for (size_t rounds = 0;; ++rounds) {
    if (rounds > stream.size() + 16) {
      inflateEnd(&inflater);
      throw Error("libdeflate's output does not end (zlib made no progress)", ErrorKind::internal);
    }
    inflater.next_out = scratch;
    inflater.avail_out = sizeof scratch;
    const int result = inflate(&inflater, Z_BLOCK);
    if (result == Z_STREAM_END) {
      break;
    }
    if ((result != Z_OK && result != Z_BUF_ERROR) ||
        (result == Z_BUF_ERROR && inflater.avail_in == 0)) {
      inflateEnd(&inflater);
      throw Error("libdeflate's output does not inflate (zlib: " + std::to_string(result) + ")",
                  ErrorKind::internal);
    }
    if ((inflater.data_type & 128) != 0) {  // stopped before a block header
      const uint64_t bit = uint64_t{inflater.total_in} * 8 - (inflater.data_type & 7);
      if ((inflater.data_type & 64) != 0) {  // ... after the final block
        end_bit = bit;
        ended = true;
      } else {
        last_header_bit = bit;
      }
    }
  }
  inflateEnd(&inflater);
  if (!ended || (end_bit + 7) / 8 != stream.size() ||
      (static_cast<unsigned char>(stream[last_header_bit / 8]) >> (last_header_bit % 8) & 1) == 0) {
    throw Error("libdeflate's output has an unexpected block layout", ErrorKind::internal);
  }
  stream[last_header_bit / 8] = static_cast<char>(
      static_cast<unsigned char>(stream[last_header_bit / 8]) & ~(1u << (last_header_bit % 8)));
  const unsigned used = end_bit % 8;  // bits of the last byte in use, 0: all 8
  if (used != 0) {
    stream.back() =
        static_cast<char>(static_cast<unsigned char>(stream.back()) & ((1u << used) - 1));
  }
  // The stored block's 3 header bits (all zero) fit in the padding when at
  // least 3 bits are free, else they take one more byte; then LEN, NLEN.
  if (used == 0 || 8 - used < 3) {
    stream += '\0';
  }
  stream.append("\x00\x00\xff\xff", 4);
}

}  // namespace

std::string deflate_chunk(std::string_view input, bool last, int level) {
  libdeflate_compressor* compressor = compressor_for(level);
  std::string output(libdeflate_deflate_compress_bound(compressor, input.size()) + 8, '\0');
  const size_t n = libdeflate_deflate_compress(compressor, input.data(), input.size(),
                                               output.data(), output.size());
  if (n == 0) {
    throw Error(
        "libdeflate could not compress a chunk of " + std::to_string(input.size()) + " bytes",
        ErrorKind::internal);
  }
  output.resize(n);
  if (!last) {
    make_joinable(output);
  }
  return output;
}

ParallelDeflater::ParallelDeflater(unsigned threads, int level) : level_(level) {
  threads = std::max(1u, threads);
  for (unsigned i = 0; i < threads; ++i) {
    workers_.emplace_back([this] { work(); });
  }
}

ParallelDeflater::~ParallelDeflater() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) {
    worker.join();
  }
}

void ParallelDeflater::work() {
  for (;;) {
    std::shared_ptr<Task> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) {
        return;
      }
      task = queue_.front();
      queue_.pop_front();
    }
    std::string output;
    std::string input_digest;
    std::string output_digest;
    std::exception_ptr error;
    try {
      if (task->job) {
        task->job();
      } else {
        output = deflate_chunk(task->input, task->last, level_);
        input_digest = Sha256().update(task->input).digest();
        output_digest = Sha256().update(output).digest();
      }
    } catch (...) {
      error = std::current_exception();  // rethrown by the caller, its kind kept
    }
    {
      std::lock_guard lock(mutex_);
      task->output = std::move(output);
      task->input_digest = std::move(input_digest);
      task->output_digest = std::move(output_digest);
      task->error = std::move(error);
      task->job = nullptr;
      task->input.clear();
      task->input.shrink_to_fit();
      task->done = true;
    }
    finished_.notify_all();
  }
}

uint64_t ParallelDeflater::deflate(uint64_t size, const std::function<std::string(size_t)>& read,
                                   const std::function<void(std::string_view)>& on_input,
                                   const std::function<void(std::string_view)>& sink,
                                   std::vector<ChunkDigest>& chunks) {
  std::deque<std::shared_ptr<Task>> in_flight;
  const size_t most = 2 * workers_.size();
  uint64_t compressed = 0;
  const auto drain_one = [&] {
    std::shared_ptr<Task> task = in_flight.front();
    in_flight.pop_front();
    {
      std::unique_lock lock(mutex_);
      finished_.wait(lock, [&] { return task->done; });
    }
    if (task->error) {
      std::rethrow_exception(task->error);
    }
    compressed += task->output.size();
    chunks.push_back({task->output.size(), task->input_digest, task->output_digest});
    sink(task->output);
  };
  // Drops queued work on the way out (a stop, a failed write), waits for the rest.
  struct Abandon {
    ParallelDeflater& self;
    std::deque<std::shared_ptr<Task>>& tasks;
    ~Abandon() { self.abandon(tasks); }
  } abandon{*this, in_flight};

  uint64_t done = 0;
  do {
    throw_if_stopped();
    const size_t length = static_cast<size_t>(std::min<uint64_t>(deflate_chunk_size, size - done));
    auto task = std::make_shared<Task>();
    task->input = read(length);
    done += length;
    task->last = done == size;
    on_input(task->input);
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(task);
    }
    wake_.notify_one();
    in_flight.push_back(task);
    while (in_flight.size() >= most || (task->last && !in_flight.empty())) {
      drain_one();
    }
  } while (done < size);
  return compressed;
}

void ParallelDeflater::abandon(const std::deque<std::shared_ptr<Task>>& tasks) {
  std::unique_lock lock(mutex_);
  for (const auto& task : tasks) {
    const auto queued = std::find(queue_.begin(), queue_.end(), task);
    if (queued != queue_.end()) {
      queue_.erase(queued);
      task->done = true;
    }
  }
  for (const auto& task : tasks) {
    finished_.wait(lock, [&] { return task->done; });
  }
}

void ParallelDeflater::run(std::vector<std::function<void()>> jobs) {
  std::deque<std::shared_ptr<Task>> tasks;
  for (auto& job : jobs) {
    auto task = std::make_shared<Task>();
    task->job = std::move(job);
    tasks.push_back(std::move(task));
  }
  {
    std::lock_guard lock(mutex_);
    queue_.insert(queue_.end(), tasks.begin(), tasks.end());
  }
  wake_.notify_all();
  // Waits one task at a time, so that a stop is seen while they run.
  for (const auto& task : tasks) {
    std::unique_lock lock(mutex_);
    while (!finished_.wait_for(lock, std::chrono::milliseconds(100), [&] { return task->done; })) {
      if (stop_signal() != 0) {
        lock.unlock();
        abandon(tasks);
        throw_if_stopped();
      }
    }
  }
  for (const auto& task : tasks) {
    if (task->error) {
      std::rethrow_exception(task->error);
    }
  }
}

}  // namespace ascend_setup
