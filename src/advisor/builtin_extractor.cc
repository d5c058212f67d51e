#include "advisor/builtin_extractor.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "advisor/python_scanner.h"
#include "advisor/shell_parser.h"
#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::advisor {
namespace {

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

// Key (normalised: lower case, '-' -> '_', no leading dashes) -> (field, rank).
const std::map<std::string, std::pair<std::string, int>>& KeyTable() {
  static const auto* t = new std::map<std::string, std::pair<std::string, int>>{
      {"per_device_train_batch_size", {"per_device_batch_size", 1}},
      {"per_gpu_train_batch_size", {"per_device_batch_size", 1}},
      {"micro_batch_size", {"per_device_batch_size", 1}},
      {"train_micro_batch_size_per_gpu", {"per_device_batch_size", 1}},
      {"batch_size_per_gpu", {"per_device_batch_size", 1}},
      {"samples_per_gpu", {"per_device_batch_size", 1}},
      {"imgs_per_gpu", {"per_device_batch_size", 2}},
      {"train_batch_size", {"per_device_batch_size", 2}},
      {"batch_size", {"per_device_batch_size", 3}},
      {"bs", {"per_device_batch_size", 4}},
      {"batch", {"per_device_batch_size", 4}},
      {"global_batch_size", {"global_batch_size", 1}},
      {"ims_per_batch", {"global_batch_size", 2}},  // detectron2 SOLVER.IMS_PER_BATCH: all GPUs
      {"total_batch_size", {"global_batch_size", 1}},
      {"effective_batch_size", {"global_batch_size", 2}},
      {"gradient_accumulation_steps", {"gradient_accumulation", 1}},
      {"grad_accum_steps", {"gradient_accumulation", 1}},
      {"gradient_accumulation", {"gradient_accumulation", 1}},
      {"accumulate_grad_batches", {"gradient_accumulation", 1}},
      {"accumulation_steps", {"gradient_accumulation", 2}},
      {"grad_accum", {"gradient_accumulation", 2}},
      {"accum_iter", {"gradient_accumulation", 2}},
      {"accumulate", {"gradient_accumulation", 3}},
      {"max_seq_length", {"sequence_length", 1}},
      {"seq_length", {"sequence_length", 1}},
      {"seq_len", {"sequence_length", 1}},
      {"sequence_len", {"sequence_length", 1}},  // axolotl
      {"max_seq_len", {"sequence_length", 1}},
      {"cutoff_len", {"sequence_length", 1}},
      {"sequence_length", {"sequence_length", 1}},
      {"block_size", {"sequence_length", 2}},
      {"max_length", {"sequence_length", 2}},
      {"model_max_length", {"sequence_length", 2}},
      {"context_length", {"sequence_length", 2}},
      {"bptt", {"sequence_length", 2}},
      {"max_source_length", {"sequence_length", 3}},
      {"n_ctx", {"sequence_length", 3}},
      {"resolution", {"image_size", 1}},
      {"image_size", {"image_size", 1}},
      {"img_size", {"image_size", 1}},
      {"imgsz", {"image_size", 1}},
      {"input_size", {"image_size", 2}},
      {"crop_size", {"image_size", 2}},
      {"num_train_epochs", {"epochs", 1}},
      {"epochs", {"epochs", 1}},
      {"max_epochs", {"epochs", 1}},
      {"total_epochs", {"epochs", 1}},
      {"num_epochs", {"epochs", 1}},
      {"n_epochs", {"epochs", 1}},
      {"epoch", {"epochs", 2}},
      {"max_steps", {"max_steps", 1}},
      {"max_iters", {"max_steps", 1}},
      {"train_iters", {"max_steps", 1}},
      {"max_train_steps", {"max_steps", 1}},
      {"total_steps", {"max_steps", 1}},
      {"num_train_steps", {"max_steps", 1}},
      {"train_steps", {"max_steps", 1}},
      {"max_iter", {"max_steps", 1}},
      {"max_update", {"max_steps", 1}},  // fairseq --max-update
      {"total_iters", {"max_steps", 1}},
      {"max_iterations", {"max_steps", 1}},
      {"num_steps", {"max_steps", 3}},
      {"iterations", {"max_steps", 3}},
      {"learning_rate", {"learning_rate", 1}},
      {"lr", {"learning_rate", 1}},
      {"base_lr", {"learning_rate", 2}},
      {"lr0", {"learning_rate", 2}},
      {"max_lr", {"learning_rate", 2}},
      {"peak_lr", {"learning_rate", 2}},
      {"optimizer", {"optimizer", 1}},
      {"optim", {"optimizer", 1}},
      {"optimizer_type", {"optimizer", 1}},
      {"optimizer_name", {"optimizer", 1}},
      {"fp16", {"precision", 1}},
      {"bf16", {"precision", 1}},
      {"mixed_precision", {"precision", 1}},
      {"precision", {"precision", 1}},
      {"amp", {"precision", 2}},
      {"use_amp", {"precision", 2}},
      {"torch_dtype", {"precision", 2}},
      {"dtype", {"precision", 3}},
      {"half", {"precision", 3}},
      {"dataset_name", {"dataset", 1}},
      {"dataset", {"dataset", 1}},
      {"data_name", {"dataset", 1}},
      {"task_name", {"dataset", 2}},
      {"train_data_dir", {"dataset", 2}},
      {"data_path", {"dataset", 2}},
      {"train_file", {"dataset", 2}},
      {"train_data", {"dataset", 2}},
      {"data", {"dataset", 3}},
      {"data_dir", {"dataset", 3}},
      {"data_root", {"dataset", 4}},
      {"ann_file", {"dataset", 3}},
      {"dataset_dir", {"dataset", 5}},
      {"model_name_or_path", {"model", 1}},
      {"pretrained_model_name_or_path", {"model", 1}},
      {"model_id_or_path", {"model", 1}},
      {"model_name", {"model", 1}},
      {"base_model", {"model", 1}},
      {"model_id", {"model", 1}},
      {"model", {"model", 2}},
      {"arch", {"model", 2}},
      {"backbone", {"model", 3}},  // a named backbone (string); mmcv's backbone dicts are below
      {"architecture", {"model", 2}},
      {"model_path", {"model", 2}},
      {"model_type", {"model", 3}},
      {"network", {"model", 3}},
      {"net", {"model", 4}},
      {"nproc_per_node", {"num_gpus", 1}},
      {"num_gpus", {"num_gpus", 1}},
      {"n_gpu", {"num_gpus", 1}},
      {"n_gpus", {"num_gpus", 1}},
      {"ngpus", {"num_gpus", 1}},
      {"gpus", {"num_gpus", 2}},
      {"nnodes", {"num_nodes", 1}},
      {"num_nodes", {"num_nodes", 1}},
      {"num_machines", {"num_nodes", 1}},
  };
  return *t;
}

int CountDevices(const std::string& cvd) {
  std::string_view s = Trim(cvd);
  if (s.empty()) return 0;
  int n = 0;
  for (std::string_view p : Split(s, ',')) n += !Trim(p).empty();
  return n;
}

std::string NormKey(std::string_view k) {
  while (!k.empty() && k.front() == '-') k.remove_prefix(1);
  std::string s = ToLower(k);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// A command-line or shell value as JSON: int, double, bool, or string.
json TypedValue(std::string_view raw) {
  std::string_view s = Trim(raw);
  if (s.size() >= 2 &&
      ((s.front() == '"' && s.back() == '"') || (s.front() == '\'' && s.back() == '\'')))
    s = s.substr(1, s.size() - 2);
  if (auto i = ParseInt(s)) return json(*i);
  if (!s.empty() &&
      (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' || s[0] == '-')) {
    if (auto d = ParseDouble(s); d && std::isfinite(*d)) return json(*d);
  }
  std::string l = ToLower(s);
  if (l == "true") return json(true);
  if (l == "false") return json(false);
  if (l == "none" || l == "null") return json(nullptr);
  return json(std::string(s));
}

std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "None";
  return v.dump();
}

std::optional<double> AsNumber(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    if (auto d = ParseDouble(v.get<std::string>()); d && std::isfinite(*d)) return d;
  }
  return std::nullopt;
}

bool IsTruthy(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) {
    std::string l = ToLower(v.get<std::string>());
    return l == "true" || l == "1" || l == "yes";
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Reading files.

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80             ? 0
             : (c & 0xE0) == 0xC0 ? 1
             : (c & 0xF0) == 0xE0 ? 2
             : (c & 0xF8) == 0xF0 ? 3
                                  : 9;
  if (n == 9 || i + n >= s.size()) return 0;
  for (size_t k = 1; k <= n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n + 1;
}

// A file as text: nullopt for binary content (a NUL byte, or more than 1 in 20 bytes not valid
// UTF-8); otherwise the text with each invalid byte replaced by U+FFFD (a Latin-1 comment in a
// batch script must not hide the rest of the script). `replaced` counts the replacements.
std::optional<std::string> DecodeText(std::string_view s, size_t& replaced) {
  replaced = 0;
  if (s.find('\0') != std::string_view::npos) return std::nullopt;
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++replaced;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (replaced * 20 > s.size()) return std::nullopt;
  return out;
}

}  // namespace

namespace {

// Known mmcv/mmdet `_base_` schedules, used when a referenced base file is not in the sources
// (they ship with the library, not with the job's repository).
struct KnownBase {
  const char* file_stem;
  const char* optimizer;
  double lr;
  int epochs;
};
constexpr KnownBase kKnownMmdetSchedules[] = {
    {"schedule_1x", "SGD", 0.02, 12},
    {"schedule_2x", "SGD", 0.02, 24},
    {"schedule_20e", "SGD", 0.02, 20},
    {"schedule_3x", "SGD", 0.02, 36},
};

// Image sizes of well-known datasets (square side in pixels).
const std::vector<std::pair<std::string, int>>& DatasetImageSizes() {
  static const auto* t = new std::vector<std::pair<std::string, int>>{
      {"fashion_mnist", 28}, {"fashionmnist", 28}, {"mnist", 28},    {"cifar10", 32},
      {"cifar100", 32},      {"cifar", 32},        {"svhn", 32},     {"tiny_imagenet", 64},
      {"tinyimagenet", 64},  {"stl10", 96},        {"imagenet", 224}};
  return *t;
}

// Model families: first matching pattern wins (order matters: "rcnn" before "cnn").
const std::vector<std::pair<std::string, std::string>>& FamilyPatterns() {
  static const auto* t =
      new std::vector<std::pair<std::string, std::string>>{{"rcnn", "rcnn"},
                                                           {"r_cnn", "rcnn"},
                                                           {"retinanet", "retinanet"},
                                                           {"yolo", "yolo"},
                                                           {"detr", "detr"},
                                                           {"mllama", "llama"},
                                                           {"llama", "llama"},
                                                           {"mixtral", "mixtral"},
                                                           {"mistral", "mistral"},
                                                           {"qwen", "qwen"},
                                                           {"minicpm", "minicpm"},
                                                           {"chatglm", "glm"},
                                                           {"baichuan", "baichuan"},
                                                           {"gemma", "gemma"},
                                                           {"falcon", "falcon"},
                                                           {"bloom", "bloom"},
                                                           {"pythia", "gpt-neox"},
                                                           {"gpt_neox", "gpt-neox"},
                                                           {"gpt-neox", "gpt-neox"},
                                                           {"gptj", "gpt-j"},
                                                           {"gpt", "gpt"},
                                                           {"flan_t5", "t5"},
                                                           {"flan-t5", "t5"},
                                                           {"mt5", "t5"},
                                                           {"t5", "t5"},
                                                           {"bart", "bart"},
                                                           {"deberta", "deberta"},
                                                           {"roberta", "roberta"},
                                                           {"electra", "electra"},
                                                           {"albert", "albert"},
                                                           {"bert", "bert"},
                                                           {"whisper", "whisper"},
                                                           {"wav2vec", "wav2vec2"},
                                                           {"clip", "clip"},
                                                           {"stable_diffusion", "diffusion"},
                                                           {"stable-diffusion", "diffusion"},
                                                           {"sdxl", "diffusion"},
                                                           {"diffusion", "diffusion"},
                                                           {"unet", "unet"},
                                                           {"swin", "swin"},
                                                           {"convnext", "convnext"},
                                                           {"deit", "vit"},
                                                           {"vit", "vit"},
                                                           {"resnext", "resnet"},
                                                           {"resnet", "resnet"},
                                                           {"wide_resnet", "resnet"},
                                                           {"efficientnet", "efficientnet"},
                                                           {"mobilenet", "mobilenet"},
                                                           {"densenet", "densenet"},
                                                           {"vgg", "vgg"},
                                                           {"alexnet", "alexnet"},
                                                           {"lstm", "lstm"},
                                                           {"gru", "gru"},
                                                           {"rnn", "rnn"},
                                                           {"transformer", "transformer"},
                                                           {"mlp", "mlp"},
                                                           {"cnn", "cnn"},
                                                           {"lenet", "cnn"},
                                                           {"convnet", "cnn"}};
  return *t;
}

// Parameter counts of well-known checkpoints named without a size suffix.
const std::vector<std::pair<std::string, std::string>>& KnownParams() {
  static const auto* t =
      new std::vector<std::pair<std::string, std::string>>{{"bert-large", "~340M"},
                                                           {"bert-base", "~110M"},
                                                           {"distilbert", "~66M"},
                                                           {"roberta-large", "~355M"},
                                                           {"roberta-base", "~125M"},
                                                           {"gpt2-xl", "~1.5B"},
                                                           {"gpt2-large", "~774M"},
                                                           {"gpt2-medium", "~355M"},
                                                           {"gpt2", "~124M"},
                                                           {"t5-small", "~60M"},
                                                           {"t5-base", "~220M"},
                                                           {"t5-large", "~770M"},
                                                           {"resnet18", "~11.7M"},
                                                           {"resnet34", "~21.8M"},
                                                           {"resnet50", "~25.6M"},
                                                           {"resnet101", "~44.5M"},
                                                           {"resnet152", "~60.2M"},
                                                           {"vit-base", "~86M"},
                                                           {"vit-large", "~307M"},
                                                           {"yolov8n", "~3.2M"},
                                                           {"yolov8s", "~11.2M"},
                                                           {"yolov8m", "~25.9M"},
                                                           {"yolov8l", "~43.7M"},
                                                           {"yolov8x", "~68.2M"},
                                                           {"stable-diffusion-v1", "~860M (UNet)"},
                                                           {"r50", "~41M (Faster R-CNN R50-FPN)"}};
  return *t;
}

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

