// Bindings of the geometry area: Camera, UndistortConfig, project / unproject of point batches (the CPU
// functions of camera.hpp); RelativePoseConfig and RelativePoseEstimator (relative_pose.hpp).
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <array>
#include <vector>

#include "common.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/relative_pose.hpp"

namespace kestrel::py {

using namespace nb::literals;

namespace {

// An (N, 2) float64 C-contiguous array from any array-like.
nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> points2d_arg(nb::handle obj, const char* where,
                                                                                   const char* param) {
    nb::object arr;
    try {
        arr = nb::module_::import_("numpy").attr("ascontiguousarray")(obj, "dtype"_a = "float64");
    } catch (const nb::python_error&) {
        type_error(where, param, "must be an (N, 2) array of float64 (or convertible)");
    }
    if (nb::len(nb::object(arr.attr("shape"))) == 1 && nb::cast<std::size_t>(arr.attr("size")) == 0)
        arr = arr.attr("reshape")(0, 2);
    nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> a;
    if (!nb::try_cast(arr, a, false) || a.shape(1) != 2)
        detail::fail(where, param, "must have shape (N, 2); got " + std::string(nb::repr(arr.attr("shape")).c_str()));
    return a;
}

// An (N, 3) float64 C-contiguous array from any array-like (bearing vectors).
nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> points3d_arg(nb::handle obj, const char* where,
                                                                                   const char* param) {
    nb::object arr;
    try {
        arr = nb::module_::import_("numpy").attr("ascontiguousarray")(obj, "dtype"_a = "float64");
    } catch (const nb::python_error&) {
        type_error(where, param, "must be an (N, 3) array of float64 (or convertible)");
    }
    if (nb::len(nb::object(arr.attr("shape"))) == 1 && nb::cast<std::size_t>(arr.attr("size")) == 0)
        arr = arr.attr("reshape")(0, 3);
    nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu> a;
    if (!nb::try_cast(arr, a, false) || a.shape(1) != 3)
        detail::fail(where, param, "must have shape (N, 3); got " + std::string(nb::repr(arr.attr("shape")).c_str()));
    return a;
}

// An optional 3x3 rotation prior (None -> null), copied into `prior`.
const double* prior_arg(nb::handle obj, const char* where, std::array<double, 9>& prior) {
    if (obj.is_none()) return nullptr;
    nb::object r = nb::module_::import_("numpy").attr("ascontiguousarray")(obj, "dtype"_a = "float64");
    nb::ndarray<const double, nb::c_contig, nb::device::cpu> ra;
    if (!nb::try_cast(r, ra, false) || ra.size() != 9) detail::fail(where, "rotation_prior", "must be a 3x3 rotation matrix");
    for (int i = 0; i < 9; ++i) prior[static_cast<std::size_t>(i)] = ra.data()[i];
    return prior.data();
}

// A CUDA float32 array of `cols` columns (cols == 0: 1-D) and `rows` rows (rows < 0: any), C-contiguous, from an
// object with __dlpack__ (CuPy, PyTorch).
const float* device_floats_arg(nb::handle obj, const char* where, const char* param, long rows, int cols, long* n) {
    nb::ndarray<const float, nb::c_contig, nb::device::cuda> a;
    if (!nb::try_cast(obj, a, false))
        type_error(where, param, "must be a C-contiguous float32 CUDA array (CuPy, PyTorch: __dlpack__)");
    const bool shape_ok = cols ? (a.ndim() == 2 && a.shape(1) == static_cast<std::size_t>(cols)) : a.ndim() == 1;
    if (!shape_ok || (rows >= 0 && a.shape(0) != static_cast<std::size_t>(rows)))
        detail::fail(where, param,
                     cols ? "must have shape (N, " + std::to_string(cols) + ")" + (rows >= 0 ? " with N = " + std::to_string(rows) : "")
                          : "must have shape (N,) with N = " + std::to_string(rows));
    if (n) *n = static_cast<long>(a.shape(0));
    return a.data();
}

struct PyRelativePoseEstimator {
    RelativePoseEstimator est;
    std::vector<std::uint8_t> mask;
    std::atomic<bool> busy{false};
};

}  // namespace

void init_geometry(nb::module_& m) {
    nb::enum_<CameraModel>(m, "CameraModel", "Projection model of a Camera (docs/geometry.md).")
        .value("Pinhole", CameraModel::Pinhole)
        .value("PinholeRadtan", CameraModel::PinholeRadtan)
        .value("Fisheye", CameraModel::Fisheye);
    nb::enum_<UnprojectStatus>(m, "UnprojectStatus", nb::is_arithmetic(), "What became of one point's unprojection.")
        .value("Ok", UnprojectStatus::Ok)
        .value("NonFinite", UnprojectStatus::NonFinite)
        .value("OutsideModel", UnprojectStatus::OutsideModel)
        .value("NotConverged", UnprojectStatus::NotConverged);

    nb::class_<Camera>(m, "Camera",
                       "A calibrated camera: u = fx * xd + cx, v = fy * yd + cy with (xd, yd) the distorted normalized "
                       "point. Validated on construction.")
        .def(
            "__init__",
            [](Camera* self, CameraModel model, int width, int height, double fx, double fy, double cx, double cy,
               std::array<double, 5> d) {
                Camera c;
                c.model = model;
                c.width = width;
                c.height = height;
                c.fx = fx;
                c.fy = fy;
                c.cx = cx;
                c.cy = cy;
                for (int i = 0; i < 5; ++i) c.d[i] = d[i];
                validate(c);
                new (self) Camera(c);
            },
            nb::kw_only(), "model"_a = CameraModel::Pinhole, "width"_a, "height"_a, "fx"_a, "fy"_a, "cx"_a, "cy"_a,
            "d"_a = std::array<double, 5>{0, 0, 0, 0, 0},
            "d: PinholeRadtan (k1, k2, p1, p2, k3); Fisheye (k1, k2, k3, k4, 0); Pinhole all zero.")
        .def_rw("model", &Camera::model)
        .def_rw("width", &Camera::width)
        .def_rw("height", &Camera::height)
        .def_rw("fx", &Camera::fx)
        .def_rw("fy", &Camera::fy)
        .def_rw("cx", &Camera::cx)
        .def_rw("cy", &Camera::cy)
        .def_prop_rw(
            "d", [](const Camera& c) { return std::array<double, 5>{c.d[0], c.d[1], c.d[2], c.d[3], c.d[4]}; },
            [](Camera& c, std::array<double, 5> d) {
                for (int i = 0; i < 5; ++i) c.d[i] = d[i];
            },
            "the 5 distortion coefficients")
        .def("validate", [](const Camera& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    const UndistortConfig ud;
    nb::class_<UndistortConfig>(m, "UndistortConfig", "Settings of the iterative undistortion.")
        .def(
            "__init__",
            [](UndistortConfig* self, int max_iterations, double tolerance) {
                UndistortConfig c{max_iterations, tolerance};
                validate(c);
                new (self) UndistortConfig(c);
            },
            nb::kw_only(), "max_iterations"_a = ud.max_iterations, "tolerance"_a = ud.tolerance)
        .def_rw("max_iterations", &UndistortConfig::max_iterations, "[1, 100]")
        .def_rw("tolerance", &UndistortConfig::tolerance, "[1e-15, 1e-3] normalized units");

    m.def(
        "project",
        [](const Camera& cam, nb::handle points) {
            const auto p = points2d_arg(points, "project", "points");
            const std::size_t n = p.shape(0);
            std::vector<double> out(2 * n);
            validate(cam, "project: camera");
            {
                nb::gil_scoped_release unlocked;
                for (std::size_t i = 0; i < n; ++i) {
                    const Point2d q = project(cam, {p(i, 0), p(i, 1)});
                    out[2 * i] = q.x;
                    out[2 * i + 1] = q.y;
                }
            }
            return numpy_copy(out.data(), n, 2);
        },
        "camera"_a, "points"_a,
        "Pixels (N, 2) of normalized points (N, 2) = (X/Z, Y/Z), float64 (NaN in, NaN out).");
    m.def(
        "unproject",
        [](const Camera& cam, nb::handle pixels, const UndistortConfig* config) {
            const auto p = points2d_arg(pixels, "unproject", "pixels");
            const std::size_t n = p.shape(0);
            if (n > static_cast<std::size_t>(kMaxUnprojectPoints))
                detail::fail("unproject", "pixels", "has more than kMaxUnprojectPoints rows");
            std::vector<float> xy(2 * n);
            for (std::size_t i = 0; i < 2 * n; ++i) xy[i] = static_cast<float>(p.data()[i]);
            std::vector<Point2d> normalized(n);
            std::vector<UnprojectStatus> status(n);
            const UndistortConfig cfg = config ? *config : UndistortConfig{};
            {
                nb::gil_scoped_release unlocked;
                unproject_cpu(cam, xy.data(), static_cast<int>(n), normalized.data(), status.data(), cfg);
            }
            static_assert(sizeof(Point2d) == 2 * sizeof(double), "Point2d layout");
            return nb::make_tuple(numpy_copy(&normalized.data()->x, n, 2),
                                  numpy_copy(reinterpret_cast<const std::uint8_t*>(status.data()), n));
        },
        "camera"_a, "pixels"_a, "config"_a.none() = nb::none(),
        "Normalized points of pixels (N, 2) (taken as float32, as keypoints are): returns (normalized (N, 2) "
        "float64, status (N,) uint8 of UnprojectStatus); coordinates are NaN unless the status is Ok.");

    m.def(
        "unproject_bearing",
        [](const Camera& cam, nb::handle pixels, const UndistortConfig* config) {
            const auto p = points2d_arg(pixels, "unproject_bearing", "pixels");
            const std::size_t n = p.shape(0);
            const UndistortConfig cfg = config ? *config : UndistortConfig{};
            std::vector<double> b(3 * n);
            std::vector<std::int32_t> status(n);
            {
                nb::gil_scoped_release unlocked;
                for (std::size_t i = 0; i < n; ++i) {
                    const BearingUnprojection u = unproject_bearing(cam, {p.data()[2 * i], p.data()[2 * i + 1]}, cfg);
                    for (int c = 0; c < 3; ++c) b[3 * i + static_cast<std::size_t>(c)] = u.bearing[c];
                    status[i] = static_cast<std::int32_t>(u.status);
                }
            }
            return nb::make_tuple(numpy_copy(b.data(), n, 3), numpy_copy(status.data(), n));
        },
        "camera"_a, "pixels"_a, "config"_a.none() = nb::none(),
        "Unit bearing vectors (N, 3) of pixels (N, 2) and their statuses (N,) int32 (UnprojectStatus values): any "
        "direction the model sees, a fisheye's beyond 90 degrees off the axis too (z < 0). NaN rows unless Ok.");
    m.def(
        "pixels_per_radian",
        [](const Camera& cam, nb::handle bearings) {
            const auto b = points3d_arg(bearings, "pixels_per_radian", "bearings");
            const std::size_t n = b.shape(0);
            std::vector<double> s(n);
            {
                nb::gil_scoped_release unlocked;
                for (std::size_t i = 0; i < n; ++i) s[i] = pixels_per_radian(cam, b.data() + 3 * i);
            }
            return numpy_copy(s.data(), n);
        },
        "camera"_a, "bearings"_a,
        "Pixels per radian (N,) of a bearing's motion at each direction (N, 3) in this camera: threshold_px divided by "
        "it is the point's angular threshold (RelativePoseEstimator.estimate_bearings). NaN where the model has no "
        "image of the direction.");

    nb::enum_<PoseMethod>(m, "PoseMethod", "Which minimal solver RANSAC samples with.")
        .value("FivePoint", PoseMethod::FivePoint)
        .value("TwoPointWithRotation", PoseMethod::TwoPointWithRotation);
    nb::enum_<PoseStatus>(m, "PoseStatus", "What an estimate ended with; only Ok carries a model.")
        .value("Ok", PoseStatus::Ok)
        .value("TooFewPoints", PoseStatus::TooFewPoints)
        .value("NoModel", PoseStatus::NoModel)
        .value("Degenerate", PoseStatus::Degenerate);

    const RelativePoseConfig rd;
    nb::class_<RelativePoseConfig>(m, "RelativePoseConfig", "RANSAC settings of the relative pose (docs/geometry.md).")
        .def(
            "__init__",
            [](RelativePoseConfig* self, double focal_px, double threshold_px, double confidence, int max_hypotheses,
               int batch, std::uint64_t seed, PoseMethod method, bool refine, int min_inliers) {
                RelativePoseConfig c{focal_px, threshold_px, confidence, max_hypotheses, batch, seed, method, refine,
                                     min_inliers};
                validate(c);
                new (self) RelativePoseConfig(c);
            },
            nb::kw_only(), "focal_px"_a = rd.focal_px, "threshold_px"_a = rd.threshold_px,
            "confidence"_a = rd.confidence, "max_hypotheses"_a = rd.max_hypotheses, "batch"_a = rd.batch,
            "seed"_a = rd.seed, "method"_a = rd.method, "refine"_a = rd.refine, "min_inliers"_a = rd.min_inliers)
        .def_rw("focal_px", &RelativePoseConfig::focal_px, "pixels per normalized unit, (0, 1e6]")
        .def_rw("threshold_px", &RelativePoseConfig::threshold_px, "inlier threshold on the Sampson error, px")
        .def_rw("confidence", &RelativePoseConfig::confidence, "adaptive stop, [0.5, 1)")
        .def_rw("max_hypotheses", &RelativePoseConfig::max_hypotheses, "minimal samples drawn at most")
        .def_rw("batch", &RelativePoseConfig::batch, "CPU backend: hypotheses scored per round")
        .def_rw("seed", &RelativePoseConfig::seed, "the generator's seed: same input + seed -> same result")
        .def_rw("method", &RelativePoseConfig::method)
        .def_rw("refine", &RelativePoseConfig::refine, "Gauss-Newton on the Sampson error over the inliers")
        .def_rw("min_inliers", &RelativePoseConfig::min_inliers, "fewer inliers -> NoModel")
        .def("validate", [](const RelativePoseConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    nb::class_<RelativePoseResult>(m, "RelativePoseResult", "The estimate: status, E, R, t (X2 = R X1 + t, |t| = 1).")
        .def_ro("status", &RelativePoseResult::status)
        .def_prop_ro("E", [](const RelativePoseResult& r) { return numpy_copy(r.E.data(), 3, 3); }, "3x3 essential matrix")
        .def_prop_ro("R", [](const RelativePoseResult& r) { return numpy_copy(r.R.data(), 3, 3); }, "3x3 rotation")
        .def_prop_ro("t", [](const RelativePoseResult& r) { return numpy_copy(r.t.data(), 3); }, "unit translation")
        .def_ro("inliers", &RelativePoseResult::inliers)
        .def_ro("cheirality_inliers", &RelativePoseResult::cheirality_inliers)
        .def_ro("hypotheses", &RelativePoseResult::hypotheses)
        .def_ro("best_hypothesis", &RelativePoseResult::best_hypothesis)
        .def_ro("cost", &RelativePoseResult::cost);

    nb::class_<PyRelativePoseEstimator>(m, "RelativePoseEstimator",
                                        "Relative pose of two calibrated views: RANSAC over the five-point solver "
                                        "(or two points with a rotation prior), refinement, cheirality.")
        .def(
            "__init__",
            [](PyRelativePoseEstimator* self, int max_points, const RelativePoseConfig* config, nb::handle backend) {
                const RelativePoseConfig cfg = config ? *config : RelativePoseConfig{};
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyRelativePoseEstimator{RelativePoseEstimator(max_points, cfg, b), {}, {false}};
            },
            "max_points"_a, "config"_a.none() = nb::none(), "backend"_a.none() = nb::none())
        .def_prop_ro("backend", [](const PyRelativePoseEstimator& e) { return e.est.backend(); })
        .def_prop_ro("config", [](const PyRelativePoseEstimator& e) { return e.est.config(); })
        .def_prop_ro("max_points", [](const PyRelativePoseEstimator& e) { return e.est.max_points(); })
        .def(
            "estimate",
            [](PyRelativePoseEstimator& e, nb::handle x1, nb::handle x2, nb::handle rotation_prior) {
                const char* where = "RelativePoseEstimator.estimate";
                const InUse in_use(e.busy, where);
                const auto a = points2d_arg(x1, where, "x1");
                const auto b = points2d_arg(x2, where, "x2");
                if (a.shape(0) != b.shape(0))
                    detail::fail(where, "x2", "has " + std::to_string(b.shape(0)) + " rows; x1 has " +
                                                  std::to_string(a.shape(0)) + " (one per correspondence)");
                std::array<double, 9> prior{};
                const double* pp = nullptr;
                if (!rotation_prior.is_none()) {
                    nb::object r = nb::module_::import_("numpy").attr("ascontiguousarray")(rotation_prior,
                                                                                           "dtype"_a = "float64");
                    nb::ndarray<const double, nb::c_contig, nb::device::cpu> ra;
                    if (!nb::try_cast(r, ra, false) || ra.size() != 9)
                        detail::fail(where, "rotation_prior", "must be a 3x3 rotation matrix");
                    for (int i = 0; i < 9; ++i) prior[i] = ra.data()[i];
                    pp = prior.data();
                }
                const int n = static_cast<int>(a.shape(0));
                e.mask.assign(static_cast<std::size_t>(n), 0);
                RelativePoseResult res;
                {
                    nb::gil_scoped_release unlocked;
                    res = e.est.estimate(a.data(), b.data(), n, e.mask.data(), pp);
                }
                nb::object mask = numpy_copy(e.mask.data(), e.mask.size()).attr("astype")("bool");
                return nb::make_tuple(res, mask);
            },
            "x1"_a, "x2"_a, "rotation_prior"_a.none() = nb::none(),
            "x1, x2: (N, 2) normalized coordinates of the correspondences in the first and second view. Returns "
            "(RelativePoseResult, inlier mask (N,) bool). rotation_prior (3x3) is required by "
            "PoseMethod.TwoPointWithRotation.")
        .def(
            "estimate_bearings",
            [](PyRelativePoseEstimator& e, nb::handle b1, nb::handle b2, nb::handle rotation_prior,
               nb::handle pixels_per_radian) {
                const char* where = "RelativePoseEstimator.estimate_bearings";
                const InUse in_use(e.busy, where);
                const auto a = points3d_arg(b1, where, "b1");
                const auto b = points3d_arg(b2, where, "b2");
                if (a.shape(0) != b.shape(0))
                    detail::fail(where, "b2", "has " + std::to_string(b.shape(0)) + " rows; b1 has " +
                                                  std::to_string(a.shape(0)) + " (one per correspondence)");
                std::array<double, 9> prior{};
                const double* pp = prior_arg(rotation_prior, where, prior);
                const int n = static_cast<int>(a.shape(0));
                std::vector<double> scale;
                if (!pixels_per_radian.is_none()) {
                    nb::object s = nb::module_::import_("numpy").attr("ascontiguousarray")(pixels_per_radian,
                                                                                           "dtype"_a = "float64");
                    nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu> sa;
                    if (!nb::try_cast(s, sa, false) || sa.shape(0) != static_cast<std::size_t>(n))
                        detail::fail(where, "pixels_per_radian", "must have shape (N,) with N = " + std::to_string(n));
                    scale.assign(sa.data(), sa.data() + n);
                }
                e.mask.assign(static_cast<std::size_t>(n), 0);
                RelativePoseResult res;
                {
                    nb::gil_scoped_release unlocked;
                    res = e.est.estimate_bearings(a.data(), b.data(), n, e.mask.data(), pp,
                                                  scale.empty() ? nullptr : scale.data());
                }
                nb::object mask = numpy_copy(e.mask.data(), e.mask.size()).attr("astype")("bool");
                return nb::make_tuple(res, mask);
            },
            "b1"_a, "b2"_a, "rotation_prior"_a.none() = nb::none(), "pixels_per_radian"_a.none() = nb::none(),
            "b1, b2: (N, 3) bearing vectors (any direction, normalized when staged) of the correspondences in the "
            "first and second view. The inlier test is the tangent-plane Sampson error in radians times each point's "
            "pixels per radian (pixels_per_radian (N,); None: focal_px for every point) against threshold_px. Returns "
            "(RelativePoseResult, inlier mask (N,) bool). rotation_prior (3x3) is required by "
            "PoseMethod.TwoPointWithRotation.")
        .def(
            "estimate_device",
            [](PyRelativePoseEstimator& e, nb::handle b1, nb::handle b2, nb::handle pixels_per_radian,
               nb::handle rotation_prior, nb::handle stream) {
                const char* where = "RelativePoseEstimator.estimate_device";
                const InUse in_use(e.busy, where);
                if (e.est.backend() != Backend::Cuda)
                    throw StateError("kestrel: RelativePoseEstimator.estimate_device: needs Backend.Cuda (CUDA arrays); "
                                     "on Backend.Cpu use estimate_bearings with NumPy arrays");
                PoseDeviceInput in;
                long n = 0, n2 = 0;
                in.bearings1 = device_floats_arg(b1, where, "b1", -1, 3, &n);
                in.bearings2 = device_floats_arg(b2, where, "b2", n, 3, &n2);
                if (!pixels_per_radian.is_none())
                    in.pixels_per_radian = device_floats_arg(pixels_per_radian, where, "pixels_per_radian", n, 0, nullptr);
                std::array<double, 9> prior{};
                in.rotation_prior = prior_arg(rotation_prior, where, prior);
                in.count = static_cast<int>(n);
                const StreamHandle s = stream_arg(stream, where);
                e.mask.assign(static_cast<std::size_t>(n), 0);
                RelativePoseResult res;
                {
                    nb::gil_scoped_release unlocked;
                    e.est.estimate_device_async(in, s);
                    res = e.est.finish(e.mask.data());
                }
                nb::object mask = numpy_copy(e.mask.data(), e.mask.size()).attr("astype")("bool");
                return nb::make_tuple(res, mask);
            },
            "b1"_a, "b2"_a, "pixels_per_radian"_a.none() = nb::none(), "rotation_prior"_a.none() = nb::none(),
            "stream"_a.none() = nb::none(),
            "The device entry (Backend.Cuda): b1, b2 (N, 3) float32 CUDA arrays of unit bearings (CuPy, PyTorch), "
            "pixels_per_radian an optional (N,) float32 CUDA array, used in place; with rotation_prior (3x3) the "
            "two-point RANSAC runs, else the five-point one (config.method is not used). The work is enqueued on "
            "`stream` (default the legacy default stream) and waited for. Returns (RelativePoseResult, inlier mask (N,) "
            "bool).");
}

}  // namespace kestrel::py
