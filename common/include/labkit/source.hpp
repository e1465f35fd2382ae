// The generated sources: what a buffer of a call holds when its data is drawn on the device
// (protocol::Source). The core knows only its own generic sources (the uniform draws); every op
// family brings its own under identifiers the protocol carries without knowing them, as entries
// of this table (common/src/ops/sources.cpp lists the families' entries: the one place a new
// family adds a line). The worker, the executor and the judges draw, check and shape a buffer
// through find_source alone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/protocol.hpp"

namespace labkit {

// What one draw of a source needs: the buffer's element count, the call's seed, the buffer's
// range (lo, hi: a source gives them its own meaning), and `plane`, the length of a segment the
// source shapes its draw by (SourceKind::plane; 0 where it has none).
struct SourceArgs {
  size_t count = 0;
  uint64_t seed = 0;
  double lo = 0, hi = 0;
  size_t plane = 0;
};

struct SourceKind {
  protocol::Source id{};
  const char* name = "";       // for messages ("uniform f32")
  uint32_t elem_size = 0;      // bytes per element
  // Draws args.count elements into `out` on `stream` (asynchronous).
  void (*fill)(void* out, const SourceArgs& args, cudaStream_t stream) = nullptr;
  // How many elements of `a` differ, bit for bit, from what `fill` draws; synchronises.
  uint64_t (*count_not)(const void* a, const SourceArgs& args, cudaStream_t stream) = nullptr;
  // The draw's segment length from the buffer's dims (throws std::invalid_argument naming
  // `buffer` when the dims do not fit the source); null: the source has none (0).
  size_t (*plane)(const std::vector<uint64_t>& dims, const std::string& buffer) = nullptr;
};

// The families' sources (common/src/ops/sources.cpp).
const std::vector<const SourceKind*>& family_sources();

// The source with this identifier, the core's or a family's; null for kArena and for an
// identifier nobody registered.
const SourceKind* find_source(protocol::Source id);
inline const SourceKind* find_source(uint32_t id) { return find_source(protocol::Source{id}); }

// find_source, or std::invalid_argument naming `who` and the identifier.
const SourceKind& source_or_throw(protocol::Source id, const char* who);

}  // namespace labkit
