#pragma once
// Private to the advisor library (not installed): the state of one BuiltinMetadataExtractor run
// and the value helpers its stages share. The stages live in one file each:
//   extraction.cc      candidates and precedence (Add/AddKey/Best), reading files, value helpers
//   launch_chain.cc    shell scripts, sbatch/srun/mpirun and launcher commands, delegation
//   program_reader.cc  the Python program: imports, argparse, calls, assignments
//   config_loader.cc   YAML/JSON/Python configs with inheritance, configs known by name
//   derivation.cc      Finish: the fields derived from the candidates (GPUs, batch sizes, ...)
//   builtin_extractor.cc  the public BuiltinMetadataExtractor and the entry points RunFile/RunText
// Framework knowledge (key names, defaults, model families) is data: extractor_knowledge.h.
// See builtin_extractor.h for the rationale.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advisor/extractor_knowledge.h"
#include "advisor/job_metadata.h"
#include "advisor/shell_parser.h"
#include "core/status.h"

namespace schedmate::advisor {
struct PyFacts;  // advisor/python_scanner.h
}  // namespace schedmate::advisor

namespace schedmate::advisor::internal {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Precedence levels and candidates.

enum Level : int {
  kLibraryDefault = 0,
  kScriptDefault = 1,
  kConfig = 2,
  kCommandLine = 3,
  kInCode = 4,
};

struct Candidate {
  json value;
  int level = 0;
  int rank = 9;        // key specificity: lower wins within a level
  int64_t seq = 0;     // later wins among equals
  std::string source;  // file:line or "default: ..."
  std::string key;     // the key it came from
};

// Number of devices in a CUDA_VISIBLE_DEVICES-style list ("0,1,3" -> 3).
int CountDevices(const std::string& cvd);
// Lower case, '-' -> '_', no leading dashes.
std::string NormKey(std::string_view k);
// A command-line or shell value as JSON: int, double, bool, or string.
json TypedValue(std::string_view raw);
std::string ValueText(const json& v);
std::optional<double> AsNumber(const json& v);
bool IsTruthy(const json& v);
// A file as text: nullopt for binary content (a NUL byte, or more than 1 in 20 bytes not valid
// UTF-8); otherwise the text with each invalid byte replaced by U+FFFD. `replaced` counts the
// replacements.
std::optional<std::string> DecodeText(std::string_view s, size_t& replaced);
// "a.b.c" -> {"a", "b", "c"} (empty parts dropped).
std::vector<std::string> SplitPath(const std::string& key);

struct Launch {
  std::string launcher;  // "torchrun", "python", "deepspeed", ...
  std::string wrapper;   // "sbatch" (inside --wrap), "srun", "mpirun", or ""
  std::string program;   // script path as written, or module name
  bool module = false;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> opts;  // launcher options (normalised keys)
  std::map<std::string, std::string> env;
  std::string file;  // relative path of the script holding the command
  int line = 0;
  std::string cwd;  // working directory relative to root
  std::optional<int64_t> wrapper_processes;
  std::string wrapper_source;
};

struct ArgItem {
  std::string key;  // normalised
  json value;
  bool flag = false;
  std::string raw;  // as written, for locating the line
};

class Extraction {
 public:
  explicit Extraction(fs::path root) : root_(std::move(root)) {
    // The job directory itself may be reached through a symlink; what it holds may not lead out.
    std::error_code ec;
    real_root_ = fs::weakly_canonical(root_, ec);
    if (ec) real_root_.clear();
  }

  Status RunFile(const std::string& entry_rel);
  Status RunText(const std::string& text, const std::string& name);
  JobMetadata Finish();

