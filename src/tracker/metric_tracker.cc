#include "tracker/metric_tracker.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedmate::tracker {
namespace {

inline bool IsDigitC(char c) { return c >= '0' && c <= '9'; }

// Strips a per-rank stream prefix ("[rank0]:", "[rank 3]:", "rank1: ", "0: ") from the start of
// a segment and returns the rank, or -1.
std::string_view StripRankPrefix(std::string_view s, int& rank) {
  rank = -1;
  auto lower_eq = [](std::string_view a, std::string_view b) {
    if (a.size() < b.size()) return false;
    for (size_t i = 0; i < b.size(); ++i) {
      char c = a[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      if (c != b[i]) return false;
    }
    return true;
  };
  size_t i = 0;
  bool bracket = false;
  if (i < s.size() && s[i] == '[') {
    bracket = true;
    ++i;
  }
  if (lower_eq(s.substr(i), "rank")) {
    size_t j = i + 4;
    if (j < s.size() && s[j] == ' ') ++j;
    size_t d0 = j;
    int r = 0;
    while (j < s.size() && IsDigitC(s[j]) && j - d0 < 6) r = r * 10 + (s[j++] - '0');
    if (j == d0) return s;
    if (bracket) {
      if (j >= s.size() || s[j] != ']') return s;
      ++j;
    }
    if (j < s.size() && s[j] == ':')
      ++j;
    else if (!bracket)
      return s;
    if (j < s.size() && s[j] == ' ') ++j;
    rank = r;
    return s.substr(j);
  }
  if (bracket) return s;
  size_t j = 0;
  int r = 0;
  while (j < s.size() && IsDigitC(s[j]) && j < 4) r = r * 10 + (s[j++] - '0');
  if (j > 0 && j + 1 < s.size() && s[j] == ':' && s[j + 1] == ' ') {
    rank = r;
    return s.substr(j + 2);
  }
  return s;
}

bool IsSpaceC(char c) { return c == ' ' || c == '\t'; }

// Splits on whitespace; records each token's end offset.
void Tokens(std::string_view s, std::vector<std::pair<size_t, size_t>>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpaceC(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !IsSpaceC(s[i])) ++i;
    if (i > b) out.emplace_back(b, i);
  }
}

// A table header: >= 3 word columns separated by tabs or runs of >= 2 blanks, no digits, at
// least one progress word (epoch, loss, iter, step, lr). Returns the column names, or empty.
std::vector<std::string> TableHeaderColumns(std::string_view s) {
  std::vector<std::string> cols;
  if (s.size() > 400) return cols;
  bool progress_word = false;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpaceC(s[i])) ++i;
    if (i >= s.size()) break;
    size_t b = i;
    while (i < s.size() && s[i] != '\t' &&
           !(s[i] == ' ' && (i + 1 >= s.size() || IsSpaceC(s[i + 1])))) {
      const char c = s[i];
      if (IsDigitC(c)) return {};
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '/' || c == '(' ||
            c == ')' || c == '%' || c == '-' || c == '.' || c == ' ')) {
        return {};
      }
      ++i;
    }
    std::string col(s.substr(b, i - b));
    std::string low;
    for (char c : col) low.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
    if (low.find("epoch") != std::string::npos || low.find("loss") != std::string::npos ||
        low.find("iter") != std::string::npos || low.find("step") != std::string::npos ||
        low == "lr") {
      progress_word = true;
    }
    cols.push_back(std::move(col));
  }
  if (cols.size() < 3 || !progress_word) cols.clear();
  return cols;
}

// Rewrites a row of a learned table as "col=value, ..." followed by the rest of the line.
bool BuildTableRow(std::string_view s, const std::vector<std::string>& cols, std::string& out) {
  std::vector<std::pair<size_t, size_t>> toks;
  Tokens(s, toks);
  if (toks.size() < cols.size() || !IsDigitC(s[toks[0].first])) return false;
  size_t numeric = 0;
  for (size_t c = 0; c < cols.size(); ++c) {
    const char f = s[toks[c].first];
    if (IsDigitC(f) || ((f == '-' || f == '.') && toks[c].second > toks[c].first + 1)) ++numeric;
  }
  if (numeric * 10 < cols.size() * 7) return false;
  out.clear();
  for (size_t c = 0; c < cols.size(); ++c) {
    std::string_view v = s.substr(toks[c].first, toks[c].second - toks[c].first);
    bool colon = false;
    if (!v.empty() && v.back() == ':') {
      v.remove_suffix(1);
      colon = true;
    }
    out += cols[c];
    out += '=';
    out += v;
    out += colon ? ": " : ", ";
  }
  out += s.substr(toks[cols.size() - 1].second);
  return true;
}

