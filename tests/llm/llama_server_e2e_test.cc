// llama_e2e_test: PROTOCOL-LEVEL end-to-end tests of the LLM path against a real llama.cpp
// `llama-server` serving a tiny random-weight Qwen2 GGUF (scripts/llama-server.sh install).
// The model's answers are gibberish by construction: these tests check transport, streaming,
// grammar-constrained structured output, embeddings, authentication and the CLI's fallbacks,
// never answer quality.
//
// Which server:
//   SCHEDMATE_LLAMA_BASE_URL (+ SCHEDMATE_LLAMA_API_KEY when it was started with --api-key):
//     an already running server (scripts/llama-server.sh start);
//   else SCHEDMATE_LLAMA_SERVER_BIN + SCHEDMATE_LLAMA_MODEL: the suite starts its own server on
//     a free loopback port, with an API key, and stops it at the end;
//   else every test is skipped (GTEST_SKIP) saying so.
//   eval "$(scripts/llama-server.sh env)" sets these variables.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/file_util.h"
#include "core/sim_time.h"
#include "llm/call_log.h"
#include "llm/complete_json.h"
#include "llm/curl_transport.h"
#include "llm/json_schema.h"
#include "llm/llm_config.h"
#include "llm/llm_setup.h"
#include "llm/openai_client.h"
#include "testing/test_util.h"

extern char** environ;

namespace schedmate {
namespace {

using nlohmann::json;
using schedmate::testing::ShellQuote;

// The name the suite's own server is started with (--alias); a server found through
// SCHEDMATE_LLAMA_BASE_URL serves one model and ignores the name in requests.
constexpr const char* kModelName = "tiny-qwen2-random";
constexpr const char* kTestKey = "sk-schedmate-e2e";

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : std::string(v);
}

// A free TCP port on 127.0.0.1 (the kernel's pick; a race with other processes is possible but
// harmless: the server then fails to bind and Start() reports it).
int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// The server the tests talk to: an external one, or a child process this suite owns.
class LlamaServer {
 public:
  ~LlamaServer() { Stop(); }

  // Decides from the environment; `skip_reason` is set when no server is available.
  void Init() {
    if (const std::string url = Env("SCHEDMATE_LLAMA_BASE_URL"); !url.empty()) {
      base_url_ = url;
      api_key_ = Env("SCHEDMATE_LLAMA_API_KEY");
      return;
    }
    const std::string bin = Env("SCHEDMATE_LLAMA_SERVER_BIN");
    const std::string model = Env("SCHEDMATE_LLAMA_MODEL");
    if (bin.empty() || model.empty()) {
      skip_reason_ =
          "no llama-server: set SCHEDMATE_LLAMA_BASE_URL, or SCHEDMATE_LLAMA_SERVER_BIN and "
          "SCHEDMATE_LLAMA_MODEL (scripts/llama-server.sh install, then eval \"$(scripts/"
          "llama-server.sh env)\")";
      return;
    }
    Status s = StartOwn(bin, model);
    if (!s.ok()) start_error_ = s.ToString();
  }

  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& start_error() const { return start_error_; }
  const std::string& base_url() const { return base_url_; }
  const std::string& api_key() const { return api_key_; }
  bool owned() const { return pid_ > 0; }

 private:
  Status StartOwn(const std::string& bin, const std::string& model) {
    log_path_ = log_dir_.File("llama-server.log");
    for (int attempt = 0; attempt < 3; ++attempt) {
      const int port = FreeLoopbackPort();
      if (port <= 0) return Status::Unavailable("no free loopback port");
      std::vector<std::string> args = {bin,
                                       "--model",
                                       model,
                                       "--alias",
                                       kModelName,
                                       "--host",
                                       "127.0.0.1",
                                       "--port",
                                       std::to_string(port),
                                       "--jinja",
                                       "--embeddings",
                                       "--pooling",
                                       "mean",
                                       "--ctx-size",
                                       "32768",
                                       "--parallel",
                                       "1",
                                       "--threads",
                                       "2",
                                       "--no-ui",
                                       "--api-key",
                                       kTestKey};
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
      pid_t pid = -1;
      const int rc = posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&actions);
      if (rc != 0) return Status::Unavailable("cannot start " + bin);
      pid_ = pid;
      base_url_ = "http://127.0.0.1:" + std::to_string(port);
      api_key_ = kTestKey;
      bool exited = false;
      Status ready = WaitHealthy(Duration::Seconds(90), exited);
      if (ready.ok()) return ready;
      Stop();
      if (!exited) return ready;  // hung, not a lost port race: do not retry
    }
    return Status::Unavailable("llama-server did not start in 3 attempts; log: " + log_path_);
  }

