// The service's failure diagnoser (service/engines.h, what `serve` runs) and `schedmate diagnose`
// are one engine: on the same log they give the same class and category. The Xid cases are the
// ones the removed service-only engine got wrong (it drained the node for every Xid; 13/31/43 are
// application faults per config/failure_signatures.yaml).

#include "service/engines.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/file_util.h"
#include "store/history_store.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::RunSchedmate;
using schedmate::testing::ShellQuote;
using schedmate::testing::TempDir;

std::string ClassOfLabel(const std::string& label) {
  if (label == "infrastructure") return "infra";
  if (label == "application") return "app";
  return "unknown";
}

struct Case {
  std::string name;
  std::string log;
  std::string expected_class;
};

TEST(ServiceEngines, ServeAndDiagnoseClassifyTheSameLogTheSameWay) {
  auto history = store::SqliteHistoryStore::Open(":memory:");
  ASSERT_TRUE(history.ok());
  ServiceConfig config;
  auto engines = MakeEngines(config, **history);
  ASSERT_TRUE(engines.ok()) << engines.status().ToString();
  const std::string preamble = "epoch 1 step 10/100 loss 2.31\nepoch 1 step 20/100 loss 2.05\n";
  const Case cases[] = {
      {"xid13", preamble + "NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, Graphics Exception\n", "app"},
      {"xid31", preamble + "NVRM: Xid (PCI:0000:3b:00): 31, pid=4242, Ch 00000010, MMU Fault\n",
       "app"},
      {"xid79", preamble + "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n",
       "infra"},
      {"oom",
       preamble + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
                  "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
       "app"},
  };
  TempDir dir;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir.File(c.name + ".log");
    ASSERT_TRUE(WriteStringToFile(path, c.log).ok());
    FailedJob job;
    job.job_id = "1";
    job.state = "FAILED";
    job.exit_code = 1;
    job.nodes = {"gpu1"};
    auto served = (*engines).diagnoser->Diagnose(job, c.log);
    ASSERT_TRUE(served.ok()) << served.status().ToString();
    auto cli = RunSchedmate("diagnose " + ShellQuote(path) + " --json");
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    auto j = nlohmann::json::parse(cli.out);
    EXPECT_EQ(std::string(FailureClassName(served->cls)), c.expected_class);
    EXPECT_EQ(ClassOfLabel(j.at("label").get<std::string>()),
              std::string(FailureClassName(served->cls)));
    EXPECT_EQ(j.at("category").get<std::string>(), served->category);
  }
}

}  // namespace
}  // namespace schedmate::service
