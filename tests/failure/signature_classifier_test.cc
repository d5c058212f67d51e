#include "failure/signature_classifier.h"

#include <gtest/gtest.h>

#include "builtin_signatures.h"
#include "failure/signature_set.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

LocatedLine Line(int64_t no, std::string text, LineRole role = LineRole::kOrigin) {
  return LocatedLine{LogLine{no, std::move(text)}, role, 0};
}

TEST(SignatureClassifierTest, Categories) {
  struct Case {
    const char* line;
    FailureLabel label;
    const char* category;
  };
  const Case cases[] = {
      {"RuntimeError: CUDA error: uncorrectable ECC error encountered",
       FailureLabel::kInfrastructure, "gpu_hardware"},
      {"NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
       FailureLabel::kInfrastructure, "gpu_hardware"},
      {"Failed to initialize NVML: Driver/library version mismatch", FailureLabel::kInfrastructure,
       "cuda_driver"},
      {"RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please "
       "update your GPU driver",
       FailureLabel::kInfrastructure, "cuda_driver"},
      {"RuntimeError: CUDA error: unspecified launch failure", FailureLabel::kInfrastructure,
       "cuda_launch_failure"},
      {"h1:1:2 [0] NCCL WARN NET/IB : Got completion from peer with error 12",
       FailureLabel::kInfrastructure, "network_ib_nccl"},
      {"OSError: [Errno 28] No space left on device", FailureLabel::kInfrastructure, "storage"},
      {"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
       "shared memory (shm).",
       FailureLabel::kInfrastructure, "shm"},
      {"socket.timeout: timed out", FailureLabel::kInfrastructure, "external_service"},
      {"slurmstepd: error: *** JOB 3 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO PREEMPTION ***",
       FailureLabel::kInfrastructure, "preemption"},
      {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
       FailureLabel::kApplication, "cuda_oom"},
      // NCCL could not allocate its buffers: GPU memory, not the network.
      {"node1:1:2 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'",
       FailureLabel::kApplication, "cuda_oom"},
      {"srun: error: Unable to create step for job 123: Memory required by task is not available",
       FailureLabel::kApplication, "resource_request"},
      {"RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at "
       "non-singleton dimension 1",
       FailureLabel::kApplication, "shape_mismatch"},
      {"RuntimeError: Expected all tensors to be on the same device, but found at least two "
       "devices, cuda:0 and cpu!",
       FailureLabel::kApplication, "dtype_device_mismatch"},
      {"ModuleNotFoundError: No module named 'apex'", FailureLabel::kApplication,
       "import_or_api_version"},
      {"FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",
       FailureLabel::kApplication, "file_not_found"},
      {"KeyError: 'image_id'", FailureLabel::kApplication, "data_error"},
      {"FloatingPointError: Loss became infinite or NaN at iteration=10!",
       FailureLabel::kApplication, "nan_loss"},
      {"AssertionError: num_classes must be positive", FailureLabel::kApplication, "assertion"},
      {"RuntimeError: CUDA error: device-side assert triggered", FailureLabel::kApplication,
       "device_assert"},
      {"Killed", FailureLabel::kApplication, "host_oom_kill"},
      {"omegaconf.errors.ConfigAttributeError: Key 'lr' is not in struct",
       FailureLabel::kApplication, "config_error"},
      // Storage: errno texts of other libcs, SQLite, Python errno numbers, the kernel.
      {"OSError: [Errno 116] Stale NFS file handle: '/nfs/proj/shards/part-0003.tar'",
       FailureLabel::kInfrastructure, "storage"},
      {"cp: error writing '/home/ab/out/w.bin': Disc quota exceeded", FailureLabel::kInfrastructure,
       "storage"},
      {"sqlite3.OperationalError: disk I/O error", FailureLabel::kInfrastructure, "storage"},
      {"sqlite3.OperationalError: database or disk is full", FailureLabel::kInfrastructure,
       "storage"},
      {"[ 9912.554] blk_update_request: I/O error, dev sdc, sector 88172 op 0x0:(READ)",
       FailureLabel::kInfrastructure, "storage"},
      // The loader could not assemble the job's binaries on this node.
      {"ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
       FailureLabel::kInfrastructure, "library_environment"},
      {"python3: error while loading shared libraries: libnccl.so.2: cannot open shared object "
       "file: No such file or directory",
       FailureLabel::kInfrastructure, "library_environment"},
      {"ImportError: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by "
       "/env/lib/python3.11/site-packages/ext/_C.so)",
       FailureLabel::kInfrastructure, "library_environment"},
      {"OSError: /env/lib/libtorch_cuda.so: undefined symbol: ncclGroupSimulateEnd",
       FailureLabel::kInfrastructure, "library_environment"},
      {"n2:71:90 [1] init.cc:900 NCCL WARN Mismatched NCCL version detected : rank 1 version "
       "21903 rank 0 version 22005",
       FailureLabel::kInfrastructure, "library_environment"},
      // Data: decoder failures of the image and serialisation libraries.
      {"OSError: broken data stream when reading image file", FailureLabel::kApplication,
       "data_error"},
      {"RuntimeError: unexpected EOF, expected 1184 more bytes. The file might be corrupted.",
       FailureLabel::kApplication, "data_error"},
      {"tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 4411",
       FailureLabel::kApplication, "data_error"},
      {"libpng error: Read Error", FailureLabel::kApplication, "data_error"},
      // Scheduler notices at INFO/WARNING level.
      {"submitit WARNING (2025-02-03 04:05:06,789) - Caught signal SIGUSR2 on gpu-b3: this job is "
       "preempted.",
       FailureLabel::kInfrastructure, "preemption"},
      {"slurmstepd: error: *** JOB 5512 ON gpu-c2 CANCELLED AT 2025-02-03T04:05:06 DUE TO JOB "
       "REQUEUE ***",
       FailureLabel::kInfrastructure, "preemption"},
      {"slurmstepd: error: *** JOB 8870 CANCELLED AT 2016-05-06T07:08:09 DUE TO NODE n017 FAILURE "
       "***",
       FailureLabel::kInfrastructure, "node_failure"},
  };
  SignatureClassifier classifier(BuiltinSignatures(), nullptr);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    Classification r = classifier.ClassifyLines(Line(1, c.line), {});
    EXPECT_EQ(FailureLabelName(r.label), FailureLabelName(c.label));
    EXPECT_EQ(r.category, c.category);
    EXPECT_GE(r.confidence, 0.45);
    ASSERT_FALSE(r.evidence.empty());
    EXPECT_EQ(r.evidence[0].line_no, 1);
  }
}

