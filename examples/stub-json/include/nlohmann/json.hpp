// Stand-in for the nlohmann/json package: its download cannot happen offline,
// so builds point JSON_SYSPATH here (with TRITON_OFFLINE_BUILD=1), as
// examples/stub-llvm stands in for LLVM.
#pragma once

namespace nlohmann {
inline constexpr const char* kStubJson = "nlohmann-json-stub";
}  // namespace nlohmann
