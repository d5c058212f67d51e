#include "tracker/line_classifier.h"

#include <algorithm>
#include <cstdint>

namespace schedmate::tracker {
namespace {

struct Seed {
  LineClass cls;
  std::string_view text;
};

// Generic example lines per category, written for this engine (not copied from any log).
constexpr Seed kSeeds[] = {
    {LineClass::kProgress, "epoch 3 step 120/1000 loss 0.532 lr 1e-4"},
    {LineClass::kProgress, "iter 500 | loss 2.31 | time 0.45s | lr 3.0e-4"},
    {LineClass::kProgress,
     "Epoch 2/10:  45%|#####     | 450/1000 [01:23<01:40,  5.41it/s, loss=0.43]"},
    {LineClass::kProgress, "{'loss': 0.21, 'learning_rate': 2e-05, 'epoch': 1.5}"},
    {LineClass::kProgress, "step 100 | loss 3.2 | 1200 tokens/s | eta 2h"},
    {LineClass::kProgress, "Train Epoch: 3 [2560/60000 (4%)]  Loss: 0.231"},
    {LineClass::kProgress,
     "iteration 2000/100000 | elapsed time per iteration (ms): 512.3 | lm loss 3.21"},
    {LineClass::kProgress, "120/500 [=====>........] - ETA: 30s - loss: 0.41 - acc: 0.88"},
    {LineClass::kProgress, "global_step=400 train_loss=1.02 samples_per_second=88.1"},
    {LineClass::kProgress, "Epoch [4][200/800] lr: 1.0e-02, eta: 0:12:00, time: 0.61, loss: 0.77"},
    {LineClass::kProgress, "[iter 3000] total_loss 0.41 (0.39) data 0.01 batch 0.55"},
    {LineClass::kProgress, "ep 7 it 3400 avg loss 1.88 throughput 512 samples/sec"},
    {LineClass::kError, "Traceback (most recent call last):"},
    {LineClass::kError, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"},
    {LineClass::kError, "NCCL error in: unhandled system error, NCCL version 2.18"},
    {LineClass::kError, "Segmentation fault (core dumped)"},
    {LineClass::kError, "ERROR: process exited with non-zero status 1"},
    {LineClass::kError, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"},
    {LineClass::kError, "FileNotFoundError: [Errno 2] No such file or directory: 'data.json'"},
    {LineClass::kError, "AssertionError: shapes do not match"},
    {LineClass::kError, "srun: error: node12: task 3: Killed"},
    {LineClass::kError, "fatal: unable to connect to the rendezvous backend, raise exception"},
    {LineClass::kError, "ValueError: invalid literal for int() with base 10"},
    {LineClass::kError, "slurmstepd: error: Detected 1 oom_kill event"},
    {LineClass::kWarning, "UserWarning: this overload is deprecated and will be removed"},
    {LineClass::kWarning, "WARNING: the gradient norm is not finite, skipping"},
    {LineClass::kWarning, "FutureWarning: the default value will change in a future release"},
    {LineClass::kWarning, "warnings.warn(msg)"},
    {LineClass::kWarning, "[W socket.cpp] Warning: address family mismatch"},
    {LineClass::kWarning, "DeprecationWarning: np.float is a deprecated alias"},
    {LineClass::kWarning, "Token indices sequence length is longer than the specified maximum"},
    {LineClass::kWarning, "WARN some weights were not initialized from the checkpoint"},
    {LineClass::kInfo, "Loading checkpoint shards from disk"},
    {LineClass::kInfo, "Saving model checkpoint to output/checkpoint-500"},
    {LineClass::kInfo, "***** Running training *****"},
    {LineClass::kInfo, "Num examples = 1000, batch size = 8"},
    {LineClass::kInfo, "INFO Using device cuda with mixed precision"},
    {LineClass::kInfo, "loading configuration file config.json"},
    {LineClass::kInfo, "Starting training run, world size 8"},
    {LineClass::kInfo, "Process 1234 exits successfully."},
    {LineClass::kInfo, "INFO: initialized distributed backend nccl"},
    {LineClass::kInfo, "Model saved to ./outputs"},
    {LineClass::kOther, "}"},
    {LineClass::kOther, "\"hidden_size\": 1024,"},
    {LineClass::kOther, "[0.12 0.55 0.91 0.33]"},
    {LineClass::kOther, "https://example.org/run/abc"},
    {LineClass::kOther, "================================"},
    {LineClass::kOther, "  (layer1): Linear(in_features=512, out_features=512, bias=True)"},
    {LineClass::kOther, "sys.exit(main())"},
    {LineClass::kOther, "return self._call_impl(*args, **kwargs)"},
};

}  // namespace

std::string_view LineClassName(LineClass c) {
  switch (c) {
    case LineClass::kProgress:
      return "progress";
    case LineClass::kError:
      return "error";
    case LineClass::kWarning:
      return "warning";
    case LineClass::kInfo:
      return "info";
    case LineClass::kOther:
      return "other";
  }
  return "other";
}

std::vector<std::string> BuiltinLineClassifier::StructuralTokens(const ParsedSegment& seg) {
  std::vector<std::string> t;
  for (const Field& f : seg.fields) {
    switch (f.kind) {
      case ValueKind::kFraction:
        t.emplace_back("<frac>");
        break;
      case ValueKind::kDuration:
        t.emplace_back("<dur>");
        break;
      case ValueKind::kPercent:
        t.emplace_back("<pct>");
        break;
      case ValueKind::kNumber:
        t.emplace_back(f.key_end > f.key_begin ? "<kv>" : "<num>");
        break;
    }
    if (f.unit == Unit::kRate) t.emplace_back("<rate>");
    if (f.role != Role::kNone)
      t.emplace_back("<role" + std::to_string(static_cast<int>(f.role)) + ">");
  }
  if (seg.flags & (kFlagTqdmBar | kFlagKerasBar)) t.emplace_back("<bar>");
  if (seg.flags & kFlagJson) t.emplace_back("<json>");
  if (seg.flags & kFlagTraceback) t.emplace_back("<traceback>");
  if (t.size() > 48) t.resize(48);
  return t;
}

BuiltinLineClassifier::BuiltinLineClassifier() {
  std::vector<std::vector<uint32_t>> docs;
  std::vector<LineClass> classes;
  ParsedSegment ps;
  for (const Seed& s : kSeeds) {
    seed_parser_.Parse(s.text, ps);
    docs.push_back(tfidf_.Features(s.text, StructuralTokens(ps)));
    classes.push_back(s.cls);
  }
  tfidf_.Fit(docs);
  for (size_t k = 0; k < docs.size(); ++k) {
    protos_.Add(static_cast<size_t>(classes[k]), tfidf_.Vectorize(docs[k]));
  }
  protos_.Normalize();
}

std::vector<float> BuiltinLineClassifier::PrototypeScores(std::string_view text) {
  ParsedSegment ps;
  seed_parser_.Parse(text, ps);
  return protos_.Scores(tfidf_.Vectorize(tfidf_.Features(text, StructuralTokens(ps))));
}

BuiltinLineClassifier::Cached BuiltinLineClassifier::Score(const ParsedSegment& seg) {
  auto it = cache_.find(seg.skeleton);
  if (it != cache_.end()) return it->second;
  Cached c;
  std::vector<float> s =
      protos_.Scores(tfidf_.Vectorize(tfidf_.Features(seg.text, StructuralTokens(seg))));
  if (seg.flags & kFlagError) s[static_cast<size_t>(LineClass::kError)] += 0.3f;
  if (seg.flags & kFlagTraceback) s[static_cast<size_t>(LineClass::kError)] += 0.5f;
  if (seg.flags & kFlagWarning) s[static_cast<size_t>(LineClass::kWarning)] += 0.3f;
  if (seg.flags & (kFlagInfoLevel | kFlagCheckpoint))
    s[static_cast<size_t>(LineClass::kInfo)] += 0.15f;
  size_t best = static_cast<size_t>(LineClass::kOther);
  float best_score = 0.12f;  // below this, "other"
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] > best_score) {  // ties: lower class index (declaration order) wins
      best_score = s[k];
      best = k;
    }
  }
  c.text_class = static_cast<LineClass>(best);
  c.confidence = std::min(1.0f, best_score);
  c.family = miner_.Add(seg.text);
  if (cache_.size() > 16384) cache_.clear();
  cache_.emplace(seg.skeleton, c);
  return c;
}

