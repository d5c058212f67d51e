// schedmate logs metrics: training progress from a job log (the Metric Tracker).
//
//   schedmate logs metrics FILE [--json] [--all] [--follow] [--plot OUT.svg|png]
//
// --json         one JSON object for the latest TRAINING progress record:
//                {"found", "line_no", "line", "segment", "step", "total_steps", "epoch",
//                 "total_epochs", "loss", "losses", "lr", "step_time_s", "throughput": {"value",
//                 "unit"}, "eta_s", "eta", "format", "run", "progress", "confidence",
//                 "field_confidence": {"counter", "totals", "loss", "timing"}, "signals": {...},
//                 "stats": {...}, "engine"} with null where the log does not say;
//                {"found": false, ...} when the log has no training progress.
//                "confidence" (0..1, null when nothing was found) is the built-in engine's
//                confidence in its own newest record (tracker/record_confidence.h), also when
//                the LLM answered; "field_confidence" is per value group and
//                "confidence_evidence" says what the number rests on (built-in answers only).
// --engine builtin|llm|auto
//                who reads the newest record: auto runs the built-in engine first and asks the
//                LLM (stage 2 over the built-in progress lines) only when "confidence" is below
//                --llm-below; "engine" says who answered ("builtin" when the LLM was not needed).
// --all          the whole series, streamed: with --json a JSON array with one record object per
//                line (same keys, no "signals"/"stats"), otherwise one text line per record.
// --follow       tail -F the file (appends, truncation, rotation) and stream each new record as
//                one JSON line (--json) or text line, until interrupted (SIGINT/SIGTERM).
// --plot FILE    loss and throughput against step (.svg, or .png via rsvg-convert).
// --filter builtin|embeddings
//                stage 1 (which lines are training progress): the built-in classifier
//                (default) or line-shape embeddings (tracker/embedding_filter.h): the log's
//                templates are embedded (--filter-embedder server: the configured /v1/embeddings
//                model; hashing: the built-in hashed features, no server) and labelled by their
//                nearest exemplars (config/tracker_exemplars.txt, --exemplars FILE, and the
//                shapes the built-in is sure about in the same log). Works with --engine builtin
//                (veto of built-in progress decisions) and --engine llm (the filtered lines feed
//                stage 2). JSON gains "filter": "builtin", "embeddings (MODEL)" or
//                "builtin (embeddings unavailable: connection refused)" after a fallback, and
//                with embeddings "filter_stats". Not with --follow.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_util.h"
#include "cli/flags_util.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "core/json_dump.h"
#include "llm/llm_setup.h"
#include "llm/server_text_embedder.h"
#include "plot/svg_plot.h"
#include "text/hashed_tfidf_embedder.h"
#include "tracker/embedding_filter.h"
#include "tracker/llm_metric_extractor.h"
#include "tracker/log_reader.h"
#include "tracker/log_scan.h"
#include "tracker/metric_tracker.h"
#include "tracker/signals.h"
#include "tracker/tracker_json.h"

