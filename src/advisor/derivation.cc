#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "advisor/extraction.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

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
  for (const auto& [pat, fam] : ExtractorKnowledge::Builtin().family_patterns) {
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
  for (const auto& [pat, p] : ExtractorKnowledge::Builtin().known_params) {
    if (l.find(pat) != std::string::npos) return p;
  }
  return std::nullopt;
}

}  // namespace

// GCC 12 reports a false -Wmaybe-uninitialized on std::optional<int64_t> reads in these steps
// (every read is guarded by has_value()).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
JobMetadata Extraction::Finish() {
  Derived d;
  // The main launch: the one with the most arguments (first on ties).
  for (const Launch& l : launches_) {
    if (d.main == nullptr || l.args.size() > d.main->args.size()) d.main = &l;
  }
  CountLaunchProcesses(d);
  ReadSlurmRequest(d);
  DeriveGpusAndNodes(d);
  SetLauncherName(d);
  SetDirectFields();
  DeriveBatchSizes(d);
  ApplyWorldScaling(d);
  DerivePrecision();
  DeriveFramework(d);
  ApplyFrameworkKeys(d);
  ApplyLibraryDefaults(d);
  DeriveImageSize();
  DeriveModelFamilyAndParams(d);
  DeriveTask(d);
  if (d.main == nullptr && !config_only_) meta_.notes.push_back("no launch command found");
  ScoreConfidence();
  return std::move(meta_);
}

void Extraction::Set(const std::string& field, json value, std::string source) {
  meta_.values[field] = std::move(value);
  meta_.sources[field] = std::move(source);
}

std::string Extraction::OptionSource(const Launch& l, const std::string& key) {
  return Loc(l.file, FindLine(l.file, l.line, key));
}

std::optional<int64_t> Extraction::OptionInt(const Launch& l, const LaunchOptions& o,
                                             std::initializer_list<const char*> keys,
                                             std::string* src) {
  for (const char* k : keys) {
    auto it = o.find(k);
    if (it == o.end()) continue;
    std::string v = it->second;
    size_t colon = v.find(':');
    if (colon != std::string::npos) v = v.substr(0, colon);
    if (auto n = ParseInt(v)) {
      *src = OptionSource(l, std::string(k));
      return n;
    }
  }
  return std::nullopt;
}

void Extraction::CountLaunchProcesses(Derived& d) {
  const Launch* main = d.main;
  if (main == nullptr) return;
  LaunchOptions o;
  for (const auto& [k, v] : main->opts) o[k] = v;
  if (main->launcher == "torchrun" || main->launcher == "torch.distributed.run" ||
      main->launcher == "torch.distributed.launch" ||
      (main->launcher == "torchtune" && (o.count("nproc_per_node") || o.count("nnodes")))) {
    CountTorchrunProcesses(o, d);
  } else if (main->launcher == "deepspeed") {
    CountDeepspeedProcesses(o, d);
  } else if (main->launcher == "accelerate") {
    CountAccelerateProcesses(o, d);
  } else {
    CountSingleLaunchProcesses(d);
  }
  if (main->launcher == "deepspeed") Vote("deepspeed", 2);
  if (main->launcher == "llamafactory-cli") Vote("llama-factory", 6);
  if (main->launcher == "swift") Vote("ms-swift", 6);
}

void Extraction::CountTorchrunProcesses(const LaunchOptions& o, Derived& d) {
  const Launch& main = *d.main;
  std::string s1, s2;
  auto per = OptionInt(main, o, {"nproc_per_node"}, &s1);
  auto nn = OptionInt(main, o, {"nnodes"}, &s2);
  if (nn) {
    d.nodes = nn;
    d.nodes_src = s2;
  } else if (!o.count("nnodes")) {
    d.nodes = 1;
    d.nodes_src = Loc(main.file, main.line) + " (single node: no --nnodes)";
  }
  if (per) {
    d.per_node_processes = per;
    d.processes_src = s1;
  }
}

