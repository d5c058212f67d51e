#include "scripted_slurm.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedmate::bench {

namespace {

constexpr std::array kModels = {"llama-7b",  "llama-13b",    "mistral-7b", "resnet50",
                                "bert-base", "gpt2-medium",  "vit-b16",    "t5-large",
                                "yolov8m",   "whisper-small"};
constexpr std::array kDatasets = {"imagenet", "c4",          "wikitext",   "coco",
                                  "alpaca",   "librispeech", "openwebtext"};
constexpr std::array kTasks = {"sft", "pretrain", "finetune", "sweep"};
constexpr std::array kReasons = {"Priority",  "Priority",   "Priority",          "Resources",
                                 "Resources", "Dependency", "QOSMaxGRESPerUser", "ReqNodeNotAvail"};
constexpr std::array<int64_t, 5> kLimits = {60, 240, 720, 1440, 2880};
constexpr int kSlotsPerNode = 2;  // two running jobs of at most 4 GPUs share a node
constexpr int kEndedKeep = 5;     // Advance() calls a finished run stays in squeue and sacct

Result<nlohmann::json> LoadFirst(const std::string& path, const char* array,
                                 const std::string& state) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read template " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded() || !doc.contains(array) || !doc[array].is_array() || doc[array].empty())
    return Status::InvalidArgument(fmt::format("{}: no \"{}\" array", path, array));
  for (const auto& item : doc[array])
    if (state.empty() || item.value("job_state", "") == state) return item;
  return Status::InvalidArgument(fmt::format("{}: no {} entry", path, state));
}

std::string Iso(int64_t epoch) {
  time_t t = static_cast<time_t>(epoch);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string Hms(int64_t minutes) {
  return minutes >= 1440
             ? fmt::format("{}-{:02}:{:02}:00", minutes / 1440, minutes % 1440 / 60, minutes % 60)
             : fmt::format("{:02}:{:02}:00", minutes / 60, minutes % 60);
}

}  // namespace

Result<std::unique_ptr<ScriptedSlurm>> ScriptedSlurm::Create(const ScaleOptions& options,
                                                             int64_t now, LogSink sink) {
  auto job = LoadFirst(options.template_dir + "/squeue_mixed.json", "jobs", "PENDING");
  if (!job.ok()) return job.status();
  auto node = LoadFirst(options.template_dir + "/sinfo_two_nodes.json", "nodes", "");
  if (!node.ok()) return node.status();
  std::error_code ec;
  std::filesystem::create_directories(options.dir + "/logs", ec);
  std::filesystem::create_directories(options.dir + "/jobs", ec);
  if (ec) return Status::Unavailable("cannot create " + options.dir + ": " + ec.message());
  std::unique_ptr<ScriptedSlurm> s(
      new ScriptedSlurm(options, std::move(*job), std::move(*node), std::move(sink)));
  s->Generate(now);
  return s;
}

ScriptedSlurm::ScriptedSlurm(const ScaleOptions& options, nlohmann::json job_template,
                             nlohmann::json node_template, LogSink sink)
    : options_(options),
      job_template_(std::move(job_template)),
      node_template_(std::move(node_template)),
      sink_(std::move(sink)),
      rng_(options.seed) {
  passwd* pw = getpwuid(geteuid());
  user_ = pw != nullptr ? pw->pw_name : "root";
  uid_ = geteuid();
  // Fields the generator leaves alone but that must not claim things about the jobs.
  for (const char* k : {"job_resources", "gres_detail", "flags"}) job_template_.erase(k);
}

ScriptedSlurm::Job ScriptedSlurm::NewPending(int64_t now) {
  Job j;
  j.id = next_id_++;
  j.model = kModels[rng_.Below(kModels.size())];
  j.dataset = kDatasets[rng_.Below(kDatasets.size())];
  j.name = fmt::format("{}-{}-{}-{:02}", j.model, j.dataset, kTasks[rng_.Below(kTasks.size())],
                       rng_.Below(40));
  j.partition = "gpu";
  j.state = "PENDING";
  j.reason = kReasons[rng_.Below(kReasons.size())];
  static constexpr std::array<int, 4> kGpus = {1, 2, 4, 8};
  j.gpus_per_node = kGpus[rng_.Below(kGpus.size())];
  j.nodes = j.gpus_per_node == 8 && rng_.Below(4) == 0 ? 2 : 1;
  j.submit = now - static_cast<int64_t>(rng_.Below(86400));
  j.time_limit_min = kLimits[rng_.Below(kLimits.size())];
  j.priority = 1000 + static_cast<int64_t>(rng_.Below(100000));
  j.style = static_cast<int>(rng_.Below(3));
  return j;
}

