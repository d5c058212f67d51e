#include "failure/diagnosis_json.h"

#include <cmath>

namespace schedmate::failure {

namespace {
double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Log text may hold invalid UTF-8; nlohmann::json::dump throws on it. Well-formed sequences per
// Unicode Table 3-7 are kept, every other byte becomes U+FFFD.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = byte(i);
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}
}  // namespace

std::string ToValidUtf8(std::string_view s) { return ValidUtf8(s); }

nlohmann::json DiagnosisToJson(const Diagnosis& d) {
  nlohmann::json j;
  if (d.root_cause) {
    j["root_cause"] = {{"line_no", d.root_cause->line_no}, {"text", ValidUtf8(d.root_cause->text)}};
  } else {
    j["root_cause"] = nullptr;
  }
  j["label"] = std::string(FailureLabelName(d.label));
  j["category"] = d.category;
  j["confidence"] = Round3(d.confidence);
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : d.evidence) {
    ev.push_back({{"line_no", e.line_no}, {"text", ValidUtf8(e.text)}, {"source", e.source}});
  }
  j["evidence"] = ev;
  j["explanation"] = d.explanation;
  j["hint"] = d.hint;
  if (d.root_cause) {
    j["context"] = {{"first_line", d.context_first_line}, {"last_line", d.context_last_line}};
  } else {
    j["context"] = nullptr;
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : d.nodes) nodes.push_back(ValidUtf8(n));
  j["nodes"] = nodes;
  j["checkpoint"] = d.checkpoint ? nlohmann::json(ValidUtf8(*d.checkpoint)) : nlohmann::json();
  j["classifier_calls"] = d.classifier_calls;
  j["engine"] = d.engine;
  return j;
}

nlohmann::json PlanToJson(const RecoveryPlan& plan) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& a : plan) {
    nlohmann::json j;
    j["action"] = std::string(RecoveryActionKindName(a.kind));
    switch (a.kind) {
      case RecoveryAction::Kind::kDrainNode:
        j["node"] = ValidUtf8(a.node);
        break;
      case RecoveryAction::Kind::kRequeue: {
        j["attempt"] = a.attempt;
        j["delay_s"] = a.delay.seconds();
        j["checkpoint"] =
            a.checkpoint ? nlohmann::json(ValidUtf8(*a.checkpoint)) : nlohmann::json();
        nlohmann::json ex = nlohmann::json::array();
        for (const auto& n : a.exclude_nodes) ex.push_back(ValidUtf8(n));
        j["exclude_nodes"] = ex;
        break;
      }
      case RecoveryAction::Kind::kNotifyUser:
      case RecoveryAction::Kind::kNotifyAdmin:
        j["hint"] = a.hint;
        break;
      case RecoveryAction::Kind::kHold:
        break;
    }
    j["reason"] = ValidUtf8(a.reason);
    arr.push_back(std::move(j));
  }
  return arr;
}

nlohmann::json ExampleToJson(const FailureExample& example) {
  return {{"label", std::string(FailureLabelName(example.label))},
          {"category", example.category},
          {"text", example.text}};
}

}  // namespace schedmate::failure
