// pyvenv.cfg read on text, as venv and virtualenv write it.
#include "base/launch/interpreter.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

TEST(PyvenvCfg, HomeVersionAndImplementation) {
  const PyvenvCfg venv = parse_pyvenv_cfg(
      "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n"
      "executable = /usr/bin/python3.11\ncommand = /usr/bin/python3 -m venv /v\n");
  EXPECT_EQ(venv.home, "/usr/bin");
  EXPECT_EQ(venv.version, "3.11");
  EXPECT_EQ(venv.implementation, "cpython");
  const PyvenvCfg virtualenv = parse_pyvenv_cfg(
      "home = /opt/py/bin\r\nimplementation = PyPy\r\nversion_info = 3.10.14.final.0\r\n");
  EXPECT_EQ(virtualenv.home, "/opt/py/bin");
  EXPECT_EQ(virtualenv.version, "3.10");
  EXPECT_EQ(virtualenv.implementation, "pypy");
  EXPECT_EQ(parse_pyvenv_cfg("  home=/a b  \nversion=3.12\n").home, "/a b");
  EXPECT_EQ(parse_pyvenv_cfg("version = 3.12\nversion_info = 3.9.1\n").version, "3.12");
}

TEST(PyvenvCfg, OtherTextGivesNoVersion) {
  for (const char* bad :
       {"", "version = 3\n", "version = three.1\n", "version = 3.11 beta\n", "version = .11\n",
        "version = 3.\n", "version = 3.11x\n", "ver-sion = 3.11\n", "= 3.11\n"}) {
    EXPECT_EQ(parse_pyvenv_cfg(bad).version, "") << bad;
  }
  EXPECT_EQ(parse_pyvenv_cfg("home\n").home, std::nullopt);
  // A long line: std::regex's recursion grew the stack with the line.
  EXPECT_EQ(parse_pyvenv_cfg("home = /" + std::string(1 << 20, 'a') + "\n").home->size(),
            (1u << 20) + 1);
}
