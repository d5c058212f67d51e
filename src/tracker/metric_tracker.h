#pragma once
// MetricTracker: turns a stream of log lines into training-progress records and keeps the
// latest one. It owns record assembly, which a single line cannot decide:
//  * multi-line records: an epoch header ("Epoch 12/15", "epoch 270") gives context to the
//    lines below it; indented "key=value" lines continue the record above; metric-only lines
//    ("Timer: 0.67") fill missing values of the nearest record without crossing another one;
//  * evaluation vs training: eval-tagged lines, eval phases ("Running Evaluation" ... until a
//    known training format returns) and progress bars directly followed by eval output are not
//    training progress;
//  * run/epoch summaries (train_runtime, train_* aggregates) update context but are not records;
//  * restarts: counters going back start a new run (epoch roll-over of per-epoch bars is not one);
//  * run-level totals (total epochs) printed anywhere complete the latest record at Finish().
// Records are emitted in line order after a small look-ahead window (`window` lines).
//
// Thread-safety: none; one tracker per log.

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tracker/line_classifier.h"
#include "tracker/line_formats.h"
#include "tracker/line_parser.h"
#include "tracker/log_reader.h"
#include "tracker/metric_extractor.h"
#include "tracker/progress_record.h"

namespace schedmate::tracker {

struct TrackerOptions {
  int window = 6;                 // look-ahead / satellite distance in lines
  size_t max_stored_line = 8192;  // bytes of the physical line kept in a record
  ReaderOptions reader;
};

struct TrackerStats {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t eval_segments = 0;
  uint64_t restarts = 0;
  uint64_t other_rank_segments = 0;  // progress of non-primary ranks (ignored)
  uint64_t by_class[kLineClassCount] = {0, 0, 0, 0, 0};
  ReaderStats reader;
};

class MetricTracker {
 public:
  using Sink = std::function<void(const ProgressRecord&)>;
  // Sees every classified segment (after the rank prefix is stripped): the parse, the values,
  // the classifier's decision, the line number (of the opening line for a multi-line JSON
  // object), its offset and the physical line. For censuses and filters; must not call back.
  using SegmentObserver =
      std::function<void(const ParsedSegment&, const ExtractedValues&, const LineKind&,
                         int64_t line_no, uint64_t offset, std::string_view physical)>;

  // `classifier` and `extractor` must outlive the tracker.
  MetricTracker(LineClassifier& classifier, MetricExtractor& extractor,
                TrackerOptions options = {});

  // Called with every training record, in line order (after the look-ahead window).
  void SetSink(Sink sink) { sink_ = std::move(sink); }
  void SetSegmentObserver(SegmentObserver observer) { observer_ = std::move(observer); }

  // Feeds one physical line (raw bytes, without '\n'). `line_no` is 1-based; `wall_time_s` is
  // the time the line was seen (follow mode) or < 0. A line may be fed in several pieces with the
  // same line_no (follow mode reports '\r' states as they arrive).
  void AddLine(std::string_view raw, int64_t line_no, uint64_t offset, double wall_time_s = -1);
  // Processes everything still pending; completes the latest record with run-level totals.
  void Finish();
  // Follow mode: emits every pending record now (no more look-ahead for them).
  void FlushPending();

  const std::optional<ProgressRecord>& Latest() const { return latest_; }
  const TrackerStats& stats() const { return stats_; }
  const LineParser& parser() const { return parser_; }
  // Latest timestamp printed on any line (or wall time given to AddLine), -1 when none.
  double LastTimestamp() const { return last_timestamp_; }

 private:
  struct Pending {
    ProgressRecord rec;
    bool needs_lookahead = false;  // a bar: confirmed unless the next line is eval output
    bool header_only = false;      // step header waiting for indented metrics
    int64_t last_line = 0;         // anchor or its last continuation line
    bool dropped = false;
    bool own_counter = true;     // the line printed its own counter
    uint8_t printed_groups = 0;  // CompletedFrom bits of the value groups the line printed
  };
  struct Satellite {
    int64_t line_no;
    ExtractedValues v;
  };

  void ProcessSegment(std::string_view seg, std::string_view physical, int64_t line_no,
                      uint64_t offset, bool first_segment, double wall_time_s);
  // A parsed and classified segment on its way to record assembly (ps_ and vals_ hold its parse
  // and values).
  struct SegmentContext {
    std::string_view physical;  // the physical line
    std::string_view printed;   // the segment as printed, without its rank prefix
    int64_t line_no = 0;
    uint64_t offset = 0;
    int rank = -1;   // "[rank0]:" prefix, -1 when none
    double ts = -1;  // its timestamp (or the wall time in follow mode)
    LineKind k;
  };
  // Strips the rank prefix, reads table rows and positional formats, parses into ps_; returns
  // the segment as printed.
  std::string_view ParseSegment(std::string_view seg, int& rank);
  // An indented line that fills the record just above ("    train/loss=2.95"): consumed.
  bool ContinuesRecord(const LineKind& k, int64_t line_no);
  void OnEvalSegment(int64_t line_no);
  void OnSummary(int64_t line_no);
  void OnEpochHeader(const LineKind& k, int64_t line_no);
  // A line with its own counter (or a bar state, or a step header): a record unless it is eval
  // output, an epoch's closing line or a message in a format that never carried progress.
  void OnProgress(const SegmentContext& c);
  bool IsProgressMessage(const LineKind& k);
  // A bar state that starts another loop confirms the earlier bar states waiting for look-ahead.
  void EndEarlierBarLoops(int64_t line_no);
  // Training metrics without a counter: satellites of a record, or records of their own when no
  // line carries a counter.
  void OnMetricOnly(const SegmentContext& c);
  Pending MakePending(const SegmentContext& c, bool own_counter) const;
  bool KnownTrainingFamily(int family) const;
  void ResolveLookahead(bool eval_follows);
  // The epoch a line announces becomes the context of the lines below it.
  void OpenEpoch(const ExtractedValues& v);
  void Confirm(Pending& p);
  void FinalizeReady(int64_t current_line, bool all);
  void Finalize(Pending& p);
  void FillFromSatellites(ProgressRecord& rec);
  static std::string FormatName(const ParsedSegment& seg);
  static ValueReader ReaderOf(const ParsedSegment& seg);
  // Fills the record's confidence evidence (template support, counter monotonicity, completions)
  // and its confidence; called once per emitted record, in line order.
  void AssessConfidence(Pending& p);
  bool IsRestart(const ExtractedValues& v, std::optional<double> eff_epoch) const;

