// Part of libtriton contributed by the ascend backend.
extern "C" const char* triton_backend_ascend() { return "ascend"; }
