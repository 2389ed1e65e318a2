// Bindings of the track area: LkConfig, AnchorConfig, MotionConfig, GeometricCheckConfig, TrackerConfig, TrackStatus
// and the other enums, FeatureTracker (host or CUDA frames, predictions, the rotation prior, lost tracks, the geometric
// check's result), CameraConfig and MultiCameraTracker.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "common.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/multi_camera_tracker.hpp"

namespace kestrel::py {

using namespace nb::literals;

namespace {

PyObject* g_track_dtype = nullptr;
static_assert(std::is_standard_layout_v<Track>, "Track layout");
static_assert(sizeof(TrackStatus) == 4, "TrackStatus is int32");

}  // namespace

nb::object tracks_array(const std::vector<Track>& tracks) {
    void* data = nullptr;
    nb::object arr = new_structured(g_track_dtype, tracks.size(), &data);
    if (!tracks.empty()) std::memcpy(data, tracks.data(), tracks.size() * sizeof(Track));
    return arr;
}

namespace {

struct PyFeatureTracker {
    FeatureTracker trk;
    std::vector<std::uint8_t> scratch;
    std::vector<Point2f> predictions;
    mutable std::atomic<bool> busy{false};
};

struct PyMultiCameraTracker {
    MultiCameraTracker trk;
    std::vector<std::vector<std::uint8_t>> scratch;
    std::vector<HostView> host;
    std::vector<DeviceView> device;
    mutable std::atomic<bool> busy{false};
};

/// A rotation prior: None, or 9 numbers (a 3x3 matrix, row-major) -> `out`; null for None.
const std::array<double, 9>* rotation_arg(nb::handle h, const char* where, std::array<double, 9>& out) {
    if (h.is_none()) return nullptr;
    nb::object flat;
    try {
        flat = nb::module_::import_("numpy").attr("asarray")(h, "float64").attr("reshape")(-1);
    } catch (const nb::python_error&) {
        detail::fail(where, "rotation_prior", "must be a 3x3 array of numbers (row-major)");
    }
    if (nb::len(flat) != 9) detail::fail(where, "rotation_prior", "must hold 9 numbers (a 3x3 matrix)");
    for (std::size_t i = 0; i < 9; ++i) out[i] = nb::cast<double>(flat[i]);
    return &out;
}

nb::list all_tracks(const PyMultiCameraTracker& t, bool lost) {
    nb::list out;
    for (int i = 0; i < t.trk.size(); ++i) out.append(tracks_array(lost ? t.trk.lost_tracks(i) : t.trk.tracks(i)));
    return out;
}

}  // namespace

void init_track(nb::module_& m) {
    g_track_dtype =
        make_dtype({"id", "x", "y", "prev_x", "prev_y", "age", "status", "gain", "offset", "residual", "score", "level"},
                   {"<u8", "<f4", "<f4", "<f4", "<f4", "<i4", "<i4", "<f4", "<f4", "<f4", "<f4", "<i4"},
                   {offsetof(Track, id), offsetof(Track, x), offsetof(Track, y), offsetof(Track, prev_x),
                    offsetof(Track, prev_y), offsetof(Track, age), offsetof(Track, status), offsetof(Track, gain),
                    offsetof(Track, offset), offsetof(Track, residual), offsetof(Track, score), offsetof(Track, level)},
                   sizeof(Track))
            .release()
            .ptr();
    m.attr("TRACK_DTYPE") = nb::handle(g_track_dtype);

    nb::enum_<LkMode>(m, "LkMode", "Which parameters LK estimates besides the translation.")
        .value("Translation", LkMode::Translation)
        .value("TranslationOffset", LkMode::TranslationOffset)
        .value("TranslationGain", LkMode::TranslationGain)
        .value("TranslationGainOffset", LkMode::TranslationGainOffset);
    nb::enum_<TemplateSource>(m, "TemplateSource", "Where a feature's template comes from.")
        .value("PreviousFrame", TemplateSource::PreviousFrame)
        .value("FirstFrame", TemplateSource::FirstFrame);
    nb::enum_<TrackStatus>(m, "TrackStatus", nb::is_arithmetic(),
                           "Outcome of tracking one feature (an IntEnum: compare it with the `status` field).")
        .value("Tracked", TrackStatus::Tracked)
        .value("LostOutOfBounds", TrackStatus::LostOutOfBounds)
        .value("LostResidual", TrackStatus::LostResidual)
        .value("LostSingular", TrackStatus::LostSingular)
        .value("NotConverged", TrackStatus::NotConverged)
        .value("LostForwardBackward", TrackStatus::LostForwardBackward)
        .value("LostAnchor", TrackStatus::LostAnchor)
        .value("Outlier", TrackStatus::Outlier);

    const LkConfig ld;
    nb::class_<LkConfig>(m, "LkConfig", "Pyramidal Lucas-Kanade settings (docs/tracker.md).")
        .def(
            "__init__",
            [](LkConfig* self, const PyramidConfig* pyramid, LkMode mode, TemplateSource template_source,
               int patch_size, int coarse_patch_size, int coarse_from_level, int max_iterations, float min_update,
               float max_residual, float min_eigenvalue, int coarse_max_iterations) {
                LkConfig c;
                if (pyramid) c.pyramid = *pyramid;
                c.mode = mode;
                c.template_source = template_source;
                c.patch_size = patch_size;
                c.coarse_patch_size = coarse_patch_size;
                c.coarse_from_level = coarse_from_level;
                c.max_iterations = max_iterations;
                c.min_update = min_update;
                c.max_residual = max_residual;
                c.min_eigenvalue = min_eigenvalue;
                c.coarse_max_iterations = coarse_max_iterations;
                validate(c);
                new (self) LkConfig(c);
            },
            nb::kw_only(), "pyramid"_a.none() = nb::none(), "mode"_a = ld.mode, "template_source"_a = ld.template_source,
            "patch_size"_a = ld.patch_size, "coarse_patch_size"_a = ld.coarse_patch_size,
            "coarse_from_level"_a = ld.coarse_from_level, "max_iterations"_a = ld.max_iterations,
            "min_update"_a = ld.min_update, "max_residual"_a = ld.max_residual, "min_eigenvalue"_a = ld.min_eigenvalue,
            "coarse_max_iterations"_a = ld.coarse_max_iterations, "pyramid: default PyramidConfig(levels=3, scale=2.0).")
        .def_rw("pyramid", &LkConfig::pyramid, "tracking pyramid (level 0 = frame)")
        .def_rw("mode", &LkConfig::mode)
        .def_rw("template_source", &LkConfig::template_source)
        .def_rw("patch_size", &LkConfig::patch_size, "patch side on levels < coarse_from_level, [4, 16]")
        .def_rw("coarse_patch_size", &LkConfig::coarse_patch_size, "patch side on the other levels, [4, 16]")
        .def_rw("coarse_from_level", &LkConfig::coarse_from_level, "first level using coarse_patch_size, [1, 8]")
        .def_rw("max_iterations", &LkConfig::max_iterations, "Gauss-Newton iterations per level, [1, 100]")
        .def_rw("min_update", &LkConfig::min_update, "stop when |dt| (level pixels) < min_update, (0, 1]")
        .def_rw("max_residual", &LkConfig::max_residual, "LostResidual above this mean |residual|, (0, 255]")
        .def_rw("min_eigenvalue", &LkConfig::min_eigenvalue, "LostSingular below this eigenvalue, [0, 1e6]")
        .def_rw("coarse_max_iterations", &LkConfig::coarse_max_iterations,
                "at most this many of max_iterations on every level but 0, [1, 100]")
        .def("validate", [](const LkConfig& c) { validate(c); }, "Raises InvalidArgument unless valid.");

    const AnchorConfig ad;
    nb::class_<AnchorConfig>(m, "AnchorConfig", "Refinement of every track against its first observation.")
        .def(
            "__init__",
            [](AnchorConfig* self, bool enabled, bool reanchor, int max_iterations, float max_residual,
               float max_distance, int interval) {
                new (self) AnchorConfig{enabled, reanchor, max_iterations, max_residual, max_distance, interval};
            },
            nb::kw_only(), "enabled"_a = ad.enabled, "reanchor"_a = ad.reanchor, "max_iterations"_a = ad.max_iterations,
            "max_residual"_a = ad.max_residual, "max_distance"_a = ad.max_distance, "interval"_a = ad.interval)
        .def_rw("enabled", &AnchorConfig::enabled)
        .def_rw("reanchor", &AnchorConfig::reanchor, "on a failed fit: re-anchor (True) or lose the track")
        .def_rw("max_iterations", &AnchorConfig::max_iterations, "[1, 100]")
        .def_rw("max_residual", &AnchorConfig::max_residual, "(0, 255] grey levels")
        .def_rw("max_distance", &AnchorConfig::max_distance, "(0, 100] level-0 px from the frame-to-frame estimate")
        .def_rw("interval", &AnchorConfig::interval,
                "frames between a track's scheduled fits, [1, 64] (1: every frame; see docs/tracker.md)");

    const MotionConfig md;
    nb::class_<MotionConfig>(m, "MotionConfig",
                             "Where LK starts each track (constant velocity) and how many levels it searches.")
        .def(
            "__init__",
            [](MotionConfig* self, bool constant_velocity, bool fewer_levels, float level_reach) {
                new (self) MotionConfig{constant_velocity, fewer_levels, level_reach};
            },
            nb::kw_only(), "constant_velocity"_a = md.constant_velocity, "fewer_levels"_a = md.fewer_levels,
            "level_reach"_a = md.level_reach)
        .def_rw("constant_velocity", &MotionConfig::constant_velocity,
                "start from the track's last displacement (False: from its position)")
        .def_rw("fewer_levels", &MotionConfig::fewer_levels,
                "a track with a predicted start searches only the levels its displacement needs")
        .def_rw("level_reach", &MotionConfig::level_reach, "level-0 px per unit of level scale, (0, 1000]");

    nb::enum_<CheckModel>(m, "CheckModel", "The motion model that decided a frame's geometric check.")
        .value("None_", CheckModel::None)
        .value("Essential", CheckModel::Essential)
        .value("TwoPoint", CheckModel::TwoPoint)
        .value("RotationOnly", CheckModel::RotationOnly);

    const GeometricCheckConfig gd;
    nb::class_<GeometricCheckConfig>(m, "GeometricCheckConfig",
                                     "The tracker's geometric check (docs/tracker.md, 'Geometric check'): tracks that "
                                     "disagree with the frame's relative pose end as TrackStatus.Outlier.")
        .def(
            "__init__",
            [](GeometricCheckConfig* self, bool enabled, const Camera* camera, double threshold_px, double confidence,
               int max_hypotheses, int min_tracks, std::uint64_t seed, int baseline_frames) {
                GeometricCheckConfig g;
                g.enabled = enabled;
                if (camera) g.camera = *camera;
                g.threshold_px = threshold_px;
                g.confidence = confidence;
                g.max_hypotheses = max_hypotheses;
                g.min_tracks = min_tracks;
                g.seed = seed;
                g.baseline_frames = baseline_frames;
                TrackerConfig c;
                c.geometric_check = g;
                validate(c);
                new (self) GeometricCheckConfig(g);
            },
            nb::kw_only(), "enabled"_a = gd.enabled, "camera"_a.none() = nb::none(), "threshold_px"_a = gd.threshold_px,
            "confidence"_a = gd.confidence, "max_hypotheses"_a = gd.max_hypotheses, "min_tracks"_a = gd.min_tracks,
            "seed"_a = gd.seed, "baseline_frames"_a = gd.baseline_frames,
            "camera: the frames' Camera (needed when enabled).")
        .def_rw("enabled", &GeometricCheckConfig::enabled)
        .def_rw("camera", &GeometricCheckConfig::camera, "the frames' camera")
        .def_rw("threshold_px", &GeometricCheckConfig::threshold_px, "inlier threshold, (0, 100] px")
        .def_rw("confidence", &GeometricCheckConfig::confidence, "RANSAC's adaptive stop, [0.5, 1)")
        .def_rw("max_hypotheses", &GeometricCheckConfig::max_hypotheses, "[1, 1 << 20]")
        .def_rw("min_tracks", &GeometricCheckConfig::min_tracks, "fewer checkable tracks end nothing, [8, 65536]")
        .def_rw("seed", &GeometricCheckConfig::seed)
        .def_rw("baseline_frames", &GeometricCheckConfig::baseline_frames,
                "the second test's baseline in frames, [1, 16] (1: the frame pair alone)");

    nb::class_<GeometricCheckResult>(m, "GeometricCheckResult", "The last frame's geometric check.")
        .def_ro("model", &GeometricCheckResult::model, "the model that decided (CheckModel.None_: nothing ended)")
        .def_ro("pose_status", &GeometricCheckResult::pose_status)
        .def_ro("R", &GeometricCheckResult::R, "X_cur = R X_prev + t, row-major (9 numbers)")
        .def_ro("t", &GeometricCheckResult::t, "unit translation (zero for RotationOnly and None_)")
        .def_ro("checked", &GeometricCheckResult::checked)
        .def_ro("inliers", &GeometricCheckResult::inliers)
        .def_ro("outliers", &GeometricCheckResult::outliers)
        .def_ro("hypotheses", &GeometricCheckResult::hypotheses);

    const TrackerConfig td;
    nb::class_<TrackerConfig>(m, "TrackerConfig",
                              "FeatureTracker's settings (docs/tracker.md). Keyword arguments, validated on "
                              "construction (InvalidArgument names the parameter and the bound).")
        .def(
            "__init__",
            [](TrackerConfig* self, const LkConfig* lk, const DetectorConfig* detector, int target_features,
               float redetect_fraction, bool forward_backward, float fb_max_error, const AnchorConfig* anchor,
               const MotionConfig* motion, int threads, const GeometricCheckConfig* geometric_check) {
                TrackerConfig c;
                if (lk) c.lk = *lk;
                if (detector) c.detector = *detector;
                c.target_features = target_features;
                c.redetect_fraction = redetect_fraction;
                c.forward_backward = forward_backward;
                c.fb_max_error = fb_max_error;
                if (anchor) c.anchor = *anchor;
                if (motion) c.motion = *motion;
                c.threads = threads;
                if (geometric_check) c.geometric_check = *geometric_check;
                validate(c);
                new (self) TrackerConfig(c);
            },
            nb::kw_only(), "lk"_a.none() = nb::none(), "detector"_a.none() = nb::none(),
            "target_features"_a = td.target_features, "redetect_fraction"_a = td.redetect_fraction,
            "forward_backward"_a = td.forward_backward, "fb_max_error"_a = td.fb_max_error,
            "anchor"_a.none() = nb::none(), "motion"_a.none() = nb::none(), "threads"_a = td.threads, "geometric_check"_a.none() = nb::none(),
            "lk: default LkConfig(); detector: default tracking_detector_config() (DetectorConfig with border=20); "
            "anchor: default AnchorConfig(); motion: default MotionConfig(); geometric_check: default "
            "GeometricCheckConfig() (off).")
        .def_rw("lk", &TrackerConfig::lk, "tracking settings")
        .def_rw("detector", &TrackerConfig::detector, "re-detection settings")
        .def_rw("target_features", &TrackerConfig::target_features, "wanted live tracks, [1, 65536]")
        .def_rw("redetect_fraction", &TrackerConfig::redetect_fraction, "re-detect when live < fraction * target")
        .def_rw("forward_backward", &TrackerConfig::forward_backward, "drop round trips that miss")
        .def_rw("fb_max_error", &TrackerConfig::fb_max_error, "largest accepted round-trip error, (0, 100] px")
        .def_rw("anchor", &TrackerConfig::anchor, "refinement against each track's first observation")
        .def_rw("motion", &TrackerConfig::motion, "the tracks' start (constant velocity) and the levels searched")
        .def_rw("threads", &TrackerConfig::threads, "CPU backend: threads of the tracker's pool, [0, 256]; 0 = all")
        .def_rw("geometric_check", &TrackerConfig::geometric_check, "tracks against one relative pose per frame")
        .def("validate", [](const TrackerConfig& c) { validate(c); },
             "Raises InvalidArgument (naming the parameter and the bound) unless valid.");
    m.def("tracking_detector_config", &tracking_detector_config,
          "The detector settings FeatureTracker re-detects with by default.");

    nb::class_<PyFeatureTracker>(m, "FeatureTracker",
                                 "Frames in, tracks with stable ids out (docs/tracker.md). Every frame must be "
                                 "width x height.")
        .def(
            "__init__",
            [](PyFeatureTracker* self, int width, int height, const TrackerConfig* config, nb::handle backend) {
                const TrackerConfig cfg = config ? *config : TrackerConfig{};
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyFeatureTracker{FeatureTracker(width, height, cfg, b), {}, {}, {false}};
            },
            "width"_a, "height"_a, "config"_a.none() = nb::none(), "backend"_a.none() = nb::none(),
            "config: TrackerConfig (default TrackerConfig()); backend: Backend, default default_backend().")
        .def_prop_ro("config", [](const PyFeatureTracker& t) { return t.trk.config(); }, "a copy of the settings")
        .def_prop_ro("backend", [](const PyFeatureTracker& t) { return t.trk.backend(); })
        .def_prop_ro("width", [](const PyFeatureTracker& t) { return t.trk.width(); })
        .def_prop_ro("height", [](const PyFeatureTracker& t) { return t.trk.height(); })
        .def(
            "track",
            [](PyFeatureTracker& t, nb::handle frame, nb::handle predictions, nb::handle stream, nb::handle rotation) {
                const char* where = "FeatureTracker.track";
                const InUse in_use(t.busy, where);
                const Frame f = image_arg(frame, where, "frame", t.scratch);
                const StreamHandle s = stream_arg(stream, where);
                const std::vector<Point2f>* preds =
                    predictions_arg(predictions, where, t.trk.tracks().size(), t.predictions);
                std::array<double, 9> prior_store{};
                const std::array<double, 9>* prior = rotation_arg(rotation, where, prior_store);
                {
                    nb::gil_scoped_release unlocked;
                    if (f.on_device) {
                        t.trk.track_async(f.device, s, preds, prior);
                        t.trk.finish();
                    } else {
                        t.trk.track(f.host, preds, prior);
                    }
                }
                return tracks_array(t.trk.tracks());
            },
            "frame"_a, "predictions"_a.none() = nb::none(), nb::kw_only(), "stream"_a.none() = nb::none(),
            "rotation_prior"_a.none() = nb::none(),
            "Tracks one frame, a 2-D uint8 array of width x height: NumPy (any strides) or a CUDA array (CuPy, "
            "PyTorch; DLPack) used in place (CUDA backend). `predictions`: optional (N, 2) initial guesses (x, y) "
            "for the N tracks returned by the previous call, in their order. `stream`: CUDA arrays only, the "
            "stream the work is enqueued on (default the legacy default stream); the call returns when the frame "
            "is done. Returns the live tracks as a structured array (id, x, y, prev_x, prev_y, age, status, gain, "
            "offset, residual, score, level). `rotation_prior`: optional 3x3 rotation (X_cur = R X_prev + t, e.g. "
            "the integrated gyro) for the geometric check (config.geometric_check), which then estimates the "
            "translation alone. The GIL is released during the work.")
        .def_prop_ro("geometric_check", [](const PyFeatureTracker& t) {
                         const InUse in_use(t.busy, "FeatureTracker.geometric_check");
                         return t.trk.geometric_check();
                     },
                     "the last frame's geometric check (GeometricCheckResult)")
        .def_prop_ro("tracks", [](const PyFeatureTracker& t) {
                         const InUse in_use(t.busy, "FeatureTracker.tracks");
                         return tracks_array(t.trk.tracks());
                     },
                     "live tracks after the last frame (structured array)")
        .def_prop_ro("lost_tracks", [](const PyFeatureTracker& t) {
                         const InUse in_use(t.busy, "FeatureTracker.lost_tracks");
                         return tracks_array(t.trk.lost_tracks());
                     },
                     "tracks dropped in the last frame, with their status (structured array)")
        .def_prop_ro("frame_count", [](const PyFeatureTracker& t) { return t.trk.frame_count(); },
                     "frames finished so far")
        .def_prop_ro("redetected", [](const PyFeatureTracker& t) { return t.trk.redetected(); },
                     "whether the last frame ran the detector")
        .def(
            "reset",
            [](PyFeatureTracker& t) {
                const InUse in_use(t.busy, "FeatureTracker.reset");
                nb::gil_scoped_release unlocked;
                t.trk.reset();
            },
            "Forgets every track; the next frame starts like the first (ids keep increasing).");

    nb::class_<CameraConfig>(m, "CameraConfig", "One camera of a MultiCameraTracker: its frame size and tracker settings.")
        .def(
            "__init__",
            [](CameraConfig* self, int width, int height, const TrackerConfig* tracker) {
                new (self) CameraConfig{width, height, tracker ? *tracker : TrackerConfig{}};
            },
            nb::kw_only(), "width"_a, "height"_a, "tracker"_a.none() = nb::none())
        .def_rw("width", &CameraConfig::width)
        .def_rw("height", &CameraConfig::height)
        .def_rw("tracker", &CameraConfig::tracker);

    nb::class_<PyMultiCameraTracker>(m, "MultiCameraTracker",
                                     "Several cameras tracked in one submission per frame set (docs/tracker.md); each "
                                     "camera's results equal a FeatureTracker's on the same frames.")
        .def(
            "__init__",
            [](PyMultiCameraTracker* self, const std::vector<CameraConfig>& cameras, nb::handle backend) {
                const Backend b = backend_arg(backend);
                nb::gil_scoped_release unlocked;
                new (self) PyMultiCameraTracker{MultiCameraTracker(cameras, b), {}, {}, {}, {false}};
            },
            "cameras"_a, "backend"_a.none() = nb::none(), "cameras: a list of CameraConfig (at most 32).")
        .def_prop_ro("size", [](const PyMultiCameraTracker& t) { return t.trk.size(); }, "number of cameras")
        .def("__len__", [](const PyMultiCameraTracker& t) { return t.trk.size(); })
        .def_prop_ro("backend", [](const PyMultiCameraTracker& t) { return t.trk.backend(); })
        .def(
            "track",
            [](PyMultiCameraTracker& t, nb::sequence frames, nb::handle stream) {
                const char* where = "MultiCameraTracker.track";
                const InUse in_use(t.busy, where);
                const std::size_t n = nb::len(frames);
                if (n != static_cast<std::size_t>(t.trk.size()))
                    detail::fail(where, "frames", "has " + std::to_string(n) + " frames; the tracker has " +
                                                      std::to_string(t.trk.size()) + " cameras");
                const StreamHandle s = stream_arg(stream, where);
                t.scratch.resize(n);
                t.host.clear();
                t.device.clear();
                std::vector<Frame> keep;
                keep.reserve(n);
                for (std::size_t i = 0; i < n; ++i) {
                    const std::string param = "frames[" + std::to_string(i) + "]";
                    keep.push_back(image_arg(frames[i], where, param.c_str(), t.scratch[i]));
                    if (keep.back().on_device != keep.front().on_device)
                        detail::fail(where, param.c_str(), "is in another memory than frames[0]: all host or all CUDA");
                    if (keep.back().on_device)
                        t.device.push_back(keep.back().device);
                    else
                        t.host.push_back(keep.back().host);
                }
                {
                    nb::gil_scoped_release unlocked;
                    if (!t.device.empty()) {
                        t.trk.track_async(t.device, s);
                        t.trk.finish();
                    } else {
                        t.trk.track(t.host);
                    }
                }
                return all_tracks(t, false);
            },
            "frames"_a, nb::kw_only(), "stream"_a.none() = nb::none(),
            "Tracks one frame per camera (a list of 2-D uint8 arrays, all NumPy or all CUDA arrays); returns a list "
            "of structured arrays of live tracks, one per camera. The GIL is released during the work.")
        .def("tracks", [](const PyMultiCameraTracker& t, int camera) {
                const InUse in_use(t.busy, "MultiCameraTracker.tracks");
                return tracks_array(t.trk.tracks(camera));
            },
             "camera"_a, "the camera's live tracks after the last frame set")
        .def("lost_tracks", [](const PyMultiCameraTracker& t, int camera) {
                const InUse in_use(t.busy, "MultiCameraTracker.lost_tracks");
                return tracks_array(t.trk.lost_tracks(camera));
            },
             "camera"_a, "the camera's tracks dropped in the last frame set");
}

}  // namespace kestrel::py
