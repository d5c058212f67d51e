// schedmate advise / schedmate history: the advisor's command-line front end.
//
//   schedmate advise PATH [--json] [--store DB] [--user NAME] [--record] [--embedder E]
//                         [--min-similarity X]
//   schedmate history replay --trace FILE [--format F] [--skip-malformed] --out PRED.csv
//                            [--point mode|median] [--over-penalty X] [--embedder E]
//                            [--min-similarity X]
//   schedmate history import TRACE [--format F] [--skip-malformed] [--store DB] [--json]
//   schedmate history reindex [--store DB] [--llm-config F] [--batch N] [--clear] [--json]
//
// The default store is $SCHEDMATE_HOME/history.db, else ~/.local/share/schedmate/history.db.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "advisor/advised_job.h"
#include "advisor/advisor_json.h"
#include "advisor/builtin_extractor.h"
#include "advisor/fingerprint.h"
#include "advisor/history_estimator.h"
#include "advisor/llm_metadata_agent.h"
#include "advisor/replay.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/embedder_util.h"
#include "cli/engine_util.h"
#include "cli/flags_util.h"
#include "core/job.h"
#include "core/json_dump.h"
#include "core/progress.h"
#include "core/strings.h"
#include "fmt/format.h"
#include "llm/llm_setup.h"
#include "store/history_store.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {
namespace {

// Reads a trace like the `trace` commands do: the first malformed row stops the read with
// "file:line: reason" (exit 1) unless --skip-malformed, which skips and counts such rows.
JobTable LoadTraceOrFail(const TraceFlags& flags) {
  trace::TraceReadOptions o;
  o.format = ParsedTraceFormat(flags);
  o.skip_malformed = flags.skip_malformed;
  Result<JobTable> table = trace::ReadTrace(flags.path, o);
  if (!table.ok()) Fail(table.status());
  return std::move(table).value();
}

struct ReplayArgs {
  TraceFlags trace;  // --trace, --format, --skip-malformed
  std::string out;
  std::string point = "density";
  double over_penalty = advisor::HistoryEstimatorOptions{}.over_penalty;
  double point_bandwidth = advisor::HistoryEstimatorOptions{}.point_bandwidth;
  double sequence_weight = advisor::HistoryEstimatorOptions{}.sequence_weight;
  double user_mix = advisor::HistoryEstimatorOptions{}.user_mix;
  std::string workload_range = "on";
  std::string embedder = "hashing";
  double min_similarity = -1;
  std::string llm_config;
};

void RunReplay(const ReplayArgs& a) {
  const JobTable table = LoadTraceOrFail(a.trace);
  advisor::HistoryEstimatorOptions opts;
  opts.point = a.point == "median" ? advisor::PointEstimate::kMedian
               : a.point == "mode" ? advisor::PointEstimate::kWindowMode
                                   : advisor::PointEstimate::kDensityWindow;
  opts.over_penalty = a.over_penalty;
  opts.point_bandwidth = a.point_bandwidth;
  opts.sequence_weight = a.sequence_weight;
  opts.user_mix = a.user_mix;
  opts.workload_range = a.workload_range == "on";
  opts.explain = false;  // the CSV holds the numbers only
  opts = WithMinSimilarity(opts, a.embedder, a.min_similarity);
  auto embedder = SimilarityEmbedder::Resolve(a.embedder, a.llm_config, /*required=*/false);
  advisor::HistoryEstimator estimator(opts, embedder->estimator_embedder());
  std::vector<advisor::ReplayPrediction> preds = advisor::ReplayTrace(table, estimator);
  embedder->WarnIfFailed();
  std::string csv = "job_id,predicted_duration_s,p10_s,p50_s,p90_s\n";
  std::map<std::string, int64_t> tiers;
  for (const auto& p : preds) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.3f,%.3f,%.3f,%.3f", p.predicted_s, p.p10_s, p.p50_s, p.p90_s);
    csv += p.job_id + "," + buf + "\n";
    ++tiers[p.tier];
  }
  std::ofstream f(a.out, std::ios::binary);
  if (!f || !(f << csv) || !f.flush()) Fail(Status::InvalidArgument("cannot write " + a.out));
  std::cerr << "history replay: " << preds.size() << " predictions -> " << a.out;
  if (table.rows_skipped > 0) std::cerr << " (" << table.rows_skipped << " rows skipped)";
  std::cerr << "; evidence tiers:";
  for (const auto& [t, n] : tiers) std::cerr << " " << t << "=" << n;
  std::cerr << "; embedder: " << embedder->Label();
  if (const auto* c = embedder->cache()) {
    std::cerr << " (" << c->requests() << " requests, " << c->sent() << " texts)";
  }
  std::cerr << "\n";
}

