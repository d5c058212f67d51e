#include "advisor/duration_priors.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "advisor/yaml_fields.h"
#include "core/builtin_data.h"
#include "core/check.h"
#include "core/strings.h"

namespace schedmate::advisor {
namespace internal {
std::string_view BuiltinDurationPriorsYaml();  // generated from config/duration_priors.yaml
}  // namespace internal

namespace {

class PriorsParser : public internal::YamlFields {
 public:
  using YamlFields::YamlFields;
  // A finite number in (0, max]; absent nodes fail too.
  double Positive(const YAML::Node& n, std::string_view what, double max = 1e18) const {
    std::optional<double> v = n.IsScalar() ? ParseDouble(n.Scalar()) : std::nullopt;
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > max)
      Fail(n, fmt::format("{} must be a positive number (at most {})", what, max));
    return *v;
  }
  void OnlyKeys(const YAML::Node& n, std::initializer_list<const char*> keys) const {
    if (!n.IsMap()) Fail(n, "expected a map");
    for (const auto& kv : n) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find_if(keys.begin(), keys.end(), [&](const char* a) { return k == a; }) ==
          keys.end())
        Fail(kv.first, fmt::format("unknown key '{}'", k));
    }
  }
  FamilyPrior Family(const YAML::Node& n) const {
    OnlyKeys(n, {"name", "kind", "gflops", "params", "seq", "batch"});
    FamilyPrior f;
    f.name = ToLower(Text(n["name"], "a family name"));
    const std::string kind = Text(n["kind"], "kind");
    if (kind != "vision" && kind != "transformer")
      Fail(n["kind"], "kind must be vision or transformer");
    f.transformer = kind == "transformer";
    f.batch = static_cast<int64_t>(Positive(n["batch"], "batch", 1e6));
    if (f.transformer) {
      f.params = Positive(n["params"], "params", 1e15);
      f.seq = static_cast<int64_t>(Positive(n["seq"], "seq", 1e8));
    } else {
      f.gflops = Positive(n["gflops"], "gflops", 1e9);
    }
    return f;
  }
};

std::string Normalise(std::string_view s) {
  std::string out;
  for (char c : ToLower(s)) {
    if (c != '-' && c != '_' && c != ' ') out += c;
  }
  return out;
}

const FamilyPrior* FindFamily(const DurationPriors& p, const JobSemantics& s) {
  const std::string fam = Normalise(s.model_family);
  for (const FamilyPrior& f : p.families) {
    if (!fam.empty() && fam == Normalise(f.name)) return &f;
  }
  const std::string model = Normalise(s.model);
  for (const FamilyPrior& f : p.families) {
    if (!model.empty() && model.find(Normalise(f.name)) != std::string::npos) return &f;
  }
  return nullptr;
}

}  // namespace

Result<DurationPriors> DurationPriors::Parse(std::string_view yaml, std::string_view source) {
  static const std::set<std::string> kScalars = {
      "reference_samples_per_s", "reference_gflops", "fp32_factor", "scaling_efficiency", "mfu",
      "max_samples_per_s",       "startup_s",        "bandwidth"};
  PriorsParser p(source);
  DurationPriors d;
  static const char* const kRequired[] = {"version",
                                          "reference_gpu",
                                          "reference_samples_per_s",
                                          "reference_gflops",
                                          "fp32_factor",
                                          "scaling_efficiency",
                                          "mfu",
                                          "max_samples_per_s",
                                          "startup_s",
                                          "bandwidth",
                                          "gpus",
                                          "families",
                                          "datasets"};
  try {
    p.ForEachSection(
        yaml, kRequired, [&](const std::string& name, const YAML::Node& key, const YAML::Node& n) {
          if (name == "version") {
            if (p.Positive(n, "version") != 1) p.Fail(n, "unsupported version (expected 1)");
          } else if (name == "reference_gpu") {
            d.reference_gpu = ToLower(p.Text(n, "reference_gpu"));
          } else if (kScalars.count(name)) {
            const double ratio_max =
                name == "fp32_factor" || name == "scaling_efficiency" || name == "mfu" ? 1.0 : 1e12;
            const double v = p.Positive(n, name, ratio_max);
            if (name == "reference_samples_per_s") d.reference_samples_per_s = v;
            if (name == "reference_gflops") d.reference_gflops = v;
            if (name == "fp32_factor") d.fp32_factor = v;
            if (name == "scaling_efficiency") d.scaling_efficiency = v;
            if (name == "mfu") d.mfu = v;
            if (name == "max_samples_per_s") d.max_samples_per_s = v;
            if (name == "startup_s") d.startup_s = v;
            if (name == "bandwidth") d.bandwidth = v;
          } else if (name == "gpus") {
            if (!n.IsMap()) p.Fail(n, "'gpus' must be a map");
            for (const auto& g : n) {
              p.OnlyKeys(g.second, {"tflops", "speed"});
              GpuPrior prior;
              prior.tflops = p.Positive(g.second["tflops"], "tflops", 1e6);
              if (g.second["speed"]) prior.speed = p.Positive(g.second["speed"], "speed", 1e3);
              d.gpus[ToLower(p.Text(g.first, "a GPU name"))] = prior;
            }
          } else if (name == "families") {
            if (!n.IsSequence()) p.Fail(n, "'families' must be a list");
            for (const YAML::Node& e : n) d.families.push_back(p.Family(e));
          } else if (name == "datasets") {
            if (!n.IsSequence()) p.Fail(n, "'datasets' must be a list");
            for (const YAML::Node& e : n) {
              if (!e.IsSequence() || e.size() != 2)
                p.Fail(e, "'datasets' entries are [name, samples]");
              d.datasets.emplace_back(Normalise(p.Text(e[0], "a data set name")),
                                      static_cast<int64_t>(p.Positive(e[1], "samples", 1e13)));
            }
          } else {
            p.Fail(key, fmt::format("unknown section '{}'", name));
          }
        });
    if (!d.gpus.count(d.reference_gpu)) {
      return Status::InvalidArgument(
          fmt::format("{}: reference_gpu '{}' is not in 'gpus'", source, d.reference_gpu));
    }
  } catch (...) {
    return internal::CurrentYamlError(source);
  }
  return d;
}

