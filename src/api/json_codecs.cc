#include "api/json_codecs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/strings.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::api {

using nlohmann::json;

std::string IsoUtc(SimTime t) {
  time_t s = static_cast<time_t>(t.seconds());
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
json Time(const std::optional<SimTime>& t) { return t ? json(t->seconds()) : json(nullptr); }
template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}
}  // namespace

json ToJson(const service::Prediction& p) {
  return json{{"duration_s", p.duration.seconds()}, {"low_s", p.low.seconds()},
              {"high_s", p.high.seconds()},         {"confidence", p.confidence},
              {"explanation", p.explanation},       {"engine", p.engine},
              {"made_at", p.made_at.seconds()}};
}

json ToJson(const service::LogMetrics& m) {
  return json{{"at", m.at.seconds()},
              {"step", Opt(m.step)},
              {"total_steps", Opt(m.total_steps)},
              {"loss", Opt(m.loss)},
              {"step_time_s", Opt(m.step_time_s)},
              {"progress", Opt(m.progress)},
              {"eta_s", m.eta ? json(m.eta->seconds()) : json(nullptr)},
              {"stalled", m.stalled},
              {"slowdown", m.slowdown},
              {"note", m.note},
              {"bytes_read", m.bytes_read},
              {"ranks", Opt(m.ranks)}};
}

json ToJson(const service::StartEstimate& e) {
  return json{{"job_id", e.job_id},
              {"estimated_start", Time(e.start)},
              {"estimated_start_iso", e.start ? json(IsoUtc(*e.start)) : json(nullptr)},
              {"nodes", e.nodes},
              {"pending_reason", e.reason},
              {"note", e.note}};
}

json ToJson(const service::JobView& v, bool detail) {
  const auto& j = v.job;
  json out{{"id", j.id},
           {"name", j.name},
           {"user", j.user},
           {"partition", j.partition},
           {"state", j.state},
           {"reason", j.reason},
           {"gpus", j.gpus},
           {"nodes", j.nodes},
           {"node_list", j.node_list},
           {"submit", j.submit.seconds()},
           {"start", Time(j.start)},
           {"end", Time(j.end)},
           {"time_limit_min", Opt(j.time_limit_min)},
           {"restarts", j.restarts},
           {"eligible", Time(j.eligible)},
           {"excluded_nodes", j.excluded_nodes},
           {"exit_code", j.exit_code},
           {"prediction", v.prediction ? ToJson(*v.prediction) : json(nullptr)},
           {"metrics", v.metrics ? ToJson(*v.metrics) : json(nullptr)},
           {"start_estimate", v.start_estimate ? ToJson(*v.start_estimate) : json(nullptr)},
           {"remaining", v.remaining ? json{{"remaining_s", v.remaining->remaining.seconds()},
                                            {"source", v.remaining->source}}
                                     : json(nullptr)}};
  if (detail) {
    out["priority"] = j.priority;
    out["comment"] = j.comment;
    out["work_dir"] = j.work_dir;
    out["std_out"] = v.log_path;
    out["log_problem"] = v.log_problem;
    out["slurm_expected_start"] = Time(j.expected_start);
    out["cpus"] = j.cpus;
    out["memory_mib"] = Opt(j.memory_mib);
    out["usage"] = v.usage ? service::JobUsageToJson(*v.usage) : json(nullptr);
  }
  return out;
}

json ToJson(const slurm::SlurmNode& n) {
  return json{{"name", n.name},
              {"state", n.state},
              {"flags", n.flags},
              {"gpus_total", n.gpus_total},
              {"gpus_used", n.gpus_used},
              {"cpus", n.cpus},
              {"reason", n.reason},
              {"drained", n.drained()},
              {"available", n.available()}};
}

json ToJson(const service::FailureRecord& f) {
  return json{{"id", f.id},
              {"job_id", f.job_id},
              {"run", f.run_key},
              {"at", f.at.seconds()},
              {"state", f.state},
              {"exit_code", f.exit_code},
              {"node_list", f.node_list},
              {"class", service::FailureClassName(f.cls)},
              {"category", f.category},
              {"reason", f.reason},
              {"evidence_line", f.evidence_line},
              {"evidence", f.evidence},
              {"log_captured", !f.log_copy.empty()},
              {"checkpoint", f.checkpoint.empty() ? json(nullptr) : json(f.checkpoint)},
              {"engine", f.engine}};
}