void FillMissing(ExtractedValues& dst, const ExtractedValues& src, bool with_loss) {
  if (with_loss && !dst.loss && src.loss) {
    dst.loss = src.loss;
  }
  if (with_loss) {
    for (const auto& [k, v] : src.losses) dst.losses.emplace(k, v);
  }
  if (!dst.lr && src.lr) dst.lr = src.lr;
  if (!dst.step_time_s && src.step_time_s) {
    dst.step_time_s = src.step_time_s;
    dst.step_time_derived = src.step_time_derived;
  }
  if (!dst.throughput && src.throughput) dst.throughput = src.throughput;
  if (!dst.eta_s && src.eta_s) {
    dst.eta_s = src.eta_s;
    dst.eta_text = src.eta_text;
  }
  dst.has_metric = dst.has_metric || src.has_metric;
  dst.has_strong_metric = dst.has_strong_metric || src.has_strong_metric;
}

// The value groups `v` has, as CompletedFrom bits.
uint8_t PrintedGroups(const ExtractedValues& v) {
  uint8_t g = 0;
  if (v.epoch) g |= kCompletedEpoch;
  if (v.loss || !v.losses.empty()) g |= kCompletedLoss;
  if (v.step_time_s || v.throughput || v.lr || v.eta_s) g |= kCompletedTiming;
  if (v.total_steps) g |= kCompletedTotalSteps;
  if (v.total_epochs) g |= kCompletedTotalEpochs;
  return g;
}

// Keeps the weaker of two train/eval cues.
void WeakenCue(ConfidenceEvidence& e, TrainCue cue) {
  if (static_cast<int>(cue) > static_cast<int>(e.cue)) e.cue = cue;
}

}  // namespace

std::optional<int64_t> DeriveTotalEpochs(const ExtractedValues& v) {
  if (!v.epoch || !v.epoch_fractional || !v.step || !v.total_steps) return std::nullopt;
  if (*v.step <= 0 || *v.total_steps <= 0 || *v.epoch <= 0) return std::nullopt;
  const double est = *v.epoch * static_cast<double>(*v.total_steps) / static_cast<double>(*v.step);
  const double r = std::round(est);
  // NaN fails every comparison, so finiteness is checked before the range.
  if (!std::isfinite(r) || r < 1 || r > 1e6 || std::fabs(est - r) > 0.02 * r) return std::nullopt;
  return static_cast<int64_t>(r);
}

MetricTracker::MetricTracker(LineClassifier& classifier, MetricExtractor& extractor,
                             TrackerOptions options)
    : classifier_(classifier), extractor_(extractor), options_(options) {}

std::string MetricTracker::FormatName(const ParsedSegment& seg) {
  if (seg.flags & kFlagTable) return "table";
  if (seg.flags & kFlagKnownFormat) return "known-format";
  if (seg.flags & kFlagTqdmBar) return "tqdm-bar";
  if (seg.flags & kFlagKerasBar) return "keras-bar";
  if (seg.flags & kFlagJson) {
    return seg.text.find("{'") != std::string_view::npos ? "python-dict" : "json";
  }
  if (seg.flags & kFlagPipes) return "pipe-separated";
  if (seg.flags & kFlagKeyEquals) return "key=value";
  return "key: value";
}

ValueReader MetricTracker::ReaderOf(const ParsedSegment& seg) {
  if (seg.flags & kFlagKnownFormat) return ValueReader::kPositional;
  if (seg.flags & (kFlagTable | kFlagPipes | kFlagKeyEquals)) {
    // A bar or a JSON record that also has '=' pairs is still read by its structure.
    if (!(seg.flags & (kFlagTqdmBar | kFlagKerasBar | kFlagJson)) || (seg.flags & kFlagTable)) {
      return ValueReader::kKeyValue;
    }
  }
  if (seg.flags & (kFlagTqdmBar | kFlagKerasBar | kFlagJson)) return ValueReader::kStructure;
  return ValueReader::kGeneric;
}

