#include "host/python/setup_py_source.hpp"

#include "base/util/error.hpp"
#include "base/util/whole_file.hpp"

namespace py = pybind11;

namespace ascend_setup {

namespace {

std::string node_type(const py::handle& node) {
  return py::str(py::type::of(node).attr("__name__")).cast<std::string>();
}

std::string text(const py::handle& value) { return py::str(value).cast<std::string>(); }

// Parameter names, or nullopt when the function takes **kwargs.
std::optional<std::vector<std::string>> parameters(const py::handle& function) {
  py::object args = function.attr("args");
  if (!args.attr("kwarg").is_none()) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const char* group : {"posonlyargs", "args", "kwonlyargs"}) {
    if (!py::hasattr(args, group)) {
      continue;
    }
    for (auto arg : args.attr(group)) {
      names.push_back(text(arg.attr("arg")));
    }
  }
  return names;
}

bool is_dataclass(const py::handle& class_def) {
  for (auto decorator : class_def.attr("decorator_list")) {
    py::object target = node_type(decorator) == "Call"
                            ? decorator.attr("func")
                            : py::reinterpret_borrow<py::object>(decorator);
    const std::string type = node_type(target);
    if ((type == "Name" && text(target.attr("id")) == "dataclass") ||
        (type == "Attribute" && text(target.attr("attr")) == "dataclass")) {
      return true;
    }
  }
  return false;
}

// The leading string literal of "X = "1.2.3" + suffix()" and the like.
std::optional<std::string> leading_literal(const py::handle& value) {
  const std::string type = node_type(value);
  if (type == "Constant" && py::isinstance<py::str>(value.attr("value"))) {
    return text(value.attr("value"));
  }
  if (type == "BinOp") {
    return leading_literal(value.attr("left"));
  }
  if (type == "JoinedStr" && py::len(value.attr("values")) > 0) {
    return leading_literal(value.attr("values")[py::int_(0)]);
  }
  return std::nullopt;
}

class SourceReader {
 public:
  SourceReader(SetupPySource& source, const std::string& version_variable)
      : source_(source), version_variable_(version_variable) {}

  // Module-level statements, also inside if/try/with blocks.
  void statements(const py::handle& body, bool top_level) {
    for (auto node : body) {
      statement(node, top_level);
    }
  }

 private:
  void statement(const py::handle& node, bool top_level) {
    const std::string type = node_type(node);
    if (type == "FunctionDef" || type == "AsyncFunctionDef") {
      source_.names[text(node.attr("name"))] = {"function", parameters(node)};
    } else if (type == "ClassDef") {
      class_def(node);
    } else if (type == "Assign" || type == "AnnAssign" || type == "AugAssign") {
      py::object targets = type == "Assign" ? py::object(node.attr("targets"))
                                            : py::object(py::make_tuple(node.attr("target")));
      for (auto target : targets) {
        if (node_type(target) != "Name") {
          continue;
        }
        const std::string name = text(target.attr("id"));
        source_.names[name] = {"variable", std::nullopt};
        if (name == version_variable_ && !node.attr("value").is_none()) {
          source_.version = leading_literal(node.attr("value"));
        }
      }
    } else if (type == "Import" || type == "ImportFrom") {
      import(node, type, top_level);
    } else if (type == "If" || type == "With" || type == "Try" || type == "TryStar") {
      const bool guarded = type == "Try" || type == "TryStar" || type == "If";
      for (const char* part : {"body", "orelse", "finalbody"}) {
        if (py::hasattr(node, part)) {
          statements(node.attr(part), top_level && !guarded);
        }
      }
      if (py::hasattr(node, "handlers")) {
        for (auto handler : node.attr("handlers")) {
          statements(handler.attr("body"), false);
        }
      }
    }
  }

  void class_def(const py::handle& node) {
    const std::string name = text(node.attr("name"));
    auto& members = source_.members[name];
    members.clear();
    std::optional<std::vector<std::string>> init;
    std::vector<std::string> fields;
    bool has_init = false;
    for (auto item : node.attr("body")) {
      const std::string type = node_type(item);
      if (type == "FunctionDef" || type == "AsyncFunctionDef") {
        const std::string member = text(item.attr("name"));
        members[member] = {"method", parameters(item)};
        if (member == "__init__") {
          has_init = true;
          init = parameters(item);
          if (init && !init->empty()) {
            init->erase(init->begin());  // self
          }
        }
      } else if (type == "AnnAssign" && node_type(item.attr("target")) == "Name") {
        fields.push_back(text(item.attr("target").attr("id")));
        members[fields.back()] = {"variable", std::nullopt};
      } else if (type == "Assign") {
        for (auto target : item.attr("targets")) {
          if (node_type(target) == "Name") {
            members[text(target.attr("id"))] = {"variable", std::nullopt};
          }
        }
      }
    }
    SymbolInfo info{"class", std::nullopt};
    if (has_init) {
      info.params = init;
    } else if (is_dataclass(node)) {
      info.params = fields;
    }
    source_.names[name] = info;
  }