namespace schedmate::cli {
namespace {

using tracker::ProgressRecord;
using tracker::Signals;

std::atomic<bool> g_stop{false};
extern "C" void HandleStopSignal(int) { g_stop.store(true); }

using tracker::NumberOrNull;
using tracker::RecordToJson;
using tracker::RoundedConfidence;
using tracker::SignalsToJson;
using RecordSink = std::function<void(const ProgressRecord&)>;

std::string Fmt(double v) {
  std::ostringstream o;
  o << std::setprecision(6) << v;
  return o.str();
}

std::string RecordText(const ProgressRecord& r) {
  const auto& v = r.v;
  std::ostringstream o;
  o << "line " << r.line_no << ":";
  if (v.epoch) {
    o << " epoch " << Fmt(*v.epoch);
    if (v.total_epochs) o << "/" << *v.total_epochs;
  }
  if (v.step) {
    o << " step " << *v.step;
    if (v.total_steps) o << "/" << *v.total_steps;
  }
  if (v.loss) o << " loss " << Fmt(*v.loss);
  if (v.lr) o << " lr " << Fmt(*v.lr);
  if (v.step_time_s) o << " step_time " << Fmt(*v.step_time_s) << "s";
  if (v.throughput) o << " throughput " << Fmt(v.throughput->value) << " " << v.throughput->unit;
  if (v.eta_s) o << " eta " << v.eta_text << " (" << Fmt(*v.eta_s) << " s)";
  if (r.run > 0) o << " run " << r.run;
  return o.str();
}

// x position of a record on the plot: a global step when epochs restart the counter.
double PlotX(const ProgressRecord& r, size_t index) {
  const auto& v = r.v;
  if (v.step && v.total_steps && v.epoch && !v.epoch_fractional) {
    return std::floor(*v.epoch) * static_cast<double>(*v.total_steps) +
           static_cast<double>(*v.step);
  }
  if (v.step) return static_cast<double>(*v.step);
  if (v.epoch) return *v.epoch;
  return static_cast<double>(index);
}

// Loss and throughput points collected while scanning (the records themselves are not kept).
struct PlotData {
  plot::Series loss{"loss", {}, {}};
  plot::Series tput{"throughput", {}, {}};
  std::string unit;
  size_t index = 0;
  void Add(const ProgressRecord& r) {
    const double x = PlotX(r, index++);
    if (r.v.loss) {
      loss.x.push_back(x);
      loss.y.push_back(*r.v.loss);
    }
    if (r.v.throughput && r.v.throughput->unit.rfind("s/", 0) != 0) {
      tput.x.push_back(x);
      tput.y.push_back(r.v.throughput->value);
      unit = r.v.throughput->unit;
    } else if (r.v.step_time_s && *r.v.step_time_s > 0) {
      tput.x.push_back(x);
      tput.y.push_back(1.0 / *r.v.step_time_s);
      if (unit.empty()) unit = "steps/s";
    }
  }
};

Status WritePlot(PlotData data, const std::string& path, const std::string& title) {
  plot::Series loss = std::move(data.loss);
  plot::Series tput = std::move(data.tput);
  const std::string unit = data.unit;
  // Keep the SVG small for long runs: at most ~4000 evenly spaced points per series.
  auto thin = [](plot::Series& series) {
    const size_t n = series.x.size();
    if (n <= 4000) return;
    const size_t stride = (n + 3999) / 4000;
    size_t k = 0;
    for (size_t i = 0; i < n; i += stride, ++k) {
      series.x[k] = series.x[i];
      series.y[k] = series.y[i];
    }
    series.x.resize(k);
    series.y.resize(k);
  };
  thin(loss);
  thin(tput);
  plot::Figure fig;
  fig.title = title;
  plot::Chart lc;
  lc.title = "training loss";
  lc.x_label = "step";
  lc.y_label = "loss";
  lc.series.push_back(std::move(loss));
  plot::Chart tc;
  tc.title = "throughput";
  tc.x_label = "step";
  tc.y_label = unit.empty() ? "throughput" : unit;
  tc.series.push_back(std::move(tput));
  fig.charts.push_back(std::move(lc));
  fig.charts.push_back(std::move(tc));
  return plot::WriteFigure(fig, path);
}

struct MetricsOptions {
  std::string file;
  bool json = false;
  bool all = false;
  bool follow = false;
  std::string plot;
  double stall_factor = 5.0;
  double slowdown_share = 0.2;
  int poll_ms = 200;
  double idle_exit_s = 0;
  bool from_end = false;
  bool full_scan = false;
  bool no_line_count = false;
  EngineFlags engine;  // --engine/--llm-config: applies to the latest record (not --all/--follow)
  std::string filter = "builtin";          // stage 1: builtin | embeddings
  std::string filter_embedder = "server";  // embeddings from: server | hashing
  std::string exemplars;                   // extra exemplar file
  size_t filter_max_templates = 64;
  size_t filter_batch = 64;
  bool filter_explain = false;
  bool filter_judge_confident = false;
};

// The embeddings filter's configuration for one run: an embedder, or the reason there is none.
struct FilterSetup {
  std::unique_ptr<text::TextEmbedder> embedder;
  Status unavailable;  // not OK: no embedder (the built-in filter runs, with this reason)
  std::string name;    // for the label when unavailable
  std::unique_ptr<llm::LlmSetup> own_setup;  // when the engine context has none
};

FilterSetup MakeFilterEmbedder(const MetricsOptions& o, EngineContext& engine) {
  FilterSetup f;
  if (o.filter_embedder == "hashing") {
    f.embedder = std::make_unique<text::HashedTfIdfEmbedder>();
    return f;
  }
  llm::LlmSetup* setup = engine.setup();
  if (setup == nullptr) {
    auto loaded = llm::LoadLlmSetup(o.engine.llm_config.empty()
                                        ? std::nullopt
                                        : std::optional<std::string>(o.engine.llm_config));
    if (!loaded.ok()) Fail(loaded.status());
    f.own_setup = std::move(loaded).value();
    setup = f.own_setup.get();
  }
  if (!setup->embeddings_configured()) {
    f.unavailable = Status::Unavailable(
        setup->config().backend == "none"
            ? "disabled (backend: none)"
            : "not configured; set SCHEDMATE_EMBED_MODEL (and SCHEDMATE_EMBED_BASE_URL unless "
              "it is the chat server) or embeddings: in --llm-config");
    return f;
  }
  f.embedder = std::make_unique<llm::ServerTextEmbedder>(
      setup->embedder(), setup->config().embeddings.model, setup->config().embedding_dimension);
  return f;
}

// An exemplar file is text: every line valid UTF-8 without control characters (the error names
// the line instead of echoing its bytes to the terminal).
Status CheckExemplarText(std::string_view text, const std::string& path) {
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    const bool control = std::any_of(line.begin(), line.end(), [](char c) {
      const unsigned char u = static_cast<unsigned char>(c);
      return (u < 0x20 && u != '\t' && u != '\r') || u == 0x7F;
    });
    if (control || !IsValidUtf8(line)) {
      return Status::InvalidArgument(path + ":" + std::to_string(line_no) +
                                     ": not text (invalid UTF-8 or control characters)");
    }
  }
  return Status::Ok();
}

void RunFollow(const MetricsOptions& o, tracker::SignalOptions sig) {
  {
    // Fail early on a missing or unreadable file (the path is in the message).
    auto f = tracker::LogFile::Open(o.file);
    if (!f.ok()) Fail(f.status());
  }
  std::signal(SIGINT, HandleStopSignal);
  std::signal(SIGTERM, HandleStopSignal);
  SystemClock clock;
  tracker::BuiltinLineClassifier classifier;
  tracker::BuiltinMetricExtractor extractor;
  tracker::MetricTracker mt(classifier, extractor);
  tracker::SignalAnalyzer analyzer(sig);
  tracker::FileFollower follower(o.file);
  follower.SetStartAtEnd(o.from_end);
  bool streaming = false;
  auto print = [&](const ProgressRecord& r) {
    if (o.json) {
      nlohmann::json j = RecordToJson(r);
      j["signals"] = SignalsToJson(analyzer.Compute(r, clock.Now().seconds_f()));
      std::cout << DumpJson(j) << "\n" << std::flush;
    } else {
      std::cout << RecordText(r) << "\n" << std::flush;
    }
  };
  mt.SetSink([&](const ProgressRecord& r) {
    analyzer.Add(r);
    if (streaming) print(r);
  });
  auto last_data = std::chrono::steady_clock::now();
  bool first = true;
  while (!g_stop.load()) {
    bool got = false;
    const double now = clock.Now().seconds_f();
    Status st = follower.Poll([&](std::string_view line, int64_t line_no, uint64_t offset, bool) {
      got = true;
      mt.AddLine(line, line_no, offset, now);
    });
    if (!st.ok()) Fail(st);
    if (first) {
      mt.FlushPending();
      if (mt.Latest()) print(*mt.Latest());
      streaming = true;
      first = false;
    } else if (!got) {
      mt.FlushPending();  // nothing new: emit what is pending (tail -F is live)
    }
    if (got) last_data = std::chrono::steady_clock::now();
    if (o.idle_exit_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_data).count() >
            o.idle_exit_s) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
  }
  mt.FlushPending();
}

