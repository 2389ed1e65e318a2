// Shared by the binding sources (one per area: detect.cpp, track.cpp, features.cpp, geometry.cpp; module.cpp
// holds the core): image arguments (NumPy, DLPack, CUDA arrays), streams, backends and NumPy results.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/error.hpp"
#include "kestrel/image.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/stream.hpp"

namespace kestrel::py {

namespace nb = nanobind;

void init_core(nb::module_& m);
void init_detect(nb::module_& m);
void init_track(nb::module_& m);
void init_features(nb::module_& m);
void init_geometry(nb::module_& m);
void init_stereo(nb::module_& m);

/// FeatureTracker's structured array (TRACK_DTYPE) of `tracks` (track.cpp; init_track must have run).
nb::object tracks_array(const std::vector<Track>& tracks);

/// An image argument resolved to a view: host memory (the caller's array, or the packed copy in the
/// caller-owned scratch buffer when the array's columns are not contiguous) or CUDA device memory (the
/// caller's array as it is: no copy). `keep` holds the array for the duration of the call.
struct Frame {
    bool on_device = false;
    HostView host{};
    DeviceView device{};
    nb::ndarray<nb::ro> keep;
};

/// Resolves `obj` (a 2-D uint8 array: NumPy or anything with the buffer protocol or __dlpack__, on the CPU or
/// a CUDA device). Raises TypeError (not an array, wrong dtype) or kestrel.InvalidArgument (wrong number of
/// dimensions, empty, a device array that is not row-major), naming `where` and `param`. Host arrays with any
/// strides are accepted: a row-major view (column stride 1, row stride >= width) is used in place, any other
/// is copied once into `scratch` (resized only when the size changes). Call with the GIL held.
Frame image_arg(nb::handle obj, const char* where, const char* param, std::vector<std::uint8_t>& scratch);

/// A CUDA stream argument: an int (a cudaStream_t's address, 0 = the legacy default stream), an object with
/// `cuda_stream` (torch.cuda.Stream) or `ptr` (cupy.cuda.Stream), or None (= 0).
StreamHandle stream_arg(nb::handle s, const char* where);

/// A backend argument: a kestrel.Backend, or None for default_backend().
Backend backend_arg(nb::handle b);

/// A new, uninitialised 1-D NumPy array of `n` elements of the structured dtype `dtype`; *data receives its
/// buffer (C-contiguous, n * itemsize bytes).
nb::object new_structured(nb::handle dtype, std::size_t n, void** data);

/// numpy.dtype from field names, formats and byte offsets, of total size `itemsize`.
nb::object make_dtype(std::initializer_list<const char*> names, std::initializer_list<const char*> formats,
                      std::initializer_list<std::size_t> offsets, std::size_t itemsize);

/// A NumPy copy of `rows` x `cols` values (cols == 0: a 1-D array of `rows`).
template <typename T>
nb::object numpy_copy(const T* src, std::size_t rows, std::size_t cols = 0) {
    const std::size_t n = rows * (cols ? cols : 1);
    T* buf = new T[n ? n : 1];
    for (std::size_t i = 0; i < n; ++i) buf[i] = src[i];
    nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
    if (cols) return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<2>>(buf, {rows, cols}, owner));
    return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(buf, {rows}, owner));
}

/// An (N, 2) float32 C-contiguous NumPy array made from `obj` (any array-like), N checked against
/// `expected` when >= 0; TypeError / kestrel.InvalidArgument naming `param` otherwise.
nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> points_arg(nb::handle obj, const char* where,
                                                                                const char* param,
                                                                                long expected = -1);

/// A tracker's optional `predictions` argument: None -> nullptr; else an (N, 2) array with N == `tracks` (the
/// previous result's size), copied into `buffer` (the object's, reused), whose address is returned.
const std::vector<Point2f>* predictions_arg(nb::handle obj, const char* where, std::size_t tracks,
                                            std::vector<Point2f>& buffer);

/// One call at a time per object: the objects are not thread-safe (as in C++), and their calls run without the
/// GIL, so a second thread calling into an object that is busy gets StateError instead of a data race.
class InUse {
public:
    InUse(std::atomic<bool>& busy, const char* where) : busy_(busy) {
        if (busy_.exchange(true))
            throw StateError(std::string("kestrel: ") + where +
                             ": the object is in use by another thread (one call at a time per object: give each "
                             "thread its own)");
    }
    ~InUse() { busy_.store(false); }
    InUse(const InUse&) = delete;
    InUse& operator=(const InUse&) = delete;

private:
    std::atomic<bool>& busy_;
};

/// Raises TypeError with Kestrel's message format ("kestrel: where: parameter 'param' why").
[[noreturn]] void type_error(const char* where, const char* param, const std::string& why);

}  // namespace kestrel::py
