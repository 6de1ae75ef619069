#include "triton/Dialect.h"

#include "llvm/Config/llvm-config.h"
#include "nlohmann/json.hpp"

namespace triton {
const char* dialectName() { return "tt"; }
const char* llvmVersion() { return LLVM_VERSION_STRING; }
}  // namespace triton
