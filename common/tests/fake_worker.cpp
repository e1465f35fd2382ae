// Fake workers without CUDA, one misbehaviour each (FAKE_MODE), for the judge's host-only
// tests: whatever a worker sends or does, the judge must report it and never trust it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "labkit/fd_io.hpp"
#include "labkit/protocol.hpp"

namespace p = labkit::protocol;

static void send(const p::Reply& r) {
  if (write(p::kReplyFd, &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) std::exit(1);
}

int main() {
  p::Request req;
  while (labkit::read_full(p::kRequestFd, &req, sizeof(req))) {
    p::Reply r;
    if (req.op == static_cast<uint32_t>(p::Op::kHello)) {
      std::snprintf(r.device, sizeof(r.device), "fake device");
      r.n_variants = 1;
      std::snprintf(r.variants[0], p::kNameLen, "v");
      send(r);
      continue;
    }
    std::printf("fake worker: request %u\n", req.op);
    std::fflush(stdout);
#if FAKE_MODE == 1  // garbage: a reply with the wrong magic
    r.magic = 0xBADu;
    send(r);
#elif FAKE_MODE == 2  // silent: never answers
    for (;;) pause();
#elif FAKE_MODE == 3  // dies mid-request
    std::exit(9);
#elif FAKE_MODE == 4  // claims a failing call that does not exist
    r.status = static_cast<uint32_t>(p::Status::kLaunchError);
    r.failed_call = 99;
    send(r);
#elif FAKE_MODE == 5  // impossible times
    r.event_ms = -1.0;
    r.host_ms = 1e300 * 1e300;
    send(r);
#elif FAKE_MODE == 6  // half a reply, then closes
    if (write(p::kReplyFd, &r, sizeof(r) / 2) < 0) return 1;
    return 0;
#endif
  }
  return 0;
}
