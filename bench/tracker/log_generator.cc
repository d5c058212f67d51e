#include "log_generator.h"

#include <cstdio>

#include "core/rng.h"

namespace schedmate::tracker::bench {

void GenerateMixedLog(size_t bytes, uint64_t seed, std::string& out) {
  Rng rng(seed);
  char buf[1024];
  int64_t step = 0;
  int epoch = 0;
  const size_t target = out.size() + bytes;
  while (out.size() < target) {
    ++step;
    if (step % 1000 == 0) ++epoch;
    const double loss = 2.0 / (1.0 + 0.001 * static_cast<double>(step)) + 0.01 * rng.Uniform();
    const int kind = static_cast<int>(rng.Uniform() * 100);
    int n = 0;
    if (kind < 30) {
      n = std::snprintf(buf, sizeof(buf),
                        "2024-05-01 12:%02d:%02d,%03d - INFO - trainer - epoch=%d step=%lld/100000 "
                        "loss=%.4f lr=%.3e grad_norm=%.3f tokens_per_sec=%.1f\n",
                        static_cast<int>(step / 60 % 60), static_cast<int>(step % 60),
                        static_cast<int>(step % 1000), epoch, static_cast<long long>(step), loss,
                        3e-4 * rng.Uniform(), 1.0 + rng.Uniform(), 12000 + 100 * rng.Uniform());
    } else if (kind < 45) {
      n = std::snprintf(buf, sizeof(buf),
                        "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}\n",
                        loss, rng.Uniform(), 2e-5 * rng.Uniform(),
                        static_cast<double>(step) / 1000.0);
    } else if (kind < 55) {
      // A tqdm line with several '\r' states.
      std::string line;
      for (int k = 0; k < 4; ++k) {
        char b[256];
        std::snprintf(b, sizeof(b),
                      "\rEpoch %d: %3d%%|#####     | %lld/100000 [01:%02d<10:00, %.2fit/s]", epoch,
                      static_cast<int>(step / 1000), static_cast<long long>(step + k), k,
                      5.0 + rng.Uniform());
        line += b;
      }
      line += "\n";
      out += line;
      continue;
    } else if (kind < 62) {
      n = std::snprintf(
          buf, sizeof(buf),
          "[05/01 12:00:%02d d2.utils.events]: eta: 1:%02d:10  iter: %lld  total_loss: %.4f  "
          "loss_cls: %.4f  loss_box_reg: %.4f  time: %.4f  data_time: 0.0123  lr: 0.0004  "
          "max_mem: 11812M\n",
          static_cast<int>(step % 60), static_cast<int>(step % 60), static_cast<long long>(step),
          loss, loss / 2, loss / 3, 0.6 + 0.1 * rng.Uniform());
    } else if (kind < 67) {
      n = std::snprintf(
          buf, sizeof(buf),
          "%lld/422 [==============>...............] - ETA: 7s - loss: %.4f - accuracy: %.4f\n",
          static_cast<long long>(step % 422), loss, rng.Uniform());
    } else if (kind < 80) {
      n = std::snprintf(
          buf, sizeof(buf),
          "[INFO|2024-05-01 12:00:00] modeling_utils.py:%d >> loading weights file "
          "model-%05d.safetensors from cache at /root/.cache/huggingface/hub/models\n",
          static_cast<int>(1000 + step % 3000), static_cast<int>(step % 7));
    } else if (kind < 88) {
      n = std::snprintf(
          buf, sizeof(buf),
          "/usr/lib/python3.10/site-packages/torch/utils/data.py:%d: UserWarning: This "
          "DataLoader will create 8 worker processes in total.\n",
          static_cast<int>(step % 900));
    } else if (kind < 94) {
      n = std::snprintf(
          buf, sizeof(buf),
          "{'eval_loss': %.4f, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.2, "
          "'epoch': %.2f}\n",
          loss * 1.1, static_cast<double>(step) / 1000.0);
    } else if (kind < 97) {
      n = std::snprintf(
          buf, sizeof(buf),
          "  File \"/work/train.py\", line %d, in training_step\n    loss = model(batch)\n",
          static_cast<int>(step % 500));
    } else {
      n = std::snprintf(buf, sizeof(buf),
                        "[rank%d]: NCCL INFO Channel %02d : %d[%d] -> %d[%d] via P2P/IPC\n",
                        static_cast<int>(step % 8), static_cast<int>(step % 32),
                        static_cast<int>(step % 8), static_cast<int>(step % 4),
                        static_cast<int>((step + 1) % 8), static_cast<int>((step + 1) % 4));
    }
    if (n > 0) out.append(buf, static_cast<size_t>(std::min<int>(n, sizeof(buf) - 1)));
  }
}

}  // namespace schedmate::tracker::bench
