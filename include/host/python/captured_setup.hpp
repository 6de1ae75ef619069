// Executing upstream's setup.py with setuptools.setup swapped for a native
// callable that records its keyword arguments (the module defines
// all its functions and classes, and setup() is captured, not run).
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <optional>
#include <string>

namespace ascend_setup {

struct CapturedSetup {
  pybind11::module_ module;  // named __main__, registered as sys.modules["__main__"] and ["setup"]
  pybind11::dict kwargs;     // the last setup() call's keyword arguments, in call order
  pybind11::object real_setup;
};

// Runs `setup_py` as module "__main__" with __file__ set as `python setup.py`
// does; setuptools.setup is restored afterwards, also when setup.py raised.
// Python errors propagate as error_already_set; setup() never being called
// throws Error(upstream_mismatch); a second call logs a warning.
// With `bytecode_cache`, setup.py's compiled code is read from that file when
// it was compiled from the same path and source by the same bytecode version,
// else compiled and stored there (as Python keeps a .pyc, not when
// sys.dont_write_bytecode is set).
CapturedSetup capture_setup(
    const std::filesystem::path& setup_py,
    const std::optional<std::filesystem::path>& bytecode_cache = std::nullopt);

// The cache's file name for the linked minor: setup.cpython-XY.pyc.
std::string bytecode_cache_name();

}  // namespace ascend_setup
