// setup() keyword arguments as JSON for --dump-kwargs: strings, numbers,
// booleans, None, lists, tuples and dicts as themselves; sets as sorted arrays;
// a class as its dotted name; any other object as its public attributes plus
// "__class__".
#pragma once

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace ascend_setup {

nlohmann::ordered_json to_json(pybind11::handle value);

// Per key that differs: {"captured": old, "rewritten": new}; a side is left
// out where the key is absent there. Keys in rewritten order, then removed ones.
nlohmann::ordered_json kwargs_diff(const nlohmann::ordered_json& captured,
                                   const nlohmann::ordered_json& rewritten);

}  // namespace ascend_setup