  void import(const py::handle& node, const std::string& type, bool top_level) {
    SourceImport entry;
    entry.line = node.attr("lineno").cast<int>();
    if (type == "Import") {
      for (auto alias : node.attr("names")) {
        const std::string module = text(alias.attr("name"));
        const std::string bound = alias.attr("asname").is_none()
                                      ? module.substr(0, module.find('.'))
                                      : text(alias.attr("asname"));
        source_.names[bound] = {"imported", std::nullopt};
        if (top_level) {
          source_.imports.push_back({entry.line, module, {}});
        }
      }
      return;
    }
    if (node.attr("level").cast<int>() != 0 || node.attr("module").is_none()) {
      return;  // relative: setup.py is no package
    }
    entry.module = text(node.attr("module"));
    for (auto alias : node.attr("names")) {
      const std::string name = text(alias.attr("name"));
      if (name == "*") {
        continue;
      }
      entry.names.push_back(name);
      source_.names[alias.attr("asname").is_none() ? name : text(alias.attr("asname"))] = {
          "imported", std::nullopt};
    }
    if (top_level) {
      source_.imports.push_back(std::move(entry));
    }
  }

  SetupPySource& source_;
  const std::string& version_variable_;
};

}  // namespace

SetupPySource read_setup_py_source(const std::filesystem::path& setup_py,
                                   const std::string& version_variable) {
  const auto content = read_whole_file(setup_py);
  if (!content) {
    throw Error("cannot read " + setup_py.string(), ErrorKind::bad_input);
  }
  py::object tree =
      py::module_::import("ast").attr("parse")(py::bytes(*content), setup_py.string());
  SetupPySource source;
  SourceReader(source, version_variable).statements(tree.attr("body"), true);
  return source;
}

SymbolLookup source_symbols(const SetupPySource& source) {
  return [&source](const std::string& owner, const std::string& name) -> std::optional<SymbolInfo> {
    if (owner.empty()) {
      const auto found = source.names.find(name);
      return found == source.names.end() ? std::nullopt : std::optional(found->second);
    }
    const auto members = source.members.find(owner);
    if (members == source.members.end()) {
      // An imported or assigned class: its members cannot be read here.
      return source.names.count(owner) != 0 ? std::optional(SymbolInfo{"imported", std::nullopt})
                                            : std::nullopt;
    }
    const auto found = members->second.find(name);
    return found == members->second.end() ? std::nullopt : std::optional(found->second);
  };
}

std::vector<std::pair<SourceImport, std::string>> failing_imports(
    const SetupPySource& source, const std::filesystem::path& setup_py) {
  py::module_ sys = py::module_::import("sys");
  py::module_ importlib = py::module_::import("importlib");
  sys.attr("dont_write_bytecode") = true;
  py::list path = sys.attr("path");
  const std::string directory = setup_py.parent_path().string();
  path.insert(0, directory);
  std::vector<std::pair<SourceImport, std::string>> failures;
  for (const SourceImport& entry : source.imports) {
    try {
      py::object module = importlib.attr("import_module")(entry.module);
      for (const std::string& name : entry.names) {
        if (py::hasattr(module, name.c_str())) {
          continue;
        }
        try {
          importlib.attr("import_module")(entry.module + "." + name);
        } catch (py::error_already_set&) {
          throw Error("ImportError: cannot import name '" + name + "' from '" + entry.module + "'",
                      ErrorKind::bad_input);
        }
      }
    } catch (const Error& error) {
      failures.emplace_back(entry, error.what());
    } catch (py::error_already_set& error) {
      std::string what = text(py::type::of(error.value()).attr("__name__"));
      what += ": " + text(error.value());
      failures.emplace_back(entry, what);
    }
  }
  path.attr("remove")(directory);
  return failures;
}

}  // namespace ascend_setup
