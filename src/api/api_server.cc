#include "api/api_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <pwd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <vector>

#include "api/bounded_http_server.h"
#include "api/job_list.h"
#include "api/json_codecs.h"
#include "api/ui_assets.h"
#include "core/clock.h"
#include "core/json_dump.h"
#include "core/strings.h"
#include "service/anomalies.h"
#include "service/log_access.h"
#include "service/report.h"
#include "service/why.h"
#include "service/why_rephrase.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::api {

using nlohmann::json;

std::string UserNameForUid(int64_t uid) {
  if (uid < 0) return "";
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* out = nullptr;
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &out) != 0 ||
      out == nullptr) {
    return "";
  }
  return out->pw_name;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of `a` is compared (with itself past the end of `b`): no early exit, no branch
  // on the contents.
  unsigned acc = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : x;
    acc |= static_cast<unsigned>(x ^ y);
  }
  volatile unsigned result = acc;  // keeps the loop from being turned into a memcmp
  return result == 0;
}

namespace {

void SendJson(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

// A word a client can test instead of the message: the status's own unless a route says more.
const char* CodeForStatus(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 413:
      return "body_too_large";
    case 429:
      return "busy";
    case 503:
      return "unavailable";
    case 504:
      return "timeout";
    default:
      return "internal";
  }
}

void SendError(httplib::Response& res, int status, const std::string& code,
               const std::string& message) {
  if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
  SendJson(res, json{{"error", message}, {"code", code}}, status);
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendError(res, status, CodeForStatus(status), message);
}

ConnectionLimits LimitsFrom(const service::ServiceConfig& cfg) {
  ConnectionLimits limits;
  auto ms = std::chrono::milliseconds(std::max<int64_t>(1, cfg.request_timeout.micros() / 1000));
  limits.request_timeout = ms;
  limits.idle_timeout = ms;
  limits.write_timeout = ms;
  limits.max_connections = cfg.max_connections;
  limits.max_body_bytes = static_cast<size_t>(cfg.max_body_bytes);
  limits.threads = cfg.threads;
  return limits;
}

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

int64_t QueryInt(const httplib::Request& req, const char* key, int64_t fallback, int64_t lo,
                 int64_t hi) {
  if (!req.has_param(key)) return fallback;
  auto v = ParseInt(req.get_param_value(key));
  return v ? std::clamp(*v, lo, hi) : fallback;
}

// The cluster's partitions, nodes and users: names a rephrased why-explanation may use only when
// the answer's facts hold them (service/why_rephrase.h). Sorted, unique.
std::vector<std::string> KnownNames(const service::ServiceView& v) {
  std::vector<std::string> names;
  for (const auto& n : v.nodes) {
    names.push_back(n.name);
    names.insert(names.end(), n.partitions.begin(), n.partitions.end());
  }
  for (const auto& j : v.jobs) {
    names.push_back(j.job.partition);
    names.push_back(j.job.user);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// One line, no '=' surprises for the Lua side: newlines become spaces.
std::string KvValue(std::string_view v) {
  std::string out(v);
  for (auto& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

// A job's JSON with the cluster it runs on.
json JobJson(const service::ServiceView& view, const service::JobView& j, bool detail) {
  json out = ToJson(j, detail);
  out["cluster"] = view.cluster;
  return out;
}

const service::JobView* FindJob(const service::ServiceView& view, const std::string& id) {
  auto it = std::lower_bound(view.jobs.begin(), view.jobs.end(), id,
                             [](const service::JobView& v, const std::string& key) {
                               if (v.job.id.size() != key.size())
                                 return v.job.id.size() < key.size();
                               return v.job.id < key;
                             });
  return it != view.jobs.end() && it->job.id == id ? &*it : nullptr;
}

std::string PromEscape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

ApiServer::ApiServer(service::Companion& companion, ApiReadStores stores, std::string token)
    : clusters_{ApiCluster{{.name = companion.config().cluster_name}, &companion, &stores.service}},
      companion_(companion),
      stores_(stores),
      token_(std::move(token)),
      server_(std::make_unique<BoundedHttpServer>(LimitsFrom(companion.config()))) {
  Init();
}

void ApiServer::Init() {
  std::random_device rd;
  instance_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  for (size_t i = 0; i < clusters_.size(); ++i) {
    job_lists_.push_back(std::make_unique<JobListCache>());
  }
  Routes();
}

ApiServer::ApiServer(std::vector<ApiCluster> clusters, store::HistoryStore& history,
                     std::string token, bool label_clusters)
    : clusters_(std::move(clusters)),
      label_clusters_(label_clusters),
      companion_(*clusters_.at(0).companion),
      stores_{*clusters_.at(0).store, history},
      token_(std::move(token)),
      server_(std::make_unique<BoundedHttpServer>(LimitsFrom(companion_.config()))) {
  Init();
}

std::vector<const ApiCluster*> ApiServer::Selected(const httplib::Request& req,
                                                   httplib::Response& res) const {
  std::vector<const ApiCluster*> out;
  const std::string want = req.has_param("cluster") ? req.get_param_value("cluster") : "";
  for (const auto& c : clusters_)
    if (want.empty() || c.config.name == want) out.push_back(&c);
  if (out.empty()) SendError(res, 404, "unknown_cluster", "no cluster named '" + want + "'");
  return out;
}

const ApiCluster* ApiServer::ClusterOf(const httplib::Request& req, httplib::Response& res,
                                       const std::string& id, bool node) const {
  std::vector<const ApiCluster*> candidates = Selected(req, res);
  if (candidates.empty()) return nullptr;
  if (candidates.size() == 1) return candidates.front();
  std::vector<const ApiCluster*> found;
  for (const ApiCluster* c : candidates) {
    auto v = c->companion->View();
    bool has = node ? std::any_of(v->nodes.begin(), v->nodes.end(),
                                  [&](const slurm::SlurmNode& n) { return n.name == id; })
                    : FindJob(*v, id) != nullptr;
    if (has) found.push_back(c);
  }
  if (found.size() == 1) return found.front();
  const std::string what = (node ? "node " : "job ") + id;
  if (found.empty()) {
    SendError(res, 404, node ? "unknown node " + id : "no live job " + id);
    return nullptr;
  }
  json names = json::array();
  for (const ApiCluster* c : found) names.push_back(c->config.name);
  SendJson(res,
           json{{"error", what + " exists on several clusters: add ?cluster=NAME"},
                {"code", "ambiguous"},
                {"clusters", std::move(names)}},
           409);
  return nullptr;
}

bool ApiServer::HasToken(const httplib::Request& req) const {
  return !token_.empty() &&
         ConstantTimeEquals(req.get_header_value("Authorization"), "Bearer " + token_);
}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start(const std::string& listen, int port) {
  // Deadlines, the connection cap and the workers are BoundedHttpServer's (see LimitsFrom).
  server_->set_tcp_nodelay(true);  // small JSON answers: no Nagle/delayed-ACK 40 ms stalls
  if (port == 0) {
    port_ = server_->bind_to_any_port(listen);
    if (port_ < 0) return Status::Unavailable(fmt::format("cannot bind {}:<any>", listen));
  } else {
    if (!server_->bind_to_port(listen, port)) {
      return Status::Unavailable(
          fmt::format("cannot bind {}:{} (in use, or not a local address?)", listen, port));
    }
    port_ = port;
  }
  server_->WidenBacklog();
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() does nothing until the accept loop runs, and Stop() joins that loop: wait
  // (bounded) for it, so a Stop() right after Start() cannot hang.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

void ApiServer::Stop() {
  whatif_.Cancel();  // a what-if handler waiting for its run returns at the run's next check
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  if (server_) server_->Shutdown();
}

namespace {

// Serves one embedded dashboard file (see ui_assets.h); reads need no token.
void SendUiAsset(httplib::Response& res, const UiAsset& asset) {
  res.set_header("Content-Security-Policy", std::string(kUiContentSecurityPolicy));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-cache");
  res.set_content(asset.body.data(), asset.body.size(), std::string(asset.content_type).c_str());
}

}  // namespace

bool ApiServer::MayReadLogs(const httplib::Request& req, httplib::Response& res) const {
  switch (companion_.config().serve_logs) {
    case service::LogAccess::kAll:
      return true;
    case service::LogAccess::kOff:
      SendError(res, 403, "logs_off", "log reads are turned off (api.serve_logs: off)");
      return false;
    case service::LogAccess::kToken:
      break;
  }
  if (token_.empty()) {
    SendError(res, 403, "token_not_configured",
              "log reads need the API token (api.serve_logs: token) and none is configured");
    return false;
  }
  if (!HasToken(req)) {
    SendError(res, 401, "unauthorized",
              "log reads need \"Authorization: Bearer <token>\" (api.serve_logs: token)");
    return false;
  }
  return true;
}

namespace {

// A log read's failure: refusals are 403 "log_refused", a missing log 404 "no_log".
void SendLogError(httplib::Response& res, const Status& st) {
  switch (st.code()) {
    case StatusCode::kFailedPrecondition:
      return SendError(res, 403, "log_refused", st.message());
    case StatusCode::kNotFound:
    case StatusCode::kInvalidArgument:
      return SendError(res, 404, "no_log", st.message());
    default:
      return SendError(res, HttpStatusFor(st), st.message());
  }
}

}  // namespace

void ApiServer::Routes() {
  auto& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
    ++requests_;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    SendError(res, 500, "internal error");
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      SendError(res, res.status,
                res.status == 413   ? "request body too large"
                : res.status == 404 ? "not found"
                                    : fmt::format("request failed (HTTP {})", res.status));
    }
  });

  RouteDashboard();
  RouteHealth();
  RouteJobList();
  RouteJobs();
  RoutePredictions();
  RouteClusters();
  RouteReport();
  RouteFailuresAndActions();
  RouteScheduling();
  RouteEstimate();
  RouteWhatIf();
}

// The operator's report over a period (service/report.h), from the API's own store connection:
// ?since=7d&until=now (the forms of `schedmate report`), &format=json|text|html.
void ApiServer::RouteReport() {
  server_->Get("/v1/report", [this](const httplib::Request& req, httplib::Response& res) {
    const SimTime now = SystemClock().Now();
    const std::string format = req.has_param("format") ? req.get_param_value("format") : "json";
    if (format != "json" && format != "text" && format != "html")
      return SendError(res, 400, "format: '" + format + "' is not json, text or html");
    if (!req.has_param("since")) return SendError(res, 400, "since: required (e.g. since=7d)");
    auto since = service::ParseReportTime(req.get_param_value("since"), now, "since");
    auto until = service::ParseReportTime(
        req.has_param("until") ? req.get_param_value("until") : "now", now, "until");
    for (const auto* t : {&since, &until})
      if (!t->ok()) return SendError(res, 400, t->status().message());
    if (*until <= *since) return SendError(res, 400, "until: not after since (empty period)");
    auto selected = Selected(req, res);  // ?cluster=, else the first cluster
    if (selected.empty()) return;
    Result<service::ReportInput> in = Status::Internal("not loaded");
    {
      std::lock_guard lock(stores_mu_);
      in = service::LoadReportInput(stores_.history, *selected.front()->store, *since, *until);
    }
    if (!in.ok()) return SendError(res, 500, in.status().message());
    const service::Report report = service::BuildReport(*in);
    if (format == "text") return res.set_content(service::ReportToText(report), "text/plain");
    if (format == "html") {  // inline styles and SVG only: no script may run
      res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
      res.set_header("X-Content-Type-Options", "nosniff");
      return res.set_content(service::ReportToHtml(report), "text/html; charset=utf-8");
    }
    SendJson(res, service::ReportToJson(report));
  });
}

void ApiServer::RouteDashboard() {
  auto& s = *server_;
  // The operator dashboard: a static page that polls the GET endpoints below.
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    const UiAsset* index = FindUiAsset("index.html");
    if (index == nullptr) return SendError(res, 404, "dashboard not built in");
    SendUiAsset(res, *index);
  });
  s.Get(R"(/ui/([A-Za-z0-9_-][A-Za-z0-9._-]{0,63}))",
        [](const httplib::Request& req, httplib::Response& res) {
          const UiAsset* asset = FindUiAsset(std::string(req.matches[1]));
          if (asset == nullptr)
            return SendError(res, 404, "no dashboard file " + std::string(req.matches[1]));
          SendUiAsset(res, *asset);
        });
}

void ApiServer::RouteHealth() {
  auto& s = *server_;
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto v = companion_.View();
    SendJson(
        res,
        json{{"ok", true},
             {"slurm_ok", v->slurm_ok},
             {"ticks", v->ticks},
             {"updated_at", v->updated_at.seconds()},
             {"last_error", v->last_error},
             {"last_tick_s", v->last_tick.seconds_f()},
             {"dry_run", v->dry_run},
             {"status", v->store.degraded ? "degraded" : "ok"},
             {"store_ok", !v->store.degraded},
             {"store_errors", v->store.errors},
             {"last_store_error", v->store.last_error},
             {"last_store_error_at",
              v->store.last_error_at ? json(v->store.last_error_at->seconds()) : json(nullptr)},
             {"role", service::RoleName(v->leadership.role)},
             {"leader", json{{"shared_store", v->leadership.shared},
                             {"instance", v->leadership.id},
                             {"holder", v->leadership.holder},
                             {"epoch", v->leadership.epoch},
                             {"lease_expires", v->leadership.lease_expires
                                                   ? json(v->leadership.lease_expires->seconds_f())
                                                   : json(nullptr)},
                             {"takeovers", v->leadership.takeovers},
                             {"last_error", v->leadership.last_error}}}});
    if (clusters_.size() > 1 || label_clusters_) {
      json out = json::parse(res.body);
      json list = json::array();
      for (const auto& c : clusters_) {
        auto cv = c.companion->View();
        if (!cv->slurm_ok) out["slurm_ok"] = false;
        if (cv->store.degraded) out["status"] = "degraded";
        list.push_back(json{{"name", c.config.name},
                            {"slurm_ok", cv->slurm_ok},
                            {"ticks", cv->ticks},
                            {"last_error", cv->last_error},
                            {"role", service::RoleName(cv->leadership.role)},
                            {"store_errors", cv->store.errors}});
      }
      out["clusters"] = std::move(list);
      SendJson(res, out);
    }
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(Metrics(), "text/plain; version=0.0.4");
  });
}