void Extraction::CountDeepspeedProcesses(const LaunchOptions& o, Derived& d) {
  const Launch& main = *d.main;
  std::string s1, s2;
  auto per = OptionInt(main, o, {"num_gpus", "num_gpu"}, &s1);
  auto nn = OptionInt(main, o, {"num_nodes"}, &s2);
  if (o.count("include")) {
    std::string inc = o.at("include");
    size_t colon = inc.find(':');
    if (colon != std::string::npos) {
      per = CountDevices(inc.substr(colon + 1));
      s1 = OptionSource(main, "include");
    }
  }
  d.nodes = nn ? *nn : 1;
  d.nodes_src = nn ? s2 : Loc(main.file, main.line) + " (single node: no --num_nodes/--hostfile)";
  if (o.count("hostfile") && !nn) d.nodes.reset();
  if (per && d.nodes) {
    d.processes = *per * *d.nodes;
    d.processes_src = s1;
  }
}

void Extraction::CountAccelerateProcesses(const LaunchOptions& o, Derived& d) {
  const Launch& main = *d.main;
  std::string s1, s2;
  auto np = OptionInt(main, o, {"num_processes"}, &s1);
  auto nm = OptionInt(main, o, {"num_machines"}, &s2);
  d.nodes = nm ? *nm : 1;
  d.nodes_src = nm ? s2 : Loc(main.file, main.line) + " (no --num_machines)";
  if (np) {
    d.processes = np;
    d.processes_src = s1;
  }
  if (o.count("config_file")) {
    std::string rel_dir = fs::path(main.file).parent_path().generic_string();
    if (auto cf = Resolve(main.cwd, o.at("config_file"), rel_dir); cf && Read(*cf)) {
      ReadAccelerateConfig(*cf, np.has_value(), nm.has_value(), d);
    }
  }
  if (o.count("mixed_precision"))
    Add("precision", json(o.at("mixed_precision")), kCommandLine, 0,
        OptionSource(main, "mixed_precision"), "mixed_precision");
  Vote("accelerate", 2);
}

// The accelerate config file decides processes, machines and precision (the command line's
// --num_processes / --num_machines win).
void Extraction::ReadAccelerateConfig(const std::string& cf, bool processes_given,
                                      bool machines_given, Derived& d) {
  try {
    YAML::Node n = YAML::Load(text_cache_[cf]);
    auto get = [&](const char* k) -> std::optional<std::string> {
      if (n[k] && n[k].IsScalar()) return n[k].Scalar();
      return std::nullopt;
    };
    if (!processes_given) {
      if (auto v = get("num_processes"); v && ParseInt(*v)) {
        d.processes = *ParseInt(*v);
        d.processes_src = Loc(cf, FindLine(cf, 1, "num_processes"));
      }
    }
    if (auto v = get("num_machines"); v && ParseInt(*v) && !machines_given) {
      d.nodes = *ParseInt(*v);
      d.nodes_src = Loc(cf, FindLine(cf, 1, "num_machines"));
    }
    if (auto v = get("mixed_precision")) {
      Add("precision", json(*v), kConfig, 0, Loc(cf, FindLine(cf, 1, "mixed_precision")),
          "mixed_precision");
    }
  } catch (const std::exception& e) {
    meta_.notes.push_back(cf + ": YAML error: " + e.what());
  }
}

