#pragma once
// CurlHttpTransport: HttpTransport over libcurl (one easy handle per request, so it is
// thread-safe). Honours the connect and total timeouts of each request; proxies come from the
// usual environment variables (http_proxy, no_proxy), as libcurl reads them.

#include "llm/http_transport.h"

namespace schedmate::llm {

class CurlHttpTransport final : public HttpTransport {
 public:
  CurlHttpTransport();
  Result<HttpResponse> Send(const HttpRequest& request) override;
  Result<HttpResponse> SendStreaming(const HttpRequest& request,
                                     const BodyChunkCallback& on_chunk) override;

 private:
  Result<HttpResponse> Perform(const HttpRequest& request, const BodyChunkCallback* on_chunk);
};

}  // namespace schedmate::llm
