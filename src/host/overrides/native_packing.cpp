#include "host/overrides/native_packing.hpp"

#include "base/build/build_phases.hpp"
#include "base/build/build_summary.hpp"
#include "base/jobs/job_limits.hpp"
#include "base/layer/environment.hpp"
#include "base/tree/build_lock.hpp"
#include "base/tree/state_paths.hpp"
#include "base/util/error.hpp"
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"
#include "base/wheel/wheel_writer.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <cctype>
#include <chrono>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace ascend_setup {

std::optional<int64_t> source_date_epoch() {
  const auto value = env_value(EnvVar::source_date_epoch, nullptr);
  if (!value) {
    return std::nullopt;
  }
  // As Python's int(): blanks around, a sign, digits with single underscores between.
  std::string text = trim(*value, " \t\n\r\f\v");
  const bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    text.erase(0, 1);
  }
  std::string digits;
  for (size_t at = 0; at < text.size(); ++at) {
    const auto digit = [&](size_t i) {
      return i < text.size() && text[i] >= '0' && text[i] <= '9';
    };
    if (!(text[at] == '_' && at > 0 && digit(at - 1) && digit(at + 1))) {
      digits += text[at];
    }
  }
  const auto number = parse_integer<int64_t>(digits, 0, INT64_MAX);
  if (!number) {
    throw Error("SOURCE_DATE_EPOCH=" + *value + " is not a whole number of seconds",
                ErrorKind::usage);
  }
  return negative ? -*number : *number;
}

unsigned packing_threads() {
  const JobLimits limits = compute_job_limits(machine_view_from_environment());
  const unsigned threads = limits.threads();
  spdlog::debug("wheel: deflating on {} thread{} ({:g} CPUs: {})", threads, threads == 1 ? "" : "s",
                limits.cpus, limits.cpu_source);
  return threads;
}

namespace {

// The type of the write-mode objects, made once per interpreter.
py::object native_wheel_file_type() {
  static py::object* type = nullptr;
  if (type != nullptr) {
    return *type;
  }
  py::dict namespace_;
  namespace_["__module__"] = "ascend_setup";
  namespace_["__qualname__"] = "NativeWheelFile";
  namespace_["__doc__"] = "ascend-setup: WheelFile(path, 'w') written by the native writer";
  py::object made = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
      "NativeWheelFile",
      py::make_tuple(
          py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyBaseObject_Type))),
      namespace_);
  made.attr("write_files") = py::cpp_function(
      [](py::object self, py::object base_dir) {
        WheelWriteOptions options;
        options.wheel = fs::absolute(py::str(self.attr("filename")).cast<std::string>());
        options.base_dir =
            py::str(py::module_::import("os").attr("fspath")(base_dir)).cast<std::string>();
        const int compression = self.attr("compression").cast<int>();
        options.method =
            compression == 0 || self.attr("_stored").cast<bool>() ? zip_stored : zip_deflated;
        options.source_date_epoch = source_date_epoch();
        options.previous = options.wheel;
        if (const auto digests = py::str(self.attr("_digests")).cast<std::string>();
            !digests.empty()) {
          options.digests = digests;
        }
        options.threads = packing_threads();
        // Under the build lock: a partial wheel or digests a killed run left
        // are removed as they are replaced (StagedReplacement).
        const HeldLock& build_lock = held_build_lock();
        WheelWriteStats stats;
        {
          const PhaseScope packing(BuildPhase::pack);
          py::gil_scoped_release released;
          stats = write_wheel(options, build_lock);
        }
        BuildSummary& summary = build_summary();
        summary.any = true;
        summary.entries = stats.entries;
        summary.entries_compressed = stats.compressed;
        summary.entries_reused = stats.reused;
        summary.wheel = options.wheel;
        spdlog::info(
            "wheel {}: {} entries, {} compressed, {} reused from the previous wheel, {} deflate "
            "thread{} ({:.2f} s, {:.2f} s of CPU)",
            options.wheel.filename().string(), stats.entries, stats.compressed, stats.reused,
            stats.threads, stats.threads == 1 ? "" : "s", stats.seconds, stats.cpu_seconds);
        self.attr("_written") = true;
      },
      py::name("write_files"), py::is_method(made));
  made.attr("close") = py::cpp_function([](py::object) {}, py::name("close"), py::is_method(made));
  made.attr("__enter__") = py::cpp_function([](py::object self) { return self; },
                                            py::name("__enter__"), py::is_method(made));
  made.attr("__exit__") = py::cpp_function([](py::object, py::args) { return false; },
                                           py::name("__exit__"), py::is_method(made));
  type = new py::object(made);  // lives as long as the interpreter
  return *type;
}

bool inside(const fs::path& path, const fs::path& directory) {
  const auto rel = path.lexically_relative(directory);
  return !rel.empty() && *rel.begin() != "..";
}

mode_t current_umask() {
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

}  // namespace