 private:
  // --- candidates ---
  void Add(const std::string& field, json value, int level, int rank, std::string source,
           std::string key = {}) {
    if (value.is_null()) return;
    cands_[field].push_back(
        {std::move(value), level, rank, seq_++, std::move(source), std::move(key)});
  }
  // Maps a (normalised) key path to a field and adds it.
  void AddKey(const std::vector<std::string>& path, const json& value, int level,
              const std::string& source);
  // A key being mapped by AddKey: the path, its normalised leaf and parent, the normalised
  // dotted path.
  struct KeyAt {
    const std::vector<std::string>& path;
    std::string leaf, parent, full;
  };
  bool AddNamedKey(const KeyAt& key, const json& value, int level, const std::string& source);
  bool AddShapeKey(const KeyAt& key, const json& value, int level, const std::string& source);
  const Candidate* Best(const std::string& field) const {
    auto it = cands_.find(field);
    if (it == cands_.end() || it->second.empty()) return nullptr;
    const Candidate* best = nullptr;
    for (const Candidate& c : it->second) {
      if (best == nullptr || c.level > best->level ||
          (c.level == best->level &&
           (c.rank < best->rank || (c.rank == best->rank && c.seq > best->seq)))) {
        best = &c;
      }
    }
    return best;
  }

  // --- files ---
  std::optional<std::string> Read(const std::string& rel);
  std::optional<std::string> Resolve(const std::string& cwd, const std::string& path,
                                     const std::string& rel_dir) const;
  std::string Loc(const std::string& rel, int line) const {
    return rel + ":" + std::to_string(line);
  }
  int FindLine(const std::string& rel, int from_line, std::string_view needle);
  // The job's only file named `name` (a config copied without its folder); nullopt when there
  // is none or more than one.
  std::optional<std::string> FindByName(const std::string& name) const;

  // --- shell ---
  void ProcessShell(const std::string& rel, const std::string& text, const ShellContext& ctx,
                    const std::string& wrapper, int depth);
  void ProcessCommand(const std::string& rel, const ShellCommand& cmd, std::string& cwd,
                      const std::string& wrapper, int depth,
                      const std::map<std::string, std::string>& vars);
  // A command of a shell script being read: its words once `env A=B`, `nohup`, `time` ... are
  // stripped, with the program word at w[i].
  struct ShellCall {
    const std::string& rel;  // the script
    const ShellCommand& cmd;
    std::vector<std::string> w;
    size_t i = 0;
    std::map<std::string, std::string> env;  // the command's VAR=value and `env` settings
    const std::string& wrapper;
    int depth;
    const std::map<std::string, std::string>& vars;  // the script's variables
    std::vector<std::string> Rest(size_t from) const {
      return std::vector<std::string>(w.begin() + static_cast<std::ptrdiff_t>(from), w.end());
    }
  };
  // ProcessCommand's cases, one per kind of command.
  void ProcessSbatchCommand(const ShellCall& call, std::string& cwd);
  void ProcessSrunOrMpirun(const ShellCall& call, std::string& cwd);
  void ProcessScriptCall(const ShellCall& call, std::string& cwd);
  void ProcessLauncherCommand(const ShellCall& call, std::string& cwd);
  // A command of another tool (a site's submit client, a container runner) whose argument is a
  // whole command line in quotes (`qsub-like run --gpu 'python train.py ...'`): that command runs
  // under it. False when no argument is a command this extractor knows.
  bool ProcessQuotedCommand(const ShellCall& call, std::string& cwd);
  void AddLlamaFactoryLaunch(Launch l, const std::vector<std::string>& w, size_t k,
                             const std::string& rel, int line);
  void AddSbatch(const std::vector<SbatchDirective>& ds, const std::string& rel);
  // A launch of the command at rel:cmd.line with its wrapper and environment (CUDA_VISIBLE_DEVICES
  // inherited from the script's variables); launcher, program and args are the caller's.
  static Launch NewLaunch(const std::string& rel, const ShellCommand& cmd, const std::string& cwd,
                          const std::string& wrapper, const std::map<std::string, std::string>& env,
                          const std::map<std::string, std::string>& vars);
  std::optional<std::string> GuessDelegate(const std::string& rel);

