#include "failure/llm_failure_classifier.h"

#include <algorithm>
#include <map>

#include "core/json_dump.h"
#include "core/strings.h"
#include "fmt/format.h"
#include "llm/complete_json.h"

namespace schedmate::failure {
namespace prompts {
std::string_view FailureClassifySystem();   // config/prompts/failure_classify.txt
std::string_view FailureLineJudgeSystem();  // config/prompts/failure_line_judge.txt
}  // namespace prompts

namespace {

using nlohmann::json;

constexpr std::string_view kRoleNames[] = {"none", "benign", "trace", "wrapper", "weak", "origin"};

std::string Cut(std::string_view s, size_t n) {
  return std::string(s.size() > n ? s.substr(0, n) : s);
}

}  // namespace

std::optional<LineRole> ParseLineRole(std::string_view name) {
  const std::string n = ToLower(Trim(name));
  for (size_t i = 0; i < std::size(kRoleNames); ++i) {
    if (n == kRoleNames[i]) return static_cast<LineRole>(i);
  }
  return std::nullopt;
}

const json& FailureAnswerSchema() {
  static const json schema = {
      {"type", "object"},
      {"properties",
       {{"label", {{"type", "string"}, {"enum", {"infrastructure", "application", "unknown"}}}},
        {"category", {{"type", "string"}, {"maxLength", 64}}},
        {"confidence", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
        {"root_cause_line", {{"type", json::array({"integer", "null"})}}},
        {"evidence",
         {{"type", "array"},
          {"maxItems", 8},
          {"items",
           {{"type", "object"},
            {"properties", {{"line_no", {{"type", "integer"}}}, {"text", {{"type", "string"}}}}},
            {"required", {"line_no"}}}}}}}},
      {"required", {"label", "category", "confidence", "evidence"}}};
  return schema;
}

LlmFailureClassifier::LlmFailureClassifier(llm::ChatClient& chat, std::string model,
                                           const LogView* log, LlmFailureOptions options)
    : chat_(chat), name_("llm:" + model), log_(log), options_(options) {}

Result<Classification> LlmFailureClassifier::Classify(const FailureReport& report) const {
  // The window: numbered lines, the root marked; report lines outside it added after.
  std::map<int64_t, std::string> shown;
  const int64_t root_no = report.root.line.line_no;
  shown[root_no] = report.root.line.text;
  if (log_ != nullptr && report.root.offset <= log_->size()) {
    size_t start = log_->LineStart(report.root.offset);
    for (int i = 1; i <= options_.context_before && start > 0; ++i) {
      start = log_->LineStart(start - 1);
      shown[root_no - i] = std::string(log_->LineAt(start));
    }
    size_t pos = log_->NextLineStart(report.root.offset);
    for (int i = 1; i <= options_.context_after && pos < log_->size(); ++i) {
      shown[root_no + i] = std::string(log_->LineAt(pos));
      pos = log_->NextLineStart(pos);
    }
  } else if (!report.continuation.empty()) {
    shown[root_no + 1] = std::string(report.continuation);
  }
  for (const auto& p : report.preceding) shown.emplace(p.line.line_no, p.line.text);
  for (const auto& f : report.followers) shown.emplace(f.line.line_no, f.line.text);

  // Keep within the byte budget: the root first, then lines by distance from it.
  std::vector<int64_t> order;
  for (const auto& [no, text] : shown) order.push_back(no);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::llabs(a - root_no) < std::llabs(b - root_no);
  });
  std::map<int64_t, std::string> kept;
  size_t bytes = 0;
  for (int64_t no : order) {
    std::string text = Cut(shown[no], options_.max_line_bytes);
    if (bytes + text.size() + 16 > options_.max_prompt_bytes && no != root_no) continue;
    bytes += text.size() + 16;
    kept[no] = std::move(text);
  }
  std::string body;
  for (const auto& [no, text] : kept) {
    body += fmt::format("{}{}: {}\n", no == root_no ? "ROOT " : "", no, text);
  }
  llm::JsonCallOptions jo;
  jo.schema_name = "failure_classification";
  jo.max_tokens = options_.max_tokens;
  jo.seed = 1;
  calls_.fetch_add(1);
  SM_ASSIGN_OR_RETURN(
      json a,
      llm::CompleteJson(chat_,
                        {llm::ChatMessage::System(std::string(prompts::FailureClassifySystem())),
                         llm::ChatMessage::User("Failure report:\n" + body)},
                        FailureAnswerSchema(), jo));
  Classification c;
  c.label = ParseFailureLabel(a["label"].get<std::string>()).value_or(FailureLabel::kUnknown);
  c.category = ToLower(Trim(a["category"].get<std::string>()));
  c.confidence = a["confidence"].get<double>();
  if (c.confidence < options_.unknown_below) c.label = FailureLabel::kUnknown;
  c.decided_by = name_;
  auto root_it = a.find("root_cause_line");
  if (root_it != a.end() && root_it->is_number_integer()) {
    const int64_t n = root_it->get<int64_t>();
    if (kept.count(n) == 0) {
      dropped_.fetch_add(1);
    } else if (n != root_no) {
      c.evidence.push_back({n, kept[n], "llm:root"});
    }
  }
  for (const json& e : a["evidence"]) {
    const int64_t n = e["line_no"].get<int64_t>();
    auto it = kept.find(n);
    if (it == kept.end()) {
      dropped_.fetch_add(1);
      continue;
    }
    const bool dup = std::any_of(c.evidence.begin(), c.evidence.end(),
                                 [&](const Evidence& x) { return x.line_no == n; });
    if (!dup) c.evidence.push_back({n, it->second, "llm"});
  }
  return c;
}

