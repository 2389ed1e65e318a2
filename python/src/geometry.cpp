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
            "PoseMethod.TwoPointWithRotation.");
}

}  // namespace kestrel::py
