#include "failure/signature_set.h"

#include <gtest/gtest.h>

#include "builtin_signatures.h"
#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

std::string LabelledId(const SignatureSet& set, std::string_view line) {
  LineMatch m = set.MatchLine(line);
  return m.labelled < 0 ? "" : set.signatures()[static_cast<size_t>(m.labelled)].id;
}

TEST(SignatureSetTest, BuiltinLoadsWithCategoriesForEveryLabelledSignature) {
  const SignatureSet& set = BuiltinSignatures();
  EXPECT_GT(set.signatures().size(), 40u);
  for (const auto& sig : set.signatures()) {
    if (sig.label == FailureLabel::kUnknown) continue;
    const CategoryInfo* info = set.FindCategory(sig.category);
    ASSERT_NE(info, nullptr) << sig.id << " has no category entry " << sig.category;
    EXPECT_EQ(info->label, sig.label) << sig.id;
    EXPECT_FALSE(info->hint.empty()) << sig.category;
  }
}

TEST(SignatureSetTest, RolesFollowPriority) {
  const SignatureSet& set = BuiltinSignatures();
  struct Case {
    const char* name;
    const char* line;
    LineRole role;
  };
  const Case cases[] = {
      {"python exception", "ValueError: bad value", LineRole::kOrigin},
      {"rank-prefixed exception", "[rank3]: RuntimeError: CUDA error: out of memory",
       LineRole::kOrigin},
      {"dataloader re-raise is a wrapper",
       "KeyError: Caught KeyError in DataLoader worker process 0.", LineRole::kWrapper},
      {"traceback header", "Traceback (most recent call last):", LineRole::kTrace},
      {"frame", "  File \"train.py\", line 12, in <module>", LineRole::kTrace},
      {"chained separator",
       "During handling of the above exception, another exception occurred:", LineRole::kTrace},
      {"warning mentioning a driver", "UserWarning: CUDA initialization: driver too old",
       LineRole::kBenign},
      {"watchdog timeout is weak",
       "[Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE)",
       LineRole::kWeak},
      {"generic ERROR is weak", "2024-01-01 ERROR main failed", LineRole::kWeak},
      {"launcher summary", "ChildFailedError:", LineRole::kWrapper},
      {"ordinary output", "epoch 3 loss 0.25", LineRole::kNone},
      {"except clause in source is not an error", "    except RuntimeError:", LineRole::kNone},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(LineRoleName(set.MatchLine(c.line).role), LineRoleName(c.role));
  }
}

TEST(SignatureSetTest, MostSpecificLabelledSignatureSpeaks) {
  const SignatureSet& set = BuiltinSignatures();
  EXPECT_EQ(LabelledId(set, "RuntimeError: CUDA error: uncorrectable ECC error encountered"),
            "gpu_ecc");
  EXPECT_EQ(LabelledId(set, "RuntimeError: something odd happened"), "python_runtime_error");
  EXPECT_EQ(LabelledId(set, "XyzError: custom"), "python_exception");
  EXPECT_EQ(LabelledId(set, "NCCL WARN Cuda failure 999 'unknown error'"), "cuda_driver");
  EXPECT_EQ(LabelledId(set, "UserWarning: No space left on device"), "");  // benign: no label
}

TEST(SignatureSetTest, PrefilterAgreesWithLines) {
  const SignatureSet& set = BuiltinSignatures();
  EXPECT_FALSE(set.MayContainFailure("epoch 1 loss 0.3\nepoch 2 loss 0.2\n"));
  EXPECT_TRUE(set.MayContainFailure("epoch 1 loss 0.3\nOSError: [Errno 5] Input/output error\n"));
}

Status AddAndCompile(SignatureSet& set, const std::string& yaml) {
  SM_RETURN_IF_ERROR(set.AddYaml(yaml, "ops.yaml"));
  return set.Compile();
}

TEST(SignatureSetTest, ErrorsNameFileLineAndEntry) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* want;  // substring of the message
  };
  const Case cases[] = {
      {"bad role", "signatures:\n  - id: a\n    role: fatal\n    patterns: [x]\n",
       "ops.yaml:3: signatures[0] (id 'a'): unknown role 'fatal'"},
      {"bad regex", "signatures:\n  - id: b\n    patterns: ['(unclosed']\n",
       "ops.yaml:3: signatures[0] (id 'b'): patterns[0]: invalid regular expression"},
      {"unknown key", "signatures:\n  - id: c\n    patern: [x]\n",
       "ops.yaml:3: signatures[0] (id 'c'): unknown key 'patern'"},
      {"missing id", "signatures:\n  - patterns: [x]\n",
       "ops.yaml:2: signatures[0]: missing key 'id'"},
      {"label without category",
       "signatures:\n  - id: d\n    label: application\n    patterns: [x]\n", "needs a 'category'"},
      {"bad label",
       "signatures:\n  - id: e\n    label: hardware\n    category: x\n    patterns: [x]\n",
       "ops.yaml:3: signatures[0] (id 'e'): label 'hardware'"},
      {"bad weight", "signatures:\n  - id: f\n    weight: 2\n    patterns: [x]\n",
       "weight must be"},
      {"duplicate id", "signatures:\n  - id: g\n    patterns: [x]\n  - id: g\n    patterns: [y]\n",
       "ops.yaml:4: signatures[1] (id 'g'): duplicate id"},
      {"invalid yaml", "signatures:\n  - id: [\n", "ops.yaml:"},
      {"bad version", "version: 2\n", "unsupported version"},
      {"no patterns", "signatures:\n  - id: h\n    patterns: []\n", "no patterns"},
      {"symptom without label", "signatures:\n  - id: i\n    symptom: true\n    patterns: [x]\n",
       "ops.yaml:2: signatures[0] (id 'i'): a symptom signature needs a 'label'"},
      {"bad symptom",
       "signatures:\n  - id: j\n    label: application\n    category: x\n    symptom: often\n"
       "    patterns: [x]\n",
       "'symptom' must be true or false"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SignatureSet set;
    Status st = AddAndCompile(set, c.yaml);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
  }
}