LlmLineJudge::LlmLineJudge(llm::ChatClient& chat, std::string model, LineJudge& prefilter,
                           LlmFailureOptions options)
    : chat_(chat), name_("llm:" + model), prefilter_(prefilter), options_(options) {}

Result<bool> LlmLineJudge::ContainsFailure(const LogChunk& chunk) {
  if (chunk.text.size() > options_.max_prompt_bytes) {
    ++prefilter_calls_;
    return prefilter_.ContainsFailure(chunk);
  }
  std::string body;
  ForEachLine(chunk, [&](std::string_view line, size_t) {
    body += Cut(line, options_.max_line_bytes) + "\n";
  });
  static const json schema = {{"type", "object"},
                              {"properties", {{"contains_failure", {{"type", "boolean"}}}}},
                              {"required", {"contains_failure"}}};
  llm::JsonCallOptions jo;
  jo.schema_name = "contains_failure";
  jo.max_tokens = 64;
  jo.seed = 1;
  ++calls_;
  SM_ASSIGN_OR_RETURN(
      json a,
      llm::CompleteJson(chat_,
                        {llm::ChatMessage::System(std::string(prompts::FailureLineJudgeSystem())),
                         llm::ChatMessage::User("Does this chunk hold any failure line?\n" + body)},
                        schema, jo));
  return a["contains_failure"].get<bool>();
}

Result<std::vector<LineRole>> LlmLineJudge::ScoreLines(const LogChunk& chunk) {
  json lines = json::array();
  ForEachLine(chunk, [&](std::string_view line, size_t) {
    lines.push_back(Cut(line, options_.max_line_bytes));
  });
  if (lines.empty()) return std::vector<LineRole>{};
  json roles_enum = json::array();
  for (std::string_view r : kRoleNames) roles_enum.push_back(r);
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"roles",
                          {{"type", "array"},
                           {"minItems", lines.size()},
                           {"maxItems", lines.size()},
                           {"items", {{"type", "string"}, {"enum", roles_enum}}}}}}},
                       {"required", {"roles"}}};
  llm::JsonCallOptions jo;
  jo.schema_name = "line_roles";
  jo.max_tokens = static_cast<int>(std::min<size_t>(8192, 64 + 12 * lines.size()));
  jo.seed = 1;
  ++calls_;
  SM_ASSIGN_OR_RETURN(
      json a,
      llm::CompleteJson(
          chat_,
          {llm::ChatMessage::System(std::string(prompts::FailureLineJudgeSystem())),
           llm::ChatMessage::User(fmt::format("Give the role of each of these {} lines:\n{}",
                                              lines.size(), DumpJson(lines)))},
          schema, jo));
  std::vector<LineRole> out;
  for (const json& r : a["roles"]) out.push_back(*ParseLineRole(r.get<std::string>()));
  return out;
}

Result<Diagnosis> DiagnoseWithLlm(llm::ChatClient& chat, const std::string& model,
                                  const SignatureSet& signatures, const ExampleStore* examples,
                                  const FailureHandlerOptions& handler_options, const LogView& log,
                                  bool llm_judge, const LlmFailureOptions& options,
                                  int* llm_calls) {
  LlmFailureClassifier classifier(chat, model, &log, options);
  RuleLineJudge rules(signatures);
  LlmLineJudge judge(chat, model, rules, options);
  FailureHandler handler(signatures, examples, handler_options,
                         llm_judge ? static_cast<LineJudge*>(&judge) : nullptr, &classifier);
  Result<Diagnosis> d = handler.Diagnose(log);
  if (llm_calls != nullptr) *llm_calls = classifier.calls() + judge.calls();
  return d;
}

}  // namespace schedmate::failure