  // --- shell ---
  void ProcessShell(const std::string& rel, const std::string& text, const ShellContext& ctx,
                    const std::string& wrapper, int depth);
  void ProcessCommand(const std::string& rel, const ShellCommand& cmd, std::string& cwd,
                      const std::string& wrapper, int depth,
                      const std::map<std::string, std::string>& vars);
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
  void LoadConfig(const std::string& rel, int level, int depth, const std::string& prefix = {});
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
  std::map<std::string, std::string> world_divides_;  // field -> source of `x //= world_size`
  std::vector<std::string> program_names_;            // basenames of programs launched
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

bool Extraction::InsideJobDir(const fs::path& p) const {
  if (real_root_.empty()) return false;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(p, ec);
  if (ec) return false;
  const fs::path rel = real.lexically_relative(real_root_);
  return !rel.empty() && *rel.begin() != "..";
}

std::optional<std::string> Extraction::Read(const std::string& rel) {
  auto it = text_cache_.find(rel);
  if (it != text_cache_.end()) return it->second;
  if (skipped_.count(rel)) return std::nullopt;
  fs::path p = root_ / rel;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  if (!InsideJobDir(p)) {
    // A symlink out of the job directory (a config linked to /etc/shadow): a job's sources must
    // not make whoever runs the advisor read other files.
    skipped_.insert(rel);
    ++meta_.files_skipped;
    meta_.notes.push_back(rel + ": skipped (resolves outside the job directory)");
    return std::nullopt;
  }
  Result<std::string> r = ReadFileToString(p.string(), size_t{8} << 20);
  size_t replaced = 0;
  std::optional<std::string> text;
  if (r.ok()) text = DecodeText(*r, replaced);
  if (!text) {
    skipped_.insert(rel);
    ++meta_.files_skipped;
    meta_.notes.push_back(rel + ": skipped (" + (r.ok() ? "binary" : r.status().message()) + ")");
    return std::nullopt;
  }
  if (replaced > 0) {
    meta_.notes.push_back(rel + ": " + std::to_string(replaced) +
                          " bytes that are not UTF-8 replaced by U+FFFD");
  }
  meta_.files_read.push_back(rel);
  text_cache_[rel] = *text;
  return *text;
}

std::optional<std::string> Extraction::Resolve(const std::string& cwd, const std::string& path,
                                               const std::string& rel_dir) const {
  if (path.empty()) return std::nullopt;
  std::vector<fs::path> tries;
  fs::path p(path);
  if (p.is_absolute()) return std::nullopt;
  tries.push_back(fs::path(cwd) / p);
  tries.push_back(fs::path(rel_dir) / p);
  tries.push_back(p);
  for (const fs::path& t : tries) {
    fs::path norm = t.lexically_normal();
    std::string s = norm.generic_string();
    if (s.empty() || StartsWith(s, "..")) continue;
    std::error_code ec;
    if (fs::is_regular_file(root_ / norm, ec)) return s;
  }
  return std::nullopt;
}

int Extraction::FindLine(const std::string& rel, int from_line, std::string_view needle) {
  auto it = text_cache_.find(rel);
  if (it == text_cache_.end() || needle.empty()) return from_line;
  std::vector<std::string_view> lines = Split(it->second, '\n');
  for (size_t i = static_cast<size_t>(std::max(from_line, 1)) - 1; i < lines.size(); ++i) {
    if (lines[i].find(needle) != std::string_view::npos) return static_cast<int>(i) + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = Trim(lines[i]);
    if (StartsWith(l, "#") && !StartsWith(l, "#SBATCH")) continue;
    if (lines[i].find(needle) != std::string_view::npos) return static_cast<int>(i) + 1;
  }
  return from_line;
}

void Extraction::AddKey(const std::vector<std::string>& path, const json& value, int level,
                        const std::string& source) {
  if (path.empty()) return;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const std::string& c = path[i];
    if (StartsWith(c, "val") || StartsWith(c, "test") || StartsWith(c, "eval") ||
        StartsWith(c, "predict") || StartsWith(c, "infer")) {
      return;
    }
  }
  std::string leaf = NormKey(path.back());
  std::string parent = path.size() >= 2 ? NormKey(path[path.size() - 2]) : "";
  std::string full;
  for (const auto& c : path) full += (full.empty() ? "" : ".") + NormKey(c);
  bool scalar = value.is_primitive();
  // Hydra `_target_` and torchtune `_component_` name the class or builder to instantiate.
  const bool instantiate = leaf == "_target_" || leaf == "_component_";
  auto last_segment = [](std::string v) {
    return v.substr(v.find_last_of('.') == std::string::npos ? 0 : v.find_last_of('.') + 1);
  };
  if ((parent == "optimizer" || parent == "optim") &&
      (leaf == "type" || leaf == "name" || instantiate)) {
    if (value.is_string()) {
      std::string v = value.get<std::string>();
      if (instantiate) v = last_segment(v);
      Add("optimizer", json(v), level, 0, source, full);
    }
    return;
  }
  if (instantiate && path.size() == 2 && value.is_string() &&
      (parent == "model" || parent == "dataset" || parent == "data")) {
    // torchtune.models.llama3_1.llama3_1_8b -> llama3_1_8b; torchtune.datasets.alpaca_dataset
    // -> alpaca; my.data.CIFAR10DataModule -> CIFAR10.
    std::string v = last_segment(value.get<std::string>());
    if (parent == "model") {
      Add("model", json(v), level, 3, source, full);
    } else {
      for (std::string_view suffix : {"_dataset", "Dataset", "DataModule", "_datamodule"}) {
        if (v.size() > suffix.size() && EndsWith(v, suffix)) {
          v.resize(v.size() - suffix.size());
          break;
        }
      }
      Add("dataset", json(v), level, 2, source, full);
    }
    return;
  }
  if (path.size() == 1 && leaf == "datasets" && value.is_array()) {
    // axolotl: datasets: [{path: tatsu-lab/alpaca, type: alpaca}, ...]
    std::string names;
    for (const json& d : value) {
      const json* n = nullptr;
      if (d.is_string()) {
        n = &d;
      } else if (d.is_object()) {
        for (const char* k : {"path", "name"}) {
          if (d.contains(k) && d[k].is_string()) {
            n = &d[k];
            break;
          }
        }
      }
      if (n != nullptr) names += (names.empty() ? "" : ", ") + n->get<std::string>();
    }
    if (!names.empty()) Add("dataset", json(names), level, 1, source, full);
    return;
  }
  if ((parent == "data" || parent == "dataset") && (leaf == "name" || leaf == "path") &&
      value.is_string()) {
    Add("dataset", value, level, 1, source, full);
    return;
  }
  if ((parent == "optimizer" || parent == "params") && leaf == "lr") {
    if (scalar) Add("learning_rate", value, level, 0, source, full);
    return;
  }
  if ((parent == "fp16" || parent == "bf16") && leaf == "enabled") {
    if (IsTruthy(value)) Add("precision", json(parent), level, 0, source, full);
    return;
  }
  if (parent == "fp16" && path.size() == 2 &&
      (leaf == "loss_scale" || leaf == "initial_scale_power")) {
    Add("precision", json("fp16"), level, 1, source, full);  // mmcv: fp16 = dict(loss_scale=...)
    return;
  }
  if ((leaf == "fp16" || leaf == "bf16" || leaf == "half" || leaf == "amp" || leaf == "use_amp") &&
      (value.is_boolean() || value.is_number())) {
    if (IsTruthy(value))
      Add("precision", json(leaf == "half" ? "fp16" : leaf), level, 1, source, full);
    return;
  }
  if (path.size() == 2 && parent == "model" && leaf == "type") {
    if (value.is_string()) Add("model", value, level, 3, source, full);
    return;
  }
  // mmcv/mmengine: model=dict(backbone=dict(type='ResNet', depth=18)) names the network better
  // than a generic wrapper type (ImageClassifier, EncoderDecoder).
  if (parent == "backbone" && (leaf == "type" || leaf == "depth") && value.is_primitive()) {
    Shape& s = shape_["backbone_" + leaf];
    if (level >= s.level) s = {value.is_number_integer() ? value.get<int64_t>() : 0, level, source};
    if (leaf == "type" && value.is_string())
      backbone_type_ = {value.get<std::string>(), level, source};
    return;
  }
  if (leaf == "stage" && parent == "zero_optimization") return;
  static const std::set<std::string> kShapeKeys = {
      "n_layer",     "num_layers", "n_layers",   "num_hidden_layers", "n_embd",
      "hidden_size", "d_model",    "vocab_size", "padded_vocab_size"};
  if (kShapeKeys.count(leaf) && value.is_number_integer()) {
    Shape& s = shape_[leaf];
    if (level >= s.level) s = {value.get<int64_t>(), level, source};
    return;
  }
  if (leaf == "tensor_model_parallel_size" || leaf == "tensor_parallel_size") {
    if (auto n = AsNumber(value)) tp_ = static_cast<int64_t>(*n);
    return;
  }
  if (leaf == "pipeline_model_parallel_size" || leaf == "pipeline_parallel_size") {
    if (auto n = AsNumber(value)) pp_ = static_cast<int64_t>(*n);
    return;
  }
  if ((leaf == "device" || leaf == "devices" || leaf == "gpu_ids") && value.is_primitive()) {
    // device=0,1 / gpu_ids "0,1" list device indexes; Lightning's devices=4 is a count.
    std::string v = ValueText(value);
    bool digits_and_commas = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == ' ';
    });
    if (!digits_and_commas) return;
    int64_t n =
        leaf == "devices" && value.is_number_integer() ? value.get<int64_t>() : CountDevices(v);
    if (n > 0) Add("num_gpus", json(n), level, 3, source, full);
    if (leaf == "devices" && n > 0 && level >= spawned_devices_.level) {
      spawned_devices_ = {n, level, source};  // Lightning: one process per device
    }
    return;
  }
  auto it = KeyTable().find(leaf);
  if (it == KeyTable().end()) return;
  const auto& [field, rank] = it->second;
  if (!scalar) return;
  // DeepSpeed's train_batch_size is the global batch.
  if (leaf == "train_batch_size" && (parent == "deepspeed" || full.rfind("deepspeed.", 0) == 0)) {
    Add("global_batch_size", value, level, 1, source, full);
    return;
  }
  if (field == "num_gpus" && !value.is_number_integer()) {
    if (!(value.is_string() && ParseInt(value.get<std::string>()))) return;
  }
  // "auto" values are filled in elsewhere (HF <-> DeepSpeed integration).
  if (value.is_string() && ToLower(value.get<std::string>()) == "auto" && field != "precision")
    return;
  Add(field, value, level, rank, source, full);
}

void Extraction::AddSbatch(const std::vector<SbatchDirective>& ds, const std::string& rel) {
  for (const SbatchDirective& d : ds) {
    sbatch_.push_back(d);
    if (sbatch_file_.empty()) sbatch_file_ = rel;
  }
  if (!ds.empty()) Vote("slurm", 0);
}

