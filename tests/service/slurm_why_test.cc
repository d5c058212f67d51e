// `schedmate why JOBID --slurm` against the local Slurm of scripts/slurm-local.sh (2 nodes x 8
// GPUs, one partition, priority/basic + backfill): a job pending on Resources, one on Priority and
// one on a Dependency each get the right reason and evidence, and the suggestions work when
// applied — the smaller request starts at once, and the backfill time limit lets the job behind
// a reservation start in the next backfill cycle. With accounting (WITH_DBD=1), QOS and
// association limits are named with their values too. Skips when no Slurm answers.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/strings.h"
#include "service/local_slurm.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::RunSchedmate;
using schedmate::testing::RunShell;

bool WaitFor(double seconds, const std::function<bool()>& probe) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return probe();
}

std::string Sh(const std::string& cmd) { return std::string(Trim(RunShell(cmd).out)); }

std::string Submit(const std::string& args) {
  return Sh("sbatch --parsable -J wtest -o /dev/null " + args + " --wrap 'sleep 600'");
}

std::string Field(const std::string& id, const char* format) {
  return Sh("squeue -h -j " + id + " -o '" + format + "'");
}

nlohmann::json Why(const std::string& id) {
  auto r = RunSchedmate("why " + id + " --slurm --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

const nlohmann::json* SuggestionStarting(const nlohmann::json& why, const std::string& prefix) {
  for (const auto& s : why["suggestions"])
    if (s["change"].get<std::string>().rfind(prefix, 0) == 0) return &s;
  return nullptr;
}

class SlurmWhy : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip;
    if (testing::LocalSlurmConf(skip).empty()) GTEST_SKIP() << skip;
    Clean();
  }
  void TearDown() override { Clean(); }
  static void Clean() {
    RunShell("squeue -h -o '%i %j' | awk '$2 == \"wtest\" {print $1}' | xargs -r scancel");
    WaitFor(15, [] { return Sh("squeue -h -o '%j' | grep -c '^wtest$' || true") == "0"; });
  }
};

TEST_F(SlurmWhy, ReasonsEvidenceAndSuggestionsThatWork) {
  // gpu1 full for 20 minutes, gpu2 half full for 10.
  const std::string a = Submit("-w gpu1 --gres=gpu:8 --time=20");
  const std::string b = Submit("-w gpu2 --gres=gpu:4 --time=10");
  ASSERT_TRUE(
      WaitFor(30, [&] { return Field(a, "%T") == "RUNNING" && Field(b, "%T") == "RUNNING"; }));
  const std::string dep = Submit("--dependency=afterok:" + a + " --gres=gpu:1 --time=5");
  const std::string big = Submit("--gres=gpu:8 --time=30");
  ASSERT_TRUE(WaitFor(
      30, [&] { return Field(big, "%r") == "Resources" && Field(dep, "%r") == "Dependency"; }));

  // Resources: the running jobs that hold the GPUs, and a request that fits now.
  nlohmann::json w = Why(big);
  EXPECT_EQ(w["reason_code"], "Resources");
  EXPECT_EQ(w["reason_kind"], "resources");
  int running = 0;
  for (const auto& e : w["evidence"]) {
    if (e["kind"] == "running_job") {
      ++running;
      EXPECT_EQ(e["source"], "time_limit");
    }
  }
  EXPECT_EQ(running, 2);
  const nlohmann::json* smaller = SuggestionStarting(w, "--gres=gpu:");
  ASSERT_NE(smaller, nullptr) << w.dump(2);
  EXPECT_EQ((*smaller)["change"], "--gres=gpu:4");
  EXPECT_FALSE((*smaller)["expected_start"].is_null());
  // Dependency: the job it waits for.
  nlohmann::json d = Why(dep);
  EXPECT_EQ(d["reason_code"], "Dependency");
  ASSERT_FALSE(d["evidence"].empty());
  EXPECT_EQ(d["evidence"][0]["kind"], "dependency");
  EXPECT_EQ(d["evidence"][0]["job_id"], a);

  // The smaller request, resubmitted in place of the big one, starts at once.
  RunShell("scancel " + big);
  const std::string resubmitted = Submit("--gres=gpu:4 --time=30");
  EXPECT_TRUE(WaitFor(30, [&] { return Field(resubmitted, "%T") == "RUNNING"; }))
      << Field(resubmitted, "%T %r");
  RunShell("scancel " + resubmitted);
  ASSERT_TRUE(WaitFor(30, [&] { return Field(resubmitted, "%T").empty(); }));

  // Priority: a 4-GPU job behind an 8-GPU job that holds gpu2 from b's end. It fits now; a time
  // limit ending before that reservation lets backfill start it.
  const std::string first = Submit("--gres=gpu:8 --time=30");
  const std::string behind = Submit("--gres=gpu:4 --time=60");
  ASSERT_TRUE(WaitFor(60, [&] {
    return Field(first, "%r") == "Resources" && Field(behind, "%T") == "PENDING" &&
           Field(behind, "%r") != "None";
  })) << Field(behind, "%T %r");
  nlohmann::json p = Why(behind);
  EXPECT_EQ(p["reason_kind"], Field(behind, "%r") == "Priority" ? "priority" : "resources");
  bool first_ahead = false;
  for (const auto& e : p["evidence"])
    if (e["kind"] == "job_ahead" && e["job_id"] == first) first_ahead = true;
  EXPECT_TRUE(first_ahead) << p.dump(2);
  const nlohmann::json* limit = SuggestionStarting(p, "--time=");
  ASSERT_NE(limit, nullptr) << p.dump(2);
  const std::string minutes = (*limit)["change"].get<std::string>().substr(7);
  EXPECT_LT(std::stoi(minutes), 10);
  RunShell("scontrol update JobId=" + behind + " TimeLimit=" + minutes);
  EXPECT_TRUE(WaitFor(90, [&] { return Field(behind, "%T") == "RUNNING"; }))
      << Field(behind, "%T %r");
  EXPECT_EQ(Field(first, "%T"), "PENDING");  // and the job ahead kept its place
}