namespace {

// Prometheus text in families: each metric's HELP and TYPE once, then its samples from every
// cluster (the exposition format wants a family's samples together).
class MetricFamilies {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    if (index_.count(name) > 0) return;
    index_[name] = families_.size();
    families_.push_back(fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type));
  }
  // `labels`: "" or `a="x",b="y"` (joined with the cluster's label). `series` defaults to name.
  void Add(const std::string& name, const std::string& labels, const std::string& value,
           const std::string& series = "") {
    std::string all = cluster_label_;
    if (!labels.empty()) all += (all.empty() ? "" : ",") + labels;
    families_.at(index_.at(name)) += fmt::format("{}{} {}\n", series.empty() ? name : series,
                                                 all.empty() ? "" : "{" + all + "}", value);
  }
  void SetCluster(const std::string& label) { cluster_label_ = label; }
  std::string Text() const {
    std::string out;
    for (const auto& f : families_) out += f;
    return out;
  }

 private:
  std::vector<std::string> families_;
  std::map<std::string, size_t> index_;
  std::string cluster_label_;
};

template <typename T>
std::string Num(T v) {
  return fmt::format("{}", v);
}

// One cluster's series (the view of its companion).
void ClusterMetrics(const service::ServiceView& view, MetricFamilies& m) {
  const service::ServiceView* v = &view;
  m.Family("schedmate_slurm_ok", "gauge", "1 if the last tick read Slurm");
  m.Add("schedmate_slurm_ok", "", Num(v->slurm_ok ? 1 : 0));
  m.Family("schedmate_ticks_total", "counter", "service loop passes");
  m.Add("schedmate_ticks_total", "", Num(v->ticks));
  m.Family("schedmate_tick_seconds", "gauge", "duration of the last loop pass");
  m.Add("schedmate_tick_seconds", "", fmt::format("{:.6f}", v->last_tick.seconds_f()));
  std::map<std::string, int64_t> by_state;
  int64_t stalled = 0;
  for (const auto& j : v->jobs) {
    ++by_state[j.job.state];
    if (j.metrics && j.metrics->stalled) ++stalled;
  }
  m.Family("schedmate_queue_jobs", "gauge", "jobs slurmctld knows, by state");
  for (const auto& [state, n] : by_state)
    m.Add("schedmate_queue_jobs", fmt::format("state=\"{}\"", PromEscape(state)), Num(n));
  m.Family("schedmate_jobs_stalled", "gauge", "running jobs whose logs show no progress");
  m.Add("schedmate_jobs_stalled", "", Num(stalled));
  const auto& e = v->prediction_error;
  const std::string err = "schedmate_prediction_abs_error_seconds";
  m.Family(err, "summary", "absolute error of duration predictions for completed jobs");
  m.Add(err, "", fmt::format("{:.3f}", e.sum_abs_error_s), err + "_sum");
  m.Add(err, "", Num(e.count), err + "_count");
  m.Family("schedmate_prediction_mean_abs_relative_error", "gauge",
           "mean |predicted-actual|/actual");
  m.Add("schedmate_prediction_mean_abs_relative_error", "",
        fmt::format("{:.6f}", e.count ? e.sum_abs_rel_error / e.count : 0.0));
  m.Family("schedmate_anomalies", "gauge", "anomalies flagged in the last pass by kind");
  for (const auto& [kind, n] : service::CountAnomalies(v->anomalies))
    m.Add("schedmate_anomalies", fmt::format("kind=\"{}\"", kind), Num(n));
  m.Family("schedmate_failures_total", "counter", "diagnosed failed runs by class");
  for (auto cls : {service::FailureClass::kInfra, service::FailureClass::kApp,
                   service::FailureClass::kUnknown}) {
    auto it = v->failures_by_class.find(cls);
    m.Add("schedmate_failures_total", fmt::format("class=\"{}\"", service::FailureClassName(cls)),
          Num(it == v->failures_by_class.end() ? 0 : it->second));
  }
  m.Family("schedmate_failure_diagnoses_total", "counter",
           "diagnosed failed runs by engine (llm_fallback: the LLM failed, built-in used)");
  for (const char* engine : {"builtin", "llm", "llm_fallback"}) {
    auto it = v->failures_by_engine.find(engine);
    m.Add("schedmate_failure_diagnoses_total", fmt::format("engine=\"{}\"", engine),
          Num(it == v->failures_by_engine.end() ? 0 : it->second));
  }
  m.Family("schedmate_actions_total", "counter", "automated actions by kind and outcome");
  for (const auto& [key, n] : v->actions_by_kind) {
    m.Add("schedmate_actions_total",
          fmt::format("kind=\"{}\",outcome=\"{}\"", service::ActionKindName(key.first),
                      service::ActionOutcomeName(key.second)),
          Num(n));
  }
  m.Family("schedmate_store_errors_total", "counter",
           "failed reads and writes of the service's stores (an action whose record failed is "
           "not executed)");
  m.Add("schedmate_store_errors_total", "", Num(v->store.errors));
  m.Family("schedmate_store_degraded", "gauge", "1 if a store call failed in the last 10 minutes");
  m.Add("schedmate_store_degraded", "", Num(v->store.degraded ? 1 : 0));
  m.Family("schedmate_leader", "gauge",
           "1 while this instance acts (always on SQLite; on a shared store, the lease holder)");
  m.Add("schedmate_leader", "", Num(v->leadership.role == service::Role::kLeader ? 1 : 0));
  m.Family("schedmate_leader_epoch", "gauge", "the shared store's lease epoch as last seen");
  m.Add("schedmate_leader_epoch", "", Num(v->leadership.epoch));
  m.Family("schedmate_leader_takeovers_total", "counter", "times this instance became leader");
  m.Add("schedmate_leader_takeovers_total", "", Num(v->leadership.takeovers));
  m.Family("schedmate_priority_changes_total", "counter",
           "job priorities set by the order mode since start");
  m.Add("schedmate_priority_changes_total", "", Num(v->scheduling.changes_total));
  m.Family("schedmate_priorities_restored_total", "counter",
           "original priorities put back since start");
  m.Add("schedmate_priorities_restored_total", "", Num(v->scheduling.restored_total));
  m.Family("schedmate_priorities_outstanding", "gauge",
           "pending jobs holding a priority schedmate set");
  m.Add("schedmate_priorities_outstanding", "", Num(v->scheduling.outstanding));
  m.Family("schedmate_longest_wait_seconds", "gauge", "longest current wait of a pending job");
  m.Add("schedmate_longest_wait_seconds", "", Num(v->scheduling.longest_wait.seconds()));
  m.Family("schedmate_estimates_served_total", "counter", "submit-time estimates answered");
  m.Add("schedmate_estimates_served_total", "", Num(v->estimates_served));
  m.Family("schedmate_tracked_logs", "gauge", "job logs being tailed");
  m.Add("schedmate_tracked_logs", "", Num(v->tracked_logs));
}

}  // namespace

