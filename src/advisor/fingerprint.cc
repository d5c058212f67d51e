#include "advisor/fingerprint.h"

#include "core/strings.h"

namespace schedmate::advisor {

JobFingerprint FingerprintOf(const JobRecord& job, std::string_view extra) {
  JobFingerprint fp;
  std::string& w = fp.workload;
  auto add = [&w](std::string_view key, std::string_view value) {
    value = Trim(value);
    if (value.empty()) return;
    if (!w.empty()) w += ' ';
    w += key;
    w += '=';
    w += ToLower(value);
  };
  add("model", job.model);
  add("dataset", job.dataset);
  if (job.batch_size > 0) add("batch", std::to_string(job.batch_size));
  if (job.amp >= 0) add("amp", job.amp ? "1" : "0");
  add("name", job.name);
  extra = Trim(extra);
  if (!extra.empty()) {
    if (!w.empty()) w += ' ';
    w += extra;
  }
  double gpus = job.gpus.as_double();
  if (job.iterations > 0 && job.batch_size > 0 && gpus > 0) {
    fp.work = static_cast<double>(job.iterations) * job.batch_size / gpus;
  }
  return fp;
}

}  // namespace schedmate::advisor
