#include "tracker/line_parser.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "text/hash.h"
#include "tracker/vocabulary.h"

namespace schedmate::tracker {
namespace {

inline bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(unsigned char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
inline bool IsWordChar(unsigned char c) {
  return IsAlpha(c) || IsDigit(c) || c == '_' || c >= 0x80;
}
inline bool IsSpace(unsigned char c) { return c == ' ' || c == '\t'; }
inline char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

constexpr uint64_t kFnvOffset = text::kFeatureHashBasis;
constexpr uint64_t kFnvPrime = text::kFnv1aPrime;
inline void Mix(uint64_t& h, unsigned char c) {
  h ^= c;
  h *= kFnvPrime;
}

bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (Lower(s[i]) != lower[i]) return false;
  }
  return true;
}

// days since 1970-01-01 for a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct UnitInfo {
  Unit unit = Unit::kNone;
  RateNoun noun = RateNoun::kNone;
  double scale = 1.0;  // multiply the value by this (to seconds for time units)
  bool known = false;
};

RateNoun NounOf(std::string_view w) {
  static constexpr std::pair<std::string_view, RateNoun> kNouns[] = {
      {"it", RateNoun::kIt},
      {"its", RateNoun::kIt},
      {"iter", RateNoun::kIt},
      {"iters", RateNoun::kIt},
      {"iteration", RateNoun::kIt},
      {"iterations", RateNoun::kIt},
      {"step", RateNoun::kStep},
      {"steps", RateNoun::kStep},
      {"update", RateNoun::kStep},
      {"updates", RateNoun::kStep},
      {"batch", RateNoun::kBatch},
      {"batches", RateNoun::kBatch},
      {"sample", RateNoun::kSample},
      {"samples", RateNoun::kSample},
      {"seq", RateNoun::kSample},
      {"seqs", RateNoun::kSample},
      {"sequences", RateNoun::kSample},
      {"ex", RateNoun::kSample},
      {"examples", RateNoun::kSample},
      {"example", RateNoun::kSample},
      {"token", RateNoun::kToken},
      {"tokens", RateNoun::kToken},
      {"tok", RateNoun::kToken},
      {"toks", RateNoun::kToken},
      {"word", RateNoun::kToken},
      {"words", RateNoun::kToken},
      {"img", RateNoun::kImage},
      {"imgs", RateNoun::kImage},
      {"image", RateNoun::kImage},
      {"images", RateNoun::kImage},
  };
  for (const auto& [name, noun] : kNouns) {
    if (EqualsLower(w, name)) return noun;
  }
  return RateNoun::kNone;
}

double TimeScale(std::string_view w) {
  static constexpr std::pair<std::string_view, double> kTimes[] = {
      {"s", 1},        {"sec", 1},      {"secs", 1},     {"second", 1}, {"seconds", 1},
      {"ms", 1e-3},    {"msec", 1e-3},  {"us", 1e-6},    {"min", 60},   {"mins", 60},
      {"minute", 60},  {"minutes", 60}, {"m", 60},       {"h", 3600},   {"hr", 3600},
      {"hrs", 3600},   {"hour", 3600},  {"hours", 3600}, {"d", 86400},  {"day", 86400},
      {"days", 86400},
  };
  for (const auto& [name, scale] : kTimes) {
    if (w == name) return scale;  // case-sensitive: "M" is mega, "m" minutes
  }
  if (EqualsLower(w, "sec") || EqualsLower(w, "secs") || EqualsLower(w, "seconds")) return 1;
  return 0;
}

// Classifies a unit text such as "it/s", "s/it", "ms/step", "steps/s", "min", "GB".
UnitInfo ClassifyUnit(std::string_view u) {
  UnitInfo info;
  if (u.empty()) return info;
  size_t slash = u.find('/');
  if (slash != std::string_view::npos) {
    std::string_view a = u.substr(0, slash), b = u.substr(slash + 1);
    double ta = TimeScale(a), tb = TimeScale(b);
    if (tb > 0 && (ta == 0)) {  // noun per time: a rate
      RateNoun n = NounOf(a);
      if (n == RateNoun::kNone) return info;
      info.unit = Unit::kRate;
      info.noun = n;
      info.scale = 1.0 / tb;
      info.known = true;
      return info;
    }
    if (ta > 0 && tb == 0) {  // time per noun
      RateNoun n = NounOf(b);
      if (n == RateNoun::kNone) return info;
      info.unit = Unit::kTimePerItem;
      info.noun = n;
      info.scale = ta;
      info.known = true;
      return info;
    }
    return info;
  }
  double t = TimeScale(u);
  if (t > 0) {
    info.unit = Unit::kSeconds;
    info.scale = t;
    info.known = true;
    return info;
  }
  static constexpr std::string_view kOther[] = {"B", "KB",  "MB",  "GB",  "TB",  "K",      "M",
                                                "G", "T",   "KiB", "MiB", "GiB", "kB",     "x",
                                                "W", "MHz", "GHz", "C",   "B/s", "TFLOPS", "iB"};
  for (auto o : kOther) {
    if (u == o) {
      info.unit = Unit::kOther;
      info.known = true;
      return info;
    }
  }
  return info;
}

// The multiplier of a count abbreviation attached to a number ("50K", "2M", "1.5k"), else 0.
// "G", "T" and "B" are left alone: in training logs they are memory sizes more often than counts.
double CountAbbreviation(std::string_view u) {
  if (u == "K" || u == "k") return 1e3;
  if (u == "M") return 1e6;
  return 0;
}

bool InSet(std::string_view w, std::initializer_list<std::string_view> set) {
  for (auto s : set) {
    if (w == s) return true;
  }
  return false;
}

// The word lists (config/tracker_vocabulary.yaml).
const Vocabulary& V() { return Vocabulary::Builtin(); }

bool InSet(std::string_view w, const WordList& list) { return list.Contains(w); }

}  // namespace

void LineParser::KeyWords(std::string_view key, std::vector<std::string_view>& views,
                          std::string& scratch) {
  views.clear();
  scratch.clear();
  scratch.reserve(key.size() * 2 + 8);
  // Build lower-case words separated by NUL in scratch; split on non-alnum and camelCase.
  std::vector<std::pair<size_t, size_t>> spans;
  size_t i = 0;
  const size_t n = key.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (!(IsAlpha(c) || IsDigit(c) || c >= 0x80)) {
      ++i;
      continue;
    }
    size_t start = scratch.size();
    bool digits = IsDigit(c);
    scratch.push_back(Lower(key[i]));
    ++i;
    while (i < n) {
      unsigned char d = static_cast<unsigned char>(key[i]);
      if (!(IsAlpha(d) || IsDigit(d) || d >= 0x80)) break;
      if (d >= 0x80 || c >= 0x80) {
        // keep multibyte runs together
      } else if (IsDigit(d) != digits && !(IsDigit(d) && IsAlpha(c))) {
        break;  // letters followed by digits stay together ("pal1", "avg50"); digits then letters
                // split
      } else if (d >= 'A' && d <= 'Z' && c >= 'a' && c <= 'z') {
        break;  // camelCase boundary
      } else if (d >= 'A' && d <= 'Z' && c >= 'A' && c <= 'Z' && i + 1 < n && key[i + 1] >= 'a' &&
                 key[i + 1] <= 'z') {
        break;  // "GPUMemory" -> GPU, Memory
      }
      scratch.push_back(Lower(key[i]));
      c = d;
      ++i;
    }
    spans.push_back({start, scratch.size() - start});
    scratch.push_back('\0');
  }
  for (auto [s, l] : spans) views.emplace_back(scratch.data() + s, l);
  // Strip trailing digits from letter+digit words for matching ("avg50" -> keep both forms).
}

namespace {

// A key phrase for role analysis: its printed text and its lower-case words (the last 8 at
// most), with the questions the rules ask about them.
struct KeyPhrase {
  std::string_view key;
  const std::vector<std::string_view>& words;

