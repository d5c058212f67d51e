#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "advisor/builtin_extractor.h"
#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::advisor {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::TestDataPath;

JobMetadata ExtractOrDie(const std::string& root, const std::string& entry) {
  BuiltinMetadataExtractor x;
  Result<JobMetadata> m = x.Extract({.path = root + "/" + entry, .root = root});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : JobMetadata{};
}

json Val(const JobMetadata& m, const std::string& f) {
  auto it = m.values.find(f);
  return it == m.values.end() ? json(nullptr) : it->second;
}
std::string Src(const JobMetadata& m, const std::string& f) {
  auto it = m.sources.find(f);
  return it == m.sources.end() ? "" : it->second;
}

// argparse default < YAML config < command line; `args.epochs = 60` after parsing wins over all.
TEST(JobMetadataTest, CountsOutOfRangeOrNotFiniteAreNone) {
  JobMetadata m;
  m.values["max_steps"] = 1e30;
  m.values["global_batch_size"] = 256.0;
  m.values["num_gpus"] = -4;
  m.values["epochs"] = std::numeric_limits<double>::quiet_NaN();
  m.values["model"] = "gpt2";
  EXPECT_FALSE(m.Count("max_steps", 1'000'000'000'000'000));
  EXPECT_EQ(m.Count("global_batch_size", INT32_MAX), 256);
  EXPECT_FALSE(m.Count("num_gpus", 1'000'000));
  EXPECT_FALSE(m.Count("epochs", 1000));
  EXPECT_FALSE(m.Count("model", 10));
  JobRecord j;
  j.iterations = 7;
  m.ApplyWorkloadTo(j);
  EXPECT_EQ(j.iterations, 7);  // the out-of-range value left it alone
  EXPECT_EQ(j.batch_size, 256);
  EXPECT_EQ(j.model, "gpt2");
}

TEST(ExtractorTest, ArgparseConfigCommandLinePrecedence) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/argparse_job"), "run.sh");
  EXPECT_EQ(Val(m, "learning_rate"), json(0.01));  // CLI beats cfg.yaml 0.05 and default 0.1
  EXPECT_EQ(Src(m, "learning_rate"), "run.sh:10");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(128));  // config beats default 32
  EXPECT_EQ(Src(m, "per_device_batch_size"), "cfg.yaml:3");
  EXPECT_EQ(Val(m, "epochs"), json(60));  // in-code override beats config 50 and default 90
  EXPECT_EQ(Src(m, "epochs"), "train.py:20");
  EXPECT_EQ(Val(m, "model"), json("resnet50"));  // config beats default resnet18
  EXPECT_EQ(Val(m, "model_family"), json("resnet"));
  EXPECT_EQ(Val(m, "num_gpus"), json(2));  // $NGPU expanded
  EXPECT_EQ(Src(m, "num_gpus"), "run.sh:8");
  EXPECT_EQ(Val(m, "global_batch_size"), json(256));
  EXPECT_EQ(Val(m, "gradient_accumulation"), json(1));
  EXPECT_EQ(Val(m, "precision"), json("amp"));
  EXPECT_EQ(Val(m, "optimizer"), json("SGD"));
  EXPECT_EQ(Val(m, "launcher"), json("torchrun"));
  EXPECT_EQ(Val(m, "num_nodes"), json(1));
  EXPECT_EQ(Val(m, "image_size"), json(224));  // imagenet
  EXPECT_EQ(Val(m, "framework"), json("pytorch"));
  EXPECT_EQ(m.files_skipped, 0);
}

// Hydra: defaults list, a group choice overridden on the command line, dotted overrides;
// srun + torchrun with the node count from #SBATCH.
TEST(ExtractorTest, HydraDefaultsAndOverrides) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/hydra_job"), "job.sbatch");
  EXPECT_EQ(Val(m, "epochs"), json(30));  // trainer.max_epochs=30 beats config.yaml 10
  EXPECT_EQ(Src(m, "epochs"), "job.sbatch:14");
  EXPECT_EQ(Val(m, "learning_rate"), json(3e-4));  // optimizer.lr=$LR beats the group file 0.001
  EXPECT_EQ(Val(m, "optimizer"), json("AdamW"));
  EXPECT_EQ(Src(m, "optimizer"), "conf/optimizer/adamw.yaml:1");
  EXPECT_EQ(Val(m, "image_size"), json(32));  // from model=vit_base, not the default resnet50
  EXPECT_EQ(Src(m, "image_size"), "conf/model/vit_base.yaml:2");
  EXPECT_EQ(Val(m, "dataset"), json("cifar10"));  // quoted "data.name=cifar10"
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(64));
  EXPECT_EQ(Val(m, "precision"), json("bf16"));
  EXPECT_EQ(Val(m, "num_nodes"), json(2));
  EXPECT_EQ(Val(m, "num_gpus"), json(8));  // 4 per node x 2 nodes
  EXPECT_EQ(Val(m, "global_batch_size"), json(512));
  EXPECT_EQ(Val(m, "launcher"), json("torchrun"));
  EXPECT_EQ(Val(m, "framework"), json("lightning"));
}

