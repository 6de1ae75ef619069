// A python3 whose executable runs on a shared libpython rather than carrying
// the interpreter: CPython's own main, linked against the default
// interpreter's libpython3.X (test_support's embedded_python_stand_in puts
// it where an installation's interpreter would be). Never instrumented: it
// runs as setup.py's sys.executable, outside the sanitizers' runtime.
#include <Python.h>

int main(int argc, char** argv) { return Py_BytesMain(argc, argv); }
