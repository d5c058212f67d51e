#include "service/service_config.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace schedmate::service {
namespace {

TEST(ServiceConfig, ShippedExampleParses) {
  auto config =
      LoadServiceConfig(schedmate::testing::SourceDir() + "/config/schedmate.example.yaml");
  ASSERT_OK(config);
  EXPECT_EQ(config->listen, "127.0.0.1");
  EXPECT_EQ(config->port, 8787);
  EXPECT_EQ(config->submit_policy, SubmitPolicy::kSet);
  EXPECT_EQ(config->max_drained_nodes, 1);
}

TEST(ServiceConfig, ReadsEveryKind) {
  auto config = ParseServiceConfig(
      "service:\n  data_dir: /tmp/x\n  poll_interval_s: 0.5\n  dry_run: yes\n"
      "api:\n  port: 9000\n  token: s3cret\n"
      "submit:\n  policy: cap\n  limit_margin: 2\n"
      "actions:\n  max_drained_nodes: 3\n",
      "t.yaml");
  ASSERT_OK(config);
  EXPECT_EQ(config->poll_interval, Duration::Millis(500));
  EXPECT_TRUE(config->dry_run);
  EXPECT_EQ(config->port, 9000);
  EXPECT_EQ(config->submit_policy, SubmitPolicy::kCap);
  EXPECT_EQ(config->DatabasePath(), "/tmp/x/schedmate.db");
  auto empty = ParseServiceConfig("", "e.yaml");
  ASSERT_OK(empty);
  EXPECT_EQ(empty->port, 8787);
}

TEST(ServiceConfig, RecoveryKnobsAndTheirDefaults) {
  auto defaults = ParseServiceConfig("", "e.yaml");
  ASSERT_OK(defaults);
  EXPECT_EQ(defaults->backoff_base, Duration::Seconds(60));
  EXPECT_EQ(defaults->backoff_cap, Duration::Minutes(30));
  EXPECT_TRUE(defaults->exclude_failed_nodes);
  EXPECT_TRUE(defaults->hold_after_budget);
  EXPECT_FALSE(defaults->hold_unknown);
  EXPECT_TRUE(defaults->annotate_comment);
  auto config = ParseServiceConfig(
      "actions:\n  backoff_base_s: 5\n  backoff_cap_s: 40\n  exclude_failed_nodes: false\n"
      "  hold_after_budget: no\n  hold_unknown: yes\n  annotate_comment: off\n",
      "t.yaml");
  ASSERT_OK(config);
  EXPECT_EQ(config->backoff_base, Duration::Seconds(5));
  EXPECT_EQ(config->backoff_cap, Duration::Seconds(40));
  EXPECT_FALSE(config->exclude_failed_nodes);
  EXPECT_FALSE(config->hold_after_budget);
  EXPECT_TRUE(config->hold_unknown);
  EXPECT_FALSE(config->annotate_comment);
}

TEST(ServiceConfig, LlmSection) {
  auto d = ParseServiceConfig("service:\n  dry_run: true\n", "t.yaml");
  ASSERT_OK(d);
  EXPECT_EQ(d->llm_engine, "builtin");  // the built-in engines are the default
  EXPECT_TRUE(d->llm_config.empty());
  auto c =
      ParseServiceConfig("llm:\n  engine: auto\n  config: /etc/schedmate/llm.yaml\n", "t.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->llm_engine, "auto");
  EXPECT_EQ(c->llm_config, "/etc/schedmate/llm.yaml");
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* message;  // must appear in the error
};

TEST(ServiceConfig, ErrorsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"unknown key", "api:\n  prot: 80\n", "t.yaml:2: api.prot: unknown key"},
      {"unknown section", "apix:\n  port: 80\n", "t.yaml:1: apix: unknown section"},
      {"bad int", "api:\n  port: http\n",
       "t.yaml:2: api.port: expected an integer in 0..65535, got 'http'"},
      {"bad bool", "service:\n  dry_run: maybe\n", "service.dry_run: expected true or false"},
      {"bad policy", "submit:\n  policy: always\n",
       "submit.policy: expected one of off, note, set, cap"},
      {"range", "submit:\n  limit_margin: 0.5\n",
       "submit.limit_margin: expected a number in 1..100"},
      {"bad yaml", "api: [1, 2\n", "t.yaml:"},
      {"not a map", "- 1\n- 2\n", "expected a mapping"},
      {"both sources", "slurm:\n  jobcomp_path: /x\n  use_sacct: true\n", "not both"},
      {"cap below base", "actions:\n  backoff_base_s: 120\n  backoff_cap_s: 60\n",
       "actions.backoff_cap_s must not be below actions.backoff_base_s"},
      {"negative backoff", "actions:\n  backoff_base_s: -1\n",
       "t.yaml:2: actions.backoff_base_s: expected a number in 0..86400"},
      {"bad llm engine", "llm:\n  engine: gpt\n",
       "t.yaml:2: llm.engine: expected builtin, llm or auto; got 'gpt'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto config = ParseServiceConfig(c.yaml, "t.yaml");
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find(c.message), std::string::npos)
        << config.status().message();
  }
  EXPECT_EQ(LoadServiceConfig("/no/such/schedmate.yaml").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace schedmate::service
