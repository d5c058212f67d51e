#pragma once
// JSON codecs for diagnoses and recovery plans (the shape of `schedmate diagnose --json`).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "failure/diagnosis.h"
#include "failure/example_store.h"
#include "failure/recovery_plan.h"

namespace schedmate::failure {

// `s` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD (JSON needs it).
std::string ToValidUtf8(std::string_view s);

// {"root_cause": {"line_no", "text"} | null, "label", "category", "confidence", "evidence": [...],
//  "explanation", "hint", "context": {"first_line", "last_line"} | null, "nodes": [...],
//  "checkpoint": str | null, "classifier_calls", "engine"}
nlohmann::json DiagnosisToJson(const Diagnosis& d);
// [{"action": "drain_node", "node", "reason"}, {"action": "requeue", "attempt", "delay_s",
//   "checkpoint", "exclude_nodes", "reason"}, {"action": "hold", "reason"},
//  {"action": "notify_user" | "notify_admin", "reason", "hint"}]
nlohmann::json PlanToJson(const RecoveryPlan& plan);
// A learned example: {"label": "infrastructure" | "application" | "unknown", "category", "text"}
// (the masked features).
nlohmann::json ExampleToJson(const FailureExample& example);

}  // namespace schedmate::failure
