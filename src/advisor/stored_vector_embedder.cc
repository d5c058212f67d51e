#include "advisor/stored_vector_embedder.h"

#include <algorithm>
#include <exception>
#include <unordered_set>

#include "fmt/format.h"

namespace schedmate::advisor {

StoredVectorEmbedder::StoredVectorEmbedder(const text::TextEmbedder& inner,
                                           StoredVectorEmbedderOptions options)
    : inner_(inner), options_(options), dimension_(options.expected_dimension) {
  options_.batch_size = std::max<size_t>(options_.batch_size, 1);
}

Status StoredVectorEmbedder::CheckDimension(size_t got, const char* what) const {
  if (got == 0) return Status(StatusCode::kDataLoss, fmt::format("{}: empty embedding", what));
  if (dimension_ != 0 && got != dimension_) {
    return Status(StatusCode::kDataLoss,
                  fmt::format("{}: embedding dimension mismatch: expected {} components (the "
                              "stored vectors), got {}; run `schedmate history reindex`",
                              what, dimension_, got));
  }
  return Status::Ok();
}

Status StoredVectorEmbedder::Preload(const std::string& text, std::vector<float> vector) {
  Status s = CheckDimension(vector.size(), "stored vector");
  if (!s.ok()) return Status::InvalidArgument(s.message());
  dimension_ = vector.size();
  known_[text] = std::move(vector);
  return Status::Ok();
}

const std::vector<float>* StoredVectorEmbedder::Find(const std::string& text) const {
  auto it = known_.find(text);
  return it == known_.end() ? nullptr : &it->second;
}

Result<std::vector<text::Embedding>> StoredVectorEmbedder::Embed(
    std::span<const std::string> texts) const {
  // The texts to ask for: unknown ones, each once, in first-seen order.
  std::vector<std::string> missing;
  std::unordered_set<std::string_view> queued;
  size_t hits = 0;
  for (const std::string& t : texts) {
    if (known_.count(t) != 0) {
      ++hits;
    } else if (queued.insert(t).second) {
      missing.push_back(t);
    }
  }
  if (!missing.empty() && !failure_.ok()) return failure_;
  for (size_t begin = 0; begin < missing.size(); begin += options_.batch_size) {
    const size_t end = std::min(missing.size(), begin + options_.batch_size);
    std::span<const std::string> batch(missing.data() + begin, end - begin);
    ++requests_;
    sent_ += batch.size();
    Result<std::vector<text::Embedding>> got = Status(StatusCode::kInternal, "not called");
    try {
      got = inner_.Embed(batch);
    } catch (const std::exception& e) {
      got = Status(StatusCode::kInternal, fmt::format("embedder threw: {}", e.what()));
    }
    Status s = got.status();
    if (s.ok() && got->size() != batch.size()) {
      s = Status(StatusCode::kDataLoss, fmt::format("embedder returned {} vectors for {} texts",
                                                    got->size(), batch.size()));
    }
    for (size_t i = 0; s.ok() && i < batch.size(); ++i) {
      s = CheckDimension((*got)[i].size(), "embedding server");
      if (s.ok() && dimension_ == 0) dimension_ = (*got)[i].size();
    }
    if (!s.ok()) {
      failure_ = s;
      return s;
    }
    for (size_t i = 0; i < batch.size(); ++i) known_[batch[i]] = std::move((*got)[i]);
  }
  std::vector<text::Embedding> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(known_.at(t));
  hits_ += hits;
  return out;
}

}  // namespace schedmate::advisor
