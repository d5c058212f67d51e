// libFuzzer target for the tracker's line parser and reader: arbitrary bytes go through line
// cleaning (ANSI, UTF-8, control bytes, caps), '\r'/tqdm segmentation, the parser, the
// classifier, the extractor and record assembly. Any crash or sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tracker/line_classifier.h"
#include "tracker/line_parser.h"
#include "tracker/log_reader.h"
#include "tracker/metric_extractor.h"
#include "tracker/metric_tracker.h"
#include "tracker/signals.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace schedmate::tracker;
  static BuiltinLineClassifier* classifier = new BuiltinLineClassifier();
  static BuiltinMetricExtractor* extractor = new BuiltinMetricExtractor();
  static LineParser* parser = new LineParser(4096);
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // The parser on the raw bytes as one segment (no cleaning).
  ParsedSegment ps;
  parser->Parse(text, ps);
  ExtractedValues v;
  extractor->Extract(ps, v);
  (void)classifier->Classify(ps, v);

  // The whole pipeline, line by line, with a small cap to exercise truncation.
  TrackerOptions options;
  options.reader.max_line_bytes = 512;
  MetricTracker tracker(*classifier, *extractor, options);
  SignalAnalyzer analyzer;
  tracker.SetSink([&](const ProgressRecord& r) { analyzer.Add(r); });
  int64_t line_no = 1;
  ForEachPhysicalLine(text, [&](std::string_view line, uint64_t offset) {
    tracker.AddLine(line, line_no++, offset);
  });
  tracker.Finish();
  if (tracker.Latest()) (void)analyzer.Compute(*tracker.Latest(), tracker.LastTimestamp());
  return 0;
}