void MetricTracker::AddLine(std::string_view raw, int64_t line_no, uint64_t offset,
                            double wall_time_s) {
  bool binary = false;
  std::string_view line = SanitizeLine(raw, scratch_, stats_.reader, options_.reader, binary);
  if (!binary) {
    // A JSON object printed over several lines (json.dumps(indent=2), trainer_state log_history)
    // is read as one record at the line of its opening brace.
    size_t b = 0, e = line.size();
    while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
    while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
    const std::string_view trimmed = line.substr(b, e - b);
    const bool opens =
        !trimmed.empty() && trimmed.back() == '{' && trimmed.find('}') == std::string_view::npos;
    if (json_open_ && opens) FlushJson(wall_time_s);  // a nested object: the outer part ends here
    if (json_open_) {
      json_buffer_ += ' ';
      json_buffer_.append(trimmed.substr(0, 4096));
      ++json_lines_;
      if ((!trimmed.empty() && trimmed.front() == '}') || json_lines_ >= 64 ||
          json_buffer_.size() > options_.reader.max_line_bytes) {
        json_open_ = false;
        const std::string text = std::move(json_buffer_);
        json_buffer_.clear();
        ProcessSegment(text, text, json_line_no_, json_offset_, /*first_segment=*/false,
                       wall_time_s);
      }
    } else if (opens) {
      json_open_ = true;
      json_buffer_.assign(trimmed);
      json_lines_ = 1;
      json_line_no_ = line_no;
      json_offset_ = offset;
    } else {
      SplitSegments(line, segments_);
      for (size_t i = 0; i < segments_.size(); ++i) {
        ProcessSegment(segments_[i], line, line_no, offset, i == 0, wall_time_s);
      }
    }
  }
  FinalizeReady(json_open_ ? std::min(line_no, json_line_no_) : line_no, false);
  if (line_no > last_line_no_) last_line_no_ = line_no;
}

void MetricTracker::ProcessSegment(std::string_view seg, std::string_view physical, int64_t line_no,
                                   uint64_t offset, bool first_segment, double wall_time_s) {
  ++stats_.segments;
  SegmentContext c;
  c.physical = physical;
  c.line_no = line_no;
  c.offset = offset;
  c.printed = ParseSegment(seg, c.rank);
  if (ps_.fields.empty()) {
    vals_ = ExtractedValues();
  } else {
    extractor_.Extract(ps_, vals_);
  }
  c.k = classifier_.Classify(ps_, vals_);
  const LineKind& k = c.k;
  ++stats_.by_class[static_cast<int>(k.cls)];
  if (observer_) observer_(ps_, vals_, k, line_no, offset, physical);
  // Follow mode judges stalls on the wall clock; files use the printed timestamps.
  c.ts = wall_time_s >= 0 ? wall_time_s : ps_.timestamp_s;
  if (c.ts > last_timestamp_) last_timestamp_ = c.ts;

  if (!k.bar) ResolveLookahead(k.eval);
  if (!k.eval && (vals_.step || vals_.epoch)) seen_counter_ = true;
  if (vals_.total_epochs && !vals_.epoch && !k.eval) run_total_epochs_ = vals_.total_epochs;
  // A configured total printed on its own ("Total optimization steps = 17,000", "max_steps: 500")
  // completes records whose lines print no total of their own.
  if (vals_.total_steps && !vals_.step && !k.eval && !k.bar) run_total_steps_ = vals_.total_steps;

  if (first_segment && ContinuesRecord(k, line_no)) return;
  if (c.rank >= 0 && primary_rank_ >= 0 && c.rank != primary_rank_ && (k.anchor || k.metric_only)) {
    ++stats_.other_rank_segments;
    return;
  }
  if (k.eval) {
    OnEvalSegment(line_no);
  } else if (k.summary) {
    OnSummary(line_no);
  } else if (k.epoch_header) {
    OnEpochHeader(k, line_no);
  } else if (k.anchor || k.step_header) {
    OnProgress(c);
  } else if (k.metric_only) {
    OnMetricOnly(c);
  }
}

// The per-segment steps below run once per log line; they are inlined into ProcessSegment
// (BM_TrackText measured 1-3% slower with them as calls of their own).
[[gnu::always_inline]] inline std::string_view MetricTracker::ParseSegment(std::string_view seg,
                                                                           int& rank) {
  const std::string_view unstripped = seg;
  seg = StripRankPrefix(seg, rank);
  // Tables (YOLO-style): a header line names the columns of the rows below it.
  bool table_row = false;
  if (!table_columns_.empty() && BuildTableRow(seg, table_columns_, table_row_)) {
    seg = table_row_;
    table_row = true;
  } else if (std::vector<std::string> cols = TableHeaderColumns(seg); !cols.empty()) {
    table_columns_ = std::move(cols);
  }
  parser_.Parse(seg, ps_);
  const std::string_view printed = seg;  // what the log printed (kept in records)
  if (table_row) {
    ps_.flags |= kFlagTable;
  } else if (ps_.has_digit &&
             formats_.Rewrite(ps_.skeleton, rank >= 0 ? unstripped : seg, format_row_)) {
    // A positional format from config/tracker_formats.yaml: read as the key=value text it means.
    // It is tried on the line as printed, so a number that starts the format ("1200: 0.51, ...")
    // is not mistaken for an `srun --label` rank.
    rank = -1;
    parser_.Parse(format_row_, ps_);
    ps_.flags |= kFlagKnownFormat;
  }
  return printed;
}