// mmengine `_base_` inheritance: the child overrides lr and batch size, inherits the rest.
TEST(ExtractorTest, MmengineBaseInheritanceThroughWrapperScript) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/mmengine_job"), "run.sh");
  EXPECT_EQ(Val(m, "learning_rate"), json(0.05));
  EXPECT_EQ(Src(m, "learning_rate"), "configs/resnet18_cifar.py:5");
  EXPECT_EQ(Val(m, "optimizer"), json("SGD"));
  EXPECT_EQ(Src(m, "optimizer"), "configs/_base_/default_runtime.py:3");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(64));
  EXPECT_EQ(Val(m, "epochs"), json(100));
  EXPECT_EQ(Val(m, "model"), json("ResNet18"));
  EXPECT_EQ(Val(m, "num_gpus"), json(4));  // $2 of `bash tools/dist_train.sh cfg 4`
  EXPECT_EQ(Src(m, "num_gpus"), "tools/dist_train.sh:6");
  EXPECT_EQ(Val(m, "global_batch_size"), json(256));
  EXPECT_EQ(Val(m, "launcher"), json("torch.distributed.launch"));
  EXPECT_EQ(Val(m, "image_size"), json(32));
  EXPECT_EQ(Val(m, "dataset"), json("data/cifar10"));
}

TEST(ExtractorTest, ScriptTextWithSbatchWrapAndContinuations) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.script_text =
      "#!/bin/bash\n"
      "sbatch --gres=gpu:2 --nodes=1 \\\n"
      "  --wrap=\"module load pytorch; python train.py --epochs 5 --lr=1e-3 --batch_size 16\"\n";
  s.root = "/nonexistent";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "epochs"), json(5));
  EXPECT_EQ(Val(*m, "learning_rate"), json(1e-3));
  EXPECT_EQ(Val(*m, "per_device_batch_size"), json(16));
  EXPECT_EQ(Val(*m, "num_gpus"), json(2));
  EXPECT_EQ(Val(*m, "framework"), json("pytorch"));
  EXPECT_EQ(Val(*m, "launcher").get<std::string>().substr(0, 6), "sbatch");
}

TEST(ExtractorTest, CudaVisibleDevicesIsAnIndexNotACount) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.script_text =
      "CUDA_VISIBLE_DEVICES=3 python finetune.py --model_name_or_path meta-llama/Llama-2-7b-hf\n";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "num_gpus"), json(1));
  EXPECT_EQ(Val(*m, "params"), json("7B"));
  EXPECT_EQ(Val(*m, "model_family"), json("llama"));
  EXPECT_EQ(Val(*m, "framework"), json("hf-transformers"));
}

