#pragma once
// MetadataExtractor: reads a job's sources and returns its workload metadata (job_metadata.h).
// Engines: BuiltinMetadataExtractor (deterministic parsing, builtin_extractor.h); an LLM agent can
// implement the same interface and fall back to the built-in engine on failure.

#include <string>
#include <string_view>

#include "advisor/job_metadata.h"
#include "core/result.h"

namespace schedmate::advisor {

// What to read. Exactly one of `path` or `script_text` is used (`path` when non-empty).
struct JobSource {
  std::string path;         // a directory, a batch script, a Python file or a config file
  std::string root;         // the job's root (submit directory); "" = the current directory
                            // when `path` is a file, `path` itself when it is a directory
  std::string script_text;  // script contents given directly (e.g. from Slurm)
  std::string script_name = "job.sh";  // how `script_text` is named in provenance
};

class MetadataExtractor {
 public:
  virtual ~MetadataExtractor() = default;
  virtual std::string_view Name() const = 0;
  // kNotFound when `path` does not exist; kInvalidArgument when the entry itself is binary or
  // not UTF-8. Other unreadable files are skipped and counted in JobMetadata::files_skipped.
  virtual Result<JobMetadata> Extract(const JobSource& source) = 0;
};

}  // namespace schedmate::advisor