TEST(SignatureClassifierTest, UnknownWhenAmbiguous) {
  SignatureClassifier classifier(BuiltinSignatures(), nullptr);
  for (const char* line :
       {"ERROR: job failed", "Segmentation fault (core dumped)",
        "RuntimeError: something unexpected happened",
        "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***"}) {
    SCOPED_TRACE(line);
    Classification r = classifier.ClassifyLines(Line(4, line), {});
    EXPECT_EQ(r.label, FailureLabel::kUnknown);
    EXPECT_LT(r.confidence, 0.45);
  }
}

TEST(SignatureClassifierTest, CascadeNamesWhatTheRootHides) {
  SignatureClassifier classifier(BuiltinSignatures(), nullptr);
  std::vector<LocatedLine> followers{
      Line(10, "The actor died because its node has died. Node Id: abc")};
  Classification r = classifier.ClassifyLines(
      Line(4, "The actor died unexpectedly before finishing this task.", LineRole::kWrapper),
      followers);
  EXPECT_EQ(r.label, FailureLabel::kInfrastructure);
  EXPECT_EQ(r.category, "node_failure");
  EXPECT_LT(r.confidence, 0.9);  // second-hand evidence counts less
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].line_no, 10);
}

TEST(SignatureClassifierTest, RootOutweighsCascadeOfTheOtherClass) {
  SignatureClassifier classifier(BuiltinSignatures(), nullptr);
  // A cascade line that names a cause of the other class (not a symptom) lowers the confidence.
  std::vector<LocatedLine> followers{
      Line(8, "h3:41:57 [2] NCCL WARN NET/IB : Got completion from peer with error 12")};
  Classification r = classifier.ClassifyLines(
      Line(3, "RuntimeError: CUDA out of memory. Tried to allocate 1 GiB"), followers);
  EXPECT_EQ(r.label, FailureLabel::kApplication);
  EXPECT_EQ(r.category, "cuda_oom");
  Classification alone = classifier.ClassifyLines(
      Line(3, "RuntimeError: CUDA out of memory. Tried to allocate 1 GiB"), {});
  EXPECT_LT(r.confidence, alone.confidence);  // disagreement lowers confidence
}