// torchtune: `tune run` with torchrun options, a packaged config naming the model, and key=value
// overrides; a local YAML config with torchtune `_component_` builders.
TEST(ExtractorTest, TorchtuneRecipes) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.script_text =
      "#!/bin/bash\n#SBATCH --gres=gpu:4\n"
      "tune run --nproc_per_node 4 full_finetune_distributed --config llama3/8B_full "
      "batch_size=2 epochs=1 gradient_accumulation_steps=8\n";
  s.root = "/nonexistent";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "framework"), json("torchtune"));
  EXPECT_EQ(Val(*m, "launcher"), json("torchtune"));
  EXPECT_EQ(Val(*m, "model"), json("llama3-8B"));
  EXPECT_EQ(Val(*m, "params"), json("8B"));
  EXPECT_EQ(Val(*m, "num_gpus"), json(4));
  EXPECT_EQ(Val(*m, "per_device_batch_size"), json(2));
  EXPECT_EQ(Val(*m, "global_batch_size"), json(64));
  EXPECT_EQ(Val(*m, "precision"), json("bf16"));  // the packaged configs' dtype
  // A single-device recipe: one process; qwen2_5 reads as qwen2.5.
  s.script_text = "tune run lora_finetune_single_device --config qwen2_5/7B_lora_single_device\n";
  m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "model"), json("qwen2.5-7B"));
  EXPECT_EQ(Val(*m, "num_gpus"), json(1));

  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("run.sh"),
                              "#!/bin/bash\ntune run --nnodes 1 --nproc_per_node 8 "
                              "full_finetune_distributed --config ./my.yaml\n"));
  ASSERT_OK(WriteStringToFile(dir.File("my.yaml"),
                              "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                              "dataset:\n  _component_: torchtune.datasets.alpaca_dataset\n"
                              "batch_size: 4\nepochs: 2\ndtype: fp32\n"
                              "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n"));
  JobMetadata y = ExtractOrDie(dir.path(), "run.sh");
  EXPECT_EQ(Val(y, "model"), json("llama3_1_8b"));
  EXPECT_EQ(Src(y, "model"), "my.yaml:2");
  EXPECT_EQ(Val(y, "model_family"), json("llama"));
  EXPECT_EQ(Val(y, "dataset"), json("alpaca"));
  EXPECT_EQ(Val(y, "optimizer"), json("AdamW"));
  EXPECT_EQ(Val(y, "learning_rate"), json(2e-5));
  EXPECT_EQ(Val(y, "num_gpus"), json(8));
  EXPECT_EQ(Val(y, "global_batch_size"), json(32));
  EXPECT_EQ(Val(y, "precision"), json("fp32"));  // the YAML says so: no packaged-config default
}

// axolotl: `accelerate launch -m axolotl.cli.train config.yml`; datasets is a list of entries.
TEST(ExtractorTest, AxolotlConfigWithADatasetList) {
  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("run.sh"),
                              "#!/bin/bash\n#SBATCH --gres=gpu:2\n"
                              "accelerate launch -m axolotl.cli.train config.yml\n"));
  ASSERT_OK(WriteStringToFile(dir.File("config.yml"),
                              "base_model: mistralai/Mistral-7B-v0.1\ndatasets:\n"
                              "  - path: tatsu-lab/alpaca\n    type: alpaca\n"
                              "  - path: ./local/chat.jsonl\n    type: sharegpt\n"
                              "sequence_len: 4096\nmicro_batch_size: 2\nnum_epochs: 3\n"));
  JobMetadata m = ExtractOrDie(dir.path(), "run.sh");
  EXPECT_EQ(Val(m, "dataset"), json("tatsu-lab/alpaca, ./local/chat.jsonl"));
  EXPECT_EQ(Val(m, "model"), json("mistralai/Mistral-7B-v0.1"));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(2));
  EXPECT_EQ(Val(m, "epochs"), json(3));
  EXPECT_EQ(Val(m, "sequence_length"), json(4096));
  EXPECT_EQ(Val(m, "framework"), json("axolotl + accelerate"));
  EXPECT_EQ(Val(m, "optimizer"), json("AdamW (library default)"));  // axolotl uses HF Trainer
}

// The variables Slurm sets from #SBATCH are expanded: the process count is known.
TEST(ExtractorTest, SlurmVariablesFromDirectives) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.script_text =
      "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n"
      "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=$SLURM_GPUS_ON_NODE train.py "
      "--batch-size 32\n";
  s.root = "/nonexistent";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "num_nodes"), json(2));
  EXPECT_EQ(Val(*m, "num_gpus"), json(8));
  EXPECT_EQ(Val(*m, "global_batch_size"), json(256));
  // --gres=gpu:TYPE:N gives SLURM_GPUS_ON_NODE too.
  s.script_text =
      "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\n"
      "torchrun --nproc_per_node=$SLURM_GPUS_ON_NODE train.py --batch-size 16\n";
  m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "num_gpus"), json(2));
  EXPECT_EQ(Val(*m, "global_batch_size"), json(32));
}

