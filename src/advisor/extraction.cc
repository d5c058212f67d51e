#include "advisor/extraction.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

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

namespace {

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

}  // namespace

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

std::vector<std::string> SplitPath(const std::string& key) {
  std::vector<std::string> out;
  for (std::string_view p : Split(key, '.')) {
    if (!p.empty()) out.emplace_back(p);
  }
  return out;
}

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
  // Scripts kept in a subfolder are often run from a folder above it (`cd repo/pkg && bash
  // scripts/run.sh` reading ./configs/x.json): the directories above the script, nearest first.
  for (fs::path up = fs::path(rel_dir).parent_path(); !up.empty(); up = up.parent_path()) {
    tries.push_back(up / p);
    if (up == up.parent_path()) break;
  }
  for (const fs::path& t : tries) {
    fs::path norm = t.lexically_normal();
    std::string s = norm.generic_string();
    if (s.empty() || StartsWith(s, "..")) continue;
    std::error_code ec;
    if (fs::is_regular_file(root_ / norm, ec)) return s;
  }
  return std::nullopt;
}

std::optional<std::string> Extraction::FindByName(const std::string& name) const {
  // Bounded walk of the job directory (symlinks not followed): the one file with this name.
  std::optional<std::string> found;
  std::error_code ec;
  int seen = 0;
  for (fs::recursive_directory_iterator it(root_, fs::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (++seen > 20000) return std::nullopt;
    if (it.depth() > 8) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() != name || !it->is_regular_file(ec)) continue;
    if (found) return std::nullopt;  // ambiguous
    found = it->path().lexically_relative(root_).generic_string();
  }
  return found;
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
  // A config key only one framework uses names that framework (config_key_votes).
  if (auto v = knowledge_.config_key_votes.find(parent.empty() ? leaf : parent + "." + leaf);
      v != knowledge_.config_key_votes.end()) {
    Vote(v->second.first, v->second.second);
  } else if (auto w = knowledge_.config_key_votes.find(leaf);
             !parent.empty() && w != knowledge_.config_key_votes.end() &&
             w->first.find('.') == std::string::npos) {
    Vote(w->second.first, w->second.second);
  }
  // Keys whose field depends on the framework wait until it is known (ApplyFrameworkKeys).
  for (const auto& [fw, keys] : knowledge_.framework_keys) {
    if (auto k = keys.find(leaf); k != keys.end() && scalar && !knowledge_.keys.count(leaf)) {
      framework_cands_.push_back(
          {fw, k->second.first, value, level, k->second.second, source, full});
    }
  }
  const KeyAt key{path, leaf, parent, full};
  if (AddNamedKey(key, value, level, source)) return;
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
  if (AddShapeKey(key, value, level, source)) return;
  auto it = knowledge_.keys.find(leaf);
  if (it == knowledge_.keys.end()) return;
  const auto& [field, rank] = it->second;
  if (field == "image_size" && value.is_array() && value.size() >= 2 && value.size() <= 3 &&
      std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_number(); })) {
    // (C, H, W) or (H, W): the larger spatial side.
    const size_t first = value.size() == 3 ? 1 : 0;
    json side = value[first];
    for (size_t q = first; q < value.size(); ++q) {
      if (value[q].get<double>() > side.get<double>()) side = value[q];
    }
    Add(field, side, level, rank, source, full);
    return;
  }
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

// Optimizer, model and dataset names: `optimizer.type`, Hydra `_target_` / torchtune
// `_component_`, axolotl `datasets: [...]`, `data.name`. True when the key was one of them.
bool Extraction::AddNamedKey(const KeyAt& key, const json& value, int level,
                             const std::string& source) {
  const std::vector<std::string>& path = key.path;
  const std::string& leaf = key.leaf;
  const std::string& parent = key.parent;
  const std::string& full = key.full;
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
    return true;
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
    return true;
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
    return true;
  }
  if ((parent == "data" || parent == "dataset") && (leaf == "name" || leaf == "path") &&
      value.is_string()) {
    Add("dataset", value, level, 1, source, full);
    return true;
  }
  return false;
}

// Model shape and parallelism: an mmcv backbone, transformer shape keys, tensor/pipeline
// parallel sizes, device lists. True when the key was one of them.
bool Extraction::AddShapeKey(const KeyAt& key, const json& value, int level,
                             const std::string& source) {
  const std::string& leaf = key.leaf;
  const std::string& parent = key.parent;
  const std::string& full = key.full;
  if (parent == "backbone" && (leaf == "type" || leaf == "depth") && value.is_primitive()) {
    Shape& s = shape_["backbone_" + leaf];
    if (level >= s.level) s = {value.is_number_integer() ? value.get<int64_t>() : 0, level, source};
    if (leaf == "type" && value.is_string())
      backbone_type_ = {value.get<std::string>(), level, source};
    return true;
  }
  if (leaf == "stage" && parent == "zero_optimization") return true;
  static const std::set<std::string> kShapeKeys = {
      "n_layer",     "num_layers", "n_layers",   "num_hidden_layers", "n_embd",
      "hidden_size", "d_model",    "vocab_size", "padded_vocab_size"};
  if (kShapeKeys.count(leaf) && value.is_number_integer()) {
    Shape& s = shape_[leaf];
    if (level >= s.level) s = {value.get<int64_t>(), level, source};
    return true;
  }
  if (leaf == "tensor_model_parallel_size" || leaf == "tensor_parallel_size") {
    if (auto n = AsNumber(value)) tp_ = static_cast<int64_t>(*n);
    return true;
  }
  if (leaf == "pipeline_model_parallel_size" || leaf == "pipeline_parallel_size") {
    if (auto n = AsNumber(value)) pp_ = static_cast<int64_t>(*n);
    return true;
  }
  if ((leaf == "device" || leaf == "devices" || leaf == "gpu_ids") && value.is_primitive()) {
    // device=0,1 / gpu_ids "0,1" list device indexes; Lightning's devices=4 is a count.
    std::string v = ValueText(value);
    bool digits_and_commas = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == ' ';
    });
    if (!digits_and_commas) return true;
    int64_t n =
        leaf == "devices" && value.is_number_integer() ? value.get<int64_t>() : CountDevices(v);
    if (n > 0) Add("num_gpus", json(n), level, 3, source, full);
    if (leaf == "devices" && n > 0 && level >= spawned_devices_.level) {
      spawned_devices_ = {n, level, source};  // Lightning: one process per device
    }
    return true;
  }
  return false;
}

}  // namespace schedmate::advisor::internal
