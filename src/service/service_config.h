#pragma once
// ServiceConfig: everything `schedmate serve --slurm` can be told, from one YAML file
// (config/schedmate.example.yaml documents every key). Loading validates types and ranges and
// rejects unknown keys; errors name the file, line and dotted key ("schedmate.yaml:12:
// api.port: expected an integer in 1..65535, got 'http'").

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"
#include "service/anomalies.h"
#include "service/gpu_probe.h"
#include "service/queue_orderer.h"
#include "service/start_estimator.h"

namespace schedmate::service {

enum class SubmitPolicy { kOff, kNote, kSet, kCap };
std::string_view SubmitPolicyName(SubmitPolicy p);

// What the companion does with the pending queue: only advise (predictions, start estimates,
// time limits through job_submit.lua), or also order it through job priorities
// (queue_orderer.h).
enum class SchedulingMode { kAdvise, kOrder };
std::string_view SchedulingModeName(SchedulingMode m);  // "advise" | "order"

// Who may read job logs through the API (GET /v1/jobs/{id}/log, /v1/failures/{id}/log): callers
// with the bearer token (the default), anyone who can reach the API, or nobody.
enum class LogAccess { kToken, kAll, kOff };
std::string_view LogAccessName(LogAccess a);

// One Slurm cluster the companion watches (slurm.clusters). Its Slurm commands run with
// SLURM_CONF=slurm_conf, or with --clusters=cluster (Slurm's -M); exactly one of the two is set.
struct ClusterConfig {
  std::string name;          // unique; 1..64 of [A-Za-z0-9_.-] (service_store.h ValidClusterName)
  std::string slurm_conf;    // "" = not set
  std::string cluster;       // "" = not set
  std::string jobcomp_path;  // this cluster's JobCompLoc with jobcomp/filetxt ("" = none)
};

struct ServiceConfig {
  // service:
  std::string data_dir = "/var/lib/schedmate";  // captured logs live under <data_dir>/logs
  std::string database;                         // "" = <data_dir>/schedmate.db
  // store: where the state lives (store/db.h): "" = the SQLite file `database` above;
  // sqlite:///path, or postgresql://... shared by several instances (one acts: leader.h).
  std::string store_url;
  std::string instance_id;  // this instance on a shared store ("" = host:pid)
  Duration poll_interval = Duration::Seconds(2);
  bool dry_run = false;  // record actions, never execute them
  // slurm:
  std::string jobcomp_path;  // JobCompLoc with jobcomp/filetxt; "" = none
  bool use_sacct = false;
  Duration command_timeout = Duration::Seconds(10);
  // slurm.clusters: several clusters, one companion each in one process (sharing the store and
  // the advisor). Empty: the one cluster the environment's Slurm clients reach, named "default".
  std::vector<ClusterConfig> clusters;
  // The cluster this configuration's companion watches (serve sets it per cluster).
  std::string cluster_name = "default";
  // api:
  std::string listen = "127.0.0.1";
  int port = 8787;
  std::string token;       // required for state-changing calls
  std::string token_file;  // or read from this file (first line)
  int64_t max_body_bytes = 1 << 20;
  Duration request_timeout = Duration::Seconds(5);
  int threads = 32;           // HTTP workers; they run complete requests only (see api_server.h)
  int max_connections = 256;  // open connections at once; beyond it the oldest waiting one goes
  LogAccess serve_logs = LogAccess::kToken;
  bool allow_remote = false;  // listen on a non-loopback address without a token
  // submit: (what job_submit.lua applies)
  SubmitPolicy submit_policy = SubmitPolicy::kNote;
  double limit_margin = 1.5;  // limit = margin x the estimate's high end
  int64_t min_limit_min = 5;
  int64_t max_limit_min = 7 * 24 * 60;
  double min_confidence = 0.0;  // below this, only note, never set/cap
  // actions:
  int max_drained_nodes = 1;  // nodes drained by schedmate at once
  int retries_per_job = 1;    // requeues schedmate may do per job
  bool drain_on_infra = true;
  bool requeue_on_infra = true;
  // A retry waits backoff_base x 2^(retries already done), at most backoff_cap (a planner may
  // ask for less: preemptions retry at once). StartTime=now+delay in Slurm.
  Duration backoff_base = Duration::Seconds(60);
  Duration backoff_cap = Duration::Minutes(30);
  bool exclude_failed_nodes = true;  // the retry avoids the implicated nodes (ExcNodeList)
  bool hold_after_budget = true;     // retry budget used: requeue held (a person releases it)
  bool hold_unknown = false;         // hold unclear failures too (the planner asks; off = notify)
  bool annotate_comment = true;      // say what was done (and the checkpoint) in the job's Comment
  // scheduling: (order mode: queue_orderer.h; every change is an action of kind "priority")
  SchedulingMode scheduling_mode = SchedulingMode::kAdvise;
  // Start-time estimates: the scheduler they model (serve: the site's slurm.conf; not in YAML).
  StartEstimatorOptions start_estimates;
  // policy (a simulator policy: schedmate, sjf, tiresias, ...), max_changes_per_pass
  // (scontrol priority updates per pass), max_wait_s (jobs waiting half of it go first),
  // priority_min/max (the band schedmate's priorities live in): queue_orderer.h.
  OrderOptions order;
  bool reorder_nice = false;  // also reorder jobs whose user set --nice
  // Also reorder jobs whose priority an operator set (--priority, scontrol): detected under
  // priority/multifactor (sprio does not list them) and, under priority/basic, as a value
  // outside basic's numbering band.
  bool reorder_explicit_priority = false;
  // tracker:
  Duration stall_after = Duration::Minutes(10);
  double slowdown_ratio = 1.2;
  Duration metrics_interval = Duration::Seconds(10);
  int max_samples_per_job = 720;
  // usage: what running jobs' GPUs, CPUs and memory do (service/gpu_probe.h)
  UsageProbeOptions usage;
  // anomalies: thresholds and minimum durations (service/anomalies.h)
  AnomalyOptions anomalies;
  // failure:
  int64_t capture_bytes = 8 << 20;  // tail of the log kept per failed run
  // whatif: POST /v1/whatif (sim/whatif_run.h) replays a history on the site and a scenario.
  std::string whatif_trace;            // a trace or sacct export; "" = the store's finished jobs
  std::string whatif_format = "auto";  // the trace's format (trace/trace_reader.h names)
  std::string whatif_slurm_conf;       // the cluster's nodes; "" = the nodes Slurm shows now
  int64_t whatif_max_jobs = 20000;     // jobs per simulated run (the latest are kept)
  int whatif_max_seeds = 5;            // seeds a request may ask for
  Duration whatif_timeout = Duration::Seconds(60);  // then 504; one run at a time (else 429)
  // llm: the failure diagnoser's engine, also the why route's rephrasing (builtin | llm | auto,
  // llm/engine.h's rule; any LLM failure falls back to the built-in text and is counted or
  // named) and its configuration file
  // ("" = $SCHEDMATE_LLM_CONFIG, else the SCHEDMATE_LLM_* environment).
  std::string llm_engine = "builtin";
  std::string llm_config;

  // `clusters`, or the one default cluster (no SLURM_CONF or --clusters of its own).
  std::vector<ClusterConfig> Clusters() const;
  std::string DatabasePath() const;
  // store.url, else the SQLite path (DatabasePath()).
  std::string StoreUrl() const;
  std::string CapturedLogDir() const;
};

// Parses YAML text; `source` names it in errors. kInvalidArgument on any problem.
Result<ServiceConfig> ParseServiceConfig(const std::string& yaml_text, const std::string& source);
// Reads and parses a file. kNotFound when missing.
Result<ServiceConfig> LoadServiceConfig(const std::string& path);

}  // namespace schedmate::service
