#include "styled_log_generator.h"

#include <cstdarg>
#include <cstdio>

namespace schedmate::tracker::bench {
namespace {

// printf-style append.
__attribute__((format(printf, 2, 3))) void Appendf(std::string& out, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n > 0) out.append(buf, static_cast<size_t>(n < static_cast<int>(sizeof(buf)) ? n : 2047));
}

// A tqdm bar of width 10 with Unicode blocks ("████▌     ").
void TqdmBar(std::string& out, int64_t done, int64_t total) {
  const int64_t eighths = total > 0 ? done * 80 / total : 0;
  const int64_t full = eighths / 8;
  static const char* kPartial[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  for (int64_t i = 0; i < full && i < 10; ++i) out += "█";
  int64_t used = full;
  if (full < 10 && eighths % 8 != 0) {
    out += kPartial[eighths % 8];
    ++used;
  }
  for (int64_t i = used; i < 10; ++i) out += ' ';
}

void Clock(std::string& out, int64_t s) {
  Appendf(out, "%02lld:%02lld", static_cast<long long>(s / 60 % 100),
          static_cast<long long>(s % 60));
}

}  // namespace

void StyledLogGenerator::Timestamp(std::string& out) {
  const int64_t s = seconds_;
  Appendf(out, "2024-05-%02d %02d:%02d:%02d,%03d", static_cast<int>(1 + s / 86400 % 28),
          static_cast<int>(s / 3600 % 24), static_cast<int>(s / 60 % 60), static_cast<int>(s % 60),
          static_cast<int>(rng_.Below(1000)));
}

void StyledLogGenerator::Noise(std::string& out) {
  switch (rng_.Below(8)) {
    case 0:
      Appendf(out,
              "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:%d: UserWarning: "
              "Using a non-full backward hook when the forward contains multiple autograd "
              "Nodes is deprecated\n",
              static_cast<int>(1000 + rng_.Below(900)));
      break;
    case 1:
      Appendf(out,
              "[rank%d]: node-%02d:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via "
              "P2P/CUMEM/read\n",
              static_cast<int>(rng_.Below(8)), static_cast<int>(rng_.Below(16)),
              static_cast<int>(4000 + rng_.Below(999)), static_cast<int>(4000 + rng_.Below(999)),
              static_cast<int>(rng_.Below(8)), static_cast<int>(rng_.Below(24)),
              static_cast<int>(rng_.Below(8)), static_cast<int>(rng_.Below(8)),
              static_cast<int>(rng_.Below(8)), static_cast<int>(rng_.Below(8)));
      break;
    case 2:
      out +=
          "Traceback (most recent call last):\n"
          "  File \"/srv/app/data/loader.py\", line 118, in __next__\n"
          "    batch = self._fetch(index)\n"
          "  File \"/srv/app/data/remote.py\", line 57, in _fetch\n"
          "    raise ConnectionResetError(\"peer closed the stream\")\n"
          "ConnectionResetError: peer closed the stream\n";
      Appendf(out, "WARNING:data.remote:retrying shard %d after a reset (attempt %d/5)\n",
              static_cast<int>(rng_.Below(4096)), static_cast<int>(1 + rng_.Below(4)));
      break;
    case 3:
      Timestamp(out);
      Appendf(out, " WARNING [scaler.py:%d] gradient overflow, skipping step; loss scale now %d\n",
              static_cast<int>(100 + rng_.Below(300)), 1 << (10 + static_cast<int>(rng_.Below(6))));
      break;
    case 4:
      Appendf(out,
              "[W reducer.cpp:%d] Warning: find_unused_parameters=True was specified in DDP "
              "constructor, but did not find any unused parameters in the forward pass.\n",
              static_cast<int>(1200 + rng_.Below(200)));
      break;
    case 5:
      Timestamp(out);
      Appendf(out,
              " INFO [checkpoint.py:%d] Saving model checkpoint to "
              "/scratch/run-%03d/checkpoint-%lld\n",
              static_cast<int>(40 + rng_.Below(60)), static_cast<int>(rng_.Below(1000)),
              static_cast<long long>(global_step_));
      break;
    case 6:
      Appendf(out, "[INFO|tokenization_utils_base.py:%d] %s\n",
              static_cast<int>(2000 + rng_.Below(200)),
              "loading file tokenizer.json from cache at /cache/hub/models--org--tiny/snapshots");
      break;
    default:
      Appendf(out,
              "  warnings.warn(\"The given NumPy array is not writable, and PyTorch does "
              "not support non-writable tensors.\")\n");
      break;
  }
}

void StyledLogGenerator::LongLine(std::string& out) {
  const size_t target = 2000 + rng_.Below(18000);
  const size_t start = out.size();
  switch (rng_.Below(3)) {
    case 0:  // an argparse/config dump
      out += "Namespace(";
      for (int i = 0; out.size() - start < target; ++i) {
        Appendf(out, "%sopt_%d=%s", i ? ", " : "", i,
                rng_.Below(2) ? "True" : "'/data/shards/part-0042.arrow'");
      }
      out += ")\n";
      break;
    case 1:  // printed token ids of a sample
      out += "input_ids: [";
      for (int i = 0; out.size() - start < target; ++i) {
        Appendf(out, "%s%d", i ? ", " : "", static_cast<int>(rng_.Below(50000)));
      }
      out += "]\n";
      break;
    default: {  // a tqdm line with hundreds of '\r' states
      const int64_t total = 5000;
      for (int64_t k = 0; out.size() - start < target; ++k) {
        const int64_t done = (k * 7) % total;
        Appendf(out, "\rMap (num_proc=8): %3d%%|", static_cast<int>(done * 100 / total));
        TqdmBar(out, done, total);
        Appendf(out, "| %lld/%lld [00:%02d<00:%02d, %.2f examples/s]", static_cast<long long>(done),
                static_cast<long long>(total), static_cast<int>(k % 60),
                static_cast<int>(59 - k % 60), 900 + 100 * rng_.Uniform());
      }
      out += "\n";
      break;
    }
  }
}

void StyledLogGenerator::EvalPhase(std::string& out) {
  const int64_t total = 50 + static_cast<int64_t>(rng_.Below(150));
  const double eval_loss = 0.3 + 2.0 / (1.0 + 0.001 * static_cast<double>(global_step_));
  if (rng_.Below(2) == 0) {  // HF Trainer
    Appendf(out, "***** Running Evaluation *****\n  Num examples = %lld\n  Batch size = 32\n",
            static_cast<long long>(total * 32));
    for (int64_t s = 1; s <= total; ++s) {
      Appendf(out, "\r%3d%%|", static_cast<int>(s * 100 / total));
      TqdmBar(out, s, total);
      Appendf(out, "| %lld/%lld [00:", static_cast<long long>(s), static_cast<long long>(total));
      Clock(out, s / 8);
      Appendf(out, "<00:%02d, %.2fit/s]", static_cast<int>((total - s) / 8 % 60),
              7.5 + rng_.Uniform());
      if (s % 16 == 0 || s == total) out += "\n";
    }
    Appendf(out,
            "{'eval_loss': %.4f, 'eval_accuracy': %.4f, 'eval_runtime': %.2f, "
            "'eval_samples_per_second': %.1f, 'epoch': %.2f}\n",
            eval_loss, 0.5 + 0.4 * rng_.Uniform(), 10 + 5 * rng_.Uniform(),
            300 + 100 * rng_.Uniform(), static_cast<double>(epoch_));
  } else {  // Lightning
    for (int64_t s = 1; s <= total; ++s) {
      Appendf(out, "\rValidation DataLoader 0: %3d%%|", static_cast<int>(s * 100 / total));
      TqdmBar(out, s, total);
      Appendf(out, "| %lld/%lld [00:%02d<00:%02d, %.2fit/s]", static_cast<long long>(s),
              static_cast<long long>(total), static_cast<int>(s / 10 % 60),
              static_cast<int>((total - s) / 10 % 60), 12 + rng_.Uniform());
      if (s % 32 == 0 || s == total) out += "\n";
    }
    Appendf(out,
            "Epoch %d, global step %lld: 'val_loss' reached %.5f (best %.5f), saving model to "
            "'/scratch/ckpt/epoch=%d-step=%lld.ckpt' as top 3\n",
            epoch_, static_cast<long long>(global_step_), eval_loss, eval_loss, epoch_,
            static_cast<long long>(global_step_));
  }
}

void StyledLogGenerator::Epoch(std::string& out) {
  if (++epoch_ > total_epochs_) {  // the job was requeued: a new run starts from scratch
    epoch_ = 1;
    global_step_ = 0;
    out += "Restarting training from scratch (requeued by the scheduler)\n";
  }
  const int64_t steps = 200 + static_cast<int64_t>(rng_.Below(1800));
  const int style = static_cast<int>(rng_.Below(5));
  if (style == 2) Appendf(out, "Epoch %d/%d\n", epoch_, total_epochs_);
  for (int64_t s = 1; s <= steps; ++s) {
    ++global_step_;
    seconds_ += 1;
    const double loss =
        0.2 + 2.0 / (1.0 + 0.001 * static_cast<double>(global_step_)) + 0.02 * rng_.Uniform();
    const double rate = 5.0 + rng_.Uniform();
    switch (style) {
      case 0:  // HF Trainer: tqdm states plus a dict line every 10 steps
        Appendf(out, "\r%3d%%|", static_cast<int>(s * 100 / steps));
        TqdmBar(out, s, steps);
        Appendf(out, "| %lld/%lld [", static_cast<long long>(s), static_cast<long long>(steps));
        Clock(out, s / 5);
        out += '<';
        Clock(out, (steps - s) / 5);
        Appendf(out, ", %.2fit/s]", rate);
        if (s % 10 == 0) {
          Appendf(out,
                  "\n{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}\n",
                  loss, 0.5 + rng_.Uniform(), 5e-5 * (1.0 - static_cast<double>(s) / steps),
                  epoch_ - 1 + static_cast<double>(s) / static_cast<double>(steps));
        }
        break;
      case 1:  // Lightning
        Appendf(out, "\rEpoch %d:  %3d%%|", epoch_ - 1, static_cast<int>(s * 100 / steps));
        TqdmBar(out, s, steps);
        Appendf(out, "| %lld/%lld [", static_cast<long long>(s), static_cast<long long>(steps));
        Clock(out, s / 5);
        out += '<';
        Clock(out, (steps - s) / 5);
        Appendf(out, ", %.2fit/s, v_num=%d, train_loss=%.3f]", rate, epoch_ % 7, loss);
        if (s % 25 == 0) out += "\n";
        break;
      case 2: {  // Keras
        const int width = 30;
        const int64_t filled = s * width / steps;
        Appendf(out, "\r%lld/%lld [", static_cast<long long>(s), static_cast<long long>(steps));
        for (int i = 0; i < width; ++i) out += i < filled ? '=' : (i == filled ? '>' : '.');
        if (s < steps) {
          Appendf(out, "] - ETA: %llds - loss: %.4f - accuracy: %.4f",
                  static_cast<long long>((steps - s) / 8), loss, 0.9 - loss / 10);
          if (s % 40 == 0) out += "\n";
        } else {
          Appendf(out,
                  "] - %llds %dms/step - loss: %.4f - accuracy: %.4f - val_loss: %.4f - "
                  "val_accuracy: %.4f\n",
                  static_cast<long long>(steps / 8), 120 + static_cast<int>(rng_.Below(20)), loss,
                  0.9 - loss / 10, loss * 1.1, 0.88 - loss / 10);
        }
        break;
      }
      case 3:  // key=value logging with timestamps
        Timestamp(out);
        Appendf(out,
                " INFO [train.py:245] epoch=%d step=%lld/%lld global_step=%lld loss=%.4f "
                "lr=%.3e grad_norm=%.3f tokens_per_sec=%.1f mem_gb=%.1f\n",
                epoch_, static_cast<long long>(s), static_cast<long long>(steps),
                static_cast<long long>(global_step_), loss, 3e-4 * rng_.Uniform(),
                1.0 + rng_.Uniform(), 12000 + 500 * rng_.Uniform(), 30 + rng_.Uniform());
        break;
      default:  // mmdet-like
        Timestamp(out);
        Appendf(out,
                " - mmdet - INFO - Epoch [%d][%lld/%lld]\tlr: %.3e, eta: %d:%02d:%02d, time: "
                "%.3f, data_time: %.3f, memory: %d, loss_cls: %.4f, loss_bbox: %.4f, loss: %.4f\n",
                epoch_, static_cast<long long>(s), static_cast<long long>(steps),
                0.02 * rng_.Uniform(), static_cast<int>(steps - s) / 3600,
                static_cast<int>(steps - s) / 60 % 60, static_cast<int>(steps - s) % 60,
                0.5 + 0.05 * rng_.Uniform(), 0.01 + 0.005 * rng_.Uniform(),
                4000 + static_cast<int>(rng_.Below(600)), loss / 3, loss / 2, loss);
        break;
    }
    if (rng_.Below(40) == 0) {
      if (style <= 2) out += "\n";  // a bar line ends before other output
      Noise(out);
    }
    if (rng_.Below(1500) == 0) {
      if (style <= 2) out += "\n";
      LongLine(out);
    }
  }
  if (style == 0 || style == 1) out += "\n";
  EvalPhase(out);
  if (rng_.Below(3) == 0) LongLine(out);
}

void StyledLogGenerator::Append(size_t bytes, std::string& out) {
  const size_t target = out.size() + bytes;
  while (out.size() < target) Epoch(out);
}

}  // namespace schedmate::tracker::bench
