#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <regex>

#include "advisor/extraction.h"
#include "advisor/python_scanner.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

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
  // Hydra's package header: `# @package _global_` puts the keys at the root, `# @package a.b`
  // under a.b, whatever group the file was selected from.
  std::string package = prefix;
  for (std::string_view line : Split(*text, '\n')) {
    std::string_view t = Trim(line);
    if (!StartsWith(t, "#")) {
      if (!t.empty()) break;
      continue;
    }
    t = Trim(t.substr(1));
    if (!StartsWith(t, "@package")) continue;
    std::string_view pk = Trim(t.substr(8));
    package = pk == "_global_" ? "" : std::string(pk);
    break;
  }
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
        FromConfigName(b);  // a model-zoo base still names the model and schedule
        // detectron2's own `_BASE_` key: a model-zoo name without its folder
        // (cascade_rcnn_R_50_FPN_1x.yaml) still names the model.
        static const std::regex kZooStem(R"(^(.+?)_(\d+)x$)");
        std::smatch zm;
        const std::string stem = fs::path(b).stem().string();
        if (std::string(bk) == "_BASE_" && std::regex_match(stem, zm, kZooStem)) {
          Add("model", json(zm[1].str()), kLibraryDefault, 6,
              "derived: base config name " + fs::path(b).filename().string(), "_BASE_");
          Vote("detectron2", 3);
        }
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
      if (StartsWith(group, "override ")) group = std::string(Trim(group.substr(9)));
      // `/group` is absolute: from the config root, the directory above this file's group
      // directory when it was selected from one; otherwise relative to this file.
      fs::path gdir = dir;
      if (StartsWith(group, "/") && !dir.empty()) {
        for (fs::path up = dir; !up.empty(); up = up.parent_path()) {
          if (Read((up / group.substr(1).substr(0, group.find('@')) / (option + ".yaml"))
                       .lexically_normal()
                       .generic_string())) {
            gdir = up;
            break;
          }
          if (up == up.parent_path()) break;
        }
      }
      while (!group.empty() && (group[0] == '/' || group[0] == '+')) group = group.substr(1);
      std::string inner = group.substr(0, group.find('@'));
      if (auto c = hydra_choices_.find(inner); c != hydra_choices_.end()) {
        fs::path alt = (gdir / inner / (c->second + ".yaml")).lexically_normal();
        if (Read(alt.generic_string())) option = c->second;
      }
      fs::path p = (gdir / inner / (option + ".yaml")).lexically_normal();
      if (Read(p.generic_string())) {
        // Packaged under the group name.
        LoadConfig(p.generic_string(), level, depth + 1, inner);
      } else if (!inner.empty()) {
        AddHydraChoiceName(inner, option, level, Loc(rel, FindLine(rel, 1, option)));
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
  else if (!package.empty()) {
    for (const auto& p : SplitPath(package)) path.push_back(p);
  }
  auto line_of_unprefixed = [&](const std::vector<std::string>& p) {
    std::vector<std::string> q(
        p.begin() +
            static_cast<std::ptrdiff_t>(deepspeed || !package.empty()
                                            ? SplitPath(deepspeed ? "deepspeed" : package).size()
                                            : 0),
        p.end());
    return q.empty() ? 1 : line_of(q);
  };
  json body = j;
  body.erase("defaults");
  FlattenJson(body, path, level, rel, line_of_unprefixed);
  if (deepspeed) Vote("deepspeed", 2);
}

void Extraction::AddHydraChoiceName(const std::string& group, const std::string& option, int level,
                                    const std::string& source) {
  // Only groups whose name is a key of a naming field (model, dataset, data, optimizer).
  auto k = knowledge_.keys.find(NormKey(group));
  if (k == knowledge_.keys.end()) return;
  const std::string& field = k->second.first;
  if (field != "model" && field != "dataset" && field != "optimizer") return;
  Add(field, json(option), level, k->second.second + 3, source, group + " (Hydra choice)");
}