// python, llamafactory-cli, swift: one process unless a wrapper starts several.
void Extraction::CountSingleLaunchProcesses(Derived& d) {
  const Launch* main = d.main;
  const std::string where = Loc(main->file, main->line);
  d.nodes = 1;
  d.nodes_src = where + " (single process launch)";
  auto nproc_env = main->env.find("NPROC_PER_NODE");
  if (main->launcher == "torchtune" && main->program.find("single_device") != std::string::npos) {
    d.processes = 1;  // `tune run lora_finetune_single_device ...`: one GPU by design
    d.processes_src = where + " (single-device recipe)";
  } else if (nproc_env != main->env.end() && ParseInt(nproc_env->second)) {
    d.processes = *ParseInt(nproc_env->second);  // swift / llamafactory-cli start torchrun
    d.processes_src = Loc(main->file, FindLine(main->file, main->line, "NPROC_PER_NODE"));
  } else if (main->wrapper_processes) {
    d.processes = main->wrapper_processes;
    d.processes_src = main->wrapper_source;
  } else if (main->wrapper == "srun") {
    // srun starts --ntasks (or --ntasks-per-node x nodes) copies of the program.
    std::optional<int64_t> ntasks, per_node, nn;
    for (const SbatchDirective& s : sbatch_) {
      if (s.option == "--ntasks" || s.option == "-n") ntasks = ParseInt(s.value);
      if (s.option == "--ntasks-per-node") per_node = ParseInt(s.value);
      if (s.option == "--nodes" || s.option == "-N")
        nn = ParseInt(s.value.substr(0, s.value.find('-')));
    }
    if (ntasks)
      d.processes = ntasks;
    else if (per_node)
      d.processes = *per_node * (nn ? *nn : 1);
    if (d.processes) d.processes_src = sbatch_file_ + " (srun tasks)";
    if (nn) {
      d.nodes = nn;
      d.nodes_src = sbatch_file_;
    }
  } else if (main->launcher == "python" && spawned_devices_.value > 0 &&
             votes_.count("lightning")) {
    d.processes = spawned_devices_.value;  // Lightning starts one DDP process per device
    d.processes_src = spawned_devices_.source + " (Lightning: one process per device)";
  } else if (const Candidate* g = Best("num_gpus");
             main->launcher == "python" && votes_.count("detectron2") && g != nullptr &&
             g->level >= kCommandLine && AsNumber(g->value) && *AsNumber(g->value) >= 1) {
    // detectron2's train_net: `--num-gpus N` makes engine/launch.py spawn N processes.
    d.processes = static_cast<int64_t>(*AsNumber(g->value));
    d.processes_src = g->source + " (detectron2 launch: one process per GPU)";
  } else if (main->launcher == "python") {
    d.processes = 1;
    d.processes_src = where + " (plain python: one process)";
  }
}

void Extraction::ReadSlurmRequest(Derived& d) {
  for (const SbatchDirective& s : sbatch_) {
    std::string src = Loc(sbatch_file_, s.line);
    if (s.option == "--nodes" || s.option == "-N") {
      std::string v = s.value.substr(0, s.value.find('-'));
      if (auto n = ParseInt(v)) {
        d.sb_nodes = n;
        if (!d.nodes || d.nodes_src.find("(") != std::string::npos) {
          d.nodes = n;
          d.nodes_src = src;
        }
      }
    }
    if (s.option == "--gres") {
      static const std::regex kGres(R"(gpu(?::[^:,]+)?:(\d+))");
      std::smatch mm;
      if (std::regex_search(s.value, mm, kGres)) {
        d.sb_gpus_per_node = std::stoll(mm[1].str());
        d.sb_src = src;
      }
    }
    if (s.option == "--gpus-per-node") {
      std::string v =
          s.value.substr(s.value.find(':') == std::string::npos ? 0 : s.value.find(':') + 1);
      if (auto n = ParseInt(v)) {
        d.sb_gpus_per_node = n;
        d.sb_src = src;
      }
    }
    if (s.option == "--gpus" || s.option == "-G") {
      std::string v =
          s.value.substr(s.value.find(':') == std::string::npos ? 0 : s.value.find(':') + 1);
      if (auto n = ParseInt(v)) {
        d.sb_gpus_total = n;
        d.sb_src = src;
      }
    }
  }
}

