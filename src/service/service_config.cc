#include "service/service_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <functional>
#include <map>
#include <type_traits>

#include "core/file_util.h"
#include "core/job.h"
#include "core/strings.h"
#include "service/service_store.h"
#include "store/db.h"

namespace schedmate::service {

std::string_view SubmitPolicyName(SubmitPolicy p) {
  switch (p) {
    case SubmitPolicy::kOff:
      return "off";
    case SubmitPolicy::kNote:
      return "note";
    case SubmitPolicy::kSet:
      return "set";
    case SubmitPolicy::kCap:
      return "cap";
  }
  return "off";
}

std::string_view SchedulingModeName(SchedulingMode m) {
  return m == SchedulingMode::kOrder ? "order" : "advise";
}

std::string_view LogAccessName(LogAccess a) {
  switch (a) {
    case LogAccess::kToken:
      return "token";
    case LogAccess::kAll:
      return "all";
    case LogAccess::kOff:
      return "off";
  }
  return "off";
}

std::string ServiceConfig::DatabasePath() const {
  return database.empty() ? data_dir + "/schedmate.db" : database;
}
std::string ServiceConfig::StoreUrl() const {
  return store_url.empty() ? DatabasePath() : store_url;
}
std::string ServiceConfig::CapturedLogDir() const { return data_dir + "/logs"; }
std::vector<ClusterConfig> ServiceConfig::Clusters() const {
  if (!clusters.empty()) return clusters;
  return {ClusterConfig{.name = "default"}};
}

namespace {

// Reads one scalar key into a field, validating it; errors carry file:line: key.
class Reader {
 public:
  Reader(std::string source) : source_(std::move(source)) {}

  Status Error(const YAML::Node& node, const std::string& key, const std::string& what) const {
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", source_, line, key, what));
  }
  std::string Text(const YAML::Node& n) const {
    return n.IsScalar() ? n.Scalar() : "(not a scalar)";
  }

  Status Int(const YAML::Node& n, const std::string& key, int64_t lo, int64_t hi, int64_t& out) {
    auto v = n.IsScalar() ? ParseInt(n.Scalar()) : std::nullopt;
    if (!v || *v < lo || *v > hi) {
      return Error(n, key, fmt::format("expected an integer in {}..{}, got '{}'", lo, hi, Text(n)));
    }
    out = *v;
    return Status::Ok();
  }
  Status Double(const YAML::Node& n, const std::string& key, double lo, double hi, double& out) {
    auto v = n.IsScalar() ? ParseDouble(n.Scalar()) : std::nullopt;
    if (!v || !(*v >= lo && *v <= hi)) {
      return Error(n, key, fmt::format("expected a number in {}..{}, got '{}'", lo, hi, Text(n)));
    }
    out = *v;
    return Status::Ok();
  }
  Status Bool(const YAML::Node& n, const std::string& key, bool& out) {
    std::string t = n.IsScalar() ? ToLower(n.Scalar()) : "";
    if (t == "true" || t == "yes" || t == "on") {
      out = true;
    } else if (t == "false" || t == "no" || t == "off") {
      out = false;
    } else {
      return Error(n, key, fmt::format("expected true or false, got '{}'", Text(n)));
    }
    return Status::Ok();
  }
  Status String(const YAML::Node& n, const std::string& key, std::string& out) {
    if (!n.IsScalar()) return Error(n, key, "expected a string");
    out = n.Scalar();
    return Status::Ok();
  }
  Status Seconds(const YAML::Node& n, const std::string& key, double lo, double hi, Duration& out) {
    double v = 0;
    SM_RETURN_IF_ERROR(Double(n, key, lo, hi, v));
    out = Duration::FromSecondsF(v);
    return Status::Ok();
  }

