#include "tracker/metric_extractor.h"

#include <cmath>
#include <string>

namespace schedmate::tracker {
namespace {

int NounPriority(RateNoun n) {
  switch (n) {
    case RateNoun::kToken:
      return 3;
    case RateNoun::kSample:
    case RateNoun::kImage:
      return 2;
    case RateNoun::kStep:
    case RateNoun::kIt:
    case RateNoun::kBatch:
      return 1;
    case RateNoun::kNone:
      return 0;
  }
  return 0;
}

bool IsStepNoun(RateNoun n) {
  return n == RateNoun::kStep || n == RateNoun::kIt || n == RateNoun::kBatch;
}

// Key text without quotes and surrounding punctuation, for the losses map.
std::string CleanKey(std::string_view k) {
  std::string out;
  out.reserve(k.size());
  for (char c : k) {
    if (c == '"' || c == '\'') continue;
    out.push_back(c);
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ':' || out.back() == '='))
    out.pop_back();
  size_t b = 0;
  while (b < out.size() && (out[b] == ' ' || out[b] == '[' || out[b] == '{')) ++b;
  return out.substr(b);
}

}  // namespace

std::string_view RateUnitName(RateNoun noun, bool time_per_item) {
  if (time_per_item) {
    switch (noun) {
      case RateNoun::kIt:
        return "s/it";
      case RateNoun::kStep:
        return "s/step";
      case RateNoun::kBatch:
        return "s/batch";
      case RateNoun::kSample:
        return "s/sample";
      case RateNoun::kToken:
        return "s/token";
      case RateNoun::kImage:
        return "s/image";
      case RateNoun::kNone:
        return "s";
    }
  }
  switch (noun) {
    case RateNoun::kIt:
      return "it/s";
    case RateNoun::kStep:
      return "steps/s";
    case RateNoun::kBatch:
      return "batches/s";
    case RateNoun::kSample:
      return "samples/s";
    case RateNoun::kToken:
      return "tokens/s";
    case RateNoun::kImage:
      return "images/s";
    case RateNoun::kNone:
      return "1/s";
  }
  return "1/s";
}