std::optional<std::string> Extraction::GuessDelegate(const std::string& rel) {
  // `bash $1` with $1 unknown: the job's other shell scripts that launch a Python program.
  std::vector<std::string> found;
  std::set<fs::path> dirs = {fs::path(rel).parent_path(), fs::path()};
  static const std::regex kLaunch(
      R"((^|[\s;&|])(python[0-9.]*|torchrun|deepspeed|accelerate|llamafactory-cli|mpirun|srun)\s)");
  for (const fs::path& d : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(root_ / d, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      fs::path f = d / it->path().filename();
      std::string s = f.lexically_normal().generic_string();
      if (s == rel || !EndsWith(s, ".sh")) continue;
      auto text = Read(s);
      if (!text) continue;
      if (std::regex_search(*text, kLaunch)) found.push_back(s);
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (found.size() == 1) return found[0];
  return std::nullopt;
}

}  // namespace

namespace {

std::string Basename(const std::string& p) {
  size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

bool IsPythonProgram(const std::string& w) {
  std::string b = Basename(w);
  if (b == "python" || b == "python3" || b == "python2") return true;
  return StartsWith(b, "python3.") || StartsWith(b, "python2.");
}

bool LooksLikeOption(const std::string& w) {
  if (StartsWith(w, "--")) return w.size() > 2;
  return w.size() >= 2 && w[0] == '-' && std::isalpha(static_cast<unsigned char>(w[1]));
}

// Splits launcher options from the program. `flags` take no value.
size_t TakeOptions(const std::vector<std::string>& w, size_t i, const std::set<std::string>& flags,
                   std::vector<std::pair<std::string, std::string>>& opts) {
  while (i < w.size() && LooksLikeOption(w[i])) {
    std::string o = w[i];
    size_t eq = o.find('=');
    if (eq != std::string::npos) {
      opts.emplace_back(NormKey(o.substr(0, eq)), o.substr(eq + 1));
      ++i;
      continue;
    }
    std::string k = NormKey(o);
    if (flags.count(k) || i + 1 >= w.size() || LooksLikeOption(w[i + 1])) {
      opts.emplace_back(k, "");
      ++i;
      if (k == "m" || k == "module") break;  // next word is the module
      continue;
    }
    opts.emplace_back(k, w[i + 1]);
    i += 2;
  }
  return i;
}

}  // namespace

void Extraction::ProcessShell(const std::string& rel, const std::string& text,
                              const ShellContext& ctx, const std::string& wrapper, int depth) {
  std::string cwd = fs::path(rel).parent_path().generic_string();
  ShellContext sc = ctx;
  sc.script_path = rel;
  sc.script_dir = cwd.empty() ? "." : cwd;
  // `. FILE` / `source FILE`: a file of the job, read like any other (inside the job directory).
  sc.source = [this, cwd](const std::string& f) -> std::optional<std::pair<std::string, std::string>> {
    std::optional<std::string> path = Resolve(cwd, f, cwd);
    if (!path) return std::nullopt;
    std::optional<std::string> body = Read(*path);
    if (!body) return std::nullopt;
    return std::make_pair(std::move(*body), *path);
  };
  ShellScript s = ParseShell(text, sc);
  AddSbatch(s.sbatch, rel);
  std::map<std::string, std::string> vars = ctx.variables;
  for (const auto& [k, v] : s.variables) vars[k] = v;
  for (const ShellCommand& c : s.commands) {
    ProcessCommand(c.file.empty() ? rel : c.file, c, cwd, wrapper, depth, vars);
  }
}

Launch Extraction::NewLaunch(const std::string& rel, const ShellCommand& cmd,
                             const std::string& cwd, const std::string& wrapper,
                             const std::map<std::string, std::string>& env,
                             const std::map<std::string, std::string>& vars) {
  Launch l;
  l.wrapper = wrapper;
  l.env = env;
  for (const auto& [k, v] : vars) {
    if (k == "CUDA_VISIBLE_DEVICES" && !l.env.count(k)) l.env[k] = v;
  }
  l.file = rel;
  l.line = cmd.line;
  l.cwd = cwd;
  return l;
}

void Extraction::ProcessCommand(const std::string& rel, const ShellCommand& cmd, std::string& cwd,
                                const std::string& wrapper, int depth,
                                const std::map<std::string, std::string>& vars) {
  if (depth > 6) return;
  std::vector<std::string> w;
  for (const ShellWord& x : cmd.words) w.push_back(x.text);
  std::map<std::string, std::string> env = cmd.env;
  size_t i = 0;
  // Strip `env A=B`, and wrappers that just run the rest.
  while (i < w.size()) {
    std::string b = Basename(w[i]);
    if (b == "env" || b == "nohup" || b == "time" || b == "exec" || b == "stdbuf" ||
        b == "command") {
      ++i;
      while (i < w.size() && (LooksLikeOption(w[i]) || w[i].find('=') != std::string::npos) &&
             !IsPythonProgram(w[i])) {
        size_t eq = w[i].find('=');
        if (eq != std::string::npos && !LooksLikeOption(w[i]))
          env[w[i].substr(0, eq)] = w[i].substr(eq + 1);
        ++i;
      }
      continue;
    }
    break;
  }
  if (i >= w.size()) return;
  const std::string prog = w[i];
  const std::string b = Basename(prog);
  auto rest = [&](size_t from) {
    return std::vector<std::string>(w.begin() + static_cast<std::ptrdiff_t>(from), w.end());
  };

  if ((b == "module" || b == "ml") && i + 1 < w.size()) {
    // Environment modules name the framework the job runs with (module load pytorch-gpu).
    for (size_t k = i + 1; k < w.size(); ++k) {
      std::string l = ToLower(w[k]);
      if (l.find("torch") != std::string::npos) Vote("pytorch", 1);
      if (l.find("tensorflow") != std::string::npos) Vote("tensorflow", 1);
    }
    return;
  }
  if ((b == "conda" || b == "source") && i + 2 < w.size() && w[i + 1] == "activate") return;
  if (b == "cd" && i + 1 < w.size()) {
    fs::path n = (fs::path(cwd) / w[i + 1]).lexically_normal();
    cwd = n.generic_string();
    if (cwd == ".") cwd.clear();
    return;
  }
  if (b == "sbatch") {
    std::vector<std::string> opts_words = rest(i + 1);
    std::vector<SbatchDirective> ds = ParseSbatchOptions(opts_words, cmd.line);
    std::string wrap;
    for (const auto& d : ds) {
      if (d.option == "--wrap") wrap = d.value;
    }
    // The words the options consumed: re-walk them.
    size_t k = i + 1;
    while (k < w.size() && LooksLikeOption(w[k])) {
      if (w[k].find('=') == std::string::npos && !StartsWith(w[k], "--") && w[k].size() == 2 &&
          k + 1 < w.size())
        ++k;
      else if (StartsWith(w[k], "--") && w[k].find('=') == std::string::npos && k + 1 < w.size() &&
               !LooksLikeOption(w[k + 1]))
        ++k;
      ++k;
    }
    std::vector<SbatchDirective> kept;
    for (auto& d : ds) {
      if (d.option != "--wrap") kept.push_back(d);
    }
    AddSbatch(kept, rel);
    if (!wrap.empty()) {
      ShellContext ctx;
      ctx.variables = vars;
      ShellScript inner = ParseShell(wrap, ctx);
      for (ShellCommand c : inner.commands) {
        c.line = cmd.line + FindLine(rel, cmd.line, "--wrap") - cmd.line;
        ProcessCommand(rel, c, cwd, "sbatch", depth + 1, vars);
      }
      return;
    }
    if (k < w.size()) {
      if (auto script = Resolve(cwd, w[k], fs::path(rel).parent_path().generic_string())) {
        if (visited_scripts_.insert(*script).second) {
          if (auto text = Read(*script)) {
            ShellContext ctx;
            ctx.positional = rest(k + 1);
            ctx.variables = vars;
            ProcessShell(*script, *text, ctx, "", depth + 1);
          }
        }
      }
    }
    return;
  }
  if (b == "srun" || b == "mpirun" || b == "mpiexec") {
    static const std::set<std::string> kFlags = {
        "exclusive",         "pty", "overcommit", "oversubscribe",
        "allow_run_as_root", "u",   "l",          "unbuffered"};
    std::vector<std::pair<std::string, std::string>> opts;
    size_t k = TakeOptions(w, i + 1, kFlags, opts);
    std::optional<int64_t> procs;
    for (const auto& [o, v] : opts) {
      if (o == "np" || o == "n" || o == "ntasks") {
        if (auto n = ParseInt(v)) procs = *n;
      }
    }
    if (b == "srun") {
      std::vector<std::string> sw;
      for (const auto& [o, v] : opts) {
        std::string name = o;  // --ntasks_per_node as written --ntasks-per-node
        if (name.size() > 1) std::replace(name.begin(), name.end(), '_', '-');
        sw.push_back((name.size() == 1 ? "-" : "--") + name);
        if (!v.empty()) sw.push_back(v);
      }
      AddSbatch(ParseSbatchOptions(sw, cmd.line), rel);
    }
    ShellCommand inner;
    inner.env = env;
    inner.line = cmd.line;
    for (size_t x = k; x < w.size(); ++x) inner.words.push_back({w[x], false});
    size_t before = launches_.size();
    ProcessCommand(rel, inner, cwd, b == "mpiexec" ? "mpirun" : b, depth + 1, vars);
    for (size_t x = before; x < launches_.size(); ++x) {
      if (procs) {
        launches_[x].wrapper_processes = procs;
        launches_[x].wrapper_source = Loc(rel, cmd.line);
      }
    }
    return;
  }
  if (b == "bash" || b == "sh" || b == "source" || b == "." || b == "zsh" ||
      (EndsWith(b, ".sh") && !LooksLikeOption(b))) {
    size_t k = EndsWith(b, ".sh") ? i : i + 1;
    while (k < w.size() && LooksLikeOption(w[k])) ++k;
    if (k >= w.size()) return;
    std::optional<std::string> script;
    bool unknown = cmd.words[k].unknown || w[k].empty();
    if (!unknown) script = Resolve(cwd, w[k], fs::path(rel).parent_path().generic_string());
    if (!script && unknown) {
      script = GuessDelegate(rel);
      if (script) {
        meta_.notes.push_back(
            fmt::format("{}:{}: '{}' runs a script given at submission; "
                        "assumed {} (the only launch script in the sources)",
                        rel, cmd.line, fmt::join(rest(i), " "), *script));
      }
    }
    if (!script && !unknown && Basename(w[k]) == "dist_train.sh" && k + 2 < w.size() &&
        ParseInt(w[k + 2])) {
      // OpenMMLab's `tools/dist_train.sh CONFIG GPUS [ARGS]` (torchrun tools/train.py CONFIG
      // --launcher pytorch ARGS on GPUS processes), not in the sources: read it as that.
      Launch l = NewLaunch(rel, cmd, cwd, wrapper, env, vars);
      l.launcher = "torchrun";
      l.opts.emplace_back("nproc_per_node", w[k + 2]);
      l.program = (fs::path(w[k]).parent_path() / "train.py").generic_string();
      l.args.push_back(w[k + 1]);
      for (size_t a = k + 3; a < w.size(); ++a) l.args.push_back(w[a]);
      meta_.notes.push_back(fmt::format(
          "{}:{}: {} is not in the sources; read as OpenMMLab's (torchrun {} {} on {} GPUs)", rel,
          cmd.line, w[k], l.program, w[k + 1], w[k + 2]));
      Vote("mmdetection", 3);
      launches_.push_back(std::move(l));
      return;
    }
    if (!script || !visited_scripts_.insert(*script).second) return;
    if (auto text = Read(*script)) {
      ShellContext ctx;
      ctx.positional = rest(k + 1);
      ctx.variables = vars;
      for (const auto& [ek, ev] : env) ctx.variables[ek] = ev;
      ProcessShell(*script, *text, ctx, wrapper, depth + 1);
    }
    return;
  }

  Launch l = NewLaunch(rel, cmd, cwd, wrapper, env, vars);
  size_t k = i + 1;
  static const std::set<std::string> kTorchFlags = {
      "standalone", "no_python", "use_env", "module", "m", "run_path", "redirects_all"};
  static const std::set<std::string> kDsFlags = {
      "no_local_rank", "no_python",           "module", "force_multi", "bind_cores_to_rank",
      "no_ssh_check",  "enable_each_rank_log"};
  static const std::set<std::string> kAccFlags = {
      "multi_gpu", "cpu",   "use_deepspeed", "use_fsdp", "use_cpu", "mps", "m",
      "module",    "debug", "no_python",     "tpu",      "quiet",   "q"};
  if (b == "torchrun") {
    l.launcher = "torchrun";
    k = TakeOptions(w, k, kTorchFlags, l.opts);
  } else if (b == "deepspeed") {
    l.launcher = "deepspeed";
    k = TakeOptions(w, k, kDsFlags, l.opts);
  } else if (b == "accelerate" && k < w.size() && w[k] == "launch") {
    l.launcher = "accelerate";
    k = TakeOptions(w, k + 1, kAccFlags, l.opts);
  } else if (b == "llamafactory-cli" || b == "lmf") {
    l.launcher = "llamafactory-cli";
    if (k < w.size() && !LooksLikeOption(w[k])) ++k;  // subcommand: train
    l.program = "llamafactory-cli";
    if (k < w.size() &&
        (EndsWith(w[k], ".yaml") || EndsWith(w[k], ".yml") || EndsWith(w[k], ".json"))) {
      l.args.push_back(w[k++]);
    }
    for (; k < w.size(); ++k) l.args.push_back(w[k]);
    launches_.push_back(std::move(l));
    return;
  } else if (b == "fairseq-train") {
    // fairseq's CLI: `fairseq-train DATA_DIR --arch A --lr X --max-update N --fp16 ...`, all
    // visible GPUs. The data directory names the dataset.
    l.launcher = "fairseq-train";
    l.program = "fairseq-train";
    for (; k < w.size(); ++k) l.args.push_back(w[k]);
    if (!l.args.empty() && !LooksLikeOption(l.args[0])) {
      std::string data = Basename(fs::path(l.args[0]).lexically_normal().generic_string());
      if (!data.empty() && data != "." && data != "..") {
        Add("dataset", json(data), kCommandLine, 2, Loc(rel, FindLine(rel, cmd.line, l.args[0])),
            "data");
      }
    }
    Vote("fairseq", 8);
    launches_.push_back(std::move(l));
    return;
  } else if (b == "tune" && k < w.size() && w[k] == "run") {
    // torchtune: `tune run [torchrun options] RECIPE --config CONFIG [key=value ...]`; with
    // --nproc_per_node / --nnodes it starts torchrun, else one process.
    l.launcher = "torchtune";
    k = TakeOptions(w, k + 1, kTorchFlags, l.opts);
    if (k >= w.size()) return;
    l.program = "tune run " + w[k++];
    for (; k < w.size(); ++k) l.args.push_back(w[k]);
    Vote("torchtune", 8);
    // A packaged config ("llama3/8B_full", "qwen2_5/7B_lora") names the model and its size; a
    // local YAML is read like any --config.
    for (size_t a = 0; a + 1 < l.args.size(); ++a) {
      if (l.args[a] != "--config") continue;
      static const std::regex kPackaged(R"(^([a-z][a-z0-9_]*)/(\d+(?:\.\d+)?[BbMm])_\w+$)");
      std::smatch m;
      const std::string& cfg = l.args[a + 1];
      if (!std::regex_match(cfg, m, kPackaged)) break;
      std::string family = m[1].str();
      for (size_t c = 1; c + 1 < family.size(); ++c) {  // qwen2_5 -> qwen2.5
        if (family[c] == '_' && std::isdigit(static_cast<unsigned char>(family[c - 1])) &&
            std::isdigit(static_cast<unsigned char>(family[c + 1]))) {
          family[c] = '.';
        }
      }
      Add("model", json(family + "-" + m[2].str()), kCommandLine, 2,
          Loc(rel, FindLine(rel, cmd.line, cfg)), "config");
      torchtune_packaged_config_ = true;
      break;
    }
    launches_.push_back(std::move(l));
    return;
  } else if (b == "yolo" && k < w.size()) {
    // Ultralytics CLI: `yolo [task] train key=value ...`.
    l.launcher = "yolo";
    l.program = "yolo";
    while (k < w.size() && w[k].find('=') == std::string::npos) ++k;  // task / mode words
    for (; k < w.size(); ++k) l.args.push_back(w[k]);
    Vote("ultralytics", 8);
    launches_.push_back(std::move(l));
    return;
  } else if (b == "swift" && k < w.size() && (w[k] == "sft" || w[k] == "pt" || w[k] == "rlhf")) {
    l.launcher = "swift";
    l.program = "swift " + w[k];
    for (++k; k < w.size(); ++k) l.args.push_back(w[k]);
    launches_.push_back(std::move(l));
    return;
  } else if (IsPythonProgram(prog)) {
    l.launcher = "python";
    while (k < w.size() && LooksLikeOption(w[k]) && w[k] != "-m") {
      if (w[k] == "-W" || w[k] == "-X") ++k;
      ++k;
    }
    if (k + 1 < w.size() && w[k] == "-m") {
      std::string mod = w[k + 1];
      if (mod == "torch.distributed.run" || mod == "torch.distributed.launch") {
        l.launcher = mod;
        k = TakeOptions(w, k + 2, kTorchFlags, l.opts);
      } else if (mod == "deepspeed.launcher.runner") {
        l.launcher = "deepspeed";
        k = TakeOptions(w, k + 2, kDsFlags, l.opts);
      } else if (mod == "accelerate.commands.launch") {
        l.launcher = "accelerate";
        k = TakeOptions(w, k + 2, kAccFlags, l.opts);
      } else {
        l.program = mod;
        l.module = true;
        k += 2;
      }
    }
  } else if (EndsWith(b, ".py")) {
    l.launcher = "python";
    k = i;
  } else {
    return;  // not a launch
  }
  if (l.program.empty()) {
    bool module = false;
    for (const auto& [o, v] : l.opts) module |= (o == "m" || o == "module");
    if (k >= w.size()) return;
    if (!module && IsPythonProgram(w[k])) {  // `deepspeed python x.py`? keep going
      ++k;
      if (k >= w.size()) return;
    }
    l.program = w[k];
    l.module = module;
    ++k;
  }
  for (; k < w.size(); ++k) l.args.push_back(w[k]);
  launches_.push_back(std::move(l));
}

std::vector<ArgItem> Extraction::ParseArgs(const std::vector<std::string>& args,
                                           std::vector<std::string>* positionals) const {
  std::vector<ArgItem> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (LooksLikeOption(a)) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        out.push_back(
            {NormKey(a.substr(0, eq)), TypedValue(a.substr(eq + 1)), false, a.substr(0, eq + 1)});
      } else if (i + 1 < args.size() && !LooksLikeOption(args[i + 1])) {
        out.push_back({NormKey(a), TypedValue(args[i + 1]), false, a});
        ++i;
      } else {
        out.push_back({NormKey(a), json(true), true, a});
      }
      continue;
    }
    // detectron2 / yacs opts: `SOLVER.IMS_PER_BATCH 16 SOLVER.BASE_LR 0.02`.
    static const std::regex kYacsKey(R"(^[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)+$)");
    if (i + 1 < args.size() && !LooksLikeOption(args[i + 1]) && std::regex_match(a, kYacsKey)) {
      out.push_back({NormKey(a), TypedValue(args[i + 1]), false, a});
      ++i;
      continue;
    }
    size_t eq = a.find('=');
    if (eq != std::string::npos && eq > 0) {
      std::string k = a.substr(0, eq);
      bool ident = std::all_of(k.begin(), k.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
               c == '~' || c == '/';
      });
      if (ident) {
        while (!k.empty() && (k[0] == '+' || k[0] == '~')) k = k.substr(1);
        out.push_back({k, TypedValue(a.substr(eq + 1)), false, a.substr(0, eq + 1)});
        continue;
      }
    }
    if (positionals != nullptr) positionals->push_back(a);
  }
  return out;
}

