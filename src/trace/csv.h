#pragma once
// CsvCursor: a fast, allocation-free (in the common case) record splitter over an in-memory buffer.
// Used by every trace reader. Handles RFC 4180 quoting ("a,b", doubled "" inside quotes, line
// breaks inside quotes), CRLF and CR-less files, a leading UTF-8 byte-order mark, and any
// single-character separator (',' for CSV, '\t' for Gavel traces).
//
// Fields are string_views into the buffer, except quoted fields that contain a doubled quote:
// those are unescaped into cursor-owned storage. Every view stays valid until the next call to
// Next(). The buffer must outlive the cursor. Not thread-safe (one cursor per thread).

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::trace {

class CsvCursor {
 public:
  CsvCursor(std::string_view data, char separator);

  // Splits the next record into `fields` (cleared first). Returns false at end of input.
  // A blank line yields one empty field; callers decide whether to skip it (IsBlank()).
  // An unterminated quoted field runs to the end of input; error() then says so.
  bool Next(std::vector<std::string_view>& fields);
  // Next() past blank lines: false when only blank lines (or nothing) remain.
  bool NextNonBlank(std::vector<std::string_view>& fields);

  // 1-based line number where the last record returned by Next() starts.
  int64_t line() const { return record_line_; }
  // Non-empty when the last record was malformed at the quoting level (e.g. unterminated quote,
  // text after a closing quote). The fields are still returned, best effort.
  const std::string& error() const { return error_; }
  // The raw text of the last record (without its line terminator), for error messages.
  std::string_view raw() const { return raw_; }

  // True when `fields` is a single empty or whitespace-only field.
  static bool IsBlank(const std::vector<std::string_view>& fields);

 private:
  std::string_view data_;
  size_t pos_ = 0;
  char sep_;
  int64_t next_line_ = 1;
  int64_t record_line_ = 0;
  std::string error_;
  std::string_view raw_;
  std::deque<std::string> scratch_;  // unescaped quoted fields; deque keeps addresses stable
  size_t scratch_used_ = 0;
};

// LineCursor: the lines of a text buffer for the line-oriented formats (Gavel, SWF, sacct -P):
// a leading UTF-8 byte-order mark skipped, a trailing '\r' dropped, numbered from 1. Lines are
// views into the buffer, which must outlive the cursor.
class LineCursor {
 public:
  explicit LineCursor(std::string_view data)
      : data_(data), pos_(data.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0) {}
  // The next line into `line`; false at the end of the buffer.
  bool Next(std::string_view& line) {
    if (pos_ >= data_.size()) return false;
    ++line_no_;
    size_t e = data_.find('\n', pos_);
    if (e == std::string_view::npos) e = data_.size();
    line = data_.substr(pos_, e - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = e + 1;
    return true;
  }
  // 1-based number of the last line returned by Next().
  int64_t line() const { return line_no_; }

 private:
  std::string_view data_;
  size_t pos_;
  int64_t line_no_ = 0;
};

}  // namespace schedmate::trace