void BuiltinMetricExtractor::Extract(const ParsedSegment& seg, ExtractedValues& out) {
  out = ExtractedValues();
  const Field* step = nullptr;
  const Field* epoch = nullptr;
  const Field* loss = nullptr;
  const Field* lr = nullptr;
  const Field* time = nullptr;
  const Field* rate = nullptr;
  int rate_score = -1000;
  const Field* eta = nullptr;
  const Field* percent = nullptr;
  const Field* total_steps_hint = nullptr;
  const Field* step_rate = nullptr;  // steps (iterations, updates, batches) per second
  const Field* total_epochs_hint = nullptr;
  for (const Field& f : seg.fields) {
    if (f.eval) continue;
    switch (f.role) {
      case Role::kStep:
        if (f.value < 0) break;
        if (!step || f.rank > step->rank) step = &f;
        break;
      case Role::kEpoch:
        // Loggers abbreviate large running counts (samples, episodes), never an epoch counter.
        if (f.value < 0 || f.abbreviated) break;
        if (!epoch) epoch = &f;
        break;
      case Role::kLoss: {
        if (!loss || f.rank > loss->rank) loss = &f;
        std::string key = CleanKey(seg.text.substr(f.key_begin, f.key_end - f.key_begin));
        if (!key.empty() && out.losses.size() < 64) out.losses.emplace(std::move(key), f.value);
        break;
      }
      case Role::kLr:
        if (!lr) lr = &f;
        break;
      case Role::kStepTime:
        if (f.value > 0 && (!time || f.rank > time->rank)) time = &f;
        break;
      case Role::kThroughput: {
        if (!(f.value > 0)) break;
        if (IsStepNoun(f.noun) && (!step_rate || (step_rate->avg && !f.avg))) step_rate = &f;
        int score = NounPriority(f.noun) * 4 + f.rank - (f.avg ? 2 : 0);
        if (score > rate_score) {
          rate_score = score;
          rate = &f;
        }
        break;
      }
      case Role::kEta:
        if (!eta) eta = &f;
        break;
      case Role::kTotalSteps:
        if (f.integer && f.value > 0 && !total_steps_hint) total_steps_hint = &f;
        break;
      case Role::kTotalEpochs:
        if (f.integer && f.value > 0 && !total_epochs_hint) total_epochs_hint = &f;
        break;
      case Role::kPercent:
        if (!percent) percent = &f;
        break;
      default:
        break;
    }
    if (f.counts_as_metric && f.role != Role::kStep && f.role != Role::kEpoch)
      out.has_metric = true;
  }
  if (step) {
    out.step = static_cast<int64_t>(std::llround(step->value));
    if (step->kind == ValueKind::kFraction) {
      out.total_steps = static_cast<int64_t>(std::llround(step->total));
    } else {
      // "epoch 1: 100 / 1000 ... num_updates=100": take the total of an equal fraction.
      for (const Field& f : seg.fields) {
        if (!f.eval && f.role == Role::kStep && f.kind == ValueKind::kFraction &&
            std::llround(f.value) == *out.step) {
          out.total_steps = static_cast<int64_t>(std::llround(f.total));
          break;
        }
      }
    }
    out.step_from_bar = step->bar_fraction;
  }
  if (epoch) {
    out.epoch = epoch->value;
    out.epoch_fractional = !epoch->integer;
    if (epoch->kind == ValueKind::kFraction)
      out.total_epochs = static_cast<int64_t>(std::llround(epoch->total));
  }
  // Only component losses printed (all with extra words, e.g. box_loss + cls_loss): no total.
  if (loss && !(out.losses.size() >= 2 && loss->rank < 0)) out.loss = loss->value;
  if (lr) out.lr = lr->value;
  if (time) out.step_time_s = time->value;
  if (rate) {
    Throughput tp;
    tp.value = rate->value;
    if (rate->unit_end > rate->unit_begin) {
      tp.unit = std::string(seg.text.substr(rate->unit_begin, rate->unit_end - rate->unit_begin));
    } else {
      tp.unit = std::string(RateUnitName(rate->noun, false));
    }
    out.throughput = std::move(tp);
    if (!out.step_time_s && IsStepNoun(rate->noun) && rate->value > 0) {
      out.step_time_s = 1.0 / rate->value;
      out.step_time_derived = true;
    }
    if (!out.step_time_s && step_rate) {
      out.step_time_s = 1.0 / step_rate->value;
      out.step_time_derived = true;
    }
  } else if (time && time->unit == Unit::kTimePerItem && time->unit_end > time->unit_begin) {
    // tqdm "1.01s/it": report the printed rate too.
    std::string unit(seg.text.substr(time->unit_begin, time->unit_end - time->unit_begin));
    if (unit.size() > 2 && unit[0] == 's' && unit[1] == '/') {
      out.throughput = Throughput{time->value, std::move(unit)};
    }
  }
  if (eta) {
    out.eta_s = eta->value;
    out.eta_text =
        std::string(seg.text.substr(eta->value_begin, eta->value_end - eta->value_begin));
    if (eta->unit_end > eta->unit_begin) {
      out.eta_text =
          std::string(seg.text.substr(eta->value_begin, eta->unit_end - eta->value_begin));
    }
  }
  if (percent) out.percent = percent->value;
  if (!out.total_steps && total_steps_hint) {
    out.total_steps = static_cast<int64_t>(std::llround(total_steps_hint->value));
  }
  if (!out.total_epochs && total_epochs_hint) {
    out.total_epochs = static_cast<int64_t>(std::llround(total_epochs_hint->value));
  }
  out.has_strong_metric = loss || time || rate;
}

}  // namespace schedmate::tracker