namespace {

std::vector<std::string> SplitPath(const std::string& key) {
  std::vector<std::string> out;
  for (std::string_view p : Split(key, '.')) {
    if (!p.empty()) out.emplace_back(p);
  }
  return out;
}

bool IsConfigPath(const std::string& p) {
  return EndsWith(p, ".yaml") || EndsWith(p, ".yml") || EndsWith(p, ".json") || EndsWith(p, ".py");
}

}  // namespace

void Extraction::ProcessLaunch(const Launch& l) {
  const std::string where = Loc(l.file, l.line);
  // Launcher options.
  for (const auto& [o, v] : l.opts) {
    int line = FindLine(l.file, l.line, o.size() == 1 ? "-" + o : o);
    std::string src = Loc(l.file, line);
    (void)src;
  }
  // Program.
  std::string rel_dir = fs::path(l.file).parent_path().generic_string();
  std::optional<std::string> program;
  if (l.module) {
    std::string p = l.program;
    std::replace(p.begin(), p.end(), '.', '/');
    program = Resolve(l.cwd, p + ".py", rel_dir);
    if (!program) program = Resolve(l.cwd, p + "/__main__.py", rel_dir);
  } else if (EndsWith(l.program, ".py")) {
    program = Resolve(l.cwd, l.program, rel_dir);
  }
  program_names_.push_back(Basename(l.program));
  if (!program && (EndsWith(l.program, ".py") || l.module)) {
    meta_.notes.push_back(fmt::format(
        "{}: program {} is not in the sources; its defaults are unknown", where, l.program));
  }
  // Script arguments (command line level). Hydra group choices (`model=resnet`) must be known
  // before the program's Hydra config is loaded.
  std::vector<std::string> positionals;
  std::vector<ArgItem> items = ParseArgs(l.args, &positionals);
  for (const ArgItem& it : items) {
    if (it.raw.empty() || StartsWith(it.raw, "-") || it.key.find('.') != std::string::npos)
      continue;
    if (it.value.is_string() || it.value.is_number()) hydra_choices_[it.key] = ValueText(it.value);
  }
  if (program) ProcessProgram(*program, false);
  // Short options and aliases name the argparse destination (-b -> batch_size, -a -> arch).
  for (ArgItem& it : items) {
    auto a = arg_alias_.find(it.key);
    if (a != arg_alias_.end()) it.key = a->second;
  }
  // Positional arguments fill argparse positionals in order (`main.py /data/imagenet`).
  {
    size_t k = 0;
    for (const std::string& p : positionals) {
      if (k >= arg_positionals_.size()) break;
      const std::string& dest = arg_positionals_[k++];
      if (IsConfigPath(p) && (dest == "config" || dest == "cfg" || dest == "config_file")) continue;
      if (!IsConfigPath(p)) {
        AddKey({dest}, TypedValue(p), kCommandLine, Loc(l.file, FindLine(l.file, l.line, p)));
      }
    }
  }
  // Config files first (lower level than the command line).
  for (const std::string& p : positionals) {
    if (!IsConfigPath(p)) continue;
    if (auto c = Resolve(l.cwd, p, rel_dir)) {
      LoadConfig(*c, kConfig, 0);
    } else {
      FromConfigName(p);
    }
  }
  for (const ArgItem& it : items) {
    static const std::set<std::string> kConfigKeys = {
        "config",    "config_file",      "cfg",     "c",    "configs", "config_path", "deepspeed",
        "ds_config", "deepspeed_config", "hparams", "yaml", "conf"};
    if (kConfigKeys.count(it.key) && it.value.is_string()) {
      std::string p = it.value.get<std::string>();
      if (auto c = Resolve(l.cwd, p, rel_dir)) {
        LoadConfig(*c, kConfig, 0,
                   it.key == "deepspeed" || it.key == "ds_config" || it.key == "deepspeed_config"
                       ? "deepspeed"
                       : "");
      } else if (IsConfigPath(p)) {
        meta_.notes.push_back(fmt::format("{}: config {} is not in the sources", where, p));
        FromConfigName(p);
      }
    }
  }
  for (const ArgItem& it : items) {
    int line = FindLine(l.file, l.line, it.raw);
    std::string src = Loc(l.file, line);
    if (it.key == "cuda" && it.flag) cuda_flag_given_ = true;
    if ((it.key == "device" || it.key == "accelerator") && it.value.is_string() &&
        ToLower(it.value.get<std::string>()) == "cpu") {
      cpu_flag_given_ = true;
    }
    if ((it.key == "cpu" || it.key == "no_cuda" || it.key == "use_cpu") && IsTruthy(it.value))
      cpu_flag_given_ = true;
    if (it.key == "fp16" || it.key == "bf16" || it.key == "half" || it.key == "amp" ||
        it.key == "use_amp") {
      if (IsTruthy(it.value))
        Add("precision", json(it.key == "half" ? "fp16" : it.key), kCommandLine, 1, src, it.key);
      else
        Add("precision", json("fp32"), kCommandLine, 5, src, it.key);
      continue;
    }
    std::vector<std::string> path = it.key.find('.') != std::string::npos
                                        ? SplitPath(it.key)
                                        : std::vector<std::string>{it.key};
    AddKey(path, it.value, kCommandLine, src);
    // Framework vocabulary.
    static const std::set<std::string> kHfArgs = {"per_device_train_batch_size",
                                                  "model_name_or_path",
                                                  "num_train_epochs",
                                                  "do_train",
                                                  "output_dir",
                                                  "overwrite_output_dir",
                                                  "logging_steps"};
    static const std::set<std::string> kMegatronArgs = {"tensor_model_parallel_size", "num_layers",
                                                        "micro_batch_size", "train_iters",
                                                        "pipeline_model_parallel_size"};
    if (kHfArgs.count(it.key)) Vote("hf-transformers", 1);
    if (kMegatronArgs.count(it.key)) Vote("megatron", 2);
    if (it.key == "pretrained_model_name_or_path" || it.key == "train_data_dir")
      Vote("diffusers", 2);
    if (it.key == "sft_type" || it.key == "tuner_backend" || it.key == "model_id_or_path")
      Vote("ms-swift", 3);
    if (it.key == "stage" && l.launcher == "llamafactory-cli") Vote("llama-factory", 3);
  }
  // Hydra group overrides: `group=option` where <config dir>/group/option.yaml exists is handled
  // in LoadConfig through hydra_overrides_ (not modelled further here).
}