// Framework and dataset vocabulary: NeMo, t5x (JAX), Lightning CLI backbones, library datasets.
TEST(ExtractorTest, FrameworksAndLibraryDatasets) {
  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("nemo.sh"),
                              "python megatron_gpt_pretraining.py trainer.devices=8 "
                              "trainer.max_steps=1000\n"));
  ASSERT_OK(WriteStringToFile(dir.File("megatron_gpt_pretraining.py"), "import nemo\n"));
  EXPECT_EQ(Val(ExtractOrDie(dir.path(), "nemo.sh"), "framework"), json("nemo"));
  ASSERT_OK(WriteStringToFile(dir.File("t5x.sh"),
                              "python -m t5x.train --gin_file=t5_1_1/base.gin "
                              "--gin.TRAIN_STEPS=1000\n"));
  EXPECT_EQ(Val(ExtractOrDie(dir.path(), "t5x.sh"), "framework"), json("jax"));
  ASSERT_OK(WriteStringToFile(dir.File("cli.sh"), "python cli.py fit --config cli.yaml\n"));
  ASSERT_OK(
      WriteStringToFile(dir.File("cli.py"), "from lightning.pytorch.cli import LightningCLI\n"));
  ASSERT_OK(WriteStringToFile(dir.File("cli.yaml"),
                              "model:\n  class_path: m.Classifier\n  init_args:\n"
                              "    backbone: resnet34\n"));
  JobMetadata l = ExtractOrDie(dir.path(), "cli.sh");
  EXPECT_EQ(Val(l, "model"), json("resnet34"));
  EXPECT_EQ(Val(l, "framework"), json("lightning"));
  ASSERT_OK(WriteStringToFile(dir.File("k.sh"), "python k.py\n"));
  ASSERT_OK(WriteStringToFile(dir.File("k.py"),
                              "from tensorflow import keras\n"
                              "(x, y), _ = keras.datasets.cifar10.load_data()\n"));
  JobMetadata k = ExtractOrDie(dir.path(), "k.sh");
  EXPECT_EQ(Val(k, "dataset"), json("cifar10"));
  EXPECT_EQ(Src(k, "dataset"), "k.py:2");
  ASSERT_OK(WriteStringToFile(dir.File("v.sh"), "python v.py\n"));
  ASSERT_OK(WriteStringToFile(dir.File("v.py"),
                              "import torchvision\n"
                              "a = torchvision.datasets.ImageFolder('/data/x')\n"
                              "b = torchvision.datasets.CIFAR100(root='.', download=True)\n"));
  JobMetadata v = ExtractOrDie(dir.path(), "v.sh");
  EXPECT_EQ(Val(v, "dataset"), json("CIFAR100"));  // ImageFolder is a loader, not a dataset
  EXPECT_EQ(Val(v, "framework"), json("pytorch"));
}

// Launchers and configs that are not in the job's sources, read by their well-known conventions.
TEST(ExtractorTest, ConfigNamesAndToolLaunchersOutsideTheSources) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.root = "/nonexistent";
  // OpenMMLab: tools/dist_train.sh CONFIG GPUS; the config name carries model, batch, schedule.
  s.script_text = "bash tools/dist_train.sh configs/rtmdet/rtmdet_l_8xb32-300e_coco.py 4 --amp\n";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "model"), json("rtmdet_l"));
  EXPECT_EQ(Val(*m, "per_device_batch_size"), json(32));
  EXPECT_EQ(Val(*m, "epochs"), json(300));
  EXPECT_EQ(Val(*m, "dataset"), json("COCO"));
  EXPECT_EQ(Val(*m, "num_gpus"), json(4));  // the job's GPUS, not the config's reference 8
  EXPECT_EQ(Val(*m, "global_batch_size"), json(128));
  EXPECT_EQ(Val(*m, "framework"), json("mmdetection"));
  EXPECT_NE(Src(*m, "model").find("derived: config name"), std::string::npos);
  s.script_text = "python tools/train.py configs/faster_rcnn/faster-rcnn_r50_fpn_2x_coco.py\n";
  m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "model"), json("faster-rcnn_r50_fpn"));
  EXPECT_EQ(Val(*m, "epochs"), json(24));
  // detectron2: model-zoo config name plus yacs opts on the command line (which win).
  s.script_text =
      "python tools/train_net.py --config-file configs/COCO-Detection/faster_rcnn_R_50_FPN_3x.yaml "
      "--num-gpus 8 SOLVER.IMS_PER_BATCH 16 SOLVER.BASE_LR 0.02\n";
  m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "model"), json("faster_rcnn_R_50_FPN"));
  EXPECT_EQ(Val(*m, "dataset"), json("COCO"));
  EXPECT_EQ(Val(*m, "max_steps"), json(270000));  // 3x = 270k iterations
  EXPECT_EQ(Val(*m, "global_batch_size"), json(16));
  EXPECT_EQ(Val(*m, "learning_rate"), json(0.02));
  EXPECT_EQ(Val(*m, "framework"), json("detectron2"));
  // fairseq-train: the data directory names the dataset.
  s.script_text =
      "fairseq-train data-bin/wmt16_en_de_bpe32k --arch transformer_vaswani_wmt_en_de_big "
      "--lr 0.0005 --max-update 300000 --fp16\n";
  m = x.Extract(s);
  ASSERT_OK(m);
  EXPECT_EQ(Val(*m, "framework"), json("fairseq"));
  EXPECT_EQ(Val(*m, "dataset"), json("wmt16_en_de_bpe32k"));
  EXPECT_EQ(Val(*m, "model"), json("transformer_vaswani_wmt_en_de_big"));
  EXPECT_EQ(Val(*m, "max_steps"), json(300000));
  EXPECT_EQ(Val(*m, "precision"), json("fp16"));
}