[[gnu::always_inline]] inline bool MetricTracker::ContinuesRecord(const LineKind& k,
                                                                  int64_t line_no) {
  // Indented continuation of the record just above ("    train/loss=2.95").
  if (!(ps_.flags & kFlagIndented) || k.anchor || k.eval || pending_.empty() ||
      ps_.fields.empty() || vals_.step) {
    return false;
  }
  Pending& p = pending_.back();
  if (p.dropped || p.needs_lookahead || line_no - p.last_line > 1 || line_no <= p.last_line) {
    return false;
  }
  FillMissing(p.rec.v, vals_, /*with_loss=*/true);
  if (!p.rec.v.epoch && vals_.epoch) p.rec.v.epoch = vals_.epoch;
  p.last_line = line_no;
  if (p.header_only && vals_.has_metric) {
    p.header_only = false;
    Confirm(p);
  }
  return true;
}

void MetricTracker::OnEvalSegment(int64_t line_no) {
  ++stats_.eval_segments;
  // Results (a keyed measurement: "bbox_mAP: 0.2110") end an evaluation phase; a line
  // without any ("Iteration 5000, Testing net (#0)") announces one.
  bool results = vals_.has_metric;
  for (const Field& f : ps_.fields) {
    if (f.eval && f.role != Role::kNone) results = true;
    if (f.key_end > f.key_begin && f.kind == ValueKind::kNumber && !f.integer) results = true;
  }
  eval_mode_ = !results;  // a phase header starts evaluation; its results end it
  if (results && vals_.epoch) late_epoch_ = LateEpoch{line_no, *vals_.epoch, false};
  if (vals_.total_epochs) run_total_epochs_ = vals_.total_epochs;
}

void MetricTracker::OnSummary(int64_t line_no) {
  if (vals_.epoch) {
    ctx_epoch_ = vals_.epoch;
    ctx_epoch_fractional_ = vals_.epoch_fractional;
    late_epoch_ = LateEpoch{line_no, *vals_.epoch, true};
  }
  if (vals_.total_epochs) run_total_epochs_ = vals_.total_epochs;
}

void MetricTracker::OnEpochHeader(const LineKind& k, int64_t line_no) {
  ctx_epoch_ = vals_.epoch;
  ctx_epoch_fractional_ = vals_.epoch_fractional;
  if (vals_.total_epochs) {
    ctx_total_epochs_ = vals_.total_epochs;
    run_total_epochs_ = vals_.total_epochs;
  }
  if (!k.checkpoint) eval_mode_ = false;
  anchor_lines_.push_back(line_no);  // a record boundary for satellites
  if (anchor_lines_.size() > 256) anchor_lines_.pop_front();
}

[[gnu::always_inline]] inline MetricTracker::Pending MetricTracker::MakePending(
    const SegmentContext& c, bool own_counter) const {
  Pending p;
  ProgressRecord& r = p.rec;
  r.line_no = c.line_no;
  r.offset = c.offset;
  r.line.assign(c.physical.substr(0, options_.max_stored_line));
  r.segment.assign(c.printed.substr(0, options_.max_stored_line));
  r.v = vals_;
  r.timestamp_s = c.ts;
  r.template_id = c.k.family;
  r.format = FormatName(ps_);
  r.rank = c.rank;
  r.evidence.reader = ReaderOf(ps_);
  // An evaluation word on a line taken as training (a train tag or a training metric won).
  if (ps_.flags & (kFlagEvalTag | kFlagEvalKeyTag | kFlagEvalHeader)) {
    WeakenCue(r.evidence, TrainCue::kWeak);
  }
  p.last_line = c.line_no;
  p.own_counter = own_counter;
  p.printed_groups = PrintedGroups(vals_);
  return p;
}

[[gnu::always_inline]] inline bool MetricTracker::KnownTrainingFamily(int family) const {
  return family >= 0 && training_families_.count(family) > 0;
}

void MetricTracker::EndEarlierBarLoops(int64_t line_no) {
  // A bar with a different total, or one whose counter starts again on a new line, is another
  // loop: what directly followed the earlier bar was that loop, not eval output, so the earlier
  // bar states stand confirmed.
  for (Pending& q : pending_) {
    const bool new_loop =
        q.rec.v.total_steps != vals_.total_steps ||
        (q.rec.line_no != line_no && q.rec.v.step && vals_.step && *vals_.step <= *q.rec.v.step);
    if (q.needs_lookahead && new_loop) {
      q.needs_lookahead = false;
      Confirm(q);
    }
  }
  waiting_bars_.Clear();
  for (const Pending& q : pending_) {
    if (q.needs_lookahead) waiting_bars_.Add(q.rec.v.total_steps, q.rec.v.step, q.rec.line_no);
  }
}

