#include "service/gpu_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/strings.h"
#include "llm/http_transport.h"
#include "slurm/slurm_backend.h"

namespace schedmate::service {
namespace {

constexpr size_t kMaxCachedJobs = 10000;

std::string Where(std::string_view source, int line) { return fmt::format("{}:{}", source, line); }

std::optional<double> FiniteNumber(std::string_view text) {
  auto v = ParseDouble(Trim(text));
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

// `{a="x",b="y"}` starting at text[0] == '{' -> labels; `end` past the '}'. nullopt if malformed.
std::optional<std::map<std::string, std::string>> ParseLabels(std::string_view text, size_t& end) {
  std::map<std::string, std::string> labels;
  size_t i = 1;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) return std::nullopt;
    if (text[i] == '}') {
      end = i + 1;
      return labels;
    }
    size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"')
      return std::nullopt;
    std::string name(Trim(text.substr(i, eq - i)));
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value += text[j] == 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return std::nullopt;
    labels[name] = std::move(value);
    i = j + 1;
  }
}

}  // namespace

std::string_view GpuSourceName(GpuSource s) {
  switch (s) {
    case GpuSource::kOff:
      return "off";
    case GpuSource::kNvidiaSmi:
      return "nvidia-smi";
    case GpuSource::kDcgm:
      return "dcgm";
  }
  return "off";
}

nlohmann::json JobUsageToJson(const JobUsage& u) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : u.gpus) {
    gpus.push_back({{"node", g.node},
                    {"index", g.index},
                    {"utilization_pct",
                     g.utilization_pct ? nlohmann::json(*g.utilization_pct) : nlohmann::json()},
                    {"memory_used_mib", g.memory_used_mib}});
  }
  nlohmann::json j = {{"at", u.at.seconds()},
                      {"gpu_source", u.gpu_source},
                      {"gpus", std::move(gpus)},
                      {"cpu_seconds", u.cpu_seconds ? nlohmann::json(*u.cpu_seconds) : nullptr},
                      {"memory_bytes", u.memory_bytes ? nlohmann::json(*u.memory_bytes) : nullptr}};
  if (!u.gpu_error.empty()) j["gpu_error"] = u.gpu_error;
  if (!u.usage_error.empty()) j["usage_error"] = u.usage_error;
  return j;
}

Result<std::vector<GpuSample>> ParseNvidiaSmiCsv(std::string_view text, std::string_view node,
                                                 std::string_view source) {
  std::vector<GpuSample> out;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = Trim(line);
    if (line.empty()) continue;
    std::vector<std::string_view> f = Split(line, ',');
    if (f.size() != 3) {
      return Status::InvalidArgument(
          fmt::format("{}: expected 'index, utilization.gpu, memory.used', got '{}'",
                      Where(source, line_no), Utf8Prefix(line, 80)));
    }
    GpuSample s;
    s.node = std::string(node);
    auto index = ParseInt(Trim(f[0]));
    auto memory = FiniteNumber(f[2]);
    if (!index || *index < 0 || *index > 1023 || !memory || *memory < 0) {
      return Status::InvalidArgument(fmt::format("{}: bad index or memory.used in '{}'",
                                                 Where(source, line_no), Utf8Prefix(line, 80)));
    }
    s.index = static_cast<int>(*index);
    s.memory_used_mib = *memory;
    std::string_view util = Trim(f[1]);
    if (!util.empty() && util.front() != '[') {
      s.utilization_pct = FiniteNumber(util);
      if (!s.utilization_pct || *s.utilization_pct < 0 || *s.utilization_pct > 100) {
        return Status::InvalidArgument(fmt::format("{}: utilization.gpu '{}' is not 0..100",
                                                   Where(source, line_no), Utf8Prefix(util, 20)));
      }
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const GpuSample& a, const GpuSample& b) { return a.index < b.index; });
  return out;
}