// Defect 7: a config symlinked out of the job directory was read (as root, anything: the job's
// owner chooses the link). It is skipped and counted; the job directory itself may be a symlink.
TEST(ExtractorTest, ConfigSymlinkedOutOfTheJobDirectoryIsSkipped) {
  TempDir tmp;
  namespace fs = std::filesystem;
  const fs::path job = fs::path(tmp.path()) / "job";
  fs::create_directories(job);
  for (const char* f : {"run.sh", "train.py", "cfg.yaml"}) {
    fs::copy_file(TestDataPath(std::string("advisor/argparse_job/") + f), job / f);
  }
  // Inside, through a symlink to the directory: read as usual.
  fs::create_directory_symlink(job, fs::path(tmp.path()) / "job-link");
  JobMetadata inside = ExtractOrDie(tmp.File("job-link"), "run.sh");
  EXPECT_EQ(Val(inside, "per_device_batch_size"), json(128));
  EXPECT_EQ(inside.files_skipped, 0);
  // The config replaced by a link to a file outside the job directory.
  ASSERT_OK(WriteStringToFile(tmp.File("outside.yaml"), "batch_size: 999\nmodel: secret\n"));
  fs::remove(job / "cfg.yaml");
  fs::create_symlink(tmp.File("outside.yaml"), job / "cfg.yaml");
  JobMetadata m = ExtractOrDie(job.string(), "run.sh");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(32));  // the program's default, not 999
  EXPECT_NE(Val(m, "model"), json("secret"));
  EXPECT_EQ(m.files_skipped, 1);
  bool noted = false;
  for (const auto& n : m.notes)
    noted = noted || n.find("outside the job directory") != std::string::npos;
  EXPECT_TRUE(noted);
  // A relative link that climbs out (../outside.yaml) is the same.
  fs::remove(job / "cfg.yaml");
  fs::create_symlink("../outside.yaml", job / "cfg.yaml");
  JobMetadata rel = ExtractOrDie(job.string(), "run.sh");
  EXPECT_EQ(Val(rel, "per_device_batch_size"), json(32));
  EXPECT_EQ(rel.files_skipped, 1);
}

TEST(ExtractorTest, UnknownValuesStayNull) {
  BuiltinMetadataExtractor x;
  JobSource s;
  s.script_text = "echo hello\n";
  auto m = x.Extract(s);
  ASSERT_OK(m);
  json f = m->FieldsJson();
  ASSERT_EQ(f.size(), kMetadataFields.size());
  for (std::string_view name : kMetadataFields) EXPECT_TRUE(f[std::string(name)].is_null()) << name;
}

