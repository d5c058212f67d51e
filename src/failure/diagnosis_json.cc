#include "failure/diagnosis_json.h"

#include <cmath>

namespace schedmate::failure {

namespace {
double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Log text may hold invalid UTF-8; nlohmann::json::dump would throw on it.
std::string ValidUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    }
    if (ok && len == 2 && c < 0xC2) ok = false;  // overlong
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}
}  // namespace

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

}  // namespace schedmate::failure
