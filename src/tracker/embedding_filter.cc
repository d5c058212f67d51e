#include "tracker/embedding_filter.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "fmt/format.h"
#include "text/template_miner.h"

namespace schedmate::tracker {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Normalises `v` in place to unit length; kDataLoss for empty or non-finite vectors.
Status Normalize(std::vector<float>& v, size_t index) {
  if (v.empty()) return Status::DataLoss(fmt::format("empty embedding for input {}", index));
  double norm = 0;
  for (float x : v) {
    if (!std::isfinite(x)) {
      return Status::DataLoss(fmt::format("non-finite embedding component for input {}", index));
    }
    norm += static_cast<double>(x) * x;
  }
  if (norm > 0) {
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v) x *= inv;
  }
  return Status::Ok();
}

float Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}

// The message up to the first "; ", at most 120 characters (llm/llm_status.h's convention).
std::string ShortCause(const Status& st) {
  std::string_view m = st.message();
  m = m.substr(0, m.find("; "));
  if (m.size() > 120) return std::string(m.substr(0, 117)) + "...";
  return std::string(m);
}

}  // namespace

Result<std::vector<Exemplar>> ParseExemplars(std::string_view text, std::string_view source) {
  std::vector<Exemplar> out;
  size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t b = 0;
    while (b < line.size() && IsBlank(line[b])) ++b;
    size_t e = line.size();
    while (e > b && IsBlank(line[e - 1])) --e;
    line = line.substr(b, e - b);
    if (line.empty() || line.front() == '#') {
      if (end == text.size()) break;
      continue;
    }
    size_t w = 0;
    while (w < line.size() && !IsBlank(line[w])) ++w;
    const std::string_view label = line.substr(0, w);
    size_t t = w;
    while (t < line.size() && IsBlank(line[t])) ++t;
    Exemplar ex;
    if (label == "progress") {
      ex.progress = true;
    } else if (label != "other") {
      return Status::InvalidArgument(
          fmt::format("{}:{}: expected 'progress' or 'other' before the line, got '{}'", source,
                      line_no, label));
    }
    if (t >= line.size()) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: label '{}' without an example line", source, line_no, label));
    }
    ex.text.assign(line.substr(t));
    ex.source = fmt::format("{}:{}", source, line_no);
    out.push_back(std::move(ex));
    if (end == text.size()) break;
  }
  return out;
}

const std::vector<Exemplar>& BuiltinExemplars() {
  static const std::vector<Exemplar> exemplars = [] {
    Result<std::vector<Exemplar>> r =
        ParseExemplars(BuiltinExemplarText(), "config/tracker_exemplars.txt");
    return r.ok() ? std::move(r).value() : std::vector<Exemplar>{};
  }();
  return exemplars;
}

std::string LineShape(std::string_view line) {
  std::string out;
  for (const std::string& t : text::TemplateMiner::MaskTokens(line)) {
    if (!out.empty()) out.push_back(' ');
    out += t;
  }
  return out;
}

std::optional<bool> TemplateStats::Confident() const {
  if (lines < 2) return std::nullopt;
  if (progress_lines == lines && strong_lines == lines) return true;
  if (progress_lines == 0 && (eval_lines == lines || valued_lines == 0)) return false;
  return std::nullopt;
}

void TemplateCensus::Observe(const ParsedSegment& segment, const ExtractedValues& values,
                             const LineKind& kind, int64_t line_no) {
  auto found = by_key_.find(segment.skeleton);
  if (found == by_key_.end() && by_key_.size() >= kMaxTemplates) {
    ++untracked_;
    return;
  }
  TemplateStats& s = found != by_key_.end() ? found->second : by_key_[segment.skeleton];
  s.key = segment.skeleton;
  if (line_no >= s.last_line) {
    s.family = kind.family;
    newest_[segment.skeleton].assign(segment.text.substr(0, 512));
  }
  ++s.lines;
  if (kind.cls == LineClass::kProgress) {
    ++s.progress_lines;
    if (values.has_strong_metric) ++s.strong_lines;
  }
  if (!segment.fields.empty()) ++s.valued_lines;
  if (kind.eval) ++s.eval_lines;
  if (kind.cls == LineClass::kError) ++s.error_lines;
  s.last_line = std::max(s.last_line, line_no);
}

