#include "api/json_codecs.h"

#include <gtest/gtest.h>

#include "slurm/slurm_parsers.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

TEST(EstimateRequestFromJson, ReadsTheFields) {
  auto job = EstimateRequestFromJson(
      R"({"script":"#!/bin/sh\ntrue\n","name":"bert","user":"ana","partition":"gpu",)"
      R"("gpus":4,"nodes":2,"time_limit_min":90})");
  ASSERT_OK(job);
  EXPECT_EQ(job->script, "#!/bin/sh\ntrue\n");
  EXPECT_EQ(job->name, "bert");
  EXPECT_EQ(job->user, "ana");
  EXPECT_EQ(job->partition, "gpu");
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->nodes, 2);
  EXPECT_EQ(job->time_limit_min, std::optional<int64_t>(90));
}

TEST(EstimateRequestFromJson, RejectsWhatIsNotAnObject) {
  for (const char* body : {"", "{nope", "[1,2]", "\"text\"", "null", "{\"a\":1} trailing"}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(EstimateRequestFromJson(body).status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(EstimateRequestFromJson, WrongTypesKeepDefaultsAndCountsAreClamped) {
  auto job = EstimateRequestFromJson(
      R"({"name":7,"user":["a"],"gpus":18446744073709551615,"nodes":-3,"time_limit_min":1.5})");
  ASSERT_OK(job);
  EXPECT_EQ(job->name, "");
  EXPECT_EQ(job->user, "");
  EXPECT_EQ(job->gpus, slurm::kMaxGpuCount);
  EXPECT_EQ(job->nodes, 1);
  EXPECT_FALSE(job->time_limit_min.has_value());
}

// Found by fuzz/api/api_request_fuzz: a limit past Slurm's range reached the advisors, whose
// Duration::Minutes(limit) overflowed int64 microseconds (undefined behaviour).
TEST(NormalizeEstimateRequest, LimitsOutsideSlurmsRangeMeanNone) {
  struct Case {
    const char* name;
    int64_t limit;
    bool kept;
  };
  const Case cases[] = {
      {"zero", 0, false},
      {"negative", -5, false},
      {"one minute", 1, true},
      {"largest", slurm::kMaxTimeLimitMinutes, true},
      {"NO_VAL", 4294967294, false},
      {"INFINITE", 4294967295, false},
      {"overflows microseconds", int64_t{200'000'000'000'000'000}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    service::JobContext job;
    job.name = "x";
    job.time_limit_min = c.limit;
    NormalizeEstimateRequest(job);
    EXPECT_EQ(job.time_limit_min.has_value(), c.kept);
  }
  service::JobContext unnamed;
  NormalizeEstimateRequest(unnamed);
  EXPECT_EQ(unnamed.name, "sbatch");
}

}  // namespace
}  // namespace schedmate::api
