#include "advisor/builtin_extractor.h"

#include <algorithm>
#include <filesystem>

#include "advisor/extraction.h"
#include "advisor/python_scanner.h"
#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::advisor::internal {

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
  if (EndsWith(entry, ".md")) {
    LoadMarkdownConfig(entry);
    meta_.notes.push_back(entry + ": training configuration from the file's ```yaml blocks");
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

}  // namespace schedmate::advisor::internal

namespace schedmate::advisor {
namespace {

namespace fs = std::filesystem;
using internal::Extraction;

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
