#include "ascend_setup/captured_setup.hpp"

#include "ascend_setup/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <pybind11/embed.h>

namespace py = pybind11;
using namespace ascend_setup;
using namespace test_support;

namespace {
class CapturedSetupTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized()) {
      py::initialize_interpreter();
    }
  }
  py::object real_setup() { return py::module_::import("setuptools").attr("setup"); }
  TempDir dir;
};
}  // namespace

TEST_F(CapturedSetupTest, CapturesKwargsInOrderAndRestoresSetup) {
  py::object before = real_setup();
  write_file(dir.path() / "setup.py",
             "from setuptools import setup\nimport sys\nFILE = __file__\n"
             "setup(zeta=1, alpha='a', mid=[1])\n");
  CapturedSetup captured = capture_setup(dir.path() / "setup.py");
  EXPECT_TRUE(real_setup().is(before));
  EXPECT_TRUE(captured.real_setup.is(before));
  EXPECT_EQ(py::str(py::list(captured.kwargs.attr("keys")())).cast<std::string>(),
            "['zeta', 'alpha', 'mid']");
  EXPECT_EQ(captured.module.attr("FILE").cast<std::string>(), (dir.path() / "setup.py").string());
  py::object registered = py::module_::import("sys").attr("modules")["setup"];
  EXPECT_TRUE(registered.is(captured.module));
  py::object main = py::module_::import("sys").attr("modules")["__main__"];
  EXPECT_TRUE(main.is(captured.module));
  EXPECT_EQ(captured.module.attr("__name__").cast<std::string>(), "__main__");
  EXPECT_FALSE(fs::exists(dir.path() / "__pycache__"));
}

TEST_F(CapturedSetupTest, RealSetupIsBackAfterSetupPyRaised) {
  py::object before = real_setup();
  write_file(dir.path() / "setup.py", "raise RuntimeError('x')\n");
  EXPECT_THROW(capture_setup(dir.path() / "setup.py"), py::error_already_set);
  EXPECT_TRUE(real_setup().is(before));
}

TEST_F(CapturedSetupTest, LastOfTwoCallsWins) {
  write_file(
      dir.path() / "setup.py",
      "import setuptools\nsetuptools.setup(name='first')\nsetuptools.setup(name='second')\n");
  CapturedSetup captured = capture_setup(dir.path() / "setup.py");
  EXPECT_EQ(captured.kwargs["name"].cast<std::string>(), "second");
}

TEST_F(CapturedSetupTest, PositionalArgumentsAreATypeErrorAsInSetuptools) {
  write_file(dir.path() / "setup.py", "import setuptools\nsetuptools.setup('x')\n");
  try {
    capture_setup(dir.path() / "setup.py");
    FAIL();
  } catch (py::error_already_set& error) {
    EXPECT_TRUE(error.matches(PyExc_TypeError));
  }
}

TEST_F(CapturedSetupTest, NoSetupCallIsAnUpstreamMismatch) {
  write_file(dir.path() / "setup.py", "x = 1\n");
  try {
    capture_setup(dir.path() / "setup.py");
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::upstream_mismatch);
  }
}
