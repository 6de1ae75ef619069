// Which environment variables Python code reads while a watch is alive: every
// read of os.environ (os.environ[...], .get, `in`, os.getenv) is recorded by
// giving the one os.environ object a subclass of its own class for the time
// of the watch, so references taken earlier (`from os import environ`) are
// watched too. Only reads made by code under `source_root` count (the first
// caller outside os.py and collections.abc decides): setup.py and its helper
// modules, not the libraries it imports. Used to find what upstream's setup.py
// reads while it loads, instead of keeping a list by hand.
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

namespace ascend_setup {

class EnvReadWatch {
 public:
  explicit EnvReadWatch(const std::filesystem::path& source_root);  // needs an interpreter
  ~EnvReadWatch();  // os.environ gets its own class back
  EnvReadWatch(const EnvReadWatch&) = delete;
  EnvReadWatch& operator=(const EnvReadWatch&) = delete;

  const std::set<std::string>& names() const { return *names_; }

 private:
  pybind11::object environ_;
  pybind11::object original_class_;
  std::shared_ptr<std::set<std::string>> names_;
};

}  // namespace ascend_setup