// Needs accounting with limits enforced (scripts/slurm-local.sh with WITH_DBD=1): a QOS allowing
// 3 GPUs per user; with 2 in use, a 2-GPU job waits on QOSMaxGRESPerUser. `why` names the limit
// and its value, and its smaller request, resubmitted, starts at once while the original waits.
TEST_F(SlurmWhy, QosLimitNamedWithItsValueAndTheSmallerRequestStarts) {
  if (Sh("scontrol show config | awk '/^AccountingStorageEnforce/ {print $3}'").find("qos") ==
      std::string::npos) {
    GTEST_SKIP() << "no QOS enforcement here (scripts/slurm-local.sh start with WITH_DBD=1)";
  }
  const std::string qos = "wtestgpu3";
  // Idempotent: a QOS left by an interrupted run is set again.
  RunShell("sacctmgr -i add qos " + qos + " >/dev/null 2>&1; sacctmgr -i modify qos " + qos +
           " set MaxTRESPerUser=gres/gpu=3 >/dev/null 2>&1; sacctmgr -i modify user where "
           "name=$(id -un) set qos+=" +
           qos + " >/dev/null 2>&1");
  ASSERT_EQ(Sh("sacctmgr -n -P show qos " + qos + " format=MaxTRESPU"), "gres/gpu=3");
  const std::string running = Submit("--qos=" + qos + " --gres=gpu:2 --time=10");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(running, "%T") == "RUNNING"; }));
  const std::string waiting = Submit("--qos=" + qos + " --gres=gpu:2 --time=10");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(waiting, "%r") == "QOSMaxGRESPerUser"; }))
      << Field(waiting, "%T %r");

  nlohmann::json w = Why(waiting);
  EXPECT_EQ(w["reason_code"], "QOSMaxGRESPerUser");
  EXPECT_EQ(w["reason_kind"], "limit_group");
  const nlohmann::json* value = nullptr;
  for (const auto& e : w["evidence"])
    if (e["kind"] == "limit_value") value = &e;
  ASSERT_NE(value, nullptr) << w.dump(2);
  EXPECT_EQ((*value)["name"], "QOS " + qos + " MaxTRESPU");
  EXPECT_EQ((*value)["value"], 3);
  const nlohmann::json* smaller = SuggestionStarting(w, "--gres=gpu:");
  ASSERT_NE(smaller, nullptr) << w.dump(2);
  EXPECT_EQ((*smaller)["change"], "--gres=gpu:1");
  EXPECT_FALSE((*smaller)["expected_start"].is_null());

  // Applied: the 1-GPU job starts while the 2-GPU one still waits on the limit.
  const std::string resubmitted = Submit("--qos=" + qos + " --gres=gpu:1 --time=10");
  EXPECT_TRUE(WaitFor(30, [&] { return Field(resubmitted, "%T") == "RUNNING"; }))
      << Field(resubmitted, "%T %r");
  EXPECT_EQ(Field(waiting, "%T %r"), "PENDING QOSMaxGRESPerUser");
  Clean();
  RunShell("sacctmgr -i modify user where name=$(id -un) set qos-=" + qos +
           " >/dev/null; sacctmgr -i delete qos " + qos + " >/dev/null");
}

const nlohmann::json* EvidenceOf(const nlohmann::json& why, const std::string& kind) {
  for (const auto& e : why["evidence"])
    if (e["kind"] == kind) return &e;
  return nullptr;
}