std::string ApiServer::Metrics() {
  MetricFamilies m;
  m.Family("schedmate_up", "gauge", "1 while the service runs");
  m.Add("schedmate_up", "", "1");
  for (const auto& c : clusters_) {
    m.SetCluster(label_clusters_ ? fmt::format("cluster=\"{}\"", PromEscape(c.config.name)) : "");
    ClusterMetrics(*c.companion->View(), m);
  }
  m.SetCluster("");
  m.Family("schedmate_http_requests_total", "counter", "HTTP requests received");
  m.Add("schedmate_http_requests_total", "", Num(requests_.load()));
  ConnectionStats conns = server_->Stats();
  m.Family("schedmate_http_connections_open", "gauge", "HTTP connections open now");
  m.Add("schedmate_http_connections_open", "", Num(conns.open));
  const std::string closed = "schedmate_http_connections_closed_total";
  m.Family(closed, "counter",
           "HTTP connections closed by the server: deadline (request not received in time, "
           "idle keep-alive), cap (api.max_connections), rejected (bad framing)");
  m.Add(closed, "reason=\"deadline\"", Num(conns.timed_out));
  m.Add(closed, "reason=\"cap\"", Num(conns.evicted));
  m.Add(closed, "reason=\"rejected\"", Num(conns.rejected));
  return m.Text();
}