// What a scan found, and which stage-1 filter and engine found it.
struct MetricsScan {
  Result<tracker::ScanResult> res = Status::Unavailable("not scanned");
  std::optional<double> builtin_confidence;  // of the built-in engine's newest record
  std::string filter_label = "builtin";
  std::optional<tracker::FilterReport> filter_report;
  nlohmann::json filter_templates = nlohmann::json::array();
};

// The built-in exemplars plus --exemplars, checked as text.
std::vector<tracker::Exemplar> LoadExemplars(const MetricsOptions& o) {
  std::vector<tracker::Exemplar> exemplars = tracker::BuiltinExemplars();
  if (o.exemplars.empty()) return exemplars;
  auto text = ReadTextFileToString(o.exemplars, size_t{64} << 20);
  if (!text.ok()) Fail(text.status());
  if (Status st = CheckExemplarText(*text, o.exemplars); !st.ok()) Fail(st);
  auto extra = tracker::ParseExemplars(*text, o.exemplars);
  if (!extra.ok()) Fail(extra.status());
  exemplars.insert(exemplars.end(), extra->begin(), extra->end());
  return exemplars;
}

// --filter embeddings: the filtered scan, then (when the engine asks for it) the LLM over the
// lines the filter kept (the built-in filter's after a filter failure), newest first with early
// stop. A failed filter leaves `scan.res` unset: the built-in-filter path runs after it.
void ScanWithEmbeddings(const MetricsOptions& o, const tracker::ScanOptions& so,
                        const RecordSink& sink, EngineContext& engine, MetricsScan& scan) {
  const std::vector<tracker::Exemplar> exemplars = LoadExemplars(o);
  FilterSetup fs = MakeFilterEmbedder(o, engine);
  Status filter_status = fs.unavailable;
  std::vector<ProgressRecord> candidates;
  if (fs.embedder) {
    tracker::FilteredScanOptions fo;
    fo.scan = so;
    fo.filter.max_templates = o.filter_max_templates;
    fo.filter.batch = o.filter_batch;
    fo.filter.judge_confident = o.filter_judge_confident;
    // auto needs the candidates only when the LLM is consulted, but that is known after the scan.
    fo.collect_candidates = engine.is_auto() || engine.use_llm();
    auto fr = tracker::ScanLogWithEmbeddingFilter(*fs.embedder, exemplars, o.file, fo, sink);
    if (!fr.ok()) Fail(fr.status());
    filter_status = fr->filter_status;
    scan.filter_label = tracker::FilterLabel(filter_status, fr->embedder_name);
    scan.filter_report = fr->report;
    if (o.filter_explain) {
      for (const tracker::TemplateStats& t : fr->templates) {
        auto it = fr->labels.find(t.key);
        scan.filter_templates.push_back(
            tracker::TemplateToJson(t, it != fr->labels.end() ? &it->second : nullptr));
      }
    }
    candidates = std::move(fr->candidates);
    scan.res = std::move(fr->scan);
  } else {
    scan.filter_label = tracker::FilterLabel(filter_status, "");
  }
  if (!filter_status.ok()) {
    std::cerr << "schedmate: warning: logs metrics: the embeddings filter failed ("
              << filter_status.message() << "); using the built-in filter\n";
  }
  auto& res = scan.res;
  if (res.ok() && res->latest) scan.builtin_confidence = res->latest->confidence;
  const bool ask = res.ok() && (res->latest ? engine.Consult(res->latest->confidence)
                                            : !engine.is_auto() && engine.use_llm());
  if (!ask) return;
  tracker::LlmMetricExtractor extractor(engine.setup()->chat());
  auto lr = extractor.FindLatest(candidates);
  if (lr.ok()) {
    res->latest = std::move(lr->latest);
  } else {
    engine.Fallback(lr.status(), "logs metrics");
  }
}

