// Bindings of the detect area: FastConfig, PyramidConfig, PycaConfig, DetectorConfig, FeatureDetector,
// detect_cpu (the CPU reference), and the in-process C++ timing loop of the overhead benchmark.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "common.hpp"
#include "detect_bindings.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel::py {

using namespace nb::literals;

namespace {

// The keypoint dtype maps Keypoint's memory directly (fields named in the order the docs list them).
PyObject* g_keypoint_dtype = nullptr;
static_assert(std::is_standard_layout_v<Keypoint> && sizeof(Keypoint) == 16, "Keypoint layout");

// Runs the detection of one frame (GIL released by the caller): returns the keypoints' count and pointer, valid
// until the next call on `d`.
const Keypoint* run_detect(PyFeatureDetector& d, const Frame& f, StreamHandle stream, int& count) {
    if (f.on_device) {
        d.det.detect_async(f.device, stream);
        synchronize(stream, "FeatureDetector.detect");
        count = d.det.host_count();
        return d.det.host_keypoints();
    }
    d.host_result = d.det.detect(f.host);
    count = static_cast<int>(d.host_result.size());
    return d.host_result.data();
}

}  // namespace

nb::object keypoints_array(const Keypoint* kps, std::size_t n) {
    void* data = nullptr;
    nb::object arr = new_structured(g_keypoint_dtype, n, &data);
    if (n) std::memcpy(data, kps, n * sizeof(Keypoint));
    return arr;
}

nb::handle keypoint_dtype() { return g_keypoint_dtype; }