struct ImportArgs {
  TraceFlags trace;  // TRACE, --format, --skip-malformed
  std::string store;
  bool json = false;
};

// The whole trace is read (and checked) before the store is opened, and its jobs go in with one
// transaction: a failed import leaves the store as it was, never a partial history.
void RunImport(const ImportArgs& a) {
  const JobTable table = LoadTraceOrFail(a.trace);
  std::string path = a.store.empty() ? store::DefaultHistoryPath() : a.store;
  auto st = store::SqliteHistoryStore::Open(path);
  if (!st.ok()) Fail(st.status());
  std::vector<store::StoredJob> rows;
  rows.reserve(table.jobs.size());
  for (const JobRecord& j : table.jobs) {
    store::StoredJob s;
    s.job = j;
    s.finish = j.submit + j.duration;
    s.fingerprint = advisor::FingerprintOf(j).workload;
    s.source = table.source;
    rows.push_back(std::move(s));
  }
  Status s = (*st)->PutJobs(rows);
  if (!s.ok()) Fail(s);
  auto n = (*st)->CountJobs();
  // Stored server vectors do not cover workloads that are new to the store: say so.
  std::string vector_note;
  size_t missing_vectors = 0;
  auto stored = (*st)->StoredEmbedder();
  if (stored.ok() && stored->has_value()) {
    auto vectors = (*st)->ListEmbeddings(**stored);
    if (vectors.ok()) {
      std::unordered_set<std::string> have;
      for (const auto& v : *vectors) have.insert(v.key);
      std::unordered_set<std::string> missing;
      for (const store::StoredJob& j : rows) {
        std::string t = WorkloadTextOf(j);
        if (!t.empty() && have.count(t) == 0) missing.insert(std::move(t));
      }
      missing_vectors = missing.size();
      if (!missing.empty()) {
        vector_note = fmt::format(
            "{} new workload texts have no stored {} vector; run `schedmate history reindex`",
            missing.size(), (*stored)->name);
      }
    }
  }
  if (a.json) {
    nlohmann::json out = {{"trace", a.trace.path},
                          {"format", std::string(TraceFormatName(table.format))},
                          {"store", path},
                          {"imported", rows.size()},
                          {"stored_jobs", n.ok() ? *n : 0},
                          {"rows_read", table.rows_read},
                          {"rows_skipped", table.rows_skipped},
                          {"skip_reasons", table.skip_reasons},
                          {"missing_vectors", missing_vectors}};
    if (!vector_note.empty()) out["note"] = vector_note;
    PrintJson(out);
    return;
  }
  std::cout << "imported " << rows.size() << " jobs from " << a.trace.path << " into " << path
            << " (" << (n.ok() ? *n : 0) << " jobs stored)\n";
  if (table.rows_skipped > 0) {
    std::cout << "skipped " << table.rows_skipped << " malformed rows of " << table.rows_read
              << (table.skip_reasons.size() < static_cast<size_t>(table.rows_skipped)
                      ? fmt::format(" (first {}):\n", table.skip_reasons.size())
                      : std::string(":\n"));
    for (const std::string& r : table.skip_reasons) std::cout << "  " << r << "\n";
  }
  if (!vector_note.empty()) std::cout << "note: " << vector_note << "\n";
}

struct AdviseArgs {
  std::string path;
  bool json = false;
  std::string store;
  std::string user;
  bool record = false;
  EngineFlags engine;
  std::string prefer = "builtin";
  std::string embedder = "hashing";
  double min_similarity = -1;
};

