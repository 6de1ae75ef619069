#!/usr/bin/env python3
"""Checks tests/sanitizers/not-sanitized.txt against the suite: every line is
`FULL.TEST_NAME: REASON`, the name is a test of one of the given GoogleTest
executables, and no name is listed twice. Prints the ctest -E regex of the
names with --regex instead (scripts/quickstart.sh). Exit 1 with one line per
problem."""
import re
import subprocess
import sys


def listed(path):
    entries = []
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        name, colon, reason = line.partition(": ")
        entries.append((number, name.strip(), reason.strip() if colon else ""))
    return entries


def suite_tests(executable):
    out = subprocess.run([executable, "--gtest_list_tests"], check=True,
                         capture_output=True, text=True).stdout
    names, suite = set(), ""
    for line in out.splitlines():
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        else:
            names.add(suite + line.split("#")[0].strip())
    return names


def main(argv):
    if len(argv) >= 3 and argv[1] == "--regex":
        names = [name for _, name, _ in listed(argv[2])]
        print("^(" + "|".join(re.escape(name) for name in names) + ")$")
        return 0
    if len(argv) < 3:
        print("usage: check_exclusions.py LIST EXECUTABLE... | --regex LIST", file=sys.stderr)
        return 2
    known = set()
    for executable in argv[2:]:
        known |= suite_tests(executable)
    problems, seen = [], set()
    for number, name, reason in listed(argv[1]):
        where = f"{argv[1]}:{number}: {name}"
        if not reason:
            problems.append(f"{where}: no reason (NAME: REASON)")
        if name in seen:
            problems.append(f"{where}: listed twice")
        if name not in known:
            problems.append(f"{where}: no such test (renamed? then list its new name)")
        seen.add(name)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
