#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "advisor/extraction.h"
#include "advisor/python_scanner.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

void Extraction::ProcessProgram(const std::string& rel, bool is_entry_python) {
  auto text = Read(rel);
  if (!text) return;
  program_found_ = true;
  PyFacts f = ScanPython(*text);
  if (text->find("cuda") != std::string::npos) uses_cuda_ = true;
  VoteImports(f);
  ReadArgparseDefaults(rel, f);
  ReadAssignments(rel, f);
  ReadCalls(rel, f);
  ReadEntryFunction(rel, f);
  ReadModelConstructor(rel, f);
  // Names imported from local modules that name a model (from model import GPT).
  (void)is_entry_python;
}

// Imported modules vote for a framework.
void Extraction::VoteImports(const PyFacts& f) {
  for (const auto& [mod, line] : f.imports) {
    std::string top = mod.substr(0, mod.find('.'));
    auto it = knowledge_.import_votes.find(top);
    if (it != knowledge_.import_votes.end()) Vote(it->second.first, it->second.second);
  }
}

void Extraction::ReadArgparseDefaults(const std::string& rel, const PyFacts& f) {
  // argparse defaults and dataclass fields: script defaults.
  auto is_option_call = [&](const std::string& callee) {
    return std::any_of(knowledge_.option_calls.begin(), knowledge_.option_calls.end(),
                       [&](const std::string& o) {
                         return callee == o || EndsWith(callee, "." + o) ||
                                (o.find('.') == std::string::npos && EndsWith(callee, o));
                       });
  };
  for (const PyCall& c : f.calls) {
    if (!is_option_call(c.callee)) continue;
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
}

void Extraction::ReadAssignments(const std::string& rel, const PyFacts& f) {
  // Module-level globals (nanoGPT-style configuration).
  for (const PyAssignment& a : f.assignments) {
    if (a.indent != 0 || a.op != "=" || a.target.find('.') != std::string::npos) continue;
    std::string src = Loc(rel, a.line);
    if (a.value.literal) {
      AddKey({a.target}, *a.value.literal, kScriptDefault, src);
    } else if (knowledge_.keys.count(NormKey(a.target)) &&
               knowledge_.keys.at(NormKey(a.target)).first == "precision") {
      Add("precision", json("dynamic: " + a.value.text), kScriptDefault, 3, src, a.target);
    }
  }
  // In-code overrides after parsing, and world-size divisions.
  for (const PyAssignment& a : f.assignments) {
    std::string src = Loc(rel, a.line);
    size_t dot = a.target.find('.');
    if (dot != std::string::npos && a.op == "=" && a.value.literal &&
        knowledge_.argument_objects.count(a.target.substr(0, dot)) &&
        a.target.find('.', dot + 1) == std::string::npos) {
      AddKey({a.target.substr(dot + 1)}, *a.value.literal, kInCode, src);
    }
    std::string rhs = ToLower(a.value.text);
    bool world = std::any_of(
        knowledge_.world_size_names.begin(), knowledge_.world_size_names.end(),
        [&](const std::string& n) { return rhs.find(ToLower(n)) != std::string::npos; });
    std::string name = dot == std::string::npos ? a.target : a.target.substr(dot + 1);
    auto kt = knowledge_.keys.find(NormKey(name));
    if (world && kt != knowledge_.keys.end() &&
        (a.op == "//=" || a.op == "/=" || (a.op == "=" && rhs.find("//") != std::string::npos))) {
      world_divides_[kt->second.first] = src;
    }
    // `lr = args.lr * strategy.num_replicas_in_sync`: the program trains with the argument
    // scaled by the replica count (a linear-scaling rule), read from the same key.
    if (world && kt != knowledge_.keys.end() && a.op == "=" &&
        a.value.text.find('*') != std::string::npos && rhs.find("//") == std::string::npos) {
      static const std::regex kArgRef(
          R"((?:^|[^\w.])(?:args|opt|opts|cfg|config|flags|hparams)\.(\w+))");
      std::smatch m;
      if (std::regex_search(a.value.text, m, kArgRef)) {
        auto src_key = knowledge_.keys.find(NormKey(m[1].str()));
        if (src_key != knowledge_.keys.end() && src_key->second.first == kt->second.first)
          world_multiplies_[kt->second.first] = src;
      }
    }
  }
}

void Extraction::ReadCalls(const std::string& rel, const PyFacts& f) {
  // Calls that set training parameters in code, models, datasets, optimizers, Hydra configs.
  for (const PyCall& c : f.calls) {
    std::string src = Loc(rel, c.line);
    std::string last = c.callee.substr(
        c.callee.find_last_of('.') == std::string::npos ? 0 : c.callee.find_last_of('.') + 1);
    if (knowledge_.train_calls.count(last) && !c.kwargs.empty()) {
      for (const auto& [k, v] : c.kwargs) {
        if (!v.literal) continue;
        int line = FindLine(rel, c.line, k + "=");
        AddKey({k}, *v.literal, kInCode, Loc(rel, line));
      }
    }
    if (knowledge_.hf_trainer_calls.count(last)) hf_trainer_ = true;
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
    if (last == "load_dataset" || last == "load_from_disk" || c.callee == "tfds.load" ||
        c.callee == "tensorflow_datasets.load") {
      // The dataset: the first positional argument, or its keyword (tfds.load(name=...),
      // datasets.load_dataset(path=...)).
      const PyValue* name = !c.args.empty() ? &c.args[0] : nullptr;
      if (name == nullptr) name = c.Kwarg("name");
      if (name == nullptr) name = c.Kwarg("path");
      if (name != nullptr && name->literal && name->literal->is_string())
        Add("dataset", *name->literal, kScriptDefault, 2, src, last);
    }
    // One process driving every GPU of its node (tf.distribute mirrored strategies, DataParallel).
    for (const std::string& n : knowledge_.device_per_node_calls) {
      if (last == n && device_per_node_src_.empty()) device_per_node_src_ = src;
    }
    // A network built from layers in code: the family of its most telling layer.
    for (size_t k = 0; k < knowledge_.layer_families.size(); ++k) {
      const auto& [layer, family] = knowledge_.layer_families[k];
      if (last != layer) continue;
      size_t current = knowledge_.layer_families.size();
      for (size_t q = 0; q < knowledge_.layer_families.size(); ++q) {
        if (knowledge_.layer_families[q].second == layer_family_) current = std::min(current, q);
      }
      if (layer_family_.empty() || k < current) {
        layer_family_ = family;
        layer_family_src_ = src;
      }
    }
    // Keras input_shape=(H, W, C): the image side.
    if (const PyValue* shape = c.Kwarg("input_shape");
        shape != nullptr && shape->literal && shape->literal->is_array() &&
        shape->literal->size() == 3 && (*shape->literal)[0].is_number_integer() &&
        (*shape->literal)[0] == (*shape->literal)[1]) {
      Add("image_size", (*shape->literal)[0], kScriptDefault, 4, src, "input_shape");
    }
    // Library datasets: torchvision.datasets.CIFAR10(...), keras.datasets.cifar10.load_data().
    if (size_t at = c.callee.find("datasets.");
        at != std::string::npos && (at == 0 || c.callee[at - 1] == '.')) {
      std::vector<std::string> parts = SplitPath(c.callee.substr(at + 9));
      if (!parts.empty() && parts.back() == "load_data") parts.pop_back();
      if (parts.size() == 1 && !parts[0].empty() &&
          !knowledge_.generic_dataset_classes.count(parts[0])) {
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
        if (auto t = Read(p.generic_string())) {
          hydra_primary_loaded_ = true;
          LoadConfig(p.generic_string(), kConfig, 0);
        }
      }
    }
  }
}

void Extraction::ReadEntryFunction(const std::string& rel, const PyFacts& f) {
  // The functions the program runs as its command line: fire.Fire(fn) / typer.run(fn), or a
  // function under a command decorator (@app.command()).
  std::set<std::string> entries;
  std::set<int> decorator_lines;
  for (const PyCall& c : f.calls) {
    const std::string last = c.callee.substr(
        c.callee.find_last_of('.') == std::string::npos ? 0 : c.callee.find_last_of('.') + 1);
    if (std::find(knowledge_.entry_function_calls.begin(), knowledge_.entry_function_calls.end(),
                  c.callee) != knowledge_.entry_function_calls.end() &&
        !c.args.empty() && !c.args[0].literal) {
      entries.insert(c.args[0].text);
    }
    if (std::find(knowledge_.command_decorators.begin(), knowledge_.command_decorators.end(),
                  last) != knowledge_.command_decorators.end())
      decorator_lines.insert(c.line);
  }
  for (const PyFunction& fn : f.functions) {
    bool decorated = false;
    for (int l = fn.line - 1; l >= fn.line - 12 && l > 0 && !decorated; --l)
      decorated = decorator_lines.count(l) > 0;
    if (!entries.count(fn.name) && !decorated) continue;
    for (const PyParam& prm : fn.params) {
      if (!prm.value || !prm.value->literal || prm.value->literal->is_null()) continue;
      const std::string key = NormKey(prm.name);
      const std::string src = Loc(rel, prm.line);
      if ((key == "fp16" || key == "bf16" || key == "amp" || key == "use_amp") &&
          prm.value->literal->is_boolean()) {
        if (IsTruthy(*prm.value->literal)) Add("precision", json(key), kScriptDefault, 1, src, key);
        continue;
      }
      AddKey({prm.name}, *prm.value->literal, kScriptDefault, src);
    }
  }
}

void Extraction::ReadModelConstructor(const std::string& rel, const PyFacts& f) {
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
}

}  // namespace schedmate::advisor::internal
