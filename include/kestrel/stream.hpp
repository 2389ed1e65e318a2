// The stream handle Kestrel's asynchronous calls take, without including any CUDA header:
// a cudaStream_t converts to it implicitly (cudaStream_t is CUstream_st*).
#pragma once

struct CUstream_st;  // CUDA's opaque stream type; declared here so CPU-only users need no CUDA header.

namespace kestrel {

/// A CUDA stream; nullptr is the legacy default stream. Asynchronous calls take it as the last argument.
using StreamHandle = CUstream_st*;

}  // namespace kestrel