// The metadata from the job's sources. --engine llm: the metadata agent fills the built-in
// engine's gaps; --engine auto asks it only when the built-in answer is unsure, and then only for
// its unsure fields (cli/engine_util.h, advisor::MetadataMerge).
// `builtin_confidence` is set to the built-in answer's confidence, reported whoever answered.
advisor::JobMetadata ExtractMetadata(const AdviseArgs& a, EngineContext& engine,
                                     double& builtin_confidence) {
  advisor::BuiltinMetadataExtractor extractor;
  Result<advisor::JobMetadata> meta = extractor.Extract({.path = a.path});
  if (!meta.ok()) Fail(meta.status());
  builtin_confidence = meta->AnswerConfidence();
  if (!engine.Consult(builtin_confidence)) return std::move(meta).value();
  advisor::LlmAgentOptions lo;
  lo.prefer = *advisor::ParseMergePreference(a.prefer);  // checked by --prefer's validator
  advisor::LlmMetadataAgent agent(engine.setup()->chat(), lo);
  const advisor::MetadataMerge merge(
      *meta, engine.is_auto() ? std::optional<double>(engine.llm_below()) : std::nullopt);
  Result<advisor::JobMetadata> merged = agent.Extract({.path = a.path}, merge.Shown());
  if (!merged.ok()) {
    engine.Fallback(merged.status(), "advise");
    return std::move(meta).value();
  }
  return merge.Merge(std::move(merged).value());
}

// The history the estimate rests on: the given store, or the default one when it exists (advise
// never creates it); every stored job observed by `estimator`.
struct AdviseHistory {
  std::unique_ptr<store::SqliteHistoryStore> store;  // null: no store
  int64_t jobs = 0;
  std::string embedder_note;
};

AdviseHistory LoadHistory(const AdviseArgs& a, SimilarityEmbedder& embedder,
                          advisor::HistoryEstimator& estimator) {
  AdviseHistory h;
  const std::string store_path = a.store.empty() ? store::DefaultHistoryPath() : a.store;
  std::error_code ec;
  if (a.store.empty() && !a.record && !std::filesystem::exists(store_path, ec)) return h;
  auto st = store::SqliteHistoryStore::Open(store_path);
  if (!st.ok()) Fail(st.status());
  h.store = std::move(*st);
  auto jobs = h.store->ListJobs({});
  if (!jobs.ok()) Fail(jobs.status());
  std::vector<advisor::JobFingerprint> fps;
  fps.reserve(jobs->size());
  for (const store::StoredJob& s : *jobs) {
    fps.push_back(advisor::FingerprintOf(s.job));
    if (!s.fingerprint.empty()) fps.back().workload = s.fingerprint;
  }
  h.embedder_note = embedder.Preload(*h.store, fps);
  for (size_t i = 0; i < jobs->size(); ++i) {
    estimator.ObserveWithFingerprint((*jobs)[i].job, *(*jobs)[i].finish, fps[i]);
    ++h.jobs;
  }
  return h;
}

// --record: the advised job (unfinished) and the prediction with its evidence, and its server
// vector when the store's vectors are this embedder's.
void RecordAdvice(const AdviseArgs& a, store::SqliteHistoryStore& history, const JobRecord& job,
                  const advisor::JobFingerprint& fp, const advisor::JobMetadata& meta,
                  const advisor::DetailedEstimate& d, const SimilarityEmbedder& embedder) {
  std::error_code ec;
  store::StoredJob sj;
  sj.job = job;
  sj.job.id = "advise:" + std::filesystem::absolute(a.path, ec).lexically_normal().string();
  sj.fingerprint = fp.workload;
  sj.metadata_json = DumpJson(meta.FieldsJson());
  sj.source = "advise";
  Status s = history.PutJob(sj);
  store::StoredPrediction p;
  p.job_id = sj.job.id;
  p.made_at = SimTime::FromMicros(static_cast<int64_t>(std::time(nullptr)) * 1'000'000);
  p.estimator = "advisor";
  p.duration = d.estimate.duration;
  p.low = d.estimate.low;
  p.high = d.estimate.high;
  p.confidence = d.estimate.confidence;
  p.explanation = d.estimate.explanation;
  p.neighbours_json = DumpJson(advisor::StoredEvidenceToJson(d.neighbours));
  if (s.ok()) s = history.PutPrediction(p);
  if (!s.ok()) Fail(s);
  const auto* c = embedder.cache();
  if (c == nullptr || !c->failure().ok()) return;
  auto stored = history.StoredEmbedder();
  const std::vector<float>* v = c->Find(fp.workload);
  if (stored.ok() && stored->has_value() && **stored == embedder.identity() && v != nullptr) {
    Status e = history.PutEmbedding(**stored, {fp.workload, *v});
    if (!e.ok()) Fail(e);
  }
}