TEST(SignatureSetTest, SymptomFlagIsReadAndDefaultsToFalse) {
  SignatureSet set;
  ASSERT_OK(AddAndCompile(set,
                          "signatures:\n"
                          "  - id: lost_lease\n    label: infrastructure\n    category: fs\n"
                          "    symptom: true\n    patterns: ['lost lease']\n"
                          "  - id: bad_shard\n    label: application\n    category: data\n"
                          "    patterns: ['bad shard']\n"));
  ASSERT_EQ(set.signatures().size(), 2u);
  EXPECT_TRUE(set.signatures()[0].symptom);
  EXPECT_FALSE(set.signatures()[1].symptom);
  // The built-in collective timeout and lost-peer signatures are symptoms; causes are not.
  const SignatureSet& builtin = BuiltinSignatures();
  auto find = [&](std::string_view id) -> const Signature* {
    for (const auto& sig : builtin.signatures()) {
      if (sig.id == id) return &sig;
    }
    return nullptr;
  };
  for (const char* id :
       {"nccl_timeout", "nccl_timeout_non_gradient_collective", "peer_gone", "sigterm"}) {
    SCOPED_TRACE(id);
    ASSERT_NE(find(id), nullptr);
    EXPECT_TRUE(find(id)->symptom);
  }
  for (const char* id : {"gpu_ecc", "node_failure", "storage_full", "cuda_oom"}) {
    SCOPED_TRACE(id);
    ASSERT_NE(find(id), nullptr);
    EXPECT_FALSE(find(id)->symptom);
  }
}

// A scheduler's preemption notice logged at WARNING or INFO level is a failure line, while an
// ordinary warning stays benign and libjpeg's corrupt-data warnings are weak.
TEST(SignatureSetTest, SchedulerNoticesOutrankTheWarningRule) {
  const SignatureSet& set = BuiltinSignatures();
  struct Case {
    const char* line;
    LineRole role;
    const char* id;  // labelled signature speaking for the line ("" for none)
  };
  const Case cases[] = {
      {"submitit WARNING (2024-06-01 10:11:12,131) - Caught signal SIGUSR2 on n44: this job is "
       "preempted.",
       LineRole::kOrigin, "scheduler_preemption_notice"},
      {"[lightning] INFO: Handling auto-requeue signal: 10", LineRole::kOrigin,
       "scheduler_preemption_notice"},
      {"submitit WARNING (2024-06-01 10:11:12,131) - Bypassing signal SIGCONT", LineRole::kBenign,
       ""},
      {"Corrupt JPEG data: 7 extraneous bytes before marker 0xd9", LineRole::kWeak,
       "image_decode_warning"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    LineMatch m = set.MatchLine(c.line);
    EXPECT_EQ(LineRoleName(m.role), LineRoleName(c.role));
    std::string id = m.labelled < 0 ? "" : set.signatures()[static_cast<size_t>(m.labelled)].id;
    EXPECT_EQ(id, c.id);
  }
}

TEST(SignatureSetTest, OperatorFileAddsAndOverrides) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("site.yaml"), R"(version: 1
signatures:
  - id: site_storage
    role: origin
    label: infrastructure
    category: storage
    weight: 0.9
    patterns: ['(?i)vastfs: backend unreachable']
  - id: python_runtime_error
    role: origin
    priority: 11
    label: infrastructure
    category: runtime_error
    weight: 0.3
    patterns: ['RuntimeError:']
)"));
  SignatureSet set;
  ASSERT_OK(set.AddYaml(BuiltinSignatureYaml(), "builtin"));
  size_t before = set.signatures().size();
  ASSERT_OK(set.AddFile(dir.File("site.yaml")));
  ASSERT_OK(set.Compile());
  EXPECT_EQ(set.signatures().size(), before + 1);  // one new, one replaced
  EXPECT_EQ(LabelledId(set, "VASTFS: backend unreachable"), "site_storage");
  LineMatch m = set.MatchLine("RuntimeError: odd");
  ASSERT_GE(m.labelled, 0);
  EXPECT_EQ(set.signatures()[static_cast<size_t>(m.labelled)].label, FailureLabel::kInfrastructure);

  auto missing = set.AddFile(dir.File("absent.yaml"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace schedmate::failure
