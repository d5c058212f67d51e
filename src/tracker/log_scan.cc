#include "tracker/log_scan.h"

#include "tracker/log_reader.h"

namespace schedmate::tracker {

ScanResult ScanText(std::string_view text, const ScanOptions& options,
                    const std::function<void(const ProgressRecord&)>& sink, int64_t first_line_no,
                    uint64_t base_offset) {
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  MetricTracker tracker(classifier, extractor, options.tracker);
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
        r.latest->line_no += static_cast<int64_t>(CountNewlines(data.substr(0, start)));
      } else if (r.latest && start > 0) {
        r.latest->line_no = -1;  // unknown without counting
      }
      return r;
    }
    window *= 2;
  }
}

}  // namespace schedmate::tracker
