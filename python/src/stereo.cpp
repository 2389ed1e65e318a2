// Bindings of the stereo area: RigType, StereoRig (rectified_rig, rig_from_body_poses), StereoStatus,
// StereoMatchConfig, StereoConfig, StereoTracker (host or CUDA frames, both images per call).
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "common.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/stereo_tracker.hpp"

namespace kestrel::py {

using namespace nb::literals;

namespace {

PyObject* g_stereo_dtype = nullptr;
static_assert(std::is_standard_layout_v<StereoTrack>, "StereoTrack layout");
static_assert(sizeof(StereoStatus) == 4, "StereoStatus is int32");

nb::object stereo_array(const std::vector<StereoTrack>& tracks) {
    void* data = nullptr;
    nb::object arr = new_structured(g_stereo_dtype, tracks.size(), &data);
    if (!tracks.empty()) std::memcpy(data, tracks.data(), tracks.size() * sizeof(StereoTrack));
    return arr;
}

struct PyStereoTracker {
    StereoTracker trk;
    std::vector<std::uint8_t> scratch_left, scratch_right;
    std::vector<Point2f> predictions;
    mutable std::atomic<bool> busy{false};
};

constexpr std::size_t L = offsetof(StereoTrack, left);

}  // namespace

void init_stereo(nb::module_& m) {
    g_stereo_dtype =
        make_dtype({"id", "x", "y", "prev_x", "prev_y", "age", "status", "gain", "offset", "residual", "score", "level",
                    "right_x", "right_y", "disparity", "depth", "stereo_status"},
                   {"<u8", "<f4", "<f4", "<f4", "<f4", "<i4", "<i4", "<f4", "<f4", "<f4", "<f4", "<i4", "<f4", "<f4",
                    "<f4", "<f4", "<i4"},
                   {L + offsetof(Track, id), L + offsetof(Track, x), L + offsetof(Track, y), L + offsetof(Track, prev_x),
                    L + offsetof(Track, prev_y), L + offsetof(Track, age), L + offsetof(Track, status),
                    L + offsetof(Track, gain), L + offsetof(Track, offset), L + offsetof(Track, residual),
                    L + offsetof(Track, score), L + offsetof(Track, level), offsetof(StereoTrack, right_x),
                    offsetof(StereoTrack, right_y), offsetof(StereoTrack, disparity), offsetof(StereoTrack, depth),
                    offsetof(StereoTrack, status)},
                   sizeof(StereoTrack))
            .release()
            .ptr();
    m.attr("STEREO_TRACK_DTYPE") = nb::handle(g_stereo_dtype);

    nb::enum_<RigType>(m, "RigType", "How the two images of a stereo pair relate.")
        .value("Rectified", RigType::Rectified)
        .value("Raw", RigType::Raw);
    nb::enum_<StereoStatus>(m, "StereoStatus", nb::is_arithmetic(),
                            "What became of a track's left-to-right match (an IntEnum: compare it with the "
                            "`stereo_status` field).")
        .value("Matched", StereoStatus::Matched)
        .value("NoMatch", StereoStatus::NoMatch)
        .value("Inconsistent", StereoStatus::Inconsistent)
        .value("OffEpipolar", StereoStatus::OffEpipolar)
        .value("OutOfRange", StereoStatus::OutOfRange);

    nb::class_<StereoRig>(m, "StereoRig",
                          "A stereo rig (docs/stereo.md): rectified_rig(focal, cx, cy, baseline), or raw with two "
                          "cameras and the extrinsics X_right = R_rl X_left + t_rl (rig_from_body_poses for EuRoC).")
        .def(
            "__init__",
            [](StereoRig* self, RigType type, double focal, double cx, double cy, double baseline, const Camera* left,
               const Camera* right, std::array<double, 9> R_rl, std::array<double, 3> t_rl) {
                StereoRig r;
                r.type = type;
                r.focal = focal;
                r.cx = cx;
                r.cy = cy;
                r.baseline = baseline;
                if (left) r.left = *left;
                if (right) r.right = *right;
                r.R_rl = R_rl;
                r.t_rl = t_rl;
                validate(r);
                new (self) StereoRig(r);
            },
            nb::kw_only(), "type"_a = RigType::Rectified, "focal"_a = 0.0, "cx"_a = 0.0, "cy"_a = 0.0,
            "baseline"_a = 0.0, "left"_a.none() = nb::none(), "right"_a.none() = nb::none(),
            "R_rl"_a = std::array<double, 9>{1, 0, 0, 0, 1, 0, 0, 0, 1}, "t_rl"_a = std::array<double, 3>{0, 0, 0},
            "Validated on construction (InvalidArgument names the field and its bound).")
        .def_rw("type", &StereoRig::type)
        .def_rw("focal", &StereoRig::focal, "rectified: focal length, px")
        .def_rw("cx", &StereoRig::cx)
        .def_rw("cy", &StereoRig::cy)
        .def_rw("baseline", &StereoRig::baseline, "rectified: metres (or depth's unit)")
        .def_rw("left", &StereoRig::left, "raw: the left camera")
        .def_rw("right", &StereoRig::right, "raw: the right camera")
        .def_rw("R_rl", &StereoRig::R_rl, "raw: rotation right from left, row-major")
        .def_rw("t_rl", &StereoRig::t_rl, "raw: translation right from left, metres")
        .def("validate", [](const StereoRig& r) { validate(r); }, "Raises InvalidArgument unless valid.");
    m.def("rectified_rig", &rectified_rig, "focal"_a, "cx"_a, "cy"_a, "baseline"_a,
          "A rectified rig: focal length and principal point in pixels, baseline in metres.");
    m.def("rig_from_body_poses", &rig_from_body_poses, "left"_a, "T_BS_left"_a, "right"_a, "T_BS_right"_a,
          "A raw rig from each camera's pose in the body frame (row-major 4x4 T_BS, as EuRoC's sensor.yaml).");

    const StereoMatchConfig md;
    nb::class_<StereoMatchConfig>(m, "StereoMatchConfig", "The left-to-right matching's settings (docs/stereo.md).")
        .def(
            "__init__",
            [](StereoMatchConfig* self, const LkConfig* lk, int refine_levels, float epipolar_tolerance,
               float max_round_trip, float trust_distance, float min_disparity, float max_disparity) {
                StereoMatchConfig c;
                if (lk) c.lk = *lk;
                c.refine_levels = refine_levels;
                c.epipolar_tolerance = epipolar_tolerance;
                c.max_round_trip = max_round_trip;
                c.trust_distance = trust_distance;
                c.min_disparity = min_disparity;
                c.max_disparity = max_disparity;
                new (self) StereoMatchConfig(c);
            },
            nb::kw_only(), "lk"_a.none() = nb::none(), "refine_levels"_a = md.refine_levels,
            "epipolar_tolerance"_a = md.epipolar_tolerance, "max_round_trip"_a = md.max_round_trip,
            "trust_distance"_a = md.trust_distance, "min_disparity"_a = md.min_disparity,
            "max_disparity"_a = md.max_disparity,
            "lk: default stereo_match_lk_config() (LkConfig's defaults on 5 levels, 16 px patches). Validated with "
            "the StereoConfig that holds it.")
        .def_rw("lk", &StereoMatchConfig::lk)
        .def_rw("refine_levels", &StereoMatchConfig::refine_levels, "levels a track matched in the previous frame is refined on, [0, levels]")
        .def_rw("epipolar_tolerance", &StereoMatchConfig::epipolar_tolerance, "px, (0, 100]")
        .def_rw("max_round_trip", &StereoMatchConfig::max_round_trip, "px, (0, 100]")
        .def_rw("trust_distance", &StereoMatchConfig::trust_distance,
                "px, [0, 100]: a track matched in the previous frame whose match lands this close to its seed is not "
                "matched back; 0: every track is")
        .def_rw("min_disparity", &StereoMatchConfig::min_disparity, "px")
        .def_rw("max_disparity", &StereoMatchConfig::max_disparity, "px");
    m.def("stereo_match_lk_config", &stereo_match_lk_config, "The matching LK's defaults.");

    const StereoConfig sd;
    nb::class_<StereoConfig>(m, "StereoConfig",
                             "StereoTracker's settings: the left tracking (TrackerConfig), the matching, track_right. "
                             "Validated on construction.")
        .def(
            "__init__",
            [](StereoConfig* self, const TrackerConfig* tracker, const StereoMatchConfig* match, bool track_right) {
                StereoConfig c;
                if (tracker) c.tracker = *tracker;
                if (match) c.match = *match;
                c.track_right = track_right;
                validate(c);
                new (self) StereoConfig(c);
            },
            nb::kw_only(), "tracker"_a.none() = nb::none(), "match"_a.none() = nb::none(),
            "track_right"_a = sd.track_right)
        .def_rw("tracker", &StereoConfig::tracker)
        .def_rw("match", &StereoConfig::match)
        .def_rw("track_right", &StereoConfig::track_right, "also track the right image's own features in time")
        .def("validate", [](const StereoConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    nb::class_<PyStereoTracker>(m, "StereoTracker",
                                "Both cameras of a rig per frame (docs/stereo.md): the left tracks in time, each matched "
                                "into the right image with a disparity, a depth and a stereo status.")
        .def(
            "__init__",
            [](PyStereoTracker* self, int width, int height, const StereoRig& rig, const StereoConfig* config,
               nb::handle backend) {
                const StereoConfig cfg = config ? *config : StereoConfig{};
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyStereoTracker{StereoTracker(width, height, rig, cfg, b), {}, {}, {}, {false}};
            },
            "width"_a, "height"_a, "rig"_a, "config"_a.none() = nb::none(), "backend"_a.none() = nb::none())
        .def_prop_ro("config", [](const PyStereoTracker& t) { return t.trk.config(); })
        .def_prop_ro("rig", [](const PyStereoTracker& t) { return t.trk.rig(); })
        .def_prop_ro("backend", [](const PyStereoTracker& t) { return t.trk.backend(); })
        .def_prop_ro("width", [](const PyStereoTracker& t) { return t.trk.width(); })
        .def_prop_ro("height", [](const PyStereoTracker& t) { return t.trk.height(); })
        .def(
            "track",
            [](PyStereoTracker& t, nb::handle left, nb::handle right, nb::handle predictions, nb::handle stream) {
                const char* where = "StereoTracker.track";
                const InUse in_use(t.busy, where);
                const Frame l = image_arg(left, where, "left", t.scratch_left);
                const Frame r = image_arg(right, where, "right", t.scratch_right);
                if (l.on_device != r.on_device)
                    detail::fail(where, "right", "is in another memory than left: both host or both CUDA");
                const StreamHandle s = stream_arg(stream, where);
                const std::vector<Point2f>* preds =
                    predictions_arg(predictions, where, t.trk.tracks().size(), t.predictions);
                {
                    nb::gil_scoped_release unlocked;
                    if (l.on_device) {
                        t.trk.track_async(l.device, r.device, s, preds);
                        t.trk.finish();
                    } else {
                        t.trk.track(l.host, r.host, preds);
                    }
                }
                return stereo_array(t.trk.tracks());
            },
            "left"_a, "right"_a, "predictions"_a.none() = nb::none(), nb::kw_only(), "stream"_a.none() = nb::none(),
            "Tracks one stereo frame: two 2-D uint8 arrays of width x height, both NumPy (any strides) or both CUDA "
            "arrays (CuPy, PyTorch; DLPack, CUDA backend, on `stream`). `predictions`: optional (N, 2) guesses for the "
            "left tracks of the previous call. Returns the live left tracks with their matches as a structured array "
            "(FeatureTracker's fields, then right_x, right_y, disparity, depth, stereo_status). The GIL is released "
            "during the work.")
        .def_prop_ro("tracks", [](const PyStereoTracker& t) {
                         const InUse in_use(t.busy, "StereoTracker.tracks");
                         return stereo_array(t.trk.tracks());
                     },
                     "live left tracks with their matches after the last frame")
        .def_prop_ro("lost_tracks", [](const PyStereoTracker& t) {
                         const InUse in_use(t.busy, "StereoTracker.lost_tracks");
                         return tracks_array(t.trk.lost_tracks());
                     },
                     "left tracks dropped in the last frame (FeatureTracker's structured array)")
        .def_prop_ro("right_tracks", [](const PyStereoTracker& t) {
                         const InUse in_use(t.busy, "StereoTracker.right_tracks");
                         return tracks_array(t.trk.right_tracks());
                     },
                     "track_right: the right image's own tracks (else empty)")
        .def_prop_ro("right_lost_tracks", [](const PyStereoTracker& t) {
                         const InUse in_use(t.busy, "StereoTracker.right_lost_tracks");
                         return tracks_array(t.trk.right_lost_tracks());
                     },
                     "track_right: the right image's tracks dropped in the last frame (else empty)")
        .def_prop_ro("frame_count", [](const PyStereoTracker& t) { return t.trk.frame_count(); })
        .def_prop_ro("redetected", [](const PyStereoTracker& t) { return t.trk.redetected(); })
        .def(
            "reset",
            [](PyStereoTracker& t) {
                const InUse in_use(t.busy, "StereoTracker.reset");
                nb::gil_scoped_release unlocked;
                t.trk.reset();
            },
            "Forgets every track (both cameras).");
}

}  // namespace kestrel::py
