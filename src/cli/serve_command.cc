// schedmate serve --slurm: the companion beside a real Slurm cluster (service/ + slurm/ + api/).

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "api/api_server.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/file_util.h"
#include "core/strings.h"
#include "llm/curl_transport.h"
#include "policy/slurm_config.h"
#include "service/companion.h"
#include "service/engines.h"
#include "service/leader.h"
#include "service/service_config.h"
#include "service/service_store.h"
#include "service/why_rephrase.h"
#include "slurm/command_runner.h"
#include "slurm/slurm_backend.h"
#include "store/db.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"

namespace schedmate::cli {
namespace {

struct ServeFlags {
  bool slurm = false;
  std::string config_path;
  std::string data_dir;
  std::string store_url;
  std::string jobcomp;
  std::string listen;
  int port = -1;
  std::string port_file;
  std::string token_file;
  double poll_s = 0;
  bool dry_run = false;
  std::string submit_policy;
  int ticks = 0;
  std::string llm_engine;
  std::string llm_config;
  bool allow_remote = false;
  std::string mode;
  std::string order_policy;
  bool restore = false;
};

template <typename T>
T OrFail(Result<T> r) {
  if (!r.ok()) Fail(r.status());
  return std::move(r).value();
}

// The API token: the first line of `path`, which only its owner may read or write (a token
// others can read is no secret: refused as a usage error naming the file).
std::string ReadTokenFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    Fail(Status::NotFound(fmt::format("cannot read token file {}: {}", path, strerror(errno))));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    FailUsage(fmt::format("token file {} is not a regular file", path));
  }
  if ((st.st_mode & 077) != 0) {
    FailUsage(fmt::format(
        "token file {} is readable or writable by group or others (mode {:04o}): run chmod 600 {}",
        path, st.st_mode & 07777, path));
  }
  std::string text(4096, '\0');
  ssize_t n = read(fd, text.data(), text.size());
  if (n < 0) Fail(Status::Unavailable(fmt::format("reading {}: {}", path, strerror(errno))));
  text.resize(static_cast<size_t>(n));
  std::string token(Trim(Split(text, '\n').front()));
  if (token.empty()) FailUsage(fmt::format("token file {} has no token on its first line", path));
  return token;
}

