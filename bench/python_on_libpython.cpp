// `python3` on the same libpython3.X.so that ascend-setup embeds, posing as
// the same interpreter (sys.executable), with none of ascend-setup's work:
// the fair "irreducible part" for bench/host_bench.py. Debian's
// /usr/bin/python3 is built with LTO and PGO and runs Python code measurably
// faster than its libpython3.X.so does, which no embedding program can change.
//
//   python_on_libpython PYTHON_EXECUTABLE [python3 arguments...]
#include <Python.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: python_on_libpython PYTHON_EXECUTABLE [ARGS...]\n");
    return 2;
  }
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  PyStatus status = PyConfig_SetBytesString(&config, &config.executable, argv[1]);
  if (!PyStatus_Exception(status)) {
    status = PyConfig_SetBytesString(&config, &config.program_name, argv[1]);
  }
  if (!PyStatus_Exception(status)) {
    status = PyConfig_SetBytesArgv(&config, argc - 1, argv + 1);
  }
  if (!PyStatus_Exception(status)) {
    status = Py_InitializeFromConfig(&config);
  }
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    Py_ExitStatusException(status);
  }
  return Py_RunMain();
}