LineKind BuiltinLineClassifier::Classify(const ParsedSegment& seg, const ExtractedValues& v) {
  LineKind k;
  const Cached c = Score(seg);
  k.family = c.family;
  const bool has_step = v.step.has_value();
  const bool has_epoch = v.epoch.has_value();
  k.bar = (seg.flags & (kFlagTqdmBar | kFlagKerasBar)) && v.step_from_bar;
  k.checkpoint = seg.flags & kFlagCheckpoint;
  k.summary = seg.flags & kFlagSummary;
  bool eval_fields = false;
  bool eval_loss = false;
  int train_metric_fields = 0;
  for (const Field& f : seg.fields) {
    if (f.eval && f.role != Role::kNone) eval_fields = true;
    if (f.eval && f.role == Role::kLoss) eval_loss = true;
    if (!f.eval && f.counts_as_metric) ++train_metric_fields;
  }
  // Eval-qualified words in a bar's description ("Box(P R mAP50): 100%|...") make it an eval bar.
  bool eval_before_bar = false;
  if (k.bar) {
    uint32_t bar_pos = UINT32_MAX;
    for (const Field& f : seg.fields) {
      if (f.bar_fraction) {
        bar_pos = f.value_begin;
        break;
      }
    }
    for (const Field& f : seg.fields) {
      if (f.eval && f.value_begin < bar_pos) eval_before_bar = true;
    }
  }
  if (k.bar && (seg.flags & kFlagSetupBar)) {
    // Setup/IO loops (loading shards, dataset map, tokenizing) are not training progress.
    k.bar = false;
    k.cls = LineClass::kInfo;
    return k;
  }
  // A loss that is only an evaluation loss makes the line evaluation output even when it also
  // prints timings, which training and evaluation share ("step:1390/1390 val_loss:3.27
  // train_time:204345ms step_avg:148.08ms" after the last training step).
  k.eval = ((seg.flags & kFlagEvalTag) && !(seg.flags & kFlagTrainTag)) ||
           ((eval_fields || ((seg.flags & kFlagEvalKeyTag) && !(seg.flags & kFlagTrainTag))) &&
            !v.has_strong_metric) ||
           (eval_loss && v.losses.empty()) || eval_before_bar;
  // Configuration dumps ("Namespace(epochs=10, lr=0.001, ...)"): many values, few of them progress.
  if (!k.bar && seg.fields.size() >= 8) {
    size_t with_role = 0;
    for (const Field& f : seg.fields) {
      if (f.role != Role::kNone) ++with_role;
    }
    if (with_role * 10 < seg.fields.size() * 3) {
      k.cls = LineClass::kInfo;
      return k;
    }
  }
  if (k.eval) {
    k.cls = c.text_class == LineClass::kError ? LineClass::kError : LineClass::kInfo;
    return k;
  }
  if ((seg.flags & (kFlagError | kFlagTraceback)) && train_metric_fields < 2 && !k.bar) {
    k.cls = LineClass::kError;
    k.confidence = c.confidence;
    return k;
  }
  if (k.summary && (v.has_metric || has_step || has_epoch)) {
    k.cls = LineClass::kInfo;
    return k;
  }
  const bool blocked = k.checkpoint && !v.has_strong_metric;
  if (!blocked && (k.bar || ((has_step || has_epoch) && v.has_metric))) {
    k.anchor = true;
    k.cls = LineClass::kProgress;
    return k;
  }
  if (!blocked && has_step && !v.has_metric) {
    k.step_header = true;
  } else if (has_epoch && !has_step && !v.has_metric) {
    k.epoch_header = true;
  } else if (!has_step && !has_epoch && v.has_metric && !k.checkpoint) {
    k.metric_only = true;
    if (v.has_strong_metric) {
      k.cls = LineClass::kProgress;
      return k;
    }
  }
  k.cls = c.text_class;
  if (k.cls == LineClass::kProgress) k.cls = LineClass::kInfo;  // progress-like text without values
  k.confidence = c.confidence;
  return k;
}

}  // namespace schedmate::tracker