 private:
  std::string source_;
};

// slurm.clusters: a list of {name, slurm_conf | cluster}; names unique, unknown keys refused.
Status ReadClusters(Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
  if (!n.IsSequence() || n.size() == 0) {
    return r.Error(n, k, "expected a list of clusters ({name, slurm_conf} or {name, cluster})");
  }
  c.clusters.clear();
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node& item = n[i];
    const std::string at = fmt::format("{}[{}]", k, i);
    if (!item.IsMap())
      return r.Error(item, at, "expected a mapping with name and slurm_conf or cluster");
    ClusterConfig cc;
    for (const auto& kv : item) {
      const std::string key = kv.first.as<std::string>();
      std::string* field = key == "name"           ? &cc.name
                           : key == "slurm_conf"   ? &cc.slurm_conf
                           : key == "cluster"      ? &cc.cluster
                           : key == "jobcomp_path" ? &cc.jobcomp_path
                                                   : nullptr;
      if (field == nullptr) {
        return r.Error(kv.first, at + "." + key,
                       "unknown key (expected name, slurm_conf, cluster, jobcomp_path)");
      }
      SM_RETURN_IF_ERROR(r.String(kv.second, at + "." + key, *field));
      if (field->empty()) return r.Error(kv.second, at + "." + key, "must not be empty");
    }
    if (cc.name.empty()) return r.Error(item, at + ".name", "required");
    if (!ValidClusterName(cc.name)) {
      return r.Error(item["name"], at + ".name",
                     fmt::format("'{}' is not a cluster name (1..64 of A-Z a-z 0-9 _ . -, "
                                 "starting with a letter or digit)",
                                 cc.name));
    }
    if (cc.slurm_conf.empty() == cc.cluster.empty()) {
      return r.Error(item, at, "set exactly one of slurm_conf and cluster");
    }
    if (!cc.cluster.empty() && !ValidClusterName(cc.cluster)) {
      return r.Error(item["cluster"], at + ".cluster",
                     fmt::format("'{}' is not a Slurm cluster name", cc.cluster));
    }
    for (const auto& earlier : c.clusters) {
      if (earlier.name == cc.name) {
        return r.Error(item["name"], at + ".name",
                       fmt::format("duplicate cluster name '{}'", cc.name));
      }
    }
    c.clusters.push_back(std::move(cc));
  }
  return Status::Ok();
}

using Setter =
    std::function<Status(Reader&, const YAML::Node&, const std::string&, ServiceConfig&)>;

// An enum setting given by the name of one of `values` (case-insensitive); anything else is an
// error: "<expected>; got '<value>'".
template <typename E, size_t N, typename NameOf>
Setter NamedValue(E ServiceConfig::*field, std::array<E, N> values, NameOf name_of,
                  std::string expected) {
  return [=](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) -> Status {
    std::string v;
    SM_RETURN_IF_ERROR(r.String(n, k, v));
    for (E e : values) {
      if (ToLower(v) == name_of(e)) {
        c.*field = e;
        return Status::Ok();
      }
    }
    return r.Error(n, k, fmt::format("{}; got '{}'", expected, v));
  };
}

using SchemaMap = std::map<std::string, std::map<std::string, Setter>>;

// Setters of a field inside a nested option struct: `get` picks the field out of the config.
template <typename Get>
Setter NestedSeconds(Get get, double lo, double hi) {
  return [get, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
    return r.Seconds(n, k, lo, hi, get(c));
  };
}
template <typename Get>
Setter NestedReal(Get get, double lo, double hi) {
  return [get, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
    return r.Double(n, k, lo, hi, get(c));
  };
}
template <typename Get>
Setter NestedInt(Get get, int64_t lo, int64_t hi) {
  return [get, lo, hi](Reader& r, const YAML::Node& n, const std::string& k,
                       ServiceConfig& c) -> Status {
    int64_t v = 0;
    SM_RETURN_IF_ERROR(r.Int(n, k, lo, hi, v));
    get(c) = static_cast<std::remove_reference_t<decltype(get(c))>>(v);
    return Status::Ok();
  };
}

// The usage: and anomalies: sections.
void AddUsageAndAnomalyKeys(SchemaMap& s) {
  s["usage"]["gpu_source"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                                ServiceConfig& c) -> Status {
    std::string v;
    SM_RETURN_IF_ERROR(r.String(n, k, v));
    for (auto g : {GpuSource::kNvidiaSmi, GpuSource::kDcgm, GpuSource::kOff}) {
      if (ToLower(v) == GpuSourceName(g)) {
        c.usage.gpu_source = g;
        return Status::Ok();
      }
    }
    return r.Error(n, k, fmt::format("expected nvidia-smi, dcgm or off; got '{}'", v));
  };
  s["usage"]["nvidia_smi"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                                ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.usage.nvidia_smi));
    if (c.usage.nvidia_smi.empty()) return r.Error(n, k, "must not be empty");
    return Status::Ok();
  };
  s["usage"]["dcgm_url"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                              ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.usage.dcgm_url));
    if (!StartsWith(c.usage.dcgm_url, "http://") && !StartsWith(c.usage.dcgm_url, "https://"))
      return r.Error(n, k, fmt::format("expected an http(s) URL, got '{}'", c.usage.dcgm_url));
    return Status::Ok();
  };
  s["usage"]["sstat"] = [](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
    return r.Bool(n, k, c.usage.sstat);
  };
  s["usage"]["interval_s"] =
      NestedSeconds([](ServiceConfig& c) -> Duration& { return c.usage.interval; }, 0.05, 86400);
  s["usage"]["timeout_s"] =
      NestedSeconds([](ServiceConfig& c) -> Duration& { return c.usage.timeout; }, 0.1, 600);
  s["usage"]["max_jobs_per_pass"] =
      NestedInt([](ServiceConfig& c) -> int& { return c.usage.max_jobs_per_pass; }, 0, 100000);
  s["usage"]["parallel"] =
      NestedInt([](ServiceConfig& c) -> int& { return c.usage.parallel; }, 1, 64);
  auto a = [](auto field) {
    return [field](ServiceConfig & c) -> auto& { return c.anomalies.*field; };
  };
  s["anomalies"]["idle_gpu_util_pct"] = NestedReal(a(&AnomalyOptions::idle_gpu_util_pct), 0, 100);
  s["anomalies"]["busy_gpu_memory_mib"] =
      NestedReal(a(&AnomalyOptions::busy_gpu_memory_mib), 0, 1e7);
  s["anomalies"]["idle_gpu_min_s"] = NestedSeconds(a(&AnomalyOptions::min_idle_gpu), 0, 7 * 86400);
  s["anomalies"]["over_requested_min_s"] =
      NestedSeconds(a(&AnomalyOptions::min_over_requested), 0, 7 * 86400);
  s["anomalies"]["stalled_min_s"] = NestedSeconds(a(&AnomalyOptions::min_stalled), 0, 7 * 86400);
  s["anomalies"]["slowed_min_s"] = NestedSeconds(a(&AnomalyOptions::min_slowed), 0, 7 * 86400);
  s["anomalies"]["cpu_use_below"] = NestedReal(a(&AnomalyOptions::cpu_use_below), 0, 1);
  s["anomalies"]["memory_use_below"] = NestedReal(a(&AnomalyOptions::memory_use_below), 0, 1);
  s["anomalies"]["min_cpus"] = NestedInt(a(&AnomalyOptions::min_cpus), 1, 1 << 20);
  s["anomalies"]["min_memory_mib"] =
      NestedInt(a(&AnomalyOptions::min_memory_mib), 1, int64_t{1} << 40);
  s["anomalies"]["limit_factor"] = NestedReal(a(&AnomalyOptions::limit_factor), 1, 1000);
  s["anomalies"]["limit_slack_s"] =
      NestedSeconds(a(&AnomalyOptions::limit_slack), 0, 365.0 * 86400);
  s["anomalies"]["node_failure_count"] =
      NestedInt(a(&AnomalyOptions::node_failure_count), 1, 1000000);
  s["anomalies"]["repeat_count"] = NestedInt(a(&AnomalyOptions::repeat_count), 1, 1000000);
  s["anomalies"]["failure_window_s"] =
      NestedSeconds(a(&AnomalyOptions::failure_window), 1, 365.0 * 86400);
}