// GET /v1/jobs: one cluster's view (?cluster=, else the first cluster), paged (job_list.h).
// The cluster and its view's generation are the ETag: a client that has the page of the current
// view gets 304 without any work.
void ApiServer::RouteJobList() {
  server_->Get("/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    std::string field;
    auto query = ParseJobListQuery(
        [&req](const char* key) -> std::optional<std::string> {
          if (!req.has_param(key)) return std::nullopt;
          return req.get_param_value(key);
        },
        field);
    if (!query.ok()) {
      return SendJson(
          res, json{{"error", query.status().message()}, {"code", "bad_request"}, {"field", field}},
          400);
    }
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    const size_t index = static_cast<size_t>(selected.front() - clusters_.data());
    auto v = selected.front()->companion->View();
    std::string etag = fmt::format("\"{:016x}-{}-{}\"", instance_, index, v->generation);
    res.set_header("ETag", etag);
    res.set_header("Cache-Control", "no-cache");
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    res.set_content(job_lists_.at(index)->Body(v, *query), "application/json");
  });
}

// Predictions, the finished history and start estimates.
void ApiServer::RoutePredictions() {
  auto& s = *server_;
  s.Get("/v1/predictions", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    service::PredictionErrorStats e;
    for (const ApiCluster* c : selected) {
      auto v = c->companion->View();
      for (const auto& j : v->jobs) {
        if (!j.prediction) continue;
        out.push_back(json{{"job_id", j.job.id},
                           {"cluster", v->cluster},
                           {"name", j.job.name},
                           {"state", j.job.state},
                           {"prediction", ToJson(*j.prediction)}});
      }
      e.count += v->prediction_error.count;
      e.sum_abs_error_s += v->prediction_error.sum_abs_error_s;
      e.sum_abs_rel_error += v->prediction_error.sum_abs_rel_error;
    }
    SendJson(res, json{{"predictions", std::move(out)},
                       {"finished_compared", e.count},
                       {"mean_abs_error_s", e.count ? e.sum_abs_error_s / e.count : 0.0},
                       {"mean_abs_relative_error", e.count ? e.sum_abs_rel_error / e.count : 0.0}});
  });

  s.Get("/v1/history", [this](const httplib::Request& req, httplib::Response& res) {
    store::ListJobsOptions opts;
    opts.finished_only = true;
    opts.limit = QueryInt(req, "limit", 100, 1, 10000);
    std::lock_guard lock(stores_mu_);
    auto jobs = stores_.history.ListJobs(opts);
    if (!jobs.ok()) return SendError(res, 500, jobs.status().message());
    json out = json::array();
    for (const auto& j : *jobs) {
      json item = ToJson(j);
      auto preds = stores_.history.ListPredictions(j.job.id);
      if (preds.ok() && !preds->empty()) {
        item["predicted_s"] = preds->back().duration.seconds();
        item["explanation"] = preds->back().explanation;
      }
      out.push_back(std::move(item));
    }
    SendJson(res, json{{"jobs", std::move(out)}});
  });

  s.Get("/v1/start-estimates", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    auto v = selected.front()->companion->View();
    for (const ApiCluster* c : selected) {
      auto cv = c->companion->View();
      for (const auto& j : cv->jobs) {
        if (j.job.state != "PENDING") continue;
        json e = j.start_estimate ? ToJson(*j.start_estimate)
                                  : json{{"job_id", j.job.id},
                                         {"estimated_start", nullptr},
                                         {"pending_reason", j.job.reason},
                                         {"note", "not estimated yet"}};
        e["name"] = j.job.name;
        e["slurm_expected_start"] =
            j.job.expected_start ? json(j.job.expected_start->seconds()) : json(nullptr);
        e["cluster"] = cv->cluster;
        out.push_back(std::move(e));
      }
    }
    SendJson(res,
             json{{"updated_at", v->updated_at.seconds()},
                  {"model", "slurm-policy fast-forward in the simulator with predicted run times"},
                  {"pending", std::move(out)}});
  });
}