  // --- launch and program ---
  void ProcessLaunch(const Launch& l);
  std::vector<ArgItem> ParseArgs(const std::vector<std::string>& args,
                                 std::vector<std::string>* positionals) const;
  void ProcessProgram(const std::string& rel, bool is_entry_python);
  // ProcessProgram's steps (program_reader.cc).
  void VoteImports(const PyFacts& f);
  // argparse add_argument defaults (and aliases, positionals) and dataclass fields.
  void ReadArgparseDefaults(const std::string& rel, const PyFacts& f);
  // Module-level globals, `args.x = ...` after parsing, `x //= world_size`.
  void ReadAssignments(const std::string& rel, const PyFacts& f);
  // Calls that set training parameters, models, datasets, optimizers, Hydra configs.
  void ReadCalls(const std::string& rel, const PyFacts& f);
  // python-fire / typer / click: the parameters' defaults of the function run as the command line.
  void ReadEntryFunction(const std::string& rel, const PyFacts& f);
  // The model object: `model = X(...)`.
  void ReadModelConstructor(const std::string& rel, const PyFacts& f);
  void LoadConfig(const std::string& rel, int level, int depth, const std::string& prefix = {});
  // Hydra choices from the command line (`experiment=x`) when the program's primary config is not
  // in the sources: `<configs dir>/<group>/<option>.yaml` by Hydra's conventions.
  void LoadHydraChoicesWithoutPrimary(const Launch& l);
  // A Hydra defaults-list entry whose option file is not in the sources still names a model or a
  // dataset (`- /model: transformer_ls`).
  void AddHydraChoiceName(const std::string& group, const std::string& option, int level,
                          const std::string& source);
  // A model architecture config (transformers config.json and the like): the model type and its
  // shape keys only.
  void LoadModelConfig(const std::string& rel);
  // Fenced ```yaml blocks of a Markdown file (a model card's training config) as one config.
  void LoadMarkdownConfig(const std::string& rel);
  // A config that is not in the sources but named by a known convention: OpenMMLab's
  // "{model}_{N}xb{B}-{E}e_{data}.py" / "{model}_{S}x_{data}.py", detectron2's model zoo
  // "{Dataset}-{Task}/{model}_{S}x.yaml". Values at library-default level, said to be derived.
  void FromConfigName(const std::string& path);
  void LoadPythonConfig(const std::string& rel, int level, int depth);
  void FlattenJson(const json& j, std::vector<std::string>& path, int level, const std::string& rel,
                   const std::function<int(const std::vector<std::string>&)>& line_of);
  void Vote(const std::string& framework, int points) { votes_[framework] += points; }

  // True when `p` resolves (through every symlink) to a path inside the job directory.
  bool InsideJobDir(const fs::path& p) const;

  // --- derivation (derivation.cc): the steps of Finish(), in the order it runs them ---
  using LaunchOptions = std::map<std::string, std::string>;  // launcher option -> value
  // What the steps hand to each other.
  struct Derived {
    const Launch* main = nullptr;               // the launch with the most arguments
    std::optional<int64_t> processes;           // data-parallel processes x model-parallel
    std::optional<int64_t> per_node_processes;  // torchrun: x nodes once the node count is known
    std::string processes_src;
    std::optional<int64_t> gpus;
    std::string gpus_src;
    std::optional<int64_t> nodes;
    std::string nodes_src;
    // The Slurm request (#SBATCH, srun options).
    std::optional<int64_t> sb_gpus_per_node, sb_nodes, sb_gpus_total;
    std::string sb_src;
    bool training_job = false;
    std::string framework;
    std::string family;
    std::string model;
  };
  void Set(const std::string& field, json value, std::string source);
  std::string OptionSource(const Launch& l, const std::string& key);
  // The first of `keys` among the launcher options with an integer value (before any ':').
  std::optional<int64_t> OptionInt(const Launch& l, const LaunchOptions& o,
                                   std::initializer_list<const char*> keys, std::string* src);
  // Processes and nodes from the main launch's launcher and its wrapper.
  void CountLaunchProcesses(Derived& d);
  void CountTorchrunProcesses(const LaunchOptions& o, Derived& d);
  void CountDeepspeedProcesses(const LaunchOptions& o, Derived& d);
  void CountAccelerateProcesses(const LaunchOptions& o, Derived& d);
  void ReadAccelerateConfig(const std::string& cf, bool processes_given, bool machines_given,
                            Derived& d);
  void CountSingleLaunchProcesses(Derived& d);
  void ReadSlurmRequest(Derived& d);
  // GPUs: launcher processes, CUDA_VISIBLE_DEVICES, the Slurm request, explicit arguments, CUDA
  // use.
  void DeriveGpusAndNodes(Derived& d);
  void SetLauncherName(const Derived& d);
  // Plain fields from the best candidates; an mmcv backbone over a generic model type.
  void SetDirectFields();
  // Megatron-style parallelism, accumulation divided by the world size, global batch size.
  void DeriveBatchSizes(Derived& d);
  void DerivePrecision();
  void DeriveFramework(Derived& d);
  void ApplyLibraryDefaults(const Derived& d);
  void DeriveImageSize();
  void DeriveModelFamilyAndParams(Derived& d);
  void DeriveTask(const Derived& d);
  // A confidence per field from how it was found (see builtin_extractor.h).
  void ScoreConfidence();
  // Keys whose field depends on the framework (framework_keys), the RL policy default, layers.
  void ApplyFrameworkKeys(const Derived& d);
  // `lr = args.lr * world_size`: the value the program trains with is scaled by the replicas.
  void ApplyWorldScaling(const Derived& d);

