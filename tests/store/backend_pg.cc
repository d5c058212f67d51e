#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "store/pg_db.h"
#include "store/test_backend.h"

namespace schedmate::store::testing {

std::string BackendUnavailable() {
  const char* url = std::getenv("SCHEDMATE_PG_URL");
  if (url == nullptr || *url == '\0') {
    return "SCHEDMATE_PG_URL is unset (scripts/postgres-local.sh start; eval \"$(... env)\")";
  }
  return "";
}

std::string FreshStoreUrl() {
  static std::atomic<int> n{0};
  const std::string base = std::getenv("SCHEDMATE_PG_URL");
  const std::string schema = fmt::format("t_{}_{}_{}", getpid(), time(nullptr) % 100000, ++n);
  auto db = PgDb::Open(base);
  if (!db.ok()) ADD_FAILURE() << db.status().message();
  if (db.ok()) {
    Status s = (*db)->Exec("CREATE SCHEMA " + schema);
    if (!s.ok()) ADD_FAILURE() << s.message();
  }
  // Every session of this URL works in the new schema only.
  return base + (base.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" +
         schema;
}

}  // namespace schedmate::store::testing