void ScriptedSlurm::StartJob(Job& j, int slot, int64_t now) {
  j.state = "RUNNING";
  j.reason = "None";
  j.slot = slot;
  j.nodes = 1;
  j.gpus_per_node = std::min(j.gpus_per_node, 8 / kSlotsPerNode);
  j.start = now;
  if (sink_.started) sink_.started(std::to_string(j.id), StdOut(j), j.style);
}

void ScriptedSlurm::Generate(int64_t now) {
  int nodes = (options_.running + kSlotsPerNode - 1) / kSlotsPerNode + 8;
  for (int n = 1; n <= nodes; ++n) node_names_.push_back(fmt::format("gpu{:04}", n));
  for (int s = static_cast<int>(node_names_.size()) * kSlotsPerNode - 1; s >= 0; --s)
    free_slots_.push_back(s);
  for (int i = 0; i < options_.running; ++i) {
    Job j = NewPending(now);
    int slot = free_slots_.back();
    free_slots_.pop_back();
    StartJob(j, slot, now - 60 - static_cast<int64_t>(rng_.Below(36000)));
    j.submit = std::min(j.submit, j.start - 30);
    jobs_.emplace(j.id, std::move(j));
  }
  for (int i = 0; i < options_.pending; ++i) {
    Job j = NewPending(now);
    jobs_.emplace(j.id, std::move(j));
  }
  RenderAll();
}

void ScriptedSlurm::Advance(int64_t now) {
  std::lock_guard lock(mu_);
  ++advances_;
  // Runs that ended kEndedKeep intervals ago leave squeue (MinJobAge) and sacct's window.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    bool gone = it->second.ended_at > 0 && it->second.ended_at + kEndedKeep < advances_;
    it = gone ? jobs_.erase(it) : std::next(it);
  }
  std::erase_if(ended_, [&](const Job& j) { return j.ended_at + kEndedKeep < advances_; });
  // End `churn` running jobs, chosen by the seeded stream.
  std::vector<int64_t> running;
  for (const auto& [id, j] : jobs_)
    if (j.state == "RUNNING") running.push_back(id);
  for (int k = 0; k < options_.churn && !running.empty(); ++k) {
    size_t pick = rng_.Below(running.size());
    Job& j = jobs_[running[pick]];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(pick));
    bool failed = (finished_ + 1) % 10 == 0;
    j.state = failed ? "FAILED" : "COMPLETED";
    j.exit_code = failed ? 1 : 0;
    j.end = now;
    j.ended_at = advances_;
    free_slots_.push_back(j.slot);
    ++finished_;
    failed_ += failed ? 1 : 0;
    if (sink_.ended) sink_.ended(std::to_string(j.id));
    Render(j);
    ended_.push_back(j);
  }
  // As many of the oldest pending single-node jobs start in the freed slots (the running count
  // stays as asked; the spare nodes stay idle); new jobs arrive.
  int to_start = static_cast<int>(running.size()) < options_.running
                     ? options_.running - static_cast<int>(running.size())
                     : 0;
  for (auto& [id, j] : jobs_) {
    if (free_slots_.empty() || to_start == 0) break;
    if (j.state != "PENDING" || j.nodes != 1 || j.gpus_per_node > 8 / kSlotsPerNode) continue;
    int slot = free_slots_.back();
    free_slots_.pop_back();
    StartJob(j, slot, now);
    Render(j);
    --to_start;
  }
  for (int k = 0; k < options_.churn; ++k) {
    Job j = NewPending(now);
    j.submit = now;
    Render(j);
    jobs_.emplace(j.id, std::move(j));
  }
  PublishAnswers();
}