void PrintAdviceText(const advisor::JobMetadata& meta, const advisor::DetailedEstimate& d,
                     const std::string& engine, const std::string& embedder,
                     const std::string& embedder_note) {
  std::cout << "job: " << meta.entry << "\n";
  if (engine != "builtin") std::cout << "engine: " << engine << "\n";
  if (embedder != "hashing") std::cout << "embedder: " << embedder << "\n";
  for (std::string_view f : advisor::kMetadataFields) {
    auto it = meta.values.find(std::string(f));
    if (it == meta.values.end()) continue;
    std::string v = it->second.is_string() ? it->second.get<std::string>() : it->second.dump();
    std::cout << "  " << f << ": " << v;
    auto s = meta.sources.find(std::string(f));
    if (s != meta.sources.end()) std::cout << "    [" << s->second << "]";
    std::cout << "\n";
  }
  std::cout << "estimate: " << FormatDuration(d.estimate.duration) << " ("
            << FormatDuration(d.estimate.low) << " .. " << FormatDuration(d.estimate.high)
            << ", confidence " << d.estimate.confidence << ")\n  " << d.estimate.explanation
            << "\n";
  for (const std::string& n : meta.notes) std::cout << "note: " << n << "\n";
  if (meta.files_skipped > 0) std::cout << "skipped files: " << meta.files_skipped << "\n";
  if (!embedder_note.empty()) std::cout << "note: " << embedder_note << "\n";
}

void RunAdvise(const AdviseArgs& a) {
  std::unique_ptr<EngineContext> engine = EngineContext::Resolve(a.engine);
  double builtin_confidence = 0;
  const advisor::JobMetadata meta = ExtractMetadata(a, *engine, builtin_confidence);
  std::string user = a.user;
  if (user.empty()) {
    const char* u = std::getenv("USER");
    user = u != nullptr ? u : "";
  }
  const JobRecord job = advisor::JobFromMetadata(meta, user);
  const advisor::JobFingerprint fp = advisor::FingerprintOfAdvisedJob(meta, job);
  auto embedder = SimilarityEmbedder::Resolve(a.embedder, a.engine.llm_config, /*required=*/false);
  advisor::HistoryEstimator estimator(WithMinSimilarity({}, a.embedder, a.min_similarity),
                                      embedder->estimator_embedder());
  AdviseHistory history = LoadHistory(a, *embedder, estimator);
  const advisor::DetailedEstimate d = estimator.EstimateDetailed(job, fp);
  embedder->WarnIfFailed();
  if (a.record && history.store != nullptr) {
    RecordAdvice(a, *history.store, job, fp, meta, d, *embedder);
  }
  if (!a.json) {
    PrintAdviceText(meta, d, engine->engine(), embedder->Label(), history.embedder_note);
    return;
  }
  nlohmann::json out;
  out["metadata"] = meta.FieldsJson();
  out["sources"] = meta.SourcesJson();
  out["confidence"] = meta.ConfidenceJson();
  out["field_engines"] = meta.EnginesJson();
  out["builtin_confidence"] = builtin_confidence;
  out["estimate"] = advisor::EstimateToJson(d, history.jobs);
  out["entry"] = meta.entry;
  out["files_read"] = meta.files_read;
  out["files_skipped"] = meta.files_skipped;
  out["notes"] = meta.notes;
  out["engine"] = engine->engine();
  out["embedder"] = embedder->Label();
  if (!history.embedder_note.empty()) out["embedder_note"] = history.embedder_note;
  PrintJson(out);
}

struct ReindexArgs {
  std::string store;
  std::string llm_config;
  size_t batch = 64;
  bool clear = false;
  bool json = false;
};

