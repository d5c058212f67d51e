#include "text/tokenizer.h"

#include <gtest/gtest.h>

namespace schedmate::text {
namespace {

using V = std::vector<std::string>;

TEST(TokenizerTest, SplitsIdentifiers) {
  struct Case {
    const char* name;
    const char* in;
    V want;
  };
  const Case cases[] = {
      {"snake", "per_device_train_batch_size", {"per", "device", "train", "batch", "size"}},
      {"camel", "ResNet50FPN", {"res", "net", "50", "fpn"}},
      {"acronym", "HTTPServerError", {"http", "server", "error"}},
      {"flag", "--nproc_per_node=8", {"nproc", "per", "node", "8"}},
      {"exponent", "lr=3e-4", {"lr", "3e-4"}},
      {"decimal", "dropout 0.65", {"dropout", "0.65"}},
      {"size unit", "Llama-2-7b-hf", {"llama", "2", "7b", "hf"}},
      {"size unit upper", "Qwen-14B-Chat", {"qwen", "14b", "chat"}},
      {"dotted", "torch.distributed.run", {"torch", "distributed", "run"}},
      {"non ascii",
       "数据abc\xff"
       "def",
       {"abc", "def"}},
      {"empty", "", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Tokenize(c.in), c.want);
  }
}

TEST(TokenizerTest, OptionsDropShortAndNumbers) {
  TokenizerOptions o;
  o.min_length = 2;
  o.keep_numbers = false;
  EXPECT_EQ(Tokenize("a bb 12 cc3", o), (V{"bb", "cc"}));
}

}  // namespace
}  // namespace schedmate::text