void Extraction::DeriveGpusAndNodes(Derived& d) {
  if (d.per_node_processes) {
    if (!d.nodes) {
      d.nodes = 1;
      d.nodes_src = d.processes_src + " (node count unknown: assumed one)";
    }
    d.processes = *d.per_node_processes * d.nodes.value_or(1);
  }
  if (d.main != nullptr) {
    // GPUs: launcher processes; CUDA_VISIBLE_DEVICES; Slurm request.
    auto cvd = d.main->env.find("CUDA_VISIBLE_DEVICES");
    bool gpu_launcher = (d.main->launcher != "python" && d.main->launcher != "llamafactory-cli" &&
                         d.main->launcher != "swift" && d.main->launcher != "yolo") ||
                        d.main->env.count("NPROC_PER_NODE") ||
                        (d.main->wrapper == "srun" && d.processes && *d.processes > 1);
    if (!device_per_node_src_.empty() && d.sb_gpus_per_node && *d.sb_gpus_per_node > 0) {
      // Each process drives every GPU of its node: the replicas are the node's GPUs.
      const int64_t nodes = d.sb_nodes ? *d.sb_nodes : (d.nodes ? *d.nodes : 1);
      d.gpus = nodes * *d.sb_gpus_per_node;
      d.gpus_src = fmt::format(
          "{} ({} node(s) x {} GPUs; one process drives every GPU of its "
          "node: {})",
          d.sb_src, nodes, *d.sb_gpus_per_node, device_per_node_src_);
      d.processes = d.gpus;  // data-parallel replicas
      d.processes_src = d.gpus_src;
    } else if (d.processes && gpu_launcher) {
      d.gpus = d.processes;
      d.gpus_src = d.processes_src;
    } else if (cvd != d.main->env.end() && CountDevices(cvd->second) > 0) {
      d.gpus = CountDevices(cvd->second);
      d.gpus_src = Loc(d.main->file, FindLine(d.main->file, d.main->line, "CUDA_VISIBLE_DEVICES")) +
                   " (CUDA_VISIBLE_DEVICES lists device indexes)";
      if (!d.processes && (d.main->launcher == "llamafactory-cli" || d.main->launcher == "swift") &&
          *d.gpus == 1) {
        d.processes = 1;
        d.processes_src = d.gpus_src;
      } else if (!d.processes && d.main->launcher == "llamafactory-cli") {
        // `llamafactory-cli train` starts torchrun with one process per visible device when
        // there is more than one (LLaMA-Factory cli.py: nproc_per_node = device count).
        d.processes = d.gpus;
        d.processes_src = d.gpus_src + " (llamafactory-cli: one process per visible device)";
      }
    }
  }
  // One python process that neither spreads itself over devices (DataParallel, mirrored
  // strategies, Lightning/HF Trainer) nor is launched per device uses one GPU of what Slurm
  // allocated.
  const bool spreads = !device_per_node_src_.empty() || spawned_devices_.value > 1 || hf_trainer_ ||
                       votes_.count("lightning") || votes_.count("tensorflow");
  if (!d.gpus && d.main != nullptr && d.main->launcher == "python" && program_found_ &&
      uses_cuda_ && !spreads && d.processes && *d.processes == 1 && d.main->wrapper.empty() &&
      (d.sb_gpus_per_node || d.sb_gpus_total) && !cpu_flag_given_ &&
      !(cuda_flag_defined_ && !cuda_flag_given_)) {
    d.gpus = 1;
    d.gpus_src = fmt::format(
        "derived: one python process that uses CUDA on one device ({} GPUs "
        "requested: {})",
        d.sb_gpus_total ? *d.sb_gpus_total : *d.sb_gpus_per_node * (d.sb_nodes ? *d.sb_nodes : 1),
        d.sb_src);
  }
  if (!d.gpus && (d.sb_gpus_per_node || d.sb_gpus_total)) {
    d.gpus =
        d.sb_gpus_total ? *d.sb_gpus_total : *d.sb_gpus_per_node * (d.sb_nodes ? *d.sb_nodes : 1);
    d.gpus_src = d.sb_src + " (Slurm GPU request)";
  }
  if (!d.nodes && !sbatch_.empty()) {
    d.nodes = 1;
    d.nodes_src = sbatch_file_ + " (Slurm default: one node)";
  }
  // Explicit arguments naming GPU / node counts.
  if (const Candidate* c = Best("num_gpus"); c && !d.gpus) {
    if (auto n = AsNumber(c->value)) {
      d.gpus = static_cast<int64_t>(*n);
      d.gpus_src = c->source;
    }
  }
  if (const Candidate* c = Best("num_nodes"); c && c->level >= kCommandLine) {
    if (auto n = AsNumber(c->value)) {
      d.nodes = static_cast<int64_t>(*n);
      d.nodes_src = c->source;
    }
  }
  if (!d.gpus && d.main != nullptr && d.main->launcher == "python" && program_found_) {
    if ((cuda_flag_defined_ && !cuda_flag_given_) || cpu_flag_given_) {
      d.gpus = 0;
      d.gpus_src = cuda_flag_defined_
                       ? "derived: the program has a --cuda flag that is not passed (CPU run)"
                       : "derived: CPU flag passed";
    } else if (uses_cuda_) {
      d.gpus = 1;
      d.gpus_src = "derived: single-process python program that uses CUDA";
    }
  }
  if (!d.gpus && d.main != nullptr && d.main->launcher == "python" && !program_found_ &&
      !sbatch_.empty() && d.sb_gpus_per_node) {
    d.gpus = *d.sb_gpus_per_node;
  }
  if (!d.gpus && d.main != nullptr && d.main->launcher == "python" && d.processes &&
      *d.processes == 1 && !cpu_flag_given_ && !(cuda_flag_defined_ && !cuda_flag_given_)) {
    d.gpus = 1;
    d.gpus_src = program_found_
                     ? "derived: one python process; no device setting found (assumed one GPU)"
                     : "derived: one python process; its program is not in the sources (assumed "
                       "one GPU)";
  }
  if (!d.gpus && d.main == nullptr && config_only_) {
    d.gpus = 1;
    d.gpus_src =
        "default: no launcher in the sources; the framework's own command runs one "
        "process (assumed one GPU)";
    if (!d.processes) {
      d.processes = 1;
      d.processes_src = d.gpus_src;
    }
    if (!d.nodes) {
      d.nodes = 1;
      d.nodes_src = "default: no launcher in the sources (one node)";
    }
  }
  if (d.gpus) Set("num_gpus", json(*d.gpus), d.gpus_src);
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
  if (d.nodes) Set("num_nodes", json(*d.nodes), d.nodes_src);
}

