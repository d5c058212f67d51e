// libFuzzer target for the LLM configuration file (llm/llm_config.h): arbitrary bytes as
// `--llm-config FILE`, parsed with a fixed fake environment. Parsing must give an LlmConfig or a
// kInvalidArgument Status naming the file, never crash, throw or hang; an accepted config must be
// usable as llm_config.h describes (URLs http(s), a model for every configured server).
//
// `api_key_file` makes the parser read a file: relative names resolve against the config's
// directory, which does not exist here; run the fuzzer with stdin from /dev/null (the CI step
// does), so an absolute /dev/stdin cannot block.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/check.h"
#include "core/strings.h"
#include "llm/llm_config.h"

namespace {

using namespace schedmate;

std::optional<std::string> FakeEnv(const std::string& name) {
  if (name == "HOME") return "/nonexistent-fuzz-home";
  if (name == "FUZZ_KEY") return "sk-fuzz";
  if (name == "FUZZ_BLANK") return "  ";
  return std::nullopt;
}

void CheckEndpoint(const llm::EndpointConfig& e) {
  if (!e.configured()) return;
  const std::string lower = ToLower(e.base_url);
  SM_CHECK(StartsWith(lower, "http://") || StartsWith(lower, "https://")) << e.base_url;
  SM_CHECK(!e.model.empty());
  SM_CHECK(e.timeout.micros() > 0 && e.connect_timeout.micros() > 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // a config file is small; bigger inputs only slow the search
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  auto config = llm::ParseLlmConfigYaml(yaml, "/nonexistent-fuzz-dir/llm.yaml", FakeEnv);
  if (!config.ok()) {
    SM_CHECK(config.status().code() == StatusCode::kInvalidArgument) << config.status().ToString();
    return 0;
  }
  SM_CHECK(config->backend == "openai-compatible" || config->backend == "none");
  CheckEndpoint(config->chat);
  CheckEndpoint(config->embeddings);
  SM_CHECK(config->max_retries >= 0 && config->max_concurrency >= 1);
  SM_CHECK(config->token_budget >= 0);
  (void)config->chat_configured();
  return 0;
}
