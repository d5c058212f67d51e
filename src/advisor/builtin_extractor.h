#pragma once
// BuiltinMetadataExtractor: the deterministic, offline engine behind MetadataExtractor.
//
// Rationale. A job's effective settings are spread over a launch chain (sbatch script -> wrapper
// -> launcher -> Python program) and layered configuration, and the value that wins depends on
// precedence, not on which text mentions it first. The engine therefore (1) parses shell scripts
// with a real shell lexer (quotes, continuations, variables, `bash $1` delegation, `sbatch
// --wrap`), (2) recognises launchers (torchrun, python -m torch.distributed.{run,launch},
// deepspeed, accelerate launch, srun, mpirun, llamafactory-cli, python [-m]) and their process
// counts, (3) reads the program's argparse / dataclass defaults, module-level globals and explicit
// in-code settings with a Python tokenizer, (4) loads YAML/JSON/Python configs with inheritance
// (mmcv/mmengine `_base_`, Hydra `defaults:` and `key=value` overrides), and (5) resolves each
// field by precedence level:
//     library default < script default < config (base < child) < command line < in-code override
// (ties within a level: the more specific key, then the later assignment). Derived fields
// (global batch = per-device x accumulation x data-parallel processes; Megatron's tensor/pipeline
// split; accumulation divided by world size when the code does so; image size of well-known
// datasets; parameter counts from model names or GPT shapes) are computed last and say
// "derived" in their source. Unknown stays unknown (null); dynamic values are strings that say so.
//
// Confidence (JobMetadata::confidence), per field, from how it was found: an explicit command-line
// or in-code value 0.95, a config value 0.9, an argparse/script default 0.8, a library default
// read from the sources 0.6, a value read through a rule ("single process launch", "Slurm GPU
// request") at most 0.85, a derived value 0.85, a "default: ..." 0.55, an assumption 0.5, an
// open ("derived: 8 x num_processes", "dynamic: ...") or placeholder value 0.3; x0.85 when
// another value at the winning level disagrees. `--engine auto` asks the LLM only when
// JobMetadata::AnswerConfidence() is below its threshold.
//
// Files that are binary or not UTF-8 are skipped and counted; the entry itself being unreadable
// is an error. Thread-safety: Extract() keeps no state between calls; one call at a time per
// object.

#include "advisor/metadata_extractor.h"

namespace schedmate::advisor {

class BuiltinMetadataExtractor final : public MetadataExtractor {
 public:
  std::string_view Name() const override { return "builtin"; }
  Result<JobMetadata> Extract(const JobSource& source) override;
};

}  // namespace schedmate::advisor