  bool Has(std::initializer_list<std::string_view> set) const {
    for (auto w : words) {
      if (InSet(w, set)) return true;
    }
    return false;
  }
  bool HasAny(const WordList& list) const {
    for (auto w : words) {
      if (list.Contains(w)) return true;
    }
    return false;
  }
  bool HasWord(std::string_view x) const {
    for (auto w : words) {
      if (w == x) return true;
    }
    return false;
  }
};

// The key says evaluation: an eval word, or a metric only evaluation reports ("bleu4" too).
bool KeyIsEval(const KeyPhrase& k) {
  bool eval = k.HasAny(V().eval);
  for (auto w : k.words) {
    size_t e = w.size();
    while (e > 0 && IsDigit(static_cast<unsigned char>(w[e - 1]))) --e;
    if (InSet(w, V().eval_only_metric) || (e > 0 && InSet(w.substr(0, e), V().eval_only_metric))) {
      eval = true;
    }
  }
  return eval;
}

// A key that is the word after its value ("4312 updates", "3 epochs").
void PostKeyRole(const KeyPhrase& k, KeyRole& r) {
  const std::string_view w = k.words.front();
  if (InSet(w, V().epoch)) r.role = Role::kEpoch;
  if (InSet(w, {"step", "steps", "iter", "iters", "iterations", "updates", "batches"})) {
    r.role = Role::kStep;
  }
}

// Rates and times named by the key: "samples_per_second", "SamplesPerSec", "Samples/sec",
// "Tokens/s/device", "wps", "elapsed time per iteration (ms)". Returns whether the key decided.
bool RateRole(const KeyPhrase& k, KeyRole& r) {
  const auto& words = k.words;
  for (size_t q = 0; q < words.size(); ++q) {
    if (words[q] != "per" || q + 1 >= words.size()) continue;
    const std::string_view after = words[q + 1];
    const RateNoun before = q > 0 ? NounOf(words[q - 1]) : RateNoun::kNone;
    if (InSet(after, {"sec", "second", "seconds", "s"}) && before != RateNoun::kNone) {
      r.role = Role::kThroughput;
      r.noun = before;
      r.counts_as_metric = true;
      return true;
    }
    if (NounOf(after) != RateNoun::kNone &&
        (k.HasWord("time") || k.HasWord("latency") || k.HasWord("ms") || k.HasWord("seconds"))) {
      r.role = Role::kStepTime;
      r.millis = k.HasWord("ms");
      r.counts_as_metric = true;
      r.rank = 1;
      return true;
    }
  }
  // "Samples/sec", "Tokens/s/device" (MaxText), "tokens/s/gpu": a noun per second, maybe per
  // device.
  for (size_t q = 0; q + 1 < words.size() && k.key.find('/') != std::string_view::npos; ++q) {
    const RateNoun n = NounOf(words[q]);
    if (n != RateNoun::kNone && InSet(words[q + 1], {"sec", "s"}) &&
        (q + 2 == words.size() ||
         (q + 3 == words.size() && InSet(words[q + 2], {"device", "gpu", "chip", "core"})))) {
      r.role = Role::kThroughput;
      r.noun = n;
      r.counts_as_metric = true;
      return true;
    }
  }
  for (auto w : words) {
    if (w == "wps" || w == "tps" || w == "tokps") {
      r.role = Role::kThroughput;
      r.noun = RateNoun::kToken;
      r.counts_as_metric = true;
      return true;
    }
    if (w == "ups" || w == "sps" || w == "ips") {
      r.role = Role::kThroughput;
      r.noun = w == "ups" ? RateNoun::kStep : (w == "sps" ? RateNoun::kSample : RateNoun::kImage);
      r.rank = -1;
      r.counts_as_metric = true;
      return true;
    }
  }
  return false;
}

// The rank of a loss named by words[first..last] among the losses of a line: "loss" alone and
// "total loss" first, averages and component losses ("loss_cls") after.
int LossRank(const KeyPhrase& k, size_t first, size_t last) {
  const auto& words = k.words;
  const std::string_view w = words[last];
  int rank = 0;
  if (words.size() == 1 && w == "loss") rank += 4;
  for (size_t q = 0; q < words.size(); ++q) {
    const std::string_view x = words[q];
    if (x == w || (q >= first && q <= last)) continue;
    if (x == "total" || x == "overall" || x == "full") {
      rank += 3;
    } else if (InSet(x, V().train)) {
      rank += 1;
    } else if (InSet(x, V().avg)) {
      rank -= 2;
    } else if (InSet(x, V().loss_neutral)) {
    } else {
      rank -= 1;
    }
  }
  return std::max(-100, std::min(100, rank));
}

// Losses: "loss", "*loss", "nll", a loss function's name ("SmoothL1", one or two words). A loss
// setting ("loss_weight", "loss scale") decides the key too: no role.
bool LossRole(const KeyPhrase& k, KeyRole& r) {
  const auto& words = k.words;
  for (size_t q = 0; q < words.size(); ++q) {
    std::string_view w = words[q];
    const size_t first = q;  // the loss's word(s): words[first..q]
    bool lossy = w == "loss" || w == "losses" || w == "nll" || w == "xent" ||
                 (w.size() > 4 && w.substr(w.size() - 4) == "loss") || V().loss_name.Contains(w);
    if (!lossy && q + 1 < words.size()) {
      std::string joined(w);
      joined.append(words[q + 1]);
      lossy = V().loss_name.Contains(joined);
      if (lossy) w = words[++q];  // the pair names one loss: "Smooth"+"L1"
    }
    if (!lossy) continue;
    if (k.HasAny(V().loss_setting)) return true;  // a loss setting, not a loss value
    r.role = Role::kLoss;
    r.counts_as_metric = true;
    r.rank = static_cast<int8_t>(LossRank(k, first, q));
    return true;
  }
  return false;
}

// Learning rate and remaining time.
bool LrOrEtaRole(const KeyPhrase& k, KeyRole& r) {
  if (k.HasWord("lr") || (k.HasWord("learning") && k.HasWord("rate")) ||
      k.HasWord("learningrate")) {
    r.role = Role::kLr;
    r.counts_as_metric = true;
    return true;
  }
  if (k.HasWord("eta") || k.HasWord("remaining") || (k.HasWord("time") && k.HasWord("left"))) {
    r.role = Role::kEta;
    r.counts_as_metric = true;
    return true;
  }
  return false;
}

// Step durations and other times: "seconds: 0.512", "step_avg:148.02ms", "batch_cost", "time",
// "elapsed".
bool TimeRole(const KeyPhrase& k, const Field& field, KeyRole& r) {
  const auto& words = k.words;
  // A key that is only a time unit on a step line ("completed step: 100, seconds: 0.512"
  // (MaxText), "ms: 95.3"): the step's duration.
  if (words.size() == 1 && InSet(words.front(), {"seconds", "secs", "sec", "ms", "msec"}) &&
      field.kind == ValueKind::kNumber && field.unit == Unit::kNone) {
    r.role = Role::kStepTime;
    r.rank = 1;
    r.millis = words.front() == "ms" || words.front() == "msec";
    r.counts_as_metric = true;
    return true;
  }
  // A duration named after a step ("step_avg:148.02ms", "iter_time 0.5s", "updt_s:0.50",
  // "step_ms 120"): time per step, preferred over an unqualified time on the same line (often
  // a cumulative one). A bare value counts when the key ends in a time unit word.
  const bool unit_word = words.size() >= 2 && InSet(words.back(), {"s", "sec", "secs", "ms"});
  if ((field.unit == Unit::kSeconds ||
       (unit_word && field.unit == Unit::kNone && field.kind == ValueKind::kNumber)) &&
      k.Has({"step", "iter", "iteration", "batch", "update", "updt"}) &&
      !k.HasAny(V().step_time_not)) {
    r.role = Role::kStepTime;
    r.rank = 3;
    r.millis = field.unit == Unit::kNone && words.back() == "ms";
    r.counts_as_metric = true;
    return true;
  }
  if (k.HasWord("cost") && k.Has({"batch", "step", "iter", "data", "reader"}) &&
      field.kind == ValueKind::kNumber) {
    // PaddlePaddle's "batch_cost: 0.5123 data_cost: 0.0012": seconds per batch, data wait.
    r.role = k.Has({"data", "reader"}) ? Role::kElapsed : Role::kStepTime;
    r.rank = 2;
    r.counts_as_metric = r.role == Role::kStepTime;
    return true;
  }
  if (k.HasWord("time") || k.HasWord("timer") || k.HasWord("timing") || k.HasWord("dt") ||
      k.HasWord("latency") || k.HasWord("duration")) {
    if (k.HasAny(V().time_not_step)) {
      r.role = Role::kElapsed;
      return true;
    }
    r.role = Role::kStepTime;
    r.millis = k.HasWord("ms");
    r.rank = words.size() == 1 ? 2 : 0;
    if (k.Has({"step", "iter", "batch", "it", "iteration"})) r.rank = 3;
    r.counts_as_metric = true;
    return true;
  }
  if (k.HasAny(V().elapsed)) {
    r.role = Role::kElapsed;
    return true;
  }
  return false;
}

// The rank of a step counter among the counters of a line: global step first, micro steps last.
int8_t StepRank(const KeyPhrase& k, std::string_view head) {
  int rank = 0;
  if (k.HasWord("global") || k.HasWord("gstep")) {
    rank = 5;
  } else if (head == "step" || head == "steps") {
    rank = 4;
  } else if (head.substr(0, 4) == "iter") {
    rank = 3;
  } else if (head == "updates") {
    rank = k.HasWord("num") ? 3 : 2;
  } else if (head == "update") {
    rank = 1;
  } else if (head == "it") {
    rank = 0;
  } else {
    rank = 1;  // batch
  }
  if (k.HasWord("micro")) rank = -2;
  return static_cast<int8_t>(rank);
}

// Counters and configured totals, by the head word (the last word that is not a qualifier):
// "Num Epochs", "max_steps", "epoch", "global_step", "iter".
bool CounterRole(const KeyPhrase& k, KeyRole& r) {
  const auto& words = k.words;
  std::string_view head;
  for (size_t q = words.size(); q-- > 0;) {
    if (!InSet(words[q], V().head_qualifier) && !IsDigit(static_cast<unsigned char>(words[q][0]))) {
      head = words[q];
      break;
    }
  }
  if (head.empty()) return false;
  const bool epoch = InSet(head, V().epoch);
  if ((epoch || InSet(head, V().step)) && InSet(words.front(), V().total_prefix) &&
      !k.HasAny(V().metric) && (words.front() != "num" || epoch)) {
    r.role = epoch ? Role::kTotalEpochs : Role::kTotalSteps;
    return true;
  }
  if (epoch) {
    r.role = Role::kEpoch;
    return true;
  }
  if (InSet(head, V().step) && head != "global" && !k.Has({"skipped", "nan", "inf", "zero"})) {
    r.role = Role::kStep;
    r.rank = StepRank(k, head);
    return true;
  }
  return false;
}

}  // namespace

