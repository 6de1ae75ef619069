#include <cstdio>

#include "triton/Dialect.h"

int main() {
  std::printf("triton-opt: %s\n", triton::dialectName());
  return 0;
}
