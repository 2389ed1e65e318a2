// Bindings of the geometry area: Camera, UndistortConfig, project / unproject of point batches (the CPU
// functions of camera.hpp).
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <array>
#include <vector>

#include "common.hpp"
#include "kestrel/camera.hpp"

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
}

}  // namespace kestrel::py
