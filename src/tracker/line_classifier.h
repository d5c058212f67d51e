#pragma once
// LineClassifier: decides what a log segment is (progress / error / warning / info / other) and
// how the tracker should use it (a progress line with its own counter, an epoch header giving
// context, a metrics-only line belonging to a multi-line record, evaluation output, a summary).

#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/hashed_tfidf.h"
#include "text/template_miner.h"
#include "tracker/line_parser.h"
#include "tracker/progress_record.h"

namespace schedmate::tracker {

enum class LineClass : uint8_t { kProgress, kError, kWarning, kInfo, kOther };
inline constexpr int kLineClassCount = 5;
std::string_view LineClassName(LineClass c);

struct LineKind {
  LineClass cls = LineClass::kOther;
  bool eval = false;          // evaluation / validation / prediction output or phase header
  bool summary = false;       // run or epoch summary (updates context, is not a record)
  bool anchor = false;        // training progress with its own counter, or a progress bar
  bool step_header = false;   // step counter without metrics (values follow on indented lines)
  bool epoch_header = false;  // epoch counter only: context for the lines that follow
  bool metric_only = false;   // training metrics without a counter
  bool bar = false;           // tqdm / Keras progress bar with a counter
  bool checkpoint = false;    // checkpoint save/load message
  int family = -1;            // template cluster (Drain) id
  float confidence = 0;       // prototype similarity of the chosen class (0 when structural)
};

class LineClassifier {
 public:
  virtual ~LineClassifier() = default;
  virtual std::string_view Name() const = 0;
  // `values` are the extractor's reading of the same segment.
  virtual LineKind Classify(const ParsedSegment& segment, const ExtractedValues& values) = 0;
};

// Rationale: progress is decided structurally (a counter plus a training metric, or a progress
// bar), because that is what the definition of a progress line is and it holds across formats.
// Everything else is scored against category prototypes of hashed TF-IDF features (built once
// from generic example lines written for this engine) with small boosts from lexical cues, so
// unfamiliar error and warning formats still land in the right class. Results that depend only
// on the line's template are cached per template (skeleton hash); templates are also clustered
// Drain-style into families. Deterministic. Not thread-safe.
class BuiltinLineClassifier final : public LineClassifier {
 public:
  BuiltinLineClassifier();
  std::string_view Name() const override { return "builtin"; }
  LineKind Classify(const ParsedSegment& segment, const ExtractedValues& values) override;

  // Prototype scores of a free text line (for tests and diagnostics), indexed by LineClass.
  std::vector<float> PrototypeScores(std::string_view text);
  const text::TemplateMiner& miner() const { return miner_; }

 private:
  struct Cached {
    LineClass text_class = LineClass::kOther;
    float confidence = 0;
    int family = -1;
  };
  Cached Score(const ParsedSegment& segment);
  static std::vector<std::string> StructuralTokens(const ParsedSegment& segment);

  text::HashedTfIdf tfidf_;
  text::PrototypeSet protos_{kLineClassCount};
  text::TemplateMiner miner_;
  LineParser seed_parser_;
  std::unordered_map<uint64_t, Cached> cache_;
};

}  // namespace schedmate::tracker