[[gnu::always_inline]] inline bool MetricTracker::IsProgressMessage(const LineKind& k) {
  if (k.anchor && !k.bar && vals_.epoch && !vals_.step && vals_.losses.empty() &&
      !vals_.throughput && last_step_ && !KnownTrainingFamily(k.family)) {
    // An epoch's closing line after step-level progress, with only its duration ("13 epoch at
    // time 480.6s", MXNet's "Epoch[3] Time cost=120.1"): context for what follows, not the
    // newest progress.
    OpenEpoch(vals_);
    return true;
  }
  if (k.anchor && !k.bar && !vals_.has_strong_metric && !training_families_.empty() &&
      !KnownTrainingFamily(k.family)) {
    // Only lr/eta/other metrics, in a format never seen carrying progress while another format
    // does: a message ("Epoch 5: reducing learning rate to 1e-4"), not a progress record. An
    // epoch counter on it still opens the epoch ("Epoch 2/2 (lr=0.01)" above its batch lines).
    if (vals_.epoch && !vals_.step && !k.checkpoint) OpenEpoch(vals_);
    return true;
  }
  return false;
}

[[gnu::always_inline]] inline void MetricTracker::OnProgress(const SegmentContext& c) {
  const LineKind& k = c.k;
  bool in_eval_phase = false;  // a known training format inside an evaluation phase
  if (eval_mode_) {
    if (k.bar || !KnownTrainingFamily(k.family)) {
      ++stats_.eval_segments;
      // A counter line with measured values in an evaluation phase is its results
      // ("'step':1020, 'ppl': 24.1" after "***** Evaluating perplexity *****"): they end it.
      if (!k.bar && vals_.has_metric) eval_mode_ = false;
      return;
    }
    in_eval_phase = true;
  }
  if (vals_.total_epochs) run_total_epochs_ = vals_.total_epochs;
  if (IsProgressMessage(k)) return;
  if (k.bar && waiting_bars_.MayEnd(vals_.total_steps, vals_.step, c.line_no)) {
    EndEarlierBarLoops(c.line_no);
  }
  if (k.bar && last_complete_ && !vals_.epoch && vals_.total_steps != last_total_steps_) {
    // After the final epoch completed, another loop (Keras evaluate/predict) is not training.
    ++stats_.eval_segments;
    return;
  }
  Pending p = MakePending(c, /*own_counter=*/true);
  if (in_eval_phase) WeakenCue(p.rec.evidence, TrainCue::kWeak);
  p.needs_lookahead = k.bar;
  if (k.bar) waiting_bars_.Add(vals_.total_steps, vals_.step, c.line_no);
  p.header_only = k.step_header;
  pending_.push_back(std::move(p));
  if (!k.bar && !k.step_header) Confirm(pending_.back());
  if (c.rank >= 0 && primary_rank_ < 0 && !k.step_header) primary_rank_ = c.rank;
}

[[gnu::always_inline]] inline void MetricTracker::OnMetricOnly(const SegmentContext& c) {
  if (eval_mode_) return;
  satellites_.push_back(Satellite{c.line_no, vals_});
  if (!seen_anchor_ && ctx_epoch_ && vals_.loss) {
    // No line carries its own counter: records are "epoch header + metric lines".
    pending_.push_back(MakePending(c, /*own_counter=*/false));
    Confirm(pending_.back());
  } else if (!seen_counter_ && vals_.loss && c.k.family >= 0 &&
             ++counterless_families_[c.k.family] >= 2) {
    // No counter anywhere yet: the same training-loss line printed again and again is the
    // progress itself ("loss:0.52, accuracy:0.81" per logging interval, rows of a loss table).
    pending_.push_back(MakePending(c, /*own_counter=*/false));
    Confirm(pending_.back());
  }
}

bool MetricTracker::WaitingBars::MayEnd(const std::optional<int64_t>& total,
                                        const std::optional<int64_t>& step, int64_t line_no) const {
  if (!any) return false;
  if (total != this->total) return true;
  if (!step) return false;
  std::optional<int64_t> other = max_step_before;  // bars of lines other than `line_no`
  if (line_no != line && max_step_on_line && (!other || *max_step_on_line > *other)) {
    other = max_step_on_line;
  }
  return other && *step <= *other;
}

