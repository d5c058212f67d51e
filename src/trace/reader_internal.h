#pragma once
// Internal to trace/: the per-read context shared by the format readers (error vs skip-and-count,
// row limit), header-name lookup and field parsing helpers. Not part of the public API.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/status.h"
#include "trace/trace_reader.h"

namespace schedmate::trace::internal {

// Owns the policy for bad rows during one read.
class ReadContext {
 public:
  ReadContext(std::string_view source, const TraceReadOptions& options, JobTable& table)
      : source_(source), options_(options), table_(table) {}

  // A malformed row at `line`: OK when skipping (counted), else kInvalidArgument "src:line: why".
  Status Malformed(int64_t line, std::string_view reason);
  // A well-formed row the format marks unusable: always skipped and counted.
  void Unusable(int64_t line, std::string_view reason);
  // A file-level error (empty file, bad header) at `line`.
  Status FileError(int64_t line, std::string_view reason) const;
  // True once max_jobs jobs have been accepted.
  bool Full() const {
    return options_.max_jobs > 0 && static_cast<int64_t>(table_.jobs.size()) >= options_.max_jobs;
  }
  // Reserves room for about one job per line of `contents` (capped by max_jobs): one allocation
  // instead of repeated growth, which also lowers peak memory on large traces.
  void ReserveForLines(std::string_view contents);
  const TraceReadOptions& options() const { return options_; }
  JobTable& table() { return table_; }
  std::string_view source() const { return source_; }

 private:
  void Count(int64_t line, std::string_view reason);
  std::string_view source_;
  const TraceReadOptions& options_;
  JobTable& table_;
};

// Case-insensitive header lookup; names are trimmed and a trailing " (...)" unit note dropped.
class HeaderMap {
 public:
  explicit HeaderMap(const std::vector<std::string_view>& header);
  // Index of the first column matching any of `names`, or -1.
  int Find(std::initializer_list<std::string_view> names) const;
  size_t size() const { return names_.size(); }
  const std::string& name(int i) const { return names_[static_cast<size_t>(i)]; }

 private:
  std::vector<std::string> names_;  // normalized (lower case)
};

// Field accessors that record the first problem of a row in `error`.
class RowParser {
 public:
  RowParser(const std::vector<std::string_view>& fields, const HeaderMap& header)
      : fields_(fields), header_(header) {}

  // Trimmed text of column `col` ("" when col < 0 or the row is short).
  std::string_view Text(int col) const;
  // Integer column. Empty text gives `fallback` unless `required`. "8.0" is accepted as 8; an
  // integer beyond int64 (or an integral real beyond 9e15) is "out of range".
  int64_t Int(int col, bool required, int64_t fallback = 0);
  // Real column. Empty text gives `fallback` unless `required`. NaN/inf are errors.
  double Real(int col, bool required, double fallback = 0);
  // Records `reason` unless an earlier problem was recorded.
  void Fail(std::string reason);
  // The header name of column `col` (normalised), "column N" past the header.
  std::string ColumnName(int col) const;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  const std::vector<std::string_view>& fields_;
  const HeaderMap& header_;
  std::string error_;
};

// Records "<column>: value V out of range (lo..hi)" in `p` unless lo <= v <= hi (the first
// problem of a row wins); returns whether v is in range.
bool CheckRange(RowParser& p, std::string_view column, double v, double lo, double hi);
// Same for a count that must fit int32 (0..INT32_MAX); returns the value, 0 when out of range.
int32_t ToInt32(RowParser& p, int64_t v, std::string_view column);
// The same messages where a row has no RowParser (the text formats).
std::string OutOfRange(std::string_view column, double v, double lo, double hi);

// Whole-field numeric parsing (surrounding blanks allowed). Integers accept an integral decimal
// ("8.0"). Both reject NaN and infinities.
bool ParseIntField(std::string_view s, int64_t& out);
bool ParseRealField(std::string_view s, double& out);
// "YYYY-MM-DD HH:MM:SS" (or 'T' separator, optional fractional seconds) read as UTC, to
// microseconds since 1970-01-01.
bool ParseDateTimeUtc(std::string_view s, int64_t& micros);
// Seconds (real) to microseconds, rounded; false if out of int64 range.
bool SecondsToMicros(double seconds, int64_t& micros);

// One reader per format. Each appends to ctx.table().jobs in file order.
Status ReadLucidCsv(std::string_view contents, ReadContext& ctx);
Status ReadGpwCsv(std::string_view contents, ReadContext& ctx);
Status ReadChronusCsv(std::string_view contents, ReadContext& ctx);
Status ReadPolluxCsv(std::string_view contents, ReadContext& ctx);
Status ReadOpenbCsv(std::string_view contents, ReadContext& ctx);
Status ReadGavelTrace(std::string_view contents, ReadContext& ctx);
Status ReadSwf(std::string_view contents, ReadContext& ctx);
// Slurm accounting exports, `sacct -P` text or `sacct --json` (sacct_reader.cc).
Status ReadSacct(std::string_view contents, ReadContext& ctx);
// Detection helpers: a '|'-separated header naming JobID; a JSON document with "jobs".
bool LooksLikeSacct(std::string_view first_line);
bool LooksLikeSacctJson(std::string_view head);

}  // namespace schedmate::trace::internal
