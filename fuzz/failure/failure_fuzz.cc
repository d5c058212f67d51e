// libFuzzer target for the failure handler: arbitrary bytes as a log through the locator (with
// small chunk and scoring sizes so that galloping and bisection run on small inputs), the
// classifier, the planner and the JSON codec; or, selected by the first byte, as an operator's
// signature YAML file.

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/check.h"
#include "failure/diagnosis_json.h"
#include "failure/failure_handler.h"
#include "failure/recovery_planner.h"
#include "failure/signature_set.h"

namespace {

using namespace schedmate::failure;

const SignatureSet& Builtin() {
  static const SignatureSet* set = [] {
    auto r = SignatureSet::Builtin();
    SM_CHECK(r.ok()) << r.status().ToString();
    return new SignatureSet(std::move(r).value());
  }();
  return *set;
}

void FuzzLog(const uint8_t* data, size_t size, uint8_t knobs) {
  RuleLineJudge judge(Builtin(), /*max_scoring_bytes=*/size_t{1024} << (knobs & 3));
  FailureHandlerOptions options;
  options.locator.initial_chunk_bytes = size_t{256} << ((knobs >> 2) & 3);
  options.locator.context_lines = 1 + (knobs >> 4);
  FailureHandler handler(Builtin(), nullptr, options, &judge);
  LogView log = LogView::FromString(std::string(reinterpret_cast<const char*>(data), size));
  auto d = handler.Diagnose(log);
  SM_CHECK(d.ok()) << d.status().ToString();  // the built-in judge never fails
  if (d->root_cause) {
    SM_CHECK(d->root_cause->line_no >= 1);
    SM_CHECK(d->root_cause->line_no <= log.LineNumber(log.size()));
    SM_CHECK(d->context_first_line <= d->root_cause->line_no);
    SM_CHECK(d->context_last_line >= d->root_cause->line_no);
    SM_CHECK(d->confidence >= 0.0 && d->confidence <= 1.0);
  }
  JobContext job{"1", {"n1", "n2"}, knobs & 7, std::nullopt};
  RecoveryPlan plan = PlanRecovery(*d, job, RecoveryPolicy{});
  nlohmann::json j = DiagnosisToJson(*d);
  j["plan"] = PlanToJson(plan);
  (void)j.dump();  // throws on invalid UTF-8: the codec must have cleaned every string
}

void FuzzSignatures(const uint8_t* data, size_t size) {
  SignatureSet set;
  std::string yaml(reinterpret_cast<const char*>(data), size);
  if (!set.AddYaml(yaml, "fuzz.yaml").ok()) return;
  if (!set.Compile().ok()) return;
  (void)set.MatchLine("RuntimeError: CUDA error: out of memory");
  (void)set.MayContainFailure("a\nb\n");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t mode = data[0];
  if (mode == 0xFF) {
    if (size < 64 * 1024) FuzzSignatures(data + 1, size - 1);
    return 0;
  }
  FuzzLog(data + 1, size - 1, mode);
  return 0;
}