// The built-in filter: with --engine llm the LLM reads the newest lines; with --engine auto the
// built-in answer stands unless it is unsure, and then the LLM reads the newest built-in progress
// lines (a second pass over the whole file collects them; the series was already streamed to
// `sink`).
void ScanWithBuiltinFilter(const MetricsOptions& o, const tracker::ScanOptions& so,
                           const RecordSink& sink, EngineContext& engine, MetricsScan& scan) {
  if (!scan.res.ok() && !engine.is_auto() && engine.use_llm()) {
    auto lr = tracker::ScanLogWithLlm(engine.setup()->chat(), o.file, so, {}, sink);
    if (!lr.ok()) Fail(lr.status());
    if (!lr->llm_status.ok()) engine.Fallback(lr->llm_status, "logs metrics");
    scan.builtin_confidence = lr->builtin_confidence;
    scan.res = std::move(lr->scan);
  }
  if (scan.res.ok()) return;
  auto& res = scan.res;
  res = tracker::ScanLog(o.file, so, sink);
  if (res.ok() && res->latest) scan.builtin_confidence = res->latest->confidence;
  if (res.ok() && res->latest && engine.is_auto() && engine.Consult(*scan.builtin_confidence)) {
    auto lr = tracker::ScanLogWithLlm(engine.setup()->chat(), o.file, so, {}, {});
    if (!lr.ok()) Fail(lr.status());
    if (!lr->llm_status.ok()) {
      engine.Fallback(lr->llm_status, "logs metrics");
    } else {
      res = std::move(lr->scan);
    }
  }
}