TEST(ExtractorTest, NonUtf8BytesAreReplacedAndBinaryFilesSkippedAndCounted) {
  TempDir dir;
  // A Latin-1 comment in the entry script: its bytes are replaced, the script is still read.
  ASSERT_OK(WriteStringToFile(dir.File("run.sh"),
                              "# lanc\xe9 par caf\xe9\npython train.py --epochs 3\n"));
  // A binary helper (NUL bytes) the script mentions is skipped and counted.
  ASSERT_OK(WriteStringToFile(dir.File("train.py"), std::string("lr = 0.5\0\0\x01\n", 13)));
  JobMetadata m = ExtractOrDie(dir.path(), "run.sh");
  EXPECT_EQ(m.files_skipped, 1);
  EXPECT_EQ(Val(m, "epochs"), json(3));
  EXPECT_TRUE(Val(m, "learning_rate").is_null());
  bool noted = false;
  for (const auto& n : m.notes) noted = noted || n.find("replaced by U+FFFD") != std::string::npos;
  EXPECT_TRUE(noted);
  // A binary entry is an error that names the file.
  ASSERT_OK(WriteStringToFile(dir.File("bin.sh"), std::string("\x7f"
                                                              "ELF\0\0\x01",
                                                              7)));
  BuiltinMetadataExtractor x;
  auto bad = x.Extract({.path = dir.File("bin.sh"), .root = dir.path()});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bin.sh"), std::string::npos);
  auto missing = x.Extract({.path = dir.File("nope.sh"), .root = dir.path()});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(ExtractorTest, DirectoryPicksTheBatchScript) {
  BuiltinMetadataExtractor x;
  auto m = x.Extract({.path = TestDataPath("advisor/hydra_job")});
  ASSERT_OK(m);
  EXPECT_EQ(m->entry, "job.sbatch");
  EXPECT_EQ(Val(*m, "epochs"), json(30));
}

// A model card whose training config is a fenced YAML block: the config is read with the card's
// own line numbers; a config with no launcher runs as one process.
TEST(ExtractorTest, MarkdownCardConfigBlock) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/model_card_job"), "README.md");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(2));
  EXPECT_EQ(Src(m, "per_device_batch_size"), "README.md:24");
  EXPECT_EQ(Val(m, "gradient_accumulation"), json(4));
  EXPECT_EQ(Val(m, "global_batch_size"), json(8));
  EXPECT_EQ(Val(m, "sequence_length"), json(2048));
  EXPECT_EQ(Val(m, "epochs"), json(3));
  EXPECT_EQ(Val(m, "model_family"), json("qwen"));
  EXPECT_EQ(Val(m, "num_gpus"), json(1));
  EXPECT_EQ(Val(m, "framework"), json("axolotl"));
  EXPECT_EQ(Val(m, "dataset"), json("tickets/support_2024.jsonl"));
}

// A launch inside a shell function of a sourced file; `python -m PACKAGE` names the framework,
// the environment is the RL job's dataset and the zoo's policy for it the model.
TEST(ExtractorTest, RlZooThroughSourcedFunction) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/rl_zoo_job"), "run.sh");
  EXPECT_EQ(Val(m, "launcher"), json("python"));
  EXPECT_EQ(Src(m, "launcher"), "common.sh:8");  // the line in the function body
  EXPECT_EQ(Val(m, "framework"), json("stable-baselines3"));
  EXPECT_EQ(Val(m, "dataset"), json("SpaceInvadersNoFrameskip-v4"));
  EXPECT_EQ(Val(m, "model"), json("CnnPolicy"));
  EXPECT_EQ(Val(m, "model_family"), json("cnn"));
  EXPECT_EQ(Val(m, "num_gpus"), json(1));
  EXPECT_EQ(Val(m, "precision"), json("fp32"));
}

// One process per node driving all its GPUs: GPUs = nodes x gres; the learning rate the program
// trains with is the argument times the replicas; a net of Conv2D layers is a CNN.
TEST(ExtractorTest, MultiWorkerMirroredStrategy) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/tf_multiworker_job"), "job.sbatch");
  EXPECT_EQ(Val(m, "num_gpus"), json(16));
  EXPECT_EQ(Val(m, "num_nodes"), json(2));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(64));
  EXPECT_EQ(Val(m, "global_batch_size"), json(1024));
  EXPECT_DOUBLE_EQ(Val(m, "learning_rate").get<double>(), 0.008);
  EXPECT_EQ(Val(m, "dataset"), json("cifar10"));
  EXPECT_EQ(Val(m, "image_size"), json(32));
  EXPECT_EQ(Val(m, "model_family"), json("cnn"));
  EXPECT_EQ(Val(m, "framework"), json("tensorflow"));
  EXPECT_EQ(Val(m, "epochs"), json(15));
}

