// Part of libtriton contributed by the amd backend.
extern "C" const char* triton_backend_amd() { return "amd"; }