NativePacking::NativePacking(const py::object& command, bool stored, const fs::path& tree_root) {
  py::object sys_modules = py::module_::import("sys").attr("modules");
  py::object native_type = native_wheel_file_type();
  std::vector<py::object> modules;
  for (const auto& cls : command.attr("__class__").attr("__mro__")) {
    py::object name = cls.attr("__module__");
    if (sys_modules.contains(name)) {
      modules.push_back(sys_modules[name]);
    }
  }
  for (const char* name : {"wheel.wheelfile", "setuptools._vendor.wheel.wheelfile"}) {
    if (sys_modules.contains(name)) {
      modules.push_back(sys_modules[name]);
    }
  }
  for (const auto& module : modules) {
    if (!py::hasattr(module, "WheelFile")) {
      continue;
    }
    py::object original = module.attr("WheelFile");
    if (!py::hasattr(original, "write_files") ||
        std::any_of(swapped_.begin(), swapped_.end(),
                    [&](const auto& done) { return done.first.is(module); })) {
      continue;
    }
    module.attr("WheelFile") = py::cpp_function(
        [original, native_type, stored, tree_root](py::object file, py::object mode,
                                                   py::object compression) {
          if (py::str(mode).cast<std::string>() != "w") {
            return original(file, mode, compression);
          }
          py::object made = native_type();
          made.attr("filename") = py::module_::import("os").attr("fspath")(file);
          // A stored wheel is repaired and removed: nothing to reuse it by.
          made.attr("_digests") =
              stored ? std::string()
                     : wheel_digests_path(tree_root,
                                          py::str(made.attr("filename")).cast<std::string>())
                           .string();
          made.attr("compression") = compression;
          made.attr("_stored") = stored;
          made.attr("_written") = false;
          return made;
        },
        py::name("WheelFile"), py::arg("file"), py::arg("mode") = "r", py::arg("compression") = 8);
    swapped_.emplace_back(module, original);
    spdlog::debug("native wheel writer in place of {}.WheelFile",
                  py::str(module.attr("__name__")).cast<std::string>());
  }
  if (swapped_.empty()) {
    spdlog::warn("no WheelFile found in the modules of {}: the wheel package's writer packs",
                 py::str(command.attr("__class__").attr("__name__")).cast<std::string>());
  }

  // Hard links into the bdist directory.
  const fs::path bdist_dir =
      fs::absolute(py::str(command.attr("bdist_dir")).cast<std::string>()).lexically_normal();
  const mode_t umask = current_umask();
  for (const char* name : {"distutils.file_util", "setuptools._distutils.file_util"}) {
    if (!sys_modules.contains(name)) {
      continue;
    }
    py::object module = sys_modules[name];
    if (std::any_of(copies_.begin(), copies_.end(),
                    [&](const auto& done) { return done.first.is(module); })) {
      continue;
    }
    py::object original = module.attr("copy_file");
    module.attr("copy_file") = py::cpp_function(
        [original, bdist_dir, umask](py::object src, py::object dst, py::object preserve_mode,
                                     py::object preserve_times, py::object update, py::object link,
                                     py::object verbose, py::object dry_run) {
          const auto call = [&](py::object how) {
            return original(src, dst, preserve_mode, preserve_times, update, how, verbose, dry_run);
          };
          if (!link.is_none() || py::bool_(dry_run) || !py::bool_(preserve_times)) {
            return call(link);
          }
          py::object os_path = py::module_::import("os").attr("path");
          const fs::path source = py::str(os_path.attr("abspath")(src)).cast<std::string>();
          fs::path target = py::str(os_path.attr("abspath")(dst)).cast<std::string>();
          if (fs::is_directory(target)) {
            target /= source.filename();
          }
          struct stat from {};
          struct stat parent {};
          if (!inside(target.lexically_normal(), bdist_dir) ||
              ::lstat(source.c_str(), &from) != 0 || !S_ISREG(from.st_mode) ||
              ::stat(target.parent_path().c_str(), &parent) != 0 || parent.st_dev != from.st_dev ||
              (!py::bool_(preserve_mode) && (from.st_mode & 07777) != (0666 & ~umask))) {
            return call(link);
          }
          struct stat there {};
          if (::lstat(target.c_str(), &there) == 0) {
            if (there.st_ino == from.st_ino && there.st_dev == from.st_dev) {
              return py::object(py::make_tuple(py::str(target.string()), 0));
            }
            const bool newer = from.st_mtim.tv_sec > there.st_mtim.tv_sec ||
                               (from.st_mtim.tv_sec == there.st_mtim.tv_sec &&
                                from.st_mtim.tv_nsec > there.st_mtim.tv_nsec);
            if (py::bool_(update) && !newer) {
              return call(link);  // up to date: nothing copied
            }
            fs::remove(target);  // never written through: a new inode
          }
          py::object result = call(py::str("hard"));
          struct stat made {};
          if (::stat(target.c_str(), &made) == 0 && made.st_ino == from.st_ino) {
            ++build_summary().hard_links;
          }
          return result;
        },
        py::name("copy_file"), py::arg("src"), py::arg("dst"), py::arg("preserve_mode") = 1,
        py::arg("preserve_times") = 1, py::arg("update") = 0, py::arg("link") = py::none(),
        py::arg("verbose") = 1, py::arg("dry_run") = 0);
    copies_.emplace_back(module, original);
  }
}

NativePacking::~NativePacking() {
  for (auto& [module, original] : swapped_) {
    module.attr("WheelFile") = original;
  }
  for (auto& [module, original] : copies_) {
    module.attr("copy_file") = original;
  }
}

}  // namespace ascend_setup
