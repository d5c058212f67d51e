#include "service/why_rephrase.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <set>

#include "core/json_dump.h"
#include "core/strings.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"

namespace schedmate::service {
namespace {

using nlohmann::json;

constexpr const char* kSystemPrompt =
    "You explain to a cluster user why their Slurm job is not running yet. You are given the "
    "scheduler's answer as JSON facts. Rewrite its explanation in plain, friendly English, in 2 "
    "to 4 sentences, and mention the most useful suggestion if there is one.\n"
    "Rules: use ONLY the facts given. Copy every number, job id, partition, node name, date and "
    "time exactly as written in the facts. Do not compute new numbers, convert units, round, or "
    "add anything that is not in the facts. Reply with the text only, no JSON, no markdown.";

std::string UtcText(int64_t seconds) {
  const std::time_t s = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void TimesToText(json& j) {
  if (j.is_array()) {
    for (auto& e : j) TimesToText(e);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if ((it.key() == "at" || it.key() == "expected_start") && it->is_number_integer()) {
      *it = UtcText(it->get<int64_t>());
    } else {
      TimesToText(*it);
    }
  }
}

// Everything the facts say, indexed for the checks.
struct FactIndex {
  std::set<std::string> dates;  // "2026-11-27"
  std::set<std::string> times;  // "13:05" (hours zero-padded)
  std::set<double> numbers;
  std::set<std::string> words;  // lowercased tokens

  void AddText(std::string_view text);
  void Add(const json& j) {
    if (j.is_string()) {
      AddText(j.get<std::string>());
    } else if (j.is_number()) {
      numbers.insert(j.get<double>());
      AddText(j.dump());
    } else if (j.is_structured()) {
      for (const auto& e : j) Add(e);
    }
  }
};

const RE2& DateRe() {
  static const RE2 re(R"((\d{4}-\d{2}-\d{2}))");
  return re;
}
const RE2& TimeRe() {
  static const RE2 re(R"((\d{1,2}):(\d{2})(?::\d{2})?)");
  return re;
}
const RE2& TokenRe() {
  static const RE2 re(R"(([A-Za-z0-9_\[\]\-]+(?:[.,][A-Za-z0-9_\[\]\-]+)*))");
  return re;
}

std::string PadTime(const std::string& h, const std::string& m) {
  return (h.size() == 1 ? "0" + h : h) + ":" + m;
}

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// True when s[i] is a thousands separator: ',' after a digit, then exactly three digits.
bool ThousandsComma(std::string_view s, size_t i) {
  if (s[i] != ',' || i == 0 || !IsDigit(s[i - 1])) return false;
  for (size_t k = 1; k <= 3; ++k)
    if (i + k >= s.size() || !IsDigit(s[i + k])) return false;
  return i + 4 >= s.size() || !IsDigit(s[i + 4]);
}

// The number at the start of `s` ("1,200.5" -> 1200.5), if any; `used` gets its length.
std::optional<double> LeadingNumber(std::string_view s, size_t* used) {
  std::string digits;
  bool point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (IsDigit(c)) {
      digits += c;
    } else if (ThousandsComma(s, i) && !point) {
      continue;
    } else if (c == '.' && !point && !digits.empty() && i + 1 < s.size() && IsDigit(s[i + 1])) {
      point = true;
      digits += c;
    } else {
      break;
    }
  }
  *used = i;
  if (digits.empty()) return std::nullopt;
  return ParseDouble(digits);
}

// Pure-digit runs (with separators) inside `token`, for the number index.
std::vector<double> NumbersIn(std::string_view token) {
  std::vector<double> out;
  for (size_t i = 0; i < token.size();) {
    if (!std::isdigit(static_cast<unsigned char>(token[i]))) {
      ++i;
      continue;
    }
    size_t used = 0;
    if (auto v = LeadingNumber(token.substr(i), &used)) out.push_back(*v);
    i += std::max<size_t>(used, 1);
  }
  return out;
}

void FactIndex::AddText(std::string_view text) {
  re2::StringPiece in(text.data(), text.size());
  std::string date, h, m, token;
  while (RE2::FindAndConsume(&in, DateRe(), &date)) dates.insert(date);
  in = re2::StringPiece(text.data(), text.size());
  while (RE2::FindAndConsume(&in, TimeRe(), &h, &m)) times.insert(PadTime(h, m));
  in = re2::StringPiece(text.data(), text.size());
  while (RE2::FindAndConsume(&in, TokenRe(), &token)) {
    words.insert(ToLower(token));
    for (auto part : Split(token, '-')) words.insert(ToLower(part));
    for (double v : NumbersIn(token)) numbers.insert(v);
  }
}

bool HasDigit(std::string_view s) {
  for (char c : s)
    if (std::isdigit(static_cast<unsigned char>(c))) return true;
  return false;
}

// Checks one reply token (dates and times already taken out) against the facts.
void CheckToken(const std::string& raw, const FactIndex& facts, const std::set<std::string>& known,
                std::vector<std::string>& bad) {
  std::string token = raw;
  while (!token.empty() && (token.back() == '.' || token.back() == ',' || token.back() == '-'))
    token.pop_back();
  if (token.empty()) return;
  const std::string lower = ToLower(token);
  auto flag = [&](const std::string& what) {
    if (std::find(bad.begin(), bad.end(), what) == bad.end()) bad.push_back(what);
  };
  if (known.count(lower) > 0 && facts.words.count(lower) == 0) return flag(token);
  if (!HasDigit(token) || facts.words.count(lower) > 0) return;
  // Parts split on '-': an identifier with digits (node07, a100) must be a fact word; a part that
  // starts with a number (8, 30min, 123_4) must hold fact numbers only.
  for (auto part : Split(token, '-')) {
    if (part.empty() || !HasDigit(part)) continue;
    if (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_' || part[0] == '[') {
      if (facts.words.count(ToLower(part)) == 0) flag(std::string(part));
      continue;
    }
    for (double v : NumbersIn(part))
      if (facts.numbers.count(v) == 0) flag(std::string(part));
  }
}

}  // namespace

json WhyFacts(const json& answer) {
  json facts = answer;
  facts.erase("explanation_source");
  facts.erase("builtin_explanation");
  TimesToText(facts);
  return facts;
}

std::vector<std::string> FindUnsupported(std::string_view reply, const json& facts,
                                         const std::vector<std::string>& known_names) {
  FactIndex index;
  index.Add(facts);
  std::set<std::string> known;
  for (const auto& n : known_names)
    if (!n.empty()) known.insert(ToLower(n));
  std::vector<std::string> bad;
  std::string text(reply);
  // Dates and times of day first (their digits are not plain numbers), blanked out afterwards.
  std::string date, h, m;
  re2::StringPiece in(text);
  while (RE2::FindAndConsume(&in, DateRe(), &date))
    if (index.dates.count(date) == 0) bad.push_back(date);
  RE2::GlobalReplace(&text, DateRe(), " ");
  in = re2::StringPiece(text);
  while (RE2::FindAndConsume(&in, TimeRe(), &h, &m))
    if (index.times.count(PadTime(h, m)) == 0) bad.push_back(PadTime(h, m));
  RE2::GlobalReplace(&text, TimeRe(), " ");
  std::string token;
  in = re2::StringPiece(text);
  while (RE2::FindAndConsume(&in, TokenRe(), &token)) CheckToken(token, index, known, bad);
  return bad;
}

Result<std::string> RephraseWhy(const json& answer, llm::ChatClient& chat,
                                const WhyRephraseOptions& options) {
  const json facts = WhyFacts(answer);
  llm::ChatRequest req;
  req.messages.push_back(llm::ChatMessage::System(kSystemPrompt));
  req.messages.push_back(llm::ChatMessage::User("Facts:\n" + DumpJson(facts, 2)));
  req.temperature = 0;
  req.max_tokens = options.max_tokens;
  SM_ASSIGN_OR_RETURN(llm::ChatResponse res, chat.Complete(req));
  std::string text(Trim(res.message.content));
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
    text = std::string(Trim(text.substr(1, text.size() - 2)));
  if (text.empty()) return Status::DataLoss("empty reply");
  if (text.size() > options.max_reply_bytes) {
    return Status::DataLoss(
        fmt::format("reply too long ({} bytes, at most {})", text.size(), options.max_reply_bytes));
  }
  std::vector<std::string> bad = FindUnsupported(text, facts, options.known_names);
  if (!bad.empty()) {
    std::string list;
    for (const auto& b : bad) list += (list.empty() ? "" : ", ") + b;
    return Status::DataLoss(fmt::format("reply names facts not given: {}; reply: {}", list,
                                        std::string(Utf8Prefix(text, 300))));
  }
  return text;
}

void SetExplanation(json& answer, const std::optional<std::string>& rephrased,
                    const std::string& source) {
  if (rephrased) {
    answer["builtin_explanation"] = answer.value("explanation", "");
    answer["explanation"] = *rephrased;
  }
  answer["explanation_source"] = source;
}

WhyRephraser::WhyRephraser(std::shared_ptr<llm::LlmSetup> llm, size_t cache_entries)
    : llm_(std::move(llm)), cache_entries_(std::max<size_t>(1, cache_entries)) {}

WhyRephraser::~WhyRephraser() = default;

int64_t WhyRephraser::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

void WhyRephraser::Apply(json& answer, const std::vector<std::string>& known_names) {
  std::string key = DumpJson(WhyFacts(answer));
  for (const auto& n : known_names) key += "\n" + n;
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      SetExplanation(answer, it->second.text, it->second.source);
      return;
    }
    ++calls_;
  }
  WhyRephraseOptions options;
  options.known_names = known_names;
  Result<std::string> text = RephraseWhy(answer, llm_->chat(), options);
  Outcome outcome;
  if (text.ok()) {
    outcome.text = *text;
    outcome.source = llm::LlmEngineLabel(llm_->chat_model());
  } else {
    outcome.source = llm::FallbackReason(text.status());
  }
  SetExplanation(answer, outcome.text, outcome.source);
  // A server that is down or slow may answer next time: only answers are remembered.
  if (!text.ok() && text.status().code() != StatusCode::kDataLoss) return;
  std::lock_guard lock(mu_);
  if (cache_.emplace(key, std::move(outcome)).second) order_.push_back(std::move(key));
  while (order_.size() > cache_entries_) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace schedmate::service
