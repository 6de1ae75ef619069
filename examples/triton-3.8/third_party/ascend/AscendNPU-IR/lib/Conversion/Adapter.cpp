#include "npuir/Adapter.h"

namespace npuir {

int adapterLlvmMajor() { return 22; }

const char* adapterName() { return "npuir-to-llvm"; }

}  // namespace npuir
