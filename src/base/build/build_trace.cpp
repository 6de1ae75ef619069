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

// Lanes for intervals by start: each on the first lane free by then, so that
// a lane's events never overlap (a viewer nests overlapping events of one
// thread, and breaks on events that overlap without nesting).
class Lanes {
 public:
  // The lane of [start, start + dur), counted from 0.
  size_t place(long long start, long long dur) {
    size_t lane = 0;
    while (lane < ends_.size() && ends_[lane] > start) {
      ++lane;
    }
    if (lane == ends_.size()) {
      ends_.push_back(0);
    }
    ends_[lane] = start + dur;
    return lane;
  }
  size_t count() const { return ends_.size(); }

 private:
  std::vector<long long> ends_;
};

}  // namespace

nlohmann::json build_trace(const BuildSummary& summary,
                           const std::map<std::string, CacheOutcome>& outcomes) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", "ascend-setup build"}}}});
  // The phases by start, on lanes of their own: where a link ran while a
  // compile did, the two overlap on two lanes, as they ran.
  std::vector<const PhaseSpan*> spans;
  for (const PhaseSpan& span : summary.phases) {
    spans.push_back(&span);
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const PhaseSpan* a, const PhaseSpan* b) { return a->start < b->start; });
  Lanes phase_lanes;
  std::vector<nlohmann::json> phase_events;
  for (const PhaseSpan* span : spans) {
    const long long ts = micros(span->start);
    const long long dur = std::llround(span->seconds * 1e6);
    phase_events.push_back(complete_event(build_phase_name(span->phase), "phase", ts, dur,
                                          static_cast<int>(phase_lanes.place(ts, dur))));
  }
  const int phase_tids = static_cast<int>(std::max<size_t>(phase_lanes.count(), 1));
  for (int tid = 0; tid < phase_tids; ++tid) {
    events.push_back(thread_name(tid, tid == 0 ? "phases" : "phases " + std::to_string(tid + 1)));
  }
  for (nlohmann::json& event : phase_events) {
    events.push_back(std::move(event));
  }
  // Jobs by start, on the lanes after the phases'.
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
  Lanes job_lanes;
  for (const NinjaJob* job : jobs) {
    const long long ts = start_of(*job);
    const long long dur = (job->end_ms - job->start_ms) * 1000;
    const size_t lanes_before = job_lanes.count();
    const size_t lane = job_lanes.place(ts, dur);
    const int tid = phase_tids + static_cast<int>(lane);
    if (job_lanes.count() > lanes_before) {
      events.push_back(thread_name(tid, "ninja job lane " + std::to_string(lane + 1)));
    }
    nlohmann::json event = complete_event(job->output, "job", ts, dur, tid);
    if (const auto outcome = outcomes.find(job->output); outcome != outcomes.end()) {
      event["args"] = {{"compile cache", cache_outcome_name(outcome->second)}};
    }
    events.push_back(std::move(event));
  }
  return {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
}

}  // namespace ascend_setup