std::vector<TemplateStats> TemplateCensus::Finish() const {
  std::vector<TemplateStats> out;
  out.reserve(by_key_.size());
  for (const auto& [key, s] : by_key_) {
    out.push_back(s);
    out.back().shape = LineShape(newest_.at(key));
  }
  return out;
}

EmbeddingProgressFilter::EmbeddingProgressFilter(const text::TextEmbedder& embedder,
                                                 std::vector<Exemplar> exemplars,
                                                 EmbeddingFilterOptions options)
    : embedder_(embedder), exemplars_(std::move(exemplars)), options_(options) {
  options_.batch = std::max<size_t>(1, options_.batch);
  options_.k = std::max<size_t>(1, options_.k);
}

Status EmbeddingProgressFilter::EmbedAll(const std::vector<std::string>& texts) {
  std::vector<std::string> to_embed;
  std::set<std::string> queued;
  for (const std::string& t : texts) {
    if (!cache_.count(t) && queued.insert(t).second) to_embed.push_back(t);
  }
  for (size_t begin = 0; begin < to_embed.size(); begin += options_.batch) {
    const size_t n = std::min(options_.batch, to_embed.size() - begin);
    const std::span<const std::string> batch(to_embed.data() + begin, n);
    ++report_.requests;
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, embedder_.Embed(batch));
    if (vectors.size() != n) {
      return Status::DataLoss(
          fmt::format("embedding count mismatch: {} inputs, {} vectors", n, vectors.size()));
    }
    for (size_t i = 0; i < n; ++i) {
      std::vector<float>& v = vectors[i];
      SM_RETURN_IF_ERROR(Normalize(v, begin + i));
      if (report_.dimension == 0) report_.dimension = v.size();
      if (v.size() != report_.dimension) {
        return Status::DataLoss(fmt::format("embedding dimension mismatch: expected {}, got {}",
                                            report_.dimension, v.size()));
      }
      cache_.emplace(batch[i], std::move(v));
      ++report_.texts_embedded;
    }
  }
  return Status::Ok();
}