KeyRole LineParser::AnalyzeKey(std::string_view key, const Field& field) {
  KeyRole r;
  thread_local std::vector<std::string_view> words;
  thread_local std::string scratch;
  KeyWords(key, words, scratch);
  if (words.size() > 8) words.erase(words.begin(), words.end() - 8);
  if (words.empty()) return r;
  const KeyPhrase k{key, words};
  r.eval = KeyIsEval(k);
  r.avg = k.HasAny(V().avg);
  if (field.post_key) {
    PostKeyRole(k, r);
    return r;
  }
  if (RateRole(k, r) || LossRole(k, r) || LrOrEtaRole(k, r) || TimeRole(k, field, r) ||
      CounterRole(k, r)) {
    return r;
  }
  if (k.HasAny(V().metric)) {
    r.role = Role::kMetric;
    r.counts_as_metric = true;
  }
  return r;
}

namespace {

// The integer part of a number token, as first scanned: where it starts (a sign or a leading '.'
// included), where its digits are, and whether ",ddd" thousands groups followed.
struct NumberHead {
  size_t start = 0;      // first character of the token
  size_t int_begin = 0;  // first digit of the integer part
  size_t end = 0;        // after the integer part (and its thousands groups)
  size_t int_digits = 0;
  bool thousands = false;
};

// What follows an integer ("a/b"): nothing, a fraction, or a month/day date ("11/17 11:39:23").
enum class AfterSlash : uint8_t { kNone, kFraction, kMonthDay };

// One pass over a segment: a cursor with the state the tokens share (the pending key phrase, a
// date printed before a clock, the bar seen, the template hash). Run() dispatches on the first
// character of each token: blanks, numbers (dates, clocks, "file.py:12" locations, fractions,
// percentages, units), words (keys, nan/inf, box-drawing bars) and punctuation (separators,
// binders, '|' cells and tqdm bars, '[' Keras bars).
class SegmentLexer {
 public:
  SegmentLexer(std::string_view s, ParsedSegment& out) : s_(s), n_(s.size()), out_(out) {}

  // Inlined into its one caller so that the lexer object can live in registers, as the state of
  // one function would (BM_ParseOnly measured 7% slower when Run() was a call of its own).
  [[gnu::always_inline]] void Run() {
    if (n_ > 0 && IsSpace(U(0))) flags_ |= kFlagIndented;
    while (i_ < n_) {
      const unsigned char c = U(i_);
      if (IsSpace(c)) {
        while (i_ < n_ && IsSpace(U(i_))) ++i_;
        Mix(h_, ' ');
      } else if (IsDigit(c) || NumberSignOrDot(c)) {
        LexNumber();
      } else if (IsWordChar(c) || PathStart(c)) {
        LexWord();
      } else {
        LexPunctuation(c);
      }
    }
    MarkBarCounter();
    out_.flags |= flags_;
    Mix(h_, static_cast<unsigned char>(out_.fields.size() & 0xff));
    out_.skeleton = h_;
  }

 private:
  unsigned char U(size_t k) const { return static_cast<unsigned char>(s_[k]); }
  bool DigitAt(size_t k) const { return k < n_ && IsDigit(U(k)); }
  bool AfterWordChar(size_t k) const { return k > 0 && IsWordChar(U(k - 1)); }

  // "-5", "+1e3", ".5" (not after a word character: "a-5" is a word).
  bool NumberSignOrDot(unsigned char c) const {
    return (c == '-' || c == '+' || c == '.') && DigitAt(i_ + 1) && !AfterWordChar(i_);
  }
  // "/path" or "~user" starts a word.
  bool PathStart(unsigned char c) const {
    return (c == '/' || c == '~') && i_ + 1 < n_ && IsAlpha(U(i_ + 1)) && !AfterWordChar(i_);
  }

  void ClearKey() {
    word_count_ = 0;
    binder_ = false;
  }
  // Moves the pending key phrase (up to its last 8 words) to `f`.
  void TakeKey(Field& f) {
    if (word_count_ > 0) {
      const int first = word_count_ > 8 ? (word_count_ - 8) : 0;
      f.key_begin = word_starts_[static_cast<size_t>(first) % 8];
      f.key_end = key_end_;
    }
    ClearKey();
  }
  void Emit(Field&& f) {
    if (out_.fields.size() >= 256) return;  // cap per segment
    out_.fields.push_back(f);
  }

  // ---- numbers ----
  void LexNumber();
  NumberHead ScanInteger() const;
  bool TryDate(const NumberHead& h);
  bool TryClock(const NumberHead& h);
  bool TrySkipLocation(const NumberHead& h);
  size_t ScanDecimals(const NumberHead& h, bool& integer) const;
  double NumberValue(const NumberHead& h, size_t end) const;
  AfterSlash ScanFraction(const NumberHead& h, Field& f, size_t& k);
  void ReadUnit(Field& f, size_t& k) const;
  void ReadDayClock(Field& f, size_t& k) const;
  void FinishNumber(Field&& f, size_t start, size_t k);
  // ---- words ----
  void LexWord();
  bool TryBoxRun(size_t start, size_t end);
  bool TryNonFinite(std::string_view word, size_t start, size_t end);
  // ---- punctuation ----
  void LexPunctuation(unsigned char c);
  void LexPipe();
  void LexBracket();
  void MarkBarCounter();