  // kUnavailable with `exited` set when the process exited (e.g. the port was taken),
  // kDeadlineExceeded on timeout.
  Status WaitHealthy(Duration limit, bool& exited) {
    llm::CurlHttpTransport http;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::microseconds(limit.micros());
    while (std::chrono::steady_clock::now() < deadline) {
      int wstatus = 0;
      if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
        pid_ = -1;
        auto log = ReadFileToString(log_path_);
        exited = true;
        return Status::Unavailable("llama-server exited during startup: " + (log.ok() ? *log : ""));
      }
      llm::HttpRequest req;
      req.method = "GET";
      req.url = base_url_ + "/health";
      req.connect_timeout = Duration::Seconds(1);
      req.total_timeout = Duration::Seconds(2);
      auto r = http.Send(req);
      if (r.ok() && r->status == 200) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return Status::DeadlineExceeded("llama-server not healthy in time; log: " + log_path_);
  }

  schedmate::testing::TempDir log_dir_;
  std::string log_path_;
  std::string skip_reason_, start_error_;
  std::string base_url_, api_key_;
  pid_t pid_ = -1;
};

LlamaServer* g_server = nullptr;

class LlamaEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_server = new LlamaServer();
    g_server->Init();
  }
  void TearDown() override {
    delete g_server;
    g_server = nullptr;
  }
};
[[maybe_unused]] ::testing::Environment* const kLlamaEnv =
    ::testing::AddGlobalTestEnvironment(new LlamaEnvironment);

// Every test starts with this: skip without a server, fail when ours did not start.
#define SM_REQUIRE_LLAMA()                                                         \
  do {                                                                             \
    ASSERT_NE(g_server, nullptr);                                                  \
    if (!g_server->skip_reason().empty()) GTEST_SKIP() << g_server->skip_reason(); \
    ASSERT_TRUE(g_server->start_error().empty()) << g_server->start_error();       \
  } while (0)

llm::OpenAiEndpoint Endpoint(bool with_key = true) {
  llm::OpenAiEndpoint e;
  e.base_url = g_server->base_url();
  e.model = kModelName;
  if (with_key) e.api_key = g_server->api_key();
  e.connect_timeout = Duration::Seconds(5);
  e.timeout = Duration::Seconds(120);
  return e;
}

// The schema of the structured-output test: only bounded types (enum, bounded integer, boolean),
// so a grammar-constrained answer always fits in max_tokens.
json BoundedSchema() {
  return {{"type", "object"},
          {"properties",
           {{"status", {{"type", "string"}, {"enum", {"ok", "degraded", "down"}}}},
            {"gpus", {{"type", "integer"}, {"minimum", 0}, {"maximum", 64}}},
            {"healthy", {{"type", "boolean"}}}}},
          {"required", {"status", "gpus", "healthy"}},
          {"additionalProperties", false}};
}

// Unicode code points in valid UTF-8 text (continuation bytes are not counted).
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// ---- the client library directly --------------------------------------------------------------

TEST(LlamaClientE2eTest, PlainCompletionReportsUsageAndAFinishReason) {
  SM_REQUIRE_LLAMA();
  llm::CurlHttpTransport http;
  llm::OpenAiCompatibleClient client(Endpoint(), http);
  llm::ChatRequest req;
  req.messages = {llm::ChatMessage::User("Say hello.")};
  req.max_tokens = 8;
  req.temperature = 0.0;
  req.seed = 3;
  auto r = client.Complete(req);
  ASSERT_OK(r);
  // Random weights: the text is gibberish and may even be empty; the protocol facts are not.
  EXPECT_EQ(r->message.role, llm::Role::kAssistant);
  EXPECT_TRUE(r->finish_reason == "length" || r->finish_reason == "stop") << r->finish_reason;
  EXPECT_GT(r->usage.prompt_tokens, 0);
  EXPECT_LE(r->usage.completion_tokens, 8);
  EXPECT_EQ(r->usage.total_tokens, r->usage.prompt_tokens + r->usage.completion_tokens);
  // Same request, temperature 0 and a seed: the same answer (llama.cpp is deterministic on CPU).
  auto again = client.Complete(req);
  ASSERT_OK(again);
  EXPECT_EQ(again->message.content, r->message.content);
}

