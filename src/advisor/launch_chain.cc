#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "advisor/extraction.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

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

bool IsConfigPath(const std::string& p) {
  return EndsWith(p, ".yaml") || EndsWith(p, ".yml") || EndsWith(p, ".json") || EndsWith(p, ".py");
}

}  // namespace

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

void Extraction::ProcessShell(const std::string& rel, const std::string& text,
                              const ShellContext& ctx, const std::string& wrapper, int depth) {
  std::string cwd = fs::path(rel).parent_path().generic_string();
  ShellContext sc = ctx;
  sc.script_path = rel;
  sc.script_dir = cwd.empty() ? "." : cwd;
  // `. FILE` / `source FILE`: a file of the job, read like any other (inside the job directory).
  sc.source = [this,
               cwd](const std::string& f) -> std::optional<std::pair<std::string, std::string>> {
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
  ShellCall call{rel, cmd, {}, 0, cmd.env, wrapper, depth, vars};
  std::vector<std::string>& w = call.w;
  size_t& i = call.i;
  std::map<std::string, std::string>& env = call.env;
  for (const ShellWord& x : cmd.words) w.push_back(x.text);
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
  const std::string b = Basename(w[i]);

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
    ProcessSbatchCommand(call, cwd);
    return;
  }
  if (b == "srun" || b == "mpirun" || b == "mpiexec") {
    ProcessSrunOrMpirun(call, cwd);
    return;
  }
  if (b == "bash" || b == "sh" || b == "source" || b == "." || b == "zsh" ||
      (EndsWith(b, ".sh") && !LooksLikeOption(b))) {
    ProcessScriptCall(call, cwd);
    return;
  }
  const size_t before = launches_.size();
  ProcessLauncherCommand(call, cwd);
  if (launches_.size() == before) ProcessQuotedCommand(call, cwd);
}

bool Extraction::ProcessQuotedCommand(const ShellCall& call, std::string& cwd) {
  const std::vector<std::string>& w = call.w;
  const std::string tool = Basename(w[call.i]);
  bool ran = false;
  for (size_t k = call.i + 1; k < w.size(); ++k) {
    if (w[k].find_first_of(" \t\n") == std::string::npos || call.cmd.words[k].unknown) continue;
    ShellContext ctx;
    ctx.variables = call.vars;
    ShellScript inner = ParseShell(w[k], ctx);
    // Only a command line that starts a program this extractor reads.
    bool launches = false;
    for (const ShellCommand& c : inner.commands) {
      if (c.words.empty()) continue;
      const std::string b = Basename(c.words[0].text);
      launches |= IsPythonProgram(b) || EndsWith(b, ".py") || EndsWith(b, ".sh") ||
                  b == "torchrun" || b == "deepspeed" || b == "accelerate" || b == "srun" ||
                  b == "llamafactory-cli";
    }
    if (!launches) continue;
    // The quoted text starts on the line where the word does.
    const int at = FindLine(call.rel, call.cmd.line, w[k].substr(0, w[k].find_first_of(" \t\n")));
    for (ShellCommand c : inner.commands) {
      c.line = at + c.line - 1;
      ProcessCommand(call.rel, c, cwd, tool, call.depth + 1, call.vars);
    }
    ran = true;
  }
  return ran;
}