Result<std::vector<GpuSample>> ParseDcgmMetrics(std::string_view text, std::string_view source) {
  std::map<std::pair<std::string, int>, GpuSample> by_gpu;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    const bool util = line.rfind("DCGM_FI_DEV_GPU_UTIL", 0) == 0;
    const bool fb = line.rfind("DCGM_FI_DEV_FB_USED", 0) == 0;
    if (!util && !fb) continue;
    size_t brace = line.find_first_of("{ ");
    std::string_view name = line.substr(0, brace);
    if (name != "DCGM_FI_DEV_GPU_UTIL" && name != "DCGM_FI_DEV_FB_USED") continue;
    if (brace == std::string_view::npos || line[brace] != '{') {
      return Status::InvalidArgument(
          fmt::format("{}: {} without labels (gpu, Hostname)", Where(source, line_no), name));
    }
    size_t end = 0;
    auto labels = ParseLabels(line.substr(brace), end);
    if (!labels) {
      return Status::InvalidArgument(fmt::format("{}: malformed labels in '{}'",
                                                 Where(source, line_no), Utf8Prefix(line, 80)));
    }
    std::vector<std::string_view> rest = Split(Trim(line.substr(brace + end)), ' ');
    auto value = rest.empty() ? std::nullopt : FiniteNumber(rest[0]);
    auto gpu_label = labels->find("gpu");
    const int64_t gpu = gpu_label == labels->end() ? -1 : ParseInt(gpu_label->second).value_or(-1);
    auto host = labels->find("Hostname");
    if (!value || gpu < 0 || gpu > 1023 || host == labels->end()) {
      return Status::InvalidArgument(
          fmt::format("{}: need gpu and Hostname labels and a number in '{}'",
                      Where(source, line_no), Utf8Prefix(line, 80)));
    }
    GpuSample& s = by_gpu[{host->second, static_cast<int>(gpu)}];
    s.node = host->second;
    s.index = static_cast<int>(gpu);
    if (util) {
      s.utilization_pct = std::clamp(*value, 0.0, 100.0);
    } else {
      s.memory_used_mib = std::max(0.0, *value);
    }
  }
  std::vector<GpuSample> out;
  for (auto& [key, s] : by_gpu) out.push_back(std::move(s));
  return out;
}

std::vector<GpuSample> JobGpus(const std::vector<GpuSample>& node_samples,
                               const std::vector<int>& indices) {
  std::vector<GpuSample> out;
  if (node_samples.size() == indices.size()) {
    out = node_samples;
  } else {
    for (const auto& s : node_samples)
      if (std::find(indices.begin(), indices.end(), s.index) != indices.end()) out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const GpuSample& a, const GpuSample& b) { return a.index < b.index; });
  return out;
}

SlurmUsageProbe::SlurmUsageProbe(slurm::SlurmBackend& backend, llm::HttpTransport* http,
                                 UsageProbeOptions options)
    : backend_(backend), http_(http), options_(std::move(options)) {}

