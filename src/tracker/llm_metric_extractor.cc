#include "tracker/llm_metric_extractor.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "core/json_dump.h"
#include "fmt/format.h"
#include "llm/complete_json.h"

namespace schedmate::tracker {
namespace prompts {
std::string_view TrackerMetricsSystem();  // config/prompts/tracker_metrics.txt
}  // namespace prompts

namespace {

using nlohmann::json;

json Nullable(const char* type) { return {{"type", json::array({type, "null"})}}; }

std::optional<double> Number(const json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}
std::optional<int64_t> Integer(const json& entry, const char* key) {
  std::optional<double> v = Number(entry, key);
  if (!v || std::abs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(std::llround(*v));
}

// The model's reading of one line, over the built-in record's identity.
ProgressRecord ToRecord(const ProgressRecord& base, const json& e) {
  ProgressRecord r = base;
  ExtractedValues v;
  v.step = Integer(e, "step");
  v.total_steps = Integer(e, "total_steps");
  v.epoch = Number(e, "epoch");
  v.epoch_fractional = v.epoch && *v.epoch != std::floor(*v.epoch);
  v.total_epochs = Integer(e, "total_epochs");
  v.loss = Number(e, "loss");
  if (v.loss) v.losses["loss"] = *v.loss;
  v.lr = Number(e, "lr");
  v.step_time_s = Number(e, "step_time_s");
  if (auto t = Number(e, "throughput")) {
    auto u = e.find("throughput_unit");
    v.throughput = Throughput{*t, u != e.end() && u->is_string() ? u->get<std::string>() : ""};
  }
  v.eta_s = Number(e, "eta_s");
  if (v.eta_s) v.eta_text = fmt::format("{:.0f}s", *v.eta_s);
  if (v.step && v.total_steps && *v.total_steps > 0) {
    v.percent = 100.0 * static_cast<double>(*v.step) / static_cast<double>(*v.total_steps);
  }
  v.has_strong_metric = v.loss || v.step_time_s || v.throughput;
  v.has_metric = v.has_strong_metric || v.lr;
  r.v = std::move(v);
  r.epoch_from_context = false;
  return r;
}

bool IsUsable(const ProgressRecord& r) { return r.v.step || r.v.epoch || r.v.has_metric; }

}  // namespace

const json& LlmMetricAnswerSchema() {
  static const json schema = {{"type", "object"},
                              {"properties",
                               {{"records",
                                 {{"type", "array"},
                                  {"items",
                                   {{"type", "object"},
                                    {"properties",
                                     {{"line_no", {{"type", "integer"}}},
                                      {"training", {{"type", "boolean"}}},
                                      {"step", Nullable("integer")},
                                      {"total_steps", Nullable("integer")},
                                      {"epoch", Nullable("number")},
                                      {"total_epochs", Nullable("integer")},
                                      {"loss", Nullable("number")},
                                      {"lr", Nullable("number")},
                                      {"step_time_s", Nullable("number")},
                                      {"throughput", Nullable("number")},
                                      {"throughput_unit", Nullable("string")},
                                      {"eta_s", Nullable("number")}}},
                                    {"required", {"line_no", "training"}}}}}}}},
                              {"required", {"records"}}};
  return schema;
}

LlmMetricExtractor::LlmMetricExtractor(llm::ChatClient& chat, LlmMetricOptions options)
    : chat_(chat), options_(options) {
  options_.batch_lines = std::max<size_t>(1, options_.batch_lines);
}

Result<LlmMetricResult> LlmMetricExtractor::FindLatest(std::span<const ProgressRecord> candidates) {
  if (candidates.empty()) {
    return Status::NotFound("no training progress lines for the model to read");
  }
  LlmMetricResult result;
  size_t next = candidates.size();  // newest first: walk backwards
  while (next > 0) {
    if (result.requests >= options_.max_requests) break;
    const size_t begin = next > options_.batch_lines ? next - options_.batch_lines : 0;
    std::map<int64_t, const ProgressRecord*> by_line;
    json lines = json::array();
    for (size_t i = next; i-- > begin;) {
      const ProgressRecord& c = candidates[i];
      std::string text = c.segment.empty() ? c.line : c.segment;
      if (text.size() > options_.max_line_bytes) text.resize(options_.max_line_bytes);
      lines.push_back({{"line_no", c.line_no}, {"text", text}});
      by_line.emplace(c.line_no, &c);
    }
    next = begin;
    ++result.requests;
    result.lines_sent += by_line.size();
    llm::JsonCallOptions jo;
    jo.schema_name = "training_metrics";
    jo.max_tokens = options_.max_tokens;
    jo.seed = 1;
    SM_ASSIGN_OR_RETURN(
        json answer,
        llm::CompleteJson(chat_,
                          {llm::ChatMessage::System(std::string(prompts::TrackerMetricsSystem())),
                           llm::ChatMessage::User("Log lines (newest first):\n" + DumpJson(lines))},
                          LlmMetricAnswerSchema(), jo));
    std::optional<ProgressRecord> best;
    for (const json& e : answer["records"]) {
      auto it = by_line.find(e["line_no"].get<int64_t>());
      if (it == by_line.end()) {
        ++result.ignored_entries;
        continue;
      }
      if (!e["training"].get<bool>()) continue;
      ProgressRecord r = ToRecord(*it->second, e);
      if (!IsUsable(r)) continue;
      if (!best || r.line_no > best->line_no) best = std::move(r);
    }
    if (best) {  // the newest batch with a training record holds the latest one: stop early
      result.latest = std::move(best);
      return result;
    }
  }
  return Status::DataLoss(
      fmt::format("no training record in the model's answers; {} lines in {} requests",
                  result.lines_sent, result.requests));
}

Result<LlmScanOutcome> ScanLogWithLlm(llm::ChatClient& chat, const std::string& path,
                                      const ScanOptions& options,
                                      const LlmMetricOptions& llm_options,
                                      const std::function<void(const ProgressRecord&)>& sink) {
  std::deque<ProgressRecord> newest;
  auto keep = [&](const ProgressRecord& r) {
    if (sink) sink(r);
    newest.push_back(r);
    if (newest.size() > llm_options.max_candidates) newest.pop_front();
  };
  LlmScanOutcome out;
  SM_ASSIGN_OR_RETURN(out.scan, ScanLog(path, options, keep));
  if (out.scan.latest) out.builtin_confidence = out.scan.latest->confidence;
  const std::vector<ProgressRecord> candidates(newest.begin(), newest.end());
  LlmMetricExtractor extractor(chat, llm_options);
  Result<LlmMetricResult> r = extractor.FindLatest(candidates);
  if (!r.ok()) {
    out.llm_status = r.status();
    return out;
  }
  out.requests = r->requests;
  out.scan.latest = std::move(r->latest);
  return out;
}

}  // namespace schedmate::tracker