void MetricTracker::WaitingBars::Add(const std::optional<int64_t>& total,
                                     const std::optional<int64_t>& step, int64_t line_no) {
  if (!any) {
    *this = WaitingBars();
    any = true;
    this->total = total;
    line = line_no;
  }
  if (line_no != line) {  // a new line: the states of the earlier one are "before"
    if (max_step_on_line && (!max_step_before || *max_step_on_line > *max_step_before)) {
      max_step_before = max_step_on_line;
    }
    max_step_on_line.reset();
    line = line_no;
  }
  if (step && (!max_step_on_line || *step > *max_step_on_line)) max_step_on_line = step;
}

void MetricTracker::OpenEpoch(const ExtractedValues& v) {
  ctx_epoch_ = v.epoch;
  ctx_epoch_fractional_ = v.epoch_fractional;
  if (v.total_epochs) ctx_total_epochs_ = v.total_epochs;
}

void MetricTracker::ResolveLookahead(bool eval_follows) {
  waiting_bars_.Clear();
  for (Pending& p : pending_) {
    if (!p.needs_lookahead || p.dropped) continue;
    p.needs_lookahead = false;
    // A redraw of a bar state already confirmed as training (tqdm refreshes the outer training
    // bar when an inner evaluation bar closes) stays training whatever follows it.
    // A redraw repeats the counter and the values: a new loop's 1/1 with another loss is none.
    const bool redraw =
        p.rec.v.step && p.rec.v.total_steps && confirmed_bar_states_.count(BarState(p.rec.v)) > 0;
    if (eval_follows && !redraw) {
      p.dropped = true;
      ++stats_.eval_segments;
    } else {
      // Kept against eval output that follows (a redraw), or with nothing after it to judge by.
      if (eval_follows) WeakenCue(p.rec.evidence, TrainCue::kWeak);
      if (finishing_) WeakenCue(p.rec.evidence, TrainCue::kUnjudged);
      Confirm(p);
    }
  }
}

bool MetricTracker::IsRestart(const ExtractedValues& v, std::optional<double> eff_epoch) const {
  if (last_epoch_ && eff_epoch && *eff_epoch + 1e-9 < *last_epoch_) return true;
  const bool same_epoch = !eff_epoch || !last_epoch_ || std::fabs(*eff_epoch - *last_epoch_) < 1e-9;
  if (same_epoch && v.step && last_step_ && *v.step < *last_step_) {
    // Per-epoch counters roll over when a loop completes.
    if (last_total_steps_ && v.total_steps == last_total_steps_ &&
        *last_step_ >= *last_total_steps_) {
      return false;
    }
    return true;
  }
  return false;
}

void MetricTracker::Confirm(Pending& p) {
  ExtractedValues& v = p.rec.v;
  std::optional<double> eff_epoch = v.epoch ? v.epoch : ctx_epoch_;
  if (IsRestart(v, eff_epoch)) {
    ++run_;
    ++stats_.restarts;
    ctx_epoch_.reset();
    ctx_total_epochs_.reset();
    last_step_.reset();
    last_epoch_.reset();
    last_total_steps_.reset();
    eff_epoch = v.epoch;
  }
  if (!v.epoch && eff_epoch) {
    v.epoch = eff_epoch;
    v.epoch_fractional = ctx_epoch_fractional_;
    p.rec.epoch_from_context = true;
  } else if (v.epoch) {
    ctx_epoch_ = v.epoch;
    ctx_epoch_fractional_ = v.epoch_fractional;
  }
  if (v.total_epochs) {
    ctx_total_epochs_ = v.total_epochs;
  } else if (ctx_total_epochs_) {
    v.total_epochs = ctx_total_epochs_;
  }
  p.rec.run = run_;
  if (p.rec.v.step_from_bar && v.step && v.total_steps) {
    if (confirmed_bar_states_.size() > 4096) confirmed_bar_states_.clear();
    confirmed_bar_states_.insert(BarState(v));
  }
  if (!v.step && eff_epoch && last_epoch_ && std::fabs(*eff_epoch - *last_epoch_) > 1e-9) {
    // A record that opens another epoch ("Epoch 2/2 (lr=0.01)"): the step counters below it
    // count within that epoch, so a counter lower than the last one is no restart.
    last_step_.reset();
    last_total_steps_.reset();
  }
  if (v.step) {
    last_step_ = v.step;
    last_total_steps_ = v.total_steps;
  }
  if (eff_epoch) last_epoch_ = eff_epoch;
  last_complete_ = v.epoch && v.total_epochs && v.step && v.total_steps &&
                   *v.epoch >= static_cast<double>(*v.total_epochs) && *v.step >= *v.total_steps;
  if (p.own_counter) {
    seen_anchor_ = true;
    eval_mode_ = false;
    if (p.rec.template_id >= 0) training_families_.insert(p.rec.template_id);
  }
  anchor_lines_.push_back(p.rec.line_no);
  if (anchor_lines_.size() > 256) anchor_lines_.pop_front();
}