// A site's submit client with the command line in quotes; Hydra choices found by convention with
// no primary config in the sources; `# @package _global_`; an absent `/model` option still names
// the model.
TEST(ExtractorTest, QuotedCommandUnderSubmitClientWithHydraExperiment) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/wrapper_hydra_job"), "launch.sh");
  EXPECT_EQ(Val(m, "launcher"), json("clusterq -> python"));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(24));
  EXPECT_EQ(Val(m, "num_gpus"), json(2));
  EXPECT_EQ(Val(m, "epochs"), json(40));
  EXPECT_EQ(Src(m, "epochs"), "conf/experiment/small_lm.yaml:7");
  EXPECT_DOUBLE_EQ(Val(m, "learning_rate").get<double>(), 3e-4);
  EXPECT_EQ(Val(m, "precision"), json("bf16"));
  EXPECT_EQ(Val(m, "model"), json("gpt_small"));
  EXPECT_EQ(Val(m, "framework"), json("lightning"));
}

// ultralytics rounds imgsz up to a multiple of its stride (32).
TEST(ExtractorTest, UltralyticsImageSizeRoundsUpToStride) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/yolo_stride_job"), "fit.py");
  EXPECT_EQ(Val(m, "image_size"), json(608));
  EXPECT_EQ(Val(m, "epochs"), json(50));
}

// PEFT vocabulary outvotes Megatron's --micro_batch_size; gpt-j is its own family; a python
// program not in the sources runs one process.
TEST(ExtractorTest, LoraScriptWithoutItsProgram) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/lora_cli_job"), "train.sh");
  EXPECT_EQ(Val(m, "framework"), json("hf-transformers"));
  EXPECT_EQ(Val(m, "model_family"), json("gpt-j"));
  EXPECT_EQ(Val(m, "num_gpus"), json(1));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(4));
}

// llamafactory-cli after a config file applies key=value overrides only, and starts one process
// per visible device.
TEST(ExtractorTest, LlamaFactoryConfigFirstIgnoresDashedOptions) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/yaml_first_cli_job"), "train.sh");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(2));
  EXPECT_DOUBLE_EQ(Val(m, "learning_rate").get<double>(), 2e-5);
  EXPECT_EQ(Val(m, "num_gpus"), json(2));
  EXPECT_EQ(Val(m, "global_batch_size"), json(32));
  EXPECT_EQ(Val(m, "precision"), json("bf16"));
}

// A script called by a path it no longer has (kept beside its caller), its positional
// parameters with quoted defaults, arithmetic expansion and `CMD+=` appends.
TEST(ExtractorTest, CopiedScriptWithPositionalDefaultsAndArithmetic) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/megatron_copied_job"), "run_all.sh");
  EXPECT_EQ(Val(m, "launcher"), json("torchrun"));
  EXPECT_EQ(Val(m, "num_gpus"), json(4));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(4));
  EXPECT_EQ(Val(m, "global_batch_size"), json(64));
  EXPECT_EQ(Val(m, "gradient_accumulation"), json(4));
  EXPECT_EQ(Val(m, "max_steps"), json(500));
  EXPECT_EQ(Val(m, "precision"), json("fp16"));
  EXPECT_EQ(Val(m, "framework"), json("megatron"));
}

// A wrapper found in a folder above the calling script, `shift`, a program not in the sources
// read by argparse convention (-b, a positional data path, nargs numbers) and its vocabulary.
TEST(ExtractorTest, TimmStyleArgumentsThroughShiftingWrapper) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/timm_style_job"), "scripts/run.sh");
  EXPECT_EQ(Val(m, "launcher"), json("torchrun"));
  EXPECT_EQ(Val(m, "num_gpus"), json(4));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(64));
  EXPECT_EQ(Val(m, "global_batch_size"), json(256));
  EXPECT_EQ(Val(m, "image_size"), json(256));
  EXPECT_EQ(Val(m, "dataset"), json("/data/imagenet"));
  EXPECT_EQ(Val(m, "framework"), json("timm"));
  EXPECT_EQ(Val(m, "model_family"), json("resnet"));
  EXPECT_EQ(Val(m, "precision"), json("amp"));
}

