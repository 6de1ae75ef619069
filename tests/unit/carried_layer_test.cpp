// The signs that setup.py carries the Ascend layer itself, on setup modules
// and kwargs built in Python: upstream's shape carries none, each sign alone
// is found, and look-alikes are not taken for one.
#include "host/layer/carried_layer.hpp"

#include "base/layer/profile.hpp"
#include "base/util/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <pybind11/embed.h>

namespace py = pybind11;
using namespace ascend_setup;
using test_support::replace_once;

namespace {

class CarriedLayerEvidence : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized()) {
      py::initialize_interpreter();
    }
  }

  // A setup module as a plain namespace: `backends` of Backend objects with
  // these names (or the expression `backends_value` as it is).
  py::object module_with(const std::string& backends_value, const char* variable = "backends") {
    py::dict scope;
    py::exec(R"(
import types
from dataclasses import dataclass
@dataclass
class Backend:
    name: str
def namespace(**names):
    return types.SimpleNamespace(**names)
)",
             scope);
    return py::eval("namespace(" + std::string(variable) + "=" + backends_value + ")", scope);
  }

  // The example tree's kwargs, with `entry_points` and `install_requires` as given.
  py::dict kwargs_with(const std::string& entry_points, const std::string& install_requires) {
    py::dict kwargs;
    kwargs["name"] = "triton";
    kwargs["entry_points"] = py::eval(entry_points);
    kwargs["install_requires"] = py::eval(install_requires);
    return kwargs;
  }

  py::dict upstream_kwargs() {
    return kwargs_with(
        "{'console_scripts': ['proton-viewer = triton.profiler.viewer:main'], "
        "'triton.backends': ['nvidia = triton.backends.nvidia', 'amd = triton.backends.amd']}",
        "[\"importlib-metadata; python_version < '3.10'\"]");
  }

  const std::string upstream_backends = "[Backend('nvidia'), Backend('amd')]";
  Profile profile = parse_profile(builtin_profile_text(), "p.toml");
};

}  // namespace

TEST_F(CarriedLayerEvidence, UpstreamsSetupPyCarriesNone) {
  EXPECT_EQ(carried_layer_evidence(module_with(upstream_backends), upstream_kwargs(), profile),
            std::vector<std::string>{});
  EXPECT_NO_THROW(refuse_carried_layer(module_with(upstream_backends), upstream_kwargs(), profile));
  // No backends at all, no kwargs: nothing to go by, nothing found.
  EXPECT_EQ(carried_layer_evidence(py::module_::import("types"), py::dict(), profile),
            std::vector<std::string>{});
}

TEST_F(CarriedLayerEvidence, TheBackendAmongTheModulesBackends) {
  const py::object module = module_with("[Backend('ascend'), Backend('nvidia'), Backend('amd')]");
  EXPECT_EQ(carried_layer_evidence(module, upstream_kwargs(), profile),
            std::vector<std::string>{"`ascend` is already among setup.py's backends"});
  try {
    refuse_carried_layer(module, upstream_kwargs(), profile);
    FAIL() << "not refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), exit_code::upstream_mismatch);
    EXPECT_EQ(std::string(error.what()),
              "setup.py already carries the Ascend layer (`ascend` is already among setup.py's "
              "backends): ascend-setup would apply it a second time; build this tree with its own "
              "setup.py: `python3 setup.py bdist_wheel`");
  }
}

// The backends variable is found under the patch point's alias, as the
// backends override finds it; a tuple is a list too.
TEST_F(CarriedLayerEvidence, TheBackendsUnderTheirAlias) {
  profile = parse_profile(replace_once(std::string(builtin_profile_text()),
                                       "{ id = \"backends\", kind = \"variable\" }",
                                       "{ id = \"backends\", kind = \"variable\", aliases = "
                                       "[\"BACKENDS\"] }"),
                          "p.toml");
  const py::object module = module_with("(Backend('nvidia'), Backend('ascend'))", "BACKENDS");
  EXPECT_EQ(carried_layer_evidence(module, upstream_kwargs(), profile),
            std::vector<std::string>{"`ascend` is already among setup.py's backends"});
}

TEST_F(CarriedLayerEvidence, TheBackendAmongTheEntryPoints) {
  const std::vector<std::string> found{
      "`ascend` is already among setup.py's triton.backends entry points"};
  const std::string requires_ = "['numpy']";
  for (const std::string entry_points :
       {"{'triton.backends': ['nvidia = triton.backends.nvidia', 'ascend=triton.backends.ascend']}",
        "{'triton.backends': ('ascend = triton.backends.ascend',)}",
        "{'triton.backends': 'nvidia = triton.backends.nvidia\\n  ascend = "
        "triton.backends.ascend\\n'}"}) {
    SCOPED_TRACE(entry_points);
    EXPECT_EQ(carried_layer_evidence(module_with(upstream_backends),
                                     kwargs_with(entry_points, requires_), profile),
              found);
  }
}

TEST_F(CarriedLayerEvidence, TheUpstreamPinAmongTheRequirements) {
  const std::string entry_points = "{}";
  for (const std::string requirement :
       {"triton==3.5.0", "Triton >= 3.5; platform_machine=='x86_64'", "triton"}) {
    SCOPED_TRACE(requirement);
    EXPECT_EQ(carried_layer_evidence(
                  module_with(upstream_backends),
                  kwargs_with(entry_points, "['numpy', \"" + requirement + "\"]"), profile),
              std::vector<std::string>{"setup.py's install_requires already pins upstream (`" +
                                       requirement + "`)"});
  }
  // One string of lines, as setuptools also takes it.
  EXPECT_EQ(carried_layer_evidence(module_with(upstream_backends),
                                   kwargs_with(entry_points, "'numpy\\ntriton==3.5.0\\n'"), profile)
                .size(),
            1u);
}

// Names that only look like the backend or the pin are not signs.
TEST_F(CarriedLayerEvidence, LookAlikesAreNotSigns) {
  const py::object module = module_with("[Backend('ascend_extra'), 'ascend', Backend('nvidia')]");
  const py::dict kwargs = kwargs_with(
      "{'triton.backends': ['ascend_extra = triton.backends.ascend'], "
      "'console_scripts': ['ascend = tool:main']}",
      "['triton-ascend==3.5.0', 'triton_kernels', 'tritonclient', 42]");
  EXPECT_EQ(carried_layer_evidence(module, kwargs, profile), std::vector<std::string>{});
}

// A generator is not read: reading it would use up what setup.py uses later.
TEST_F(CarriedLayerEvidence, AGeneratorIsLeftUnread) {
  py::dict scope;
  py::exec(
      "import types\n"
      "class Backend:\n"
      "    name = 'ascend'\n"
      "gen = (b for b in [Backend()])\n"
      "module = types.SimpleNamespace(backends=gen)\n",
      scope);
  EXPECT_EQ(carried_layer_evidence(scope["module"], upstream_kwargs(), profile),
            std::vector<std::string>{});
  EXPECT_EQ(py::len(py::list(scope["gen"])), 1u);
}
