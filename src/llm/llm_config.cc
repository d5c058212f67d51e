#include "llm/llm_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/file_util.h"
#include "core/strings.h"
#include "fmt/format.h"

namespace schedmate::llm {
namespace {

// Tracks which fields the file set, so the environment only fills the rest.
struct FileSet {
  bool chat_url = false, chat_model = false, chat_key = false;
  bool embed_url = false, embed_model = false, embed_key = false;
};

class YamlReader {
 public:
  YamlReader(std::string path) : path_(std::move(path)) {}

  Status Error(const YAML::Node& node, const std::string& key, const std::string& what) const {
    const int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", path_, line, key, what));
  }

  Result<std::string> String(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) return Error(n, key, "expected a string");
    return n.Scalar();
  }
  Result<double> PositiveSeconds(const YAML::Node& n, const std::string& key) const {
    auto v = n.IsScalar() ? ParseDouble(n.Scalar()) : std::nullopt;
    if (!v || !(*v > 0) || *v > 86400) {
      return Error(n, key,
                   fmt::format("expected a number of seconds in (0, 86400], got '{}'",
                               n.IsScalar() ? n.Scalar() : "a non-scalar"));
    }
    return *v;
  }
  Result<int64_t> Int(const YAML::Node& n, const std::string& key, int64_t lo, int64_t hi) const {
    auto v = n.IsScalar() ? ParseInt(n.Scalar()) : std::nullopt;
    if (!v || *v < lo || *v > hi) {
      return Error(n, key,
                   fmt::format("expected an integer in [{}, {}], got '{}'", lo, hi,
                               n.IsScalar() ? n.Scalar() : "a non-scalar"));
    }
    return *v;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ExpandHome(const std::string& p, const EnvLookup& env) {
  if (p == "~" || StartsWith(p, "~/")) {
    if (auto home = env("HOME")) return *home + p.substr(1);
  }
  return p;
}

Result<std::string> ReadKeyFile(const std::string& path) {
  Result<std::string> text = ReadFileToString(path, 1 << 16);
  if (!text.ok())
    return Status::InvalidArgument("cannot read API key file " + path + ": " +
                                   text.status().message());
  std::string key(Trim(*text));
  if (key.empty()) return Status::InvalidArgument("API key file " + path + " is empty");
  return key;
}

Status ParseEndpoint(const YamlReader& r, const YAML::Node& node, const std::string& prefix,
                     bool embeddings, const EnvLookup& env, EndpointConfig& out, bool& set_url,
                     bool& set_model, bool& set_key, size_t* dimension) {
  if (!node.IsMap()) return r.Error(node, prefix, "expected a mapping of settings");
  int key_sources = 0;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "api_key" || key == "api_key_env" || key == "api_key_file") ++key_sources;
    if (key_sources > 1) {
      return r.Error(kv.first, prefix + "." + key,
                     "give at most one of api_key, api_key_env, api_key_file");
    }
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string name = prefix + "." + key;
    const YAML::Node& v = kv.second;
    if (key == "base_url") {
      SM_ASSIGN_OR_RETURN(out.base_url, r.String(v, name));
      std::string lower = ToLower(out.base_url);
      if (!StartsWith(lower, "http://") && !StartsWith(lower, "https://")) {
        return r.Error(v, name, "expected an http:// or https:// URL, got '" + out.base_url + "'");
      }
      set_url = true;
    } else if (key == "model") {
      SM_ASSIGN_OR_RETURN(out.model, r.String(v, name));
      if (out.model.empty()) return r.Error(v, name, "must not be empty");
      set_model = true;
    } else if (key == "api_key") {
      SM_ASSIGN_OR_RETURN(out.api_key, r.String(v, name));
      out.api_key_source = "config";
    } else if (key == "api_key_env") {
      SM_ASSIGN_OR_RETURN(std::string var, r.String(v, name));
      auto value = env(var);
      if (!value || value->empty()) {
        return r.Error(v, name, "environment variable " + var + " is not set");
      }
      out.api_key = std::string(Trim(*value));
      out.api_key_source = "env " + var;
    } else if (key == "api_key_file") {
      SM_ASSIGN_OR_RETURN(std::string file, r.String(v, name));
      file = ExpandHome(file, env);
      if (!file.empty() && file[0] != '/') {
        file = (std::filesystem::path(r.path()).parent_path() / file).string();
      }
      Result<std::string> key_text = ReadKeyFile(file);
      if (!key_text.ok()) return r.Error(v, name, key_text.status().message());
      out.api_key = *key_text;
      out.api_key_source = "file " + file;
    } else if (key == "connect_timeout_s") {
      SM_ASSIGN_OR_RETURN(double s, r.PositiveSeconds(v, name));
      out.connect_timeout = Duration::FromSecondsF(s);
    } else if (key == "timeout_s") {
      SM_ASSIGN_OR_RETURN(double s, r.PositiveSeconds(v, name));
      out.timeout = Duration::FromSecondsF(s);
    } else if (key == "dimension" && embeddings) {
      SM_ASSIGN_OR_RETURN(int64_t d, r.Int(v, name, 1, 1 << 16));
      *dimension = static_cast<size_t>(d);
    } else {
      return r.Error(kv.first, name,
                     embeddings ? "unknown key (expected base_url, model, api_key, api_key_env, "
                                  "api_key_file, connect_timeout_s, timeout_s, dimension)"
                                : "unknown key (expected base_url, model, api_key, api_key_env, "
                                  "api_key_file, connect_timeout_s, timeout_s)");
    }
  }
  if (key_sources > 0) set_key = true;
  return Status::Ok();
}

Result<LlmConfig> ParseYamlInto(const std::string& text, const std::string& path,
                                const EnvLookup& env, FileSet& set) {
  LlmConfig c;
  YamlReader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (root.IsNull()) return c;  // an empty file configures nothing
  if (!root.IsMap()) return r.Error(root, "(top level)", "expected a mapping of settings");
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "backend") {
        SM_ASSIGN_OR_RETURN(c.backend, r.String(v, key));
        if (c.backend != "openai-compatible" && c.backend != "none") {
          return r.Error(v, key, "expected openai-compatible or none, got '" + c.backend + "'");
        }
      } else if (key == "chat") {
        SM_RETURN_IF_ERROR(ParseEndpoint(r, v, "chat", false, env, c.chat, set.chat_url,
                                         set.chat_model, set.chat_key, nullptr));
      } else if (key == "embeddings") {
        SM_RETURN_IF_ERROR(ParseEndpoint(r, v, "embeddings", true, env, c.embeddings, set.embed_url,
                                         set.embed_model, set.embed_key, &c.embedding_dimension));
      } else if (key == "max_retries") {
        SM_ASSIGN_OR_RETURN(int64_t n, r.Int(v, key, 0, 10));
        c.max_retries = static_cast<int>(n);
      } else if (key == "max_concurrency") {
        SM_ASSIGN_OR_RETURN(int64_t n, r.Int(v, key, 1, 256));
        c.max_concurrency = static_cast<int>(n);
      } else if (key == "token_budget") {
        SM_ASSIGN_OR_RETURN(c.token_budget, r.Int(v, key, 0, int64_t{1} << 50));
      } else if (key == "cache_dir") {
        SM_ASSIGN_OR_RETURN(c.cache_dir, r.String(v, key));
        c.cache_dir = ExpandHome(c.cache_dir, env);
      } else if (key == "call_log") {
        SM_ASSIGN_OR_RETURN(c.call_log, r.String(v, key));
        c.call_log = ExpandHome(c.call_log, env);
      } else if (key == "probe_timeout_s") {
        SM_ASSIGN_OR_RETURN(double s, r.PositiveSeconds(v, key));
        c.probe_timeout = Duration::FromSecondsF(s);
      } else if (key == "retry_seed") {
        SM_ASSIGN_OR_RETURN(int64_t n, r.Int(v, key, 0, INT64_MAX));
        c.retry_seed = static_cast<uint64_t>(n);
      } else {
        return r.Error(kv.first, key,
                       "unknown key (expected backend, chat, embeddings, max_retries, "
                       "max_concurrency, token_budget, cache_dir, call_log, probe_timeout_s, "
                       "retry_seed)");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  return c;
}

// Fills unset fields from the environment and checks the combination.
Status ApplyEnvAndValidate(LlmConfig& c, const FileSet& set, const EnvLookup& env, bool from_file) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto v = env(name);
    if (!v) return std::nullopt;
    std::string t(Trim(*v));
    if (t.empty()) return std::nullopt;
    return t;
  };
  // A field the file left unset takes the variable's value, when there is one.
  bool used_env = false;
  auto fill = [&](bool set_in_file, const char* name, std::string& field) {
    if (set_in_file) return;
    if (auto v = get(name)) {
      field = *v;
      used_env = true;
    }
  };
  // A key the file left unset: from the variable `var`, else (with `key_file`) from the file
  // `var`_FILE names. A key does not count as configuration from the environment.
  auto fill_key = [&](bool set_in_file, const std::string& var, bool key_file,
                      EndpointConfig& to) -> Status {
    if (set_in_file) return Status::Ok();
    if (auto v = get(var.c_str())) {
      to.api_key = *v;
      to.api_key_source = "env " + var;
    } else if (auto f = key_file ? get((var + "_FILE").c_str()) : std::nullopt) {
      Result<std::string> key = ReadKeyFile(ExpandHome(*f, env));
      if (!key.ok()) return Status::InvalidArgument(var + "_FILE: " + key.status().message());
      to.api_key = *key;
      to.api_key_source = "file " + *f;
    }
    return Status::Ok();
  };
  fill(set.chat_url, "SCHEDMATE_LLM_BASE_URL", c.chat.base_url);
  fill(set.chat_model, "SCHEDMATE_LLM_MODEL", c.chat.model);
  SM_RETURN_IF_ERROR(fill_key(set.chat_key, "SCHEDMATE_LLM_API_KEY", /*key_file=*/true, c.chat));
  fill(set.embed_url, "SCHEDMATE_EMBED_BASE_URL", c.embeddings.base_url);
  fill(set.embed_model, "SCHEDMATE_EMBED_MODEL", c.embeddings.model);
  SM_RETURN_IF_ERROR(
      fill_key(set.embed_key, "SCHEDMATE_EMBED_API_KEY", /*key_file=*/false, c.embeddings));
  // One server often serves both: an embedding model without its own URL uses the chat server
  // (and its key).
  if (c.embeddings.base_url.empty() && !c.embeddings.model.empty()) {
    c.embeddings.base_url = c.chat.base_url;
  }
  if (c.embeddings.api_key.empty() && c.embeddings.base_url == c.chat.base_url) {
    c.embeddings.api_key = c.chat.api_key;
    c.embeddings.api_key_source = c.chat.api_key_source;
  }
  if (from_file) {
    c.source = used_env ? c.source + " + environment" : c.source;
  } else {
    c.source = used_env ? "environment" : "none";
  }

  auto check = [](const EndpointConfig& e, const char* what, const char* url_var,
                  const char* model_var) -> Status {
    if (e.base_url.empty() && e.model.empty()) return Status::Ok();
    if (e.base_url.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}.base_url: a model is set but no server URL (set it in the config file or {})", what,
          url_var));
    }
    const std::string lower = ToLower(e.base_url);
    if (!StartsWith(lower, "http://") && !StartsWith(lower, "https://")) {
      return Status::InvalidArgument(fmt::format(
          "{}.base_url: expected an http:// or https:// URL, got '{}'", what, e.base_url));
    }
    if (e.model.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}.model: a server URL is set but no model name (set it in the config file or {})", what,
          model_var));
    }
    return Status::Ok();
  };
  SM_RETURN_IF_ERROR(check(c.chat, "chat", "SCHEDMATE_LLM_BASE_URL", "SCHEDMATE_LLM_MODEL"));
  SM_RETURN_IF_ERROR(
      check(c.embeddings, "embeddings", "SCHEDMATE_EMBED_BASE_URL", "SCHEDMATE_EMBED_MODEL"));
  return Status::Ok();
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<LlmConfig> ParseLlmConfigYaml(const std::string& text, const std::string& path,
                                     const EnvLookup& env) {
  FileSet set;
  SM_ASSIGN_OR_RETURN(LlmConfig c, ParseYamlInto(text, path, env, set));
  c.source = "file " + path;
  SM_RETURN_IF_ERROR(ApplyEnvAndValidate(
      c, set, [](const std::string&) { return std::optional<std::string>(); }, /*from_file=*/true));
  return c;
}

Result<LlmConfig> LoadLlmConfig(const std::optional<std::string>& config_path,
                                const EnvLookup& env) {
  std::optional<std::string> path = config_path;
  if (!path) {
    if (auto v = env("SCHEDMATE_LLM_CONFIG"); v && !Trim(*v).empty()) path = std::string(Trim(*v));
  }
  FileSet set;
  LlmConfig c;
  if (path) {
    Result<std::string> text = ReadFileToString(*path, 1 << 20);
    if (!text.ok()) {
      return Status::InvalidArgument("cannot read LLM config " + *path + ": " +
                                     text.status().message());
    }
    SM_ASSIGN_OR_RETURN(c, ParseYamlInto(*text, *path, env, set));
    c.source = "file " + *path;
  }
  SM_RETURN_IF_ERROR(ApplyEnvAndValidate(c, set, env, /*from_file=*/path.has_value()));
  return c;
}

}  // namespace schedmate::llm
