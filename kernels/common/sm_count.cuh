// Host-side: how many SMs the work of the calling thread's current CUDA context may run on, for kernels
// that size their grids (or choose an instance) to the GPU present. On a plain context that is the device's
// multiprocessor count; on a green context (CUDA 12.4+, e.g. a partition of a larger GPU, or the
// `--sm-count` emulation of a Jetson in kestrel_bench) it is the context's own SM partition, which
// cudaDevAttrMultiProcessorCount does not report.
#pragma once

namespace kestrel::kernels {

/// SMs available to the current context (>= 1). Throws CudaError when the device cannot be queried.
int sms_available();

}  // namespace kestrel::kernels
