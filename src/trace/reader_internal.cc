#include "trace/reader_internal.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/strings.h"

namespace schedmate::trace::internal {

// ---- ReadContext ----------------------------------------------------------------------------

void ReadContext::Count(int64_t line, std::string_view reason) {
  ++table_.rows_skipped;
  if (table_.skip_reasons.size() < options_.max_skip_reasons) {
    table_.skip_reasons.push_back(fmt::format("{}:{}: {}", source_, line, reason));
  }
}

Status ReadContext::Malformed(int64_t line, std::string_view reason) {
  if (!options_.skip_malformed) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source_, line, reason));
  }
  Count(line, reason);
  return Status::Ok();
}

void ReadContext::ReserveForLines(std::string_view contents) {
  size_t lines = 1;
  for (const char *p = contents.data(), *end = p + contents.size();
       (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))); ++p) {
    ++lines;
  }
  if (options_.max_jobs > 0) lines = std::min(lines, static_cast<size_t>(options_.max_jobs));
  table_.jobs.reserve(table_.jobs.size() + lines);
}

void ReadContext::Unusable(int64_t line, std::string_view reason) { Count(line, reason); }

Status ReadContext::FileError(int64_t line, std::string_view reason) const {
  return Status::InvalidArgument(fmt::format("{}:{}: {}", source_, line, reason));
}

// ---- HeaderMap ------------------------------------------------------------------------------

namespace {
std::string NormalizeName(std::string_view s) {
  s = Trim(s);
  // Drop a trailing unit note: "Interval (s)" -> "interval".
  if (!s.empty() && s.back() == ')') {
    size_t open = s.rfind('(');
    if (open != std::string_view::npos && open > 0) s = Trim(s.substr(0, open));
  }
  return ToLower(s);
}
}  // namespace

HeaderMap::HeaderMap(const std::vector<std::string_view>& header) {
  names_.reserve(header.size());
  for (auto h : header) names_.push_back(NormalizeName(h));
}

int HeaderMap::Find(std::initializer_list<std::string_view> names) const {
  for (auto want : names) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == want) return static_cast<int>(i);
    }
  }
  return -1;
}

// ---- Number parsing -------------------------------------------------------------------------

namespace {
inline std::string_view TrimFast(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}
}  // namespace

bool ParseRealField(std::string_view s, double& out) {
  s = TrimFast(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}

bool ParseIntField(std::string_view s, int64_t& out) {
  s = TrimFast(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc() && p == s.data() + s.size()) return true;
  double d = 0;
  if (!ParseRealField(s, d)) return false;
  if (d != std::floor(d) || std::fabs(d) > 9.0e15) return false;
  out = static_cast<int64_t>(d);
  return true;
}

bool SecondsToMicros(double seconds, int64_t& micros) {
  const double us = seconds * 1e6;
  if (!std::isfinite(us) || std::fabs(us) > 9.2e18) return false;
  micros = std::llround(us);
  return true;
}

namespace {
// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
bool Digits(std::string_view s, size_t pos, size_t count, unsigned& out) {
  if (pos + count > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return true;
}
}  // namespace

bool ParseDateTimeUtc(std::string_view s, int64_t& micros) {
  s = TrimFast(s);
  unsigned y, mo, d, h, mi, sec;
  if (s.size() < 19 || !Digits(s, 0, 4, y) || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d) || (s[10] != ' ' && s[10] != 'T') || !Digits(s, 11, 2, h) ||
      s[13] != ':' || !Digits(s, 14, 2, mi) || s[16] != ':' || !Digits(s, 17, 2, sec)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  static constexpr unsigned kMonthDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > kMonthDays[mo - 1]) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return false;
  int64_t frac_us = 0;
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest.front() == '.') {
    int64_t scale = 100000;
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] < '0' || rest[i] > '9') return false;
      frac_us += (rest[i] - '0') * scale;
      scale /= 10;
    }
    rest = {};
  }
  if (rest == "Z") rest = {};
  if (!rest.empty()) return false;
  const int64_t days = DaysFromCivil(y, mo, d);
  micros = ((days * 24 + h) * 60 + mi) * 60 * 1'000'000LL + sec * 1'000'000LL + frac_us;
  return true;
}

// ---- RowParser ------------------------------------------------------------------------------

std::string_view RowParser::Text(int col) const {
  if (col < 0 || static_cast<size_t>(col) >= fields_.size()) return {};
  return TrimFast(fields_[static_cast<size_t>(col)]);
}

std::string RowParser::ColumnName(int col) const {
  if (col >= 0 && static_cast<size_t>(col) < header_.size()) return header_.name(col);
  return fmt::format("column {}", col + 1);
}

namespace {
std::string Shorten(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 37)) + "...";
}
// Replaces non-printable bytes so binary junk does not garble messages.
std::string Printable(std::string_view s) {
  std::string out = Shorten(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}
}  // namespace

int64_t RowParser::Int(int col, bool required, int64_t fallback) {
  std::string_view t = Text(col);
  if (t.empty()) {
    if (required) Fail(fmt::format("{} is missing", ColumnName(col)));
    return fallback;
  }
  int64_t v = 0;
  if (!ParseIntField(t, v)) {
    double d = 0;
    if (ParseRealField(t, d) && d == std::floor(d)) {
      Fail(fmt::format("{}: value {} out of range (integers up to 9e15)", ColumnName(col),
                       Printable(t)));
    } else {
      Fail(fmt::format("{}: '{}' is not an integer", ColumnName(col), Printable(t)));
    }
    return fallback;
  }
  return v;
}

double RowParser::Real(int col, bool required, double fallback) {
  std::string_view t = Text(col);
  if (t.empty()) {
    if (required) Fail(fmt::format("{} is missing", ColumnName(col)));
    return fallback;
  }
  double v = 0;
  if (!ParseRealField(t, v)) {
    Fail(fmt::format("{}: '{}' is not a finite number", ColumnName(col), Printable(t)));
    return fallback;
  }
  return v;
}

void RowParser::Fail(std::string reason) {
  if (error_.empty()) error_ = std::move(reason);
}

std::string OutOfRange(std::string_view column, double v, double lo, double hi) {
  return fmt::format("{}: value {} out of range ({}..{})", column, v, lo, hi);
}

bool CheckRange(RowParser& p, std::string_view column, double v, double lo, double hi) {
  if (v >= lo && v <= hi) return true;
  p.Fail(OutOfRange(column, v, lo, hi));
  return false;
}

int32_t ToInt32(RowParser& p, int64_t v, std::string_view column) {
  if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
    p.Fail(OutOfRange(column, static_cast<double>(v), 0, std::numeric_limits<int32_t>::max()));
    return 0;
  }
  return static_cast<int32_t>(v);
}

}  // namespace schedmate::trace::internal