void MetricTracker::FillFromSatellites(ProgressRecord& rec) {
  const int64_t L = rec.line_no;
  const int64_t W = options_.window;
  auto crosses = [&](int64_t s) {
    const int64_t lo = std::min(s, L), hi = std::max(s, L);
    for (int64_t a : anchor_lines_) {
      if (a > lo && a < hi) return true;
    }
    return false;
  };
  auto pick = [&](auto has) -> const Satellite* {
    const Satellite* best = nullptr;
    int64_t best_d = std::numeric_limits<int64_t>::max();
    for (const Satellite& s : satellites_) {
      const int64_t d = s.line_no > L ? s.line_no - L : L - s.line_no;
      if (d == 0 || d > W || !has(s.v) || crosses(s.line_no)) continue;
      if (d < best_d || (d == best_d && s.line_no < L)) {
        best_d = d;
        best = &s;
      }
    }
    return best;
  };
  ExtractedValues& v = rec.v;
  bool filled = false;
  if (!v.step_time_s) {
    if (const Satellite* s =
            pick([](const ExtractedValues& x) { return x.step_time_s.has_value(); })) {
      v.step_time_s = s->v.step_time_s;
      v.step_time_derived = s->v.step_time_derived;
      filled = true;
    }
  }
  if (!v.throughput) {
    if (const Satellite* s =
            pick([](const ExtractedValues& x) { return x.throughput.has_value(); })) {
      v.throughput = s->v.throughput;
      filled = true;
    }
  }
  if (!v.lr) {
    if (const Satellite* s = pick([](const ExtractedValues& x) { return x.lr.has_value(); })) {
      v.lr = s->v.lr;
      filled = true;
    }
  }
  if (!v.loss) {
    if (const Satellite* s = pick([](const ExtractedValues& x) { return x.loss.has_value(); })) {
      v.loss = s->v.loss;
      for (const auto& [k, x] : s->v.losses) v.losses.emplace(k, x);
      filled = true;
    }
  }
  if (!v.eta_s) {
    if (const Satellite* s = pick([](const ExtractedValues& x) { return x.eta_s.has_value(); })) {
      v.eta_s = s->v.eta_s;
      v.eta_text = s->v.eta_text;
      filled = true;
    }
  }
  if (filled) rec.format += " multi-line";
}

void MetricTracker::Finalize(Pending& p) {
  if (p.dropped) return;
  const bool from_header = p.header_only;  // its values are the lines below the header
  if (p.header_only) {
    // "----- step 1000 -----" followed by plain "loss: 2.3" lines: the metric lines that follow
    // the header (before any other record) complete it.
    const int64_t L = p.rec.line_no;
    int64_t next_anchor = std::numeric_limits<int64_t>::max();
    for (int64_t a : anchor_lines_) {
      if (a > L) next_anchor = std::min(next_anchor, a);
    }
    ExtractedValues merged = p.rec.v;
    for (const Satellite& s : satellites_) {
      if (s.line_no > L && s.line_no < next_anchor && s.line_no - L <= options_.window) {
        FillMissing(merged, s.v, /*with_loss=*/true);
      }
    }
    // The log ends right after a step header whose earlier lines were completed by metric lines
    // ("current step: 58036th step" as the last line): it is the newest step; its metrics are
    // not printed yet.
    const bool last_of_known_kind =
        finishing_ && p.rec.template_id >= 0 && training_families_.count(p.rec.template_id) > 0;
    if (!merged.loss && !last_of_known_kind) return;
    if (!merged.loss) WeakenCue(p.rec.evidence, TrainCue::kWeak);  // only its position says so
    p.rec.v = std::move(merged);
    p.header_only = false;
    p.rec.format += " multi-line";
    Confirm(p);
  }
  if (!from_header) FillFromSatellites(p.rec);
  if (!p.rec.v.total_steps && run_total_steps_ &&
      (!p.rec.v.step || *p.rec.v.step <= *run_total_steps_)) {
    p.rec.v.total_steps = run_total_steps_;
  }
  if (!p.rec.v.total_epochs) {
    if (auto d = DeriveTotalEpochs(p.rec.v)) p.rec.v.total_epochs = d;
  }
  if (p.rec.epoch_from_context && p.rec.format.find("context") == std::string::npos) {
    p.rec.format += " epoch-context";
  }
  AssessConfidence(p);
  ++stats_.records;
  latest_ = std::move(p.rec);
  if (sink_) sink_(*latest_);
}

