// schedmate report: what the companion's store recorded over a period (service/report.h).
//
//   schedmate report --since 7d                  text tables from the service's store
//   schedmate report --since 2026-11-01 --until 2026-11-08 --json
//   schedmate report --since 36h --html r.html   also an HTML page with inline SVG plots
//   --store PATH                                 the service's SQLite file (default: serve's
//                                                default, or the `database`/`data_dir` of
//                                                --config FILE)
//   --api URL                                    ask a running `schedmate serve` instead
//                                                (GET /v1/report; the period is read by it)
//
// Exit status: 0 with a report (an empty period is a report with zeros), 1 when the store cannot
// be read or the HTML file cannot be written, 2 for a bad --since/--until.

#include <fmt/format.h>
#include <httplib.h>
#include <sys/stat.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "service/report.h"
#include "service/service_config.h"
#include "service/service_store.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"

namespace schedmate::cli {
namespace {

struct ReportArgs {
  std::string since;
  std::string until = "now";
  std::string store;
  std::string config;
  std::string html;
  std::string api;
  std::string cluster;  // slurm.clusters: whose records ("" = the default / first cluster)
  bool json = false;
};

template <typename T>
T OrFail(Result<T> r) {
  if (!r.ok()) Fail(r.status());
  return std::move(r).value();
}

CLI::Validator ReportTimeValidator(const std::string& flag) {
  return CLI::Validator(
      [flag](std::string& text) {
        auto t = service::ParseReportTime(text, SystemClock().Now(), flag);
        return t.ok() ? std::string() : t.status().message();
      },
      "7d|36h|90m|2w|YYYY-MM-DD[THH:MM[:SS]]|now");
}

std::string StorePath(const ReportArgs& a) {
  if (!a.store.empty()) return a.store;
  if (!a.config.empty()) return OrFail(service::LoadServiceConfig(a.config)).DatabasePath();
  return service::ServiceConfig{}.DatabasePath();
}

Result<service::ReportInput> ReadStore(const std::string& path, const std::string& cluster,
                                       bool read_only, SimTime since, SimTime until) {
  store::SqliteOptions options;
  options.create_if_missing = false;
  options.read_only = read_only;
  SM_ASSIGN_OR_RETURN(auto db, store::SqliteDb::Open(path, options));
  SM_ASSIGN_OR_RETURN(auto history, store::SqliteHistoryStore::Attach(*db));
  SM_ASSIGN_OR_RETURN(
      auto service_store,
      service::ServiceStore::Attach(*db, cluster.empty() ? service::kDefaultCluster : cluster));
  return service::LoadReportInput(*history, *service_store, since, until);
}

// One rendering of the report from a running service.
std::string AskService(const ReportArgs& a, const std::string& format) {
  httplib::Client client(a.api);
  client.set_connection_timeout(5);
  client.set_read_timeout(120);
  httplib::Params params{{"since", a.since}, {"until", a.until}, {"format", format}};
  if (!a.cluster.empty()) params.emplace("cluster", a.cluster);
  auto res = client.Get("/v1/report", params, httplib::Headers{});
  if (!res) {
    Fail(Status::Unavailable(fmt::format("no schedmate service answers at {} ({})", a.api,
                                         httplib::to_string(res.error()))));
  }
  if (res->status != 200) {
    Fail(Status::Unavailable(
        fmt::format("{} answered HTTP {}: {}", a.api, res->status, res->body.substr(0, 300))));
  }
  return res->body;
}

void RunAgainstService(const ReportArgs& a) {
  if (!a.html.empty()) {
    if (Status s = WriteStringToFile(a.html, AskService(a, "html")); !s.ok()) Fail(s);
  }
  std::string body = AskService(a, a.json ? "json" : "text");
  if (a.json) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) Fail(Status::DataLoss(a.api + ": /v1/report did not answer JSON"));
    PrintJson(j);
  } else {
    std::cout << body;
  }
}

void RunReport(const ReportArgs& a) {
  const SimTime now = SystemClock().Now();
  auto since = service::ParseReportTime(a.since, now, "--since");
  auto until = service::ParseReportTime(a.until, now, "--until");
  if (!since.ok()) FailUsage(since.status().message());
  if (!until.ok()) FailUsage(until.status().message());
  if (*until <= *since) FailUsage("--until must be after --since (the period is empty)");
  if (!a.api.empty()) return RunAgainstService(a);
  const std::string path = StorePath(a);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    Fail(Status::NotFound(path + ": no schedmate store here (give --store PATH or --config FILE)"));
  }
  // Read-only when the schema is current (a report never writes); else opened to migrate it.
  Result<service::ReportInput> input = Status::Internal("not read");
  for (bool read_only : {true, false}) {
    input = ReadStore(path, a.cluster, read_only, *since, *until);
    if (input.ok()) break;
  }
  if (!input.ok()) Fail(input.status());
  const service::Report report = service::BuildReport(*input);
  if (!a.html.empty()) {
    Status s = WriteStringToFile(a.html, service::ReportToHtml(report));
    if (!s.ok()) Fail(s);
  }
  if (a.json) {
    PrintJson(service::ReportToJson(report));
  } else {
    std::cout << service::ReportToText(report);
  }
}

}  // namespace

void RegisterReportCommand(CLI::App& app) {
  auto [cmd, args] = AddCommand<ReportArgs>(
      app, "report",
      "What the companion recorded over a period: GPU-hours used vs allocated per user and "
      "partition, waste by category, queueing by partition, failures by root cause, and the "
      "advisor's prediction accuracy",
      RunReport);
  cmd->add_option("--since", args->since,
                  "Start of the period: a duration back from now (7d, 36h, 90m, 2w) or a UTC "
                  "date (2026-11-01, 2026-11-01T06:30)")
      ->required()
      ->check(ReportTimeValidator("--since"));
  cmd->add_option("--until", args->until, "End of the period (same forms, or now)")
      ->capture_default_str()
      ->check(ReportTimeValidator("--until"));
  auto* store = cmd->add_option(
      "--store", args->store,
      "The service's SQLite store (default: " + service::ServiceConfig{}.DatabasePath() + ")");
  auto* config = cmd->add_option("--config", args->config,
                                 "Take the store's path from this serve configuration")
                     ->excludes(store);
  cmd->add_option("--api", args->api, "URL of a running `schedmate serve` to ask instead")
      ->excludes(store)
      ->excludes(config);
  cmd->add_option("--cluster", args->cluster,
                  "Whose records, with several clusters (slurm.clusters; default: the store's "
                  "default cluster, or the service's first)")
      ->check(CLI::Validator(
          [](std::string& name) {
            return service::ValidClusterName(name) ? std::string() : "not a cluster name: " + name;
          },
          "NAME"));
  cmd->add_option("--html", args->html, "Also write an HTML page with plots to FILE");
  AddJsonFlag(cmd, args->json, "Print the report as JSON");
}

}  // namespace schedmate::cli
