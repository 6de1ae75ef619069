#include <cstdio>

#include "triton/Dialect.h"

int main() {
  std::printf("triton-mlir-opt (ascend): %s\n", triton::dialectName());
  return 0;
}
