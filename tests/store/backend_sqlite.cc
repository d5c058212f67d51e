#include <atomic>
#include <memory>

#include "store/test_backend.h"
#include "testing/test_util.h"

namespace schedmate::store::testing {

std::string BackendUnavailable() { return ""; }

std::string FreshStoreUrl() {
  static auto* dir = new schedmate::testing::TempDir();  // lives for the process
  static std::atomic<int> n{0};
  return "sqlite://" + dir->File("store" + std::to_string(++n) + ".db");
}

}  // namespace schedmate::store::testing