  const std::string_view s_;
  const size_t n_;
  ParsedSegment& out_;
  size_t i_ = 0;  // the cursor
  uint64_t h_ = kFnvOffset;
  // Pending key: span of up to the last 8 words since the last hard separator or value.
  std::array<uint32_t, 8> word_starts_{};
  int word_count_ = 0;
  uint32_t key_end_ = 0;
  bool binder_ = false;         // ':' or '=' seen after the pending key
  bool last_was_date_ = false;  // the previous token was a date
  int await_post_key_ = -1;     // unkeyed field that may take the next word as its key
  bool after_percent_ = false;  // the previous token was a percentage ("44%")
  int date_y_ = 0, date_m_ = 0, date_d_ = 0;
  bool have_date_ = false;
  uint32_t flags_ = 0;
  uint32_t tqdm_bar_end_ = 0;
  uint32_t pipe_key_begin_ = 0, pipe_key_end_ = 0;  // key of the previous '|' cell
};

void SegmentLexer::LexNumber() {
  out_.has_digit = true;
  const NumberHead h = ScanInteger();
  if (TryDate(h) || TryClock(h)) return;
  last_was_date_ = false;
  if (TrySkipLocation(h)) return;
  bool integer = true;
  const size_t j = ScanDecimals(h, integer);
  Field f;
  f.value_begin = static_cast<uint32_t>(h.start);
  f.integer = integer;
  f.value = NumberValue(h, j);
  size_t k = j;
  if (ScanFraction(h, f, k) == AfterSlash::kMonthDay) return;
  if (f.kind == ValueKind::kNumber && k < n_ && s_[k] == '%') {
    f.kind = ValueKind::kPercent;
    ++k;
  }
  f.value_end = static_cast<uint32_t>(k);
  if (f.kind == ValueKind::kNumber || f.kind == ValueKind::kFraction) ReadUnit(f, k);
  FinishNumber(std::move(f), h.start, k);
}

NumberHead SegmentLexer::ScanInteger() const {
  NumberHead h;
  h.start = i_;
  size_t j = i_;
  if (s_[j] == '-' || s_[j] == '+') ++j;
  h.int_begin = j;
  while (j < n_ && IsDigit(U(j))) ++j;
  h.int_digits = j - h.int_begin;
  // Thousands separators: 1-3 digits then groups of ",ddd".
  if (h.int_digits >= 1 && h.int_digits <= 3 && h.start == h.int_begin && j < n_ && s_[j] == ',') {
    size_t k = j;
    while (k + 3 < n_ && s_[k] == ',' && IsDigit(U(k + 1)) && IsDigit(U(k + 2)) &&
           IsDigit(U(k + 3)) && (k + 4 >= n_ || (!IsDigit(U(k + 4)) && s_[k + 4] != '.'))) {
      k += 4;
      h.thousands = true;
    }
    if (h.thousands) j = k;
  }
  h.end = j;
  return h;
}

// Date: YYYY-MM-DD or YYYY/MM/DD (maybe followed by 'T' or '_'), kept for the clock after it.
bool SegmentLexer::TryDate(const NumberHead& h) {
  const size_t j = h.end, start = h.start;
  if (h.thousands || h.int_digits != 4 || start != h.int_begin || j + 5 >= n_ ||
      !(s_[j] == '-' || s_[j] == '/') || !IsDigit(U(j + 1)) || !IsDigit(U(j + 2)) ||
      s_[j + 3] != s_[j] || !IsDigit(U(j + 4)) || !IsDigit(U(j + 5))) {
    return false;
  }
  date_y_ = (s_[start] - '0') * 1000 + (s_[start + 1] - '0') * 100 + (s_[start + 2] - '0') * 10 +
            (s_[start + 3] - '0');
  date_m_ = (s_[j + 1] - '0') * 10 + (s_[j + 2] - '0');
  date_d_ = (s_[j + 4] - '0') * 10 + (s_[j + 5] - '0');
  if (date_m_ < 1 || date_m_ > 12) date_m_ = 1;
  if (date_d_ < 1 || date_d_ > 31) date_d_ = 1;
  have_date_ = true;
  i_ = j + 6;
  if (i_ < n_ && (s_[i_] == 'T' || s_[i_] == '_')) ++i_;
  last_was_date_ = true;
  flags_ |= kFlagHasTimestamp;
  Mix(h_, 'D');
  after_percent_ = false;
  return true;
}

// Clock "h:mm[:ss][.fff]": a timestamp (after a date, or a full unbound clock near the start
// or with fractional seconds), else a duration value ("eta: 1:23:27", tqdm's "<01:41" slot).
bool SegmentLexer::TryClock(const NumberHead& h) {
  const size_t j = h.end, start = h.start;
  if (h.thousands || h.int_digits < 1 || h.int_digits > 3 || start != h.int_begin || j + 2 >= n_ ||
      s_[j] != ':' || !IsDigit(U(j + 1)) || !IsDigit(U(j + 2)) || DigitAt(j + 3)) {
    return false;
  }
  double parts[3] = {0, 0, 0};
  int np = 0;
  size_t k = start;
  while (np < 3) {
    double v = 0;
    const size_t d0 = k;
    while (k < n_ && IsDigit(U(k))) v = v * 10 + (s_[k++] - '0');
    if (k == d0) break;
    parts[np++] = v;
    if (np < 3 && k + 2 < n_ && s_[k] == ':' && IsDigit(U(k + 1)) && IsDigit(U(k + 2)) &&
        !DigitAt(k + 3)) {
      ++k;
    } else {
      break;
    }
  }
  double frac = 0;
  if (k + 1 < n_ && (s_[k] == '.' || s_[k] == ',') && IsDigit(U(k + 1))) {
    const size_t f0 = ++k;
    double scale = 0.1;
    while (k < n_ && IsDigit(U(k))) {
      if (k - f0 < 9) frac += (s_[k] - '0') * scale;
      scale *= 0.1;
      ++k;
    }
  }
  const double secs =
      np == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2] + frac : parts[0] * 60 + parts[1] + frac;
  const bool eta_slot = start > 0 && s_[start - 1] == '<';
  const bool is_timestamp =
      !eta_slot && (last_was_date_ || (np == 3 && !binder_ && (frac > 0 || start <= 2)));
  i_ = k;
  last_was_date_ = false;
  after_percent_ = false;
  if (is_timestamp) {
    const double day_secs = np == 3 ? secs : parts[0] * 3600 + parts[1] * 60;
    if (have_date_) {
      out_.timestamp_s = static_cast<double>(DaysFromCivil(date_y_, static_cast<unsigned>(date_m_),
                                                           static_cast<unsigned>(date_d_))) *
                             86400.0 +
                         day_secs;
    } else if (out_.timestamp_s < 0) {
      out_.timestamp_s = day_secs;
    }
    flags_ |= kFlagHasTimestamp;
    Mix(h_, 'T');
    return true;
  }
  Field f;
  TakeKey(f);
  f.kind = ValueKind::kDuration;
  f.unit = Unit::kSeconds;
  f.value = secs;
  f.value_begin = static_cast<uint32_t>(start);
  f.value_end = static_cast<uint32_t>(k);
  f.eta_position = eta_slot;
  Emit(std::move(f));
  Mix(h_, '#');
  await_post_key_ = -1;
  return true;
}