Status EmbeddingProgressFilter::Label(const std::vector<TemplateStats>& templates) {
  report_.templates = templates.size();
  bool has_p = false, has_o = false;
  for (const Exemplar& e : exemplars_) (e.progress ? has_p : has_o) = true;
  if (!has_p || !has_o) {
    return Status::InvalidArgument(
        "the exemplars need both labels ('progress' and 'other') to decide anything");
  }
  // Budget: built-in progress templates, then value-carrying ones, then the rest (self-labels
  // only); newest last line first; ties by family id.
  auto group = [](const TemplateStats& t) {
    if (t.progress_lines > 0) return 0;
    if (t.valued_lines > 0) return 1;
    return 2;
  };
  std::vector<const TemplateStats*> order;
  for (const TemplateStats& t : templates) {
    if (t.shape.empty()) continue;
    if (group(t) == 2 && (!options_.self_label || !t.Confident().has_value())) continue;
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [&](const TemplateStats* a, const TemplateStats* b) {
    if (group(*a) != group(*b)) return group(*a) < group(*b);
    if (a->last_line != b->last_line) return a->last_line > b->last_line;
    return a->key < b->key;
  });
  if (order.size() > options_.max_templates) order.resize(options_.max_templates);
  std::sort(order.begin(), order.end(),
            [](const TemplateStats* a, const TemplateStats* b) { return a->key < b->key; });
  report_.templates_embedded = order.size();

  std::vector<std::string> ex_shapes;
  ex_shapes.reserve(exemplars_.size());
  for (const Exemplar& e : exemplars_) ex_shapes.push_back(LineShape(e.text));
  std::vector<std::string> texts = ex_shapes;
  for (const TemplateStats* t : order) texts.push_back(t->shape);
  SM_RETURN_IF_ERROR(EmbedAll(texts));

  // The labelled pool: static exemplars in file order, then confident templates by family id.
  struct Pooled {
    const std::vector<float>* vec;
    bool progress;
    bool self;  // a self-label (then `key` is its skeleton)
    uint64_t key;
    std::string source;
  };
  std::vector<Pooled> pool;
  for (size_t i = 0; i < exemplars_.size(); ++i) {
    pool.push_back(
        {&cache_.at(ex_shapes[i]), exemplars_[i].progress, false, 0, exemplars_[i].source});
  }
  if (options_.self_label) {
    for (const TemplateStats* t : order) {
      if (std::optional<bool> c = t->Confident()) {
        pool.push_back({&cache_.at(t->shape), *c, true, t->key,
                        fmt::format("self (built-in, {} lines): {}", t->lines, t->shape)});
        ++report_.self_labels;
      }
    }
  }
  labels_.clear();
  std::vector<std::pair<float, size_t>> ranked;
  for (const TemplateStats* t : order) {
    const std::optional<bool> sure = options_.self_label ? t->Confident() : std::nullopt;
    if (sure && !options_.judge_confident) {
      TemplateLabel label;
      label.progress = *sure;
      label.nearest = "self";
      ++(label.progress ? report_.labelled_progress : report_.labelled_other);
      labels_.emplace(t->key, std::move(label));
      continue;
    }
    const std::vector<float>& v = cache_.at(t->shape);
    ranked.clear();
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].self && pool[i].key == t->key) continue;  // leave-one-out
      ranked.emplace_back(Dot(v, *pool[i].vec), i);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return a.second < b.second;
    });
    TemplateLabel label;
    for (size_t j = 0; j < ranked.size() && j < options_.k; ++j) {
      const float w = std::max(0.0f, ranked[j].first);
      (pool[ranked[j].second].progress ? label.score_progress : label.score_other) += w;
    }
    if (!ranked.empty()) label.nearest = pool[ranked.front().second].source;
    const bool unsure = ranked.empty() || ranked.front().first < options_.min_similarity ||
                        label.score_progress == label.score_other;
    if (unsure) {
      label.progress = t->BuiltinProgress();
      ++report_.unsure;
    } else {
      label.progress = label.score_progress > label.score_other;
      label.decided_by_embeddings = true;
      ++report_.decided;
    }
    ++(label.progress ? report_.labelled_progress : report_.labelled_other);
    labels_.emplace(t->key, std::move(label));
  }
  return Status::Ok();
}

const TemplateLabel* EmbeddingProgressFilter::Find(uint64_t key) const {
  auto it = labels_.find(key);
  return it == labels_.end() ? nullptr : &it->second;
}

LineKind GatedLineClassifier::Classify(const ParsedSegment& segment,
                                       const ExtractedValues& values) {
  LineKind k = inner_.Classify(segment, values);
  const TemplateLabel* label = filter_.Find(segment.skeleton);
  if (label == nullptr || label->progress) return k;
  const bool progress_kind =
      k.cls == LineClass::kProgress || k.anchor || k.step_header || k.metric_only || k.bar;
  if (!progress_kind) return k;
  k.cls = LineClass::kInfo;
  k.anchor = false;
  k.step_header = false;
  k.metric_only = false;
  k.bar = false;
  ++filter_.report().vetoed_segments;
  return k;
}

bool IsPromoted(const EmbeddingProgressFilter& filter, const ParsedSegment& segment,
                const LineKind& kind) {
  const TemplateLabel* label = filter.Find(segment.skeleton);
  if (label == nullptr || !label->progress || !label->decided_by_embeddings) return false;
  if (segment.fields.empty() || kind.eval || kind.summary) return false;
  if (kind.cls == LineClass::kProgress || kind.cls == LineClass::kError) return false;
  return !(kind.anchor || kind.step_header || kind.metric_only || kind.bar || kind.epoch_header);
}

