#pragma once
// HttpTransport: the seam between the LLM clients and the network. OpenAiCompatibleClient talks
// only to this interface, so unit tests can hand it canned answers; CurlHttpTransport is the real
// one.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::llm {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Duration connect_timeout = Duration::Seconds(10);
  Duration total_timeout = Duration::Seconds(120);  // whole exchange, streaming included
  size_t max_response_bytes = size_t{64} << 20;     // larger answers fail with kDataLoss
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;  // for streamed 2xx answers: empty (the chunks went to the callback)
};

// Receives body bytes of a 2xx answer as they arrive; return false to abort the transfer.
using BodyChunkCallback = std::function<bool(std::string_view chunk)>;

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Sends the request and reads the whole answer. Any HTTP status is a successful Result; errors
  // are transport failures: kUnavailable ("connection refused; ..."), kDeadlineExceeded
  // ("timeout after N s; ..."). Thread-safe.
  virtual Result<HttpResponse> Send(const HttpRequest& request) = 0;
  // Like Send, but a 2xx body is handed to `on_chunk` piecewise instead of being collected
  // (non-2xx bodies are still collected into the response). kCancelled when on_chunk said stop.
  virtual Result<HttpResponse> SendStreaming(const HttpRequest& request,
                                             const BodyChunkCallback& on_chunk) = 0;
};

}  // namespace schedmate::llm
