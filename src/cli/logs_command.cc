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

namespace schedmate::cli {
namespace {

using tracker::ProgressRecord;
using tracker::Signals;

std::atomic<bool> g_stop{false};
extern "C" void HandleStopSignal(int) { g_stop.store(true); }

nlohmann::json Num(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return *v;
}
template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  if (!v) return nullptr;
  return *v;
}

// A confidence to three decimals (what a reader compares; the value itself is deterministic).
double Rounded(double c) { return std::round(c * 1000) / 1000; }

nlohmann::json RecordJson(const ProgressRecord& r) {
  const auto& v = r.v;
  nlohmann::json j;
  j["found"] = true;
  j["line_no"] = r.line_no;
  j["line"] = r.line;
  j["segment"] = r.segment;
  j["step"] = Opt(v.step);
  j["total_steps"] = Opt(v.total_steps);
  j["epoch"] = Num(v.epoch);
  j["total_epochs"] = Opt(v.total_epochs);
  j["loss"] = Num(v.loss);
  if (v.losses.empty()) {
    j["losses"] = nullptr;
  } else {
    nlohmann::json l = nlohmann::json::object();
    for (const auto& [k, x] : v.losses) l[k] = Num(x);
    j["losses"] = l;
  }
  j["lr"] = Num(v.lr);
  j["step_time_s"] = Num(v.step_time_s);
  j["step_time_derived"] = v.step_time_derived;
  if (v.throughput) {
    j["throughput"] = {{"value", v.throughput->value}, {"unit", v.throughput->unit}};
  } else {
    j["throughput"] = nullptr;
  }
  j["eta_s"] = Num(v.eta_s);
  j["eta"] = v.eta_s ? nlohmann::json(v.eta_text) : nlohmann::json(nullptr);
  j["percent"] = Num(v.percent);
  j["format"] = r.format;
  j["run"] = r.run;
  j["rank"] = r.rank >= 0 ? nlohmann::json(r.rank) : nlohmann::json(nullptr);
  j["timestamp_s"] = r.timestamp_s >= 0 ? nlohmann::json(r.timestamp_s) : nlohmann::json(nullptr);
  j["confidence"] = Rounded(r.confidence);
  const tracker::FieldConfidence f = tracker::FieldConfidenceOf(r.evidence, v);
  auto group = [](const std::optional<double>& c) {
    return c ? nlohmann::json(Rounded(*c)) : nlohmann::json(nullptr);
  };
  j["field_confidence"] = {{"counter", group(f.counter)},
                           {"totals", group(f.totals)},
                           {"loss", group(f.loss)},
                           {"timing", group(f.timing)}};
  return j;
}

// The evidence behind a built-in record's confidence (tracker/record_confidence.h).
nlohmann::json EvidenceJson(const tracker::ConfidenceEvidence& e) {
  static constexpr const char* kCounter[] = {"own", "epoch from context", "none"};
  static constexpr const char* kCue[] = {"clear", "unjudged", "weak"};
  static constexpr const char* kReader[] = {"structure", "key=value", "positional", "key: value"};
  nlohmann::json completed = nlohmann::json::array();
  const std::pair<uint8_t, const char*> kGroups[] = {
      {tracker::kCompletedEpoch, "epoch"},
      {tracker::kCompletedLoss, "loss"},
      {tracker::kCompletedTiming, "timing"},
      {tracker::kCompletedTotalSteps, "total_steps"},
      {tracker::kCompletedTotalEpochs, "total_epochs"}};
  for (const auto& [bit, name] : kGroups) {
    if (e.completed & bit) completed.push_back(name);
  }
  return {{"template_records", e.template_records},
          {"monotone_share", Rounded(e.monotone_share)},
          {"counter", kCounter[static_cast<int>(e.counter)]},
          {"train_cue", kCue[static_cast<int>(e.cue)]},
          {"reader", kReader[static_cast<int>(e.reader)]},
          {"completed_from_elsewhere", completed}};
}

nlohmann::json SignalsJson(const Signals& s) {
  return {{"progress", Num(s.progress)},
          {"eta_s", Num(s.eta_s)},
          {"eta_derived", s.eta_derived},
          {"baseline_step_time_s", Num(s.baseline_step_time_s)},
          {"recent_step_time_s", Num(s.recent_step_time_s)},
          {"throughput_trend", Num(s.throughput_trend)},
          {"slowdown", s.slowdown},
          {"usual_interval_s", Num(s.usual_interval_s)},
          {"since_last_progress_s", Num(s.since_last_progress_s)},
          {"stalled", s.stalled},
          {"loss_nan", s.loss_nan},
          {"loss_exploding", s.loss_exploding},
          {"min_loss", Num(s.min_loss)},
          {"records", s.records},
          {"restarts", s.restarts}};
}

nlohmann::json StatsJson(const tracker::TrackerStats& st) {
  nlohmann::json classes = nlohmann::json::object();
  for (int c = 0; c < tracker::kLineClassCount; ++c) {
    classes[std::string(tracker::LineClassName(static_cast<tracker::LineClass>(c)))] =
        st.by_class[c];
  }
  return {{"lines", st.reader.lines},
          {"segments", st.segments},
          {"records", st.records},
          {"eval_segments", st.eval_segments},
          {"restarts", st.restarts},
          {"other_rank_segments", st.other_rank_segments},
          {"classes", classes},
          {"invalid_utf8_bytes", st.reader.invalid_utf8_bytes},
          {"control_bytes", st.reader.control_bytes},
          {"ansi_sequences", st.reader.ansi_sequences},
          {"binary_lines_skipped", st.reader.binary_lines_skipped},
          {"truncated_lines", st.reader.truncated_lines}};
}

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

nlohmann::json FilterStatsJson(const tracker::FilterReport& r) {
  return {{"requests", r.requests},
          {"texts_embedded", r.texts_embedded},
          {"templates", r.templates},
          {"templates_embedded", r.templates_embedded},
          {"self_labels", r.self_labels},
          {"decided_by_embeddings", r.decided},
          {"labelled_progress", r.labelled_progress},
          {"labelled_other", r.labelled_other},
          {"unsure", r.unsure},
          {"dimension", r.dimension},
          {"vetoed_segments", r.vetoed_segments},
          {"promoted_segments", r.promoted_segments}};
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
      nlohmann::json j = RecordJson(r);
      j["signals"] = SignalsJson(analyzer.Compute(r, clock.Now().seconds_f()));
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
  std::function<void(const ProgressRecord&)> sink;
  if (o.all || !o.plot.empty()) {
    sink = [&](const ProgressRecord& rec) {
      if (!o.plot.empty()) plot_data.Add(rec);
      if (!o.all) return;
      if (o.json) {
        std::cout << (emitted == 0 ? "[\n" : ",\n") << DumpJson(RecordJson(rec));
      } else {
        std::cout << RecordText(rec) << "\n";
      }
      ++emitted;
    };
  }
  std::unique_ptr<EngineContext> engine = EngineContext::Resolve(o.all ? EngineFlags{} : o.engine);
  Result<tracker::ScanResult> res = Status::Unavailable("not scanned");
  std::optional<double> builtin_confidence;  // of the built-in engine's newest record
  std::string filter_label = "builtin";
  std::optional<tracker::FilterReport> filter_report;
  nlohmann::json filter_templates = nlohmann::json::array();
  if (o.filter == "embeddings") {
    std::vector<tracker::Exemplar> exemplars = tracker::BuiltinExemplars();
    if (!o.exemplars.empty()) {
      auto text = ReadTextFileToString(o.exemplars, size_t{64} << 20);
      if (!text.ok()) Fail(text.status());
      if (Status st = CheckExemplarText(*text, o.exemplars); !st.ok()) Fail(st);
      auto extra = tracker::ParseExemplars(*text, o.exemplars);
      if (!extra.ok()) Fail(extra.status());
      exemplars.insert(exemplars.end(), extra->begin(), extra->end());
    }
    FilterSetup fs = MakeFilterEmbedder(o, *engine);
    Status filter_status = fs.unavailable;
    std::vector<ProgressRecord> candidates;
    if (fs.embedder) {
      tracker::FilteredScanOptions fo;
      fo.scan = so;
      fo.filter.max_templates = o.filter_max_templates;
      fo.filter.batch = o.filter_batch;
      fo.filter.judge_confident = o.filter_judge_confident;
      // auto needs the candidates only when the LLM is consulted, but that is known after the scan.
      fo.collect_candidates = engine->is_auto() || engine->use_llm();
      auto fr = tracker::ScanLogWithEmbeddingFilter(*fs.embedder, exemplars, o.file, fo, sink);
      if (!fr.ok()) Fail(fr.status());
      filter_status = fr->filter_status;
      filter_label = tracker::FilterLabel(filter_status, fr->embedder_name);
      filter_report = fr->report;
      for (const tracker::TemplateStats& t : fr->templates) {
        if (!o.filter_explain) break;
        auto it = fr->labels.find(t.key);
        nlohmann::json e = {{"template", t.family},
                            {"shape", t.shape},
                            {"lines", t.lines},
                            {"builtin_progress_lines", t.progress_lines},
                            {"last_line", t.last_line}};
        if (it != fr->labels.end()) {
          e["label"] = it->second.progress ? "progress" : "other";
          e["by"] = it->second.decided_by_embeddings ? "embeddings" : "builtin (unsure)";
          e["score_progress"] = it->second.score_progress;
          e["score_other"] = it->second.score_other;
          e["nearest"] = it->second.nearest;
        } else {
          e["label"] = nullptr;
        }
        filter_templates.push_back(std::move(e));
      }
      candidates = std::move(fr->candidates);
      res = std::move(fr->scan);
    } else {
      filter_label = tracker::FilterLabel(filter_status, "");
    }
    if (!filter_status.ok()) {
      std::cerr << "schedmate: warning: logs metrics: the embeddings filter failed ("
                << filter_status.message() << "); using the built-in filter\n";
    }
    if (res.ok() && res->latest) builtin_confidence = res->latest->confidence;
    const bool ask = res.ok() && (res->latest ? engine->Consult(res->latest->confidence)
                                              : !engine->is_auto() && engine->use_llm());
    if (ask) {
      // Stage 2 over the lines the filter kept (the built-in filter's after a filter failure),
      // newest first with early stop.
      tracker::LlmMetricExtractor extractor(engine->setup()->chat());
      auto lr = extractor.FindLatest(candidates);
      if (lr.ok()) {
        res->latest = std::move(lr->latest);
      } else {
        engine->Fallback(lr.status(), "logs metrics");
      }
    }
    // A failed filter leaves `res` unset under --engine llm: the built-in-filter path below runs.
  }
  if (!res.ok() && !engine->is_auto() && engine->use_llm()) {
    // Built-in filter, then the LLM reads the newest lines.
    auto lr = tracker::ScanLogWithLlm(engine->setup()->chat(), o.file, so, {}, sink);
    if (!lr.ok()) Fail(lr.status());
    if (!lr->llm_status.ok()) engine->Fallback(lr->llm_status, "logs metrics");
    builtin_confidence = lr->builtin_confidence;
    res = std::move(lr->scan);
  }
  if (!res.ok()) {
    res = tracker::ScanLog(o.file, so, sink);
    if (res.ok() && res->latest) builtin_confidence = res->latest->confidence;
    // --engine auto: the built-in answer stands unless it is unsure; then the LLM reads the
    // newest built-in progress lines (a second pass over the whole file collects them; the
    // series was already streamed to `sink`).
    if (res.ok() && res->latest && engine->is_auto() && engine->Consult(*builtin_confidence)) {
      auto lr = tracker::ScanLogWithLlm(engine->setup()->chat(), o.file, so, {}, {});
      if (!lr.ok()) Fail(lr.status());
      if (!lr->llm_status.ok()) {
        engine->Fallback(lr->llm_status, "logs metrics");
      } else {
        res = std::move(lr->scan);
      }
    }
  }
  if (!res.ok()) Fail(res.status());
  const tracker::ScanResult& r = *res;
  if (o.all && o.json) std::cout << (emitted == 0 ? "[]\n" : "\n]\n");
  if (!o.plot.empty()) {
    Status st = WritePlot(std::move(plot_data), o.plot, o.file);
    if (!st.ok()) Fail(st);
  }
  if (o.all) return;
  if (o.json) {
    nlohmann::json j;
    if (r.latest) {
      j = RecordJson(*r.latest);
      j["progress"] = Num(r.signals.progress);
      j["signals"] = SignalsJson(r.signals);
    } else {
      j = {{"found", false},          {"line_no", nullptr},     {"line", nullptr},
           {"step", nullptr},         {"total_steps", nullptr}, {"epoch", nullptr},
           {"total_epochs", nullptr}, {"loss", nullptr},        {"losses", nullptr},
           {"lr", nullptr},           {"step_time_s", nullptr}, {"throughput", nullptr},
           {"eta_s", nullptr},        {"format", nullptr}};
    }
    j["stats"] = StatsJson(r.stats);
    j["reverse_scan"] = r.reverse;
    j["engine"] = engine->engine();
    const bool llm_answered = engine->engine().rfind("llm", 0) == 0;
    j["confidence"] =
        builtin_confidence ? nlohmann::json(Rounded(*builtin_confidence)) : nlohmann::json(nullptr);
    if (!r.latest || llm_answered) {
      j["field_confidence"] = nullptr;
      j["confidence_evidence"] = nullptr;
    } else {
      j["confidence_evidence"] = EvidenceJson(r.latest->evidence);
    }
    j["filter"] = filter_label;
    if (filter_report) j["filter_stats"] = FilterStatsJson(*filter_report);
    if (o.filter_explain) j["filter_templates"] = filter_templates;
    PrintJson(j);
    return;
  }
  std::cout << o.file << ": ";
  if (!r.latest) {
    std::cout << "no training progress found (" << r.stats.reader.lines << " lines"
              << (o.filter != "builtin" ? "; filter: " + filter_label : "") << ")\n";
    return;
  }
  std::cout << "latest training progress\n  " << RecordText(*r.latest) << "\n  "
            << r.latest->segment.substr(0, 200) << "\n";
  const Signals& s = r.signals;
  std::cout << "  format: " << r.latest->format;
  if (builtin_confidence) std::cout << "  confidence: " << Fmt(Rounded(*builtin_confidence));
  std::cout << "  engine: " << engine->engine();
  if (s.progress) std::cout << "  progress: " << Fmt(100 * *s.progress) << "%";
  if (s.eta_s)
    std::cout << "  eta: " << Fmt(*s.eta_s) << " s" << (s.eta_derived ? " (derived)" : "");
  std::cout << "\n  signals: slowdown=" << (s.slowdown ? "yes" : "no")
            << " stalled=" << (s.stalled ? "yes" : "no")
            << " loss_nan=" << (s.loss_nan ? "yes" : "no")
            << " loss_exploding=" << (s.loss_exploding ? "yes" : "no") << " restarts=" << s.restarts
            << " records=" << s.records << "\n";
  if (o.filter != "builtin") std::cout << "  filter: " << filter_label << "\n";
}

}  // namespace

void RegisterLogsCommands(CLI::App& app) {
  auto* logs = app.add_subcommand("logs", "Analyse training job logs (Metric Tracker)");
  logs->require_subcommand(1);
  auto o = std::make_shared<MetricsOptions>();
  auto* m = logs->add_subcommand(
      "metrics",
      "Latest training progress (step, epoch, loss, step time, throughput, ETA) of a log");
  m->add_option("file", o->file, "Log file to read")->required();
  m->add_flag("--json", o->json,
              "Print JSON (one object; with --all an array; with --follow JSON lines)");
  m->add_flag("--all", o->all, "Print every training-progress record, not only the latest");
  m->add_flag("--follow", o->follow,
              "Follow the file like tail -F and stream new records until interrupted");
  m->add_option("--plot", o->plot, "Write loss and throughput against step to this .svg/.png");
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
  m->callback([o]() {
    if (o->follow && o->filter != "builtin") {
      FailUsage("--filter embeddings needs the whole log first; it does not apply to --follow");
    }
    RunMetrics(*o);
  });
}

}  // namespace schedmate::cli
