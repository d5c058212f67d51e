#include "service/service_config.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace schedmate::service {
namespace {

// The example says "the value shown is the default unless marked example": hold it to that (it
// once said submit.policy: set while the binary used note).
TEST(ServiceConfig, ShippedExampleStatesTheBuiltInDefaults) {
  auto config =
      LoadServiceConfig(schedmate::testing::SourceDir() + "/config/schedmate.example.yaml");
  ASSERT_OK(config);
  const ServiceConfig& e = *config;
  const ServiceConfig d;
  EXPECT_EQ(e.data_dir, d.data_dir);
  EXPECT_EQ(e.database, d.database);
  EXPECT_EQ(e.poll_interval, d.poll_interval);
  EXPECT_EQ(e.dry_run, d.dry_run);
  EXPECT_NE(e.jobcomp_path, d.jobcomp_path);  // marked "example"
  EXPECT_EQ(e.use_sacct, d.use_sacct);
  EXPECT_EQ(e.command_timeout, d.command_timeout);
  EXPECT_EQ(e.listen, d.listen);
  EXPECT_EQ(e.port, d.port);
  EXPECT_EQ(e.token, d.token);
  EXPECT_EQ(e.token_file, d.token_file);
  EXPECT_EQ(e.max_body_bytes, d.max_body_bytes);
  EXPECT_EQ(e.request_timeout, d.request_timeout);
  EXPECT_EQ(e.threads, d.threads);
  EXPECT_EQ(e.max_connections, d.max_connections);
  EXPECT_EQ(e.serve_logs, d.serve_logs);
  EXPECT_EQ(e.allow_remote, d.allow_remote);
  EXPECT_EQ(SubmitPolicyName(e.submit_policy), SubmitPolicyName(d.submit_policy));
  EXPECT_EQ(e.limit_margin, d.limit_margin);
  EXPECT_EQ(e.min_limit_min, d.min_limit_min);
  EXPECT_EQ(e.max_limit_min, d.max_limit_min);
  EXPECT_EQ(e.min_confidence, d.min_confidence);
  EXPECT_EQ(SchedulingModeName(e.scheduling_mode), SchedulingModeName(d.scheduling_mode));
  EXPECT_EQ(e.order.policy, d.order.policy);
  EXPECT_EQ(e.order.max_changes, d.order.max_changes);
  EXPECT_EQ(e.order.max_wait, d.order.max_wait);
  EXPECT_EQ(e.reorder_nice, d.reorder_nice);
  EXPECT_EQ(e.reorder_explicit_priority, d.reorder_explicit_priority);
  EXPECT_EQ(e.order.priority_min, d.order.priority_min);
  EXPECT_EQ(e.order.priority_max, d.order.priority_max);
  EXPECT_EQ(e.max_drained_nodes, d.max_drained_nodes);
  EXPECT_EQ(e.retries_per_job, d.retries_per_job);
  EXPECT_EQ(e.drain_on_infra, d.drain_on_infra);
  EXPECT_EQ(e.requeue_on_infra, d.requeue_on_infra);
  EXPECT_EQ(e.backoff_base, d.backoff_base);
  EXPECT_EQ(e.backoff_cap, d.backoff_cap);
  EXPECT_EQ(e.exclude_failed_nodes, d.exclude_failed_nodes);
  EXPECT_EQ(e.hold_after_budget, d.hold_after_budget);
  EXPECT_EQ(e.hold_unknown, d.hold_unknown);
  EXPECT_EQ(e.annotate_comment, d.annotate_comment);
  EXPECT_EQ(e.stall_after, d.stall_after);
  EXPECT_EQ(e.slowdown_ratio, d.slowdown_ratio);
  EXPECT_EQ(e.metrics_interval, d.metrics_interval);
  EXPECT_EQ(e.max_samples_per_job, d.max_samples_per_job);
  EXPECT_EQ(e.capture_bytes, d.capture_bytes);
  EXPECT_EQ(e.llm_engine, d.llm_engine);
  EXPECT_EQ(e.llm_config, d.llm_config);
  EXPECT_EQ(e.whatif_trace, d.whatif_trace);
  EXPECT_EQ(e.whatif_format, d.whatif_format);
  EXPECT_EQ(e.whatif_slurm_conf, d.whatif_slurm_conf);
  EXPECT_EQ(e.whatif_max_jobs, d.whatif_max_jobs);
  EXPECT_EQ(e.whatif_max_seeds, d.whatif_max_seeds);
  EXPECT_EQ(e.whatif_timeout, d.whatif_timeout);
}

TEST(ServiceConfig, ApiExposureKeys) {
  auto config = ParseServiceConfig(
      "api:\n  serve_logs: all\n  max_connections: 10\n  allow_remote: true\n", "t.yaml");
  ASSERT_OK(config);
  EXPECT_EQ(config->serve_logs, LogAccess::kAll);
  EXPECT_EQ(config->max_connections, 10);
  EXPECT_TRUE(config->allow_remote);
  auto off = ParseServiceConfig("api:\n  serve_logs: off\n", "t.yaml");
  ASSERT_OK(off);
  EXPECT_EQ(off->serve_logs, LogAccess::kOff);
  auto bad = ParseServiceConfig("api:\n  serve_logs: everyone\n", "t.yaml");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("t.yaml:2"), std::string::npos) << bad.status().message();
  EXPECT_EQ(ParseServiceConfig("api:\n  max_connections: 0\n", "t.yaml").status().code(),
            StatusCode::kInvalidArgument);
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

TEST(ServiceConfig, WhatIfSection) {
  auto c = ParseServiceConfig(
      "whatif:\n  trace: /var/lib/schedmate/sacct.txt\n  format: sacct\n  max_jobs: 5000\n"
      "  max_seeds: 3\n  timeout_s: 20\n",
      "t.yaml");
  ASSERT_OK(c);
  EXPECT_EQ(c->whatif_trace, "/var/lib/schedmate/sacct.txt");
  EXPECT_EQ(c->whatif_format, "sacct");
  EXPECT_EQ(c->whatif_max_jobs, 5000);
  EXPECT_EQ(c->whatif_max_seeds, 3);
  EXPECT_EQ(c->whatif_timeout, Duration::Seconds(20));
  EXPECT_FALSE(ParseServiceConfig("whatif:\n  format: csvish\n", "t.yaml").ok());
  EXPECT_FALSE(ParseServiceConfig("whatif:\n  max_seeds: 0\n", "t.yaml").ok());
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* message;  // must appear in the error
};

TEST(ServiceConfig, StoreUrlChoosesTheBackendAndDefaultsToTheSqliteFile) {
  auto none = ParseServiceConfig("service:\n  data_dir: /d\n", "t.yaml");
  ASSERT_OK(none.status());
  EXPECT_EQ(none->StoreUrl(), "/d/schedmate.db");
  auto old = ParseServiceConfig("service:\n  database: /x/s.db\n", "t.yaml");
  ASSERT_OK(old.status());
  EXPECT_EQ(old->StoreUrl(), "/x/s.db");  // the old path option keeps working
  auto pg =
      ParseServiceConfig("store:\n  url: postgresql://sm@db/sm\n  instance_id: node-a\n", "t.yaml");
  ASSERT_OK(pg.status());
  EXPECT_EQ(pg->StoreUrl(), "postgresql://sm@db/sm");
  EXPECT_EQ(pg->instance_id, "node-a");
}

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
      {"bad scheduling mode", "scheduling:\n  mode: reorder\n",
       "t.yaml:2: scheduling.mode: expected advise or order; got 'reorder'"},
      {"bad ordering policy", "scheduling:\n  policy: magic\n",
       "t.yaml:2: scheduling.policy: expected one of fifo, sjf"},
      {"empty band", "scheduling:\n  priority_min: 100\n  priority_max: 101\n",
       "scheduling.priority_max must exceed scheduling.priority_min"},
      {"bad llm engine", "llm:\n  engine: gpt\n",
       "t.yaml:2: llm.engine: expected builtin, llm or auto; got 'gpt'"},
      {"bad store url", "store:\n  url: mysql://u:pw@h/db\n",
       "t.yaml:2: store.url: store.url 'mysql://u:***@h/db': unknown scheme"},
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

// slurm.clusters: each cluster with its own slurm.conf or Slurm cluster name (-M).
TEST(ServiceConfig, ClustersEachWithTheirSlurmConfOrClusterName) {
  auto c = ParseServiceConfig(
      "slurm:\n"
      "  clusters:\n"
      "    - {name: a, slurm_conf: /etc/slurm-a/slurm.conf, jobcomp_path: /var/log/a.jobcomp}\n"
      "    - name: b\n"
      "      cluster: gpu-b\n",
      "s.yaml");
  ASSERT_OK(c);
  ASSERT_EQ(c->clusters.size(), 2u);
  EXPECT_EQ(c->clusters[0].name, "a");
  EXPECT_EQ(c->clusters[0].slurm_conf, "/etc/slurm-a/slurm.conf");
  EXPECT_EQ(c->clusters[0].jobcomp_path, "/var/log/a.jobcomp");
  EXPECT_EQ(c->clusters[0].cluster, "");
  EXPECT_EQ(c->clusters[1].name, "b");
  EXPECT_EQ(c->clusters[1].cluster, "gpu-b");
  EXPECT_EQ(c->Clusters().size(), 2u);
  // Without clusters: one cluster, "default", reached as the environment says.
  auto one = ParseServiceConfig("slurm:\n  use_sacct: true\n", "s.yaml");
  ASSERT_OK(one);
  ASSERT_EQ(one->Clusters().size(), 1u);
  EXPECT_EQ(one->Clusters()[0].name, "default");
  EXPECT_EQ(one->Clusters()[0].slurm_conf, "");
  EXPECT_EQ(one->cluster_name, "default");
}

TEST(ServiceConfig, ClusterErrorsNameTheLineAndTheKey) {
  auto expect_error = [](const std::string& yaml, const std::string& where,
                         const std::string& what) {
    auto c = ParseServiceConfig(yaml, "s.yaml");
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find(where), std::string::npos) << c.status().message();
    EXPECT_NE(c.status().message().find(what), std::string::npos) << c.status().message();
  };
  expect_error(
      "slurm:\n  clusters:\n    - {name: a, cluster: a}\n    - {name: a, slurm_conf: /x}\n",
      "s.yaml:4: slurm.clusters[1].name", "duplicate cluster name 'a'");
  expect_error("slurm:\n  clusters:\n    - {name: a}\n", "s.yaml:3: slurm.clusters[0]",
               "exactly one of slurm_conf and cluster");
  expect_error("slurm:\n  clusters:\n    - {name: a, cluster: a, slurm_conf: /x}\n",
               "s.yaml:3: slurm.clusters[0]", "exactly one of slurm_conf and cluster");
  expect_error("slurm:\n  clusters:\n    - {cluster: a}\n", "slurm.clusters[0].name", "required");
  expect_error("slurm:\n  clusters:\n    - {name: \"a b\", cluster: a}\n",
               "s.yaml:3: slurm.clusters[0].name", "not a cluster name");
  expect_error("slurm:\n  clusters:\n    - {name: a, cluster: a, conf: /x}\n",
               "s.yaml:3: slurm.clusters[0].conf", "unknown key");
  expect_error("slurm:\n  clusters: []\n", "s.yaml:2: slurm.clusters", "expected a list");
  expect_error("slurm:\n  jobcomp_path: /x\n  clusters:\n    - {name: a, cluster: a}\n", "s.yaml",
               "jobcomp_path per cluster");
}

}  // namespace
}  // namespace schedmate::service
