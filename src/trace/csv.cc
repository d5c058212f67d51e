#include "trace/csv.h"

#include <cctype>
#include <cstring>

namespace schedmate::trace {

CsvCursor::CsvCursor(std::string_view data, char separator) : data_(data), sep_(separator) {
  if (data_.size() >= 3 && data_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 BOM
}

bool CsvCursor::IsBlank(const std::vector<std::string_view>& fields) {
  if (fields.size() != 1) return false;
  for (char c : fields[0]) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool CsvCursor::NextNonBlank(std::vector<std::string_view>& fields) {
  while (Next(fields)) {
    if (!IsBlank(fields)) return true;
  }
  return false;
}

bool CsvCursor::Next(std::vector<std::string_view>& fields) {
  fields.clear();
  error_.clear();
  scratch_used_ = 0;
  if (pos_ >= data_.size()) return false;
  record_line_ = next_line_;
  const size_t start = pos_;
  const char* d = data_.data();
  const size_t n = data_.size();
  size_t i = pos_;
  while (true) {
    // At the start of a field.
    if (i < n && d[i] == '"') {
      // Quoted field: find the closing quote, noting doubled quotes.
      size_t j = i + 1;
      bool has_escape = false;
      bool closed = false;
      while (j < n) {
        const char* q = static_cast<const char*>(std::memchr(d + j, '"', n - j));
        // Count line breaks inside the quoted text for line numbering.
        const size_t end = q ? static_cast<size_t>(q - d) : n;
        for (size_t k = j; k < end; ++k) {
          if (d[k] == '\n') ++next_line_;
        }
        if (!q) {
          j = n;
          break;
        }
        j = end;
        if (j + 1 < n && d[j + 1] == '"') {
          has_escape = true;
          j += 2;
          continue;
        }
        closed = true;
        break;
      }
      if (!closed) {
        error_ = "unterminated quoted field";
        fields.emplace_back(d + i + 1, n - i - 1);
        i = n;
        break;
      }
      std::string_view inner(d + i + 1, j - i - 1);
      if (has_escape) {
        if (scratch_used_ == scratch_.size()) scratch_.emplace_back();
        std::string& s = scratch_[scratch_used_++];
        s.clear();
        for (size_t k = 0; k < inner.size(); ++k) {
          s.push_back(inner[k]);
          if (inner[k] == '"') ++k;  // skip the second quote of a pair
        }
        fields.emplace_back(s);
      } else {
        fields.push_back(inner);
      }
      i = j + 1;  // just past the closing quote
      // Allow blanks (and a CR) before the separator or end of line.
      while (i < n && (d[i] == ' ' || d[i] == '\t') && d[i] != sep_) ++i;
      if (i < n && d[i] == '\r' && (i + 1 == n || d[i + 1] == '\n')) ++i;
      if (i >= n) break;
      if (d[i] == sep_) {
        ++i;
        continue;
      }
      if (d[i] == '\n') {
        ++i;
        ++next_line_;
        break;
      }
      if (error_.empty()) error_ = "unexpected text after a closing quote";
      // Fall through: treat the rest as an unquoted continuation of a new field.
    }
    // Unquoted field: runs to the separator or the end of line.
    size_t j = i;
    while (j < n && d[j] != sep_ && d[j] != '\n') ++j;
    size_t e = j;
    if (e > i && d[e - 1] == '\r') --e;
    fields.emplace_back(d + i, e - i);
    if (j >= n) {
      i = n;
      break;
    }
    if (d[j] == '\n') {
      i = j + 1;
      ++next_line_;
      break;
    }
    i = j + 1;     // separator
    if (i >= n) {  // trailing separator at end of input: one more empty field
      fields.emplace_back();
      break;
    }
  }
  size_t raw_end = i;
  while (raw_end > start && (d[raw_end - 1] == '\n' || d[raw_end - 1] == '\r')) --raw_end;
  raw_ = std::string_view(d + start, raw_end - start);
  pos_ = i;
  return true;
}

}  // namespace schedmate::trace
