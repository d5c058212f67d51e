#pragma once
// EmbeddingProgressFilter: stage 1 of the tracker (which lines are training progress) decided
// with text embeddings of LINE SHAPES instead of the built-in prototypes — the "(or server
// embeddings)" alternative of the SchedMate paper's two-stage tracker.
//
// Rationale. A log has few distinct line shapes (templates) and many lines, so embedding every
// line would cost one vector per line for no information gain. The filter embeds each template
// once — a template is a line-parser skeleton (the masked layout of a line; lines differing only
// in values share it), embedded as the LineShape() of its newest line, e.g. "epoch <*> step
// #/# loss=#.#" — caches vectors per shape text within a run, and labels it by its nearest
// labelled exemplars. Exemplars are (a) a small general set of progress / non-progress line
// shapes kept in config/tracker_exemplars.txt (compiled in) and (b) self-labels: templates of the
// SAME log the built-in classifier is sure about (see TemplateStats::Confident), so the vectors
// adapt to the log's own vocabulary.
//
// The rule for one embedded template t (vector v):
//   a self-labelled template (the built-in is sure, TemplateStats::Confident) keeps that label:
//   it is an exemplar, not a question (options.judge_confident judges it too, leaving itself out);
//   otherwise neighbours = all exemplars, ranked by cosine with v (ties: static exemplars in file
//   order, then self-labels in ascending skeleton). The k best (k = options.k) vote with weight
//   max(cosine, 0): S_progress vs S_other. progress iff S_progress > S_other; other iff
//   S_other > S_progress; an exact tie, or a best cosine below options.min_similarity, keeps the
//   built-in majority label of t ("unsure"). Templates that were not embedded (beyond the
//   budget) keep the built-in decision.
// Bounded work: at most options.max_templates templates embedded per run (priority: templates
// with built-in progress lines, then other templates carrying values, then value-less templates
// that only serve as self-labels; newest last line first within each group), in requests of at
// most options.batch texts.
// Vectors: every vector of a run must have one dimension (first vector fixes it; a mismatch is
// kDataLoss), one vector per input, no empty or non-finite vector; vectors are L2-normalised.
// Any failure is returned as a Status; ScanLogWithEmbeddingFilter then falls back to the
// built-in result and says why.
//
// How the labels are used (GatedLineClassifier, ScanLogWithEmbeddingFilter):
//   * a template labelled "other" vetoes built-in progress decisions on its lines (anchor, step
//     header, metric-only, bar become plain info); context lines (epoch headers, summaries, eval
//     markers) are untouched, so record assembly keeps working;
//   * a template the vote labelled "progress" whose lines the built-in did not take (and that carry
//     values, are not evaluation output and not errors) is PROMOTED: its lines become stage-2
//     candidates for the LLM (built-in extraction cannot read values it did not recognise, so
//     with --engine builtin the filter can only veto).
//
// Deterministic given the embedder. Not thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "text/text_embedder.h"
#include "tracker/line_classifier.h"
#include "tracker/log_scan.h"
#include "tracker/progress_record.h"

namespace schedmate::tracker {

struct Exemplar {
  bool progress = false;
  std::string text;    // as written (masked before embedding)
  std::string source;  // "config/tracker_exemplars.txt:14", "FILE:3"
};

// Parses exemplar text ("progress|other <whitespace> line", '#' comments, blank lines).
// `source` names the file in errors: kInvalidArgument "SOURCE:LINE: ...".
Result<std::vector<Exemplar>> ParseExemplars(std::string_view text, std::string_view source);
// config/tracker_exemplars.txt as compiled in.
std::string_view BuiltinExemplarText();
// The compiled-in exemplars (parsed once; the file is checked at build time by the tests).
const std::vector<Exemplar>& BuiltinExemplars();

// The shape a line is embedded as: text::TemplateMiner::MaskTokens joined by single spaces.
std::string LineShape(std::string_view line);

// What the built-in pass saw of one template (a line-parser skeleton).
struct TemplateStats {
  uint64_t key = 0;   // ParsedSegment::skeleton
  int family = -1;    // the Drain family of its newest line (for display)
  std::string shape;  // LineShape() of its newest line (at most 512 bytes of it)
  int64_t lines = 0;
  int64_t progress_lines = 0;  // built-in class progress
  int64_t strong_lines = 0;    // progress lines with a loss, step time or throughput
  int64_t valued_lines = 0;    // lines with at least one parsed value
  int64_t eval_lines = 0;
  int64_t error_lines = 0;
  int64_t last_line = 0;
  // The built-in majority: more than half of the lines were progress.
  bool BuiltinProgress() const { return 2 * progress_lines > lines; }
  // Self-label when the built-in is sure (>= 2 lines): every line progress with a strong metric
  // -> progress; no line progress and every line evaluation output or value-less -> other.
  std::optional<bool> Confident() const;
};

// Collects TemplateStats from a MetricTracker's segment observer (census of the built-in pass).
// At most kMaxTemplates distinct templates are tracked (memory stays bounded on logs where
// every line has its own shape); later new ones are only counted and keep the built-in decision.
class TemplateCensus {
 public:
  static constexpr size_t kMaxTemplates = 20000;
  void Observe(const ParsedSegment& segment, const ExtractedValues& values, const LineKind& kind,
               int64_t line_no);
  // The templates by ascending key, with their shapes.
  std::vector<TemplateStats> Finish() const;
  uint64_t untracked_segments() const { return untracked_; }

