#pragma once
// DashboardFixture: an ApiServer over a Companion with a FakeCluster that has something to show
// on every panel of the dashboard: running jobs with a metric series (loss, step time), pending
// jobs with start estimates and reasons, a stalled job, an infrastructure failure (node drained,
// job requeued), an application failure, and a job whose name is an HTML injection attempt.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

#include "api/api_server.h"
#include "api_fixture.h"
#include "core/file_util.h"
#include "service/fake_cluster.h"
#include "testing/test_util.h"

namespace schedmate::api::testing {

inline constexpr const char* kXssJobName = "<img src=x onerror=\"window.__xss=1\">";

class DashboardFixture : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    for (const char* n : {"gpu1", "gpu2", "gpu3", "gpu4"}) cluster_.AddNode(n, 8);
    config_.metrics_interval = Duration::Zero();
  }

  // A running job belongs to the user running the test: the service reads a job's log only as
  // its user's own file (service/log_access.h), and the logs written here are that user's.
  // Pending jobs have made-up users.
  service::testing::FakeJob& Running(const std::string& id, const std::string& name,
                                     const std::string& node, int gpus, const std::string& log) {
    auto& j = cluster_.Job(id);
    j.id = id;
    j.name = name;
    j.user = service::testing::TestUserName();
    j.state = "RUNNING";
    j.node = node;
    j.gpus_per_node = gpus;
    j.submit = clock_.Now().seconds() - 900;
    j.start = clock_.Now().seconds() - 600;
    j.std_out = log;
    return j;
  }
  void Pending(const std::string& id, const std::string& name, const std::string& user, int gpus,
               const std::string& reason) {
    auto& j = cluster_.Job(id);
    j.id = id;
    j.name = name;
    j.user = user;
    j.reason = reason;
    j.gpus_per_node = gpus;
    j.submit = clock_.Now().seconds() - 120;
  }
  void Append(const std::string& path, const std::string& text) {
    std::string old = ReadFileToString(path).value_or("");
    ASSERT_OK(WriteStringToFile(path, old + text));
  }

  // Builds the scene by ticking the companion through it, then serves the API on a free port.
  void StartWithScene() {
    std::string resnet = dir_.File("resnet.out"), xss = dir_.File("xss.out");
    std::string bert = dir_.File("bert.out"), llama = dir_.File("llama.out");
    std::string eval = dir_.File("eval.out");
    ASSERT_OK(WriteStringToFile(resnet, "starting training\n"));
    ASSERT_OK(WriteStringToFile(xss, "step 1/50 loss 3.0\n"));
    ASSERT_OK(WriteStringToFile(bert, "step 10/1000 loss 7.1\n"));
    ASSERT_OK(WriteStringToFile(llama, "loading checkpoint\n"));
    ASSERT_OK(WriteStringToFile(eval, "step 5/100 loss 2.0\n"));  // and then nothing: stalls
    Running("101", "resnet50-imagenet", "gpu1", 4, resnet);
    Running("102", kXssJobName, "gpu1", 2, xss);
    auto& b = Running("201", "bert-pretrain", "gpu2", 8, bert);
    auto& l = Running("202", "llama-finetune", "gpu3", 8, llama);
    Running("105", "gpt-eval", "gpu4", 2, eval);
    Pending("103", "vit-large", "alice", 8, "Resources");
    Pending("104", "sweep-lr", "bob", 8, "Priority");
    cluster_.Render();
    CreateCompanion();
    // Training progresses: one metric sample per tick; 12 minutes, so gpt-eval is stalled.
    for (int i = 1; i <= 8; ++i) {
      clock_.Advance(Duration::Seconds(90));
      double loss = 2.4 / (1.0 + 0.35 * i);
      double step_time = 0.42 + 0.03 * (i % 3) + (i == 6 ? 0.25 : 0.0);
      Append(resnet,
             fmt::format("step {}/2000 loss {:.4f} step_time {:.3f}s\n", i * 100, loss, step_time));
      Append(xss, fmt::format("step {}/50 loss {:.2f}\n", i + 1, 3.0 - 0.2 * i));
      ASSERT_OK(companion_->Tick());
    }
    // bert dies on a GPU fault (infra: drain + requeue), llama on a config bug (app).
    Append(bert, "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus\n");
    Append(llama,
           "Traceback (most recent call last):\n  File \"train.py\", line 3\nKeyError: 'lr'\n");
    clock_.Advance(Duration::Seconds(5));
    for (auto* j : {&b, &l}) {
      j->state = "FAILED";
      j->exit_code = 1;
      j->end = clock_.Now().seconds() - 1;
    }
    cluster_.Render();
    ASSERT_OK(companion_->Tick());
    // What Slurm shows afterwards: bert requeued (pending until its release), gpu2 drained,
    // llama gone from the queue.
    b.state = "PENDING";
    b.reason = "BeginTime";
    b.node.clear();
    b.restarts = 1;
    b.start = 0;
    b.end = 0;
    b.exit_code = 0;
    b.eligible = clock_.Now().seconds() + 60;
    cluster_.Remove("202");
    cluster_.SetDrained("gpu2", "schedmate: gpu_xid in job 201");
    cluster_.Render();
    clock_.Advance(Duration::Seconds(2));
    ASSERT_OK(companion_->Tick());
    StartServer();
  }
};

}  // namespace schedmate::api::testing
