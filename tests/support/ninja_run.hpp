// A ninja run as a build records it, for the tests of the build summary, the
// trace and the report.
#pragma once

#include "base/build/build_summary.hpp"
#include "test_support.hpp"

#include <string>

namespace test_support {

// `dir`/.ninja_log holds `earlier` (what earlier runs left), then `now` (the
// whole log after this run: ninja appends to it), and the run's new entries
// go into build_summary() as add_ninja_run() puts them, started at `start`.
inline void record_ninja_run(const fs::path& dir, const std::string& earlier,
                             const std::string& now, ascend_setup::WallClock::time_point start) {
  write_file(dir / ".ninja_log", earlier);
  const ascend_setup::NinjaLogEntries before = ascend_setup::ninja_log_entries(dir);
  write_file(dir / ".ninja_log", now);
  ascend_setup::add_ninja_run(dir, before, start);
}

}  // namespace test_support