// Embeds the distinct workload texts of the finished jobs with the configured embedding server
// and replaces the store's vectors (keyed by text) in one transaction; any failure leaves the
// store as it was.
void RunReindex(const ReindexArgs& a) {
  const std::string path = a.store.empty() ? store::DefaultHistoryPath() : a.store;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    Fail(Status::NotFound("no history store at " + path +
                          " (seed one with `schedmate history import TRACE`)"));
  }
  auto st = store::SqliteHistoryStore::Open(path);
  if (!st.ok()) Fail(st.status());
  store::SqliteHistoryStore& history = **st;
  nlohmann::json out = {{"store", path}};
  if (a.clear) {
    auto n = history.CountEmbeddings();
    if (!n.ok()) Fail(n.status());
    Status s = history.ClearEmbeddings();
    if (!s.ok()) Fail(s);
    out["cleared"] = *n;
    if (a.json) {
      PrintJson(out);
    } else {
      std::cout << "removed " << *n << " stored vectors from " << path << "\n";
    }
    return;
  }
  auto embedder = SimilarityEmbedder::Resolve("server", a.llm_config, /*required=*/true);
  advisor::StoredVectorEmbedder& cache = *embedder->cache();
  auto jobs = history.ListJobs({});
  if (!jobs.ok()) Fail(jobs.status());
  // Distinct texts in job order: each is sent once.
  std::vector<std::string> texts;
  std::unordered_set<std::string> seen;
  for (const store::StoredJob& j : *jobs) {
    std::string t = WorkloadTextOf(j);
    if (!t.empty() && seen.insert(t).second) texts.push_back(std::move(t));
  }
  if (texts.empty()) {
    Fail(Status::FailedPrecondition(path + ": no finished job with a workload text to embed"));
  }
  const auto start = std::chrono::steady_clock::now();
  ProgressBar bar("embedding", static_cast<int64_t>(texts.size()),
                  ProgressBar::StderrIsInteractive());
  const size_t batch = std::max<size_t>(a.batch, 1);
  for (size_t i = 0; i < texts.size(); i += batch) {
    std::span<const std::string> part(texts.data() + i, std::min(batch, texts.size() - i));
    auto got = cache.Embed(part);
    if (!got.ok()) {
      Fail(Status(got.status().code(),
                  fmt::format("history reindex: embedding failed after {} of {} texts: {}; the "
                              "store is unchanged",
                              i, texts.size(), got.status().message())));
    }
    bar.Update(static_cast<int64_t>(i + part.size()));
  }
  bar.Finish();
  const store::EmbedderIdentity id = embedder->identity();
  std::vector<store::StoredEmbedding> rows;
  rows.reserve(texts.size());
  for (const std::string& t : texts) rows.push_back({t, *cache.Find(t)});
  auto before = history.StoredEmbedder();
  Status s = history.ReplaceEmbeddings(id, rows);
  if (!s.ok()) Fail(s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out["embedder"] = id.name;
  out["dimension"] = id.dimension;
  out["jobs"] = jobs->size();
  out["vectors"] = rows.size();
  out["requests"] = cache.requests();
  out["seconds"] = seconds;
  if (before.ok() && before->has_value()) out["replaced"] = (*before)->name;
  if (a.json) {
    PrintJson(out);
    return;
  }
  std::cout << fmt::format(
      "reindexed {}: {} vectors (one per distinct workload text) for {} jobs with {} "
      "(dimension {}) in {} requests, {:.2f} s\n",
      path, rows.size(), jobs->size(), id.name, id.dimension, cache.requests(), seconds);
}

}  // namespace

