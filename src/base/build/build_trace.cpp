#include "base/build/build_report.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ascend_setup {

namespace {

long long micros(WallClock::time_point time) {
  return std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
}

nlohmann::json complete_event(std::string_view name, std::string_view category, long long ts,
                              long long dur, int tid) {
  return {{"name", name}, {"cat", category}, {"ph", "X"}, {"ts", ts},
          {"dur", dur},   {"pid", 1},        {"tid", tid}};
}

nlohmann::json thread_name(int tid, const std::string& name) {
  return {
      {"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json build_trace(const BuildSummary& summary,
                           const std::map<std::string, CacheOutcome>& outcomes) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", "ascend-setup build"}}}});
  events.push_back(thread_name(0, "phases"));
  for (const PhaseSpan& span : summary.phases) {
    events.push_back(complete_event(build_phase_name(span.phase), "phase", micros(span.start),
                                    std::llround(span.seconds * 1e6), 0));
  }
  // Jobs by start; each on the first lane free by then, so that a lane's
  // events never overlap (a viewer nests overlapping events of one thread).
  std::vector<const NinjaJob*> jobs;
  for (const NinjaJob& job : summary.jobs) {
    jobs.push_back(&job);
  }
  const auto start_of = [](const NinjaJob& job) {
    return micros(job.run_start) + job.start_ms * 1000;
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const NinjaJob* a, const NinjaJob* b) {
    return start_of(*a) < start_of(*b);
  });
  std::vector<long long> lane_ends;
  for (const NinjaJob* job : jobs) {
    const long long ts = start_of(*job);
    const long long dur = (job->end_ms - job->start_ms) * 1000;
    size_t lane = 0;
    while (lane < lane_ends.size() && lane_ends[lane] > ts) {
      ++lane;
    }
    if (lane == lane_ends.size()) {
      lane_ends.push_back(0);
      events.push_back(
          thread_name(static_cast<int>(lane) + 1, "ninja job lane " + std::to_string(lane + 1)));
    }
    lane_ends[lane] = ts + dur;
    nlohmann::json event = complete_event(job->output, "job", ts, dur, static_cast<int>(lane) + 1);
    if (const auto outcome = outcomes.find(job->output); outcome != outcomes.end()) {
      event["args"] = {{"compile cache", cache_outcome_name(outcome->second)}};
    }
    events.push_back(std::move(event));
  }
  return {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
}

}  // namespace ascend_setup