void Extraction::ProcessProgram(const std::string& rel, bool is_entry_python) {
  auto text = Read(rel);
  if (!text) return;
  program_found_ = true;
  PyFacts f = ScanPython(*text);
  if (text->find("cuda") != std::string::npos) uses_cuda_ = true;
  for (const auto& [mod, line] : f.imports) {
    std::string top = mod.substr(0, mod.find('.'));
    static const std::map<std::string, std::pair<std::string, int>> kImportVotes = {
        {"transformers", {"hf-transformers", 3}},
        {"diffusers", {"diffusers", 5}},
        {"accelerate", {"accelerate", 1}},
        {"deepspeed", {"deepspeed", 1}},
        {"megatron", {"megatron", 5}},
        {"mmdet", {"mmdetection", 6}},
        {"mmcv", {"mmdetection", 3}},
        {"mmengine", {"mmdetection", 3}},
        {"ultralytics", {"ultralytics", 8}},
        {"pytorch_lightning", {"lightning", 5}},
        {"lightning", {"lightning", 5}},
        {"tensorflow", {"tensorflow", 5}},
        {"keras", {"tensorflow", 4}},
        {"jax", {"jax", 4}},
        {"flax", {"jax", 4}},
        {"torch", {"pytorch", 1}},
        {"torchvision", {"pytorch", 1}},
        {"torchaudio", {"pytorch", 1}},
        {"peft", {"hf-transformers", 1}},
        {"trl", {"hf-transformers", 2}},
        {"llamafactory", {"llama-factory", 6}},
        {"nemo", {"nemo", 6}},
        {"t5x", {"jax", 4}},
        {"swift", {"ms-swift", 6}},
        {"timm", {"pytorch", 1}}};
    auto it = kImportVotes.find(top);
    if (it != kImportVotes.end()) Vote(it->second.first, it->second.second);
  }
  // argparse defaults and dataclass fields: script defaults.
  for (const PyCall& c : f.calls) {
    if (!EndsWith(c.callee, "add_argument")) continue;
    std::string dest;
    for (const PyValue& a : c.args) {
      if (!a.literal || !a.literal->is_string()) continue;
      std::string n = a.literal->get<std::string>();
      if (StartsWith(n, "--") && dest.empty()) dest = NormKey(n);
    }
    if (dest.empty() && !c.args.empty() && c.args[0].literal && c.args[0].literal->is_string())
      dest = NormKey(c.args[0].literal->get<std::string>());
    if (const PyValue* d = c.Kwarg("dest"); d && d->literal && d->literal->is_string())
      dest = NormKey(d->literal->get<std::string>());
    if (dest.empty()) continue;
    bool positional = true;
    for (const PyValue& a : c.args) {
      if (!a.literal || !a.literal->is_string()) continue;
      std::string n = a.literal->get<std::string>();
      if (StartsWith(n, "-")) {
        positional = false;
        arg_alias_[NormKey(n)] = dest;
      }
    }
    if (positional) arg_positionals_.push_back(dest);
    const PyValue* action = c.Kwarg("action");
    std::string act = action && action->literal && action->literal->is_string()
                          ? action->literal->get<std::string>()
                          : "";
    if (dest == "cuda" && act == "store_true") cuda_flag_defined_ = true;
    json def;
    if (const PyValue* d = c.Kwarg("default"); d && d->literal) def = *d->literal;
    if (act == "store_true" && def.is_null()) def = false;
    if (act == "store_false" && def.is_null()) def = true;
    if (def.is_null()) continue;
    std::string src = Loc(rel, c.line);
    if (dest == "fp16" || dest == "bf16" || dest == "amp" || dest == "use_amp" || dest == "half") {
      if (IsTruthy(def))
        Add("precision", json(dest == "half" ? "fp16" : dest), kScriptDefault, 1, src, dest);
      continue;
    }
    AddKey({dest}, def, kScriptDefault, src);
  }
  for (const PyField& fld : f.fields) {
    if (!fld.value.literal) continue;
    AddKey({fld.name}, *fld.value.literal, kScriptDefault, Loc(rel, fld.line));
  }
  // Module-level globals (nanoGPT-style configuration).
  for (const PyAssignment& a : f.assignments) {
    if (a.indent != 0 || a.op != "=" || a.target.find('.') != std::string::npos) continue;
    std::string src = Loc(rel, a.line);
    if (a.value.literal) {
      AddKey({a.target}, *a.value.literal, kScriptDefault, src);
    } else if (KeyTable().count(NormKey(a.target)) &&
               KeyTable().at(NormKey(a.target)).first == "precision") {
      Add("precision", json("dynamic: " + a.value.text), kScriptDefault, 3, src, a.target);
    }
  }
  // In-code overrides after parsing, and world-size divisions.
  static const std::set<std::string> kArgObjects = {
      "args", "opt", "opts", "cfg", "config", "training_args", "hparams", "params", "flags"};
  for (const PyAssignment& a : f.assignments) {
    std::string src = Loc(rel, a.line);
    size_t dot = a.target.find('.');
    if (dot != std::string::npos && a.op == "=" && a.value.literal &&
        kArgObjects.count(a.target.substr(0, dot)) &&
        a.target.find('.', dot + 1) == std::string::npos) {
      AddKey({a.target.substr(dot + 1)}, *a.value.literal, kInCode, src);
    }
    std::string rhs = ToLower(a.value.text);
    bool world = rhs.find("world_size") != std::string::npos ||
                 rhs.find("num_gpus") != std::string::npos ||
                 rhs.find("ngpus") != std::string::npos || rhs.find("nproc") != std::string::npos ||
                 rhs.find("num_processes") != std::string::npos;
    std::string name = dot == std::string::npos ? a.target : a.target.substr(dot + 1);
    auto kt = KeyTable().find(NormKey(name));
    if (world && kt != KeyTable().end() &&
        (a.op == "//=" || a.op == "/=" || (a.op == "=" && rhs.find("//") != std::string::npos))) {
      world_divides_[kt->second.first] = src;
    }
  }
  // Calls that set training parameters in code, models, datasets, optimizers, Hydra configs.
  for (const PyCall& c : f.calls) {
    std::string src = Loc(rel, c.line);
    std::string last = c.callee.substr(
        c.callee.find_last_of('.') == std::string::npos ? 0 : c.callee.find_last_of('.') + 1);
    static const std::set<std::string> kTrainCalls = {
        "train",     "fit",        "TrainingArguments", "Seq2SeqTrainingArguments",
        "SFTConfig", "SFTTrainer", "Trainer",           "tune"};
    if (kTrainCalls.count(last) && !c.kwargs.empty()) {
      if (last == "TrainingArguments" || last == "Seq2SeqTrainingArguments" || last == "Trainer")
        hf_trainer_ = true;
      for (const auto& [k, v] : c.kwargs) {
        if (!v.literal) continue;
        int line = FindLine(rel, c.line, k + "=");
        AddKey({k}, *v.literal, kInCode, Loc(rel, line));
      }
    }
    if (last == "HfArgumentParser" || last == "TrainingArguments") hf_trainer_ = true;
    if (last == "from_pretrained") {
      if (!c.args.empty() && c.args[0].literal && c.args[0].literal->is_string())
        Add("model", *c.args[0].literal, kScriptDefault, 3, src, "from_pretrained");
      if (const PyValue* d = c.Kwarg("torch_dtype")) {
        std::string t = ToLower(d->text);
        std::string p =
            t.find("bfloat16") != std::string::npos ? "bf16"
            : (t.find("float16") != std::string::npos || t.find("half") != std::string::npos)
                ? "fp16"
            : t.find("float32") != std::string::npos ? "fp32"
                                                     : "";
        if (!p.empty())
          Add("precision", json(p + " (weights loaded as " + d->text + ")"), kScriptDefault, 2, src,
              "torch_dtype");
      }
    }
    if ((last == "load_dataset" || last == "load_from_disk" || c.callee == "tfds.load") &&
        !c.args.empty() && c.args[0].literal && c.args[0].literal->is_string()) {
      Add("dataset", *c.args[0].literal, kScriptDefault, 2, src, last);
    }
    // Library datasets: torchvision.datasets.CIFAR10(...), keras.datasets.cifar10.load_data().
    if (size_t at = c.callee.find("datasets.");
        at != std::string::npos && (at == 0 || c.callee[at - 1] == '.')) {
      std::vector<std::string> parts = SplitPath(c.callee.substr(at + 9));
      if (!parts.empty() && parts.back() == "load_data") parts.pop_back();
      static const std::set<std::string> kGeneric = {"ImageFolder", "DatasetFolder",
                                                     "VisionDataset", "FakeData"};
      if (parts.size() == 1 && !parts[0].empty() && !kGeneric.count(parts[0])) {
        Add("dataset", json(parts[0]), kScriptDefault, 3, src, c.callee);
      }
    }
    if ((last == "read_json" || last == "read_csv" || last == "read_parquet" ||
         last == "from_json" || last == "from_csv" || last == "open") &&
        !c.args.empty() && c.args[0].literal && c.args[0].literal->is_string()) {
      std::string p = c.args[0].literal->get<std::string>();
      if (EndsWith(p, ".json") || EndsWith(p, ".jsonl") || EndsWith(p, ".csv") ||
          EndsWith(p, ".parquet")) {
        Add("dataset", json(p), kLibraryDefault, 6, src, last);
      }
    }
    if (StartsWith(c.callee, "torch.optim.") || StartsWith(c.callee, "optim.")) {
      if (!last.empty() && std::isupper(static_cast<unsigned char>(last[0])) &&
          last.find("Scheduler") == std::string::npos &&
          c.callee.find("lr_scheduler") == std::string::npos)
        Add("optimizer", json(last), kScriptDefault, 2, src, c.callee);
    }
    if (c.callee == "hydra.main" || last == "main") {
      const PyValue* cp = c.Kwarg("config_path");
      const PyValue* cn = c.Kwarg("config_name");
      if (cn && cn->literal && cn->literal->is_string()) {
        std::string dir =
            cp && cp->literal && cp->literal->is_string() ? cp->literal->get<std::string>() : "";
        std::string name = cn->literal->get<std::string>();
        if (!EndsWith(name, ".yaml")) name += ".yaml";
        fs::path p = (fs::path(rel).parent_path() / dir / name).lexically_normal();
        if (auto t = Read(p.generic_string())) LoadConfig(p.generic_string(), kConfig, 0);
      }
    }
  }
  // The model object: `model = X(...)`.
  for (const PyAssignment& a : f.assignments) {
    std::string t = ToLower(a.target);
    if (t != "model" && t != "net" && t != "self.model" && t != "network") continue;
    if (a.value.literal) continue;
    static const std::regex kCall(R"(^\s*([A-Za-z_][\w.]*)\s*\(\s*(?:['"]([^'"]+)['"])?)");
    std::smatch m;
    if (!std::regex_search(a.value.text, m, kCall)) continue;
    std::string callee = m[1].str();
    std::string last = callee.substr(
        callee.find_last_of('.') == std::string::npos ? 0 : callee.find_last_of('.') + 1);
    if (last == "to" || last == "cuda" || last == "DDP" || last == "DistributedDataParallel" ||
        last == "DataParallel" || last == "compile" || last == "get_peft_model" ||
        last == "from_pretrained")
      continue;
    std::string src = Loc(rel, a.line);
    if (m[2].matched) {
      Add("model", json(m[2].str()), kScriptDefault, 3, src, "constructor");
    } else {
      Add("model", json(last), kLibraryDefault, 6, src, "constructor");
    }
  }
  // Names imported from local modules that name a model (from model import GPT).
  (void)is_entry_python;
}

namespace {

// yaml-cpp node -> JSON, recording the line of each leaf path.
json YamlToJson(const YAML::Node& n, std::vector<std::string>& path,
                std::map<std::string, int>& lines) {
  std::string key;
  for (const auto& p : path) key += (key.empty() ? "" : ".") + p;
  lines[key] = n.Mark().line + 1;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        std::string k = kv.first.as<std::string>("");
        path.push_back(k);
        o[k] = YamlToJson(kv.second, path, lines);
        path.pop_back();
      }
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      size_t i = 0;
      for (const auto& e : n) {
        path.push_back(std::to_string(i++));
        a.push_back(YamlToJson(e, path, lines));
        path.pop_back();
      }
      return a;
    }
    case YAML::NodeType::Scalar: {
      std::string s = n.Scalar();
      if (n.Tag() == "!") return json(s);  // quoted: keep as string
      return TypedValue(s);
    }
    default:
      return json(nullptr);
  }
}

}  // namespace

void Extraction::FlattenJson(const json& j, std::vector<std::string>& path, int level,
                             const std::string& rel,
                             const std::function<int(const std::vector<std::string>&)>& line_of) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      path.push_back(it.key());
      FlattenJson(it.value(), path, level, rel, line_of);
      path.pop_back();
    }
    return;
  }
  if (path.empty()) return;
  AddKey(path, j, level, Loc(rel, line_of(path)));
}