// Masked location "file.py:123" / "module.name:45" / loguru's "{name}:{function}:{line}"
// ("yolox.core.trainer:after_iter:246"): an integer after a dotted word, maybe through more
// colon-joined words. Skipped without a field.
bool SegmentLexer::TrySkipLocation(const NumberHead& h) {
  const size_t start = h.start, j = h.end;
  if (start == 0 || s_[start - 1] != ':' || start != h.int_begin ||
      (j + 1 < n_ && s_[j] == '.' && IsDigit(U(j + 1)))) {
    return false;
  }
  size_t w = start - 1;
  bool dotted = false;
  while (w > 0) {
    const unsigned char p = U(w - 1);
    if (IsWordChar(p) || p == '-' || p == '/') {
      --w;
    } else if (p == ':' && w >= 2 && IsWordChar(U(w - 2))) {
      --w;  // "trainer:after_iter:" — the function between the module and the line
    } else if (p == '.' && w >= 2) {
      dotted = true;
      --w;
    } else {
      break;
    }
  }
  if (!dotted || w >= start - 1) return false;
  i_ = j;
  Mix(h_, '#');
  after_percent_ = false;
  await_post_key_ = -1;
  return true;
}

// Fraction digits ("0.5", "1.") and an exponent ("1e-3"); returns the end of the number.
size_t SegmentLexer::ScanDecimals(const NumberHead& h, bool& integer) const {
  size_t j = h.end;
  if (h.thousands) return j;
  if (j + 1 < n_ && s_[j] == '.' && IsDigit(U(j + 1))) {
    integer = false;
    ++j;
    while (j < n_ && IsDigit(U(j))) ++j;
  } else if (j + 1 < n_ && s_[j] == '.' && h.int_digits > 0 && !IsAlpha(U(j + 1))) {
    integer = false;  // "1." style
    ++j;
  }
  if (j + 1 < n_ && (s_[j] == 'e' || s_[j] == 'E')) {
    size_t k = j + 1;
    if (k < n_ && (s_[k] == '-' || s_[k] == '+')) ++k;
    if (k < n_ && IsDigit(U(k))) {
      while (k < n_ && IsDigit(U(k))) ++k;
      j = k;
      integer = false;
    }
  }
  return j;
}

double SegmentLexer::NumberValue(const NumberHead& h, size_t end) const {
  double value = 0;
  if (h.thousands) {
    for (size_t k = h.int_begin; k < end; ++k) {
      if (IsDigit(U(k))) value = value * 10 + (s_[k] - '0');
    }
    if (h.start != h.int_begin && s_[h.start] == '-') value = -value;
  } else {
    const char* b = s_.data() + h.start + (s_[h.start] == '+' ? 1 : 0);
    auto res = std::from_chars(b, s_.data() + end, value);
    if (res.ec != std::errc()) value = 0;
  }
  return value;
}

// Fraction "a/b" or "a/ b" of integers: sets `f` and moves `k` past the denominator. A
// month/day date ("11/17 11:39:23") is consumed as a date instead (kMonthDay).
AfterSlash SegmentLexer::ScanFraction(const NumberHead& h, Field& f, size_t& k) {
  if (!f.integer || h.int_digits == 0) return AfterSlash::kNone;
  size_t q = k;
  while (q < n_ && IsSpace(U(q))) ++q;
  if (q >= n_ || s_[q] != '/' || q - k > 1) return AfterSlash::kNone;
  ++q;
  while (q < n_ && IsSpace(U(q)) && q - k < 4) ++q;
  if (q >= n_ || !IsDigit(U(q))) return AfterSlash::kNone;
  const size_t d0 = q;
  double tot = 0;
  while (q < n_ && IsDigit(U(q))) tot = tot * 10 + (s_[q++] - '0');
  const bool denom_int = !(q + 1 < n_ && s_[q] == '.' && IsDigit(U(q + 1)));
  if (!denom_int || q - d0 > 12) return AfterSlash::kNone;
  size_t r = q;
  while (r < n_ && IsSpace(U(r))) ++r;
  if (r > q && r + 4 < n_ && IsDigit(U(r)) && IsDigit(U(r + 1)) && s_[r + 2] == ':' &&
      h.int_digits <= 2 && q - d0 <= 2) {
    last_was_date_ = true;
    flags_ |= kFlagHasTimestamp;
    i_ = q;
    Mix(h_, 'D');
    after_percent_ = false;
    return AfterSlash::kMonthDay;
  }
  f.kind = ValueKind::kFraction;
  f.total = tot;
  k = q;
  return AfterSlash::kFraction;
}

// Unit suffix, attached or after one space for rates and seconds ("6.79it/s", "12.53 steps/s",
// "7s", "29ms/step", "50K"); the value is scaled to seconds or items per second.
void SegmentLexer::ReadUnit(Field& f, size_t& k) const {
  size_t u0 = k;
  bool spaced = false;
  if (u0 < n_ && s_[u0] == ' ' && u0 + 1 < n_ && IsAlpha(U(u0 + 1))) {
    ++u0;
    spaced = true;
  }
  size_t u = u0;
  while (u < n_ && IsAlpha(U(u))) ++u;
  if (u > u0 && u < n_ && s_[u] == '/' && u + 1 < n_ && IsAlpha(U(u + 1))) {
    ++u;
    while (u < n_ && IsAlpha(U(u))) ++u;
  }
  if (u == u0 || f.kind != ValueKind::kNumber || DigitAt(u)) return;
  const std::string_view ut = s_.substr(u0, u - u0);
  if (!spaced && f.integer && (ut == "it" || ut == "its")) f.it_suffix = true;
  UnitInfo ui = ClassifyUnit(ut);
  if (const double scale = spaced ? 0 : CountAbbreviation(ut); scale > 0) {
    // "step:50K", "smpl:2M": an abbreviated count is read as the count it stands for.
    ui = UnitInfo();
    f.value *= scale;
    f.integer = std::floor(f.value) == f.value;
    f.abbreviated = true;
    k = u;
  }
  bool accept =
      ui.known &&
      (!spaced || ui.unit == Unit::kRate || ui.unit == Unit::kTimePerItem ||
       (ui.unit == Unit::kSeconds && ut.size() >= 1 && ut != "m" && ut != "h" && ut != "d"));
  if (spaced && ui.unit == Unit::kOther) accept = false;
  if (!accept) return;
  f.unit = ui.unit;
  f.noun = ui.noun;
  f.unit_begin = static_cast<uint32_t>(u0);
  f.unit_end = static_cast<uint32_t>(u);
  if (ui.unit == Unit::kSeconds || ui.unit == Unit::kTimePerItem) {
    f.value *= ui.scale;
    if (ui.unit == Unit::kSeconds) f.kind = ValueKind::kDuration;
  } else if (ui.unit == Unit::kRate) {
    f.value *= ui.scale;
  }
  k = u;
  if (k < n_ && s_[k] == '.' && (k + 1 >= n_ || s_[k + 1] == ' ')) ++k;  // "sec."
  if (ui.unit == Unit::kSeconds && ui.scale == 86400) ReadDayClock(f, k);
}

// "1 day, 2:03:04" (mmengine / datetime.timedelta): the clock after a day count adds to it.
void SegmentLexer::ReadDayClock(Field& f, size_t& k) const {
  size_t q = k;
  if (q < n_ && s_[q] == ',') ++q;
  while (q < n_ && IsSpace(U(q))) ++q;
  double parts[3] = {0, 0, 0};
  int np = 0;
  size_t r = q;
  while (np < 3 && r < n_ && IsDigit(U(r))) {
    double x = 0;
    const size_t d0 = r;
    while (r < n_ && IsDigit(U(r)) && r - d0 < 3) x = x * 10 + (s_[r++] - '0');
    parts[np++] = x;
    if (r < n_ && s_[r] == ':' && np < 3) {
      ++r;
    } else {
      break;
    }
  }
  if (np == 3) {
    f.value += parts[0] * 3600 + parts[1] * 60 + parts[2];
    k = r;
    f.unit_end = static_cast<uint32_t>(r);
  }
}