// Collective timeouts and lost peers say that some rank stopped, not why: after a labelled root
// cause they corroborate it instead of voting for the network.
TEST(SignatureClassifierTest, SymptomsAfterTheRootSpeakForIt) {
  SignatureClassifier classifier(BuiltinSignatures(), nullptr);
  const LocatedLine root = Line(5, "RuntimeError: expected a contiguous tensor for the reduction");
  std::vector<LocatedLine> cascade{
      Line(9,
           "[rank1]:[E1203 04:05:06.000000001 ProcessGroupNCCL.cpp:700] [Rank 1] Watchdog caught "
           "collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE, NumelIn=5000000, "
           "NumelOut=5000000, Timeout(ms)=300000) ran for 300101 milliseconds before timing out.",
           LineRole::kWeak),
      Line(11, "n7:88:99 [3] NCCL WARN Net : Connection closed by remote peer 10.1.2.3<4242>"),
      Line(12, "[rank2]: Received SIGTERM: 15", LineRole::kWeak)};
  Classification r = classifier.ClassifyLines(root, cascade);
  EXPECT_EQ(r.label, FailureLabel::kApplication);
  EXPECT_EQ(r.category, "runtime_error");  // the root's category, never the symptom's
  EXPECT_EQ(r.decided_by, "signature:python_runtime_error");
  Classification alone = classifier.ClassifyLines(root, {});
  EXPECT_EQ(alone.label, FailureLabel::kUnknown);  // a bare RuntimeError is not enough
  EXPECT_GT(r.confidence, alone.confidence);
  ASSERT_EQ(r.evidence.size(), 4u);
  EXPECT_EQ(r.evidence[0].line_no, 5);
  EXPECT_EQ(r.evidence[1].source, "nccl_timeout");
  EXPECT_EQ(r.evidence[2].source, "peer_gone");
  EXPECT_EQ(r.evidence[3].source, "sigterm");

  // Before a labelled root too (another rank's timeout printed first).
  std::vector<LocatedLine> none;
  std::vector<LocatedLine> before{cascade[0]};
  Classification b = classifier.ClassifyLines(Line(20, "KeyError: 'attention_mask'"), none, before);
  EXPECT_EQ(b.label, FailureLabel::kApplication);
  EXPECT_EQ(b.category, "data_error");
  EXPECT_GT(b.confidence,
            classifier.ClassifyLines(Line(20, "KeyError: 'attention_mask'"), {}).confidence);

  // Without a labelled root a symptom speaks for itself.
  Classification unlabelled =
      classifier.ClassifyLines(Line(2, "ERROR: rank 3 stopped", LineRole::kWeak), cascade);
  EXPECT_EQ(unlabelled.label, FailureLabel::kInfrastructure);

  // A symptom that is itself the root keeps its own label.
  Classification own = classifier.ClassifyLines(cascade[0], {});
  EXPECT_EQ(own.label, FailureLabel::kInfrastructure);
  EXPECT_EQ(own.category, "nccl_timeout");
}

TEST(SignatureClassifierTest, LearnedExamplesOverrideGeneralRules) {
  ExampleStore store;
  store.Add({FailureLabel::kInfrastructure, "site_fs",
             MaskLogLine("RuntimeError: weka client lost lease on /mnt/weka/run3")});
  SignatureClassifier classifier(BuiltinSignatures(), &store);
  Classification r = classifier.ClassifyLines(
      Line(7, "RuntimeError: weka client lost lease on /mnt/weka/run9"), {});
  EXPECT_EQ(r.label, FailureLabel::kInfrastructure);
  EXPECT_EQ(r.category, "site_fs");
  EXPECT_EQ(r.decided_by, "examples");
  EXPECT_GT(r.confidence, 0.8);
  // Unrelated failures are still decided by the signatures.
  Classification other = classifier.ClassifyLines(Line(2, "KeyError: 'label'"), {});
  EXPECT_EQ(other.label, FailureLabel::kApplication);
  EXPECT_EQ(other.decided_by, "signature:data_error");
}

}  // namespace
}  // namespace schedmate::failure