std::map<std::string, std::map<std::string, Setter>> Schema() {
  std::map<std::string, std::map<std::string, Setter>> s;
  auto str = [](std::string ServiceConfig::*f) {
    return [f](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      return r.String(n, k, c.*f);
    };
  };
  auto boolean = [](bool ServiceConfig::*f) {
    return [f](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      return r.Bool(n, k, c.*f);
    };
  };
  auto seconds = [](Duration ServiceConfig::*f, double lo, double hi) {
    return [f, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      return r.Seconds(n, k, lo, hi, c.*f);
    };
  };
  auto int64 = [](int64_t ServiceConfig::*f, int64_t lo, int64_t hi) {
    return [f, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      return r.Int(n, k, lo, hi, c.*f);
    };
  };
  auto int32 = [](int ServiceConfig::*f, int64_t lo, int64_t hi) {
    return [f, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      int64_t v = 0;
      SM_RETURN_IF_ERROR(r.Int(n, k, lo, hi, v));
      c.*f = static_cast<int>(v);
      return Status::Ok();
    };
  };
  auto real = [](double ServiceConfig::*f, double lo, double hi) {
    return [f, lo, hi](Reader& r, const YAML::Node& n, const std::string& k, ServiceConfig& c) {
      return r.Double(n, k, lo, hi, c.*f);
    };
  };
  s["service"]["data_dir"] = str(&ServiceConfig::data_dir);
  s["service"]["database"] = str(&ServiceConfig::database);
  s["store"]["url"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                         ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.store_url));
    if (c.store_url.empty()) return Status::Ok();  // the SQLite file service.database names
    if (auto where = store::ParseStoreUrl(c.store_url); !where.ok()) {
      return r.Error(n, k, where.status().message());
    }
    return Status::Ok();
  };
  s["store"]["instance_id"] = str(&ServiceConfig::instance_id);
  s["service"]["poll_interval_s"] = seconds(&ServiceConfig::poll_interval, 0.05, 3600);
  s["service"]["dry_run"] = boolean(&ServiceConfig::dry_run);
  s["slurm"]["jobcomp_path"] = str(&ServiceConfig::jobcomp_path);
  s["slurm"]["use_sacct"] = boolean(&ServiceConfig::use_sacct);
  s["slurm"]["command_timeout_s"] = seconds(&ServiceConfig::command_timeout, 0.1, 600);
  s["slurm"]["clusters"] = ReadClusters;
  s["api"]["listen"] = str(&ServiceConfig::listen);
  s["api"]["port"] = int32(&ServiceConfig::port, 0, 65535);
  s["api"]["token"] = str(&ServiceConfig::token);
  s["api"]["token_file"] = str(&ServiceConfig::token_file);
  s["api"]["max_body_bytes"] = int64(&ServiceConfig::max_body_bytes, 1024, int64_t{1} << 30);
  s["api"]["request_timeout_s"] = seconds(&ServiceConfig::request_timeout, 0.1, 300);
  s["api"]["threads"] = int32(&ServiceConfig::threads, 1, 256);
  s["api"]["max_connections"] = int32(&ServiceConfig::max_connections, 1, 16384);
  s["api"]["allow_remote"] = boolean(&ServiceConfig::allow_remote);
  s["api"]["serve_logs"] = NamedValue(
      &ServiceConfig::serve_logs, std::array{LogAccess::kToken, LogAccess::kAll, LogAccess::kOff},
      LogAccessName, "expected one of token, all, off");
  s["submit"]["policy"] = NamedValue(
      &ServiceConfig::submit_policy,
      std::array{SubmitPolicy::kOff, SubmitPolicy::kNote, SubmitPolicy::kSet, SubmitPolicy::kCap},
      SubmitPolicyName, "expected one of off, note, set, cap");
  s["submit"]["limit_margin"] = real(&ServiceConfig::limit_margin, 1.0, 100.0);
  s["submit"]["min_limit_min"] = int64(&ServiceConfig::min_limit_min, 1, 525600);
  s["submit"]["max_limit_min"] = int64(&ServiceConfig::max_limit_min, 1, 525600);
  s["submit"]["min_confidence"] = real(&ServiceConfig::min_confidence, 0.0, 1.0);
  s["actions"]["max_drained_nodes"] = int32(&ServiceConfig::max_drained_nodes, 0, 100000);
  s["actions"]["retries_per_job"] = int32(&ServiceConfig::retries_per_job, 0, 100);
  s["actions"]["drain_on_infra"] = boolean(&ServiceConfig::drain_on_infra);
  s["actions"]["requeue_on_infra"] = boolean(&ServiceConfig::requeue_on_infra);
  s["actions"]["backoff_base_s"] = seconds(&ServiceConfig::backoff_base, 0, 86400);
  s["actions"]["backoff_cap_s"] = seconds(&ServiceConfig::backoff_cap, 0, 7 * 86400);
  s["actions"]["exclude_failed_nodes"] = boolean(&ServiceConfig::exclude_failed_nodes);
  s["actions"]["hold_after_budget"] = boolean(&ServiceConfig::hold_after_budget);
  s["actions"]["hold_unknown"] = boolean(&ServiceConfig::hold_unknown);
  s["actions"]["annotate_comment"] = boolean(&ServiceConfig::annotate_comment);
  s["scheduling"]["mode"] = NamedValue(&ServiceConfig::scheduling_mode,
                                       std::array{SchedulingMode::kAdvise, SchedulingMode::kOrder},
                                       SchedulingModeName, "expected advise or order");
  s["scheduling"]["policy"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                                 ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.order.policy));
    static const char* kKnown[] = {"fifo", "sjf", "srtf", "qssf", "tiresias", "lucid", "schedmate"};
    for (const char* known : kKnown)
      if (c.order.policy == known) return Status::Ok();
    return r.Error(n, k,
                   fmt::format("expected one of fifo, sjf, srtf, qssf, tiresias, lucid, "
                               "schedmate; got '{}'",
                               c.order.policy));
  };
  s["scheduling"]["max_changes_per_pass"] = NestedInt(
      [](ServiceConfig & c) -> auto& { return c.order.max_changes; }, 0, 100000);
  s["scheduling"]["max_wait_s"] = NestedSeconds(
      [](ServiceConfig & c) -> auto& { return c.order.max_wait; }, 1, 365.0 * 86400);
  s["scheduling"]["reorder_nice"] = boolean(&ServiceConfig::reorder_nice);
  s["scheduling"]["reorder_explicit_priority"] = boolean(&ServiceConfig::reorder_explicit_priority);
  s["scheduling"]["priority_min"] = NestedInt(
      [](ServiceConfig & c) -> auto& { return c.order.priority_min; }, 1, 4294967293);
  s["scheduling"]["priority_max"] = NestedInt(
      [](ServiceConfig & c) -> auto& { return c.order.priority_max; }, 1, 4294967293);
  s["tracker"]["stall_after_s"] = seconds(&ServiceConfig::stall_after, 1, 7 * 86400);
  s["tracker"]["slowdown_ratio"] = real(&ServiceConfig::slowdown_ratio, 1.0, 100.0);
  s["tracker"]["metrics_interval_s"] = seconds(&ServiceConfig::metrics_interval, 0, 86400);
  s["tracker"]["max_samples_per_job"] = int32(&ServiceConfig::max_samples_per_job, 1, 1000000);
  AddUsageAndAnomalyKeys(s);
  s["failure"]["capture_bytes"] = int64(&ServiceConfig::capture_bytes, 1024, int64_t{1} << 32);
  s["llm"]["engine"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                          ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.llm_engine));
    if (c.llm_engine != "builtin" && c.llm_engine != "llm" && c.llm_engine != "auto") {
      return r.Error(n, k, fmt::format("expected builtin, llm or auto; got '{}'", c.llm_engine));
    }
    return Status::Ok();
  };
  s["llm"]["config"] = str(&ServiceConfig::llm_config);
  s["whatif"]["trace"] = str(&ServiceConfig::whatif_trace);
  s["whatif"]["format"] = [](Reader& r, const YAML::Node& n, const std::string& k,
                             ServiceConfig& c) -> Status {
    SM_RETURN_IF_ERROR(r.String(n, k, c.whatif_format));
    if (!ParseTraceFormat(c.whatif_format)) {
      return r.Error(n, k, fmt::format("unknown trace format '{}'", c.whatif_format));
    }
    return Status::Ok();
  };
  s["whatif"]["slurm_conf"] = str(&ServiceConfig::whatif_slurm_conf);
  s["whatif"]["max_jobs"] = int64(&ServiceConfig::whatif_max_jobs, 2, 10'000'000);
  s["whatif"]["max_seeds"] = int32(&ServiceConfig::whatif_max_seeds, 1, 100);
  s["whatif"]["timeout_s"] = seconds(&ServiceConfig::whatif_timeout, 0.01, 3600);
  return s;
}

}  // namespace

