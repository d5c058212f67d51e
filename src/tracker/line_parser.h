#pragma once
// LineParser: the lexical front end of the tracker. Turns one log segment (one physical line, or
// one carriage-return state of a progress-bar line) into typed fields: numbers, fractions
// ("120/1000"), durations ("1:23:27", "7s", "0.0min"), rates ("6.79it/s", "12.53 steps/s"),
// percentages, each with the key phrase that names it ("Train Loss", "global_step", "lr").
// Timestamps, dates and "file.py:123" locations are masked, never read as values.
//
// Rationale: training logs differ wildly in layout but agree on a small vocabulary (loss, lr,
// step, epoch, it/s...) and on a few lexical shapes (key=value, key: value, "key value |",
// JSON/dict, tqdm/Keras bars). The parser reads the shapes generically; key phrases are then
// mapped to roles by word content (role analysis), not by per-framework rules.
//
// Fast path: role analysis depends only on the line's template (the text with every number
// masked and whitespace runs collapsed), so it is cached per template hash ("skeleton"); later
// lines of the same format are parsed by position. A format change gives a new skeleton and is
// analysed (learned) again. The cache is bounded.
//
// Thread-safety: a LineParser holds the cache; use one per thread. Parse() never reads outside
// the segment and accepts arbitrary bytes.

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schedmate::tracker {

enum class ValueKind : uint8_t { kNumber, kFraction, kDuration, kPercent };

// What a value's printed unit says about it.
enum class Unit : uint8_t {
  kNone,
  kSeconds,      // a duration; Field::value already in seconds
  kRate,         // items per second (Field::noun says which items)
  kTimePerItem,  // seconds per item (value already in seconds)
  kOther,        // a unit we recognise but do not use (GB, M, ...)
};

// The items a rate counts.
enum class RateNoun : uint8_t { kNone, kIt, kStep, kBatch, kSample, kToken, kImage };

// What a field means for training progress. Assigned by role analysis.
enum class Role : uint8_t {
  kNone,
  kStep,         // iteration / step / update counter (value; total for fractions)
  kEpoch,        // epoch counter
  kLoss,         // a training loss (primary or component)
  kLr,           // learning rate
  kStepTime,     // seconds per step
  kThroughput,   // items per second
  kEta,          // remaining time, seconds
  kElapsed,      // elapsed / wall time (not used as a metric)
  kPercent,      // progress percentage
  kMetric,       // another known training metric (accuracy, grad norm, kl, reward, ...)
  kTotalSteps,   // a configured total ("Total optimization steps = 500", "max_steps")
  kTotalEpochs,  // "Num Epochs = 3", "max_epochs: 10"
};

struct Field {
  uint32_t key_begin = 0, key_end = 0;      // key phrase span; empty when unkeyed
  uint32_t value_begin = 0, value_end = 0;  // printed value span (for fraction: both numbers)
  uint32_t unit_begin = 0, unit_end = 0;    // printed unit span ("it/s"); empty when none
  double value = 0;                         // seconds for durations and time-per-item
  double total = 0;                         // denominator of a fraction
  ValueKind kind = ValueKind::kNumber;
  Unit unit = Unit::kNone;
  RateNoun noun = RateNoun::kNone;
  bool integer = false;       // printed without a decimal point or exponent
  bool bar_fraction = false;  // unkeyed fraction that belongs to a progress bar
  bool eta_position = false;  // tqdm "[elapsed<remaining" remaining slot
  bool after_epoch = false;   // unkeyed fraction right after an epoch value ("Epoch [1][50/500]")
  bool post_key = false;      // key is the word after the value ("4312 updates")
  bool it_suffix = false;     // "1234it": a tqdm count without a total
  bool abbreviated = false;   // a count printed with a K/M multiplier ("50K"), value expanded
  // Role analysis:
  Role role = Role::kNone;
  int8_t rank = 0;                // preference among fields of one role; higher wins
  bool eval = false;              // key says validation/evaluation/test ("val_loss")
  bool avg = false;               // key says running average ("avg", "average", "running")
  bool counts_as_metric = false;  // a training metric that makes a counter line progress
};

// Segment-level flags (bitmask).
enum SegmentFlag : uint32_t {
  kFlagTqdmBar = 1u << 0,     // "NN%|████  | a/b [..]"
  kFlagKerasBar = 1u << 1,    // "a/b [====>....]"
  kFlagEvalTag = 1u << 2,     // an eval/validation/test word outside metric keys
  kFlagTrainTag = 1u << 3,    // "train"/"training" outside metric keys
  kFlagSummary = 1u << 4,     // run/epoch summary (runtime, train_* aggregates, "summary")
  kFlagCheckpoint = 1u << 5,  // checkpoint / save / load message
  kFlagError = 1u << 6,       // error words (error, exception, traceback, fatal, ...)
  kFlagWarning = 1u << 7,     // warning words
  kFlagIndented = 1u << 8,    // starts with whitespace
  kFlagJson = 1u << 9,        // JSON / python-dict record
  kFlagKeyEquals = 1u << 10,  // key=value pairs
  kFlagPipes = 1u << 11,      // '|' separated columns
  kFlagHasTimestamp = 1u << 12,
  kFlagInfoLevel = 1u << 13,  // "INFO" level word
  kFlagTraceback = 1u << 14,  // Python traceback frame or header
  kFlagEvalHeader =
      1u << 15,  // eval words that announce an eval phase ("Evaluating", "Running Evaluation")
  kFlagTable = 1u << 16,        // columns matched against a learned table header
  kFlagSetupBar = 1u << 17,     // a bar of setup/IO work ("Loading checkpoint shards", "Map")
  kFlagKnownFormat = 1u << 19,  // rewritten from a positional format (config/tracker_formats.yaml)
  kFlagEvalKeyTag = 1u << 18,   // an eval word in the key of a value with no role ("Testing net
                                // (#0)"): the line is about evaluation unless it measures training
};

struct ParsedSegment {
  std::string_view text;
  std::vector<Field> fields;
  uint32_t flags = 0;
  uint64_t skeleton = 0;    // hash of the masked template
  double timestamp_s = -1;  // seconds (epoch-based when a date is printed), -1 when none
  int template_id = -1;     // id of the learned template in this parser
  bool has_digit = false;
};

// Role analysis of one key phrase (exposed for tests). `words` are lower-case.
struct KeyRole {
  Role role = Role::kNone;
  int8_t rank = 0;
  bool eval = false;
  bool avg = false;
  bool counts_as_metric = false;
  RateNoun noun = RateNoun::kNone;  // for rates named by the key ("samples_per_second")
  bool millis = false;              // key says the value is in ms ("time (ms)")
};

class LineParser {
 public:
  explicit LineParser(size_t max_templates = 8192) : max_templates_(max_templates) {}

  // Parses `segment` into `out` (whose storage is reused). `out.text` views `segment`.
  void Parse(std::string_view segment, ParsedSegment& out);

  // Number of distinct templates learned and cache hits (for stats and tests).
  size_t TemplateCount() const { return cache_.size(); }
  uint64_t CacheHits() const { return hits_; }
  uint64_t CacheMisses() const { return misses_; }

  // Splits a key phrase into lower-case words (snake_case, camelCase, '/', '-', spaces).
  static void KeyWords(std::string_view key, std::vector<std::string_view>& scratch_views,
                       std::string& scratch);
  static KeyRole AnalyzeKey(std::string_view key, const Field& field);
  // Field `idx` (a percentage) is a share of a resource or quantity ("mfu 30%", "gpu_util 97%",
  // "30.12GiB(38.04%)"), not training progress.
  static bool IsShareOfSomething(const ParsedSegment& seg, size_t idx);

 private:
  struct TemplateInfo {
    std::vector<KeyRole> roles;  // one per field, in order
    uint32_t word_flags = 0;
    int id = 0;
  };
  void Lex(std::string_view s, ParsedSegment& out);
  void Analyze(ParsedSegment& out, TemplateInfo& info);
  static void ApplyRoles(const TemplateInfo& info, ParsedSegment& out);

  size_t max_templates_;
  std::unordered_map<uint64_t, TemplateInfo> cache_;
  int next_template_id_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace schedmate::tracker
