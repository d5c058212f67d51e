// libFuzzer target for the service's YAML configuration (service/service_config.h): arbitrary
// bytes as `schedmate serve --config FILE`. Parsing must give a ServiceConfig or a
// kInvalidArgument Status naming the file, never crash, throw or hang; a config it accepts must
// satisfy the cross-key rules ParseServiceConfig enforces.

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/check.h"
#include "service/service_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace schedmate;
  if (size > 64 * 1024) return 0;  // a config file is small; bigger inputs only slow the search
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  auto config = service::ParseServiceConfig(yaml, "fuzz.yaml");
  if (!config.ok()) {
    SM_CHECK(config.status().code() == StatusCode::kInvalidArgument) << config.status().ToString();
    return 0;
  }
  SM_CHECK(config->min_limit_min <= config->max_limit_min);
  SM_CHECK(config->backoff_base <= config->backoff_cap);
  SM_CHECK(!config->data_dir.empty());
  SM_CHECK(config->port >= 0 && config->port <= 65535);
  (void)config->DatabasePath();
  (void)service::SubmitPolicyName(config->submit_policy);
  return 0;
}