void PrintMetricsJson(const MetricsOptions& o, const MetricsScan& scan,
                      const EngineContext& engine) {
  const tracker::ScanResult& r = *scan.res;
  nlohmann::json j;
  if (r.latest) {
    j = RecordToJson(*r.latest);
    j["progress"] = NumberOrNull(r.signals.progress);
    j["signals"] = SignalsToJson(r.signals);
  } else {
    j = tracker::NoRecordJson();
  }
  j["stats"] = tracker::StatsToJson(r.stats);
  j["reverse_scan"] = r.reverse;
  j["engine"] = engine.engine();
  const bool llm_answered = engine.engine().rfind("llm", 0) == 0;
  j["confidence"] = scan.builtin_confidence
                        ? nlohmann::json(RoundedConfidence(*scan.builtin_confidence))
                        : nlohmann::json(nullptr);
  if (!r.latest || llm_answered) {
    j["field_confidence"] = nullptr;
    j["confidence_evidence"] = nullptr;
  } else {
    j["confidence_evidence"] = tracker::EvidenceToJson(r.latest->evidence);
  }
  j["filter"] = scan.filter_label;
  if (scan.filter_report) j["filter_stats"] = tracker::FilterReportToJson(*scan.filter_report);
  if (o.filter_explain) j["filter_templates"] = scan.filter_templates;
  PrintJson(j);
}

void PrintMetricsText(const MetricsOptions& o, const MetricsScan& scan,
                      const EngineContext& engine) {
  const tracker::ScanResult& r = *scan.res;
  std::cout << o.file << ": ";
  if (!r.latest) {
    std::cout << "no training progress found (" << r.stats.reader.lines << " lines"
              << (o.filter != "builtin" ? "; filter: " + scan.filter_label : "") << ")\n";
    return;
  }
  std::cout << "latest training progress\n  " << RecordText(*r.latest) << "\n  "
            << r.latest->segment.substr(0, 200) << "\n";
  const Signals& s = r.signals;
  std::cout << "  format: " << r.latest->format;
  if (scan.builtin_confidence) {
    std::cout << "  confidence: " << Fmt(RoundedConfidence(*scan.builtin_confidence));
  }
  std::cout << "  engine: " << engine.engine();
  if (s.progress) std::cout << "  progress: " << Fmt(100 * *s.progress) << "%";
  if (s.eta_s)
    std::cout << "  eta: " << Fmt(*s.eta_s) << " s" << (s.eta_derived ? " (derived)" : "");
  std::cout << "\n  signals: slowdown=" << (s.slowdown ? "yes" : "no")
            << " stalled=" << (s.stalled ? "yes" : "no")
            << " loss_nan=" << (s.loss_nan ? "yes" : "no")
            << " loss_exploding=" << (s.loss_exploding ? "yes" : "no") << " restarts=" << s.restarts
            << " records=" << s.records << "\n";
  if (o.filter != "builtin") std::cout << "  filter: " << scan.filter_label << "\n";
}

void RunMetrics(const MetricsOptions& o) {
  tracker::ScanOptions so;
  so.allow_reverse = !o.full_scan;
  so.count_line_numbers = !o.no_line_count;
  so.line_index_dir = tracker::DefaultLineIndexDir();
  so.signals.stall_factor = o.stall_factor;
  so.signals.slowdown_share = o.slowdown_share;
  if (o.follow) {
    RunFollow(o, so.signals);
    return;
  }
  // The series is streamed (--all) and reduced to plot points (--plot): nothing grows with the log
  // beyond the points themselves.
  PlotData plot_data;
  size_t emitted = 0;
  RecordSink sink;
  if (o.all || !o.plot.empty()) {
    sink = [&](const ProgressRecord& rec) {
      if (!o.plot.empty()) plot_data.Add(rec);
      if (!o.all) return;
      if (o.json) {
        std::cout << (emitted == 0 ? "[\n" : ",\n") << DumpJson(RecordToJson(rec));
      } else {
        std::cout << RecordText(rec) << "\n";
      }
      ++emitted;
    };
  }
  std::unique_ptr<EngineContext> engine = EngineContext::Resolve(o.all ? EngineFlags{} : o.engine);
  MetricsScan scan;
  if (o.filter == "embeddings") ScanWithEmbeddings(o, so, sink, *engine, scan);
  ScanWithBuiltinFilter(o, so, sink, *engine, scan);
  if (!scan.res.ok()) Fail(scan.res.status());
  if (o.all && o.json) std::cout << (emitted == 0 ? "[]\n" : "\n]\n");
  if (!o.plot.empty()) {
    Status st = WritePlot(std::move(plot_data), o.plot, o.file);
    if (!st.ok()) Fail(st);
  }
  if (o.all) return;
  if (o.json) {
    PrintMetricsJson(o, scan, *engine);
  } else {
    PrintMetricsText(o, scan, *engine);
  }
}

}  // namespace

