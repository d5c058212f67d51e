#include "failure/failure_handler.h"

#include <re2/re2.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/strings.h"

namespace schedmate::failure {

FailureHandler::FailureHandler(const SignatureSet& signatures, const ExampleStore* examples,
                               FailureHandlerOptions options, LineJudge* judge,
                               FailureClassifier* classifier)
    : signatures_(signatures),
      builtin_judge_(judge == nullptr ? std::make_unique<RuleLineJudge>(signatures) : nullptr),
      judge_(judge == nullptr ? *builtin_judge_ : *judge),
      builtin_classifier_(classifier == nullptr ? std::make_unique<SignatureClassifier>(
                                                      signatures, examples, options.classifier)
                                                : nullptr),
      classifier_(classifier == nullptr ? *builtin_classifier_ : *classifier),
      options_(options) {}

Result<Diagnosis> FailureHandler::Diagnose(const LogView& log) {
  FirstErrorLocator locator(judge_, options_.locator);
  SM_ASSIGN_OR_RETURN(Location loc, locator.Locate(log));
  Diagnosis d;
  d.engine = judge_.Name() == classifier_.Name()
                 ? std::string(judge_.Name())
                 : std::string(judge_.Name()) + "+" + std::string(classifier_.Name());
  d.classifier_calls = loc.judge_calls;
  if (!loc.root) {
    d.category = "";
    return d;
  }
  d.root_cause = loc.root->line;
  d.context_first_line = loc.context_first_line;
  d.context_last_line = loc.context_last_line;

  SM_ASSIGN_OR_RETURN(Classification c,
                      classifier_.Classify(FailureReport{*loc.root, loc.followers, loc.preceding,
                                                         loc.root_continuation}));
  ++d.classifier_calls;  // the classification is one more question about the failure
  d.label = c.label;
  d.category = c.category.empty() ? std::string("unclassified") : c.category;
  d.confidence = c.confidence;
  d.evidence = std::move(c.evidence);
  if (const CategoryInfo* info = signatures_.FindCategory(c.category)) {
    d.explanation = info->explanation;
    d.hint = info->hint;
    d.drain_suspect = info->drain && d.label == FailureLabel::kInfrastructure;
    d.transient = info->transient;
  }

  std::vector<std::string> lines{loc.root->line.text};
  for (const auto& f : loc.followers) lines.push_back(f.line.text);
  for (const auto& p : loc.preceding) lines.push_back(p.line.text);
  d.nodes = ExtractNodeNames(lines);
  d.checkpoint = FindSavedCheckpoint(log, loc.root->offset, options_.checkpoint_lookback_bytes);
  return d;
}

Result<FailureExample> FailureHandler::MakeExample(const LogView& log, FailureLabel label,
                                                   const std::string& category) {
  FirstErrorLocator locator(judge_, options_.locator);
  SM_ASSIGN_OR_RETURN(Location loc, locator.Locate(log));
  if (!loc.root) {
    return Status::FailedPrecondition("the log shows no failure line to learn from");
  }
  FailureExample ex;
  ex.label = label;
  ex.category = category;
  ex.text = SignatureClassifier::ExampleText(*loc.root, loc.followers);
  if (ex.text.empty()) {
    return Status::FailedPrecondition("the root-cause line has no words to learn from");
  }
  return ex;
}

std::vector<std::string> ExtractNodeNames(const std::vector<std::string>& lines) {
  static const RE2 kNcclPrefix(R"(^\s*([A-Za-z][\w.-]*):\d+:\d+ \[\d+\])");
  static const RE2 kSlurmOn(R"(\bON ([A-Za-z][\w.-]*) CANCELLED)");
  static const RE2 kSrun(R"(srun: error: ([A-Za-z][\w.-]*): task)");
  static const RE2 kNodeFailure(R"((?i)node failure on ([A-Za-z][\w.-]*))");
  static const RE2 kKeyValue(
      R"((?i)\b(?:node|host|hostname|nodename)\s*[=:]\s*['"]?([A-Za-z][\w-]*\d[\w.-]*))");
  static const RE2 kSyslog(R"(^(?:[A-Z][a-z]{2}\s+\d+\s+[\d:]+\s+)?([A-Za-z][\w.-]*) kernel:)");
  std::set<std::string> out;
  for (const auto& line : lines) {
    std::string_view head(line);
    if (head.size() > 4096) head = head.substr(0, 4096);
    re2::StringPiece sp(head.data(), head.size());
    std::string name;
    for (const RE2* re : {&kNcclPrefix, &kSlurmOn, &kSrun, &kNodeFailure, &kSyslog}) {
      if (RE2::PartialMatch(sp, *re, &name)) out.insert(name);
    }
    re2::StringPiece rest = sp;
    while (RE2::FindAndConsume(&rest, kKeyValue, &name)) out.insert(name);
  }
  out.erase("localhost");
  return {out.begin(), out.end()};
}