TEST(LlamaClientE2eTest, JsonSchemaOutputParsesAndValidates) {
  SM_REQUIRE_LLAMA();
  llm::CurlHttpTransport http;
  llm::OpenAiCompatibleClient client(Endpoint(), http);
  const json schema = BoundedSchema();
  ASSERT_OK(llm::CheckSchemaSupported(schema));
  llm::JsonCallOptions opts;
  opts.schema_name = "node_health";
  opts.max_tokens = 256;     // the grammar allows runs of blanks between tokens
  opts.repair_attempts = 0;  // one call: what the grammar produced is what we judge
  opts.temperature = 0.8;    // different samples, all under the same grammar
  for (int64_t seed : {1, 2, 3}) {
    opts.seed = seed;
    auto r = llm::CompleteJsonDetailed(
        client, {llm::ChatMessage::User("Report the node health as JSON.")}, schema, opts);
    // llama-server turns response_format json_schema into a grammar, so even a random model's
    // answer is well-formed JSON that satisfies this (bounded) schema.
    ASSERT_OK(r);
    EXPECT_EQ(r->attempts, 1);
    json parsed = json::parse(r->raw, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded()) << r->raw;
    EXPECT_OK(llm::ValidateJson(parsed, schema));
    EXPECT_EQ(parsed, r->value);
  }
}

// maxLength is enforced by the server's grammar in Unicode code points (as JSON Schema defines
// string length); the random model readily picks multi-byte characters, so this checks the
// raw answer directly, counting code points.
TEST(LlamaClientE2eTest, JsonSchemaMaxLengthCountsCodePoints) {
  SM_REQUIRE_LLAMA();
  llm::CurlHttpTransport http;
  llm::OpenAiCompatibleClient client(Endpoint(), http);
  llm::ChatRequest req;
  req.messages = {llm::ChatMessage::User("Name the node.")};
  req.response_format =
      llm::JsonSchemaFormat{"node",
                            {{"type", "object"},
                             {"properties", {{"node", {{"type", "string"}, {"maxLength", 6}}}}},
                             {"required", {"node"}},
                             {"additionalProperties", false}},
                            true};
  req.max_tokens = 256;
  req.temperature = 0.8;
  for (int64_t seed : {1, 2, 3, 4}) {
    req.seed = seed;
    auto r = client.Complete(req);
    ASSERT_OK(r);
    json parsed = json::parse(r->message.content, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded()) << r->message.content;
    ASSERT_TRUE(parsed.is_object() && parsed.size() == 1 && parsed["node"].is_string())
        << parsed.dump();
    EXPECT_LE(CodePoints(parsed["node"].get<std::string>()), 6u) << parsed.dump();
  }
}

TEST(LlamaClientE2eTest, StreamingDeliversChunksThatAddUpToTheAnswer) {
  SM_REQUIRE_LLAMA();
  llm::CurlHttpTransport http;
  llm::OpenAiCompatibleClient client(Endpoint(), http);
  llm::ChatRequest req;
  req.messages = {llm::ChatMessage::User("Count to ten.")};
  req.max_tokens = 24;
  req.temperature = 0.0;
  req.seed = 5;
  std::vector<std::string> deltas;
  auto r = client.CompleteStream(req, [&](const llm::StreamDelta& d) {
    deltas.push_back(d.content);
    return true;
  });
  ASSERT_OK(r);
  EXPECT_GE(deltas.size(), 2u);  // token by token, not one blob
  std::string joined;
  for (const std::string& d : deltas) joined += d;
  EXPECT_EQ(joined, r->message.content);
  EXPECT_FALSE(r->finish_reason.empty());  // the stream ended properly ([DONE] seen)
  // The streamed answer is the non-streamed one (same seed, temperature 0).
  auto plain = client.Complete(req);
  ASSERT_OK(plain);
  EXPECT_EQ(plain->message.content, r->message.content);

  // Stopping early cancels the call.
  int seen = 0;
  auto stopped = client.CompleteStream(req, [&](const llm::StreamDelta&) { return ++seen < 2; });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled) << stopped.status().ToString();
  EXPECT_EQ(seen, 2);
}