json ToJson(const service::ActionRecord& a) {
  using service::ActionKind;
  json out{{"id", a.id},
           {"at", a.at.seconds()},
           {"job_id", a.job_id},
           {"node", a.node},
           {"kind", service::ActionKindName(a.kind)},
           {"reason", a.reason},
           {"dry_run", a.dry_run},
           {"outcome", service::ActionOutcomeName(a.outcome)},
           {"detail", a.detail},
           {"skip_reason", a.skip_reason.empty() ? json(nullptr) : json(a.skip_reason)}};
  if (a.kind == ActionKind::kNotifyUser) {
    out["requeue_outcome"] =
        a.requeue_outcome ? json(service::ActionOutcomeName(*a.requeue_outcome)) : json(nullptr);
  }
  if (a.kind == ActionKind::kRequeue) {
    out["attempt"] = a.attempt;
    out["budget"] = a.budget;
    out["delay_s"] = a.delay ? json(a.delay->seconds()) : json(nullptr);
    out["release_at"] = Time(a.release_at);
    out["exclude_nodes"] = a.exclude_nodes;
  }
  if (a.kind == ActionKind::kRequeue || a.kind == ActionKind::kNotifyUser) {
    out["checkpoint"] = a.checkpoint.empty() ? json(nullptr) : json(a.checkpoint);
  }
  return out;
}

json ToJson(const service::SchedulingView& s) {
  json ranking = json::array();
  for (const auto& r : s.ranking) {
    ranking.push_back(json{{"job_id", r.job_id},
                           {"partition", r.partition},
                           {"rank", r.rank},
                           {"reason", service::RankReasonName(r.reason)},
                           {"priority", r.current},
                           {"target_priority", r.target},
                           {"waited_s", r.waited.seconds()},
                           {"predicted_s", r.predicted.seconds()}});
  }
  json left = json::array();
  for (const auto& [id, why] : s.left_alone) left.push_back(json{{"job_id", id}, {"why", why}});
  return json{{"mode", service::SchedulingModeName(s.mode)},
              {"policy", s.policy},
              {"max_changes_per_pass", s.max_changes_per_pass},
              {"max_wait_s", s.max_wait.seconds()},
              {"priority_type", s.priority_type},
              {"last_pass", s.last_pass ? json(s.last_pass->seconds()) : json(nullptr)},
              {"planned", s.planned},
              {"applied", s.applied},
              {"deferred", s.deferred},
              {"changes_total", s.changes_total},
              {"restored_total", s.restored_total},
              {"outstanding", s.outstanding},
              {"longest_wait_s", s.longest_wait.seconds()},
              {"last_error", s.last_error},
              {"ranking", std::move(ranking)},
              {"left_alone", std::move(left)}};
}

json ToJson(const service::MetricSample& m) {
  return json{{"at", m.at.seconds()},        {"step", Opt(m.step)},
              {"loss", Opt(m.loss)},         {"step_time_s", Opt(m.step_time_s)},
              {"progress", Opt(m.progress)}, {"eta_s", Opt(m.eta_s)},
              {"stalled", m.stalled},        {"slowdown", m.slowdown}};
}

json ToJson(const service::SubmitAdvice& a) {
  return json{{"estimate_s", a.prediction.duration.seconds()},
              {"prediction", ToJson(a.prediction)},
              {"suggested_time_limit_min", a.suggested_limit_min},
              {"time_limit_min", Opt(a.set_time_limit_min)},
              {"comment", a.comment},
              {"message", a.message}};
}

json ToJson(const store::StoredJob& s) {
  return json{{"id", s.job.id},
              {"name", s.job.name},
              {"user", s.job.user},
              {"partition", s.job.vc},
              {"submit", s.job.submit.seconds()},
              {"finish", Time(s.finish)},
              {"duration_s", s.finish ? json(s.job.duration.seconds()) : json(nullptr)},
              {"state", std::string(JobStateName(s.job.state))}};
}