// Needs accounting with limits enforced (WITH_DBD=1). An association limit on the user's own
// association (GrpTRES gres/gpu=3, 2 in use) and one on its account (GrpTRESRunMins
// gres/gpu=60: GPUs x time limit minutes of running jobs): `why` names each with its value and
// what is in use, and the request it suggests, submitted, starts while the original waits.
TEST_F(SlurmWhy, AssociationLimitsNamedWithTheirValuesAndTheSuggestionsStartSooner) {
  if (Sh("scontrol show config | awk '/^AccountingStorageEnforce/ {print $3}'").find("limits") ==
      std::string::npos) {
    GTEST_SKIP() << "no limit enforcement here (scripts/slurm-local.sh start with WITH_DBD=1)";
  }
  const std::string user = Sh("id -un");
  const std::string account = Sh("sacctmgr -n -P show user " + user + " format=DefaultAccount");
  ASSERT_FALSE(account.empty());
  const std::string where = "sacctmgr -i modify user where name=" + user + " account=" + account;
  const std::string on_account = "sacctmgr -i modify account where name=" + account;
  auto reset = [&] {
    RunShell(where + " set GrpTRES=gres/gpu=-1 >/dev/null 2>&1; " + on_account +
             " set GrpTRESRunMins=gres/gpu=-1 >/dev/null 2>&1");
  };
  reset();  // idempotent: limits left by an interrupted run are cleared first

  // The user's association: 3 GPUs.
  RunShell(where + " set GrpTRES=gres/gpu=3 >/dev/null");
  const std::string running = Submit("--gres=gpu:2 --time=10");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(running, "%T") == "RUNNING"; }));
  const std::string waiting = Submit("--gres=gpu:2 --time=10");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(waiting, "%r") == "AssocGrpGRES"; }))
      << Field(waiting, "%T %r");
  nlohmann::json w = Why(waiting);
  EXPECT_EQ(w["reason_code"], "AssocGrpGRES");
  EXPECT_EQ(w["reason_kind"], "limit_group");
  const nlohmann::json* value = EvidenceOf(w, "limit_value");
  ASSERT_NE(value, nullptr) << w.dump(2);
  EXPECT_EQ((*value)["name"], "Assoc " + account + "/" + user + " GrpTRES");
  EXPECT_EQ((*value)["value"], 3);
  ASSERT_NE(EvidenceOf(w, "limit_used"), nullptr) << w.dump(2);
  EXPECT_EQ((*EvidenceOf(w, "limit_used"))["value"], 2);
  const nlohmann::json* smaller = SuggestionStarting(w, "--gres=gpu:");
  ASSERT_NE(smaller, nullptr) << w.dump(2);
  EXPECT_EQ((*smaller)["change"], "--gres=gpu:1");
  EXPECT_FALSE((*smaller)["expected_start"].is_null());
  const std::string one = Submit((*smaller)["change"].get<std::string>() + " --time=10");
  EXPECT_TRUE(WaitFor(30, [&] { return Field(one, "%T") == "RUNNING"; })) << Field(one, "%T %r");
  EXPECT_EQ(Field(waiting, "%T %r"), "PENDING AssocGrpGRES");
  Clean();
  reset();

  // The account's GPU-minutes of running time limits: 60, a 1-GPU 30-minute job holds 30, so a
  // 40-minute one waits and the suggested shorter limit fits.
  RunShell(on_account + " set GrpTRESRunMins=gres/gpu=60 >/dev/null");
  const std::string holder = Submit("--gres=gpu:1 --time=30");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(holder, "%T") == "RUNNING"; }));
  const std::string longer = Submit("--gres=gpu:1 --time=40");
  ASSERT_TRUE(WaitFor(30, [&] { return Field(longer, "%r") == "AssocGrpGRESRunMinutes"; }))
      << Field(longer, "%T %r");
  nlohmann::json m = Why(longer);
  EXPECT_EQ(m["reason_code"], "AssocGrpGRESRunMinutes");
  const nlohmann::json* run_value = EvidenceOf(m, "limit_value");
  ASSERT_NE(run_value, nullptr) << m.dump(2);
  EXPECT_EQ((*run_value)["name"], "Assoc " + account + " GrpTRESRunMins");
  EXPECT_EQ((*run_value)["value"], 60);
  ASSERT_NE(EvidenceOf(m, "limit_used"), nullptr) << m.dump(2);
  EXPECT_EQ((*EvidenceOf(m, "limit_used"))["value"], 30);
  const nlohmann::json* shorter = SuggestionStarting(m, "--time=");
  ASSERT_NE(shorter, nullptr) << m.dump(2);
  EXPECT_EQ((*shorter)["change"], "--time=30");
  EXPECT_FALSE((*shorter)["expected_start"].is_null());
  const std::string fits = Submit("--gres=gpu:1 " + (*shorter)["change"].get<std::string>());
  EXPECT_TRUE(WaitFor(30, [&] { return Field(fits, "%T") == "RUNNING"; })) << Field(fits, "%T %r");
  EXPECT_EQ(Field(longer, "%T %r"), "PENDING AssocGrpGRESRunMinutes");
  Clean();
  reset();
}

TEST_F(SlurmWhy, UnknownJobIsAnErrorNotACrash) {
  auto r = RunSchedmate("why 999999 --slurm --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

}  // namespace
}  // namespace schedmate::service