void Extraction::SetLauncherName(const Derived& d) {
  if (d.main == nullptr) return;
  std::string name = d.main->launcher;
  if (d.main->wrapper == "sbatch" && name == "python")
    name = "sbatch --wrap -> python";
  else if ((d.main->wrapper == "srun" || d.main->wrapper == "mpirun") && name == "python")
    name = d.main->wrapper;
  else if (!d.main->wrapper.empty() && d.main->wrapper != "sbatch" && d.main->wrapper != "srun" &&
           d.main->wrapper != "mpirun")
    name = d.main->wrapper + " -> " + name;  // a site's submit client running the command
  Set("launcher", json(name), Loc(d.main->file, d.main->line));
}

void Extraction::SetDirectFields() {
  // clang-format off
  static const char* kDirect[] = {
      "per_device_batch_size", "global_batch_size", "gradient_accumulation", "sequence_length",
      "image_size", "epochs", "max_steps", "learning_rate", "optimizer", "dataset", "model"};
  // clang-format on
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
    Set(field, v, c->source);
  }
  if (!backbone_type_.value.empty()) {
    const Candidate* c = Best("model");
    bool generic = c == nullptr || c->key == "model.type" || c->rank >= 3;
    if (generic) {
      std::string name = backbone_type_.value;
      auto depth = shape_.find("backbone_depth");
      if (depth != shape_.end() && depth->second.value > 0)
        name += std::to_string(depth->second.value);
      Set("model", json(name), backbone_type_.source);
    }
  }
}

