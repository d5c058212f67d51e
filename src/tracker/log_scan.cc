#include "tracker/log_scan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

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

uint64_t CountLinesIndexed(std::string_view data, size_t end, const std::string& path,
                           const std::string& index_dir) {
  constexpr size_t kStride = size_t{32} << 20;
  end = std::min(end, data.size());
  struct stat st {};
  if (index_dir.empty() || ::stat(path.c_str(), &st) != 0) {
    return CountNewlines(data.substr(0, end));
  }
  uint64_t head = 1469598103934665603ull;
  for (char c : data.substr(0, 4096)) {
    head ^= static_cast<unsigned char>(c);
    head *= 1099511628211ull;
  }
  char name[64];
  std::snprintf(name, sizeof(name), "%llx-%llx.idx", static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  const std::string file = index_dir + "/" + name;
  std::vector<std::pair<uint64_t, uint64_t>> cps;  // offset -> newlines before it
  {
    std::ifstream in(file);
    std::string magic;
    uint64_t h = 0, size = 0;
    size_t n = 0;
    if (in >> magic >> h >> size >> n && magic == "sm-lines-v1" && h == head &&
        size <= data.size() && n < 1000000) {
      for (size_t i = 0; i < n; ++i) {
        uint64_t off = 0, cnt = 0;
        if (!(in >> off >> cnt)) break;
        if (off <= data.size()) cps.emplace_back(off, cnt);
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
    count += CountNewlines(data.substr(pos, next - pos));
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
    const std::string tmp = file + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << "sm-lines-v1 " << head << " " << data.size() << " " << cps.size() << "\n";
      for (const auto& [off, cnt] : cps) out << off << " " << cnt << "\n";
      if (!out) ec = std::make_error_code(std::errc::io_error);
    }
    if (ec || std::rename(tmp.c_str(), file.c_str()) != 0) std::remove(tmp.c_str());
  }
  return count;
}

ScanResult ScanText(std::string_view text, const ScanOptions& options,
                    const std::function<void(const ProgressRecord&)>& sink, int64_t first_line_no,
                    uint64_t base_offset) {
  BuiltinLineClassifier own_classifier;
  LineClassifier& classifier = options.classifier != nullptr ? *options.classifier : own_classifier;
  BuiltinMetricExtractor extractor;
  MetricTracker tracker(classifier, extractor, options.tracker);
  if (options.segment_observer) tracker.SetSegmentObserver(options.segment_observer);
  SignalAnalyzer analyzer(options.signals);
  ScanResult result;
  tracker.SetSink([&](const ProgressRecord& r) {
    analyzer.Add(r);
    if (sink) sink(r);
  });
  int64_t line_no = first_line_no;
  double last_ts = -1;
  ParsedSegment unused;
  (void)unused;
  ForEachPhysicalLine(text, [&](std::string_view line, uint64_t offset) {
    tracker.AddLine(line, line_no++, base_offset + offset);
  });
  tracker.Finish();
  result.latest = tracker.Latest();
  result.stats = tracker.stats();
  if (result.latest) {
    last_ts = result.latest->timestamp_s;
    result.signals = analyzer.Compute(*result.latest, tracker.LastTimestamp());
  }
  result.last_timestamp_s = tracker.LastTimestamp();
  (void)last_ts;
  result.scanned_bytes = text.size();
  return result;
}

Result<ScanResult> ScanLog(const std::string& path, const ScanOptions& options,
                           const std::function<void(const ProgressRecord&)>& sink) {
  SM_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  const std::string_view data = file->data();
  if (sink || !options.allow_reverse || data.size() <= options.reverse_min_bytes) {
    ScanResult r = ScanText(data, options, sink);
    r.file_bytes = data.size();
    return r;
  }
  size_t window = options.reverse_initial_window;
  while (true) {
    size_t start = window >= data.size() ? 0 : data.size() - window;
    if (start > 0) {
      const void* nl = memchr(data.data() + start, '\n', data.size() - start);
      start =
          nl ? static_cast<size_t>(static_cast<const char*>(nl) - data.data()) + 1 : data.size();
    }
    const std::string_view tail = data.substr(start);
    // Line numbers relative to the window first; made absolute below.
    ScanResult r = ScanText(tail, options, {}, 1, start);
    const bool enough = r.latest && (start == 0 || r.latest->line_no > options.tracker.window * 4);
    if (enough || start == 0) {
      r.file_bytes = data.size();
      r.reverse = start > 0;
      if (r.latest && start > 0 && options.count_line_numbers) {
        r.latest->line_no +=
            static_cast<int64_t>(CountLinesIndexed(data, start, path, options.line_index_dir));
      } else if (r.latest && start > 0) {
        r.latest->line_no = -1;  // unknown without counting
      }
      return r;
    }
    window *= 2;
  }
}

}  // namespace schedmate::tracker