void RegisterAdviseCommands(CLI::App& app) {
  auto [ad, advise] = AddCommand<AdviseArgs>(
      app, "advise",
      "Read a job's sources (directory, batch script or program): metadata + duration estimate",
      RunAdvise);
  ad->add_option("path", advise->path, "Job directory, batch script, Python program or config")
      ->required();
  AddJsonFlag(ad, advise->json, "Print JSON: metadata, sources, estimate");
  ad->add_option("--store", advise->store,
                 "History database for the estimate (default $SCHEDMATE_HOME/history.db or "
                 "~/.local/share/schedmate/history.db, used only if it exists)");
  ad->add_option("--user", advise->user, "Whose history counts as 'same user' (default $USER)");
  ad->add_flag("--record", advise->record,
               "Store the job and this prediction (with its evidence) in the history store");
  AddEngineFlags(ad, advise->engine);
  AddEmbedderFlag(ad, advise->embedder);
  AddMinSimilarityFlag(ad, advise->min_similarity);
  ad->add_option("--prefer", advise->prefer,
                 "With the LLM engine, whose value wins on conflict: builtin (default; values "
                 "with file:line provenance) or llm")
      ->check(CLI::Validator(
          [](std::string& v) {
            auto p = advisor::ParseMergePreference(v);
            return p.ok() ? std::string() : p.status().message();
          },
          "builtin|llm"));

  CLI::App* history = AddCommandGroup(
      app, "history", "Job history: replay a trace, seed the store, re-embed it with a server");

  auto [rp, replay] = AddCommand<ReplayArgs>(
      *history, "replay",
      "Predict every job of a trace online (only jobs finished by its submit time)", RunReplay);
  AddTraceFlags(rp, replay->trace, TraceArg::kOption, "Trace file");
  rp->add_option("--out", replay->out,
                 "Output CSV: job_id,predicted_duration_s,p10_s,p50_s,p90_s (calibrated "
                 "quantiles)")
      ->required();
  rp->add_option("--point", replay->point,
                 "Point estimate: density (centre of the densest x2 window of the smoothed "
                 "evidence, mixed with the runs that followed similar runs and the user's other "
                 "runs), mode (the same window over the raw evidence) or median (of the "
                 "calibrated distribution)")
      ->capture_default_str()
      ->check(CLI::IsMember({"density", "mode", "median"}));
  rp->add_option("--over-penalty", replay->over_penalty,
                 "--point density|mode: weight of evidence more than 2x below the point "
                 "(higher: fewer over-estimates)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 100.0));
  rp->add_option("--point-bandwidth", replay->point_bandwidth,
                 "--point density: kernel width in log2 seconds")
      ->capture_default_str()
      ->check(FiniteRange(0.05, 10.0));
  rp->add_option("--sequence-weight", replay->sequence_weight,
                 "--point density: weight of the runs that followed a run in the same octave as "
                 "the group's newest (0: off)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1.0));
  rp->add_option("--user-mix", replay->user_mix,
                 "--point density: weight of the user's other runs (0: off)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1.0));
  rp->add_option("--workload-range", replay->workload_range,
                 "Set aside a workload-blind tier's evidence outside the range of the workload's "
                 "own recent runs (any user), when that range is narrower than the cluster's")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  AddEmbedderFlag(rp, replay->embedder);
  AddMinSimilarityFlag(rp, replay->min_similarity);
  AddLlmConfigFlag(rp, replay->llm_config, "for --embedder server");

  auto [im, import] =
      AddCommand<ImportArgs>(*history, "import", "Seed the history store from a trace", RunImport);
  AddTraceFlags(im, import->trace, TraceArg::kPositional, "Trace file");
  AddJsonFlag(im, import->json,
              "Print the summary as JSON (imported, rows_read, rows_skipped, skip_reasons)");
  im->add_option("--store", import->store,
                 "History database (default $SCHEDMATE_HOME/history.db or "
                 "~/.local/share/schedmate/history.db)");

  auto [ri, reindex] = AddCommand<ReindexArgs>(
      *history, "reindex",
      "Embed the history's workload texts with the configured embedding server and store the "
      "vectors (one per distinct text; replaces those of any other embedder, all or nothing)",
      RunReindex);
  ri->add_option("--store", reindex->store,
                 "History database (default $SCHEDMATE_HOME/history.db or "
                 "~/.local/share/schedmate/history.db)");
  AddLlmConfigFlag(ri, reindex->llm_config, "with an embeddings: endpoint");
  ri->add_option("--batch", reindex->batch, "Texts per /v1/embeddings request")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  ri->add_flag("--clear", reindex->clear,
               "Remove the stored vectors instead (the hashing embedder needs none)");
  AddJsonFlag(ri, reindex->json, "Print the summary as JSON");
}

}  // namespace schedmate::cli
