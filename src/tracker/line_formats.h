#pragma once
// LineFormats: positional progress-line formats from config/tracker_formats.yaml (lines whose
// values carry no key words, e.g. darknet's "1200: 0.51, 0.59 avg, 0.001 rate, 3.1 seconds,
// 76800 images"). A matching line is rewritten as "key=value" text for the generic parser, so
// the knowledge of a format is data and the reading stays one mechanism.
//
// Cost: the formats are tried once per line template (the parser's skeleton hash); a template
// that matched none is never tried again, so ordinary logs pay one hash lookup per line.
//
// Thread-safety: a LineFormats is immutable after construction and shared; a FormatMatcher holds
// the per-template cache and belongs to one tracker.

#include <re2/re2.h>
#include <re2/set.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace schedmate::tracker {

class LineFormats {
 public:
  ~LineFormats();
  LineFormats(LineFormats&&) noexcept;
  LineFormats& operator=(LineFormats&&) noexcept;

  // Parses the YAML text of a formats file; `source` names it in errors ("file: formats[2]: ...").
  static Result<LineFormats> Parse(std::string_view yaml, std::string_view source);
  // The compiled-in config/tracker_formats.yaml (parsed once; a broken file is a build defect and
  // aborts with its error, caught by the tests).
  static const LineFormats& Builtin();

  size_t size() const { return formats_.size(); }
  std::string_view Id(size_t i) const { return formats_[i].id; }
  // Index of a format that matches `line`, or -1.
  int Find(std::string_view line) const;
  // Rewrites `line` with format `index` (which must match it) into `out`; false when it does not.
  bool Rewrite(int index, std::string_view line, std::string& out) const;

 private:
  struct Piece {
    std::string text;         // literal text with {name} references
    std::vector<int> groups;  // capture groups the piece refers to (1-based)
  };
  struct Format {
    std::string id;
    std::unique_ptr<re2::RE2> re;
    std::vector<Piece> pieces;
  };
  LineFormats();
  std::vector<Format> formats_;
  std::unique_ptr<re2::RE2::Set> set_;
};

// Per-tracker cache of which format (if any) a line template matches.
class FormatMatcher {
 public:
  explicit FormatMatcher(const LineFormats& formats) : formats_(formats) {}
  // Rewrites `line` (whose template hash is `skeleton`) into `out` when a format matches it.
  bool Rewrite(uint64_t skeleton, std::string_view line, std::string& out);

 private:
  const LineFormats& formats_;
  std::unordered_map<uint64_t, int> by_template_;  // skeleton -> format index or -1
};

// The text of config/tracker_formats.yaml, compiled in.
std::string_view BuiltinFormatsYaml();

}  // namespace schedmate::tracker
