#include "advisor/extractor_knowledge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace schedmate::advisor::internal {
namespace {

// Every section, one entry each; `extra` is appended as further lines.
std::string File(const std::string& extra = "") {
  return "version: 1\n"
         "keys:\n"
         "  batch_size: [per_device_batch_size, 3]\n"
         "mmdet_schedules:\n"
         "  - {stem: schedule_1x, optimizer: SGD, lr: 0.02, epochs: 12}\n"
         "dataset_image_sizes:\n"
         "  - [mnist, 28]\n"
         "family_patterns:\n"
         "  - [rcnn, rcnn]\n"
         "  - [cnn, cnn]\n"
         "known_params:\n"
         "  - [gpt2, \"~124M\"]\n"
         "import_votes:\n"
         "  torch: [pytorch, 1]\n"
         "argument_votes:\n"
         "  do_train: [hf-transformers, 1]\n"
         "library_defaults:\n"
         "  - {framework_prefix: [hf-transformers], requires: hf_trainer, field: learning_rate,\n"
         "     value: 5.0e-5, why: HF TrainingArguments.learning_rate}\n"
         "  - {framework: ultralytics, field: optimizer, value: \"16\", why: test}\n"
         "config_key_votes:\n"
         "  trainer.gpus: [lightning, 2]\n"
         "framework_keys:\n"
         "  stable-baselines3:\n"
         "    env: [dataset, 1]\n"
         "rl_policies:\n"
         "  - {pattern: \"ALE/\", policy: CnnPolicy, why: zoo}\n"
         "  - {pattern: \"\", policy: MlpPolicy, why: zoo}\n"
         "world_size_names: [world_size]\n"
         "device_per_node_calls: [DataParallel]\n"
         "layer_families:\n"
         "  - [Conv2d, cnn]\n"
         "image_size_multiples:\n"
         "  ultralytics: 32\n"
         "short_options:\n"
         "  b: batch_size\n"
         "config_options: [config]\n"
         "train_calls: [fit]\n"
         "hf_trainer_calls: [Trainer]\n"
         "argument_objects: [args]\n"
         "hf_example_programs: [run_glue]\n"
         "generic_dataset_classes: [ImageFolder]\n"
         "dataset_abbreviations:\n"
         "  coco: COCO\n"
         "frameworks: [timm]\n"
         "option_calls: [add_argument]\n"
         "entry_function_calls: [fire.Fire]\n"
         "command_decorators: [command]\n" +
         extra;
}

TEST(ExtractorKnowledgeTest, ValidFileParses) {
  Result<ExtractorKnowledge> k = ExtractorKnowledge::Parse(File(), "test.yaml");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->keys.at("batch_size"), (std::pair<std::string, int>{"per_device_batch_size", 3}));
  ASSERT_EQ(k->mmdet_schedules.size(), 1u);
  EXPECT_EQ(k->mmdet_schedules[0].stem, "schedule_1x");
  EXPECT_DOUBLE_EQ(k->mmdet_schedules[0].lr, 0.02);
  EXPECT_EQ(k->mmdet_schedules[0].epochs, 12);
  ASSERT_EQ(k->family_patterns.size(), 2u);
  EXPECT_EQ(k->family_patterns[0].first, "rcnn");  // order kept
  EXPECT_EQ(k->known_params[0].second, "~124M");
  EXPECT_EQ(k->import_votes.at("torch").second, 1);
  ASSERT_EQ(k->library_defaults.size(), 2u);
  EXPECT_EQ(k->library_defaults[0].condition, "hf_trainer");
  EXPECT_EQ(k->library_defaults[0].value, nlohmann::json(5e-5));
  EXPECT_EQ(k->library_defaults[1].value, nlohmann::json("16"));  // quoted stays a string
  EXPECT_EQ(k->config_key_votes.at("trainer.gpus").first, "lightning");
  EXPECT_EQ(k->framework_keys.at("stable-baselines3").at("env").first, "dataset");
  ASSERT_EQ(k->rl_policies.size(), 2u);
  EXPECT_EQ(k->rl_policies[1].pattern, "");  // the catch-all comes last
  EXPECT_EQ(k->world_size_names, std::vector<std::string>{"world_size"});
  EXPECT_EQ(k->layer_families[0].second, "cnn");
  EXPECT_EQ(k->image_size_multiples.at("ultralytics"), 32);
  EXPECT_TRUE(k->train_calls.count("fit"));
  EXPECT_EQ(k->dataset_abbreviations.at("coco"), "COCO");
}

TEST(ExtractorKnowledgeTest, NewSectionsRejectMalformedEntriesByLine) {
  // A stride that is not a number.
  std::string text = File();
  text.replace(text.find("ultralytics: 32"), 15, "ultralytics: many");
  Result<ExtractorKnowledge> k = ExtractorKnowledge::Parse(text, "test.yaml");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("test.yaml:"), std::string::npos);
}

TEST(ExtractorKnowledgeTest, BuiltinFileParses) {
  const ExtractorKnowledge& k = ExtractorKnowledge::Builtin();
  EXPECT_EQ(k.keys.at("per_device_train_batch_size").first, "per_device_batch_size");
  EXPECT_EQ(k.keys.at("ims_per_batch").first, "global_batch_size");
  EXPECT_FALSE(k.mmdet_schedules.empty());
  // "rcnn" must be tried before "cnn", "gpt2-xl" before "gpt2".
  auto index = [](const auto& list, const std::string& name) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].first == name) return i;
    }
    return list.size();
  };
  EXPECT_LT(index(k.family_patterns, "rcnn"), index(k.family_patterns, "cnn"));
  EXPECT_LT(index(k.known_params, "gpt2-xl"), index(k.known_params, "gpt2"));
  EXPECT_FALSE(k.library_defaults.empty());
}

void ExpectError(const std::string& text, const std::string& where) {
  Result<ExtractorKnowledge> k = ExtractorKnowledge::Parse(text, "bad.yaml");
  ASSERT_FALSE(k.ok()) << "parsed: " << text;
  EXPECT_NE(k.status().ToString().find(where), std::string::npos) << k.status().ToString();
}

TEST(ExtractorKnowledgeTest, MalformedFilesFailNamingTheLine) {
  // The first line after File()'s own.
  const std::string base = File();
  const std::string next =
      "bad.yaml:" + std::to_string(std::count(base.begin(), base.end(), '\n') + 1);
  ExpectError(File("launchers: [torchrun]\n"), next + ": unknown section 'launchers'");
  ExpectError(File("keys:\n  lr: [learning_rate, 1]\n"), next + ": section 'keys' twice");
  std::string s = File();
  ExpectError(s.replace(s.find("[per_device_batch_size, 3]"), 26, "per_device_batch_size"),
              "bad.yaml:3:");
  s = File();
  ExpectError(s.replace(s.find("epochs: 12"), 10, "epochs: many"), "bad.yaml:5:");
  s = File();
  ExpectError(s.replace(s.find("optimizer: SGD"), 14, "optimiser: SGD"),
              "bad.yaml:5: unknown field 'optimiser'");
  s = File();
  ExpectError(s.replace(s.find("requires: hf_trainer"), 20, "requires: tpu"),
              "bad.yaml:18: unknown fact 'tpu'");
  ExpectError(File("  - [broken\n"), "bad.yaml:");
  ExpectError("version: 1\n", "bad.yaml: section 'keys' is missing");
  ExpectError(File("import_votes:\n  torch: [pytorch, 1]\n"), next + ":");
}

}  // namespace
}  // namespace schedmate::advisor::internal