const DurationPriors& DurationPriors::Builtin() {
  static const DurationPriors& kData = ParseBuiltinOrDie<DurationPriors>(
      internal::BuiltinDurationPriorsYaml(), "builtin:duration_priors.yaml");
  return kData;
}

std::optional<SemanticEstimate> EstimateFromSemantics(const DurationPriors& p,
                                                      const JobSemantics& s, double gpus) {
  if (s.empty()) return std::nullopt;
  gpus = std::max(gpus, 1.0);
  const FamilyPrior* fam = FindFamily(p, s);
  // A known family decides how its work is counted (a vision family's parameter count, e.g.
  // ResNet-50's 25.6M, does not make it a 6ND transformer); with no family, a stated parameter
  // count gives the transformer-style 6ND estimate.
  const bool transformer = fam != nullptr ? fam->transformer : s.params > 0;
  if (fam == nullptr && !transformer) return std::nullopt;
  std::vector<std::string> why;

  // Samples to process.
  double samples = 0;
  if (s.max_steps > 0) {
    double batch = static_cast<double>(s.global_batch);
    if (batch <= 0 && s.per_device_batch > 0)
      batch = static_cast<double>(s.per_device_batch) * gpus;
    if (batch <= 0) {
      batch = static_cast<double>(fam != nullptr ? fam->batch : 8) * gpus;
      why.push_back(fmt::format("batch unknown: assumed {:.0f} per GPU{}", batch / gpus,
                                fam != nullptr ? " (family default)" : ""));
    }
    samples = static_cast<double>(s.max_steps) * batch;
    why.insert(why.begin(), fmt::format("{} steps x batch {:.0f}", s.max_steps, batch));
  } else {
    const std::string ds = Normalise(s.dataset);
    const std::pair<std::string, int64_t>* hit = nullptr;
    for (const auto& e : p.datasets) {
      if (!ds.empty() && ds.find(e.first) != std::string::npos) {
        hit = &e;
        break;
      }
    }
    if (hit == nullptr) return std::nullopt;
    samples = s.epochs * static_cast<double>(hit->second);
    why.push_back(fmt::format("{:g} epochs x {} samples ({})", s.epochs, hit->second, hit->first));
  }

  // GPU.
  std::string gpu = s.gpu_type;
  auto g = p.gpus.find(gpu);
  if (g == p.gpus.end()) {
    why.push_back(fmt::format("GPU type {}: assumed {}", gpu.empty() ? "unknown" : gpu + " unknown",
                              p.reference_gpu));
    gpu = p.reference_gpu;
    g = p.gpus.find(gpu);
  }
  const GpuPrior& ref = p.gpus.at(p.reference_gpu);

  // Rate per GPU, samples/s.
  double rate = 0;
  if (transformer) {
    const double params = s.params > 0 ? s.params : fam->params;
    const double seq = s.sequence_length > 0 ? static_cast<double>(s.sequence_length)
                                             : static_cast<double>(fam != nullptr ? fam->seq : 512);
    if (s.params <= 0)
      why.push_back(fmt::format("{:.3g} parameters ({} default)", params, fam->name));
    if (s.sequence_length <= 0)
      why.push_back(fmt::format("{:.0f} tokens per sample (assumed)", seq));
    rate = g->second.tflops * 1e12 * p.mfu / (6.0 * params * seq);
    why.push_back(fmt::format("6 x params x tokens at {:.0f}% of {}'s {:.0f} TFLOPS", 100 * p.mfu,
                              gpu, g->second.tflops));
  } else {
    const double speed = g->second.speed > 0 ? g->second.speed : g->second.tflops / ref.tflops;
    rate = p.reference_samples_per_s * p.reference_gflops / fam->gflops * speed;
    std::string size_note;
    if (s.image_size > 0) {
      rate *= std::pow(224.0 / static_cast<double>(s.image_size), 2);
      size_note = fmt::format(" at {} px", s.image_size);
    }
    rate = std::min(rate, p.max_samples_per_s);
    why.push_back(
        fmt::format("{} at {:.0f} samples/s per {}{} (ResNet-50's measured rate scaled "
                    "by GFLOPs {:.2g})",
                    fam->name, rate, gpu, size_note, fam->gflops));
  }
  const bool fp32 = s.precision == "fp32" || s.precision == "32" || s.precision == "tf32";
  if (fp32) {
    rate *= p.fp32_factor;
    why.push_back(fmt::format("{} x{:.2f}", s.precision, p.fp32_factor));
  } else if (s.precision.empty()) {
    why.push_back("precision unknown: assumed mixed");
  }
  const double scale = gpus > 1 ? gpus * p.scaling_efficiency : 1.0;
  if (gpus > 1)
    why.push_back(fmt::format("{:g} GPUs x{:.2f} efficiency", gpus, p.scaling_efficiency));

  SemanticEstimate out;
  out.seconds = p.startup_s + samples / (rate * scale);
  out.explanation = fmt::format("{} + {:.0f} s start-up", fmt::join(why, "; "), p.startup_s);
  return out;
}

}  // namespace schedmate::advisor