void ApiServer::RouteJobs() {
  auto& s = *server_;

  s.Get(R"(/v1/jobs/([0-9_]{1,32}))", [this](const httplib::Request& req, httplib::Response& res) {
    const ApiCluster* c = ClusterOf(req, res, req.matches[1], /*node=*/false);
    if (c == nullptr) return;
    auto v = c->companion->View();
    const auto* j = FindJob(*v, req.matches[1]);
    if (j == nullptr) return SendError(res, 404, "no live job " + std::string(req.matches[1]));
    SendJson(res, JobJson(*v, *j, /*detail=*/true));
  });

  // Why the job waits, as of the last pass (service/why.h).
  s.Get(R"(/v1/jobs/([0-9_]{1,32})/why)",
        [this](const httplib::Request& req, httplib::Response& res) {
          const ApiCluster* c = ClusterOf(req, res, req.matches[1], /*node=*/false);
          if (c == nullptr) return;
          auto v = c->companion->View();
          auto answer = service::ExplainJob(*v, req.matches[1], v->updated_at);
          if (!answer.ok()) return SendError(res, 404, answer.status().message());
          json out = service::WhyAnswerToJson(*answer);
          out["cluster"] = v->cluster;
          if (why_rephraser_ != nullptr) {
            why_rephraser_->Apply(out, KnownNames(*v));
          } else {
            service::SetExplanation(out, std::nullopt, "builtin");
          }
          SendJson(res, out);
        });

  s.Get(R"(/v1/jobs/([0-9_]{1,32})/metrics)",
        [this](const httplib::Request& req, httplib::Response& res) {
          int64_t limit = QueryInt(req, "limit", 500, 1, 100000);
          // Stored series outlive the job: the cluster is ?cluster=, the one the job is live
          // on, or the only cluster.
          const ApiCluster* c = nullptr;
          if (req.has_param("cluster") || clusters_.size() == 1) {
            auto selected = Selected(req, res);
            if (selected.empty()) return;
            c = selected.front();
          } else if (c = ClusterOf(req, res, req.matches[1], /*node=*/false); c == nullptr) {
            return;
          }
          std::lock_guard lock(stores_mu_);
          auto series = c->store->MetricSeries(req.matches[1], limit);
          if (!series.ok()) return SendError(res, 500, series.status().message());
          json out = json::array();
          for (const auto& m : *series) out.push_back(ToJson(m));
          SendJson(res, json{{"job_id", std::string(req.matches[1])},
                             {"cluster", c->config.name},
                             {"samples", std::move(out)}});
        });

  s.Get(R"(/v1/jobs/([0-9_]{1,32})/log)", [this](const httplib::Request& req,
                                                 httplib::Response& res) {
    if (!MayReadLogs(req, res)) return;
    const ApiCluster* c = ClusterOf(req, res, req.matches[1], /*node=*/false);
    if (c == nullptr) return;
    auto v = c->companion->View();
    const auto* j = FindJob(*v, req.matches[1]);
    if (j == nullptr) return SendError(res, 404, "no live job " + std::string(req.matches[1]));
    // Checked again now, on the job's own terms (a refused path was dropped from log_path).
    const std::string& path = !j->log_path.empty() ? j->log_path : j->log_scope.std_out;
    if (path.empty() || path.front() != '/') {
      return SendError(res, 404, "no_log",
                       "no log known" + (j->log_problem.empty() ? "" : ": " + j->log_problem));
    }
    int64_t bytes = QueryInt(req, "bytes", 64 << 10, 1, 1 << 20);
    auto tail = service::ReadJobLogTail(path, j->log_scope, static_cast<size_t>(bytes));
    if (!tail.ok()) return SendLogError(res, tail.status());
    res.set_content(tail->text, "text/plain; charset=utf-8");
  });
}

