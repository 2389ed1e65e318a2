// The module kestrel._kestrel: the core (exceptions, backends, array arguments and results) here; each area
// binds itself in its own file (detect.cpp, track.cpp, features.cpp, geometry.cpp, stereo.cpp) through init_<area>.
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstring>

#include "common.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"

namespace kestrel::py {

namespace {

// The Python exception types, created once at import and owned by the module (the references here are
// borrowed from the module's attributes, which live as long as the interpreter's module table).
PyObject* g_error = nullptr;
PyObject* g_invalid_argument = nullptr;
PyObject* g_state_error = nullptr;
PyObject* g_cuda_error = nullptr;
PyObject* g_no_device_error = nullptr;
// numpy.empty and numpy.ascontiguousarray, looked up once.
PyObject* g_np_empty = nullptr;
PyObject* g_np_ascontiguous = nullptr;
PyObject* g_np_float32 = nullptr;

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
    const std::string qualified = std::string("kestrel.") + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!type) throw nb::python_error();
    m.attr(name) = nb::handle(type);  // the module keeps a reference
    Py_DECREF(type);
    return type;
}

PyObject* tuple_of(PyObject* a, PyObject* b) { return PyTuple_Pack(2, a, b); }

// Raises `type` with message `what` and the given string attributes set on the exception object.
void raise(PyObject* type, const char* what, std::initializer_list<std::pair<const char*, nb::object>> attrs = {}) {
    PyObject* exc = PyObject_CallFunction(type, "s", what);
    if (!exc) return;  // the call's own error stays set
    for (const auto& [name, value] : attrs) PyObject_SetAttrString(exc, name, value.ptr());
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
}

const char* dtype_name(nb::dlpack::dtype t) {
    using C = nb::dlpack::dtype_code;
    const auto code = static_cast<C>(t.code);
    if (code == C::UInt) return t.bits == 8 ? "uint8" : t.bits == 16 ? "uint16" : t.bits == 32 ? "uint32" : "uint64";
    if (code == C::Int) return t.bits == 8 ? "int8" : t.bits == 16 ? "int16" : t.bits == 32 ? "int32" : "int64";
    if (code == C::Float) return t.bits == 16 ? "float16" : t.bits == 32 ? "float32" : "float64";
    if (code == C::Bool) return "bool";
    if (code == C::Complex) return "complex";
    return "an unsupported dtype";
}

}  // namespace

[[noreturn]] void type_error(const char* where, const char* param, const std::string& why) {
    throw nb::type_error((std::string("kestrel: ") + where + ": parameter '" + param + "' " + why).c_str());
}

Frame image_arg(nb::handle obj, const char* where, const char* param, std::vector<std::uint8_t>& scratch) {
    Frame f;
    const std::string type_name = nb::inst_name(obj).c_str();
    if (!nb::try_cast(obj, f.keep, false))
        type_error(where, param,
                   "must be a 2-D uint8 array (a NumPy array, or a CUDA array such as a CuPy array or a PyTorch "
                   "CUDA tensor); got " + type_name);
    const nb::ndarray<nb::ro>& a = f.keep;
    if (a.dtype() != nb::dtype<std::uint8_t>())
        type_error(where, param,
                   std::string("must have dtype uint8 (8-bit grey); got ") + dtype_name(a.dtype()) +
                       " (convert it, e.g. img.astype(numpy.uint8), after scaling to [0, 255])");
    if (a.ndim() != 2)
        detail::fail(where, param,
                     "must be 2-D (height, width); got " + std::to_string(a.ndim()) + " dimension(s)" +
                         (a.ndim() == 3 ? " (a colour image? convert it to grey first)" : ""));
    const std::size_t h = a.shape(0), w = a.shape(1);
    if (w == 0 || h == 0)
        detail::fail(where, param, "is empty: shape (" + std::to_string(h) + ", " + std::to_string(w) + ")");
    // Larger sides are rejected by the library itself, naming the side and the bound (kMaxImageSide).
    const int wi = static_cast<int>(std::min<std::size_t>(w, kMaxImageSide + 1));
    const int hi = static_cast<int>(std::min<std::size_t>(h, kMaxImageSide + 1));
    const std::int64_t s0 = a.stride(0), s1 = a.stride(1);  // in elements = bytes for uint8
    const auto* data = static_cast<const std::uint8_t*>(a.data());
    const int dev = a.device_type();
    if (dev == nb::device::cuda::value || dev == nb::device::cuda_managed::value) {
        if (!(s1 == 1 && s0 >= static_cast<std::int64_t>(w)))
            detail::fail(where, param,
                         "is a CUDA array that is not row-major with contiguous rows (strides (" + std::to_string(s0) +
                             ", " + std::to_string(s1) +
                             ")): make it so first (cupy.ascontiguousarray(x), tensor.contiguous())");
        f.on_device = true;
        f.device = {data, wi, hi, static_cast<std::size_t>(s0)};
        return f;
    }
    if (dev != nb::device::cpu::value && dev != nb::device::cuda_host::value)
        type_error(where, param, "must be in host memory or CUDA device memory; got DLPack device type " +
                                     std::to_string(dev));
    if (s1 == 1 && s0 >= static_cast<std::int64_t>(w)) {
        f.host = {data, wi, hi, static_cast<std::size_t>(s0)};
        return f;
    }
    if (w > static_cast<std::size_t>(kMaxImageSide) || h > static_cast<std::size_t>(kMaxImageSide)) {
        f.host = {data, wi, hi, static_cast<std::size_t>(wi)};  // rejected by the library, before any read
        return f;
    }
    // Any other layout (a transposed view, every other column, negative strides): one packed copy.
    scratch.resize(w * h);
    for (std::size_t y = 0; y < h; ++y) {
        const std::uint8_t* row = data + static_cast<std::int64_t>(y) * s0;
        std::uint8_t* out = scratch.data() + y * w;
        for (std::size_t x = 0; x < w; ++x) out[x] = row[static_cast<std::int64_t>(x) * s1];
    }
    f.host = {scratch.data(), wi, hi, w};
    return f;
}