TEST(LlamaClientE2eTest, EmbeddingsGiveOneVectorPerInputWithAStableDimension) {
  SM_REQUIRE_LLAMA();
  llm::CurlHttpTransport http;
  llm::OpenAiEmbedder embedder(Endpoint(), http);
  const std::vector<std::string> texts = {"NCCL timeout on rank 3", "CUDA out of memory",
                                          "epoch 2 step 100/500 loss=0.42"};
  auto first = embedder.Embed(texts);
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), texts.size());
  const size_t dim = (*first)[0].size();
  EXPECT_GT(dim, 0u);
  EXPECT_EQ(embedder.Dimension(), dim);
  for (const auto& v : *first) EXPECT_EQ(v.size(), dim);
  EXPECT_NE((*first)[0], (*first)[1]);  // different texts, different vectors

  const std::vector<std::string> one = {texts[1]};
  auto second = embedder.Embed(one);
  ASSERT_OK(second);
  ASSERT_EQ(second->size(), 1u);
  ASSERT_EQ((*second)[0].size(), dim);
  // The same text embeds (numerically) the same, alone or in a batch.
  for (size_t i = 0; i < dim; ++i) EXPECT_NEAR((*second)[0][i], (*first)[1][i], 1e-3) << i;
}

TEST(LlamaClientE2eTest, MissingOrWrongKeyIs401AndIsNotRetried) {
  SM_REQUIRE_LLAMA();
  if (g_server->api_key().empty()) {
    GTEST_SKIP() << "the server at SCHEDMATE_LLAMA_BASE_URL has no API key "
                    "(start it with --api-key and set SCHEDMATE_LLAMA_API_KEY)";
  }
  llm::CurlHttpTransport http;
  llm::OpenAiCompatibleClient keyless(Endpoint(/*with_key=*/false), http);
  llm::ChatRequest req;
  req.messages = {llm::ChatMessage::User("hi")};
  req.max_tokens = 4;
  auto r = keyless.Complete(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_EQ(r.status().message().rfind("HTTP 401", 0), 0u) << r.status().message();
  EXPECT_FALSE(r.status().IsRetryable());

  // Through the full LlmSetup stack (retries on): a wrong key fails once, without retries.
  llm::LlmConfig config;
  config.chat.base_url = g_server->base_url();
  config.chat.model = kModelName;
  config.chat.api_key = "sk-wrong";
  config.max_retries = 3;
  auto log = std::make_unique<llm::MemoryCallLog>();
  llm::MemoryCallLog* calls = log.get();
  llm::LlmSetupDeps deps;
  deps.call_log = std::move(log);
  auto setup = llm::LlmSetup::Create(config, std::move(deps));
  ASSERT_OK(setup);
  auto wrong = (*setup)->chat().Complete(req);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(calls->records().size(), 1u);  // one HTTP attempt, no retry

  // And the right key through the same stack works.
  config.chat.api_key = g_server->api_key();
  auto good_setup = llm::LlmSetup::Create(config);
  ASSERT_OK(good_setup);
  EXPECT_OK((*good_setup)->chat().Complete(req));
}

// ---- the CLI through the real server ------------------------------------------------------------

// Runs the schedmate binary configured for the real server by the environment alone (chat and
// embeddings on the one server). An empty `base_url` means "this URL instead" is not used.
schedmate::testing::CommandResult RunCli(const std::string& args,
                                         const std::string& base_url_override = "") {
  const std::string url = base_url_override.empty() ? g_server->base_url() : base_url_override;
  std::string cmd =
      "env -u SCHEDMATE_LLM_CONFIG -u SCHEDMATE_LLM_API_KEY_FILE -u SCHEDMATE_EMBED_BASE_URL "
      "-u SCHEDMATE_EMBED_API_KEY SCHEDMATE_NO_PROGRESS=1 "
      "SCHEDMATE_HOME=/nonexistent-schedmate-home SCHEDMATE_LLM_BASE_URL=" +
      ShellQuote(url) + " SCHEDMATE_LLM_MODEL=" + kModelName +
      " SCHEDMATE_EMBED_MODEL=" + kModelName +
      " SCHEDMATE_LLM_API_KEY=" + ShellQuote(g_server->api_key()) + " ";
  return schedmate::testing::RunShell(cmd + ShellQuote(schedmate::testing::SchedmateBinary()) +
                                      " " + args);
}

const json* FindCheck(const json& report, const std::string& name) {
  for (const json& c : report["checks"]) {
    if (c["check"] == name) return &c;
  }
  return nullptr;
}

TEST(LlamaCliE2eTest, LlmCheckReportsChatStreamJsonSchemaAndEmbeddings) {
  SM_REQUIRE_LLAMA();
  auto r = RunCli("llm check --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["reachable"], true);
  for (const char* name : {"chat", "stream", "json_schema", "embeddings"}) {
    const json* c = FindCheck(j, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ((*c)["outcome"], "ok") << name << ": " << (*c)["detail"];
  }
  // Tool calls: llama-server (--jinja, Qwen2.5 template) offers the tools, but with tool_choice
  // "auto" the grammar is lazy (it starts only at a "<tool_call>" trigger) and a random-weight
  // model never writes that trigger, so it answers in text. A real protocol fact, not a
  // capability claim: the check must say so rather than pass.
  const json* tools = FindCheck(j, "tool_calls");
  ASSERT_NE(tools, nullptr);
  EXPECT_EQ((*tools)["outcome"], "fail") << (*tools)["detail"];
  EXPECT_NE((*tools)["detail"].get<std::string>().find("no tool call"), std::string::npos)
      << (*tools)["detail"];
  EXPECT_EQ(j["all_ok"], false);
}

// The "engine" field of a command run with --engine llm: either the LLM answered, or the command
// fell back to its built-in engine and says why. Returns true when the LLM answered.
bool CheckEngineField(const json& j) {
  const std::string engine = j.value("engine", "");
  if (engine == std::string("llm (") + kModelName + ")") return true;
  EXPECT_EQ(engine.rfind("builtin (llm ", 0), 0u) << engine;
  EXPECT_EQ(engine.back(), ')') << engine;
  return false;
}

TEST(LlamaCliE2eTest, AdviseWithTheLlmEngine) {
  SM_REQUIRE_LLAMA();
  const std::string job = ShellQuote(schedmate::testing::TestDataPath("llm_e2e/job"));
  auto builtin = RunCli("advise " + job + " --json --engine builtin");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  json jb = json::parse(builtin.out);
  ASSERT_EQ(jb["metadata"]["epochs"], 3);  // the fixture's values, found by the built-in reader
  ASSERT_EQ(jb["metadata"]["num_gpus"], 2);

  auto r = RunCli("advise " + job + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const bool llm_answered = CheckEngineField(j);
  // Built-in values with provenance win over the model's, either way.
  EXPECT_EQ(j["metadata"]["epochs"], 3) << j.dump();
  EXPECT_EQ(j["metadata"]["num_gpus"], 2) << j.dump();
  if (!llm_answered) {
    EXPECT_NE(r.err.find("schedmate: warning: advise:"), std::string::npos) << r.err;
  }
}

TEST(LlamaCliE2eTest, LogsMetricsWithTheLlmEngine) {
  SM_REQUIRE_LLAMA();
  const std::string log = ShellQuote(schedmate::testing::TestDataPath("llm_e2e/train.log"));
  auto builtin = RunCli("logs metrics " + log + " --json --engine builtin");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  json jb = json::parse(builtin.out);
  ASSERT_EQ(jb["found"], true);
  ASSERT_EQ(jb["step"], 40);

  auto r = RunCli("logs metrics " + log + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  if (!CheckEngineField(j)) {
    EXPECT_EQ(j["found"], true);
    EXPECT_EQ(j["step"], 40);
    EXPECT_EQ(j["loss"], jb["loss"]);
  }
  EXPECT_TRUE(j.contains("found")) << j.dump();
}

TEST(LlamaCliE2eTest, DiagnoseWithTheLlmEngine) {
  SM_REQUIRE_LLAMA();
  const std::string log = ShellQuote(schedmate::testing::TestDataPath("llm_e2e/job.log"));
  auto builtin = RunCli("diagnose " + log + " --json --no-examples --engine builtin");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  json jb = json::parse(builtin.out);
  ASSERT_TRUE(jb["label"].is_string());

  auto r = RunCli("diagnose " + log + " --json --no-examples --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  if (!CheckEngineField(j)) {
    EXPECT_EQ(j["label"], jb["label"]);
    EXPECT_EQ(j["category"], jb["category"]);
  }
  EXPECT_TRUE(j["label"].is_string()) << j.dump();
}

TEST(LlamaCliE2eTest, DeadPortFallsBackToBuiltinQuickly) {
  SM_REQUIRE_LLAMA();
  const int port = FreeLoopbackPort();  // nothing listens there
  ASSERT_GT(port, 0);
  const std::string dead = "http://127.0.0.1:" + std::to_string(port);
  const std::string log = ShellQuote(schedmate::testing::TestDataPath("llm_e2e/job.log"));
  const auto t0 = std::chrono::steady_clock::now();
  auto r = RunCli("diagnose " + log + " --json --no-examples --engine llm", dead);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin (llm unavailable: connection refused)");
  EXPECT_TRUE(j["label"].is_string());
  EXPECT_LT(seconds, 15.0);  // a refused connection is not a timeout (retries back off briefly)
}

}  // namespace
}  // namespace schedmate