void init_detect(nb::module_& m) {
    g_keypoint_dtype = make_dtype({"x", "y", "level", "score"}, {"<f4", "<f4", "<i4", "<f4"},
                                  {offsetof(Keypoint, x), offsetof(Keypoint, y), offsetof(Keypoint, level),
                                   offsetof(Keypoint, score)},
                                  sizeof(Keypoint))
                           .release()
                           .ptr();
    m.attr("KEYPOINT_DTYPE") = nb::handle(g_keypoint_dtype);

    nb::enum_<ScoreType>(m, "ScoreType", "FAST corner score (docs/detector.md).")
        .value("SadCircle", ScoreType::SadCircle, "sum of |p_i - c| over the 16 circle pixels")
        .value("SadArc", ScoreType::SadArc, "sum of (|p_i - c| - t) over the corner's arc")
        .value("MaxThreshold", ScoreType::MaxThreshold, "largest threshold at which the pixel is still a corner")
        .value("Harris", ScoreType::Harris, "Harris, k = 0.04, Sobel 3x3 over a 7x7 window");
    nb::enum_<SelectionPolicy>(m, "SelectionPolicy", "How keypoints are selected from the levels' scores.")
        .value("Grid", SelectionPolicy::Grid, "best per_cell per level-0 grid cell over all levels")
        .value("PyCA", SelectionPolicy::PyCA, "pyramidal culling and aggregation")
        .value("OrbSlam", SelectionPolicy::OrbSlam,
               "ORB-SLAM's extractor: per-level budget, FAST per cell with a fallback threshold, quadtree")
        .value("LevelHarris", SelectionPolicy::LevelHarris,
               "cv::ORB's ranking: per-level budget, each level's FAST corners ranked by Harris response");

    const PyramidConfig pd;
    nb::class_<PyramidConfig>(m, "PyramidConfig", "Image pyramid: number of levels and the factor between them.")
        .def(
            "__init__",
            [](PyramidConfig* self, int levels, float scale) { new (self) PyramidConfig{levels, scale}; },
            nb::kw_only(), "levels"_a = pd.levels, "scale"_a = pd.scale)
        .def_rw("levels", &PyramidConfig::levels, "number of levels, 1..8 (level 0 is the input)")
        .def_rw("scale", &PyramidConfig::scale, "factor between levels, in (1, 2]; 2 = 2x2 average, else bilinear")
        .def("validate", [](const PyramidConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    const FastConfig fd;
    nb::class_<FastConfig>(m, "FastConfig", "FAST: threshold, arc bounds and score.")
        .def(
            "__init__",
            [](FastConfig* self, int threshold, int arc_min, int arc_max, ScoreType score) {
                new (self) FastConfig{threshold, arc_min, arc_max, score};
            },
            nb::kw_only(), "threshold"_a = fd.threshold, "arc_min"_a = fd.arc_min, "arc_max"_a = fd.arc_max,
            "score"_a = fd.score)
        .def_rw("threshold", &FastConfig::threshold, "t in [0, 254]: bright p > c + t, dark p < c - t")
        .def_rw("arc_min", &FastConfig::arc_min, "shortest accepted arc, [1, 16]")
        .def_rw("arc_max", &FastConfig::arc_max, "longest accepted arc, [arc_min, 16]")
        .def_rw("score", &FastConfig::score, "the corner score")
        .def("validate", [](const FastConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    const PycaConfig qd;
    nb::class_<PycaConfig>(m, "PycaConfig", "PyCA's culling cells per level and aggregation window.")
        .def(
            "__init__",
            [](PycaConfig* self, std::array<int, kMaxLevels> cell, int q) { new (self) PycaConfig{cell, q}; },
            nb::kw_only(), "cell"_a = qd.cell, "q"_a = qd.q)
        .def_rw("cell", &PycaConfig::cell, "culling cell side of each level (8 values), a power of two in [8, 128]")
        .def_rw("q", &PycaConfig::q, "the aggregation's q x q NMS window, odd, in [1, 9]");

    const OrbSlamConfig od;
    nb::class_<OrbSlamConfig>(m, "OrbSlamConfig",
                              "The per-level policies' thresholds, cells and border (level pixels; selection OrbSlam "
                              "or LevelHarris).")
        .def(
            "__init__",
            [](OrbSlamConfig* self, int threshold_initial, int threshold_min, int cell, int border) {
                new (self) OrbSlamConfig{threshold_initial, threshold_min, cell, border};
            },
            nb::kw_only(), "threshold_initial"_a = od.threshold_initial, "threshold_min"_a = od.threshold_min,
            "cell"_a = od.cell, "border"_a = od.border)
        .def_rw("threshold_initial", &OrbSlamConfig::threshold_initial, "FAST threshold of every cell, [1, 254]")
        .def_rw("threshold_min", &OrbSlamConfig::threshold_min,
                "threshold of a cell where the first found no corner, [1, 254] (OrbSlam)")
        .def_rw("cell", &OrbSlamConfig::cell, "cell side on every level, [16, 256]")
        .def_rw("border", &OrbSlamConfig::border, "margin of every level where nothing is detected, [4, 64]");

    const DetectorConfig dd;
    nb::class_<DetectorConfig>(m, "DetectorConfig",
                               "FeatureDetector's settings (docs/detector.md). Keyword arguments, validated on "
                               "construction (InvalidArgument names the parameter and the bound).")
        .def(
            "__init__",
            [](DetectorConfig* self, const PyramidConfig* pyramid, const FastConfig* fast, int nms_radius,
               int cell_width, int cell_height, int per_cell, int max_features, int border, bool cuda_graph,
               SelectionPolicy selection, const PycaConfig* pyca, const OrbSlamConfig* orbslam, bool orb_descriptors,
               int threads) {
                DetectorConfig c;
                if (pyramid) c.pyramid = *pyramid;
                if (fast) c.fast = *fast;
                c.nms_radius = nms_radius;
                c.cell_width = cell_width;
                c.cell_height = cell_height;
                c.per_cell = per_cell;
                c.max_features = max_features;
                c.border = border;
                c.cuda_graph = cuda_graph;
                c.selection = selection;
                if (pyca) c.pyca = *pyca;
                if (orbslam) c.orbslam = *orbslam;
                c.orb_descriptors = orb_descriptors;
                c.threads = threads;
                validate(c);
                new (self) DetectorConfig(c);
            },
            nb::kw_only(), "pyramid"_a.none() = nb::none(), "fast"_a.none() = nb::none(),
            "nms_radius"_a = dd.nms_radius, "cell_width"_a = dd.cell_width, "cell_height"_a = dd.cell_height,
            "per_cell"_a = dd.per_cell, "max_features"_a = dd.max_features, "border"_a = dd.border,
            "cuda_graph"_a = dd.cuda_graph, "selection"_a = dd.selection, "pyca"_a.none() = nb::none(),
            "orbslam"_a.none() = nb::none(), "orb_descriptors"_a = dd.orb_descriptors, "threads"_a = dd.threads,
            "pyramid: default PyramidConfig(levels=2, scale=2.0); fast: default FastConfig(threshold=10, arc_min=9, "
            "arc_max=16, score=ScoreType.MaxThreshold); pyca: default PycaConfig(); orbslam: default OrbSlamConfig().")
        .def_rw("pyramid", &DetectorConfig::pyramid, "levels and factor")
        .def_rw("fast", &DetectorConfig::fast, "threshold, arc bounds, score")
        .def_rw("nms_radius", &DetectorConfig::nms_radius, "n in [1, 4]: a maximum of its (2n+1)^2 neighbourhood")
        .def_rw("cell_width", &DetectorConfig::cell_width, "level-0 pixels, a multiple of 32 in [32, 1024]")
        .def_rw("cell_height", &DetectorConfig::cell_height, "level-0 pixels, in [8, 1024]")
        .def_rw("per_cell", &DetectorConfig::per_cell, "K in [1, 8]: best K per cell over all levels")
        .def_rw("max_features", &DetectorConfig::max_features, "0 = no cap; else keep the best max_features")
        .def_rw("border", &DetectorConfig::border, "extra level-0 margin in [0, 64] where nothing is detected")
        .def_rw("cuda_graph", &DetectorConfig::cuda_graph, "CUDA backend: replay the frame as one CUDA graph")
        .def_rw("selection", &DetectorConfig::selection,
                "SelectionPolicy.Grid, PyCA, OrbSlam or LevelHarris (the last two: max_features > 0 is the budget)")
        .def_rw("pyca", &DetectorConfig::pyca, "PyCA's cells and q (selection == PyCA)")
        .def_rw("orbslam", &DetectorConfig::orbslam, "thresholds, cells and border (selection OrbSlam or LevelHarris)")
        .def_rw("orb_descriptors", &DetectorConfig::orb_descriptors,
                "also compute each keypoint's ORB angle and 256-bit descriptor")
        .def_rw("threads", &DetectorConfig::threads, "CPU backend: threads of the detector's pool, [0, 256]; 0 = all")
        .def("validate", [](const DetectorConfig& c) { validate(c); },
             "Raises InvalidArgument (naming the parameter and the bound) unless valid.");

    nb::class_<PyFeatureDetector>(m, "FeatureDetector",
                                  "Image in, a well-distributed set of keypoints out (docs/detector.md).")
        .def(
            "__init__",
            [](PyFeatureDetector* self, const DetectorConfig* config, nb::handle backend) {
                const DetectorConfig cfg = config ? *config : DetectorConfig{};
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyFeatureDetector{FeatureDetector(cfg, b), {}, {}, {false}};
            },
            "config"_a.none() = nb::none(), "backend"_a.none() = nb::none(),
            "config: DetectorConfig (default: DetectorConfig()); backend: Backend, default default_backend(). "
            "Backend.Cuda raises NoDeviceError without a usable device.")
        .def_prop_ro("config", [](const PyFeatureDetector& d) { return d.det.config(); }, "a copy of the settings")
        .def_prop_ro("backend", [](const PyFeatureDetector& d) { return d.det.backend(); })
        .def(
            "detect",
            [](PyFeatureDetector& d, nb::handle image, nb::handle stream) {
                const char* where = "FeatureDetector.detect";
                const InUse in_use(d.busy, where);
                const Frame f = image_arg(image, where, "image", d.scratch);
                const StreamHandle s = stream_arg(stream, where);
                int n = 0;
                const Keypoint* kps = nullptr;
                {
                    nb::gil_scoped_release unlocked;
                    kps = run_detect(d, f, s, n);
                }
                return keypoints_array(kps, static_cast<std::size_t>(n));
            },
            "image"_a, nb::kw_only(), "stream"_a.none() = nb::none(),
            "Detects keypoints in `image`, a 2-D uint8 array: a NumPy array (any strides) or a CUDA array (CuPy, "
            "PyTorch; DLPack) used in place, without a host copy (CUDA backend). Returns a structured array "
            "(x, y, level, score) in cell order. `stream`: CUDA arrays only, the stream the work is enqueued on "
            "(int handle or a torch/cupy stream; default the legacy default stream); the call returns once that "
            "stream has completed the detection. The GIL is released during the work.")
        .def_prop_ro(
            "angles",
            [](const PyFeatureDetector& d) -> nb::object {
                const InUse in_use(d.busy, "FeatureDetector.angles");
                if (!d.det.config().orb_descriptors || !d.det.host_angles()) return nb::none();
                return numpy_copy(d.det.host_angles(), static_cast<std::size_t>(d.det.host_count()));
            },
            "With orb_descriptors: the ORB angle (degrees, [0, 360]) of each keypoint of the last detect(), "
            "float32 (N,); else None.")
        .def_prop_ro(
            "descriptors",
            [](const PyFeatureDetector& d) -> nb::object {
                const InUse in_use(d.busy, "FeatureDetector.descriptors");
                if (!d.det.config().orb_descriptors || !d.det.host_descriptors()) return nb::none();
                return numpy_copy(&d.det.host_descriptors()[0].bytes[0],
                                  static_cast<std::size_t>(d.det.host_count()), kOrbDescriptorBytes);
            },
            "With orb_descriptors: the 256-bit ORB descriptors of the last detect(), uint8 (N, 32) (bit i is bit "
            "i % 8 of byte i / 8, cv::ORB's layout); else None.")
        .def_prop_ro("capacity", [](const PyFeatureDetector& d) { return d.det.capacity(); })
        .def_prop_ro("uses_cuda_graph", [](const PyFeatureDetector& d) { return d.det.uses_cuda_graph(); });

    m.def(
        "detect_cpu",
        [](nb::handle image, const DetectorConfig* config) {
            std::vector<std::uint8_t> scratch;
            const Frame f = image_arg(image, "detect_cpu", "image", scratch);
            if (f.on_device) type_error("detect_cpu", "image", "must be in host memory (the CPU reference)");
            const DetectorConfig cfg = config ? *config : DetectorConfig{};
            std::vector<Keypoint> kps;
            {
                nb::gil_scoped_release unlocked;
                kps = detect_cpu(f.host, cfg);
            }
            return keypoints_array(kps.data(), kps.size());
        },
        "image"_a, "config"_a.none() = nb::none(),
        "The CPU reference of the whole detector (the definition the CUDA backend matches exactly).");

    m.def(
        "_bench_detect_cpp",
        [](PyFeatureDetector& d, nb::handle image, int iterations, nb::handle stream) {
            const char* where = "_bench_detect_cpp";
            const InUse in_use(d.busy, where);
            const Frame f = image_arg(image, where, "image", d.scratch);
            const StreamHandle s = stream_arg(stream, where);
            if (iterations < 1) detail::fail(where, "iterations", "must be >= 1");
            std::vector<double> t(static_cast<std::size_t>(iterations));
            {
                nb::gil_scoped_release unlocked;
                int n = 0;
                for (double& v : t) {
                    const auto t0 = std::chrono::steady_clock::now();
                    run_detect(d, f, s, n);
                    v = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                }
            }
            std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
            return t[t.size() / 2];
        },
        "detector"_a, "image"_a, "iterations"_a, "stream"_a.none() = nb::none(),
        "Benchmark helper: median seconds per call of the C++ detection loop (the same work as detect(), no "
        "Python in between), GIL released.");
}

}  // namespace kestrel::py
