#pragma once
// StyledLogGenerator: a deterministic synthetic training log that mixes the styles the tracker
// meets in one job's output, for the large-file benchmarks (1 GB and its small smoke version).
// A run is a sequence of epochs; each epoch is written in one style, picked at random:
//  * tqdm bars whose states are separated by '\r' (several per physical line), with HF Trainer
//    dict lines ({'loss': ..., 'epoch': ...}) every logging interval;
//  * Lightning-like bars with the loss in the postfix ("Epoch 3:  45%|...| 450/1000 [...,
//  loss=..]");
//  * Keras-like bars ("450/1000 [=====>....] - ETA: 1:40 - loss: ...") under an "Epoch 3/10"
//    header, ending in an epoch line with val_ metrics;
//  * key=value logging lines with timestamps ("2024-05-01 12:00:00,123 INFO [train.py:245]
//    epoch=3 step=450/1000 loss=... lr=...");
//  * mmdet-like lines ("Epoch [3][450/1000]\tlr: ..., eta: ..., loss: ...").
// Between and inside epochs: warnings, NCCL lines with rank prefixes, stack traces of handled
// errors, checkpoint messages, evaluation phases (a header, an eval bar, eval results) and long
// lines (config dumps and printed token ids of 2-20 KB, tqdm lines with hundreds of states).
// All text is made up for this benchmark.

#include <cstdint>
#include <string>

#include "core/rng.h"

namespace schedmate::tracker::bench {

class StyledLogGenerator {
 public:
  explicit StyledLogGenerator(uint64_t seed) : rng_(seed) {}
  // Appends at least `bytes` bytes of whole lines to `out`; successive calls continue the run.
  void Append(size_t bytes, std::string& out);

 private:
  void Noise(std::string& out);
  void LongLine(std::string& out);
  void EvalPhase(std::string& out);
  void Epoch(std::string& out);
  void Timestamp(std::string& out);

  Rng rng_;
  int epoch_ = 0;
  int total_epochs_ = 40;
  int64_t global_step_ = 0;
  int64_t seconds_ = 0;  // the clock the timestamps show
};

}  // namespace schedmate::tracker::bench
