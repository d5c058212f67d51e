#include "tracker/log_scan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/file_util.h"
#include "text/hash.h"
#include "tracker/log_reader.h"

namespace schedmate::tracker {

std::string DefaultLineIndexDir() {
  if (const char* d = std::getenv("SCHEDMATE_CACHE_DIR"); d && *d) {
    return std::string(d) + "/line-index";
  }
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) {
    return std::string(d) + "/schedmate/line-index";
  }
  if (const char* d = std::getenv("HOME"); d && *d)
    return std::string(d) + "/.cache/schedmate/line-index";
  return {};
}

Result<uint64_t> CountLinesIndexed(const LogFile& file, uint64_t end,
                                   const std::string& index_dir) {
  constexpr uint64_t kStride = uint64_t{32} << 20;
  end = std::min(end, file.size());
  if (index_dir.empty()) return CountNewlinesInFile(file, 0, end);
  SM_ASSIGN_OR_RETURN(const std::string head_bytes, file.Read(0, 4096));
  const uint64_t head = text::Fnv1a64(head_bytes, text::kFeatureHashBasis);
  char name[64];
  std::snprintf(name, sizeof(name), "%llx-%llx.idx", static_cast<unsigned long long>(file.device()),
                static_cast<unsigned long long>(file.inode()));
  const std::string index_file = index_dir + "/" + name;
  std::vector<std::pair<uint64_t, uint64_t>> cps;  // offset -> newlines before it
  // A bounded read: whatever sits at the index path (a FIFO, a huge file) cannot stall the scan.
  if (auto text = ReadFileToString(index_file, size_t{64} << 20); text.ok()) {
    std::istringstream in(*text);
    std::string magic;
    uint64_t h = 0, size = 0;
    size_t n = 0;
    if (in >> magic >> h >> size >> n && magic == "sm-lines-v1" && h == head &&
        size <= file.size() && n < 1000000) {
      for (size_t i = 0; i < n; ++i) {
        uint64_t off = 0, cnt = 0;
        if (!(in >> off >> cnt)) break;
        if (off <= file.size()) cps.emplace_back(off, cnt);
      }
    }
  }
  uint64_t pos = 0, count = 0;
  for (const auto& [off, cnt] : cps) {
    if (off <= end && off >= pos) {
      pos = off;
      count = cnt;
    }
  }
  bool added = false;
  while (pos < end) {
    const uint64_t next = std::min<uint64_t>(end, (pos / kStride + 1) * kStride);
    SM_ASSIGN_OR_RETURN(const uint64_t part, CountNewlinesInFile(file, pos, next));
    count += part;
    pos = next;
    if (pos % kStride == 0) {
      cps.emplace_back(pos, count);
      added = true;
    }
  }
  if (added) {
    std::sort(cps.begin(), cps.end());
    cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
    std::error_code ec;
    std::filesystem::create_directories(index_dir, ec);
    std::string out = "sm-lines-v1 " + std::to_string(head) + " " + std::to_string(file.size()) +
                      " " + std::to_string(cps.size()) + "\n";
    for (const auto& [off, cnt] : cps)
      out += std::to_string(off) + " " + std::to_string(cnt) + "\n";
    (void)WriteStringToFile(index_file, out);  // a cache: a failed write only costs a recount
  }
  return count;
}

namespace {

// One scan's tracker, signal analyser and result, fed line by line (from memory or a file).
class Scanner {
 public:
  Scanner(const ScanOptions& options, const std::function<void(const ProgressRecord&)>& sink)
      : classifier_(options.classifier != nullptr ? *options.classifier : own_classifier_),
        tracker_(classifier_, extractor_, options.tracker),
        analyzer_(options.signals) {
    if (options.segment_observer) tracker_.SetSegmentObserver(options.segment_observer);
    tracker_.SetSink([this, &sink](const ProgressRecord& r) {
      analyzer_.Add(r);
      if (sink) sink(r);
    });
  }
  void Line(std::string_view line, int64_t line_no, uint64_t offset) {
    tracker_.AddLine(line, line_no, offset);
  }
  ScanResult Finish(uint64_t scanned_bytes) {
    tracker_.Finish();
    ScanResult result;
    result.latest = tracker_.Latest();
    result.stats = tracker_.stats();
    if (result.latest) result.signals = analyzer_.Compute(*result.latest, tracker_.LastTimestamp());
    result.last_timestamp_s = tracker_.LastTimestamp();
    result.scanned_bytes = scanned_bytes;
    return result;
  }