// `sbatch [options] script args` or `sbatch --wrap "command"`: the options are Slurm's request.
void Extraction::ProcessSbatchCommand(const ShellCall& call, std::string& cwd) {
  const std::vector<std::string>& w = call.w;
  const size_t i = call.i;
  std::vector<std::string> opts_words = call.Rest(i + 1);
  std::vector<SbatchDirective> ds = ParseSbatchOptions(opts_words, call.cmd.line);
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
  AddSbatch(kept, call.rel);
  if (!wrap.empty()) {
    ShellContext ctx;
    ctx.variables = call.vars;
    ShellScript inner = ParseShell(wrap, ctx);
    for (ShellCommand wrapped : inner.commands) {
      wrapped.line = call.cmd.line + FindLine(call.rel, call.cmd.line, "--wrap") - call.cmd.line;
      ProcessCommand(call.rel, wrapped, cwd, "sbatch", call.depth + 1, call.vars);
    }
    return;
  }
  if (k < w.size()) {
    if (auto script = Resolve(cwd, w[k], fs::path(call.rel).parent_path().generic_string())) {
      if (visited_scripts_.insert(*script).second) {
        if (auto text = Read(*script)) {
          ShellContext ctx;
          ctx.positional = call.Rest(k + 1);
          ctx.variables = call.vars;
          ProcessShell(*script, *text, ctx, "", call.depth + 1);
        }
      }
    }
  }
  return;
}

// srun / mpirun / mpiexec: the process count, then the command they start.
void Extraction::ProcessSrunOrMpirun(const ShellCall& call, std::string& cwd) {
  const std::vector<std::string>& w = call.w;
  const size_t i = call.i;
  const std::string b = Basename(w[i]);
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
    AddSbatch(ParseSbatchOptions(sw, call.cmd.line), call.rel);
  }
  ShellCommand inner;
  inner.env = call.env;
  inner.line = call.cmd.line;
  for (size_t x = k; x < w.size(); ++x) inner.words.push_back({w[x], false});
  size_t before = launches_.size();
  ProcessCommand(call.rel, inner, cwd, b == "mpiexec" ? "mpirun" : b, call.depth + 1, call.vars);
  for (size_t x = before; x < launches_.size(); ++x) {
    if (procs) {
      launches_[x].wrapper_processes = procs;
      launches_[x].wrapper_source = Loc(call.rel, call.cmd.line);
    }
  }
  return;
}

// `bash script.sh args`, `source x.sh`, `./x.sh`: read the script with its positional arguments.
void Extraction::ProcessScriptCall(const ShellCall& call, std::string& cwd) {
  const std::vector<std::string>& w = call.w;
  const size_t i = call.i;
  const std::string b = Basename(w[i]);
  size_t k = EndsWith(b, ".sh") ? i : i + 1;
  while (k < w.size() && LooksLikeOption(w[k])) ++k;
  if (k >= w.size()) return;
  std::optional<std::string> script;
  bool unknown = call.cmd.words[k].unknown || w[k].empty();
  const std::string rel_dir = fs::path(call.rel).parent_path().generic_string();
  if (!unknown) script = Resolve(cwd, w[k], rel_dir);
  if (!script && !unknown && EndsWith(w[k], ".sh") && Basename(w[k]) != Basename(call.rel)) {
    // Scripts are often copied without their folder (`bash examples/x.sh` kept beside the
    // caller) or run from the repository's folder rather than their own: the same file name in
    // the calling script's directory, then in each directory above it.
    for (fs::path up = rel_dir; !script; up = up.parent_path()) {
      script = Resolve(up.generic_string(), Basename(w[k]), up.generic_string());
      if (up.empty()) break;
    }
    if (script && !visited_scripts_.count(*script)) {
      meta_.notes.push_back(
          fmt::format("{}:{}: {} is not in the sources; read {} (same name, "
                      "nearest to the calling script)",
                      call.rel, call.cmd.line, w[k], *script));
    }
  }
  if (!script && unknown) {
    script = GuessDelegate(call.rel);
    if (script) {
      meta_.notes.push_back(
          fmt::format("{}:{}: '{}' runs a script given at submission; "
                      "assumed {} (the only launch script in the sources)",
                      call.rel, call.cmd.line, fmt::join(call.Rest(i), " "), *script));
    }
  }
  if (!script && !unknown && Basename(w[k]) == "dist_train.sh" && k + 2 < w.size() &&
      ParseInt(w[k + 2])) {
    // OpenMMLab's `tools/dist_train.sh CONFIG GPUS [ARGS]` (torchrun tools/train.py CONFIG
    // --launcher pytorch ARGS on GPUS processes), not in the sources: read it as that.
    Launch l = NewLaunch(call.rel, call.cmd, cwd, call.wrapper, call.env, call.vars);
    l.launcher = "torchrun";
    l.opts.emplace_back("nproc_per_node", w[k + 2]);
    l.program = (fs::path(w[k]).parent_path() / "train.py").generic_string();
    l.args.push_back(w[k + 1]);
    for (size_t a = k + 3; a < w.size(); ++a) l.args.push_back(w[a]);
    meta_.notes.push_back(fmt::format(
        "{}:{}: {} is not in the sources; read as OpenMMLab's (torchrun {} {} on {} GPUs)",
        call.rel, call.cmd.line, w[k], l.program, w[k + 1], w[k + 2]));
    Vote("mmdetection", 3);
    launches_.push_back(std::move(l));
    return;
  }
  if (!script || !visited_scripts_.insert(*script).second) return;
  if (auto text = Read(*script)) {
    ShellContext ctx;
    ctx.positional = call.Rest(k + 1);
    ctx.variables = call.vars;
    for (const auto& [ek, ev] : call.env) ctx.variables[ek] = ev;
    ProcessShell(*script, *text, ctx, call.wrapper, call.depth + 1);
  }
  return;
}

