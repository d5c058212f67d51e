#pragma once
// ExtractorKnowledge: what frameworks call their settings, the defaults they ship and the names
// they give models and datasets, as used by the built-in metadata extractor. The knowledge is
// data (config/extractor_knowledge.yaml, compiled in by cmake/EmbedText.cmake); the
// extractor's mechanisms (precedence, config inheritance, shell expansion) are code.
//
// Private to the advisor library. Thread-safety: immutable after construction; Builtin() is
// shared.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace schedmate::advisor::internal {

// A schedule that ships with mmdetection (configs/_base_/schedules/<stem>.py).
struct KnownSchedule {
  std::string stem;
  std::string optimizer;
  double lr = 0;
  int epochs = 0;
};

// A framework default that applies when the job sets no value for `field`.
struct LibraryDefault {
  std::string framework;                      // exact match of the reported framework, or
  std::vector<std::string> framework_prefix;  // any of these starts it
  std::string condition;                      // "", "hf_trainer" or "torchtune_packaged_config"
  std::string field;
  nlohmann::json value;
  std::string why;  // the source says "default: <why>"
};

// An RL environment pattern and the policy network the zoo gives it.
struct RlPolicy {
  std::string pattern;  // found in the environment id; "" = any
  std::string policy;
  std::string why;
};

struct ExtractorKnowledge {
  // Normalised key -> (field, rank): lower rank is the more specific key.
  std::map<std::string, std::pair<std::string, int>> keys;
  std::vector<KnownSchedule> mmdet_schedules;
  std::vector<std::pair<std::string, int>> dataset_image_sizes;       // ordered
  std::vector<std::pair<std::string, std::string>> family_patterns;   // ordered
  std::vector<std::pair<std::string, std::string>> known_params;      // ordered
  std::map<std::string, std::pair<std::string, int>> import_votes;    // module -> (framework, n)
  std::map<std::string, std::pair<std::string, int>> argument_votes;  // argument -> (framework, n)
  std::vector<LibraryDefault> library_defaults;                       // ordered
  // Config key ("leaf" or "parent.leaf") -> (framework, n).
  std::map<std::string, std::pair<std::string, int>> config_key_votes;
  // Framework -> key -> (field, rank), applied once the framework is known.
  std::map<std::string, std::map<std::string, std::pair<std::string, int>>> framework_keys;
  std::vector<RlPolicy> rl_policies;                                // ordered
  std::vector<std::string> world_size_names;                        // replica-count names
  std::vector<std::string> device_per_node_calls;                   // one process, all GPUs
  std::vector<std::pair<std::string, std::string>> layer_families;  // ordered
  std::map<std::string, int> image_size_multiples;                  // framework -> stride
  std::map<std::string, std::string> short_options;  // "b" -> "batch_size" (program unseen)
  std::set<std::string> config_options;              // options whose value is a config file
  std::set<std::string> train_calls;                 // calls whose kwargs are training settings
  std::set<std::string> hf_trainer_calls;            // calls that mean transformers' Trainer
  std::set<std::string> argument_objects;            // `args.x = v` after parsing
  std::vector<std::string> hf_example_programs;      // transformers' run_*.py examples
  std::set<std::string> generic_dataset_classes;
  std::map<std::string, std::string> dataset_abbreviations;
  std::vector<std::string> frameworks;            // reported by name; ordered (ties: the earlier)
  std::vector<std::string> option_calls;          // add_argument-like option definitions
  std::vector<std::string> entry_function_calls;  // fire.Fire(fn), typer.run(fn)
  std::vector<std::string> command_decorators;    // @app.command()

  // Parses a knowledge file. Every section is required; an unknown section or field, a
  // duplicate key or a malformed entry is an error naming `source`:line.
  static Result<ExtractorKnowledge> Parse(std::string_view yaml, std::string_view source);
  // The compiled-in config/extractor_knowledge.yaml; aborts (SM_CHECK) if it does not parse.
  static const ExtractorKnowledge& Builtin();
};

// The text of config/extractor_knowledge.yaml (generated source).
std::string_view BuiltinExtractorKnowledgeYaml();

}  // namespace schedmate::advisor::internal