void Extraction::LoadConfig(const std::string& rel, int level, int depth,
                            const std::string& prefix) {
  if (depth > 8 || !loaded_configs_.insert(rel).second) return;
  auto text = Read(rel);
  if (!text) return;
  if (EndsWith(rel, ".py")) {
    LoadPythonConfig(rel, level, depth);
    return;
  }
  json j;
  std::map<std::string, int> lines;
  if (EndsWith(rel, ".json")) {
    j = json::parse(*text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (j.is_discarded()) {
      meta_.notes.push_back(rel + ": not valid JSON; skipped");
      return;
    }
  } else {
    try {
      YAML::Node n = YAML::Load(*text);
      std::vector<std::string> path;
      j = YamlToJson(n, path, lines);
    } catch (const std::exception& e) {
      meta_.notes.push_back(rel + ": YAML error: " + e.what());
      return;
    }
  }
  if (!j.is_object()) return;
  bool deepspeed = prefix == "deepspeed" || j.contains("zero_optimization") ||
                   j.contains("train_micro_batch_size_per_gpu");
  // Inheritance by `_base_` / `_BASE_` / `base` (mmengine YAML, detectron2): bases first, so the
  // child's values (loaded after) win at the same level.
  for (const char* bk : {"_base_", "_BASE_"}) {
    if (!j.contains(bk)) continue;
    std::vector<std::string> bases;
    if (j[bk].is_string()) bases.push_back(j[bk].get<std::string>());
    if (j[bk].is_array()) {
      for (const json& b : j[bk]) {
        if (b.is_string()) bases.push_back(b.get<std::string>());
      }
    }
    for (const std::string& b : bases) {
      fs::path p = (fs::path(rel).parent_path() / b).lexically_normal();
      if (Read(p.generic_string())) {
        LoadConfig(p.generic_string(), level, depth + 1, prefix);
      } else {
        meta_.notes.push_back(fmt::format("{}: base config {} is not in the sources", rel, b));
      }
    }
    j.erase(bk);
  }
  // Hydra defaults: load the selected group options first (the primary config overrides them).
  if (j.contains("defaults") && j["defaults"].is_array()) {
    fs::path dir = fs::path(rel).parent_path();
    for (const json& d : j["defaults"]) {
      std::string group, option;
      if (d.is_string()) {
        option = d.get<std::string>();
        if (option == "_self_") continue;
      } else if (d.is_object() && d.size() == 1) {
        group = d.begin().key();
        if (!d.begin().value().is_string()) continue;
        option = d.begin().value().get<std::string>();
      } else {
        continue;
      }
      while (!group.empty() && (group[0] == '/' || group[0] == '+')) group = group.substr(1);
      std::string inner = group.substr(0, group.find('@'));
      if (auto c = hydra_choices_.find(inner); c != hydra_choices_.end()) {
        fs::path alt = (dir / inner / (c->second + ".yaml")).lexically_normal();
        if (Read(alt.generic_string())) option = c->second;
      }
      fs::path p = (dir / inner / (option + ".yaml")).lexically_normal();
      if (Read(p.generic_string())) {
        // Packaged under the group name.
        LoadConfig(p.generic_string(), level, depth + 1, inner);
      }
    }
  }
  auto line_of = [&](const std::vector<std::string>& path) {
    std::string key;
    for (const auto& p : path) key += (key.empty() ? "" : ".") + p;
    auto it = lines.find(key);
    if (it != lines.end()) return it->second;
    return FindLine(rel, 1, "\"" + path.back() + "\"");
  };
  std::vector<std::string> path;
  if (deepspeed)
    path.push_back("deepspeed");
  else if (!prefix.empty()) {
    for (const auto& p : SplitPath(prefix)) path.push_back(p);
  }
  auto line_of_unprefixed = [&](const std::vector<std::string>& p) {
    std::vector<std::string> q(
        p.begin() +
            static_cast<std::ptrdiff_t>(deepspeed || !prefix.empty()
                                            ? SplitPath(deepspeed ? "deepspeed" : prefix).size()
                                            : 0),
        p.end());
    return q.empty() ? 1 : line_of(q);
  };
  json body = j;
  body.erase("defaults");
  FlattenJson(body, path, level, rel, line_of_unprefixed);
  if (deepspeed) Vote("deepspeed", 2);
}

void Extraction::FromConfigName(const std::string& path) {
  const fs::path p(path);
  const std::string stem = p.stem().string();
  const std::string src = "derived: config name " + p.filename().string() + " (not in the sources)";
  auto dataset_name = [](std::string d) -> std::string {
    if (d == "coco") return "COCO";
    if (d == "in1k") return "ImageNet-1k";
    if (d == "in21k") return "ImageNet-21k";
    if (d == "voc" || d == "voc0712") return "PASCAL VOC";
    if (d == "cityscapes") return "Cityscapes";
    if (d == "ade20k") return "ADE20K";
    return d;
  };
  std::smatch m;
  if (p.extension() == ".py") {
    // rtmdet_l_8xb32-300e_coco, resnet50_8xb32_in1k, vit-base-p16_64xb64_in1k-384px
    static const std::regex kBatch(R"(^(.+?)_(\d+)xb(\d+)(?:-(\d+)(e|k))?_([a-z0-9]+)(?:-.*)?$)");
    // faster-rcnn_r50_fpn_1x_coco: mmdet schedules, 1x = 12 epochs
    static const std::regex kSchedule(R"(^(.+?)_(\d+)x_([a-z0-9]+)(?:-.*)?$)");
    if (std::regex_match(stem, m, kBatch)) {
      Add("model", json(m[1].str()), kLibraryDefault, 5, src, "config");
      Add("per_device_batch_size", json(*ParseInt(m[3].str())), kLibraryDefault, 5, src, "config");
      if (m[4].matched) {
        int64_t n = *ParseInt(m[4].str());
        if (m[5].str() == "e") {
          Add("epochs", json(n), kLibraryDefault, 5, src, "config");
        } else {
          Add("max_steps", json(n * 1000), kLibraryDefault, 5, src, "config");
        }
      }
      Add("dataset", json(dataset_name(m[6].str())), kLibraryDefault, 5, src, "config");
      Vote("mmdetection", 2);
    } else if (std::regex_match(stem, m, kSchedule)) {
      Add("model", json(m[1].str()), kLibraryDefault, 5, src, "config");
      Add("epochs", json(12 * *ParseInt(m[2].str())), kLibraryDefault, 5, src + ", 1x = 12 epochs",
          "config");
      Add("dataset", json(dataset_name(m[3].str())), kLibraryDefault, 5, src, "config");
      Vote("mmdetection", 2);
    }
    return;
  }
  if (p.extension() == ".yaml" || p.extension() == ".yml") {
    // detectron2 model zoo: COCO-Detection/faster_rcnn_R_50_FPN_3x.yaml (1x = 90k iterations)
    static const std::regex kZoo(R"(^(COCO|LVISv?[0-9.]*|Cityscapes|PascalVOC)-[A-Za-z]+$)");
    static const std::regex kZooModel(R"(^(.+?)_(\d+)x$)");
    std::smatch d;
    const std::string dir = p.parent_path().filename().string();
    if (std::regex_match(dir, d, kZoo) && std::regex_match(stem, m, kZooModel)) {
      Add("model", json(m[1].str()), kLibraryDefault, 5, src, "config");
      Add("dataset", json(d[1].str()), kLibraryDefault, 5, src, "config");
      Add("max_steps", json(90000 * *ParseInt(m[2].str())), kLibraryDefault, 5,
          src + ", 1x = 90k iterations", "config");
      Vote("detectron2", 4);
    }
  }
}

void Extraction::LoadPythonConfig(const std::string& rel, int level, int depth) {
  auto text = Read(rel);
  if (!text) return;
  PyFacts f = ScanPython(*text);
  fs::path dir = fs::path(rel).parent_path();
  auto base = f.globals.find("_base_");
  if (base != f.globals.end()) {
    std::vector<std::string> bases;
    if (base->second.is_string()) bases.push_back(base->second.get<std::string>());
    if (base->second.is_array()) {
      for (const json& b : base->second) {
        if (b.is_string()) bases.push_back(b.get<std::string>());
      }
    }
    int base_line = f.global_lines.count("_base_") ? f.global_lines.at("_base_") : 1;
    for (const std::string& b : bases) {
      fs::path p = (dir / b).lexically_normal();
      std::string pr = p.generic_string();
      if (Read(pr)) {
        LoadConfig(pr, level, depth + 1);
        continue;
      }
      std::string stem = p.stem().string();
      bool known = false;
      for (const KnownBase& kb : kKnownMmdetSchedules) {
        if (stem != kb.file_stem) continue;
        std::string src = "default: " + b + " (mmdet's " + kb.file_stem + ", not in the sources)";
        Add("optimizer", json(std::string(kb.optimizer) + " (momentum 0.9)"), level, 0, src,
            "optimizer.type");
        Add("learning_rate", json(kb.lr), level, 0, src, "optimizer.lr");
        Add("epochs", json(kb.epochs), level, 1, src, "runner.max_epochs");
        known = true;
      }
      if (!known && p.parent_path().filename() == "models") {
        Add("model", json(stem), level, 4, Loc(rel, FindLine(rel, base_line, stem)),
            "_base_/models");
      }
      if (!known)
        meta_.notes.push_back(fmt::format("{}: base config {} is not in the sources", rel, b));
    }
    Vote("mmdetection", 4);
  }
  for (const auto& [name, value] : f.globals) {
    if (name == "_base_") continue;
    int line = f.global_lines.count(name) ? f.global_lines.at(name) : 1;
    std::vector<std::string> path = {name};
    FlattenJson(value.is_object() ? value : json(value), path, level, rel,
                [line](const std::vector<std::string>&) { return line; });
  }
}

namespace {

std::string NormalisePrecision(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "amp" : "fp32";
  std::string s = ToLower(ValueText(v));
  std::string t = Trim(s).data();
  if (StartsWith(t, "dynamic")) {
    bool bf = t.find("bfloat16") != std::string::npos || t.find("bf16") != std::string::npos;
    bool fp = t.find("'float16'") != std::string::npos ||
              t.find("\"float16\"") != std::string::npos || t.find("fp16") != std::string::npos;
    if (bf && fp) return "dynamic: bf16 if supported, else fp16";
    return ValueText(v);
  }
  if (t == "auto") return "auto (bf16 if supported, else fp16)";
  if (t == "no" || t == "32" || t == "fp32" || t == "float32" || t == "32-true" || t == "full")
    return "fp32";
  if (t == "bf16" || t == "bfloat16" || t == "bf16-mixed" || t == "bf16-true") return "bf16";
  if (t == "fp16" || t == "float16" || t == "16" || t == "16-mixed" || t == "half" || t == "o1" ||
      t == "o2")
    return "fp16";
  if (t == "amp" || t == "true") return "amp";
  return ValueText(v);
}

bool IsPlaceholder(const std::string& s) {
  std::string l = ToLower(s);
  return StartsWith(l, "your") || l.find("/your") != std::string::npos ||
         l.find("path/to") != std::string::npos || l.find("xxx") != std::string::npos ||
         l.find("<") != std::string::npos;
}

std::string FamilyOf(const std::string& model) {
  std::string l = ToLower(model);
  for (const auto& [pat, fam] : FamilyPatterns()) {
    // Short patterns must start a word ("t5" is not in "resnet50", "vit" not in "gravity").
    bool need_boundary = pat.size() <= 3 && pat != "gpt";
    for (size_t at = l.find(pat); at != std::string::npos; at = l.find(pat, at + 1)) {
      if (!need_boundary || at == 0 || !std::isalpha(static_cast<unsigned char>(l[at - 1])))
        return fam;
    }
  }
  return {};
}

std::optional<std::string> ParamsFromName(const std::string& model) {
  static const std::regex kSize(R"((?:^|[^a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])(?:$|[^a-z0-9]))",
                                std::regex::icase);
  std::string l = ToLower(model);
  std::smatch m;
  if (std::regex_search(l, m, kSize)) return m[1].str() + (ToLower(m[2].str()) == "b" ? "B" : "M");
  for (const auto& [pat, p] : KnownParams()) {
    if (l.find(pat) != std::string::npos) return p;
  }
  return std::nullopt;
}

}  // namespace

// GCC 12 reports a false -Wmaybe-uninitialized on std::optional<int64_t> reads in this function
// (every read is guarded by has_value()).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
JobMetadata Extraction::Finish() {
  JobMetadata& m = meta_;
  auto set = [&](const std::string& field, json value, std::string source) {
    m.values[field] = std::move(value);
    m.sources[field] = std::move(source);
  };

  // Choose the main launch: the one with the most arguments (first on ties).
  const Launch* main = nullptr;
  for (const Launch& l : launches_) {
    if (main == nullptr || l.args.size() > main->args.size()) main = &l;
  }
  std::optional<int64_t> processes;           // data-parallel processes x model-parallel
  std::optional<int64_t> per_node_processes;  // torchrun: x nodes once the node count is known
  std::string processes_src;
  std::optional<int64_t> gpus;
  std::string gpus_src;
  std::optional<int64_t> nodes;
  std::string nodes_src;
  if (main != nullptr) {
    const std::string where = Loc(main->file, main->line);
    std::map<std::string, std::string> o;
    for (const auto& [k, v] : main->opts) o[k] = v;
    auto opt_src = [&](const std::string& k) {
      return Loc(main->file, FindLine(main->file, main->line, k));
    };
    auto opt_int = [&](std::initializer_list<const char*> keys,
                       std::string* src) -> std::optional<int64_t> {
      for (const char* k : keys) {
        auto it = o.find(k);
        if (it == o.end()) continue;
        std::string v = it->second;
        size_t colon = v.find(':');
        if (colon != std::string::npos) v = v.substr(0, colon);
        if (auto n = ParseInt(v)) {
          *src = opt_src(std::string(k));
          return n;
        }
      }
      return std::nullopt;
    };
    std::string s1, s2;
    if (main->launcher == "torchrun" || main->launcher == "torch.distributed.run" ||
        main->launcher == "torch.distributed.launch" ||
        (main->launcher == "torchtune" && (o.count("nproc_per_node") || o.count("nnodes")))) {
      auto per = opt_int({"nproc_per_node"}, &s1);
      auto nn = opt_int({"nnodes"}, &s2);
      if (nn) {
        nodes = nn;
        nodes_src = s2;
      } else if (!o.count("nnodes")) {
        nodes = 1;
        nodes_src = where + " (single node: no --nnodes)";
      }
      if (per) {
        per_node_processes = per;
        processes_src = s1;
      }
    } else if (main->launcher == "deepspeed") {
      auto per = opt_int({"num_gpus", "num_gpu"}, &s1);
      auto nn = opt_int({"num_nodes"}, &s2);
      if (o.count("include")) {
        std::string inc = o["include"];
        size_t colon = inc.find(':');
        if (colon != std::string::npos) {
          per = CountDevices(inc.substr(colon + 1));
          s1 = opt_src("include");
        }
      }
      nodes = nn ? *nn : 1;
      nodes_src = nn ? s2 : where + " (single node: no --num_nodes/--hostfile)";
      if (o.count("hostfile") && !nn) nodes.reset();
      if (per && nodes) {
        processes = *per * *nodes;
        processes_src = s1;
      }
    } else if (main->launcher == "accelerate") {
      auto np = opt_int({"num_processes"}, &s1);
      auto nm = opt_int({"num_machines"}, &s2);
      nodes = nm ? *nm : 1;
      nodes_src = nm ? s2 : where + " (no --num_machines)";
      if (np) {
        processes = np;
        processes_src = s1;
      }
      if (o.count("config_file")) {
        // The accelerate config file decides processes, machines and precision.
        std::string rel_dir = fs::path(main->file).parent_path().generic_string();
        if (auto cf = Resolve(main->cwd, o["config_file"], rel_dir); cf && Read(*cf)) {
          try {
            YAML::Node n = YAML::Load(text_cache_[*cf]);
            auto get = [&](const char* k) -> std::optional<std::string> {
              if (n[k] && n[k].IsScalar()) return n[k].Scalar();
              return std::nullopt;
            };
            if (!np) {
              if (auto v = get("num_processes"); v && ParseInt(*v)) {
                processes = *ParseInt(*v);
                processes_src = Loc(*cf, FindLine(*cf, 1, "num_processes"));
              }
            }
            if (auto v = get("num_machines"); v && ParseInt(*v) && !nm) {
              nodes = *ParseInt(*v);
              nodes_src = Loc(*cf, FindLine(*cf, 1, "num_machines"));
            }
            if (auto v = get("mixed_precision")) {
              Add("precision", json(*v), kConfig, 0, Loc(*cf, FindLine(*cf, 1, "mixed_precision")),
                  "mixed_precision");
            }
          } catch (const std::exception& e) {
            meta_.notes.push_back(*cf + ": YAML error: " + e.what());
          }
        }
      }
      if (o.count("mixed_precision"))
        Add("precision", json(o["mixed_precision"]), kCommandLine, 0, opt_src("mixed_precision"),
            "mixed_precision");
      Vote("accelerate", 2);
    } else {
      // python, llamafactory-cli, swift: one process unless a wrapper starts several.
      nodes = 1;
      nodes_src = where + " (single process launch)";
      auto nproc_env = main->env.find("NPROC_PER_NODE");
      if (main->launcher == "torchtune" &&
          main->program.find("single_device") != std::string::npos) {
        processes = 1;  // `tune run lora_finetune_single_device ...`: one GPU by design
        processes_src = where + " (single-device recipe)";
      } else if (nproc_env != main->env.end() && ParseInt(nproc_env->second)) {
        processes = *ParseInt(nproc_env->second);  // swift / llamafactory-cli start torchrun
        processes_src = Loc(main->file, FindLine(main->file, main->line, "NPROC_PER_NODE"));
      } else if (main->wrapper_processes) {
        processes = main->wrapper_processes;
        processes_src = main->wrapper_source;
      } else if (main->wrapper == "srun") {
        // srun starts --ntasks (or --ntasks-per-node x nodes) copies of the program.
        std::optional<int64_t> ntasks, per_node, nn;
        for (const SbatchDirective& d : sbatch_) {
          if (d.option == "--ntasks" || d.option == "-n") ntasks = ParseInt(d.value);
          if (d.option == "--ntasks-per-node") per_node = ParseInt(d.value);
          if (d.option == "--nodes" || d.option == "-N")
            nn = ParseInt(d.value.substr(0, d.value.find('-')));
        }
        if (ntasks)
          processes = ntasks;
        else if (per_node)
          processes = *per_node * (nn ? *nn : 1);
        if (processes) processes_src = sbatch_file_ + " (srun tasks)";
        if (nn) {
          nodes = nn;
          nodes_src = sbatch_file_;
        }
      } else if (main->launcher == "python" && spawned_devices_.value > 0 &&
                 votes_.count("lightning")) {
        processes = spawned_devices_.value;  // Lightning starts one DDP process per device
        processes_src = spawned_devices_.source + " (Lightning: one process per device)";
      } else if (main->launcher == "python") {
        processes = 1;
        processes_src = where + " (plain python: one process)";
      }
    }
    if (main->launcher == "deepspeed") Vote("deepspeed", 2);
    if (main->launcher == "llamafactory-cli") Vote("llama-factory", 6);
    if (main->launcher == "swift") Vote("ms-swift", 6);
  }
  // Slurm request.
  std::optional<int64_t> sb_gpus_per_node, sb_nodes, sb_gpus_total;
  std::string sb_src;
  for (const SbatchDirective& d : sbatch_) {
    std::string src = Loc(sbatch_file_, d.line);
    if (d.option == "--nodes" || d.option == "-N") {
      std::string v = d.value.substr(0, d.value.find('-'));
      if (auto n = ParseInt(v)) {
        sb_nodes = n;
        if (!nodes || nodes_src.find("(") != std::string::npos) {
          nodes = n;
          nodes_src = src;
        }
      }
    }
    if (d.option == "--gres") {
      static const std::regex kGres(R"(gpu(?::[^:,]+)?:(\d+))");
      std::smatch mm;
      if (std::regex_search(d.value, mm, kGres)) {
        sb_gpus_per_node = std::stoll(mm[1].str());
        sb_src = src;
      }
    }
    if (d.option == "--gpus-per-node") {
      std::string v =
          d.value.substr(d.value.find(':') == std::string::npos ? 0 : d.value.find(':') + 1);
      if (auto n = ParseInt(v)) {
        sb_gpus_per_node = n;
        sb_src = src;
      }
    }
    if (d.option == "--gpus" || d.option == "-G") {
      std::string v =
          d.value.substr(d.value.find(':') == std::string::npos ? 0 : d.value.find(':') + 1);
      if (auto n = ParseInt(v)) {
        sb_gpus_total = n;
        sb_src = src;
      }
    }
  }
  if (per_node_processes) {
    if (!nodes) {
      nodes = 1;
      nodes_src = processes_src + " (node count unknown: assumed one)";
    }
    processes = *per_node_processes * nodes.value_or(1);
  }
  if (main != nullptr) {
    const std::string where = Loc(main->file, main->line);
    // GPUs: launcher processes; CUDA_VISIBLE_DEVICES; Slurm request.
    auto cvd = main->env.find("CUDA_VISIBLE_DEVICES");
    bool gpu_launcher = (main->launcher != "python" && main->launcher != "llamafactory-cli" &&
                         main->launcher != "swift" && main->launcher != "yolo") ||
                        main->env.count("NPROC_PER_NODE") ||
                        (main->wrapper == "srun" && processes && *processes > 1);
    if (processes && gpu_launcher) {
      gpus = processes;
      gpus_src = processes_src;
    } else if (cvd != main->env.end() && CountDevices(cvd->second) > 0) {
      gpus = CountDevices(cvd->second);
      gpus_src = Loc(main->file, FindLine(main->file, main->line, "CUDA_VISIBLE_DEVICES")) +
                 " (CUDA_VISIBLE_DEVICES lists device indexes)";
      if (!processes && (main->launcher == "llamafactory-cli" || main->launcher == "swift") &&
          *gpus == 1) {
        processes = 1;
        processes_src = gpus_src;
      }
    }
  }
  if (!gpus && (sb_gpus_per_node || sb_gpus_total)) {
    gpus = sb_gpus_total ? *sb_gpus_total : *sb_gpus_per_node * (sb_nodes ? *sb_nodes : 1);
    gpus_src = sb_src + " (Slurm GPU request)";
  }
  if (!nodes && !sbatch_.empty()) {
    nodes = 1;
    nodes_src = sbatch_file_ + " (Slurm default: one node)";
  }
  // Explicit arguments naming GPU / node counts.
  if (const Candidate* c = Best("num_gpus"); c && !gpus) {
    if (auto n = AsNumber(c->value)) {
      gpus = static_cast<int64_t>(*n);
      gpus_src = c->source;
    }
  }
  if (const Candidate* c = Best("num_nodes"); c && c->level >= kCommandLine) {
    if (auto n = AsNumber(c->value)) {
      nodes = static_cast<int64_t>(*n);
      nodes_src = c->source;
    }
  }
  if (!gpus && main != nullptr && main->launcher == "python" && program_found_) {
    if ((cuda_flag_defined_ && !cuda_flag_given_) || cpu_flag_given_) {
      gpus = 0;
      gpus_src = cuda_flag_defined_
                     ? "derived: the program has a --cuda flag that is not passed (CPU run)"
                     : "derived: CPU flag passed";
    } else if (uses_cuda_) {
      gpus = 1;
      gpus_src = "derived: single-process python program that uses CUDA";
    }
  }
  if (!gpus && main != nullptr && main->launcher == "python" && !program_found_ &&
      !sbatch_.empty() && sb_gpus_per_node) {
    gpus = *sb_gpus_per_node;
  }
  if (gpus) set("num_gpus", json(*gpus), gpus_src);
  if (!Best("dataset")) {
    for (const std::string& p : program_names_) {
      std::string l = ToLower(p);
      if (l.find("synthetic") != std::string::npos || l.find("dummy") != std::string::npos ||
          l.find("fake_data") != std::string::npos) {
        Add("dataset", json("synthetic (generated by " + p + ")"), kLibraryDefault, 9,
            "derived: program name " + p);
      }
    }
  }
  if (nodes) set("num_nodes", json(*nodes), nodes_src);

  // Launcher name.
  if (main != nullptr) {
    std::string name = main->launcher;
    if (main->wrapper == "sbatch" && name == "python")
      name = "sbatch --wrap -> python";
    else if ((main->wrapper == "srun" || main->wrapper == "mpirun") && name == "python")
      name = main->wrapper;
    set("launcher", json(name), Loc(main->file, main->line));
  }

  // Plain fields from candidates.
  static const char* kDirect[] = {"per_device_batch_size",
                                  "global_batch_size",
                                  "gradient_accumulation",
                                  "sequence_length",
                                  "image_size",
                                  "epochs",
                                  "max_steps",
                                  "learning_rate",
                                  "optimizer",
                                  "dataset",
                                  "model"};
  for (const char* f : kDirect) {
    const Candidate* c = Best(f);
    if (c == nullptr) continue;
    json v = c->value;
    std::string field = f;
    if (field != "optimizer" && field != "dataset" && field != "model") {
      if (auto n = AsNumber(v)) {
        double d = *n;
        if ((field == "max_steps" || field == "epochs") && d <= 0) continue;
        if (field != "learning_rate" && d == std::floor(d) && std::abs(d) < 9e15) {
          v = json(static_cast<int64_t>(d));
        } else {
          v = json(d);
        }
      } else if (v.is_boolean()) {
        continue;
      }
    } else if (!v.is_string()) {
      v = json(ValueText(v));
    }
    // A template value the user never filled in ("your-model", "<dataset>") is reported, marked
    // as such, rather than passed off as a real model or dataset name.
    if ((field == "dataset" || field == "model") && v.is_string() &&
        IsPlaceholder(v.get<std::string>())) {
      v = json(v.get<std::string>() + " (placeholder name)");
    }
    set(field, v, c->source);
  }
  if (!backbone_type_.value.empty()) {
    const Candidate* c = Best("model");
    bool generic = c == nullptr || c->key == "model.type" || c->rank >= 3;
    if (generic) {
      std::string name = backbone_type_.value;
      auto depth = shape_.find("backbone_depth");
      if (depth != shape_.end() && depth->second.value > 0)
        name += std::to_string(depth->second.value);
      set("model", json(name), backbone_type_.source);
    }
  }
  // Megatron-style parallelism and derived batch sizes.
  std::optional<int64_t> dp = processes;
  std::string dp_note;
  if (dp && (tp_ || pp_)) {
    int64_t mp = (tp_ ? *tp_ : 1) * (pp_ ? *pp_ : 1);
    if (mp > 0 && *dp % mp == 0) {
      dp = *dp / mp;
      dp_note = fmt::format(" / model parallel {}", mp);
    }
  }
  if (auto it = world_divides_.find("gradient_accumulation");
      it != world_divides_.end() && m.Has("gradient_accumulation")) {
    const json& ga = m.values["gradient_accumulation"];
    if (ga.is_number_integer() && processes && *processes > 0 &&
        ga.get<int64_t>() % *processes == 0) {
      int64_t per = ga.get<int64_t>() / *processes;
      set("gradient_accumulation", json(per),
          fmt::format("derived: {} ({}) / {} processes, as {} divides by the world size",
                      ga.get<int64_t>(), m.sources["gradient_accumulation"], *processes,
                      it->second));
    }
  }
  bool training_job = main != nullptr || config_only_ || m.Has("per_device_batch_size");
  if (!m.Has("gradient_accumulation") && m.Has("per_device_batch_size") && training_job) {
    if (m.Has("global_batch_size") && m.values["per_device_batch_size"].is_number() &&
        m.values["global_batch_size"].is_number() && dp) {
      int64_t g = m.values["global_batch_size"].get<int64_t>();
      int64_t p = m.values["per_device_batch_size"].get<int64_t>();
      if (p > 0 && *dp > 0 && g % (p * *dp) == 0) {
        set("gradient_accumulation", json(g / (p * *dp)),
            fmt::format("derived: global {} / (micro {} x data-parallel {})", g, p, *dp));
      }
    }
    if (!m.Has("gradient_accumulation"))
      set("gradient_accumulation", json(1), "default: no gradient accumulation configured");
  }
  if (!m.Has("global_batch_size") && m.Has("per_device_batch_size") &&
      m.values["per_device_batch_size"].is_number_integer()) {
    int64_t p = m.values["per_device_batch_size"].get<int64_t>();
    int64_t ga =
        m.Has("gradient_accumulation") && m.values["gradient_accumulation"].is_number_integer()
            ? m.values["gradient_accumulation"].get<int64_t>()
            : 1;
    if (dp) {
      set("global_batch_size", json(p * ga * *dp),
          fmt::format("derived: per-device {} x accumulation {} x {} processes{}", p, ga,
                      *processes, dp_note));
    } else if (training_job) {
      set("global_batch_size",
          json(fmt::format("derived: {} x num_processes (process count not in the sources)",
                           p * ga)),
          "derived: per-device x accumulation x unknown process count");
    }
  }
  // Precision.
  if (const Candidate* c = Best("precision")) {
    set("precision", json(NormalisePrecision(c->value)), c->source);
  }

  // Framework.
  std::string framework;
  {
    for (const std::string& p : program_names_) {
      std::string l = ToLower(p);
      if (StartsWith(l, "run_") &&
          (l.find("glue") != std::string::npos || l.find("clm") != std::string::npos ||
           l.find("mlm") != std::string::npos || l.find("qa") != std::string::npos ||
           l.find("ner") != std::string::npos || l.find("summarization") != std::string::npos ||
           l.find("translation") != std::string::npos))
        Vote("hf-transformers", 3);
      if (l.find("text_to_image") != std::string::npos || l.find("dreambooth") != std::string::npos)
        Vote("diffusers", 3);
      if (StartsWith(l, "pretrain_gpt") || StartsWith(l, "pretrain_bert") ||
          StartsWith(l, "pretrain_t5"))
        Vote("megatron", 3);
      if (StartsWith(l, "axolotl.")) Vote("axolotl", 8);  // -m axolotl.cli.train
      if (StartsWith(l, "t5x.")) Vote("jax", 4);          // -m t5x.train (JAX)
    }
    if (hf_trainer_) Vote("hf-transformers", 2);
    static const char* kSpecific[] = {
        "llama-factory", "ms-swift",  "mmdetection", "ultralytics", "megatron",
        "diffusers",     "lightning", "tensorflow",  "jax",         "hf-transformers",
        "torchtune",     "axolotl",   "nemo",        "fairseq",     "detectron2"};
    int best = 0;
    for (const char* f : kSpecific) {
      auto it = votes_.find(f);
      if (it != votes_.end() && it->second > best) {
        best = it->second;
        framework = f;
      }
    }
    if (framework.empty() &&
        (votes_.count("pytorch") || votes_.count("deepspeed") || votes_.count("accelerate") ||
         (main != nullptr && main->launcher != "python"))) {
      framework = "pytorch";
    }
    if (!framework.empty()) {
      std::string extra;
      if (votes_.count("deepspeed") && framework != "deepspeed" && framework != "pytorch")
        extra = " + deepspeed";
      else if (votes_.count("deepspeed") && framework == "pytorch")
        framework = "pytorch + deepspeed";
      if (votes_.count("accelerate") && votes_["accelerate"] >= 2 && framework != "pytorch")
        extra += " + accelerate";
      set("framework", json(framework + extra),
          "derived: imports, launcher and argument vocabulary");
    }
  }
  // Library defaults that depend on the framework.
  auto lib_default = [&](const std::string& field, json v, const std::string& why) {
    if (!m.Has(field)) set(field, std::move(v), "default: " + why);
  };
  if (framework == "ultralytics") {
    lib_default("precision", json("amp (ultralytics default)"), "ultralytics trains with AMP");
    lib_default("optimizer", json("auto (ultralytics default)"), "ultralytics optimizer='auto'");
  }
  if (StartsWith(framework, "hf-transformers") || StartsWith(framework, "llama-factory") ||
      StartsWith(framework, "ms-swift") || StartsWith(framework, "diffusers") ||
      StartsWith(framework, "axolotl")) {
    lib_default("optimizer", json("AdamW (library default)"),
                "HF Trainer / diffusers examples use AdamW");
  }
  if (StartsWith(framework, "hf-transformers") && !m.Has("learning_rate") && hf_trainer_) {
    lib_default("learning_rate", json(5e-5), "HF TrainingArguments.learning_rate");
  }
  if (framework == "megatron")
    lib_default("optimizer", json("adam (Megatron default)"), "Megatron --optimizer adam");
  if (framework == "torchtune" && torchtune_packaged_config_)
    lib_default("precision", json("bf16"), "torchtune's packaged configs set dtype: bf16");
  if (!m.Has("precision") && (training_job) && !framework.empty()) {
    m.values["precision"] = "fp32";
    m.sources["precision"] = "default: no mixed-precision setting found";
  }
  // Image size of well-known datasets.
  if (!m.Has("image_size") && m.Has("dataset") && m.values["dataset"].is_string()) {
    std::string d = ToLower(m.values["dataset"].get<std::string>());
    std::string dn;
    for (char c : d) {
      if (c != '-' && c != ' ') dn.push_back(c == '-' ? '_' : c);
    }
    for (const auto& [name, size] : DatasetImageSizes()) {
      if (dn.find(name) != std::string::npos) {
        set("image_size", json(size),
            "derived: " + name + " images are " + std::to_string(size) + "x" +
                std::to_string(size));
        break;
      }
    }
  }
  // Model family and parameters.
  std::string model = m.Has("model") ? ValueText(m.values["model"]) : "";
  std::string family = FamilyOf(model);
  std::string family_src = m.Has("model") ? m.sources["model"] : "";
  if (family.empty()) {
    for (const std::string& p : program_names_) {
      std::string f = FamilyOf(p.substr(0, p.find('.')));
      if (!f.empty() && f != "transformer") {
        family = f;
        family_src = "derived: program name " + p;
        break;
      }
    }
  }
  if (!family.empty())
    set("model_family", json(family),
        family_src.empty()                  ? "derived"
        : StartsWith(family_src, "derived") ? family_src
                                            : "derived from " + family_src);
  if (!model.empty()) {
    if (auto p = ParamsFromName(model)) set("params", json(*p), "derived: model name " + model);
  }
  if (!m.Has("params")) {
    // Decoder-only transformer: 12 * layers * width^2 (attention + MLP) + vocab * width.
    auto get = [&](std::initializer_list<const char*> keys) -> const Shape* {
      for (const char* k : keys) {
        auto it = shape_.find(k);
        if (it != shape_.end()) return &it->second;
      }
      return nullptr;
    };
    const Shape* layers = get({"n_layer", "num_layers", "n_layers", "num_hidden_layers"});
    const Shape* width = get({"n_embd", "hidden_size", "d_model"});
    const Shape* vocab = get({"padded_vocab_size", "vocab_size"});
    if (layers && width && layers->value > 0 && width->value > 0) {
      double v = vocab ? static_cast<double>(vocab->value) : 50257.0;
      double p = 12.0 * static_cast<double>(layers->value) * static_cast<double>(width->value) *
                     static_cast<double>(width->value) +
                 v * static_cast<double>(width->value);
      set("params", json(fmt::format("~{:.0f}M (derived)", p / 1e6)),
          fmt::format("derived: 12 x {} layers ({}) x {}^2 ({}) + vocab {} x width", layers->value,
                      layers->source, width->value, width->source,
                      vocab ? std::to_string(vocab->value) : "50257 (GPT-2, assumed)"));
    }
  }
  // Task.
  {
    std::string task;
    std::string fam = family;
    static const std::set<std::string> kLlm = {
        "llama", "mistral", "mixtral", "qwen",     "minicpm", "glm", "baichuan",
        "gemma", "falcon",  "bloom",   "gpt-neox", "gpt-j",   "gpt"};
    bool lora = false;
    for (const Launch& l : launches_) {
      for (const std::string& a : l.args) lora |= IContains(a, "lora");
    }
    if (framework == "ultralytics" || fam == "rcnn" || fam == "retinanet" || fam == "detr" ||
        fam == "yolo") {
      task = "object detection";
    } else if (fam == "diffusion" || fam == "unet" ||
               framework.find("diffusers") != std::string::npos) {
      task = "diffusion fine-tuning";
    } else if (kLlm.count(fam)) {
      bool pretrain =
          framework == "megatron" ||
          std::any_of(program_names_.begin(), program_names_.end(),
                      [](const std::string& p) { return IContains(p, "pretrain"); }) ||
          (m.Has("max_steps") && !m.Has("epochs") && model.find('/') == std::string::npos);
      task =
          pretrain ? "causal-lm pretraining" : (lora ? "lm fine-tuning (LoRA)" : "lm fine-tuning");
    } else if (fam == "bert" || fam == "roberta" || fam == "deberta" || fam == "electra" ||
               fam == "albert") {
      task = "text classification / NLU fine-tuning";
    } else if (fam == "lstm" || fam == "gru" || fam == "rnn") {
      task = m.Has("sequence_length") ? "language modelling (RNN)" : "sequence modelling (RNN)";
    } else if (!fam.empty() && (fam == "cnn" || fam == "resnet" || fam == "vit" || fam == "swin" ||
                                fam == "convnext" || fam == "efficientnet" || fam == "mobilenet" ||
                                fam == "densenet" || fam == "vgg")) {
      task = "image classification";
    }
    if (!task.empty()) set("task", json(task), "derived: model family and framework");
  }
  if (main == nullptr && !config_only_) m.notes.push_back("no launch command found");
  return std::move(meta_);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

bool LooksLikePythonConfig(const PyFacts& f) {
  if (f.globals.count("_base_")) return true;
  bool has_train_code = false;
  for (const PyCall& c : f.calls) {
    if (EndsWith(c.callee, "add_argument") || EndsWith(c.callee, ".train") ||
        EndsWith(c.callee, ".fit") || EndsWith(c.callee, "backward") || c.callee == "Trainer") {
      has_train_code = true;
    }
  }
  return !has_train_code && f.imports.empty() && !f.globals.empty();
}

}  // namespace

Status Extraction::RunText(const std::string& raw, const std::string& name) {
  size_t replaced = 0;
  std::optional<std::string> decoded = DecodeText(raw, replaced);
  if (!decoded) return Status::InvalidArgument(name + ": script is binary, not text");
  if (replaced > 0) {
    meta_.notes.push_back(name + ": " + std::to_string(replaced) +
                          " bytes that are not UTF-8 replaced by U+FFFD");
  }
  const std::string& text = *decoded;
  text_cache_[name] = text;
  meta_.entry = name;
  meta_.files_read.push_back(name);
  visited_scripts_.insert(name);
  ProcessShell(name, text, ShellContext{}, "", 0);
  const Launch* main = nullptr;
  for (const Launch& l : launches_) {
    if (main == nullptr || l.args.size() > main->args.size()) main = &l;
  }
  if (main != nullptr) ProcessLaunch(*main);
  return Status::Ok();
}

Status Extraction::RunFile(const std::string& entry) {
  std::error_code ec;
  if (!fs::exists(root_ / entry, ec)) return Status::NotFound(entry + ": no such file");
  auto text = Read(entry);
  if (!text) {
    return Status::InvalidArgument(entry +
                                   ": cannot read the job's entry (binary, or larger than 8 MiB)");
  }
  meta_.entry = entry;
  if (EndsWith(entry, ".py")) {
    PyFacts f = ScanPython(*text);
    if (LooksLikePythonConfig(f)) {
      config_only_ = true;
      LoadConfig(entry, kConfig, 0);
      meta_.notes.push_back(
          entry + ": a configuration file; the launcher and GPU count are not in the sources");
      return Status::Ok();
    }
    Launch l;
    l.launcher = "python";
    l.program = entry;
    l.file = entry;
    l.line = 1;
    launches_.push_back(l);
    ProcessLaunch(launches_.back());
    return Status::Ok();
  }
  if (EndsWith(entry, ".yaml") || EndsWith(entry, ".yml") || EndsWith(entry, ".json")) {
    config_only_ = true;
    LoadConfig(entry, kConfig, 0);
    return Status::Ok();
  }
  visited_scripts_.insert(entry);
  ProcessShell(entry, *text, ShellContext{}, "", 0);
  const Launch* main = nullptr;
  for (const Launch& l : launches_) {
    if (main == nullptr || l.args.size() > main->args.size()) main = &l;
  }
  if (main != nullptr) ProcessLaunch(*main);
  return Status::Ok();
}

}  // namespace schedmate::advisor