StreamHandle stream_arg(nb::handle s, const char* where) {
    if (s.is_none()) return nullptr;
    nb::handle v = s;
    nb::object attr;
    if (!PyLong_Check(s.ptr())) {
        if (nb::hasattr(s, "cuda_stream"))
            attr = s.attr("cuda_stream");
        else if (nb::hasattr(s, "ptr"))
            attr = s.attr("ptr");
        else
            type_error(where, "stream",
                       "must be an int (a cudaStream_t handle; 0 = the legacy default stream), a "
                       "torch.cuda.Stream or a cupy.cuda.Stream; got " + std::string(nb::inst_name(s).c_str()));
        v = attr;
    }
    const unsigned long long raw = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
        PyErr_Clear();
        type_error(where, "stream", "must be a non-negative int (a cudaStream_t handle)");
    }
    return reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(raw));
}

Backend backend_arg(nb::handle b) {
    if (b.is_none()) return default_backend();
    return nb::cast<Backend>(b);
}

nb::object new_structured(nb::handle dtype, std::size_t n, void** data) {
    nb::object arr = nb::steal(PyObject_CallFunction(g_np_empty, "nO", static_cast<Py_ssize_t>(n), dtype.ptr()));
    if (!arr.is_valid()) throw nb::python_error();
    Py_buffer view;
    if (PyObject_GetBuffer(arr.ptr(), &view, PyBUF_WRITABLE) != 0) throw nb::python_error();
    *data = view.buf;
    PyBuffer_Release(&view);  // the array itself keeps the memory
    return arr;
}

nb::object make_dtype(std::initializer_list<const char*> names, std::initializer_list<const char*> formats,
                      std::initializer_list<std::size_t> offsets, std::size_t itemsize) {
    nb::dict spec;
    nb::list n, f, o;
    for (const char* s : names) n.append(s);
    for (const char* s : formats) f.append(s);
    for (std::size_t v : offsets) o.append(v);
    spec["names"] = n;
    spec["formats"] = f;
    spec["offsets"] = o;
    spec["itemsize"] = itemsize;
    return nb::module_::import_("numpy").attr("dtype")(spec);
}

nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> points_arg(nb::handle obj, const char* where,
                                                                                const char* param, long expected) {
    nb::object arr = nb::steal(PyObject_CallFunctionObjArgs(g_np_ascontiguous, obj.ptr(), g_np_float32, nullptr));
    if (!arr.is_valid()) {
        PyErr_Clear();
        type_error(where, param, "must be an (N, 2) array of x, y (float32 or convertible); got " +
                                     std::string(nb::inst_name(obj).c_str()));
    }
    nb::ndarray<const float, nb::c_contig, nb::device::cpu> a;
    if (!nb::try_cast(arr, a, false))
        type_error(where, param, "must be an (N, 2) array of x, y in host memory");
    // An empty sequence converts to shape (0,): accept it as (0, 2).
    if (a.ndim() == 1 && a.shape(0) == 0) {
        static const float none[2] = {0.0f, 0.0f};
        return nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>(none, {0, 2});
    }
    if (a.ndim() != 2 || a.shape(1) != 2)
        detail::fail(where, param, "must have shape (N, 2); got " + std::string(nb::repr(arr.attr("shape")).c_str()));
    if (expected >= 0 && static_cast<long>(a.shape(0)) != expected)
        detail::fail(where, param,
                     "has " + std::to_string(a.shape(0)) + " rows; it must have one per track of the previous "
                     "result (" + std::to_string(expected) + ")");
    return nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>(a.data(), {a.shape(0), 2}, arr);
}

const std::vector<Point2f>* predictions_arg(nb::handle obj, const char* where, std::size_t tracks,
                                            std::vector<Point2f>& buffer) {
    if (obj.is_none()) return nullptr;
    const auto p = points_arg(obj, where, "predictions", static_cast<long>(tracks));
    buffer.resize(p.shape(0));
    if (p.shape(0)) std::memcpy(buffer.data(), p.data(), p.shape(0) * sizeof(Point2f));
    return &buffer;
}

void init_core(nb::module_& m) {
    // Exceptions: Kestrel's hierarchy, each also a subclass of the matching built-in one.
    g_error = new_exception(m, "Error", PyExc_RuntimeError, "Base of every exception Kestrel raises.");
    PyObject* b = tuple_of(g_error, PyExc_ValueError);
    g_invalid_argument = new_exception(m, "InvalidArgument", b,
                                       "A parameter is outside its documented bounds; the message names the "
                                       "parameter and the bound (also in the attribute `parameter`).");
    Py_DECREF(b);
    g_state_error = new_exception(m, "StateError", g_error,
                                  "The object cannot perform the call in its present state.");
    g_cuda_error = new_exception(m, "CudaError", g_error,
                                 "A CUDA runtime call or kernel launch failed (attributes: code, call, stage).");
    g_no_device_error = new_exception(m, "NoDeviceError", g_error,
                                      "No usable CUDA device (or a build without the CUDA backend).");
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const InvalidArgument& e) {
            raise(g_invalid_argument, e.what(), {{"parameter", nb::str(e.parameter().c_str())}});
        } catch (const CudaError& e) {
            raise(g_cuda_error, e.what(),
                  {{"code", nb::int_(e.code())}, {"call", nb::str(e.call().c_str())}, {"stage", nb::str(e.stage().c_str())}});
        } catch (const NoDeviceError& e) {
            raise(g_no_device_error, e.what());
        } catch (const StateError& e) {
            raise(g_state_error, e.what());
        } catch (const Error& e) {
            raise(g_error, e.what());
        }
    });

    nb::module_ np = nb::module_::import_("numpy");
    g_np_empty = nb::object(np.attr("empty")).release().ptr();
    g_np_ascontiguous = nb::object(np.attr("ascontiguousarray")).release().ptr();
    g_np_float32 = nb::object(np.attr("float32")).release().ptr();

    nb::enum_<Backend>(m, "Backend", "Which implementation runs: the CUDA kernels or the CPU reference "
                                     "(identical results).")
        .value("Cuda", Backend::Cuda)
        .value("Cpu", Backend::Cpu);
    m.def("cuda_available", &cuda_available,
          "True when a CUDA device is present and usable by this process (never raises); always False in a "
          "build without the CUDA backend.");
    m.def("built_with_cuda", &built_with_cuda, "True when this build has the CUDA backend.");
    m.def("default_backend", &default_backend,
          "Backend.Cuda when a CUDA device is usable (and the build has the CUDA backend), else Backend.Cpu.");
    m.attr("MAX_IMAGE_SIDE") = kMaxImageSide;
}

}  // namespace kestrel::py

NB_MODULE(_kestrel, m) {
    m.doc() = "Kestrel: GPU feature detection and tracking for visual-inertial odometry (compiled core; "
              "import kestrel).";
    m.attr("__version__") = KESTREL_VERSION;
    kestrel::py::init_core(m);
    kestrel::py::init_detect(m);
    kestrel::py::init_track(m);
    kestrel::py::init_features(m);
    kestrel::py::init_geometry(m);
    kestrel::py::init_stereo(m);
}