 private:
  BuiltinLineClassifier own_classifier_;
  LineClassifier& classifier_;
  BuiltinMetricExtractor extractor_;
  MetricTracker tracker_;
  SignalAnalyzer analyzer_;
};

// Scans the file bytes [begin, file.size()); `begin` starts a line numbered `first_line_no`.
Result<ScanResult> ScanFileFrom(const LogFile& file, uint64_t begin, const ScanOptions& options,
                                const std::function<void(const ProgressRecord&)>& sink,
                                int64_t first_line_no) {
  Scanner scanner(options, sink);
  int64_t line_no = first_line_no;
  SM_RETURN_IF_ERROR(ForEachLineInFile(
      file, begin, file.size(),
      [&](std::string_view line, uint64_t offset) { scanner.Line(line, line_no++, offset); }));
  return scanner.Finish(file.size() - begin);
}

Result<ScanResult> ScanOpenLog(const LogFile& file, const ScanOptions& options,
                               const std::function<void(const ProgressRecord&)>& sink) {
  const uint64_t size = file.size();
  if (sink || !options.allow_reverse || size <= options.reverse_min_bytes) {
    SM_ASSIGN_OR_RETURN(ScanResult r, ScanFileFrom(file, 0, options, sink, 1));
    r.file_bytes = size;
    return r;
  }
  uint64_t window = options.reverse_initial_window;
  while (true) {
    uint64_t start = window >= size ? 0 : size - window;
    if (start > 0) {
      SM_ASSIGN_OR_RETURN(start, NextLineStartInFile(file, start));
    }
    // Line numbers relative to the window first; made absolute below.
    SM_ASSIGN_OR_RETURN(ScanResult r, ScanFileFrom(file, start, options, {}, 1));
    const bool enough = r.latest && (start == 0 || r.latest->line_no > options.tracker.window * 4);
    if (enough || start == 0) {
      r.file_bytes = size;
      r.reverse = start > 0;
      if (r.latest && start > 0 && options.count_line_numbers) {
        SM_ASSIGN_OR_RETURN(const uint64_t before,
                            CountLinesIndexed(file, start, options.line_index_dir));
        r.latest->line_no += static_cast<int64_t>(before);
      } else if (r.latest && start > 0) {
        r.latest->line_no = -1;  // unknown without counting
      }
      return r;
    }
    window *= 2;
  }
}

}  // namespace

ScanResult ScanText(std::string_view text, const ScanOptions& options,
                    const std::function<void(const ProgressRecord&)>& sink, int64_t first_line_no,
                    uint64_t base_offset) {
  Scanner scanner(options, sink);
  int64_t line_no = first_line_no;
  ForEachPhysicalLine(text, [&](std::string_view line, uint64_t offset) {
    scanner.Line(line, line_no++, base_offset + offset);
  });
  return scanner.Finish(text.size());
}

Result<ScanResult> ScanLog(const std::string& path, const ScanOptions& options,
                           const std::function<void(const ProgressRecord&)>& sink) {
  // A log truncated or rewritten while it is read (logrotate copytruncate) is read again from
  // the start, a few times; records already streamed to `sink` cannot be taken back, so with a
  // sink the scan fails instead.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    SM_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, LogFile::Open(path));
    Result<ScanResult> r = ScanOpenLog(*file, options, sink);
    const Status st = r.ok() ? file->CheckUnchanged() : r.status();
    if (st.ok()) return r;
    if (sink || st.code() != StatusCode::kDataLoss || attempt == kAttempts) return st;
  }
}

}  // namespace schedmate::tracker