// 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) and "localhost".
bool IsLoopbackAddress(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

// "(overrides KEY)" or "(overrides KEY; NOTE)": the help of a flag that replaces the
// configuration file's KEY (ConfigFromFlags applies them).
std::string OverridesNote(std::string_view key, std::string_view note = "") {
  return note.empty() ? fmt::format("(overrides {})", key)
                      : fmt::format("(overrides {}; {})", key, note);
}

// Declares `flag` (a switch for a bool `value`, else an option taking a value) that overrides
// the configuration file's `key`; its help is `help` followed by OverridesNote(key, note).
template <typename T>
CLI::Option* AddOverride(CLI::App* cmd, const std::string& flag, T& value, std::string_view help,
                         std::string_view key, std::string_view note = "") {
  const std::string text = fmt::format("{} {}", help, OverridesNote(key, note));
  if constexpr (std::is_same_v<T, bool>) {
    return cmd->add_flag(flag, value, text);
  } else {
    return cmd->add_option(flag, value, text);
  }
}

// --submit-policy as the configuration file would say it (kInvalidArgument naming the flag).
Result<service::ServiceConfig> ParseSubmitPolicy(const std::string& policy) {
  return service::ParseServiceConfig("submit:\n  policy: " + policy + "\n", "--submit-policy");
}

// The service's configuration: the config file, then the flags over it. Start estimates model the
// site's scheduler: the slurm.conf its Slurm clients read (SLURM_CONF, else
// /etc/slurm/slurm.conf) when there is one the slurm model accepts, else Slurm's defaults.
service::ServiceConfig ConfigFromFlags(const ServeFlags& f) {
  service::ServiceConfig config;
  if (!f.config_path.empty()) config = OrFail(service::LoadServiceConfig(f.config_path));
  if (!f.data_dir.empty()) config.data_dir = f.data_dir;
  if (!f.store_url.empty()) {
    (void)OrFail(store::ParseStoreUrl(f.store_url));
    config.store_url = f.store_url;
  }
  if (!f.jobcomp.empty()) config.jobcomp_path = f.jobcomp;
  if (!f.listen.empty()) config.listen = f.listen;
  if (f.port >= 0) config.port = f.port;
  if (f.poll_s > 0) config.poll_interval = Duration::FromSecondsF(f.poll_s);
  if (f.dry_run) config.dry_run = true;
  if (!f.llm_engine.empty()) config.llm_engine = f.llm_engine;
  if (!f.llm_config.empty()) config.llm_config = f.llm_config;
  if (!f.submit_policy.empty()) {
    auto parsed = ParseSubmitPolicy(f.submit_policy);
    if (!parsed.ok()) FailUsage(parsed.status().message());
    config.submit_policy = parsed->submit_policy;
  }
  if (f.allow_remote) config.allow_remote = true;
  if (!f.mode.empty()) {
    config.scheduling_mode =
        f.mode == "order" ? service::SchedulingMode::kOrder : service::SchedulingMode::kAdvise;
  }
  if (!f.order_policy.empty()) config.order.policy = f.order_policy;
  if (!config.clusters.empty() && !f.jobcomp.empty()) {
    FailUsage(
        "--jobcomp names one cluster's file: with slurm.clusters, set jobcomp_path per "
        "cluster");
  }
  return config;
}

// Start estimates model the cluster's scheduler: the slurm.conf its Slurm clients read (the
// cluster's slurm_conf, else SLURM_CONF, else /etc/slurm/slurm.conf) when the slurm model
// accepts it, else Slurm's defaults.
void ReadSiteScheduler(const service::ClusterConfig& cluster, service::ServiceConfig& config) {
  const char* slurm_conf = std::getenv("SLURM_CONF");
  const std::string conf_path = !cluster.slurm_conf.empty() ? cluster.slurm_conf
                                : slurm_conf != nullptr     ? slurm_conf
                                                            : "/etc/slurm/slurm.conf";
  struct stat st {};
  if (stat(conf_path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    auto site = policy::ReadSlurmConf(conf_path);
    if (site.ok()) {
      config.start_estimates.slurm = site->config;
    } else {
      std::cerr << "schedmate serve: note: cluster " << cluster.name
                << ": start estimates use Slurm's default scheduler settings: "
                << site.status().message() << "\n";
    }
  }
}

// The API token: --token-file, else the configuration's token file, else its token, else
// $SCHEDMATE_API_TOKEN ("" when none).
std::string ResolveToken(const ServeFlags& f, const service::ServiceConfig& config) {
  std::string token_file = !f.token_file.empty() ? f.token_file : config.token_file;
  std::string token = config.token;
  if (!token_file.empty()) token = ReadTokenFile(token_file);
  if (const char* env = std::getenv("SCHEDMATE_API_TOKEN"); env != nullptr && token.empty()) {
    token = env;
  }
  return token;
}

// Beyond loopback, an API without a token serves every job's data (and, with api.serve_logs:
// all, their logs) to the network: only when the operator says so (usage error otherwise). The
// warning to print when the API is exposed ("" when it is not).
std::string ExposureWarning(const ServeFlags& f, const service::ServiceConfig& config,
                            const std::string& token) {
  if (f.ticks != 0 || IsLoopbackAddress(config.listen)) return "";
  if (token.empty() && !config.allow_remote) {
    FailUsage(fmt::format(
        "--listen {} is not a loopback address and no API token is set: set api.token or "
        "--token-file, or allow it explicitly with --allow-remote (api.allow_remote: true)",
        config.listen));
  }
  if (token.empty()) {
    return fmt::format(
        "schedmate serve: WARNING: listening on {} without an API token (api.allow_remote): "
        "anyone who can reach it reads the queue, predictions and failures{}\n",
        config.listen,
        config.serve_logs == service::LogAccess::kAll ? ", and job logs (api.serve_logs: all)"
                                                      : "");
  }
  if (config.serve_logs == service::LogAccess::kAll) {
    return fmt::format(
        "schedmate serve: WARNING: listening on {} with api.serve_logs: all: anyone who can "
        "reach it reads job logs\n",
        config.listen);
  }
  return "";
}

// --restore: Load() restored what an earlier process left; this repeats it and reports both.
// Exit 1 when some priority could not be put back.
void RestoreAndReport(const std::vector<service::Companion*>& companions) {
  service::RestoreSummary total;
  for (service::Companion* companion : companions) {
    auto r = companion->RestorePriorities("schedmate serve --restore");
    if (!r.ok()) Fail(r.status());
    const service::RestoreSummary& at_load = companion->RestoredAtLoad();
    total.restored += r->restored + at_load.restored;
    total.not_needed += r->not_needed + at_load.not_needed;
    total.skipped += r->skipped + at_load.skipped;
    total.failed += r->failed;
  }
  PrintJson({{"restored", total.restored},
             {"not_needed", total.not_needed},
             {"skipped", total.skipped},
             {"failed", total.failed}});
  if (total.failed > 0) std::exit(1);
}

// One line per automated action on stderr (the journal), besides the database and the API.
void PrintAction(const service::ActionRecord& a) {
  std::string who = a.node.empty() ? "job " + a.job_id
                                   : (a.job_id.empty() ? "node " + a.node
                                                       : "job " + a.job_id + " node " + a.node);
  std::cerr << "schedmate serve: action " << a.kind << " " << who << ": " << a.outcome
            << (a.detail.empty() ? "" : ": " + a.detail) << "\n";
}

// The passes in a thread and the API until SIGINT/SIGTERM (blocked in `signals`); then order
// mode's changes are undone before the API goes: Slurm's own priorities come back.
void RestoreOnStop(service::Companion& companion, int sig);

void ServeUntilSignalled(const std::vector<service::Companion*>& companions, api::ApiServer& server,
                         const sigset_t& signals) {
  std::vector<std::thread> loops;
  for (service::Companion* c : companions) loops.emplace_back([c] { c->Run(); });
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "schedmate serve: stopping (signal " << sig << ")\n";
  for (service::Companion* c : companions) c->Stop();
  for (auto& loop : loops) loop.join();
  for (service::Companion* c : companions) RestoreOnStop(*c, sig);
  server.Stop();
}

// Order mode's changes on one cluster undone at a stop (a follower's are the leader's).
void RestoreOnStop(service::Companion& companion, int sig) {
  if (companion.View()->leadership.role != service::Role::kLeader) return;
  if (auto r = companion.RestorePriorities(fmt::format(
          "schedmate serve stopping (signal {}): putting back original priorities", sig));
      r.ok()) {
    if (r->restored + r->skipped + r->failed > 0) {
      std::cerr << fmt::format(
          "schedmate serve: priorities restored {}, not needed {}, left as changed by others {}, "
          "failed {}\n",
          r->restored, r->not_needed, r->skipped, r->failed);
    }
  } else {
    std::cerr << "schedmate serve: restoring priorities: " << r.status().message()
              << " (they are put back at the next start or by `schedmate serve --restore`)\n";
  }
}

// The banner on stderr once the API listens.
void PrintBanner(const service::ServiceConfig& config, int port, const std::string& token,
                 const std::string& engines, const std::string& actions) {
  std::cerr << "schedmate serve: http://" << config.listen << ":" << port << " (poll "
            << FormatDuration(config.poll_interval) << ", submit policy "
            << service::SubmitPolicyName(config.submit_policy)
            << (config.dry_run ? ", DRY RUN" : "") << ", scheduling "
            << service::SchedulingModeName(config.scheduling_mode)
            << (config.scheduling_mode == service::SchedulingMode::kOrder
                    ? " by " + config.order.policy + ", at most " +
                          std::to_string(config.order.max_changes) + " changes per pass"
                    : std::string())
            << (token.empty() ? ", no API token: state changes disabled" : "") << ", log reads "
            << service::LogAccessName(config.serve_logs) << ")\n"
            << "schedmate serve: engines " << engines << "\n"
            << "schedmate serve: actions " << actions << "\n";
}

// One watched cluster: its store connections, election, Slurm client, engines and companion.
struct ClusterRuntime {
  service::ClusterConfig cluster;
  service::ServiceConfig config;
  std::unique_ptr<store::Db> db;
  std::unique_ptr<store::HistoryStore> history;
  std::unique_ptr<service::ServiceStore> store;
  std::unique_ptr<service::ServiceStore> read_store;  // on the API's connection
  std::unique_ptr<service::Leadership> leadership;
  std::unique_ptr<slurm::ClusterCommandRunner> runner;
  std::unique_ptr<slurm::SlurmBackend> backend;
  service::Engines engines;
  std::unique_ptr<service::SlurmUsageProbe> usage;
  std::unique_ptr<service::Companion> companion;
};

// Builds one cluster's runtime. The first cluster's engines include the advisor every cluster
// shares (`shared`, set here when null).
std::unique_ptr<ClusterRuntime> MakeCluster(const service::ServiceConfig& base,
                                            const service::ClusterConfig& cluster,
                                            slurm::CommandRunner& subprocess, store::Db& read_db,
                                            std::unique_ptr<service::SynchronizedAdvisor>& shared,
                                            service::Engines& first_engines,
                                            llm::CurlHttpTransport& http, const Clock& clock) {
  auto rt = std::make_unique<ClusterRuntime>();
  rt->cluster = cluster;
  rt->config = base;
  rt->config.cluster_name = cluster.name;
  if (!base.clusters.empty()) rt->config.jobcomp_path = cluster.jobcomp_path;
  ReadSiteScheduler(cluster, rt->config);
  // Each cluster's loop runs on its own thread: its own connection.
  rt->db = OrFail(store::OpenDatabase(base.StoreUrl()));
  rt->history = OrFail(store::SqlHistoryStore::Attach(*rt->db));
  rt->store = OrFail(service::ServiceStore::Attach(*rt->db, cluster.name));
  rt->read_store = OrFail(service::ServiceStore::Attach(read_db, cluster.name));
  if (rt->db->dialect() == store::Dialect::kPostgres) {
    rt->leadership = OrFail(service::PgLeaderElection::Open(base.StoreUrl(), base.instance_id,
                                                            base.poll_interval * 3, cluster.name));
  }
  rt->runner = std::make_unique<slurm::ClusterCommandRunner>(subprocess, cluster.slurm_conf,
                                                             cluster.cluster);
  rt->backend = std::make_unique<slurm::SlurmBackend>(
      *rt->runner, slurm::SlurmBackendOptions{.jobcomp_path = rt->config.jobcomp_path,
                                              .use_sacct = rt->config.use_sacct,
                                              .command_timeout = rt->config.command_timeout});
  rt->engines = OrFail(service::MakeEngines(rt->config, *rt->history,
                                            /*with_advisor=*/shared == nullptr));
  if (shared == nullptr) {
    shared = std::make_unique<service::SynchronizedAdvisor>(*rt->engines.advisor);
    first_engines.llm = rt->engines.llm;
    first_engines.description = rt->engines.description;
    if (!rt->engines.notice.empty()) std::cerr << rt->engines.notice << "\n";
  }
  rt->usage = std::make_unique<service::SlurmUsageProbe>(*rt->backend, &http, rt->config.usage);
  rt->companion = std::make_unique<service::Companion>(
      service::CompanionDeps{*rt->backend, *rt->history, *rt->store, *shared, *rt->engines.tracker,
                             *rt->engines.diagnoser, clock, rt->usage.get(), rt->leadership.get()},
      rt->config);
  if (Status s = rt->companion->Load(); !s.ok()) Fail(s);
  return rt;
}

void RunServe(const ServeFlags& f) {
  const service::ServiceConfig config = ConfigFromFlags(f);
  const std::string token = ResolveToken(f, config);
  const std::string exposure = ExposureWarning(f, config, token);

  // store.url: SQLite (the only instance) or PostgreSQL shared with other instances, of which
  // the elected leader of each cluster acts (service/leader.h); the API reads through its own
  // connection. slurm.clusters: one companion per cluster, sharing the store and the advisor.
  auto read_db = OrFail(store::OpenDatabase(config.StoreUrl()));
  auto read_history = OrFail(store::SqlHistoryStore::Attach(*read_db));
  slurm::SubprocessCommandRunner subprocess;
  SystemClock clock;
  llm::CurlHttpTransport http;  // the DCGM exporter, when usage.gpu_source is dcgm
  std::unique_ptr<service::SynchronizedAdvisor> shared_advisor;
  service::Engines first;  // the LLM and description of the first cluster's engines
  std::vector<std::unique_ptr<ClusterRuntime>> clusters;
  for (const auto& c : config.Clusters()) {
    clusters.push_back(
        MakeCluster(config, c, subprocess, *read_db, shared_advisor, first, http, clock));
  }
  std::vector<service::Companion*> companions;
  for (auto& rt : clusters) companions.push_back(rt->companion.get());
  if (f.restore) {
    RestoreAndReport(companions);
    return;
  }
  for (service::Companion* c : companions) c->SetActionSink(PrintAction);

  // Signals are taken by a sigwait; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (f.ticks > 0) {  // bounded run, for scripts and tests: no API
    for (int i = 0; i < f.ticks; ++i) {
      for (service::Companion* c : companions)
        if (Status s = c->Tick(); !s.ok()) Fail(s);
    }
    int64_t ticks = 0, jobs = 0, failures = 0, actions = 0;
    for (service::Companion* c : companions) {
      auto v = c->View();
      ticks = std::max(ticks, v->ticks);
      jobs += static_cast<int64_t>(v->jobs.size());
      failures += static_cast<int64_t>(v->failures.size());
      actions += static_cast<int64_t>(v->actions.size());
    }
    PrintJson({{"ticks", ticks}, {"jobs", jobs}, {"failures", failures}, {"actions", actions}});
    return;
  }

  // With an LLM (llm.engine llm|auto, decided at start-up), why-explanations are rephrased.
  std::unique_ptr<service::WhyRephraser> rephraser;  // outlives the server
  if (first.llm != nullptr) rephraser = std::make_unique<service::WhyRephraser>(first.llm);
  std::vector<api::ApiCluster> api_clusters;
  for (auto& rt : clusters) {
    api_clusters.push_back({rt->cluster, rt->companion.get(), rt->read_store.get()});
  }
  api::ApiServer server(std::move(api_clusters), *read_history, token,
                        /*label_clusters=*/!config.clusters.empty());
  server.SetWhyRephraser(rephraser.get());
  if (Status s = server.Start(config.listen, config.port); !s.ok()) Fail(s);
  if (!f.port_file.empty()) {
    if (Status s = WriteStringToFile(f.port_file, std::to_string(server.port()) + "\n"); !s.ok())
      Fail(s);
  }
  std::cerr << exposure;
  PrintBanner(config, server.port(), token, first.description,
              companions.front()->ActionPolicySummary());
  if (!config.clusters.empty()) {
    for (const auto& rt : clusters) {
      std::cerr << "schedmate serve: cluster " << rt->cluster.name << ": "
                << (rt->cluster.slurm_conf.empty() ? "--clusters=" + rt->cluster.cluster
                                                   : "SLURM_CONF=" + rt->cluster.slurm_conf)
                << "\n";
    }
  }
  ServeUntilSignalled(companions, server, signals);
  // The other instance takes over at its next poll.
  for (auto& rt : clusters)
    if (rt->leadership) rt->leadership->Resign();
}

}  // namespace