// Configs named relative to a folder above the script; a model architecture config names the
// model but its torch_dtype is not the training precision.
TEST(ExtractorTest, DeepSpeedAndModelConfigPathsFromAFolderAbove) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/hf_model_config_job"), "pkg/scripts/train.sh");
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(8));
  EXPECT_EQ(Val(m, "gradient_accumulation"), json(4));
  EXPECT_EQ(Val(m, "global_batch_size"), json(64));
  EXPECT_EQ(Val(m, "precision"), json("fp16"));
  EXPECT_EQ(Val(m, "model"), json("mistral"));
  EXPECT_EQ(Val(m, "model_family"), json("mistral"));
  EXPECT_EQ(Val(m, "max_steps"), json(3000));
}

// detectron2: a config copied without its folder (found by its unique name), a model-zoo
// `_BASE_` not in the sources, and the per-device batch from IMS_PER_BATCH / GPUs.
TEST(ExtractorTest, Detectron2MovedConfigAndZooBase) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/detectron2_job"), "tools/train.sh");
  EXPECT_EQ(Val(m, "framework"), json("detectron2"));
  EXPECT_EQ(Val(m, "global_batch_size"), json(8));
  EXPECT_EQ(Val(m, "per_device_batch_size"), json(4));
  EXPECT_DOUBLE_EQ(Val(m, "learning_rate").get<double>(), 0.005);
  EXPECT_EQ(Src(m, "learning_rate"), "cfg/retina.yaml:5");
  EXPECT_EQ(Val(m, "model_family"), json("retinanet"));
  EXPECT_EQ(Val(m, "max_steps"), json(1000));
}

// One python process that uses CUDA without spreading over devices uses one of the GPUs Slurm
// allocated.
TEST(ExtractorTest, SingleProcessUsesOneOfTheAllocatedGpus) {
  JobMetadata m = ExtractOrDie(TestDataPath("advisor/single_gpu_sbatch_job"), "job.sbatch");
  EXPECT_EQ(Val(m, "num_gpus"), json(1));
  EXPECT_EQ(Val(m, "epochs"), json(5));
}

TEST(ExtractorTest, FrameworkDefaultsForFairseqAndDiffusers) {
  JobMetadata f = ExtractOrDie(TestDataPath("advisor/fairseq_diffusers_job"), "translate.sh");
  EXPECT_EQ(Val(f, "gradient_accumulation"), json(1));
  EXPECT_EQ(Src(f, "gradient_accumulation"), "default: fairseq --update-freq default 1");
  JobMetadata d = ExtractOrDie(TestDataPath("advisor/fairseq_diffusers_job"), "dreambooth.sh");
  EXPECT_EQ(Val(d, "framework").get<std::string>().rfind("diffusers", 0), 0u);
  EXPECT_EQ(Val(d, "model_family"), json("diffusion"));
}

// The function a program runs as its command line: python-fire's Fire(fn), typer's
// @app.command() with Option(X) defaults, click's @click.option decorators.
TEST(ExtractorTest, EntryFunctionDefaultsOfFireTyperAndClick) {
  JobMetadata f = ExtractOrDie(TestDataPath("advisor/entry_function_job"), "fire_run.sh");
  EXPECT_EQ(Val(f, "per_device_batch_size"), json(12));
  EXPECT_EQ(Src(f, "per_device_batch_size"), "fire_train.py:5");
  EXPECT_EQ(Val(f, "epochs"), json(5));  // the command line over the function's default
  EXPECT_DOUBLE_EQ(Val(f, "learning_rate").get<double>(), 3e-4);
  EXPECT_EQ(Val(f, "model"), json("distilgpt2"));
  EXPECT_EQ(Val(f, "precision"), json("bf16"));
  EXPECT_FALSE(f.values.count("seed"));
  JobMetadata t = ExtractOrDie(TestDataPath("advisor/entry_function_job"), "typer_train.py");
  EXPECT_EQ(Val(t, "epochs"), json(40));
  EXPECT_EQ(Val(t, "dataset"), json("cifar10"));
  EXPECT_EQ(Val(t, "per_device_batch_size"), json(96));
  JobMetadata c = ExtractOrDie(TestDataPath("advisor/entry_function_job"), "click_train.py");
  EXPECT_EQ(Val(c, "per_device_batch_size"), json(48));
  EXPECT_EQ(Val(c, "max_steps"), json(20000));
}

}  // namespace
}  // namespace schedmate::advisor