// Gives the number its key (the pending phrase, or the '|' cell before it) and emits it.
void SegmentLexer::FinishNumber(Field&& f, size_t start, size_t k) {
  TakeKey(f);
  if (f.key_end == 0 && pipe_key_end_ > 0) {
    // Only separators and blanks since the keyed cell.
    bool clean = true;
    for (size_t q = pipe_key_end_; q < start && clean; ++q) {
      clean = s_[q] == ' ' || s_[q] == '\t' || s_[q] == '|' || s_[q] == ':';
    }
    if (clean) {
      f.key_begin = pipe_key_begin_;
      f.key_end = pipe_key_end_;
    }
  }
  pipe_key_end_ = 0;
  const bool unkeyed = f.key_end == 0;
  // The unit's kind is part of the template: "9.45it/s" and "1.74s/it" are read differently
  // (tqdm switches between them within one bar).
  const unsigned char unit_mark =
      static_cast<unsigned char>('a' + static_cast<int>(f.unit) * 8 + static_cast<int>(f.noun));
  Emit(std::move(f));
  after_percent_ = !out_.fields.empty() && out_.fields.back().kind == ValueKind::kPercent;
  await_post_key_ = unkeyed && out_.fields.back().unit == Unit::kNone
                        ? static_cast<int>(out_.fields.size()) - 1
                        : -1;
  i_ = k;
  Mix(h_, '#');
  Mix(h_, unit_mark);
}

// A word: part of the pending key phrase, the key of the value before it ("4312 updates"), a
// nan/inf value, or a run of box-drawing characters (a bar).
void SegmentLexer::LexWord() {
  const size_t start = i_;
  size_t j = i_ + 1;
  while (j < n_) {
    const unsigned char d = U(j);
    if (IsWordChar(d)) {
      ++j;
    } else if ((d == '.' || d == '/' || d == '-' || d == '\\') && j + 1 < n_ &&
               (IsAlpha(U(j + 1)) || s_[j + 1] == '_' || (d != '-' && IsDigit(U(j + 1))))) {
      ++j;
    } else {
      break;
    }
  }
  const std::string_view word = s_.substr(start, j - start);
  if (TryBoxRun(start, j)) return;
  for (char ch : word) {
    if (!IsDigit(static_cast<unsigned char>(ch))) Mix(h_, static_cast<unsigned char>(ch));
  }
  if (TryNonFinite(word, start, j)) return;
  if (await_post_key_ >= 0 && word_count_ == 0 && start > 0 && IsSpace(U(start - 1))) {
    Field& f = out_.fields[static_cast<size_t>(await_post_key_)];
    if (f.key_end == 0) {
      f.key_begin = static_cast<uint32_t>(start);
      f.key_end = static_cast<uint32_t>(j);
      f.post_key = true;
    }
  }
  await_post_key_ = -1;
  if (binder_) ClearKey();  // "a: b: 1" -> key "b"
  word_starts_[static_cast<size_t>(word_count_) % 8] = static_cast<uint32_t>(start);
  ++word_count_;
  key_end_ = static_cast<uint32_t>(j);
  last_was_date_ = false;
  after_percent_ = false;
  i_ = j;
}

// A run of box-drawing/block characters (rich, Keras 3 bars: U+2500..U+259F).
bool SegmentLexer::TryBoxRun(size_t start, size_t end) {
  const std::string_view word = s_.substr(start, end - start);
  if (word.size() < 9 || static_cast<unsigned char>(word[0]) != 0xE2 || word.size() % 3 != 0) {
    return false;
  }
  for (size_t q = 0; q < word.size(); q += 3) {
    const unsigned char b1 = static_cast<unsigned char>(word[q + 1]);
    if (static_cast<unsigned char>(word[q]) != 0xE2 || b1 < 0x94 || b1 > 0x96) return false;
  }
  flags_ |= kFlagTqdmBar;
  if (!out_.fields.empty() && out_.fields.back().kind == ValueKind::kFraction &&
      out_.fields.back().key_end == 0 && out_.fields.back().value_end + 1 >= start) {
    out_.fields.back().bar_fraction = true;  // "938/938 ━━━━" (Keras 3)
  } else if (tqdm_bar_end_ == 0) {
    tqdm_bar_end_ = static_cast<uint32_t>(end);  // "Epoch 3/9 ━━━━ 938/938" (rich)
  }
  Mix(h_, '|');
  ClearKey();
  await_post_key_ = -1;
  i_ = end;
  return true;
}

// nan / inf as values after a key.
bool SegmentLexer::TryNonFinite(std::string_view word, size_t start, size_t end) {
  if (word_count_ == 0) return false;
  const bool nan = EqualsLower(word, "nan");
  if (!nan && !EqualsLower(word, "inf") && !EqualsLower(word, "infinity")) return false;
  Field f;
  TakeKey(f);
  f.value =
      nan ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  if (start > 0 && s_[start - 1] == '-') f.value = -f.value;
  f.value_begin = static_cast<uint32_t>(start);
  f.value_end = static_cast<uint32_t>(end);
  Emit(std::move(f));
  await_post_key_ = -1;
  i_ = end;
  return true;
}

// Separators end the pending key; ':' and '=' bind it to the value that follows.
void SegmentLexer::LexPunctuation(unsigned char c) {
  Mix(h_, c);
  switch (c) {
    case ',':
    case ';':
    case '{':
    case '}':
    case ']':
      if (c == '{' && i_ + 1 < n_ && (s_[i_ + 1] == '"' || s_[i_ + 1] == '\'')) flags_ |= kFlagJson;
      ClearKey();
      await_post_key_ = -1;
      ++i_;
      break;
    case '|':
      LexPipe();
      break;
    case '[':
      LexBracket();
      break;
    case '-':
      if ((i_ > 0 && IsSpace(U(i_ - 1)) && i_ + 1 < n_ && IsSpace(U(i_ + 1))) ||
          (i_ + 1 < n_ && s_[i_ + 1] == '-')) {
        ClearKey();
        await_post_key_ = -1;
      }
      ++i_;
      break;
    case '=':
      flags_ |= kFlagKeyEquals;
      if (word_count_ > 0) binder_ = true;
      ++i_;
      break;
    case ':':
      if (word_count_ > 0) binder_ = true;
      ++i_;
      break;
    case '>':
      if (i_ > 0 && s_[i_ - 1] == '>') ClearKey();  // ">>" separates logger prefixes
      ++i_;
      break;
    default:
      await_post_key_ = -1;
      ++i_;
      break;
  }
  last_was_date_ = false;
}

// '|': a column separator (its cell's key may name the next cell's value) or, right after a
// percentage, the start of a tqdm bar skipped to its closing '|'.
void SegmentLexer::LexPipe() {
  flags_ |= kFlagPipes;
  if (word_count_ > 0) {
    // "| loss | 12.3 |": the cell before may name the value in the next cell.
    pipe_key_begin_ = word_starts_[static_cast<size_t>(word_count_ > 8 ? word_count_ - 8 : 0) % 8];
    pipe_key_end_ = key_end_;
  } else {
    pipe_key_end_ = 0;
  }
  ClearKey();
  await_post_key_ = -1;
  if (after_percent_ || (i_ > 0 && s_[i_ - 1] == '%')) {
    size_t k = i_ + 1;
    const size_t limit = std::min(n_, i_ + 400);
    while (k < limit && s_[k] != '|') ++k;
    if (k < limit) {
      flags_ |= kFlagTqdmBar;
      i_ = k + 1;
      if (tqdm_bar_end_ == 0) tqdm_bar_end_ = static_cast<uint32_t>(i_);
      after_percent_ = false;
      return;
    }
  }
  after_percent_ = false;
  ++i_;
}

// '[': a Keras bar "[=====>....]" is skipped whole; its counter is the fraction before it.
void SegmentLexer::LexBracket() {
  size_t k = i_ + 1;
  const size_t limit = std::min(n_, i_ + 400);
  while (k < limit && (s_[k] == '=' || s_[k] == '>' || s_[k] == '.' || s_[k] == '-' ||
                       s_[k] == '#' || s_[k] == '*')) {
    ++k;
  }
  if (k < limit && s_[k] == ']' && k - i_ >= 4) {
    flags_ |= kFlagKerasBar;
    if (!out_.fields.empty() && out_.fields.back().kind == ValueKind::kFraction &&
        out_.fields.back().key_end == 0) {
      out_.fields.back().bar_fraction = true;
    }
    i_ = k + 1;
    ClearKey();
    return;
  }
  ++i_;
}

