#include "host/python/captured_setup.hpp"

#include "base/util/error.hpp"
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

// setup.py's compiled code is kept in the given cache file, reused while the
// path and source are the same, and not written under dont_write_bytecode.
TEST_F(CapturedSetupTest, CompiledCodeIsCachedAndReusedWhileTheSourceIsTheSame) {
  const fs::path setup_py = dir.path() / "setup.py";
  const fs::path cache = dir.path() / "build" / "ascend-setup" / bytecode_cache_name();
  const std::string source_a = "import setuptools\nsetuptools.setup(name='a')\n";
  write_file(setup_py, source_a);
  py::module_ sys = py::module_::import("sys");
  sys.attr("dont_write_bytecode") = false;  // whatever PYTHONDONTWRITEBYTECODE says
  EXPECT_EQ(capture_setup(setup_py, cache).kwargs["name"].cast<std::string>(), "a");
  ASSERT_TRUE(fs::exists(cache));
  EXPECT_FALSE(fs::exists(dir.path() / "__pycache__"));

  // An entry whose key is setup.py's but whose code is another's: it is what
  // runs, so the cache is read and the source not compiled again.
  const std::string entry = read_file(cache);
  py::object other = py::module_::import("builtins")
                         .attr("compile")("import setuptools\nsetuptools.setup(name='cached')\n",
                                          setup_py.string(), "exec");
  const std::string marshalled =
      py::bytes(py::module_::import("marshal").attr("dumps")(other)).cast<std::string>();
  const size_t header = 4 + 8;  // magic number, source hash
  write_file(cache, entry.substr(0, header) + marshalled);
  EXPECT_EQ(capture_setup(setup_py, cache).kwargs["name"].cast<std::string>(), "cached");

  // A changed source is compiled again and its entry replaces the old one.
  write_file(setup_py, "import setuptools\nsetuptools.setup(name='b')\n");
  EXPECT_EQ(capture_setup(setup_py, cache).kwargs["name"].cast<std::string>(), "b");
  EXPECT_NE(read_file(cache).substr(0, header), entry.substr(0, header));

  // A damaged entry costs a compile, nothing else.
  write_file(cache, entry.substr(0, header) + "garbage");
  write_file(setup_py, source_a);
  EXPECT_EQ(capture_setup(setup_py, cache).kwargs["name"].cast<std::string>(), "a");
  EXPECT_EQ(read_file(cache), entry);

  // PYTHONDONTWRITEBYTECODE / -B: read, never written.
  fs::remove(cache);
  sys.attr("dont_write_bytecode") = true;
  EXPECT_EQ(capture_setup(setup_py, cache).kwargs["name"].cast<std::string>(), "a");
  sys.attr("dont_write_bytecode") = false;
  EXPECT_FALSE(fs::exists(cache));
}
