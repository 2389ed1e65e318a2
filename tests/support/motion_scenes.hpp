// Generated moving-camera sequences with known answers, for the tracker's geometric check (tests/track/
// test_geometric_check*.cpp) and its evaluation (tools/eval_geometry): textured rectangles at several depths (a
// back wall, blocks, a floor) and textured cards that stand still, then move on their own from a given frame;
// the camera translates and turns by known steps. Every pixel is the mean of 2x2 samples of the nearest surface's
// continuous texture (plane_texture of stereo_scenes.hpp) where the sample's ray meets it, through the camera
// model (distortion included), so that the motion of every surface point is exact.
//
// TrackLabels gives each track its label at birth: the surface under it (static, or a moving object), "edge" when
// a surface boundary is within 3 px (neither static nor moving: excluded from the counts); and follows whether its
// true point stays visible.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "kestrel/camera_types.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/image.hpp"

namespace kestrel::test {

using MVec3 = std::array<double, 3>;
using MMat3 = std::array<double, 9>;  // row-major

/// A textured rectangle: origin + a * u + b * v, a in [0, size_u], b in [0, size_v] (world frame, metres).
struct SceneRect {
    MVec3 origin{{0, 0, 5}};
    MVec3 u{{1, 0, 0}}, v{{0, 1, 0}};
    double size_u = 1.0, size_v = 1.0;
    double texels_per_metre = 120.0;
    std::uint32_t seed = 1;
    int object = 0;  ///< 0: static; k > 0: moves with objects[k - 1]
};

/// An independently moving object: still until start_frame, then moving by `velocity` (world, metres) per frame.
struct MovingObject {
    int start_frame = 10;
    MVec3 velocity{{0, 0.02, 0}};
};

struct MotionScene {
    Camera camera{};
    int frames = 0;
    double fps = 20.0;
    std::vector<SceneRect> rects;
    std::vector<MovingObject> objects;
    MVec3 step{{0.025, 0.0, 0.01}};  ///< camera centre per frame (world)
    double yaw_deg = 0.15;           ///< camera turn per frame, about the world's y axis

    /// Camera-to-world rotation and centre of frame k: X_world = R_wc(k) X_cam + centre(k).
    MMat3 R_wc(int k) const;
    MVec3 centre(int k) const;
    /// Object `object`'s displacement at frame k (0 for static surfaces).
    MVec3 offset(int object, int k) const;
    /// The frame's image (grey, camera.width x camera.height).
    HostImage render(int k) const;
    /// The surface seen at pixel (x, y) of frame k (-1: none) and the hit point in that surface's own frame
    /// (world point minus the object's offset at k).
    int cast(int k, double x, double y, MVec3* local) const;
    /// The pixel of local point `local` of surface `rect` at frame k (NaN when behind the camera or unprojectable).
    Point2d project_point(int k, int rect, const MVec3& local) const;
    /// The relative pose of frame k from frame k - 1: X_k = R X_{k-1} + t (t not normalized).
    void relative_pose(int k, MMat3* R, MVec3* t) const;

    mutable std::vector<double> rays_;  // cached unit rays of the 2x2 samples of every pixel (camera frame)
};

/// The layout of the evaluation: a 752x480 camera (EuRoC cam0's radial-tangential calibration), a back wall
/// at 9 m, two blocks at 5 and 3.5 m, a floor, three cards at 2.6..4.2 m that start moving at frames 8, 18, 28
/// across the camera's epipolar lines, `frames` frames.
MotionScene motion_scene_euroc(int frames = 40);
/// The same layout seen by a 376x240 pinhole camera over 20 frames, faster (camera and cards), larger cards
/// starting at 6 and 12 (the tests).
MotionScene motion_scene_small();
/// The small sequence with slow cards (about 0.6 px per frame across the epipolar lines: below a 1 px threshold on
/// any one frame pair), starting at frames 6 and 10.
MotionScene motion_scene_small_slow();
/// The euroc layout with slow cards: 0.6 to 0.9 px per frame across the epipolar lines (below a 1 px threshold
/// on any one frame pair).
MotionScene motion_scene_slow(int frames = 60);
/// The euroc layout seen by a camera moving forward (2.5 cm per frame, 0.1 degrees of yaw): the epipole lies on the
/// middle card; the cards move 0.6 to 1.2 px per frame.
MotionScene motion_scene_epipole(int frames = 60);
/// The euroc layout under a fast turn: 3 degrees of yaw per frame (about 24 px of image motion), 1 cm sideways
/// (14 frames keep the back wall in view).
MotionScene motion_scene_fast_turn(int frames = 14);

struct LabelSummary {
    int static_tracks = 0;    ///< tracks born on a static surface (not at an edge) that were checked at least once
    int static_outliers = 0;  ///< of those, ended as Outlier while their true point was visible
    int static_outliers_drifted = 0;  ///< of those, ended more than 1 px from the truth (a right rejection)
    int moving_tracks = 0;    ///< tracks born on a card (not at an edge) alive when it started to move, visible 3 frames on
    int moving_still_tracked_after_3 = 0;  ///< of those, still live (Tracked) 3 frames after the start
    int moving_still_drifted = 0;  ///< of those, more than 1 px from the card point they were born on (LK left it)
    int moving_outliers = 0;  ///< tracks born on a card ended as Outlier (any time after the card moved)
    int edge_tracks = 0;      ///< born within 3 px of a surface boundary (excluded)
};

/// Follows a tracker's output frame by frame: update(k, live, lost) after frame k.
class TrackLabels {
public:
    explicit TrackLabels(const MotionScene& scene) : scene_(&scene) {}
    void update(int k, const std::vector<Track>& live, const std::vector<Track>& lost);
    /// The same with an external rejection: `rejected` ids end as Outlier at frame k (the OpenCV baseline).
    void update_ids(int k, const std::vector<Track>& live, const std::vector<Track>& lost_ok,
                    const std::vector<Track>& rejected);
    LabelSummary summary() const;

    struct Info {
        int rect = -1;
        MVec3 local{};
        int born = 0;
        bool edge = false, moving = false, occluded = false, checked = false;
        int move_start = -1;     // first frame, after birth, in which its card moved
        int ended = -1;          // frame it ended
        bool outlier = false;    // ended as Outlier
        bool occluded_at_end = false;
        bool alive_after_3 = false;  // live at move_start + 3
        bool excluded = false;       // its true point was hidden by move_start + 3
        double end_error = 0;        // px from the truth where it ended
        double error_after_3 = 0;    // px from the truth at move_start + 3 (when alive then)
    };
    const std::map<std::uint64_t, Info>& tracks() const { return info_; }

private:
    void see(int k, std::uint64_t id, float x, float y);
    void end(int k, const Track& t, bool outlier);
    const MotionScene* scene_;
    std::map<std::uint64_t, Info> info_;
    int last_frame_ = -1;
};

}  // namespace kestrel::test