void Extraction::DeriveBatchSizes(Derived& d) {
  JobMetadata& m = meta_;
  std::optional<int64_t> dp = d.processes;
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
    if (ga.is_number_integer() && d.processes && *d.processes > 0 &&
        ga.get<int64_t>() % *d.processes == 0) {
      int64_t per = ga.get<int64_t>() / *d.processes;
      Set("gradient_accumulation", json(per),
          fmt::format("derived: {} ({}) / {} processes, as {} divides by the world size",
                      ga.get<int64_t>(), m.sources["gradient_accumulation"], *d.processes,
                      it->second));
    }
  }
  d.training_job = d.main != nullptr || config_only_ || m.Has("per_device_batch_size");
  // Only a global batch (detectron2 IMS_PER_BATCH, DeepSpeed train_batch_size): the per-device
  // batch is its share of each data-parallel process (after accumulation).
  if (!m.Has("per_device_batch_size") && m.Has("global_batch_size") &&
      m.values["global_batch_size"].is_number_integer() && dp && *dp > 0) {
    const int64_t g = m.values["global_batch_size"].get<int64_t>();
    const int64_t ga =
        m.Has("gradient_accumulation") && m.values["gradient_accumulation"].is_number_integer()
            ? m.values["gradient_accumulation"].get<int64_t>()
            : 1;
    if (ga > 0 && g > 0 && g % (ga * *dp) == 0) {
      Set("per_device_batch_size", json(g / (ga * *dp)),
          fmt::format("derived: global {} ({}) / (accumulation {} x data-parallel {})", g,
                      m.sources["global_batch_size"], ga, *dp));
    }
  }
  if (!m.Has("gradient_accumulation") && m.Has("per_device_batch_size") && d.training_job) {
    if (m.Has("global_batch_size") && m.values["per_device_batch_size"].is_number() &&
        m.values["global_batch_size"].is_number() && dp) {
      int64_t g = m.values["global_batch_size"].get<int64_t>();
      int64_t p = m.values["per_device_batch_size"].get<int64_t>();
      if (p > 0 && *dp > 0 && g % (p * *dp) == 0) {
        Set("gradient_accumulation", json(g / (p * *dp)),
            fmt::format("derived: global {} / (micro {} x data-parallel {})", g, p, *dp));
      }
    }
    if (!m.Has("gradient_accumulation"))
      Set("gradient_accumulation", json(1), "default: no gradient accumulation configured");
  }
  if (!m.Has("global_batch_size") && m.Has("per_device_batch_size") &&
      m.values["per_device_batch_size"].is_number_integer()) {
    int64_t p = m.values["per_device_batch_size"].get<int64_t>();
    int64_t ga =
        m.Has("gradient_accumulation") && m.values["gradient_accumulation"].is_number_integer()
            ? m.values["gradient_accumulation"].get<int64_t>()
            : 1;
    if (dp) {
      Set("global_batch_size", json(p * ga * *dp),
          fmt::format("derived: per-device {} x accumulation {} x {} processes{}", p, ga,
                      *d.processes, dp_note));
    } else if (d.training_job) {
      Set("global_batch_size",
          json(fmt::format("derived: {} x num_processes (process count not in the sources)",
                           p * ga)),
          "derived: per-device x accumulation x unknown process count");
    }
  }
}

void Extraction::DerivePrecision() {
  if (const Candidate* c = Best("precision")) {
    Set("precision", json(NormalisePrecision(c->value)), c->source);
  }
}

void Extraction::DeriveFramework(Derived& d) {
  for (const std::string& p : program_names_) {
    std::string l = ToLower(p);
    const std::string stem = EndsWith(l, ".py") ? l.substr(0, l.size() - 3) : l;
    const bool hf_example =
        std::any_of(knowledge_.hf_example_programs.begin(), knowledge_.hf_example_programs.end(),
                    [&](const std::string& e) { return stem == e || StartsWith(stem, e + "_"); });
    if (hf_example) {  // run_glue.py, run_clm_no_trainer.py, run_qa_beam_search.py
      Vote("hf-transformers", 3);
      hf_trainer_ = true;  // the transformers examples (run_clm.py, run_glue.py...) use Trainer
    }
    if (l.find("text_to_image") != std::string::npos || l.find("dreambooth") != std::string::npos)
      Vote("diffusers", 3);
    if (StartsWith(l, "pretrain_gpt") || StartsWith(l, "pretrain_bert") ||
        StartsWith(l, "pretrain_t5"))
      Vote("megatron", 3);
  }
  if (hf_trainer_) Vote("hf-transformers", 2);
  int best = 0;
  for (const std::string& f : knowledge_.frameworks) {
    auto it = votes_.find(f);
    if (it != votes_.end() && it->second > best) {
      best = it->second;
      d.framework = f;
    }
  }
  if (d.framework.empty() &&
      (votes_.count("pytorch") || votes_.count("deepspeed") || votes_.count("accelerate") ||
       (d.main != nullptr && d.main->launcher != "python"))) {
    d.framework = "pytorch";
  }
  if (!d.framework.empty()) {
    std::string extra;
    if (votes_.count("deepspeed") && d.framework != "deepspeed" && d.framework != "pytorch")
      extra = " + deepspeed";
    else if (votes_.count("deepspeed") && d.framework == "pytorch")
      d.framework = "pytorch + deepspeed";
    if (votes_.count("accelerate") && votes_["accelerate"] >= 2 && d.framework != "pytorch")
      extra += " + accelerate";
    Set("framework", json(d.framework + extra),
        "derived: imports, launcher and argument vocabulary");
  }
}