void RegisterLogsCommands(CLI::App& app) {
  CLI::App* logs = AddCommandGroup(app, "logs", "Analyse training job logs (Metric Tracker)");
  auto [m, o] = AddCommand<MetricsOptions>(
      *logs, "metrics",
      "Latest training progress (step, epoch, loss, step time, throughput, ETA) of a log",
      [](const MetricsOptions& flags) {
        if (flags.follow && flags.filter != "builtin") {
          FailUsage("--filter embeddings needs the whole log first; it does not apply to --follow");
        }
        RunMetrics(flags);
      });
  m->add_option("file", o->file, "Log file to read")->required();
  AddJsonFlag(m, o->json, "Print JSON (one object; with --all an array; with --follow JSON lines)");
  m->add_flag("--all", o->all, "Print every training-progress record, not only the latest");
  m->add_flag("--follow", o->follow,
              "Follow the file like tail -F and stream new records until interrupted");
  AddPlotFlag(m, o->plot, "loss and throughput against step");
  m->add_option("--stall-factor", o->stall_factor,
                "Stalled after this many usual record intervals without progress")
      ->check(PositiveFinite(1e6))
      ->capture_default_str();
  m->add_option("--slowdown-share", o->slowdown_share,
                "Slowdown when step time rises by this share over the job's baseline")
      ->check(PositiveFinite(1e6))
      ->capture_default_str();
  m->add_option("--poll-ms", o->poll_ms, "Follow mode: polling interval in milliseconds")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  m->add_option("--idle-exit", o->idle_exit_s,
                "Follow mode: stop after this many seconds without new data (0 = never)")
      ->check(FiniteRange(0, 1e9))
      ->capture_default_str();
  m->add_flag("--from-end", o->from_end, "Follow mode: skip the existing content (tail -n 0 -F)");
  m->add_flag("--full-scan", o->full_scan,
              "Read the whole file even when it is large (default: reverse scan of the tail for "
              "files over 8 MiB; full statistics need a full scan)");
  m->add_flag("--no-line-count", o->no_line_count,
              "Reverse scan: do not count the lines before the tail window (line_no is then -1). "
              "Counts of large files are checkpointed under $SCHEDMATE_CACHE_DIR (or "
              "~/.cache/schedmate) so later calls only count what was appended");
  AddEngineFlags(m, o->engine);
  m->add_option("--filter", o->filter,
                "Stage 1, which lines are training progress: builtin (default: the built-in "
                "classifier) or embeddings (the log's line shapes embedded and labelled by their "
                "nearest exemplars; falls back to builtin on any failure and says so)")
      ->check(CLI::IsMember({"builtin", "embeddings"}))
      ->capture_default_str();
  m->add_option("--filter-embedder", o->filter_embedder,
                "Where --filter embeddings gets vectors: server (the configured /v1/embeddings "
                "model: SCHEDMATE_EMBED_MODEL / embeddings: in --llm-config) or hashing (built-in "
                "hashed features, no server)")
      ->check(CLI::IsMember({"server", "hashing"}))
      ->capture_default_str();
  m->add_option("--exemplars", o->exemplars,
                "Extra labelled exemplars for --filter embeddings ('progress|other LINE' per line, "
                "the format of config/tracker_exemplars.txt)");
  m->add_option("--filter-max-templates", o->filter_max_templates,
                "--filter embeddings: at most this many line templates embedded per run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  m->add_option("--filter-batch", o->filter_batch,
                "--filter embeddings: texts per embedding request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  m->add_flag("--filter-judge-all", o->filter_judge_confident,
              "--filter embeddings: also relabel the templates the built-in classifier is sure "
              "about (by their neighbours, leaving themselves out); default: they keep the "
              "built-in label and serve as exemplars");
  m->add_flag("--filter-explain", o->filter_explain,
              "--filter embeddings with --json: list every template with its label, scores and "
              "nearest exemplar (\"filter_templates\")");
}

}  // namespace schedmate::cli
