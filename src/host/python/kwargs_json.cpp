#include "host/python/kwargs_json.hpp"

#include <set>

namespace py = pybind11;
using json = nlohmann::ordered_json;

namespace ascend_setup {

namespace {

std::string dotted_name(py::handle type) {
  const std::string module = py::str(py::getattr(type, "__module__", py::str("?")));
  const std::string name =
      py::str(py::getattr(type, "__qualname__", py::getattr(type, "__name__", py::str("?"))));
  return module + "." + name;
}

class Encoder {
 public:
  json encode(py::handle value) {
    if (value.is_none()) {
      return nullptr;
    }
    if (py::isinstance<py::bool_>(value)) {
      return value.cast<bool>();
    }
    if (py::isinstance<py::int_>(value)) {
      try {
        return value.cast<long long>();
      } catch (const py::cast_error&) {
        return py::str(value).cast<std::string>();  // beyond 64 bits
      }
    }
    if (py::isinstance<py::float_>(value)) {
      return value.cast<double>();
    }
    if (py::isinstance<py::str>(value)) {
      return value.cast<std::string>();
    }
    if (py::isinstance<py::bytes>(value)) {
      return py::str(value.attr("decode")("utf-8", "replace")).cast<std::string>();
    }
    if (PyType_Check(value.ptr())) {
      return dotted_name(value);
    }
    if (py::isinstance(value, py::module_::import("os").attr("PathLike"))) {
      return py::str(py::module_::import("os").attr("fspath")(value)).cast<std::string>();
    }
    // Containers and objects may refer to themselves.
    if (!active_.insert(value.ptr()).second) {
      return "<recursion: " + dotted_name(py::type::handle_of(value)) + ">";
    }
    json result = encode_composite(value);
    active_.erase(value.ptr());
    return result;
  }

 private:
  json encode_composite(py::handle value) {
    if (py::isinstance<py::dict>(value)) {
      json object = json::object();
      for (auto item : py::reinterpret_borrow<py::dict>(value)) {
        const std::string key = py::isinstance<py::str>(item.first)
                                    ? item.first.cast<std::string>()
                                    : py::str(item.first).cast<std::string>();
        object[key] = encode(item.second);
      }
      return object;
    }
    if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      json array = json::array();
      for (auto item : value) {
        array.push_back(encode(item));
      }
      return array;
    }
    if (py::isinstance<py::set>(value) || py::isinstance<py::frozenset>(value)) {
      py::object builtins = py::module_::import("builtins");
      py::object sorted;
      try {
        sorted = builtins.attr("sorted")(value);
      } catch (py::error_already_set&) {  // mixed types: order by repr
        sorted = builtins.attr("sorted")(value, py::arg("key") = builtins.attr("repr"));
      }
      return encode(sorted);
    }
    json object = json::object();
    object["__class__"] = dotted_name(py::type::handle_of(value));
    if (py::hasattr(value, "__dict__")) {
      for (auto item : py::reinterpret_borrow<py::dict>(value.attr("__dict__"))) {
        const std::string key = py::str(item.first);
        if (!key.empty() && key[0] != '_') {
          object[key] = encode(item.second);
        }
      }
    }
    return object;
  }

  std::set<PyObject*> active_;
};

}  // namespace

json to_json(py::handle value) { return Encoder().encode(value); }

json kwargs_diff(const json& captured, const json& rewritten) {
  json diff = json::object();
  for (const auto& [key, value] : rewritten.items()) {
    if (!captured.contains(key)) {
      diff[key] = json{{"rewritten", value}};
    } else if (captured.at(key) != value) {
      diff[key] = json{{"captured", captured.at(key)}, {"rewritten", value}};
    }
  }
  for (const auto& [key, value] : captured.items()) {
    if (!rewritten.contains(key)) {
      diff[key] = json{{"captured", value}};
    }
  }
  return diff;
}

}  // namespace ascend_setup
