#pragma once
// ApiServer: schedmate's HTTP JSON API over a running Companion (cpp-httplib).
//
//   GET  /                              the operator dashboard (web/ui/, embedded; see
//   GET  /ui/{file}                     ui_assets.h): a read-only page polling the GETs below
//   GET  /healthz                       liveness + whether Slurm answered the last tick; "status"
//                                       "degraded" for 10 minutes after a failed store call
//                                       (store_errors, last_store_error[_at])
//   GET  /metrics                       Prometheus text: queue, prediction error, failures by
//                                       class, actions by kind/outcome, store errors, estimates
//                                       served, ...
//   GET  /v1/clusters                   the watched clusters (slurm.clusters) with their state
//   GET  /v1/jobs[?limit&after&state&user&partition&cluster]
//                                       live jobs with prediction, metrics, start estimate, one
//                                       page at a time by job id (job_list.h: limit 1..5000,
//                                       default 200; "next" and "total"; 400 naming the field);
//                                       ETag per published view, If-None-Match -> 304; one
//                                       cluster's (?cluster=, else the first)
//   GET  /v1/jobs/{id}                  one job in detail
//   GET  /v1/jobs/{id}/metrics[?limit]  stored metric series
//   GET  /v1/jobs/{id}/log[?bytes]      tail of the job's own StdOut (validated, see log_access.h)
//   GET  /v1/predictions                live jobs' predictions with explanations
//   GET  /v1/history[?limit]            finished jobs from the history store
//   GET  /v1/failures                   diagnosed failures (class, reason, evidence, checkpoint)
//   GET  /v1/failures/{id}/log          the log copy captured before any requeue
//   GET  /v1/actions                    every automated action with reason, outcome, detail and
//                                       skip_reason (requeues: attempt, budget, delay_s,
//                                       release_at, exclude_nodes, checkpoint)
//   GET  /v1/nodes                      nodes with GPUs, state and drain reason
//   GET  /v1/start-estimates            pending jobs: estimated start + Slurm's pending reason
//   POST /v1/estimate                   submit-time estimate (what job_submit.lua calls): the
//                                       script as text/plain with resources in the query, or JSON
//                                       {"script","name","user","partition","gpus","nodes",
//                                       "time_limit_min"}; ?format=kv answers key=value lines
//   POST /v1/whatif                     baseline vs scenario on the service's history
//                                       (sim/whatif_run.h, as `schedmate whatif --json`); body:
//                                       {"add_nodes", "remove_nodes", "load", "policy", "set",
//                                       "seeds", "seed"} (json_codecs.h). 400 naming the field
//                                       ("field"), 409 "no_history" when the site has no usable
//                                       history, 429 "busy" while another run goes, 504 after
//                                       whatif.timeout_s (whatif_runner.h). No token needed: it
//                                       changes nothing.
//   POST /v1/nodes/{name}/resume        state-changing: needs "Authorization: Bearer <token>";
//                                       only a node schedmate drained (404 unknown node, 409
//                                       any other node: Slurm is not asked)
//
// Safety: binds 127.0.0.1 unless configured otherwise (serve refuses another address without a
// token unless api.allow_remote); request bodies are capped (api.max_body_bytes); each request
// must arrive within api.request_timeout_s and at most api.max_connections connections are open
// (bounded_http_server.h: slow clients hold no thread and cannot starve /healthz);
// state-changing calls need the configured token (compared in constant time) and are refused
// when none is configured; log endpoints never take a path from the request, follow
// api.serve_logs (token: the bearer token is needed, all, off) and read a job's log only as that
// job's own file (service/log_access.h). Errors are JSON {"error": text, "code": word}.
//
// Several clusters (slurm.clusters): every job, failure, action, node and anomaly carries
// "cluster"; list routes take ?cluster=NAME (404 "unknown_cluster" for another name) and list
// the clusters in configuration order, each in its own order (the paged /v1/jobs: one cluster,
// the first without ?cluster=); a route naming a job (or node) that
// is live on several clusters needs ?cluster= (409 "ambiguous", with "clusters"); /metrics
// series get a cluster="NAME" label; /healthz adds "clusters". /v1/report and /v1/scheduling
// are one cluster's (?cluster=, else the first); the estimate and what-if routes use the first
// cluster's configuration (the advisor is shared).
//
// Thread-safety: handlers run on the server's workers; they read the Companion's immutable
// views, and the read-side stores behind one mutex.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/job_list.h"
#include "api/whatif_runner.h"
#include "core/result.h"
#include "service/companion.h"
#include "service/service_config.h"
#include "service/service_store.h"
#include "store/history_store.h"

