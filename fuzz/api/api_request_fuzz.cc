// libFuzzer target for what POST /v1/estimate parses, the API's only request with a body (the
// resume route takes none): arbitrary bytes as the JSON body (api/json_codecs.h
// EstimateRequestFromJson, then NormalizeEstimateRequest) or as the raw batch script of
// job_submit.lua's form, then what the route does with the request: the service advisor's
// prediction (which reads the script with the advisor's shell and Python readers), the submit
// policy, and the JSON answer. Nothing may crash, throw or
// overflow, and the request handed on must be within the documented ranges.
//
// Input: the first byte picks the form and the submit policy: 'a' 'e' 'i' 'm' a JSON body with the
// policy off, note, set, cap; 'b' 'f' 'j' 'n' a raw script likewise (any byte maps onto one).
// The advisor resolves files the script names against the current directory: the target works
// in an empty directory of its own (removed at exit), so give it corpus and input paths that are
// absolute (scripts/test.sh does).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "api/json_codecs.h"
#include "core/check.h"
#include "core/json_dump.h"
#include "service/component_adapters.h"
#include "service/submit_advice.h"
#include "slurm/slurm_parsers.h"
#include "store/history_store.h"

namespace {

using namespace schedmate;

struct Advisors {
  std::unique_ptr<store::SqliteHistoryStore> history;
  std::unique_ptr<service::AdvisorJobAdvisor> components;
};

Advisors& GetAdvisors() {
  static Advisors* a = [] {
    auto* out = new Advisors;
    auto history = store::SqliteHistoryStore::Open(":memory:");
    SM_CHECK(history.ok()) << history.status().ToString();
    out->history = std::move(*history);
    auto components = service::AdvisorJobAdvisor::Create(*out->history);
    SM_CHECK(components.ok()) << components.status().ToString();
    out->components = std::move(*components);
    return out;
  }();
  return *a;
}

void CheckRequest(const service::JobContext& job) {
  SM_CHECK(job.gpus >= 0 && job.gpus <= slurm::kMaxGpuCount) << job.gpus;
  SM_CHECK(job.nodes >= 1 && job.nodes <= (1 << 20)) << job.nodes;
  if (job.time_limit_min) {
    SM_CHECK(*job.time_limit_min >= 1 && *job.time_limit_min <= slurm::kMaxTimeLimitMinutes)
        << *job.time_limit_min;
  }
  SM_CHECK(!job.name.empty());
}

void Advise(service::JobAdvisor& advisor, const service::JobContext& job,
            const service::ServiceConfig& config) {
  const SimTime now = SimTime::FromSeconds(1'800'000'000);
  auto p = advisor.Predict(job, now);
  if (!p.ok()) return;
  const service::SubmitAdvice advice = service::AdviseSubmission(*p, job.time_limit_min, config);
  if (advice.set_time_limit_min) {
    SM_CHECK(*advice.set_time_limit_min >= config.min_limit_min &&
             *advice.set_time_limit_min <= config.max_limit_min);
  }
  (void)DumpJson(api::ToJson(advice));
}

char work_dir[] = "/tmp/schedmate-api-fuzz-XXXXXX";  // mkdtemp fills in the X's

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  SM_CHECK(mkdtemp(work_dir) != nullptr);
  SM_CHECK(chdir(work_dir) == 0);
  std::atexit([] { (void)rmdir(work_dir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 64 * 1024) return 0;
  const uint8_t selector = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  service::JobContext job;
  if (static_cast<uint8_t>(selector - 'a') % 2 == 0) {
    auto parsed = api::EstimateRequestFromJson(body);
    if (!parsed.ok()) {
      SM_CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
      return 0;
    }
    job = std::move(*parsed);
  } else {
    job.script = std::string(body);
    job.nodes = 1;
  }
  api::NormalizeEstimateRequest(job);
  CheckRequest(job);
  service::ServiceConfig config;
  const service::SubmitPolicy policies[] = {
      service::SubmitPolicy::kOff, service::SubmitPolicy::kNote, service::SubmitPolicy::kSet,
      service::SubmitPolicy::kCap};
  config.submit_policy = policies[(selector >> 2) & 3];
  Advisors& advisors = GetAdvisors();
  Advise(*advisors.components, job, config);
  return 0;
}