void ScriptedSlurm::PublishAnswers() {
  std::string out = "{\n  \"meta\": {},\n  \"errors\": [],\n  \"jobs\": [\n";
  bool first = true;
  for (const auto& [id, j] : jobs_) {
    if (!first) out += ",\n";
    first = false;
    out += j.rendered;
  }
  out += "\n  ]\n}\n";
  squeue_ = std::move(out);
  // sinfo: GPUs in use per node from the running jobs' slots.
  std::vector<int> used(node_names_.size(), 0);
  for (const auto& [id, j] : jobs_)
    if (j.state == "RUNNING") used[static_cast<size_t>(j.slot / kSlotsPerNode)] += j.gpus_per_node;
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t n = 0; n < node_names_.size(); ++n) {
    nlohmann::json node = node_template_;
    node["name"] = node["hostname"] = node_names_[n];
    node["state"] = used[n] == 0 ? "idle" : (used[n] >= 8 ? "allocated" : "mixed");
    node["state_flags"] = nlohmann::json::array();
    node["gres"] = "gpu:8";
    node["gres_used"] = fmt::format("gpu:{}", used[n]);
    node["reason"] = "";
    node["partitions"] = {"gpu"};
    nodes.push_back(std::move(node));
  }
  sinfo_ = nlohmann::json{{"meta", nlohmann::json::object()},
                          {"errors", nlohmann::json::array()},
                          {"nodes", std::move(nodes)}}
               .dump(2);
}

void ScriptedSlurm::RenderAll() {
  std::lock_guard lock(mu_);
  for (auto& [id, j] : jobs_) Render(j);
  PublishAnswers();
}

std::string ScriptedSlurm::StdOut(const Job& j) const {
  return fmt::format("{}/logs/{}-{}.out", options_.dir, j.name, j.id);
}

void ScriptedSlurm::Render(Job& j) const {
  nlohmann::json o = job_template_;
  bool started = j.state != "PENDING";
  std::string node = started ? node_names_[static_cast<size_t>(j.slot / kSlotsPerNode)] : "";
  o["job_id"] = j.id;
  o["name"] = j.name;
  o["user_name"] = user_;
  o["user_id"] = uid_;
  o["account"] = "ml";
  o["partition"] = j.partition;
  o["job_state"] = j.state;
  o["state_reason"] = j.reason;
  o["priority"] = j.priority;
  o["nice"] = nullptr;
  o["node_count"] = j.nodes;
  o["tres_per_node"] = fmt::format("gres:gpu:{}", j.gpus_per_node);
  o["tres_per_job"] = "";
  o["tres_req_str"] = fmt::format("cpu={},mem={}M,node={},billing={},gres/gpu={}", 8 * j.nodes,
                                  64000 * j.nodes, j.nodes, 8 * j.nodes, j.gpus_per_node * j.nodes);
  o["nodes"] = node;
  o["batch_host"] = node;
  o["submit_time"] = j.submit;
  o["eligible_time"] = j.submit;
  o["accrue_time"] = j.submit;
  o["start_time"] = started ? j.start : j.submit + 3600;
  o["end_time"] = j.end > 0 ? j.end : (started ? j.start + j.time_limit_min * 60 : 0);
  o["time_limit"] = j.time_limit_min;
  o["exit_code"] = j.exit_code * 256;
  o["restart_cnt"] = 0;
  o["comment"] = "";
  o["command"] = fmt::format("{}/jobs/{}.sh", options_.dir, j.id);
  o["current_working_directory"] = options_.dir + "/jobs";
  o["standard_output"] = StdOut(j);
  o["standard_error"] = "";
  o["excluded_nodes"] = "";
  o["required_nodes"] = "";
  o["dependency"] = j.reason == "Dependency" ? fmt::format("afterok:{}", j.id - 1) : "";
  std::string text = o.dump(2);
  // Indent as an element of the top-level "jobs" array.
  j.rendered.clear();
  j.rendered.reserve(text.size() + text.size() / 20);
  j.rendered += "    ";
  for (char c : text) {
    j.rendered += c;
    if (c == '\n') j.rendered += "    ";
  }
}

