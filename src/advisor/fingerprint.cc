#include "advisor/fingerprint.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "advisor/job_metadata.h"
#include "core/strings.h"

namespace schedmate::advisor {
namespace {

// Values come from job sources anyone can write: only finite, positive, plausible ones count.
int64_t CountOf(std::string_view text, double max) {
  std::optional<double> v = ParseDouble(Trim(text));
  if (!v || !std::isfinite(*v) || *v <= 0 || *v > max) return 0;
  return static_cast<int64_t>(std::llround(*v));
}

double PositiveOf(std::string_view text, double max) {
  std::optional<double> v = ParseDouble(Trim(text));
  return v && std::isfinite(*v) && *v > 0 && *v <= max ? *v : 0;
}

void SetSemantic(JobSemantics& s, std::string_view key, std::string_view value) {
  if (key == "model_family") s.model_family = ToLower(value);
  if (key == "model" && s.model.empty()) s.model = ToLower(value);
  if (key == "dataset" && s.dataset.empty()) s.dataset = ToLower(value);
  if (key == "precision") s.precision = ToLower(value);
  if (key == "gpu_type") s.gpu_type = ToLower(value);
  if (key == "per_device_batch_size") s.per_device_batch = CountOf(value, 1e7);
  if (key == "global_batch_size") s.global_batch = CountOf(value, 1e9);
  if (key == "sequence_length") s.sequence_length = CountOf(value, 1e8);
  if (key == "image_size") s.image_size = CountOf(value, 1e5);
  if (key == "epochs") s.epochs = PositiveOf(value, 1e6);
  if (key == "max_steps") s.max_steps = CountOf(value, 1e12);
  if (key == "params") s.params = ParseParamCount(value);
}

void SemanticsFromJob(const JobRecord& job, JobSemantics& s) {
  s.model = ToLower(Trim(job.model));
  s.dataset = ToLower(Trim(job.dataset));
  if (job.iterations > 0) s.max_steps = job.iterations;
  if (job.batch_size > 0) s.global_batch = job.batch_size;
  if (job.amp >= 0) s.precision = job.amp ? "amp" : "fp32";
}

}  // namespace

double ParseParamCount(std::string_view text) {
  std::string t = ToLower(Trim(text));
  size_t i = 0;
  while (i < t.size() && (t[i] == '~' || t[i] == ' ')) ++i;
  size_t j = i;
  while (j < t.size() && (std::isdigit(static_cast<unsigned char>(t[j])) || t[j] == '.' ||
                          t[j] == 'e' || t[j] == '+' || t[j] == '-')) {
    // 'e' only as an exponent: followed by a digit or a sign.
    if (t[j] == 'e' && (j + 1 >= t.size() || !(std::isdigit(static_cast<unsigned char>(t[j + 1])) ||
                                               t[j + 1] == '+' || t[j + 1] == '-'))) {
      break;
    }
    ++j;
  }
  std::optional<double> v = ParseDouble(std::string_view(t).substr(i, j - i));
  if (!v || !std::isfinite(*v) || *v <= 0) return 0;
  double scale = 1;
  if (j < t.size()) {
    const char u = t[j];
    if (u == 'k') scale = 1e3;
    if (u == 'm') scale = 1e6;
    if (u == 'b' || u == 'g') scale = 1e9;
    if (u == 't') scale = 1e12;
  }
  const double n = *v * scale;
  return n >= 1 && n <= 1e15 ? n : 0;
}

namespace {

// The workload text and work of FingerprintOf(job, extra), without semantics.
JobFingerprint WorkloadOf(const JobRecord& job, std::string_view extra) {
  JobFingerprint fp;
  std::string& w = fp.workload;
  w.reserve(job.model.size() + job.dataset.size() + job.name.size() + extra.size() + 48);
  auto add = [&w](std::string_view key, std::string_view value) {
    value = Trim(value);
    if (value.empty()) return;
    if (!w.empty()) w += ' ';
    w += key;
    w += '=';
    const size_t from = w.size();
    w += value;
    // ToLower's mapping: the "C" locale's (the program never sets another), i.e. ASCII.
    for (size_t i = from; i < w.size(); ++i) {
      if (w[i] >= 'A' && w[i] <= 'Z') w[i] = static_cast<char>(w[i] - 'A' + 'a');
    }
  };
  add("model", job.model);
  add("dataset", job.dataset);
  if (job.batch_size > 0) add("batch", fmt::format_int(job.batch_size).str());
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

}  // namespace

JobFingerprint FingerprintOf(const JobRecord& job, std::string_view extra) {
  JobFingerprint fp = WorkloadOf(job, extra);
  SemanticsFromJob(job, fp.semantics);
  for (std::string_view word : Split(Trim(extra), ' ')) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    SetSemantic(fp.semantics, word.substr(0, eq), word.substr(eq + 1));
  }
  return fp;
}

JobFingerprint WorkloadFingerprintOf(const JobRecord& job) { return WorkloadOf(job, {}); }

JobFingerprint FingerprintOf(const JobRecord& job, const JobMetadata& meta) {
  JobRecord j = job;
  meta.ApplyWorkloadTo(j);
  JobFingerprint fp = FingerprintOf(JobRecord{}, meta.FingerprintText());
  const double gpus = j.gpus.as_double();
  if (j.iterations > 0 && j.batch_size > 0 && gpus > 0) {
    fp.work = static_cast<double>(j.iterations) * j.batch_size / gpus;
  }
  JobSemantics& s = fp.semantics;
  SemanticsFromJob(j, s);
  for (const auto& [field, value] : meta.values) {
    if (value.is_number()) {
      SetSemantic(s, field, fmt::format("{}", value.get<double>()));
    } else if (value.is_string()) {
      SetSemantic(s, field, value.get<std::string>());
    }
  }
  return fp;
}

}  // namespace schedmate::advisor