// The counter of a tqdm bar: the first unkeyed fraction after the bar. Without the bar glyphs
// ("100% 4/4 [00:00<00:00,  5.63it/s]", Ultralytics and tqdm with a zero-width bar) the
// "[elapsed<remaining" slot marks a bar; its counter is the last unkeyed fraction before it.
void SegmentLexer::MarkBarCounter() {
  std::vector<Field>& fields = out_.fields;
  if (!(flags_ & (kFlagTqdmBar | kFlagKerasBar))) {
    for (size_t e = 0; e < fields.size(); ++e) {
      if (!fields[e].eta_position) continue;
      for (size_t b = e; b-- > 0;) {
        Field& f = fields[b];
        if (f.kind == ValueKind::kFraction && f.key_end == 0) {
          f.bar_fraction = true;
          flags_ |= kFlagTqdmBar;
          tqdm_bar_end_ = f.value_begin;
          break;
        }
      }
      break;
    }
  }
  if (flags_ & kFlagTqdmBar) {
    for (auto& f : fields) {
      if (f.value_begin >= tqdm_bar_end_ && f.kind == ValueKind::kFraction && f.key_end == 0) {
        f.bar_fraction = true;
        break;
      }
    }
  }
}

}  // namespace

void LineParser::Lex(std::string_view s, ParsedSegment& out) { SegmentLexer(s, out).Run(); }

bool LineParser::IsShareOfSomething(const ParsedSegment& seg, size_t idx) {
  const Field& f = seg.fields[idx];
  const std::string_view s = seg.text;
  if (f.key_end > f.key_begin) {
    thread_local std::vector<std::string_view> words;
    thread_local std::string scratch;
    KeyWords(s.substr(f.key_begin, f.key_end - f.key_begin), words, scratch);
    for (auto w : words) {
      if (InSet(w, V().share)) return true;
    }
    return false;
  }
  // Unkeyed, in parentheses right after a value that is not a fraction ("30.12GiB(38.04%)"):
  // the share of that value. After a fraction ("[ 100/1251 (  8%)]") it is progress.
  if (idx == 0) return false;
  const Field& prev = seg.fields[idx - 1];
  if (prev.kind == ValueKind::kFraction || prev.kind == ValueKind::kPercent) return false;
  size_t from = std::max(prev.value_end, prev.unit_end);
  bool paren = false;
  for (size_t k = from; k < f.value_begin && k < s.size(); ++k) {
    if (s[k] == '(') {
      paren = true;
    } else if (s[k] != ' ') {
      return false;
    }
  }
  return paren;
}

