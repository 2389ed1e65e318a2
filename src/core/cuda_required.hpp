// Internal: the one check before any CUDA object is made, and the answer of a build without CUDA.
#pragma once

namespace kestrel::detail {

/// Throws NoDeviceError naming `where` unless the CUDA backend can run in this process: when the
/// library was built without CUDA the message says so and how to rebuild; otherwise, when no device is
/// usable, it says that and points to Backend::Cpu.
void require_cuda(const char* where);

/// Throws NoDeviceError: `where` needs the CUDA backend, which this build of the library does not have
/// (every CUDA entry point of a build without CUDA ends here: src/<area>/<area>_nocuda.cpp).
[[noreturn]] void built_without_cuda(const char* where);

}  // namespace kestrel::detail