  const ExtractorKnowledge& knowledge_ = ExtractorKnowledge::Builtin();
  fs::path root_;
  fs::path real_root_;  // root_ with symlinks resolved; empty when it cannot be resolved
  JobMetadata meta_;
  std::map<std::string, std::vector<Candidate>> cands_;
  int64_t seq_ = 0;
  std::map<std::string, std::string> text_cache_;
  std::set<std::string> skipped_;
  std::vector<Launch> launches_;
  std::vector<SbatchDirective> sbatch_;
  std::string sbatch_file_;
  std::map<std::string, int> votes_;
  bool torchtune_packaged_config_ = false;  // `tune run ... --config family/SIZE_recipe`
  std::set<std::string> loaded_configs_;
  std::set<std::string> visited_scripts_;
  // Program facts used by derivations.
  bool program_found_ = false;
  bool uses_cuda_ = false;
  bool cuda_flag_defined_ = false;  // argparse --cuda store_true exists
  bool cuda_flag_given_ = false;
  bool cpu_flag_given_ = false;
  std::map<std::string, std::string> world_divides_;     // field -> source of `x //= world_size`
  std::map<std::string, std::string> world_multiplies_;  // field -> source of `x = y * world`
  std::string device_per_node_src_;  // a call that makes one process drive all local GPUs
  std::string layer_family_;         // the family of the layers the program builds a net from
  std::string layer_family_src_;
  bool hydra_primary_loaded_ = false;
  // Candidates of framework_keys, held until the framework is known: framework -> candidates.
  struct FrameworkCandidate {
    std::string framework, field;
    json value;
    int level = 0, rank = 9;
    std::string source, key;
  };
  std::vector<FrameworkCandidate> framework_cands_;
  std::vector<std::string> program_names_;  // basenames of programs launched
  bool hf_trainer_ = false;
  bool config_only_ = false;
  std::optional<int64_t> tp_, pp_;
  struct Shape {
    int64_t value = 0;
    int level = -1;
    std::string source;
  };
  std::map<std::string, Shape> shape_;  // transformer shape keys (for parameter counts)
  std::map<std::string, std::string> hydra_choices_;  // `group=option` from the command line
  struct Named {
    std::string value;
    int level = -1;
    std::string source;
  };
  Named backbone_type_;
  std::map<std::string, std::string> arg_alias_;  // argparse option name (normalised) -> dest
  std::vector<std::string> arg_positionals_;      // argparse positional dests, in order
  Shape spawned_devices_;  // Trainer(devices=N): processes the program starts itself
};

}  // namespace schedmate::advisor::internal