void ApiServer::RouteFailuresAndActions() {
  auto& s = *server_;
  s.Get("/v1/anomalies", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    for (const ApiCluster* c : selected) {
      auto v = c->companion->View();
      for (json a : service::AnomaliesToJson(v->anomalies)) {
        a["cluster"] = v->cluster;
        out.push_back(std::move(a));
      }
    }
    SendJson(res, out);
  });

  s.Get("/v1/failures", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    for (const ApiCluster* c : selected) {
      auto v = c->companion->View();
      for (const auto& f : v->failures) {
        json item = ToJson(f);
        item["cluster"] = v->cluster;
        out.push_back(std::move(item));
      }
    }
    SendJson(res, json{{"failures", std::move(out)}});
  });

  s.Get(R"(/v1/failures/(\d{1,18})/log)", [this](const httplib::Request& req,
                                                 httplib::Response& res) {
    if (!MayReadLogs(req, res)) return;
    int64_t id = ParseInt(std::string(req.matches[1])).value_or(-1);
    std::string copy;
    {
      std::lock_guard lock(stores_mu_);
      for (const auto& c : clusters_) {  // failure ids are unique across clusters
        auto failures = c.store->RecentFailures(100000);
        if (!failures.ok()) return SendError(res, 500, failures.status().message());
        for (const auto& f : *failures)
          if (f.id == id) copy = f.log_copy;
      }
    }
    if (copy.empty()) {
      return SendError(res, 404, "no_log",
                       "no captured log for failure " + std::string(req.matches[1]));
    }
    auto tail = service::ReadCapturedLogTail(copy, companion_.config().CapturedLogDir(), 1 << 20);
    if (!tail.ok()) return SendLogError(res, tail.status());
    res.set_content(tail->text, "text/plain; charset=utf-8");
  });

  s.Get("/v1/actions", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    for (const ApiCluster* c : selected) {
      auto v = c->companion->View();
      for (const auto& a : v->actions) {
        json item = ToJson(a);
        item["cluster"] = v->cluster;
        out.push_back(std::move(item));
      }
    }
    SendJson(res, json{{"dry_run", companion_.View()->dry_run}, {"actions", std::move(out)}});
  });
  RouteNodes();
}

