// Stand-in for an LLVM install: the LLVM download cannot happen offline, so
// builds point LLVM_SYSPATH here (with TRITON_OFFLINE_BUILD=1).
#pragma once
#define LLVM_VERSION_STRING "22.0.0-stub"