Result<FilteredScanOutcome> ScanLogWithEmbeddingFilter(
    const text::TextEmbedder& embedder, const std::vector<Exemplar>& exemplars,
    const std::string& path, const FilteredScanOptions& options,
    const std::function<void(const ProgressRecord&)>& sink) {
  FilteredScanOutcome out;
  out.embedder_name = embedder.Name();
  BuiltinLineClassifier builtin;
  // Pass 1: built-in decisions and the template census. A full scan whenever pass 2 is one.
  TemplateCensus census;
  ScanOptions first = options.scan;
  first.classifier = &builtin;
  first.segment_observer = [&](const ParsedSegment& s, const ExtractedValues& v, const LineKind& k,
                               int64_t line_no, uint64_t,
                               std::string_view) { census.Observe(s, v, k, line_no); };
  const bool full = sink || options.collect_candidates;
  if (full) first.allow_reverse = false;
  SM_ASSIGN_OR_RETURN(ScanResult builtin_result, ScanLog(path, first));

  EmbeddingProgressFilter filter(embedder, exemplars, options.filter);
  out.templates = census.Finish();
  out.filter_status = filter.Label(out.templates);
  out.labels = filter.labels();
  if (!out.filter_status.ok()) {
    out.report = filter.report();
    if (sink || options.collect_candidates) {
      // The built-in series for the sink and the built-in candidates (same as the LLM engine's).
      std::deque<ProgressRecord> newest;
      auto keep = [&](const ProgressRecord& r) {
        if (sink) sink(r);
        if (!options.collect_candidates) return;
        newest.push_back(r);
        if (newest.size() > options.max_candidates) newest.pop_front();
      };
      SM_ASSIGN_OR_RETURN(out.scan, ScanLog(path, options.scan, keep));
      out.candidates.assign(newest.begin(), newest.end());
    } else {
      out.scan = std::move(builtin_result);
    }
    return out;
  }

  // Pass 2: gated decisions (same built-in classifier instance: template ids agree).
  GatedLineClassifier gated(builtin, filter);
  ScanOptions second = options.scan;
  second.classifier = &gated;
  std::deque<ProgressRecord> newest;
  auto push = [&](ProgressRecord r) {
    // Records are emitted after a look-ahead window, so arrivals are not strictly in line order.
    auto it = std::upper_bound(
        newest.begin(), newest.end(), r.line_no,
        [](int64_t line_no, const ProgressRecord& x) { return line_no < x.line_no; });
    newest.insert(it, std::move(r));
    if (newest.size() > options.max_candidates) newest.pop_front();
  };
  if (options.collect_candidates) {
    second.segment_observer = [&](const ParsedSegment& s, const ExtractedValues&, const LineKind& k,
                                  int64_t line_no, uint64_t offset, std::string_view physical) {
      if (!IsPromoted(filter, s, k)) return;
      ++filter.report().promoted_segments;
      ProgressRecord r;
      r.line_no = line_no;
      r.offset = offset;
      r.line.assign(physical.substr(0, options.scan.tracker.max_stored_line));
      r.segment.assign(s.text.substr(0, options.scan.tracker.max_stored_line));
      r.template_id = k.family;
      r.format = "embeddings-filter";
      push(std::move(r));
    };
  }
  std::function<void(const ProgressRecord&)> keep;
  if (sink || options.collect_candidates) {
    keep = [&](const ProgressRecord& r) {
      if (sink) sink(r);
      if (options.collect_candidates) push(r);
    };
  }
  SM_ASSIGN_OR_RETURN(out.scan, ScanLog(path, second, keep));
  out.candidates.assign(newest.begin(), newest.end());
  out.report = filter.report();
  return out;
}

std::string FilterLabel(const Status& filter_status, std::string_view embedder_name) {
  if (filter_status.ok()) return fmt::format("embeddings ({})", embedder_name);
  const bool rejected = filter_status.code() == StatusCode::kDataLoss ||
                        filter_status.code() == StatusCode::kInvalidArgument;
  return fmt::format("builtin (embeddings {}: {})", rejected ? "answer rejected" : "unavailable",
                     ShortCause(filter_status));
}

}  // namespace schedmate::tracker