void RegisterServeCommands(CLI::App& app) {
  auto [cmd, flags] = AddCommand<ServeFlags>(
      app, "serve",
      "Run the companion beside a real Slurm cluster: advise new jobs, track running jobs' logs,\n"
      "diagnose failures and act within policy, estimate start times, serve the HTTP API.",
      RunServe);
  cmd->add_flag(
         "--slurm", flags->slurm,
         "Use the Slurm on this machine (squeue/sinfo/scontrol in PATH; SLURM_CONF honoured)")
      ->required();
  cmd->add_option("--config", flags->config_path,
                  "YAML configuration (see config/schedmate.example.yaml)");
  AddOverride(cmd, "--data-dir", flags->data_dir, "Directory for the database and captured logs",
              "service.data_dir");
  AddOverride(cmd, "--store-url", flags->store_url,
              "Where the state lives: sqlite:///path or postgresql://... shared by several "
              "instances, one of which acts",
              "store.url");
  AddOverride(cmd, "--jobcomp", flags->jobcomp, "Slurm's jobcomp/filetxt file",
              "slurm.jobcomp_path");
  AddOverride(cmd, "--listen", flags->listen, "Address to bind", "api.listen", "default 127.0.0.1");
  AddOverride(cmd, "--port", flags->port, "Port to bind, 0 = any free port", "api.port",
              "default 8787")
      ->check(CLI::Range(0, 65535));
  AddOverride(cmd, "--allow-remote", flags->allow_remote,
              "Allow --listen on a non-loopback address without an API token", "api.allow_remote",
              "a warning is printed");
  cmd->add_option("--port-file", flags->port_file,
                  "Write the bound port to this file once listening");
  cmd->add_option("--token-file", flags->token_file,
                  "File whose first line is the API token for state-changing calls");
  AddOverride(cmd, "--poll", flags->poll_s, "Seconds between passes over the queue",
              "service.poll_interval_s")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_flag("--dry-run", flags->dry_run,
                "Record every action with its reason but execute none");
  AddOverride(cmd, "--submit-policy", flags->submit_policy,
              "What job_submit.lua applies: off, note, set or cap", "submit.policy")
      ->check(CLI::Validator(
          [](std::string& v) {
            auto parsed = ParseSubmitPolicy(v);
            return parsed.ok() ? std::string() : parsed.status().message();
          },
          "POLICY"));
  AddOverride(cmd, "--llm-engine", flags->llm_engine,
              "Failure diagnosis engine: builtin, llm or auto", "llm.engine",
              "any LLM failure falls back to builtin and is counted in /metrics")
      ->check(CLI::IsMember({"builtin", "llm", "auto"}));
  AddLlmConfigFlag(cmd, flags->llm_config, OverridesNote("llm.config"));
  AddOverride(cmd, "--mode", flags->mode,
              "advise (predictions and limits only) or order (also rank the pending queue "
              "through job priorities)",
              "scheduling.mode")
      ->check(CLI::IsMember({"advise", "order"}));
  AddOverride(cmd, "--order-policy", flags->order_policy,
              "Policy that ranks the queue in order mode", "scheduling.policy")
      ->check(CLI::IsMember({"fifo", "sjf", "srtf", "qssf", "tiresias", "lucid", "schedmate"}));
  cmd->add_flag("--restore", flags->restore,
                "Put back the original priority of every job schedmate reordered, print a "
                "summary and exit (no API, no passes)");
  cmd->add_option("--ticks", flags->ticks,
                  "Run this many passes without the API, print a summary and exit")
      ->check(CLI::Range(1, 1000000));
}

}  // namespace schedmate::cli