std::optional<std::string> FindSavedCheckpoint(const LogView& log, size_t before_offset,
                                               size_t lookback) {
  static const RE2 kSave(
      R"((?i)\b(sav(e|ed|ing)|wrote|writ(e|ten|ing)|stor(ed|ing)|dump(ed|ing)|export(ed|ing))\b)");
  static const RE2 kWhat(R"((?i)(checkpoint|ckpt|model|weights|state))");
  static const RE2 kFailed(R"((?i)(fail|error|unable|cannot|could not))");
  static const RE2 kPathToken(
      R"(((?:[A-Za-z]:)?[\w.~+-]*[/\\][^\s'",;)\]]+|[\w.+-]+\.(?:pt|pth|ckpt|safetensors|bin|h5|pkl|npz|tar)\b))");
  size_t end = log.LineStart(std::min(before_offset, log.size()));
  const size_t floor = end > lookback ? end - lookback : 0;
  while (end > floor) {
    size_t start = log.LineStart(end - 1);
    std::string_view line = log.data().substr(start, end - start);
    if (line.size() <= 4096) {
      re2::StringPiece sp(line.data(), line.size());
      if (RE2::PartialMatch(sp, kSave) && RE2::PartialMatch(sp, kWhat) &&
          !RE2::PartialMatch(sp, kFailed)) {
        std::string path, last;
        re2::StringPiece rest = sp;
        while (RE2::FindAndConsume(&rest, kPathToken, &path)) last = path;
        while (!last.empty() && (last.back() == '.' || last.back() == ':')) last.pop_back();
        if (!last.empty() && last.find("://") == std::string::npos) return last;
      }
    }
    end = start;
  }
  return std::nullopt;
}

Result<std::optional<std::string>> FindLatestCheckpointInDir(const std::string& dir,
                                                             size_t max_entries) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  auto looks_like_checkpoint = [](const fs::path& p) {
    std::string name = ToLower(p.filename().string());
    return name.find("ckpt") != std::string::npos || name.find("checkpoint") != std::string::npos ||
           EndsWith(name, ".pt") || EndsWith(name, ".pth") || EndsWith(name, ".safetensors");
  };
  std::optional<std::pair<fs::file_time_type, std::string>> best;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  size_t seen = 0;
  for (; !ec && it != fs::recursive_directory_iterator() && seen < max_entries;
       it.increment(ec), ++seen) {
    if (it.depth() >= 2) it.disable_recursion_pending();
    if (!looks_like_checkpoint(it->path())) continue;
    auto t = fs::last_write_time(it->path(), ec);
    if (ec) {
      ec.clear();
      continue;
    }
    std::pair<fs::file_time_type, std::string> cand{t, it->path().string()};
    if (!best || cand > *best) best = cand;
  }
  if (!best) return std::optional<std::string>();
  return std::optional<std::string>(best->second);
}

}  // namespace schedmate::failure