Result<service::JobContext> EstimateRequestFromJson(std::string_view body) {
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("body is not a JSON object");
  }
  auto str = [&](const char* k) {
    auto it = doc.find(k);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  // Integers only; an unsigned value past int64 is out of every range below.
  auto num = [&](const char* k) -> std::optional<int64_t> {
    auto it = doc.find(k);
    if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}) return INT64_MAX;
    return it->get<int64_t>();
  };
  service::JobContext job;
  job.script = str("script");
  job.name = str("name");
  job.user = str("user");
  job.partition = str("partition");
  job.gpus =
      static_cast<int32_t>(std::clamp<int64_t>(num("gpus").value_or(0), 0, slurm::kMaxGpuCount));
  job.nodes = static_cast<int32_t>(std::clamp<int64_t>(num("nodes").value_or(1), 1, 1 << 20));
  job.time_limit_min = num("time_limit_min");
  return job;
}

void NormalizeEstimateRequest(service::JobContext& job) {
  if (job.time_limit_min &&
      (*job.time_limit_min <= 0 || *job.time_limit_min > slurm::kMaxTimeLimitMinutes)) {
    job.time_limit_min.reset();
  }
  if (job.name.empty()) job.name = "sbatch";
}

namespace {

Status BadField(std::string& field, const std::string& name, const std::string& why) {
  field = name;
  return Status::InvalidArgument(name + ": " + why);
}

Status ReadNodeList(const json& v, const std::string& name, std::vector<std::string>& out,
                    std::string& field) {
  if (!v.is_array()) return BadField(field, name, "expected an array of strings");
  if (v.size() > 1000) return BadField(field, name, "more than 1000 changes");
  for (const auto& item : v) {
    if (!item.is_string()) return BadField(field, name, "expected an array of strings");
    out.push_back(item.get<std::string>());
  }
  return Status::Ok();
}

Status ReadSets(const json& v, std::vector<std::pair<std::string, std::string>>& out,
                std::string& field) {
  if (!v.is_object()) return BadField(field, "set", "expected an object of KEY: value");
  for (const auto& [key, value] : v.items()) {
    if (value.is_string()) {
      out.emplace_back(key, value.get<std::string>());
    } else if (value.is_number_integer()) {
      out.emplace_back(key, value.dump());
    } else if (value.is_number_float() && std::isfinite(value.get<double>())) {
      out.emplace_back(key, fmt::format("{}", value.get<double>()));
    } else {
      return BadField(field, "set", key + ": expected a string or a number");
    }
  }
  return Status::Ok();
}

Status ReadCount(const json& v, const std::string& name, int64_t lo, int64_t hi, int64_t& out,
                 std::string& field) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
      v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    return BadField(field, name, fmt::format("expected an integer in {}..{}", lo, hi));
  }
  out = v.get<int64_t>();
  return Status::Ok();
}

}  // namespace

Result<sim::WhatIfScenario> WhatIfRequestFromJson(std::string_view body, std::string& field) {
  field.clear();
  sim::WhatIfScenario s;
  if (Trim(body).empty()) return s;
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("body is not a JSON object");
  }
  for (const auto& [key, v] : doc.items()) {
    if (key == "add_nodes") {
      SM_RETURN_IF_ERROR(ReadNodeList(v, key, s.add_nodes, field));
    } else if (key == "remove_nodes") {
      SM_RETURN_IF_ERROR(ReadNodeList(v, key, s.remove_nodes, field));
    } else if (key == "set") {
      SM_RETURN_IF_ERROR(ReadSets(v, s.sets, field));
    } else if (key == "policy" || key == "baseline_policy") {
      if (!v.is_string()) return BadField(field, key, "expected a policy name");
      (key == "policy" ? s.policy : s.baseline_policy) = v.get<std::string>();
    } else if (key == "load") {
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        return BadField(field, key, "expected a number");
      }
      s.load = v.get<double>();
    } else if (key == "seeds") {
      SM_RETURN_IF_ERROR(ReadCount(v, key, 1, 1000000, s.seeds, field));
    } else if (key == "seed") {
      int64_t seed = 0;
      SM_RETURN_IF_ERROR(ReadCount(v, key, 0, INT64_MAX, seed, field));
      s.seed = static_cast<uint64_t>(seed);
    } else {
      return BadField(field, key,
                      "unknown field (expected add_nodes, remove_nodes, load, policy, "
                      "baseline_policy, set, seeds, seed)");
    }
  }
  return s;
}

}  // namespace schedmate::api
