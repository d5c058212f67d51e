#include <gtest/gtest.h>

#include "advisor/python_scanner.h"
#include "advisor/shell_parser.h"

namespace schedmate::advisor {
namespace {

using nlohmann::json;

TEST(ShellParserTest, ContinuationsQuotesVariablesAndComments) {
  ShellScript s = ParseShell(
      "#!/bin/bash\n"
      "#SBATCH --nodes=2 # two nodes\n"
      "#SBATCH -t 1:00:00\n"
      "N=4  # gpus\n"
      "export MODEL=\"gpt2 medium\"\n"
      "ARGS=\"--lr 1e-3 \\\n      --bs 8\"\n"
      "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=$N \\\n"
      "  train.py $ARGS --model \"$MODEL\" --out ${OUT:-/tmp/x} --tag '$N' $1 # trailing\n"
      "if [ -f x ]; then echo yes; fi\n",
      ShellContext{.positional = {"first"}});
  ASSERT_EQ(s.sbatch.size(), 2u);
  EXPECT_EQ(s.sbatch[0].option, "--nodes");
  EXPECT_EQ(s.sbatch[0].value, "2");
  EXPECT_EQ(s.sbatch[1].option, "-t");
  EXPECT_EQ(s.variables.at("N"), "4");
  EXPECT_EQ(s.variable_lines.at("N"), 4);
  ASSERT_GE(s.commands.size(), 1u);
  const ShellCommand& c = s.commands[0];
  EXPECT_EQ(c.line, 8);
  EXPECT_EQ(c.env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  std::vector<std::string> w;
  for (const auto& x : c.words) w.push_back(x.text);
  std::vector<std::string> want = {
      "torchrun", "--nproc_per_node=4", "train.py", "--lr",   "1e-3",  "--bs", "8",
      "--model",  "gpt2 medium",        "--out",    "/tmp/x", "--tag", "$N",   "first"};
  EXPECT_EQ(w, want);
}

TEST(ShellParserTest, UnknownPositionalIsMarked) {
  ShellScript s = ParseShell("bash $1\n");
  ASSERT_EQ(s.commands.size(), 1u);
  ASSERT_EQ(s.commands[0].words.size(), 2u);
  EXPECT_TRUE(s.commands[0].words[1].unknown);
}

TEST(PythonScannerTest, AssignmentsCallsFieldsImports) {
  PyFacts f = ScanPython(
      "import torch\nfrom transformers import Trainer  # x\n"
      "batch_size = 4 * 8\n"
      "data_root = 'data/'\n"
      "ann = data_root + \"train.json\"\n"
      "s = '''multi\nline'''\n"
      "dtype = 'bf16' if torch.cuda.is_available() else 'fp16'\n"
      "cfg = dict(lr=0.1, sub=dict(x=[1, 2, (3, 4)]), fn=lambda v: v)\n"
      "parser.add_argument('--learning-rate', type=float, default=3e-4,\n"
      "                    help='lr')\n"
      "class Args:\n"
      "    model_path: str = field(default=\"./m\")\n"
      "    steps: int = 10\n"
      "args.epochs = 7\n"
      "accum //= world_size\n"
      "YOLO('y.pt').train(epochs=30, imgsz=640)\n");
  EXPECT_EQ(f.globals.at("batch_size"), json(32));
  EXPECT_EQ(f.globals.at("ann"), json("data/train.json"));
  EXPECT_EQ(f.globals.at("s"), json("multi\nline"));
  EXPECT_FALSE(f.globals.count("dtype"));  // conditional: not a literal
  EXPECT_EQ(f.globals.at("cfg")["sub"]["x"], json::parse("[1,2,[3,4]]"));
  EXPECT_EQ(f.globals.at("cfg")["lr"], json(0.1));
  EXPECT_EQ(f.global_lines.at("batch_size"), 3);
  ASSERT_EQ(f.imports.size(), 2u);
  EXPECT_EQ(f.imports[1].first, "transformers");
  const PyCall* add = nullptr;
  const PyCall* train = nullptr;
  for (const PyCall& c : f.calls) {
    if (c.callee == "parser.add_argument") add = &c;
    if (c.callee.size() >= 6 && c.callee.substr(c.callee.size() - 6) == ".train") train = &c;
  }
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->line, 10);
  EXPECT_EQ(*add->Kwarg("default")->literal, json(3e-4));
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(*train->Kwarg("imgsz")->literal, json(640));
  ASSERT_EQ(f.fields.size(), 2u);
  EXPECT_EQ(f.fields[0].name, "model_path");
  EXPECT_EQ(*f.fields[0].value.literal, json("./m"));
  bool override_seen = false, divide_seen = false;
  for (const PyAssignment& a : f.assignments) {
    override_seen |= a.target == "args.epochs" && a.value.literal == json(7);
    divide_seen |= a.target == "accum" && a.op == "//=";
  }
  EXPECT_TRUE(override_seen);
  EXPECT_TRUE(divide_seen);
  EXPECT_EQ(EvalPythonLiteral("[1, 'a', None, True]"), json::parse("[1,\"a\",null,true]"));
  EXPECT_FALSE(EvalPythonLiteral("foo(1)").has_value());
}

}  // namespace
}  // namespace schedmate::advisor