namespace schedmate::service {
class WhyRephraser;
}  // namespace schedmate::service

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace schedmate::api {

class BoundedHttpServer;

// One watched cluster, as the API sees it.
struct ApiCluster {
  service::ClusterConfig config;  // name, and how its Slurm is reached
  service::Companion* companion;  // must outlive the server
  service::ServiceStore* store;   // its rows, on the API's own read connection
};

struct ApiReadStores {
  service::ServiceStore& service;  // a connection of its own (not the companion's)
  store::HistoryStore& history;    // likewise
};

class ApiServer {
 public:
  // `companion` and the stores must outlive the server. `token` "" = state changes refused.
  ApiServer(service::Companion& companion, ApiReadStores stores, std::string token);
  // Several clusters (at least one): the first one's configuration sets the API's own; the
  // stores share `history`'s connection (behind one mutex). `label_clusters`: /metrics series
  // carry cluster="NAME" (slurm.clusters is configured).
  ApiServer(std::vector<ApiCluster> clusters, store::HistoryStore& history, std::string token,
            bool label_clusters);
  ~ApiServer();

  // Binds listen:port (port 0 = any free port) and serves on a background thread.
  // kUnavailable when the address cannot be bound.
  Status Start(const std::string& listen, int port);
  void Stop();
  int port() const { return port_; }
  // With an LLM configured: why-answers get their explanation rephrased (service/why_rephrase.h;
  // may be null, not owned, must outlive the server). Call before Start().
  void SetWhyRephraser(service::WhyRephraser* rephraser) { why_rephraser_ = rephraser; }
  // The runner behind POST /v1/whatif (one run at a time).
  WhatIfRunner& whatif_runner() { return whatif_; }

 private:
  // The ETag instance, one job list cache per cluster, the routes (both constructors).
  void Init();
  // Registers the handlers, one function per area of the API.
  void Routes();
  void RouteDashboard();           // /, /ui/{file}
  void RouteHealth();              // /healthz, /metrics
  void RouteJobList();             // /v1/jobs
  void RouteJobs();                // /v1/jobs/{id}... (and .../why, metrics, log)
  void RoutePredictions();         // /v1/predictions, /v1/history, /v1/start-estimates
  void RouteReport();              // /v1/report
  void RouteFailuresAndActions();  // /v1/anomalies, /v1/failures..., /v1/actions, /v1/nodes, resume
  void RouteScheduling();          // /v1/scheduling
  void RouteEstimate();            // POST /v1/estimate
  void RouteWhatIf();              // POST /v1/whatif
  void RouteClusters();            // /v1/clusters
  void RouteNodes();               // /v1/nodes, resume
  // The clusters ?cluster= selects (all without it); empty after an unknown name (404 sent).
  std::vector<const ApiCluster*> Selected(const httplib::Request& req,
                                          httplib::Response& res) const;
  // The cluster of job `id` (or node `id` with `node`): ?cluster=, else the one whose last view
  // lists it; null after an error was sent (404 unknown/not live, 409 live on several).
  const ApiCluster* ClusterOf(const httplib::Request& req, httplib::Response& res,
                              const std::string& id, bool node) const;
  std::string Metrics();  // the /metrics text
  // api.serve_logs: true when the caller may read logs; otherwise the refusal is sent.
  bool MayReadLogs(const httplib::Request& req, httplib::Response& res) const;
  // "Authorization: Bearer <token>" with the configured (non-empty) token.
  bool HasToken(const httplib::Request& req) const;
  std::vector<ApiCluster> clusters_;
  bool label_clusters_ = false;
  service::Companion& companion_;  // the first cluster's
  ApiReadStores stores_;           // the first cluster's store, and the shared history
  // GET /v1/jobs: each job's JSON once per published view, one cache per cluster.
  std::vector<std::unique_ptr<JobListCache>> job_lists_;
  uint64_t instance_ = 0;  // random per server: ETags of another process never match
  std::mutex stores_mu_;
  std::string token_;
  std::unique_ptr<BoundedHttpServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int64_t> requests_{0};
  service::WhyRephraser* why_rephraser_ = nullptr;
  WhatIfRunner whatif_;  // last: its run (which reads the members above) ends first
};

// The user name for a numeric uid ("" when unknown).
std::string UserNameForUid(int64_t uid);

// a == b, in a time that depends only on the sizes (a caller's guess at a token learns nothing
// from how long the comparison took).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace schedmate::api