std::string ScriptedSlurm::ShowJob(const Job& j) const {
  bool started = j.state != "PENDING";
  std::string node = started ? node_names_[static_cast<size_t>(j.slot / kSlotsPerNode)] : "(null)";
  return fmt::format(
      "JobId={} JobName={} UserId={}({}) GroupId={}({}) MCS_label=N/A Priority={} Nice=0 "
      "Account=ml QOS=normal JobState={} Reason={} Dependency=(null) Requeue=1 Restarts=0 "
      "BatchFlag=1 Reboot=0 ExitCode={}:0 TimeLimit={} TimeMin=N/A SubmitTime={} "
      "EligibleTime={} StartTime={} Partition={} NodeList={} BatchHost={} NumNodes={} "
      "NumCPUs={} TRES=cpu={},gres/gpu={} Command={}/jobs/{}.sh WorkDir={}/jobs StdErr={} "
      "StdIn=/dev/null StdOut={} TresPerNode=gres:gpu:{}\n",
      j.id, j.name, user_, uid_, user_, uid_, j.priority, j.state, j.reason, j.exit_code,
      Hms(j.time_limit_min), Iso(j.submit), Iso(j.submit), started ? Iso(j.start) : "Unknown",
      j.partition, node, node, j.nodes, 8 * j.nodes, 8 * j.nodes, j.gpus_per_node * j.nodes,
      options_.dir, j.id, options_.dir, StdOut(j), StdOut(j), j.gpus_per_node);
}

std::string ScriptedSlurm::Script(const Job& j) const {
  int steps = 1000 * (1 + static_cast<int>(j.id % 20));
  return fmt::format(
      "#!/bin/bash\n#SBATCH --job-name={}\n#SBATCH --partition={}\n#SBATCH --nodes={}\n"
      "#SBATCH --gres=gpu:{}\n#SBATCH --cpus-per-task=8\n#SBATCH --time={}\n"
      "#SBATCH --output=%x-%j.out\n\nsource ~/venvs/train/bin/activate\n"
      "srun python train.py --model_name {} --dataset {} --per_device_train_batch_size {} "
      "--max_steps {} --learning_rate 3e-4 --output_dir ckpt/{}\n",
      j.name, j.partition, j.nodes, j.gpus_per_node, Hms(j.time_limit_min), j.model, j.dataset,
      8 << (j.id % 3), steps, j.id);
}

std::string ScriptedSlurm::Sacct() const {
  std::string out;
  for (const auto& j : ended_) {
    std::string node = node_names_[static_cast<size_t>(j.slot / kSlotsPerNode)];
    out += fmt::format("{}|{}|{}|{}|{}|{}:0|{}|{}|{}|{}|{}|{}/jobs\n", j.id, j.name, user_,
                       j.partition, j.state, j.exit_code, node, Iso(j.submit), Iso(j.start),
                       Iso(j.end), Hms(j.time_limit_min), options_.dir);
  }
  return out;
}

Result<slurm::CommandOutput> ScriptedSlurm::Run(const std::vector<std::string>& argv,
                                                Duration /*timeout*/) {
  if (argv.empty()) return Status::InvalidArgument("empty command");
  std::lock_guard lock(mu_);
  const std::string& cmd = argv[0];
  if (cmd == "squeue") return slurm::CommandOutput{0, squeue_, ""};
  if (cmd == "sinfo") return slurm::CommandOutput{0, sinfo_, ""};
  if (cmd == "sacct") return slurm::CommandOutput{0, Sacct(), ""};
  if (cmd == "scontrol" && argv.size() >= 5 && (argv[1] == "show" || argv[1] == "write")) {
    auto id = std::strtoll(argv[argv[1] == "show" ? argv.size() - 1 : 3].c_str(), nullptr, 10);
    auto it = jobs_.find(id);
    if (it == jobs_.end())
      return slurm::CommandOutput{1, "", "slurm_load_jobs error: Invalid job id specified\n"};
    return slurm::CommandOutput{0, argv[1] == "show" ? ShowJob(it->second) : Script(it->second),
                                ""};
  }
  if (cmd == "scontrol" && argv.size() >= 3 && argv[1] == "show" && argv[2] == "config")
    return slurm::CommandOutput{0, "PriorityType            = priority/multifactor\n", ""};
  if (cmd == "scontrol") return slurm::CommandOutput{0, "", ""};  // actions succeed
  return slurm::CommandOutput{1, "", "scripted slurm: no answer for " + slurm::JoinArgv(argv)};
}

std::vector<std::string> ScriptedSlurm::LiveIds() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, j] : jobs_)
    if (j.state == "PENDING" || j.state == "RUNNING") ids.push_back(std::to_string(id));
  return ids;
}

size_t ScriptedSlurm::SqueueBytes() const {
  std::lock_guard lock(mu_);
  return squeue_.size();
}

int64_t ScriptedSlurm::Finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

int64_t ScriptedSlurm::Failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

}  // namespace schedmate::bench