void Extraction::ScoreConfidence() {
  JobMetadata& m = meta_;
  auto level_score = [](int level) {
    switch (level) {
      case kInCode:
      case kCommandLine:
        return 0.95;
      case kConfig:
        return 0.9;
      case kScriptDefault:
        return 0.8;
      default:
        return 0.6;
    }
  };
  for (const auto& [field, value] : m.values) {
    const std::string& src = m.sources[field];
    double c = 0.85;  // read from the launch itself (launcher options, environment)
    const std::string text = value.is_string() ? ToLower(value.get<std::string>()) : "";
    if (StartsWith(text, "derived:") || StartsWith(text, "dynamic") ||
        text.find("placeholder") != std::string::npos) {
      c = 0.3;  // a value the sources leave open
    } else if (StartsWith(src, "default:")) {
      c = 0.55;
    } else if (src.find("assumed") != std::string::npos) {
      c = 0.5;
    } else if (StartsWith(src, "derived")) {
      c = 0.85;  // arithmetic or a rule over values read from the sources
    } else if (auto it = cands_.find(field); it != cands_.end()) {
      // The candidate that won: its level, less when another at that level disagrees.
      const Candidate* won = nullptr;
      for (const Candidate& cand : it->second) {
        if (cand.source == src && (won == nullptr || cand.seq > won->seq)) won = &cand;
      }
      if (won != nullptr) {
        c = level_score(won->level);
        for (const Candidate& other : it->second) {
          if (other.level == won->level && other.value != won->value) {
            c *= 0.85;
            break;
          }
        }
      }
    }
    if (src.find("(") != std::string::npos && !StartsWith(src, "derived") &&
        !StartsWith(src, "default"))
      c = std::min(c, 0.85);  // qualified: read through a rule ("single process launch")
    m.confidence[field] = std::round(c * 1000.0) / 1000.0;
  }
}

void Extraction::ApplyWorldScaling(const Derived& d) {
  JobMetadata& m = meta_;
  auto it = world_multiplies_.find("learning_rate");
  if (it == world_multiplies_.end() || !d.processes || *d.processes <= 1) return;
  std::optional<double> lr = m.Number("learning_rate");
  if (!lr) return;
  Set("learning_rate", json(*lr * static_cast<double>(*d.processes)),
      fmt::format("derived: {} x {} replicas ({}; {})", m.sources["learning_rate"], *d.processes,
                  it->second, d.processes_src));
}

void Extraction::ApplyFrameworkKeys(const Derived& d) {
  JobMetadata& m = meta_;
  if (d.framework.empty()) return;
  // framework_keys: the best candidate per field (level, then rank, then the later one).
  std::map<std::string, const FrameworkCandidate*> best;
  for (const FrameworkCandidate& c : framework_cands_) {
    if (!StartsWith(d.framework, c.framework) || m.Has(c.field)) continue;
    const FrameworkCandidate*& b = best[c.field];
    if (b == nullptr || c.level > b->level || (c.level == b->level && c.rank <= b->rank)) b = &c;
  }
  for (const auto& [field, c] : best) Set(field, c->value, c->source);
  // An RL zoo job's policy network, when the job names none.
  if (StartsWith(d.framework, "stable-baselines3") && !m.Has("model") && m.Has("dataset")) {
    const std::string env = ValueText(m.values["dataset"]);
    for (const RlPolicy& p : knowledge_.rl_policies) {
      if (env.find(p.pattern) == std::string::npos) continue;
      Set("model", json(p.policy), "default: " + p.why + " for " + env);
      break;
    }
  }
  // Frameworks that round the image size up to the network stride.
  if (auto mult = knowledge_.image_size_multiples.find(d.framework);
      mult != knowledge_.image_size_multiples.end() && mult->second > 0) {
    if (auto px = m.Count("image_size", 1'000'000); px && *px % mult->second != 0) {
      const int64_t up = (*px + mult->second - 1) / mult->second * mult->second;
      Set("image_size", json(up),
          fmt::format("derived: {} from {} rounded up to a multiple of {} ({})", up, *px,
                      mult->second, m.sources["image_size"]));
    }
  }
}