namespace {

// "Train: 3 [ 100/1251 (8%)]": a number keyed by a phase name right before a bracketed fraction
// is the epoch. `idx` is the fraction; the role of the number before it is changed.
void PhaseNumberIsEpoch(const ParsedSegment& out, size_t idx, std::vector<KeyRole>& roles) {
  const std::string_view s = out.text;
  const Field& f = out.fields[idx];
  const Field& p = out.fields[idx - 1];
  if (roles[idx - 1].role != Role::kNone || !p.integer || p.kind != ValueKind::kNumber ||
      p.key_end <= p.key_begin) {
    return;
  }
  const std::string_view pk = s.substr(p.key_begin, p.key_end - p.key_begin);
  bool bracket_next = false;
  for (size_t k = p.value_end; k < f.value_begin && k < s.size(); ++k) {
    if (s[k] == '[') bracket_next = true;
  }
  if (bracket_next && (EqualsLower(pk, "train") || EqualsLower(pk, "training"))) {
    roles[idx - 1].role = Role::kEpoch;
  }
}

// An unkeyed fraction without a role: a bar's counter (steps, or epochs when the bar's
// description is "Epoch"), a leading counter ("1875/1875 - 5s - loss: 0.26", "[100/1000]"), or
// the step right after an epoch value ("Epoch [1][50/500]").
void UnkeyedFractionRole(const ParsedSegment& out, size_t idx, std::vector<KeyRole>& roles,
                         bool epoch_bar, KeyRole& r) {
  const std::string_view s = out.text;
  const Field& f = out.fields[idx];
  if (idx > 0) PhaseNumberIsEpoch(out, idx, roles);
  bool leading = idx == 0;
  for (size_t k = 0; leading && k < f.value_begin && k < s.size(); ++k) {
    leading = s[k] == ' ' || s[k] == '\t' || s[k] == '[';
  }
  if (f.bar_fraction) {
    r.role = epoch_bar ? Role::kEpoch : Role::kStep;
    r.rank = 2;
  } else if (leading) {
    r.role = Role::kStep;
    r.rank = 1;
  } else if (idx > 0 && roles[idx - 1].role == Role::kEpoch) {
    // "Epoch [1][50/500]" / "Epoch(train) [1][ 50/500]"
    const Field& p = out.fields[idx - 1];
    bool adjacent = true;
    for (size_t k = p.value_end; k < f.value_begin && k < s.size(); ++k) {
      const char ch = s[k];
      if (ch != '[' && ch != ']' && ch != ' ' && ch != '(' && ch != ')' && ch != ':') {
        adjacent = false;
      }
    }
    if (adjacent) {
      r.role = Role::kStep;
      r.rank = 1;
    }
  }
}

// Roles the value itself gives: its unit (rates, time per item, durations), a percentage (never
// a counter; "Epoch:  10%|#  | 1/10" makes the bar count epochs), an unkeyed fraction.
void ValueRole(const ParsedSegment& out, size_t idx, std::vector<KeyRole>& roles, bool& epoch_bar,
               KeyRole& r) {
  const Field& f = out.fields[idx];
  if (f.unit == Unit::kRate && (r.role == Role::kNone || r.role == Role::kThroughput ||
                                r.role == Role::kMetric || r.role == Role::kStep)) {
    r.role = Role::kThroughput;
    r.counts_as_metric = true;
  } else if (f.unit == Unit::kTimePerItem &&
             (r.role == Role::kNone || r.role == Role::kStepTime || r.role == Role::kMetric)) {
    r.role = Role::kStepTime;
    r.counts_as_metric = true;
    r.rank = 4;
  } else if (r.role == Role::kNone && f.kind == ValueKind::kDuration) {
    r.role = f.eta_position ? Role::kEta : Role::kElapsed;
    if (f.eta_position) r.counts_as_metric = true;
  } else if (f.kind == ValueKind::kPercent && r.role == Role::kNone &&
             LineParser::IsShareOfSomething(out, idx)) {
    // "mfu 30.12%", "memory: 30.12GiB(38.04%)": a share, not progress; no role.
  } else if (f.kind == ValueKind::kPercent &&
             (r.role == Role::kNone || r.role == Role::kStep || r.role == Role::kEpoch)) {
    epoch_bar = r.role == Role::kEpoch && !r.eval;
    const bool eval = r.eval;
    r = KeyRole();
    r.role = Role::kPercent;
    r.eval = eval;
  } else if (r.role == Role::kNone && f.kind == ValueKind::kFraction && f.key_end == 0) {
    UnkeyedFractionRole(out, idx, roles, epoch_bar, r);
  }
}

// Counters recognised by their shape: "[10]\ttrain-logloss:0.51" (boosting libraries: a leading
// bracketed integer) and tqdm without a total ("Training: 1234it [01:23, 14.8it/s]").
void CounterShapeRole(const ParsedSegment& out, size_t idx, KeyRole& r) {
  const std::string_view s = out.text;
  const Field& f = out.fields[idx];
  if (idx == 0 && r.role == Role::kNone && f.key_end == 0 && f.integer &&
      f.kind == ValueKind::kNumber && f.value_begin > 0 && f.value_end < s.size() &&
      s[f.value_begin - 1] == '[' && s[f.value_end] == ']') {
    bool only_space = true;
    for (size_t k = 0; k + 1 < f.value_begin; ++k) {
      if (s[k] != ' ' && s[k] != '\t') only_space = false;
    }
    if (only_space) {
      r.role = Role::kStep;
      r.rank = 0;
    }
  }
  if (f.it_suffix && f.integer && (r.role == Role::kNone || r.role == Role::kMetric)) {
    r.role = Role::kStep;
    r.rank = 1;
  }
}

// "loss at step 100: 0.52": an integer read as a loss whose key ends in a counter word, joined to
// an unkeyed number after it, is the counter; that number is the loss.
void MoveLossPastCounter(const ParsedSegment& out, std::vector<KeyRole>& roles) {
  const std::string_view s = out.text;
  for (size_t idx = 0; idx + 1 < out.fields.size(); ++idx) {
    const Field& f = out.fields[idx];
    if (roles[idx].role != Role::kLoss || !f.integer || f.kind != ValueKind::kNumber ||
        f.key_end <= f.key_begin) {
      continue;
    }
    thread_local std::vector<std::string_view> words;
    thread_local std::string scratch;
    LineParser::KeyWords(s.substr(f.key_begin, f.key_end - f.key_begin), words, scratch);
    if (words.size() < 2) continue;
    const std::string_view head = words.back();
    const bool counter_head = InSet(head, V().step) || InSet(head, V().epoch);
    const Field& next = out.fields[idx + 1];
    bool joined = next.key_end == 0 && next.kind == ValueKind::kNumber;
    for (size_t k = f.value_end; joined && k < next.value_begin && k < s.size(); ++k) {
      joined = s[k] == ' ' || s[k] == ':' || s[k] == '=' || s[k] == '\t';
    }
    if (counter_head && joined) {
      const KeyRole loss = roles[idx];
      roles[idx] = KeyRole();
      roles[idx].role = InSet(head, V().epoch) ? Role::kEpoch : Role::kStep;
      roles[idx + 1] = loss;
    }
  }
}

// The flags one word of the segment sets, by the word lists (config/tracker_vocabulary.yaml).
// `in_key`: the word is in the key of a value with a role; `in_plain_key`: of one without
// ("Testing net (#0)"); `before_bar`: in a progress bar's description.
uint32_t WordFlags(const std::string& lw, bool in_key, bool in_plain_key, bool before_bar) {
  uint32_t wf = 0;
  if (InSet(lw, V().eval) && !in_key) wf |= kFlagEvalTag;
  if (InSet(lw, V().eval) && in_plain_key) wf |= kFlagEvalKeyTag;
  if (InSet(lw, V().train) && !in_key) wf |= kFlagTrainTag;
  if (InSet(lw, V().summary)) wf |= kFlagSummary;
  if (InSet(lw, V().checkpoint)) wf |= kFlagCheckpoint;
  if (InSet(lw, V().error)) wf |= kFlagError;
  if (lw == "traceback") wf |= kFlagTraceback;
  if (InSet(lw, V().warning)) wf |= kFlagWarning;
  if (lw == "info") wf |= kFlagInfoLevel;
  // Setup or I/O work before a progress bar ("Map", "Loading checkpoint shards", an lr finder):
  // every word before the bar is its description, even one inside a key ("Finding best initial
  // lr: 100%|...": the lr names what is searched for, not a value).
  if (before_bar && InSet(lw, V().setup)) wf |= kFlagSetupBar;
  return wf;
}

// Segment words: eval/train tags outside metric keys, summary, checkpoint, error/warning cues,
// setup bars; a Python traceback frame ('  File "...", line N, in f').
uint32_t SegmentWordFlags(const ParsedSegment& out, const std::vector<KeyRole>& roles) {
  const std::string_view s = out.text;
  size_t bar_pos = std::string_view::npos;  // where a progress bar starts (its description ends)
  if (out.flags & (kFlagTqdmBar | kFlagKerasBar)) {
    for (const Field& f : out.fields) {
      if (f.kind == ValueKind::kPercent || f.bar_fraction) {
        bar_pos = f.value_begin;
        break;
      }
    }
  }
  uint32_t wf = 0;
  size_t i = 0;
  const size_t n = s.size();
  std::string lw;
  while (i < n) {
    if (!IsAlpha(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < n && IsAlpha(static_cast<unsigned char>(s[i]))) {
      // camelCase split
      if (i > start && s[i] >= 'A' && s[i] <= 'Z' && s[i - 1] >= 'a' && s[i - 1] <= 'z') break;
      ++i;
    }
    lw.assign(s.substr(start, i - start));
    for (auto& ch : lw) ch = Lower(ch);
    bool in_key = false;
    bool in_plain_key = false;
    for (size_t idx = 0; idx < out.fields.size(); ++idx) {
      const Field& f = out.fields[idx];
      if (start >= f.key_begin && start < f.key_end &&
          ((roles[idx].role != Role::kNone && roles[idx].role != Role::kPercent) ||
           roles[idx].eval)) {
        in_key = true;
        in_plain_key = roles[idx].role == Role::kNone;
        break;
      }
    }
    wf |= WordFlags(lw, in_key, in_plain_key, start < bar_pos);
  }
  size_t p = 0;
  while (p < n && IsSpace(static_cast<unsigned char>(s[p]))) ++p;
  if (s.substr(p, 6) == "File \"") wf |= kFlagTraceback;
  return wf;
}

}  // namespace

void LineParser::Analyze(ParsedSegment& out, TemplateInfo& info) {
  const std::string_view s = out.text;
  info.roles.clear();
  info.roles.reserve(out.fields.size());
  int train_prefixed = 0;
  bool epoch_bar = false;  // the bar's description is "Epoch": its counter counts epochs
  for (size_t idx = 0; idx < out.fields.size(); ++idx) {
    const Field& f = out.fields[idx];
    KeyRole r;
    if (f.key_end > f.key_begin) {
      const std::string_view key = s.substr(f.key_begin, f.key_end - f.key_begin);
      r = AnalyzeKey(key, f);
      if ((key.size() > 6 && EqualsLower(key.substr(0, 6), "train_")) ||
          (key.size() > 9 && EqualsLower(key.substr(0, 9), "training_"))) {
        ++train_prefixed;
      }
    }
    ValueRole(out, idx, info.roles, epoch_bar, r);
    CounterShapeRole(out, idx, r);
    info.roles.push_back(r);
  }
  MoveLossPastCounter(out, info.roles);
  uint32_t wf = SegmentWordFlags(out, info.roles);
  if (train_prefixed >= 3) wf |= kFlagSummary;
  info.word_flags = wf;
}

void LineParser::ApplyRoles(const TemplateInfo& info, ParsedSegment& out) {
  for (size_t i = 0; i < out.fields.size() && i < info.roles.size(); ++i) {
    Field& f = out.fields[i];
    const KeyRole& r = info.roles[i];
    f.role = r.role;
    f.rank = r.rank;
    f.eval = r.eval;
    f.avg = r.avg;
    f.counts_as_metric = r.counts_as_metric;
    if (r.noun != RateNoun::kNone && f.noun == RateNoun::kNone) f.noun = r.noun;
    if (r.role == Role::kStepTime && r.millis && f.unit == Unit::kNone) f.value *= 1e-3;
    if (r.role == Role::kStep && !(f.integer || f.kind == ValueKind::kFraction))
      f.role = Role::kNone;
  }
  out.flags |= info.word_flags;
  out.template_id = info.id;
}

void LineParser::Parse(std::string_view segment, ParsedSegment& out) {
  out.text = segment;
  out.fields.clear();
  out.flags = 0;
  out.skeleton = 0;
  out.timestamp_s = -1;
  out.template_id = -1;
  out.has_digit = false;
  Lex(segment, out);
  auto it = cache_.find(out.skeleton);
  if (it != cache_.end() && it->second.roles.size() == out.fields.size()) {
    ++hits_;
    ApplyRoles(it->second, out);
    return;
  }
  ++misses_;
  if (cache_.size() >= max_templates_) cache_.clear();
  TemplateInfo& info = cache_[out.skeleton];
  info.id = next_template_id_++;
  Analyze(out, info);
  ApplyRoles(info, out);
}

}  // namespace schedmate::tracker