void ApiServer::RouteNodes() {
  auto& s = *server_;
  s.Get("/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    json out = json::array();
    for (const ApiCluster* c : selected) {
      auto v = c->companion->View();
      for (const auto& n : v->nodes) {
        json item = ToJson(n);
        item["cluster"] = v->cluster;
        out.push_back(std::move(item));
      }
    }
    SendJson(res, json{{"nodes", std::move(out)}});
  });

  s.Post(R"(/v1/nodes/([A-Za-z0-9._-]{1,128})/resume)", [this](const httplib::Request& req,
                                                               httplib::Response& res) {
    if (token_.empty()) {
      return SendError(res, 403, "token_not_configured",
                       "state-changing calls are disabled: no api.token configured");
    }
    if (!HasToken(req)) return SendError(res, 401, "missing or wrong bearer token");
    const ApiCluster* c = ClusterOf(req, res, req.matches[1], /*node=*/true);
    if (c == nullptr) return;
    Status s2 = c->companion->ResumeNode(req.matches[1], "api");
    if (!s2.ok()) return SendError(res, HttpStatusFor(s2), s2.message());
    SendJson(
        res,
        json{{"ok", true}, {"node", std::string(req.matches[1])}, {"cluster", c->config.name}});
  });
}

void ApiServer::RouteClusters() {
  server_->Get("/v1/clusters", [this](const httplib::Request&, httplib::Response& res) {
    json out = json::array();
    for (const auto& c : clusters_) {
      auto v = c.companion->View();
      int64_t running = 0, pending = 0;
      for (const auto& j : v->jobs) {
        running += j.job.state == "RUNNING" ? 1 : 0;
        pending += j.job.state == "PENDING" ? 1 : 0;
      }
      out.push_back(json{{"name", c.config.name},
                         {"slurm_conf", c.config.slurm_conf},
                         {"slurm_cluster", c.config.cluster},
                         {"slurm_ok", v->slurm_ok},
                         {"last_error", v->last_error},
                         {"ticks", v->ticks},
                         {"updated_at", v->updated_at.seconds()},
                         {"role", service::RoleName(v->leadership.role)},
                         {"jobs", v->jobs.size()},
                         {"running", running},
                         {"pending", pending},
                         {"nodes", v->nodes.size()},
                         {"failures", v->failures.size()},
                         {"actions", v->actions.size()}});
    }
    SendJson(res, json{{"clusters", std::move(out)}});
  });
}

void ApiServer::RouteScheduling() {
  auto& s = *server_;
  s.Get("/v1/scheduling", [this](const httplib::Request& req, httplib::Response& res) {
    auto selected = Selected(req, res);
    if (selected.empty()) return;
    auto v = selected.front()->companion->View();  // ?cluster=, else the first cluster
    json out = ToJson(v->scheduling);
    out["dry_run"] = v->dry_run;
    json changes = json::array();
    for (const auto& a : v->actions)
      if (a.kind == service::ActionKind::kPriority || a.kind == service::ActionKind::kRestore) {
        changes.push_back(ToJson(a));
      }
    out["recent_changes"] = std::move(changes);
    SendJson(res, out);
  });
}

