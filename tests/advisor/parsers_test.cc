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

std::vector<std::string> Words(const ShellCommand& c) {
  std::vector<std::string> w;
  for (const auto& x : c.words) w.push_back(x.text);
  return w;
}

TEST(ShellParserTest, FunctionsRunWhereTheyAreCalledWithTheirArguments) {
  ShellScript s = ParseShell(
      "STEPS=10\n"
      "launch() {\n"
      "  local extra=$1\n"
      "  python fit.py --steps $STEPS $extra \"$@\"\n"
      "}\n"
      "function report\n"
      "{\n"
      "  python summarize.py\n"
      "}\n"
      "STEPS=20\n"
      "launch --fast --seed 3\n");
  ASSERT_EQ(s.commands.size(), 1u);  // report() is never called
  const ShellCommand& c = s.commands[0];
  EXPECT_EQ(c.line, 4);  // the body's own line
  EXPECT_EQ(c.function, "launch");
  std::vector<std::string> want = {"python", "fit.py", "--steps", "20",
                                   "--fast", "--fast", "--seed",  "3"};
  EXPECT_EQ(Words(c), want);
}

TEST(ShellParserTest, SourcedFilesShareVariablesAndFunctions) {
  ShellContext ctx;
  ctx.script_path = "jobs/run.sh";
  ctx.script_dir = "jobs";
  std::vector<std::string> asked;
  ctx.source = [&](const std::string& f) -> std::optional<std::pair<std::string, std::string>> {
    asked.push_back(f);
    if (f != "jobs/common.sh") return std::nullopt;
    return std::make_pair(std::string("LR=0.5\ngo() {\n  python -m pkg.train --lr $LR \"$@\"\n}\n"),
                          std::string("jobs/common.sh"));
  };
  ShellScript s = ParseShell(". \"$(dirname \"$0\")/common.sh\"\ngo --epochs 4\n", ctx);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], "jobs/common.sh");
  ASSERT_EQ(s.commands.size(), 1u);
  EXPECT_EQ(s.commands[0].file, "jobs/common.sh");
  EXPECT_EQ(s.commands[0].line, 3);
  std::vector<std::string> want = {"python", "-m", "pkg.train", "--lr", "0.5", "--epochs", "4"};
  EXPECT_EQ(Words(s.commands[0]), want);
  EXPECT_EQ(s.variables.at("LR"), "0.5");
  ASSERT_EQ(s.sourced.size(), 1u);
}

TEST(ShellParserTest, ScriptDirectoryIdiomsAndUnreadableSources) {
  ShellContext ctx;
  ctx.script_path = "a/b.sh";
  ctx.script_dir = "a";
  ctx.source = [](const std::string&) -> std::optional<std::pair<std::string, std::string>> {
    return std::nullopt;
  };
  ShellScript s = ParseShell(
      "ROOT=$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\n"
      "HERE=$(dirname $(realpath $0))\n"
      "OTHER=$(date +%s)\n"
      "source missing.sh\n"
      "source activate env\n",
      ctx);
  EXPECT_EQ(s.variables.at("ROOT"), "a");
  EXPECT_EQ(s.variables.at("HERE"), "a");
  EXPECT_NE(s.variables.at("OTHER"), "a");
  // An unreadable source stays an ordinary command, and so does conda's `source activate`.
  ASSERT_EQ(s.commands.size(), 2u);
  EXPECT_EQ(s.commands[0].words[0].text, "source");
}

TEST(ShellParserTest, RecursiveFunctionsAndSelfSourcingStop) {
  ShellContext ctx;
  ctx.source = [](const std::string& f) -> std::optional<std::pair<std::string, std::string>> {
    return std::make_pair(std::string(". again.sh\npython x.py\n"), f);
  };
  ShellScript s = ParseShell("f() { f; python y.py; }\nf\n. again.sh\n", ctx);
  size_t x = 0, y = 0;
  for (const ShellCommand& c : s.commands) {
    x += Words(c) == std::vector<std::string>{"python", "x.py"};
    y += Words(c) == std::vector<std::string>{"python", "y.py"};
  }
  EXPECT_EQ(x, 1u);
  EXPECT_GE(y, 1u);
  EXPECT_LE(y, 8u);
}

TEST(ShellParserTest, BracedPositionalsQuotedDefaultsArithmeticAppendAndShift) {
  ShellScript s = ParseShell(
      "N=${1:-2}\n"
      "DATA=${3:-\"/data/set one\"}\n"
      "W=$(( N * (${2:-1} + 1) ))\n"
      "BAD=$(( N / 0 ))\n"
      "CMD=\"python x.py --n $N\"\n"
      "CMD+=\" --w $W\"\n"
      "shift 2\n"
      "$CMD \"$@\"\n",
      ShellContext{.positional = {"3", "4", "tail"}});
  EXPECT_EQ(s.variables.at("N"), "3");
  EXPECT_EQ(s.variables.at("DATA"), "tail");
  EXPECT_EQ(s.variables.at("W"), "15");
  EXPECT_NE(s.variables.at("BAD"), "0");  // division by zero is not a number
  ASSERT_EQ(s.commands.size(), 1u);
  std::vector<std::string> want = {"python", "x.py", "--n", "3", "--w", "15", "tail"};
  EXPECT_EQ(Words(s.commands[0]), want);
  ShellScript d = ParseShell("DATA=${3:-\"/data/set one\"}\n");
  EXPECT_EQ(d.variables.at("DATA"), "/data/set one");
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

TEST(PythonScannerTest, FunctionParametersAndTheirDefaults) {
  PyFacts f = ScanPython(
      "def run(self, a, b: int = 3, *args, c=\"x\", d: int = typer.Option(7, help='h'),\n"
      "        e=Argument(default=2.5), **kw) -> None:\n"
      "    pass\n"
      "async def go(n=1): pass\n");
  ASSERT_EQ(f.functions.size(), 2u);
  const PyFunction& r = f.functions[0];
  EXPECT_EQ(r.name, "run");
  ASSERT_EQ(r.params.size(), 5u);  // self, *args and **kw are not options
  EXPECT_EQ(r.params[0].name, "a");
  EXPECT_FALSE(r.params[0].value.has_value());
  EXPECT_EQ(r.params[1].value->literal, json(3));
  EXPECT_EQ(r.params[2].value->literal, json("x"));
  EXPECT_EQ(r.params[3].value->literal, json(7));    // typer.Option(7) unwrapped
  EXPECT_EQ(r.params[4].value->literal, json(2.5));  // Argument(default=2.5)
  EXPECT_EQ(r.params[4].line, 2);
  EXPECT_EQ(f.functions[1].name, "go");
  EXPECT_EQ(f.functions[1].params[0].value->literal, json(1));
}

}  // namespace
}  // namespace schedmate::advisor
