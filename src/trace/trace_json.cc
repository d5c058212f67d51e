#include "trace/trace_json.h"

#include <string>

namespace schedmate::trace {

nlohmann::json TraceStatsToJson(const JobTable& t, const TraceStats& s) {
  nlohmann::json j;
  j["source"] = t.source;
  j["format"] = std::string(TraceFormatName(t.format));
  j["jobs"] = s.jobs;
  j["rows_read"] = s.rows_read;
  j["rows_skipped"] = s.rows_skipped;
  j["skip_reasons"] = t.skip_reasons;
  j["first_submit_s"] = s.first_submit.seconds_f();
  j["last_submit_s"] = s.last_submit.seconds_f();
  j["span_s"] = (s.last_submit - s.first_submit).seconds_f();
  j["mean_interarrival_s"] = s.mean_interarrival_s;
  j["users"] = s.users;
  j["vcs"] = s.vcs;
  // An array keeps the bucket order (JSON objects print sorted by key).
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& [k, v] : s.gpu_histogram) hist.push_back({{"gpus", k}, {"jobs", v}});
  j["gpu_histogram"] = hist;
  j["durations_known"] = s.durations_known;
  j["duration_s"] = {{"p50", s.p50.seconds_f()},
                     {"p90", s.p90.seconds_f()},
                     {"p99", s.p99.seconds_f()},
                     {"mean", s.mean.seconds_f()},
                     {"max", s.max.seconds_f()}};
  j["gpu_hours"] = s.gpu_hours;
  nlohmann::json states = nlohmann::json::object();
  for (const auto& [k, v] : s.states) states[k] = v;
  j["states"] = states;
  return j;
}

}  // namespace schedmate::trace