  LineClassifier& classifier_;
  MetricExtractor& extractor_;
  TrackerOptions options_;
  LineParser parser_;
  ParsedSegment ps_;
  ExtractedValues vals_;
  std::string scratch_;
  std::vector<std::string_view> segments_;
  Sink sink_;
  SegmentObserver observer_;

  std::deque<Pending> pending_;
  // A summary of the bar states waiting for their look-ahead, so that a new bar state scans
  // pending_ only when it can end one of them (one bar loop of many lines stays linear). Every
  // waiting state has `total`; `max_step_*` bound their steps, split by line because a state of
  // the same line never ends another one by its step. Conservative: states resolved since they
  // were added may still be counted.
  struct WaitingBars {
    bool any = false;
    std::optional<int64_t> total;
    int64_t line = 0;                         // the line of the newest states
    std::optional<int64_t> max_step_before;   // states of earlier lines
    std::optional<int64_t> max_step_on_line;  // states of `line`
    // Whether a bar state (total, step) on `line_no` may end a waiting state.
    bool MayEnd(const std::optional<int64_t>& total, const std::optional<int64_t>& step,
                int64_t line_no) const;
    void Add(const std::optional<int64_t>& total, const std::optional<int64_t>& step,
             int64_t line_no);
    void Clear() { any = false; }
  };
  WaitingBars waiting_bars_;
  std::deque<Satellite> satellites_;
  std::deque<int64_t> anchor_lines_;
  std::unordered_set<int> training_families_;

  // Context.
  std::optional<double> ctx_epoch_;
  bool ctx_epoch_fractional_ = false;
  std::optional<int64_t> ctx_total_epochs_;
  std::optional<int64_t> run_total_epochs_;  // any "epoch e/E" seen, including eval headers
  std::optional<int64_t> run_total_steps_;   // a configured total ("Total optimization steps")
  // Lines with a training loss but no counter, per template family, while no line of the log
  // has carried a counter: a family seen twice makes such lines records of their own.
  std::unordered_map<int, int> counterless_families_;
  bool seen_counter_ = false;  // a training line with a step or epoch counter was seen
  bool finishing_ = false;     // inside Finish(): the log has no more lines
  // (step, total) of bar states confirmed as training, to recognise a redraw of one.
  static uint64_t BarState(const ExtractedValues& v) {
    uint64_t h = static_cast<uint64_t>(v.step.value_or(-1)) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(v.total_steps.value_or(-1)) + 0x7F4A7C159E3779B9ull + (h << 6);
    if (v.loss) h ^= std::hash<double>()(*v.loss) + (h << 6) + (h >> 2);
    return h;
  }
  std::unordered_set<uint64_t> confirmed_bar_states_;
  // The epoch a summary or evaluation-results line printed, and where: it completes a latest
  // record without an epoch that came before it.
  struct LateEpoch {
    int64_t line_no;
    double epoch;
    bool summary;  // from a run summary (else evaluation results)
  };
  std::optional<LateEpoch> late_epoch_;
  bool eval_mode_ = false;
  bool seen_anchor_ = false;
  int run_ = 0;
  int primary_rank_ = -1;  // rank whose progress is tracked when lines carry rank prefixes
  // Last confirmed record's own counters (restart detection).
  std::optional<int64_t> last_step_;
  std::optional<int64_t> last_total_steps_;
  std::optional<double> last_epoch_;
  int64_t last_line_no_ = 0;

  void FlushJson(double wall_time_s);
  bool json_open_ = false;  // inside a JSON object spanning lines
  std::string json_buffer_;
  int json_lines_ = 0;
  int64_t json_line_no_ = 0;
  uint64_t json_offset_ = 0;
  std::vector<std::string> table_columns_;  // last table header ("Epoch GPU_mem box_loss ...")
  std::string table_row_;                   // a table row rewritten as key=value
  FormatMatcher formats_{LineFormats::Builtin()};  // positional formats (tracker_formats.yaml)
  std::string format_row_;                         // a line of such a format as key=value
  bool last_complete_ = false;                     // the last record finished the final epoch
  std::optional<ProgressRecord> latest_;
  // Confidence evidence across records: emitted records per template family, and the decayed
  // counts of consecutive counter pairs (all, and those whose counter did not go back).
  std::unordered_map<int, int64_t> family_records_;
  struct CounterMark {
    std::optional<double> epoch;
    std::optional<int64_t> step;
    std::optional<int64_t> total_steps;
    int run = 0;
  };
  std::optional<CounterMark> last_counter_;
  double counter_pairs_ = 0;
  double counter_pairs_forward_ = 0;
  double last_timestamp_ = -1;
  TrackerStats stats_;
};

// Derives total epochs when the epoch is fractional (HF style: epoch == steps / steps-per-epoch)
// and the record also has step and total steps: epoch * total / step, when that is within 2% of
// an integer.
std::optional<int64_t> DeriveTotalEpochs(const ExtractedValues& v);

}  // namespace schedmate::tracker
