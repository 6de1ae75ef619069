#pragma once

namespace triton {
const char* dialectName();
const char* llvmVersion();
}  // namespace triton