void ApiServer::RouteEstimate() {
  auto& s = *server_;
  s.Post("/v1/estimate", [this](const httplib::Request& req, httplib::Response& res) {
    service::JobContext job;
    bool kv = req.has_param("format") && req.get_param_value("format") == "kv";
    std::string ctype = req.get_header_value("Content-Type");
    if (IContains(ctype, "application/json")) {
      auto parsed = EstimateRequestFromJson(req.body);
      if (!parsed.ok()) return SendError(res, 400, parsed.status().message());
      job = std::move(*parsed);
    } else {
      job.script = req.body;
      job.name = req.get_param_value("name");
      job.partition = req.get_param_value("partition");
      if (auto uid = ParseInt(req.get_param_value("uid"))) job.user = UserNameForUid(*uid);
      if (req.has_param("user")) job.user = req.get_param_value("user");
      job.time_limit_min = ParseInt(req.get_param_value("time_limit_min"));
      job.nodes = static_cast<int32_t>(
          std::clamp<int64_t>(ParseInt(req.get_param_value("nodes")).value_or(1), 1, 1 << 20));
      int32_t per_node = slurm::ParseGpuCount(req.get_param_value("tres_per_node"));
      int32_t per_job = slurm::ParseGpuCount(req.get_param_value("tres_per_job"));
      job.gpus = slurm::TotalGpus(per_job, per_node, job.nodes);
    }
    NormalizeEstimateRequest(job);
    auto advice = companion_.EstimateSubmission(job);
    if (!advice.ok())
      return SendError(res, HttpStatusFor(advice.status()), advice.status().message());
    if (kv) {
      std::string out = fmt::format("estimate_s={}\n", advice->prediction.duration.seconds());
      if (advice->set_time_limit_min)
        out += fmt::format("time_limit_min={}\n", *advice->set_time_limit_min);
      if (!advice->comment.empty()) out += "comment=" + KvValue(advice->comment) + "\n";
      if (!advice->message.empty()) out += "message=" + KvValue(advice->message) + "\n";
      res.set_content(out, "text/plain");
      return;
    }
    SendJson(res, ToJson(*advice));
  });
}

void ApiServer::RouteWhatIf() {
  server_->Post("/v1/whatif", [this](const httplib::Request& req, httplib::Response& res) {
    std::string field;
    auto scenario = WhatIfRequestFromJson(req.body, field);
    auto bad_request = [&](const std::string& message) {
      SendJson(res, json{{"error", message}, {"code", "bad_request"}, {"field", field}}, 400);
    };
    if (!scenario.ok()) return bad_request(scenario.status().message());
    if (whatif_.busy()) return SendError(res, 429, "busy", "another what-if is running");
    const service::ServiceConfig& cfg = companion_.config();
    auto view = companion_.View();
    Result<sim::WhatIfSite> site = Status::Internal("not loaded");
    {
      // The store is read only without a configured trace (reading a trace holds no lock).
      std::unique_lock lock(stores_mu_, std::defer_lock);
      if (cfg.whatif_trace.empty()) lock.lock();
      site = LoadServiceWhatIfSite(cfg, *view, stores_.history);
    }
    if (!site.ok()) return SendError(res, 409, "no_history", site.status().message());
    sim::WhatIfLimits limits;
    limits.max_jobs = cfg.whatif_max_jobs;
    limits.max_seeds = cfg.whatif_max_seeds;
    auto setup = sim::SetUpWhatIf(*site, *scenario, limits, &field);
    if (!setup.ok()) return bad_request(field + " " + setup.status().message());
    auto shared_site = std::make_shared<sim::WhatIfSite>(std::move(site).value());
    auto work = [shared_site, setup = std::move(setup).value(), scenario = *scenario,
                 limits](const std::atomic<bool>& cancel) -> Result<json> {
      sim::WhatIfLimits l = limits;
      l.cancel = &cancel;
      SM_ASSIGN_OR_RETURN(auto report, sim::RunWhatIf(*shared_site, setup, scenario, l));
      json out = sim::WhatIfReportToJson(report, *shared_site);
      out["history_source"] = shared_site->history.source;
      return out;
    };
    const auto timeout =
        std::chrono::milliseconds(std::max<int64_t>(1, cfg.whatif_timeout.micros() / 1000));
    WhatIfRunner::Answer answer = whatif_.Run(std::move(work), timeout);
    switch (answer.outcome) {
      case WhatIfRunner::Outcome::kBusy:
        return SendError(res, 429, "busy", "another what-if is running");
      case WhatIfRunner::Outcome::kTimedOut:
        return SendError(res, 504, "timeout",
                         fmt::format("the what-if took longer than whatif.timeout_s ({} s)",
                                     cfg.whatif_timeout.seconds_f()));
      case WhatIfRunner::Outcome::kDone:
        break;
    }
    if (!answer.result.ok()) {
      return SendError(res, HttpStatusFor(answer.result.status()), "whatif_failed",
                       answer.result.status().message());
    }
    SendJson(res, *answer.result);
  });
}

}  // namespace schedmate::api