 private:
  std::map<uint64_t, TemplateStats> by_key_;
  std::map<uint64_t, std::string> newest_;  // newest line text per key
  uint64_t untracked_ = 0;
};

struct EmbeddingFilterOptions {
  size_t max_templates = 64;     // templates embedded per run (self-labels included)
  size_t batch = 64;             // texts per embedding request (>= 1)
  size_t k = 5;                  // neighbours that vote
  float min_similarity = 0.1f;   // best cosine below this: unsure, the built-in label stays
  bool self_label = true;        // use the log's confident templates as exemplars
  bool judge_confident = false;  // also relabel self-labelled templates (leave-one-out kNN)
};

struct TemplateLabel {
  bool progress = false;
  bool decided_by_embeddings = false;  // false: tie/unsure, the built-in label was kept
  float score_progress = 0;
  float score_other = 0;
  std::string nearest;  // source of the most similar exemplar
};

struct FilterReport {
  int requests = 0;           // embedding requests (batches) sent
  size_t texts_embedded = 0;  // distinct texts (exemplars + templates)
  size_t templates = 0;       // templates seen by the census
  size_t templates_embedded = 0;
  size_t self_labels = 0;  // templates the built-in was sure about (exemplars)
  size_t decided = 0;      // templates labelled by the kNN vote
  size_t labelled_progress = 0;
  size_t labelled_other = 0;
  size_t unsure = 0;
  size_t dimension = 0;
  uint64_t vetoed_segments = 0;    // built-in progress lines the filter turned down
  uint64_t promoted_segments = 0;  // lines the filter added as stage-2 candidates
};

class EmbeddingProgressFilter {
 public:
  // `embedder` must outlive the filter: text::HashedTfIdfEmbedder (offline) or
  // llm::ServerTextEmbedder; its Name() goes into the filter label.
  EmbeddingProgressFilter(const text::TextEmbedder& embedder, std::vector<Exemplar> exemplars,
                          EmbeddingFilterOptions options = {});

  // Embeds and labels `templates` per the rule above. Errors: the embedder's; kDataLoss for a
  // wrong vector count, an empty or non-finite vector, or a dimension mismatch;
  // kInvalidArgument when the exemplars lack either label.
  Status Label(const std::vector<TemplateStats>& templates);

  // The label of a template (skeleton), or null when it was not embedded (the built-in decides).
  const TemplateLabel* Find(uint64_t key) const;
  const std::map<uint64_t, TemplateLabel>& labels() const { return labels_; }
  FilterReport& report() { return report_; }
  const FilterReport& report() const { return report_; }

 private:
  // Vectors of `texts` (unit length) from the cache or the embedder, batched.
  Status EmbedAll(const std::vector<std::string>& texts);

  const text::TextEmbedder& embedder_;
  std::vector<Exemplar> exemplars_;
  EmbeddingFilterOptions options_;
  std::map<std::string, std::vector<float>> cache_;  // shape text -> unit vector
  std::map<uint64_t, TemplateLabel> labels_;
  FilterReport report_;
};

// The built-in classifier's decisions with the filter's vetoes applied (see the file comment).
class GatedLineClassifier final : public LineClassifier {
 public:
  // Both must outlive the classifier.
  GatedLineClassifier(LineClassifier& inner, EmbeddingProgressFilter& filter)
      : inner_(inner), filter_(filter) {}
  std::string_view Name() const override { return "embeddings"; }
  LineKind Classify(const ParsedSegment& segment, const ExtractedValues& values) override;

 private:
  LineClassifier& inner_;
  EmbeddingProgressFilter& filter_;
};

// True when the filter promotes a line the built-in classified as `kind` (see file comment).
bool IsPromoted(const EmbeddingProgressFilter& filter, const ParsedSegment& segment,
                const LineKind& kind);

struct FilteredScanOptions {
  ScanOptions scan;
  EmbeddingFilterOptions filter;
  bool collect_candidates = false;  // gather stage-2 candidates (records + promoted lines)
  size_t max_candidates = 512;      // newest candidates kept
};

struct FilteredScanOutcome {
  ScanResult scan;       // the gated pass; the built-in pass when the filter failed
  Status filter_status;  // not OK: the filter failed and `scan` is the built-in result
  FilterReport report;
  std::string embedder_name;
  // Stage-2 candidates in line order (oldest first): gated training records and promoted lines
  // (a promoted line is a record with no values and format "embeddings-filter").
  std::vector<ProgressRecord> candidates;
  // The census and the labels (for explanations; labels only of embedded templates).
  std::vector<TemplateStats> templates;
  std::map<uint64_t, TemplateLabel> labels;
};

// Pass 1: the built-in scan with a template census. Then the filter labels the templates.
// Pass 2: the scan again with GatedLineClassifier over the same built-in classifier (so template
// ids agree). `sink` receives the final pass's training records (on a filter failure, those of a
// built-in pass). Errors: the file's (kNotFound, kInvalidArgument); filter failures are reported
// in filter_status, never as an error.
Result<FilteredScanOutcome> ScanLogWithEmbeddingFilter(
    const text::TextEmbedder& embedder, const std::vector<Exemplar>& exemplars,
    const std::string& path, const FilteredScanOptions& options,
    const std::function<void(const ProgressRecord&)>& sink = {});

// "embeddings (NAME)" after success; "builtin (embeddings unavailable: <cause>)" or
// "builtin (embeddings answer rejected: <cause>)" after a failure (same split as llm/engine.h).
std::string FilterLabel(const Status& filter_status, std::string_view embedder_name);

}  // namespace schedmate::tracker
