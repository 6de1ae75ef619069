#include "triton/Dialect.h"

#include "llvm/Config/llvm-config.h"

namespace triton {
const char* dialectName() { return "tt"; }
const char* llvmVersion() { return LLVM_VERSION_STRING; }
}  // namespace triton
