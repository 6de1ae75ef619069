// bdist_wheel's packing done natively, for the duration of one
// BuildWheel.run():
//   - WheelFile, as the bdist_wheel module that runs finds it (the module of
//     each class of the command's MRO that has one: wheel.bdist_wheel with
//     setuptools < 70.1, setuptools.command.bdist_wheel after, and
//     wheel.wheelfile for a lazy import), becomes a factory whose write mode
//     gives an object whose write_files() is base/wheel/wheel_writer.hpp's
//     write_wheel() (read mode: the original class);
//   - distutils' file_util.copy_file makes hard links for copies into the
//     bdist directory (install_lib's copy_tree: build/lib -> bdist dir), which
//     is read by the writer and removed afterwards, never written through:
//     the target is unlinked first, and a copy whose mode or times would
//     differ from the source's stays a copy.
// Everything is put back when the object goes, however run() ends.
#pragma once

#include "base/layer/profile.hpp"

#include <pybind11/pybind11.h>

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

namespace ascend_setup {

// SOURCE_DATE_EPOCH through the registry; Error for a value that is not a
// whole number (the wheel package's int() would raise).
std::optional<int64_t> source_date_epoch();

// The wheel writer's deflate threads: the CPUs the compiles are sized by
// (base/jobs/job_limits.hpp: the affinity mask cut by the cgroup's CPU
// quota), said on the debug log.
unsigned packing_threads();

class NativePacking {
 public:
  // `stored`: write the entries stored (not deflated): the wheel is repaired
  // and compressed afterwards.
  NativePacking(const pybind11::object& command, bool stored,
                const std::filesystem::path& tree_root);
  NativePacking(const NativePacking&) = delete;
  NativePacking& operator=(const NativePacking&) = delete;
  ~NativePacking();

 private:
  std::vector<std::pair<pybind11::object, pybind11::object>> swapped_;  // module, WheelFile
  std::vector<std::pair<pybind11::object, pybind11::object>> copies_;   // module, copy_file
};

}  // namespace ascend_setup