// A launcher (torchrun, deepspeed, accelerate launch, llamafactory-cli, fairseq-train, tune run,
// yolo, swift, python [-m]) and the program it starts; anything else is not a launch.
void Extraction::ProcessLauncherCommand(const ShellCall& call, std::string& cwd) {
  const std::vector<std::string>& w = call.w;
  const size_t i = call.i;
  const std::string prog = w[i];
  const std::string b = Basename(prog);
  Launch l = NewLaunch(call.rel, call.cmd, cwd, call.wrapper, call.env, call.vars);
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
    AddLlamaFactoryLaunch(std::move(l), w, k, call.rel, call.cmd.line);
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
        Add("dataset", json(data), kCommandLine, 2,
            Loc(call.rel, FindLine(call.rel, call.cmd.line, l.args[0])), "data");
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
          Loc(call.rel, FindLine(call.rel, call.cmd.line, cfg)), "config");
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

// `llamafactory-cli train [CONFIG] [ARGS]`.
void Extraction::AddLlamaFactoryLaunch(Launch l, const std::vector<std::string>& w, size_t k,
                                       const std::string& rel, int line) {
  l.launcher = "llamafactory-cli";
  if (k < w.size() && !LooksLikeOption(w[k])) ++k;  // subcommand: train
  l.program = "llamafactory-cli";
  bool config_first = false;
  if (k < w.size() &&
      (EndsWith(w[k], ".yaml") || EndsWith(w[k], ".yml") || EndsWith(w[k], ".json"))) {
    l.args.push_back(w[k++]);
    config_first = true;
  }
  // After a config file, LLaMA-Factory's read_args merges OmegaConf.from_cli(argv[2:]): only
  // `key=value` words override it; `--key value` options are not applied.
  std::vector<std::string> ignored;
  for (; k < w.size(); ++k) {
    if (config_first && LooksLikeOption(w[k])) {
      ignored.push_back(w[k]);
      if (w[k].find('=') == std::string::npos && k + 1 < w.size() && !LooksLikeOption(w[k + 1]))
        ignored.push_back(w[++k]);
      continue;
    }
    l.args.push_back(w[k]);
  }
  if (!ignored.empty()) {
    meta_.notes.push_back(fmt::format(
        "{}:{}: after a config file llamafactory-cli takes overrides as key=value; not applied: "
        "{}",
        rel, line, fmt::join(ignored, " ")));
  }
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
        // nargs: an option followed by several numbers takes them all (`--input-size 3 224 224`).
        auto is_num = [](const std::string& x) { return ParseDouble(x).has_value(); };
        size_t e = i + 1;
        while (e < args.size() && is_num(args[e])) ++e;
        if (e - (i + 1) >= 2) {
          json list = json::array();
          for (size_t q = i + 1; q < e; ++q) list.push_back(TypedValue(args[q]));
          out.push_back({NormKey(a), std::move(list), false, a});
          i = e - 1;
          continue;
        }
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
  if (l.module) {  // `python -m PACKAGE.module`: the package names its framework
    const std::string top = l.program.substr(0, l.program.find('.'));
    if (auto v = knowledge_.import_votes.find(top); v != knowledge_.import_votes.end())
      Vote(v->second.first, v->second.second);
  }
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
  if (!hydra_primary_loaded_ && !hydra_choices_.empty()) LoadHydraChoicesWithoutPrimary(l);
  // Short options and aliases name the argparse destination (-b -> batch_size, -a -> arch); a
  // program that is not in the sources is read by the common convention (short_options).
  for (ArgItem& it : items) {
    auto a = arg_alias_.find(it.key);
    if (a != arg_alias_.end()) {
      it.key = a->second;
    } else if (auto c = knowledge_.short_options.find(it.key);
               !program && c != knowledge_.short_options.end()) {
      it.key = c->second;
    }
  }
  // A program that is not in the sources: its first positional path that is not a config is,
  // by the usual `train.py DATA_DIR` convention, the data it reads.
  if (!program && (EndsWith(l.program, ".py") || l.module)) {
    for (const std::string& p : positionals) {
      if (IsConfigPath(p) || p.find('/') == std::string::npos) continue;
      Add("dataset", json(p), kCommandLine, 6, Loc(l.file, FindLine(l.file, l.line, p)),
          "positional path");
      break;
    }
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
    // A model's architecture config (transformers --config_name, --model_config_path): it names
    // the model and its shape, never the training settings (its torch_dtype is how the weights
    // were saved).
    const bool model_config =
        it.value.is_string() && IsConfigPath(it.value.get<std::string>()) &&
        (it.key == "config_name" ||
         (it.key.find("model") != std::string::npos && it.key.find("config") != std::string::npos));
    if (model_config) {
      if (auto c = Resolve(l.cwd, it.value.get<std::string>(), rel_dir)) LoadModelConfig(*c);
      continue;
    }
    // Other `--*_config_path` / `--*_config_file` / `--*_config` options name training configs.
    const bool other_config =
        it.value.is_string() && IsConfigPath(it.value.get<std::string>()) &&
        (EndsWith(it.key, "_config_path") || EndsWith(it.key, "_config_file") ||
         EndsWith(it.key, "_config") || EndsWith(it.key, "_cfg"));
    if ((knowledge_.config_options.count(it.key) || other_config) && it.value.is_string()) {
      std::string p = it.value.get<std::string>();
      if (auto c = Resolve(l.cwd, p, rel_dir)) {
        LoadConfig(*c, kConfig, 0,
                   it.key == "deepspeed" || StartsWith(it.key, "ds_") ||
                           it.key.find("deepspeed") != std::string::npos
                       ? "deepspeed"
                       : "");
      } else if (auto moved = IsConfigPath(p) ? FindByName(Basename(p)) : std::nullopt) {
        meta_.notes.push_back(fmt::format(
            "{}: config {} is not in the sources; read {} (the job's only file of that name)",
            where, p, *moved));
        LoadConfig(*moved, kConfig, 0);
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
    if (auto v = knowledge_.argument_votes.find(it.key); v != knowledge_.argument_votes.end())
      Vote(v->second.first, v->second.second);
    if (it.key == "stage" && l.launcher == "llamafactory-cli") Vote("llama-factory", 3);
  }
  // Hydra group overrides: `group=option` where <config dir>/group/option.yaml exists is handled
  // in LoadConfig through hydra_overrides_ (not modelled further here).
}

}  // namespace schedmate::advisor::internal
