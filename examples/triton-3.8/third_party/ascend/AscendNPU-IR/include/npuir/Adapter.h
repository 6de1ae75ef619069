#pragma once

namespace npuir {

// The LLVM major version the adapter was written for.
int adapterLlvmMajor();

// The name of the adapter's lowering to LLVM.
const char* adapterName();

}  // namespace npuir
