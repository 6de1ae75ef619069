// Part of libtriton contributed by the nvidia backend.
extern "C" const char* triton_backend_nvidia() { return "nvidia"; }
