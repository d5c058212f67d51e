#pragma once
// ApiFixture: the pieces every API test needs — one SQLite file opened twice (the companion's
// writer and the API's read-only stores, as `schedmate serve` does), the service's engines
// (service/engines.h), a FakeCluster behind a real SlurmBackend, a FakeClock — plus
// CreateCompanion() (Load + one Tick) and StartServer() (an ApiServer on a free port and an HTTP
// client for it).

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/api_server.h"
#include "service/engines.h"
#include "service/fake_cluster.h"
#include "testing/test_util.h"

namespace schedmate::api::testing {

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::move(store::SqliteDb::Open(dir_.File("s.db")).value());
    history_ = std::move(store::SqliteHistoryStore::Attach(*db_).value());
    store_ = std::move(service::ServiceStore::Attach(*db_).value());
    read_db_ = std::move(store::SqliteDb::Open(dir_.File("s.db")).value());
    read_history_ = std::move(store::SqliteHistoryStore::Attach(*read_db_).value());
    read_store_ = std::move(service::ServiceStore::Attach(*read_db_).value());
    config_.data_dir = dir_.path();
    engines_ = std::move(service::MakeEngines(config_, *history_).value());
  }
  // The companion over the fake cluster as rendered now, loaded and ticked once.
  void CreateCompanion() {
    backend_ = std::make_unique<slurm::SlurmBackend>(fake_, slurm::SlurmBackendOptions{});
    companion_ = std::make_unique<service::Companion>(
        service::CompanionDeps{*backend_, *history_, *store_, *engines_.advisor, *engines_.tracker,
                               *engines_.diagnoser, clock_},
        config_);
    ASSERT_OK(companion_->Load());
    ASSERT_OK(companion_->Tick());
  }
  void StartServer(const std::string& token = "t0k") {
    server_ = std::make_unique<ApiServer>(*companion_, ApiReadStores{*read_store_, *read_history_},
                                          token);
    ASSERT_OK(server_->Start("127.0.0.1", 0));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  // GET `path` from the server; expects status `want`; the parsed body (discarded on a parse
  // error).
  nlohmann::json GetJson(const std::string& path, int want = 200) {
    auto res = client_->Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return nlohmann::json();
    EXPECT_EQ(res->status, want) << path << ": " << res->body;
    return nlohmann::json::parse(res->body, nullptr, false);
  }

  schedmate::testing::TempDir dir_;
  std::unique_ptr<store::SqliteDb> db_, read_db_;
  std::unique_ptr<store::SqliteHistoryStore> history_, read_history_;
  std::unique_ptr<service::ServiceStore> store_, read_store_;
  service::Engines engines_;
  slurm::FakeCommandRunner fake_;
  service::testing::FakeCluster cluster_{fake_};
  FakeClock clock_{SimTime::FromSeconds(1'800'000'000)};
  service::ServiceConfig config_;
  std::unique_ptr<slurm::SlurmBackend> backend_;
  std::unique_ptr<service::Companion> companion_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace schedmate::api::testing