void MetricTracker::AssessConfidence(Pending& p) {
  ProgressRecord& r = p.rec;
  ConfidenceEvidence& e = r.evidence;
  if (family_records_.size() > 4096) family_records_.clear();
  e.template_records = ++family_records_[r.template_id];
  if (p.own_counter) {
    e.counter = CounterSource::kOwn;
  } else {
    e.counter = r.v.epoch ? CounterSource::kContextEpoch : CounterSource::kNone;
  }
  e.completed = static_cast<uint8_t>(PrintedGroups(r.v) & ~p.printed_groups);
  const ExtractedValues& v = r.v;
  if (v.step || v.epoch) {
    if (last_counter_) {
      // Did the counter go back since the previous record with one? A restart did; a per-epoch
      // counter that reached its total and starts again did not.
      const CounterMark& prev = *last_counter_;
      bool forward = prev.run == r.run;
      if (forward && prev.epoch && v.epoch && std::fabs(*v.epoch - *prev.epoch) > 1e-9) {
        forward = *v.epoch > *prev.epoch;
      } else if (forward && prev.step && v.step && *v.step < *prev.step) {
        forward = prev.total_steps && *prev.step >= *prev.total_steps;
      }
      constexpr double kDecay = 0.97;  // about the last 32 pairs count
      counter_pairs_ = counter_pairs_ * kDecay + 1;
      counter_pairs_forward_ = counter_pairs_forward_ * kDecay + (forward ? 1 : 0);
    }
    last_counter_ = CounterMark{v.epoch, v.step, v.total_steps, r.run};
  }
  e.monotone_share = counter_pairs_ > 0 ? counter_pairs_forward_ / counter_pairs_ : 1.0;
  r.confidence = ConfidenceOf(e);
}

void MetricTracker::FinalizeReady(int64_t current_line, bool all) {
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (!all) {
      if (p.needs_lookahead) break;
      if (current_line - p.last_line <= options_.window) break;
    } else if (p.needs_lookahead) {
      p.needs_lookahead = false;
      Confirm(p);
      waiting_bars_.Clear();
    }
    Finalize(p);
    pending_.pop_front();
  }
  const int64_t horizon = current_line - 3 * options_.window;
  while (!satellites_.empty() &&
         (satellites_.front().line_no < horizon || satellites_.size() > 512)) {
    satellites_.pop_front();
  }
}

void MetricTracker::FlushJson(double wall_time_s) {
  if (!json_open_) return;
  json_open_ = false;
  const std::string text = std::move(json_buffer_);
  json_buffer_.clear();
  ProcessSegment(text, text, json_line_no_, json_offset_, /*first_segment=*/false, wall_time_s);
}

void MetricTracker::FlushPending() {
  FlushJson(-1);
  ResolveLookahead(false);
  FinalizeReady(last_line_no_, true);
}

void MetricTracker::Finish() {
  finishing_ = true;
  FlushJson(-1);
  ResolveLookahead(false);
  FinalizeReady(std::numeric_limits<int64_t>::max() / 2, true);
  const uint8_t groups_before = latest_ ? PrintedGroups(latest_->v) : 0;
  if (latest_ && !latest_->v.epoch && late_epoch_ && late_epoch_->line_no > latest_->line_no) {
    // The run's summary or evaluation results after the last progress line say which epoch it
    // ended in ("{'train_runtime': ..., 'epoch': 3.0}" after HF Trainer's final bar).
    latest_->v.epoch = late_epoch_->epoch;
    latest_->epoch_from_context = true;
    // A run summary is printed when training ends: a whole epoch there is the run's total.
    if (late_epoch_->summary && !latest_->v.total_epochs && late_epoch_->epoch >= 1 &&
        late_epoch_->epoch <= 1e6 && std::floor(late_epoch_->epoch) == late_epoch_->epoch) {
      latest_->v.total_epochs = static_cast<int64_t>(late_epoch_->epoch);
    }
  }
  if (latest_ && !latest_->v.total_steps && run_total_steps_ &&
      (!latest_->v.step || *latest_->v.step <= *run_total_steps_)) {
    latest_->v.total_steps = run_total_steps_;
  }
  if (latest_ && !latest_->v.total_epochs && run_total_epochs_ && latest_->v.epoch &&
      *latest_->v.epoch <= static_cast<double>(*run_total_epochs_)) {
    latest_->v.total_epochs = run_total_epochs_;
  }
  if (latest_) {  // what the lines after it completed
    latest_->evidence.completed |= static_cast<uint8_t>(PrintedGroups(latest_->v) & ~groups_before);
    latest_->confidence = ConfidenceOf(latest_->evidence);
  }
}

}  // namespace schedmate::tracker