Result<ServiceConfig> ParseServiceConfig(const std::string& yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  ServiceConfig config;
  if (root.IsNull()) return config;
  if (!root.IsMap())
    return Status::InvalidArgument(source + ": expected a mapping at the top level");
  static const auto schema = Schema();
  Reader reader(source);
  try {
    for (const auto& section : root) {
      std::string name = section.first.as<std::string>();
      auto sit = schema.find(name);
      if (sit == schema.end()) {
        return reader.Error(
            section.first, name,
            "unknown section (expected service, slurm, api, submit, actions, scheduling, tracker, "
            "usage, anomalies, failure, llm or whatif)");
      }
      if (section.second.IsNull()) continue;
      if (!section.second.IsMap()) return reader.Error(section.second, name, "expected a mapping");
      for (const auto& kv : section.second) {
        std::string key = kv.first.as<std::string>();
        std::string dotted = name + "." + key;
        auto kit = sit->second.find(key);
        if (kit == sit->second.end()) return reader.Error(kv.first, dotted, "unknown key");
        SM_RETURN_IF_ERROR(kit->second(reader, kv.second, dotted, config));
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  if (config.min_limit_min > config.max_limit_min) {
    return Status::InvalidArgument(source +
                                   ": submit.min_limit_min must not exceed submit.max_limit_min");
  }
  if (config.backoff_cap < config.backoff_base) {
    return Status::InvalidArgument(
        source + ": actions.backoff_cap_s must not be below actions.backoff_base_s");
  }
  if (config.order.priority_max - config.order.priority_min < 2) {
    return Status::InvalidArgument(
        source + ": scheduling.priority_max must exceed scheduling.priority_min by at least 2");
  }
  if (config.data_dir.empty())
    return Status::InvalidArgument(source + ": service.data_dir must not be empty");
  if (!config.clusters.empty() && !config.jobcomp_path.empty()) {
    return Status::InvalidArgument(
        source + ": with slurm.clusters, set jobcomp_path per cluster, not slurm.jobcomp_path");
  }
  if (config.use_sacct && !config.jobcomp_path.empty()) {
    return Status::InvalidArgument(source +
                                   ": set either slurm.jobcomp_path or slurm.use_sacct, not both");
  }
  return config;
}

Result<ServiceConfig> LoadServiceConfig(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, 1 << 20));
  return ParseServiceConfig(text, path);
}

}  // namespace schedmate::service