namespace schedmate::advisor {
namespace {

// Picks the file a user would submit from a directory.
std::optional<std::string> FindEntry(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path real_dir = fs::weakly_canonical(dir, ec);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    // Only files that stay in the directory (a symlink out of it is never read).
    std::error_code rec;
    const fs::path real = fs::weakly_canonical(it->path(), rec);
    const fs::path inside = real.lexically_relative(real_dir);
    if (rec || inside.empty() || *inside.begin() == "..") continue;
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  auto contains = [&](const std::string& n, const char* what) {
    auto t = ReadFileToString((dir / n).string(), size_t{1} << 20);
    return t.ok() && t->find(what) != std::string::npos;
  };
  for (const std::string& n : names) {
    if (EndsWith(n, ".sbatch") || EndsWith(n, ".slurm")) return n;
  }
  for (const std::string& n : names) {
    if (EndsWith(n, ".sh") && contains(n, "#SBATCH")) return n;
  }
  for (const std::string& n : names) {
    if (EndsWith(n, ".sh") &&
        (contains(n, "python") || contains(n, "torchrun") || contains(n, "deepspeed") ||
         contains(n, "accelerate") || contains(n, "llamafactory-cli"))) {
      return n;
    }
  }
  static const char* kPy[] = {"train.py", "main.py", "finetune.py", "pretrain.py", "run.py"};
  for (const char* p : kPy) {
    if (std::find(names.begin(), names.end(), p) != names.end()) return std::string(p);
  }
  for (const std::string& n : names) {
    if (EndsWith(n, ".py") &&
        (StartsWith(n, "train") || StartsWith(n, "run") || StartsWith(n, "finetune")))
      return n;
  }
  return std::nullopt;
}

}  // namespace

Result<JobMetadata> BuiltinMetadataExtractor::Extract(const JobSource& source) {
  try {
    if (source.path.empty()) {
      fs::path root = source.root.empty() ? fs::current_path() : fs::path(source.root);
      Extraction x(root);
      SM_RETURN_IF_ERROR(x.RunText(source.script_text, source.script_name));
      return x.Finish();
    }
    fs::path p(source.path);
    std::error_code ec;
    if (!fs::exists(p, ec)) return Status::NotFound(source.path + ": no such file or directory");
    fs::path root;
    std::string entry;
    if (fs::is_directory(p, ec)) {
      root = source.root.empty() ? p : fs::path(source.root);
      auto e = FindEntry(p);
      if (!e)
        return Status::NotFound(source.path +
                                ": no job script or training program found in the directory");
      entry = (fs::relative(p / *e, root, ec)).generic_string();
      if (ec || entry.empty() || StartsWith(entry, "..")) {
        root = p;
        entry = *e;
      }
    } else {
      root = source.root.empty() ? fs::current_path() : fs::path(source.root);
      fs::path abs = fs::absolute(p, ec);
      fs::path rel = fs::relative(abs, fs::absolute(root, ec), ec);
      std::string r = rel.generic_string();
      if (ec || r.empty() || StartsWith(r, "..")) {
        root = abs.parent_path();
        r = abs.filename().string();
      }
      entry = r;
    }
    Extraction x(root);
    SM_RETURN_IF_ERROR(x.RunFile(entry));
    return x.Finish();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("metadata extraction: ") + e.what());
  }
}

}  // namespace schedmate::advisor
