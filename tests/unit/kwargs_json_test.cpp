#include "host/python/kwargs_json.hpp"

#include <gtest/gtest.h>
#include <pybind11/embed.h>

namespace py = pybind11;
using namespace ascend_setup;
using json = nlohmann::ordered_json;

namespace {
class KwargsJson : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Py_IsInitialized()) {
      py::initialize_interpreter();
    }
  }
  json eval(const char* expression) {
    py::dict scope;
    scope["__name__"] = "fixture";
    py::exec(R"(
import collections, pathlib
class Command:
    pass
class Thing:
    def __init__(self):
        self.name = "n"
        self.items = [1, 2]
        self._hidden = 1
)",
             scope);
    return to_json(py::eval(expression, scope));
  }
};
}  // namespace

TEST_F(KwargsJson, Scalars) {
  EXPECT_EQ(eval("None"), json(nullptr));
  EXPECT_EQ(eval("True"), json(true));
  EXPECT_EQ(eval("3"), json(3));
  EXPECT_EQ(eval("2**80"), json("1208925819614629174706176"));
  EXPECT_EQ(eval("1.5"), json(1.5));
  EXPECT_EQ(eval("'x'"), json("x"));
  EXPECT_EQ(eval("b'x'"), json("x"));
  EXPECT_EQ(eval("pathlib.PurePosixPath('a/b')"), json("a/b"));
}

TEST_F(KwargsJson, ContainersKeepOrderAndSetsAreSorted) {
  const json value = eval("{'b': [1, (2, 3)], 'a': {'z', 'x', 'y'}, 3: frozenset([2, 1])}");
  EXPECT_EQ(value.dump(), R"({"b":[1,[2,3]],"a":["x","y","z"],"3":[1,2]})");
  EXPECT_EQ(eval("{1, 'a'}").size(), 2u);
}

TEST_F(KwargsJson, ClassesAndObjects) {
  EXPECT_EQ(eval("Command"), json("fixture.Command"));
  EXPECT_EQ(eval("collections.OrderedDict"), json("collections.OrderedDict"));
  EXPECT_EQ(eval("Thing()").dump(), R"({"__class__":"fixture.Thing","name":"n","items":[1,2]})");
}

TEST_F(KwargsJson, RecursionIsCut) {
  py::dict scope;
  py::exec("x = []\nx.append(x)\n", scope);
  const json value = to_json(scope["x"]);
  EXPECT_EQ(value.dump(), R"(["<recursion: builtins.list>"])");
}

TEST(KwargsDiff, ChangedAddedRemoved) {
  const json captured = json::parse(R"({"name":"triton","author":"a","gone":1})");
  const json rewritten = json::parse(R"({"name":"triton-ascend","author":"a","new":[1]})");
  EXPECT_EQ(kwargs_diff(captured, rewritten).dump(),
            R"({"name":{"captured":"triton","rewritten":"triton-ascend"},"new":{"rewritten":[1]},)"
            R"("gone":{"captured":1}})");
}