void Extraction::LoadHydraChoicesWithoutPrimary(const Launch& l) {
  // Hydra looks up `group=option` as <config dir>/<group>/<option>.yaml; the usual config
  // directories beside the program or at the job's root.
  const fs::path prog_dir = fs::path(l.cwd) / fs::path(l.module ? "" : l.program).parent_path();
  static const char* kDirs[] = {"configs", "conf", "config", "cfg"};
  for (const auto& [group, option] : hydra_choices_) {
    if (group.find('/') != std::string::npos || option.empty()) continue;
    for (const fs::path& base : {prog_dir, fs::path(l.cwd), fs::path()}) {
      bool found = false;
      for (const char* d : kDirs) {
        fs::path p = (base / d / group / (option + ".yaml")).lexically_normal();
        const std::string rel = p.generic_string();
        if (StartsWith(rel, "..") || !Read(rel)) continue;
        LoadConfig(rel, kConfig, 0, group);
        found = true;
        break;
      }
      if (found) break;
    }
  }
}

void Extraction::LoadModelConfig(const std::string& rel) {
  auto text = Read(rel);
  if (!text || !loaded_configs_.insert(rel).second) return;
  json j;
  if (EndsWith(rel, ".json")) {
    j = json::parse(*text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  } else {
    try {
      std::vector<std::string> path;
      std::map<std::string, int> lines;
      j = YamlToJson(YAML::Load(*text), path, lines);
    } catch (const std::exception& e) {
      meta_.notes.push_back(rel + ": YAML error: " + e.what());
      return;
    }
  }
  if (!j.is_object()) return;
  auto line_of = [&](const std::string& key) { return FindLine(rel, 1, "\"" + key + "\""); };
  if (j.contains("model_type") && j["model_type"].is_string()) {
    Add("model", j["model_type"], kConfig, 4, Loc(rel, line_of("model_type")), "model_type");
  } else if (j.contains("architectures") && j["architectures"].is_array() &&
             !j["architectures"].empty() && j["architectures"][0].is_string()) {
    Add("model", j["architectures"][0], kConfig, 4, Loc(rel, line_of("architectures")),
        "architectures");
  }
  // Shape keys (for the parameter count) and the context length; nothing else.
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number_integer()) continue;
    auto f = knowledge_.keys.find(NormKey(k));
    if (f != knowledge_.keys.end() && f->second.first != "sequence_length") continue;
    AddKey({k}, v, kConfig, Loc(rel, line_of(k)));
  }
}

void Extraction::LoadMarkdownConfig(const std::string& rel) {
  // The file's text with every line outside a ```yaml / ```yml fence blanked: line numbers stay.
  auto text = Read(rel);
  if (!text) return;
  std::string yaml;
  bool in_block = false, any = false;
  for (std::string_view line : Split(*text, '\n')) {
    std::string_view t = Trim(line);
    if (StartsWith(t, "```")) {
      std::string lang = ToLower(Trim(t.substr(3)));
      if (!in_block && (lang == "yaml" || lang == "yml")) {
        in_block = any = true;
      } else {
        in_block = false;
      }
      yaml += '\n';
      continue;
    }
    if (in_block) yaml.append(line);
    yaml += '\n';
  }
  if (!any) return;
  text_cache_[rel] = yaml;
  config_only_ = true;
  LoadConfig(rel, kConfig, 0);
}

void Extraction::FromConfigName(const std::string& path) {
  const fs::path p(path);
  const std::string stem = p.stem().string();
  const std::string src = "derived: config name " + p.filename().string() + " (not in the sources)";
  auto dataset_name = [this](const std::string& d) -> std::string {
    auto it = knowledge_.dataset_abbreviations.find(d);
    return it != knowledge_.dataset_abbreviations.end() ? it->second : d;
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
      for (const KnownSchedule& kb : knowledge_.mmdet_schedules) {
        if (stem != kb.stem) continue;
        std::string src = "default: " + b + " (mmdet's " + kb.stem + ", not in the sources)";
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

}  // namespace schedmate::advisor::internal
