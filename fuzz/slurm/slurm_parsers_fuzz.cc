// libFuzzer target for the parsers of what Slurm's tools print (slurm/slurm_parsers.h): arbitrary
// bytes as `squeue --json`, `sinfo --json`, `scontrol show job -o` records, jobcomp/filetxt lines,
// `sacct -P` output, or one field for the small value parsers (node lists, GRES/TRES, timestamps,
// time limits, exit codes, states). Every parser must return a value or a Status, never crash,
// hang or overflow, and what it returns must keep the documented ranges (checked below).
//
// Input: the first byte picks the parser ('a' squeue, 'b' sinfo, 'c' scontrol, 'd' jobcomp,
// 'e' sacct, 'f' value parsers; any other byte maps onto one of these), the rest is the text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "slurm/slurm_parsers.h"

namespace {

using namespace schedmate;
using namespace schedmate::slurm;

void CheckJob(const SlurmJob& j) {
  SM_CHECK(!j.id.empty());
  SM_CHECK(j.gpus >= 0 && j.gpus <= kMaxGpuCount) << j.gpus;
  SM_CHECK(j.gpus_per_node >= 0 && j.gpus_per_node <= kMaxGpuCount) << j.gpus_per_node;
  if (j.time_limit_min) SM_CHECK(*j.time_limit_min >= 0) << *j.time_limit_min;
}

void CheckFinished(const FinishedJob& f) {
  SM_CHECK(!f.id.empty());
  if (f.time_limit_min) SM_CHECK(*f.time_limit_min >= 0) << *f.time_limit_min;
  (void)f.RunKey();
  (void)(f.end - f.start);
}

void FuzzValues(std::string_view text) {
  (void)ExpandNodeList(text);
  const int32_t gpus = ParseGpuCount(text);
  SM_CHECK(gpus >= 0 && gpus <= kMaxGpuCount) << gpus;
  if (auto t = ParseSlurmTimestamp(text)) (void)t->seconds();
  if (auto m = ParseTimeLimitMinutes(text)) SM_CHECK(*m >= 0 && *m <= kMaxTimeLimitMinutes) << *m;
  (void)ParseExitCodePair(text);
  (void)IsFinishedState(text);
  (void)NormalizeState(text);
  (void)ParseKeyValueLine(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (static_cast<uint8_t>(data[0] - 'a') % 6) {
    case 0:
      if (auto jobs = ParseSqueueJson(text); jobs.ok()) {
        for (const auto& j : *jobs) CheckJob(j);
      }
      break;
    case 1:
      if (auto nodes = ParseSinfoJson(text); nodes.ok()) {
        for (const auto& n : *nodes) {
          SM_CHECK(!n.name.empty());
          SM_CHECK(n.gpus_total >= 0 && n.gpus_used >= 0);
          (void)n.available();
        }
      }
      break;
    case 2:
      for (const auto& record : ParseScontrolRecords(text)) {
        if (auto job = SlurmJobFromScontrol(record); job.ok()) CheckJob(*job);
      }
      break;
    case 3:
      for (size_t pos = 0; pos <= text.size();) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        if (auto f = ParseJobcompLine(text.substr(pos, end - pos)); f.ok() && f->has_value()) {
          CheckFinished(**f);
        }
        pos = end + 1;
      }
      break;
    case 4:
      if (auto jobs = ParseSacctParsable(text); jobs.ok()) {
        for (const auto& f : *jobs) CheckFinished(f);
      }
      break;
    case 5:
      FuzzValues(text);
      break;
  }
  return 0;
}