void SlurmUsageProbe::ProbeNode(const slurm::SlurmJob& job, const std::string& node,
                                const std::vector<int>& indices, JobUsage& usage) {
  auto fail = [&](const std::string& what) {
    if (!usage.gpu_error.empty()) usage.gpu_error += "; ";
    usage.gpu_error += node + ": " + what;
  };
  Result<std::vector<GpuSample>> samples = Status::Internal("no GPU source");
  if (options_.gpu_source == GpuSource::kNvidiaSmi) {
    auto out =
        backend_.RunInJob(job.id, node,
                          {options_.nvidia_smi, "--query-gpu=index,utilization.gpu,memory.used",
                           "--format=csv,noheader,nounits"},
                          options_.timeout);
    if (!out.ok()) return fail(out.status().message());
    if (out->exit_code != 0) {
      return fail(fmt::format("nvidia-smi exited {}: {}", out->exit_code,
                              Utf8Prefix(Trim(out->out + out->err), 200)));
    }
    samples = ParseNvidiaSmiCsv(out->out, node, "nvidia-smi@" + node);
  } else {
    if (http_ == nullptr) return fail("no HTTP client for the DCGM exporter");
    llm::HttpRequest req;
    req.method = "GET";
    req.url = options_.dcgm_url;
    for (size_t at = req.url.find("{node}"); at != std::string::npos;
         at = req.url.find("{node}", at + node.size())) {
      req.url.replace(at, 6, node);
    }
    req.connect_timeout = options_.timeout;
    req.total_timeout = options_.timeout;
    req.max_response_bytes = size_t{16} << 20;
    auto res = http_->Send(req);
    if (!res.ok()) return fail(res.status().message());
    if (res->status != 200) return fail(fmt::format("{} answered {}", req.url, res->status));
    auto all = ParseDcgmMetrics(res->body, req.url);
    if (!all.ok()) return fail(all.status().message());
    // Exporters label with the host name, which may be the short or the full one.
    std::vector<GpuSample> mine;
    for (auto& s : *all) {
      if (s.node == node || s.node.rfind(node + ".", 0) == 0) {
        s.node = node;
        mine.push_back(std::move(s));
      }
    }
    samples = std::move(mine);
  }
  if (!samples.ok()) return fail(samples.status().message());
  std::vector<GpuSample> own = JobGpus(*samples, indices);
  if (own.size() != indices.size()) {
    fail(fmt::format("{} of the job's {} GPUs reported", own.size(), indices.size()));
  }
  usage.gpus.insert(usage.gpus.end(), own.begin(), own.end());
}

// The job's node -> GPU indices for this run (cached per run), or an error message.
Result<std::map<std::string, std::vector<int>>> SlurmUsageProbe::GpuIndices(
    const slurm::SlurmJob& job) {
  const SimTime start = job.start.value_or(SimTime());
  {
    std::lock_guard lock(indices_mu_);
    auto cached = indices_.find(job.id);
    if (cached != indices_.end() && cached->second.first == start) return cached->second.second;
  }
  SM_ASSIGN_OR_RETURN(auto indices, backend_.JobGpuIndices(job.id));
  if (indices.empty()) return Status::NotFound("scontrol shows no GPU indices for the job");
  std::lock_guard lock(indices_mu_);
  if (indices_.size() >= kMaxCachedJobs) indices_.clear();
  indices_.insert_or_assign(job.id, std::make_pair(start, indices));
  return indices;
}

Result<JobUsage> SlurmUsageProbe::Probe(const slurm::SlurmJob& job, SimTime now) {
  JobUsage usage;
  usage.at = now;
  if (options_.gpu_source != GpuSource::kOff && job.gpus > 0) {
    usage.gpu_source = std::string(GpuSourceName(options_.gpu_source));
    auto indices = GpuIndices(job);
    if (!indices.ok()) {
      usage.gpu_error = indices.status().message();
    } else {
      for (const auto& [node, idx] : *indices) ProbeNode(job, node, idx, usage);
    }
  }
  if (options_.sstat) {
    auto steps = backend_.JobStepUsage(job.id);
    if (!steps.ok()) {
      usage.usage_error = steps.status().message();
    } else {
      for (const auto& s : *steps) {
        if (s.cpu_seconds) usage.cpu_seconds = usage.cpu_seconds.value_or(0) + *s.cpu_seconds;
        if (s.mem_bytes) usage.memory_bytes = usage.memory_bytes.value_or(0) + *s.mem_bytes;
      }
      if (steps->empty()) usage.usage_error = "sstat reports no steps";
    }
  }
  return usage;
}

std::vector<Result<JobUsage>> ProbeAll(UsageProbe& probe,
                                       const std::vector<const slurm::SlurmJob*>& jobs, SimTime now,
                                       int parallel) {
  std::vector<std::optional<Result<JobUsage>>> slots(jobs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) slots[i] = probe.Probe(*jobs[i], now);
  };
  const size_t threads = std::min<size_t>(jobs.size(), static_cast<size_t>(std::max(parallel, 1)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<Result<JobUsage>> out;
  out.reserve(jobs.size());
  for (auto& s : slots) out.push_back(std::move(*s));
  return out;
}

}  // namespace schedmate::service
