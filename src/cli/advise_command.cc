// schedmate advise / schedmate history: the advisor's command-line front end.
//
//   schedmate advise PATH [--json] [--store DB]
//   schedmate history replay --trace FILE [--format F] --out PRED.csv [--quantile Q]
//   schedmate history import TRACE [--format F] [--store DB]
//
// The default store is $SCHEDMATE_HOME/history.db, else ~/.local/share/schedmate/history.db.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "advisor/fingerprint.h"
#include "advisor/history_estimator.h"
#include "advisor/replay.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "core/job.h"
#include "store/history_store.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {
namespace {

Result<JobTable> LoadTrace(const std::string& path, const std::string& format) {
  trace::TraceReadOptions o;
  if (!format.empty()) {
    auto f = ParseTraceFormat(format);
    if (!f) return Status::InvalidArgument("unknown trace format '" + format + "'");
    o.format = *f;
  }
  o.skip_malformed = true;
  return trace::ReadTrace(path, o);
}

struct ReplayArgs {
  std::string trace;
  std::string format;
  std::string out;
  double quantile = advisor::HistoryEstimatorOptions{}.quantile;
  bool no_cap = false;
};

void RunReplay(const ReplayArgs& a) {
  Result<JobTable> table = LoadTrace(a.trace, a.format);
  if (!table.ok()) Fail(table.status());
  advisor::HistoryEstimatorOptions opts;
  opts.quantile = a.quantile;
  opts.cap_by_user_latest = !a.no_cap;
  advisor::HistoryEstimator estimator(opts);
  std::vector<advisor::ReplayPrediction> preds = advisor::ReplayTrace(*table, estimator);
  std::string csv = "job_id,predicted_duration_s\n";
  std::map<std::string, int64_t> tiers;
  for (const auto& p : preds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", p.predicted_s);
    csv += p.job_id + "," + buf + "\n";
    ++tiers[p.tier];
  }
  std::ofstream f(a.out, std::ios::binary);
  if (!f || !(f << csv) || !f.flush()) Fail(Status::InvalidArgument("cannot write " + a.out));
  std::cerr << "history replay: " << preds.size() << " predictions -> " << a.out;
  if (table->rows_skipped > 0) std::cerr << " (" << table->rows_skipped << " rows skipped)";
  std::cerr << "; evidence tiers:";
  for (const auto& [t, n] : tiers) std::cerr << " " << t << "=" << n;
  std::cerr << "\n";
}

struct ImportArgs {
  std::string trace;
  std::string format;
  std::string store;
};

void RunImport(const ImportArgs& a) {
  Result<JobTable> table = LoadTrace(a.trace, a.format);
  if (!table.ok()) Fail(table.status());
  std::string path = a.store.empty() ? store::DefaultHistoryPath() : a.store;
  auto st = store::SqliteHistoryStore::Open(path);
  if (!st.ok()) Fail(st.status());
  std::vector<store::StoredJob> rows;
  rows.reserve(table->jobs.size());
  for (const JobRecord& j : table->jobs) {
    store::StoredJob s;
    s.job = j;
    s.finish = j.submit + j.duration;
    s.fingerprint = advisor::FingerprintOf(j).workload;
    s.source = table->source;
    rows.push_back(std::move(s));
  }
  Status s = (*st)->PutJobs(rows);
  if (!s.ok()) Fail(s);
  auto n = (*st)->CountJobs();
  std::cout << "imported " << rows.size() << " jobs from " << a.trace << " into " << path << " ("
            << (n.ok() ? *n : 0) << " jobs stored)\n";
}

}  // namespace

void RegisterAdviseCommands(CLI::App& app) {
  CLI::App* history = app.add_subcommand("history", "Job history: replay a trace, seed the store");
  history->require_subcommand(1);

  auto replay = std::make_shared<ReplayArgs>();
  CLI::App* rp = history->add_subcommand(
      "replay", "Predict every job of a trace online (only jobs finished by its submit time)");
  rp->add_option("--trace", replay->trace, "Trace file")->required();
  rp->add_option("--format", replay->format, "Trace format (lucid, gpw, ...; default: sniff)");
  rp->add_option("--out", replay->out, "Output CSV: job_id,predicted_duration_s")->required();
  rp->add_option("--quantile", replay->quantile,
                 "Quantile of the evidence used as the point estimate (default 0.35)")
      ->check(CLI::Range(0.01, 1.0));
  rp->add_flag("--no-cap", replay->no_cap,
               "Do not cap estimates at the user's most recently finished job");
  rp->callback([replay] { RunReplay(*replay); });

  auto import = std::make_shared<ImportArgs>();
  CLI::App* im = history->add_subcommand("import", "Seed the history store from a trace");
  im->add_option("trace", import->trace, "Trace file")->required();
  im->add_option("--format", import->format, "Trace format (default: sniff)");
  im->add_option("--store", import->store,
                 "History database (default $SCHEDMATE_HOME/history.db or "
                 "~/.local/share/schedmate/history.db)");
  im->callback([import] { RunImport(*import); });
}

}  // namespace schedmate::cli
