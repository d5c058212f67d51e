#include "llm/curl_transport.h"

#include <curl/curl.h>

#include <mutex>

#include "core/strings.h"
#include "fmt/format.h"

namespace schedmate::llm {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct TransferState {
  HttpResponse* response = nullptr;
  const BodyChunkCallback* on_chunk = nullptr;
  long status = 0;
  bool cancelled = false;
  bool too_large = false;
  size_t received = 0;
  size_t max_bytes = 0;
  CURL* handle = nullptr;
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<TransferState*>(user);
  std::string_view line(data, size * count);
  line = Trim(line);
  if (StartsWith(line, "HTTP/")) {
    state->response->headers.clear();  // a new response (after 100-continue or a redirect)
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    state->response->headers.emplace_back(ToLower(Trim(line.substr(0, colon))),
                                          std::string(Trim(line.substr(colon + 1))));
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<TransferState*>(user);
  const size_t n = size * count;
  state->received += n;
  if (state->received > state->max_bytes) {
    state->too_large = true;
    return 0;
  }
  if (state->status == 0) curl_easy_getinfo(state->handle, CURLINFO_RESPONSE_CODE, &state->status);
  const bool success = state->status >= 200 && state->status < 300;
  if (state->on_chunk != nullptr && success) {
    if (!(*state->on_chunk)(std::string_view(data, n))) {
      state->cancelled = true;
      return 0;  // makes curl abort with CURLE_WRITE_ERROR
    }
    return n;
  }
  state->response->body.append(data, n);
  return n;
}

std::string SecondsText(Duration d) {
  if (d.micros() % 1'000'000 == 0) return fmt::format("{} s", d.seconds());
  return fmt::format("{:.1f} s", d.seconds_f());
}

}  // namespace

CurlHttpTransport::CurlHttpTransport() { GlobalInitOnce(); }

Result<HttpResponse> CurlHttpTransport::Send(const HttpRequest& request) {
  return Perform(request, nullptr);
}

Result<HttpResponse> CurlHttpTransport::SendStreaming(const HttpRequest& request,
                                                      const BodyChunkCallback& on_chunk) {
  return Perform(request, &on_chunk);
}

Result<HttpResponse> CurlHttpTransport::Perform(const HttpRequest& request,
                                                const BodyChunkCallback* on_chunk) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  HttpResponse response;
  TransferState state;
  state.response = &response;
  state.on_chunk = on_chunk;
  state.max_bytes = request.max_response_bytes;
  state.handle = curl;
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  // No "Expect: 100-continue" round trip for large prompts.
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout.micros() / 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(request.total_timeout.micros() / 1000));
  if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &state);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);

  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);

  const std::string where = request.method + " " + request.url;
  if (state.cancelled) return Status::Cancelled("stream stopped by caller; " + where);
  if (state.too_large) {
    return Status::DataLoss(
        fmt::format("answer too large; {}: more than {} bytes", where, request.max_response_bytes));
  }
  switch (code) {
    case CURLE_OK:
      response.status = static_cast<int>(status);
      return response;
    case CURLE_OPERATION_TIMEDOUT:
      if (status == 0) {
        // Nothing came back: either the connect or the whole exchange ran out of time.
        return Status::DeadlineExceeded(
            fmt::format("timeout after {}; {} (connect timeout {}, total {})",
                        SecondsText(request.total_timeout), where,
                        SecondsText(request.connect_timeout), SecondsText(request.total_timeout)));
      }
      return Status::DeadlineExceeded(fmt::format("timeout after {}; {} (answer incomplete)",
                                                  SecondsText(request.total_timeout), where));
    case CURLE_COULDNT_CONNECT:
      return Status::Unavailable("connection refused; " + where);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Status::Unavailable("host not found; " + where);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Status::InvalidArgument(
          fmt::format("bad URL; {}: {}", where, curl_easy_strerror(code)));
    default:
      return Status::Unavailable(
          fmt::format("connection error; {}: {}", where, curl_easy_strerror(code)));
  }
}

}  // namespace schedmate::llm