void Extraction::ApplyLibraryDefaults(const Derived& d) {
  JobMetadata& m = meta_;
  // config/extractor_knowledge.yaml `library_defaults`, in order: an earlier default wins.
  for (const LibraryDefault& ld : knowledge_.library_defaults) {
    bool match = ld.framework.empty()
                     ? std::any_of(ld.framework_prefix.begin(), ld.framework_prefix.end(),
                                   [&](const std::string& p) { return StartsWith(d.framework, p); })
                     : d.framework == ld.framework;
    if (!match || m.Has(ld.field)) continue;
    if (ld.condition == "hf_trainer" && !hf_trainer_) continue;
    if (ld.condition == "torchtune_packaged_config" && !torchtune_packaged_config_) continue;
    Set(ld.field, ld.value, "default: " + ld.why);
  }
  if (!m.Has("precision") && (d.training_job) && !d.framework.empty()) {
    m.values["precision"] = "fp32";
    m.sources["precision"] = "default: no mixed-precision setting found";
  }
}

void Extraction::DeriveImageSize() {
  JobMetadata& m = meta_;
  if (!m.Has("image_size") && m.Has("dataset") && m.values["dataset"].is_string()) {
    std::string d = ToLower(m.values["dataset"].get<std::string>());
    std::string dn;
    for (char c : d) {
      if (c != '-' && c != ' ') dn.push_back(c == '-' ? '_' : c);
    }
    for (const auto& [name, size] : knowledge_.dataset_image_sizes) {
      if (dn.find(name) != std::string::npos) {
        Set("image_size", json(size),
            "derived: " + name + " images are " + std::to_string(size) + "x" +
                std::to_string(size));
        break;
      }
    }
  }
}

void Extraction::DeriveModelFamilyAndParams(Derived& d) {
  JobMetadata& m = meta_;
  d.model = m.Has("model") ? ValueText(m.values["model"]) : "";
  d.family = FamilyOf(d.model);
  std::string family_src = m.Has("model") ? m.sources["model"] : "";
  if (d.family.empty() && !layer_family_.empty()) {
    d.family = layer_family_;
    family_src = "derived: the network is built from " + layer_family_ + " layers (" +
                 layer_family_src_ + ")";
  }
  if (d.family.empty()) {
    for (const std::string& p : program_names_) {
      std::string f = FamilyOf(p.substr(0, p.find('.')));
      if (!f.empty() && f != "transformer") {
        d.family = f;
        family_src = "derived: program name " + p;
        break;
      }
    }
  }
  if (!d.family.empty())
    Set("model_family", json(d.family),
        family_src.empty()                  ? "derived"
        : StartsWith(family_src, "derived") ? family_src
                                            : "derived from " + family_src);
  if (!d.model.empty()) {
    if (auto p = ParamsFromName(d.model)) Set("params", json(*p), "derived: model name " + d.model);
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
      Set("params", json(fmt::format("~{:.0f}M (derived)", p / 1e6)),
          fmt::format("derived: 12 x {} layers ({}) x {}^2 ({}) + vocab {} x width", layers->value,
                      layers->source, width->value, width->source,
                      vocab ? std::to_string(vocab->value) : "50257 (GPT-2, assumed)"));
    }
  }
}

void Extraction::DeriveTask(const Derived& d) {
  JobMetadata& m = meta_;
  std::string task;
  std::string fam = d.family;
  static const std::set<std::string> kLlm = {"llama",    "mistral",  "mixtral", "qwen",   "minicpm",
                                             "glm",      "baichuan", "gemma",   "falcon", "bloom",
                                             "gpt-neox", "gpt-j",    "gpt"};
  bool lora = false;
  for (const Launch& l : launches_) {
    for (const std::string& a : l.args) lora |= IContains(a, "lora");
  }
  if (d.framework == "ultralytics" || fam == "rcnn" || fam == "retinanet" || fam == "detr" ||
      fam == "yolo") {
    task = "object detection";
  } else if (fam == "diffusion" || fam == "unet" ||
             d.framework.find("diffusers") != std::string::npos) {
    task = "diffusion fine-tuning";
  } else if (kLlm.count(fam)) {
    bool pretrain =
        d.framework == "megatron" ||
        std::any_of(program_names_.begin(), program_names_.end(),
                    [](const std::string& p) { return IContains(p, "pretrain"); }) ||
        (m.Has("max_steps") && !m.Has("epochs") && d.model.find('/') == std::string::npos);
    task = pretrain ? "causal-lm pretraining" : (lora ? "lm fine-tuning (LoRA)" : "lm fine-tuning");
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
  if (!task.empty()) Set("task", json(task), "derived: model family and framework");
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace schedmate::advisor::internal
