"""
Kestrel: GPU feature detection and tracking for visual-inertial odometry (compiled core; import kestrel).
"""

from collections.abc import Sequence
import enum

import numpy.dtypes

from typing import Any, Union
import numpy
import numpy.typing

#: A 2-D uint8 image: a NumPy array (any strides) or a CUDA array with __dlpack__ (CuPy, PyTorch).
ImageLike = Any
#: A CUDA stream: an int handle (0 = the legacy default stream), torch.cuda.Stream or cupy.cuda.Stream.
StreamLike = Union[int, Any]
#: Structured NumPy arrays (dtypes KEYPOINT_DTYPE, TRACK_DTYPE, MATCH_DTYPE) and plain ones.
NDArray = numpy.ndarray

class Error(RuntimeError):
    """Base of every exception Kestrel raises."""

class InvalidArgument(Error, ValueError):
    """A parameter is outside its documented bounds; the message names the parameter and the bound."""
    parameter: str

class StateError(Error):
    """The object cannot perform the call in its present state."""

class CudaError(Error):
    """A CUDA runtime call or kernel launch failed."""
    code: int
    call: str
    stage: str

class NoDeviceError(Error):
    """No usable CUDA device (or a build without the CUDA backend)."""



class Backend(enum.Enum):
    """
    Which implementation runs: the CUDA kernels or the CPU reference (identical results).
    """

    Cuda = 0

    Cpu = 1

def cuda_available() -> bool:
    """
    True when a CUDA device is present and usable by this process (never raises); always False in a build without the CUDA backend.
    """

def built_with_cuda() -> bool:
    """True when this build has the CUDA backend."""

def default_backend() -> Backend:
    """
    Backend.Cuda when a CUDA device is usable (and the build has the CUDA backend), else Backend.Cpu.
    """

MAX_IMAGE_SIDE: int = 16383

KEYPOINT_DTYPE: numpy.dtypes.VoidDType = ...

class ScoreType(enum.Enum):
    """FAST corner score (docs/detector.md)."""

    SadCircle = 0
    """sum of |p_i - c| over the 16 circle pixels"""

    SadArc = 1
    """sum of (|p_i - c| - t) over the corner's arc"""

    MaxThreshold = 2
    """largest threshold at which the pixel is still a corner"""

    Harris = 3
    """Harris, k = 0.04, Sobel 3x3 over a 7x7 window"""

class SelectionPolicy(enum.Enum):
    """How keypoints are selected from the levels' scores."""

    Grid = 0
    """best per_cell per level-0 grid cell over all levels"""

    PyCA = 1
    """pyramidal culling and aggregation"""

    OrbSlam = 2
    """
    ORB-SLAM's extractor: per-level budget, FAST per cell with a fallback threshold, quadtree
    """

    LevelHarris = 3
    """
    cv::ORB's ranking: per-level budget, each level's FAST corners ranked by Harris response
    """

class PyramidConfig:
    """Image pyramid: number of levels and the factor between them."""

    def __init__(self, *, levels: int = 1, scale: float = 2.0) -> None: ...

    @property
    def levels(self) -> int:
        """number of levels, 1..8 (level 0 is the input)"""

    @levels.setter
    def levels(self, arg: int, /) -> None: ...

    @property
    def scale(self) -> float:
        """factor between levels, in (1, 2]; 2 = 2x2 average, else bilinear"""

    @scale.setter
    def scale(self, arg: float, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class FastConfig:
    """FAST: threshold, arc bounds and score."""

    def __init__(self, *, threshold: int = 10, arc_min: int = 9, arc_max: int = 16, score: ScoreType = ScoreType.SadCircle) -> None: ...

    @property
    def threshold(self) -> int:
        """t in [0, 254]: bright p > c + t, dark p < c - t"""

    @threshold.setter
    def threshold(self, arg: int, /) -> None: ...

    @property
    def arc_min(self) -> int:
        """shortest accepted arc, [1, 16]"""

    @arc_min.setter
    def arc_min(self, arg: int, /) -> None: ...

    @property
    def arc_max(self) -> int:
        """longest accepted arc, [arc_min, 16]"""

    @arc_max.setter
    def arc_max(self, arg: int, /) -> None: ...

    @property
    def score(self) -> ScoreType:
        """the corner score"""

    @score.setter
    def score(self, arg: ScoreType, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class PycaConfig:
    """PyCA's culling cells per level and aggregation window."""

    def __init__(self, *, cell: Sequence[int] = [32, 32, 32, 32, 32, 32, 32, 32], q: int = 3) -> None: ...

    @property
    def cell(self) -> list[int]:
        """culling cell side of each level (8 values), a power of two in [8, 128]"""

    @cell.setter
    def cell(self, arg: Sequence[int], /) -> None: ...

    @property
    def q(self) -> int:
        """the aggregation's q x q NMS window, odd, in [1, 9]"""

    @q.setter
    def q(self, arg: int, /) -> None: ...

class OrbSlamConfig:
    """
    The per-level policies' thresholds, cells and border (level pixels; selection OrbSlam or LevelHarris).
    """

    def __init__(self, *, threshold_initial: int = 20, threshold_min: int = 7, cell: int = 30, border: int = 19) -> None: ...

    @property
    def threshold_initial(self) -> int:
        """FAST threshold of every cell, [1, 254]"""

    @threshold_initial.setter
    def threshold_initial(self, arg: int, /) -> None: ...

    @property
    def threshold_min(self) -> int:
        """
        threshold of a cell where the first found no corner, [1, 254] (OrbSlam)
        """

    @threshold_min.setter
    def threshold_min(self, arg: int, /) -> None: ...

    @property
    def cell(self) -> int:
        """cell side on every level, [16, 256]"""

    @cell.setter
    def cell(self, arg: int, /) -> None: ...

    @property
    def border(self) -> int:
        """margin of every level where nothing is detected, [4, 64]"""

    @border.setter
    def border(self, arg: int, /) -> None: ...

class DetectorConfig:
    """
    FeatureDetector's settings (docs/detector.md). Keyword arguments, validated on construction (InvalidArgument names the parameter and the bound).
    """

    def __init__(self, *, pyramid: PyramidConfig | None = None, fast: FastConfig | None = None, nms_radius: int = 1, cell_width: int = 32, cell_height: int = 32, per_cell: int = 1, max_features: int = 0, border: int = 0, cuda_graph: bool = True, selection: SelectionPolicy = SelectionPolicy.Grid, pyca: PycaConfig | None = None, orbslam: OrbSlamConfig | None = None, orb_descriptors: bool = False, threads: int = 0) -> None:
        """
        pyramid: default PyramidConfig(levels=2, scale=2.0); fast: default FastConfig(threshold=10, arc_min=9, arc_max=16, score=ScoreType.MaxThreshold); pyca: default PycaConfig(); orbslam: default OrbSlamConfig().
        """

    @property
    def pyramid(self) -> PyramidConfig:
        """levels and factor"""

    @pyramid.setter
    def pyramid(self, arg: PyramidConfig, /) -> None: ...

    @property
    def fast(self) -> FastConfig:
        """threshold, arc bounds, score"""

    @fast.setter
    def fast(self, arg: FastConfig, /) -> None: ...

    @property
    def nms_radius(self) -> int:
        """n in [1, 4]: a maximum of its (2n+1)^2 neighbourhood"""

    @nms_radius.setter
    def nms_radius(self, arg: int, /) -> None: ...

    @property
    def cell_width(self) -> int:
        """level-0 pixels, a multiple of 32 in [32, 1024]"""

    @cell_width.setter
    def cell_width(self, arg: int, /) -> None: ...

    @property
    def cell_height(self) -> int:
        """level-0 pixels, in [8, 1024]"""

    @cell_height.setter
    def cell_height(self, arg: int, /) -> None: ...

    @property
    def per_cell(self) -> int:
        """K in [1, 8]: best K per cell over all levels"""

    @per_cell.setter
    def per_cell(self, arg: int, /) -> None: ...

    @property
    def max_features(self) -> int:
        """0 = no cap; else keep the best max_features"""

    @max_features.setter
    def max_features(self, arg: int, /) -> None: ...

    @property
    def border(self) -> int:
        """extra level-0 margin in [0, 64] where nothing is detected"""

    @border.setter
    def border(self, arg: int, /) -> None: ...

    @property
    def cuda_graph(self) -> bool:
        """CUDA backend: replay the frame as one CUDA graph"""

    @cuda_graph.setter
    def cuda_graph(self, arg: bool, /) -> None: ...

    @property
    def selection(self) -> SelectionPolicy:
        """
        SelectionPolicy.Grid, PyCA, OrbSlam or LevelHarris (the last two: max_features > 0 is the budget)
        """

    @selection.setter
    def selection(self, arg: SelectionPolicy, /) -> None: ...

    @property
    def pyca(self) -> PycaConfig:
        """PyCA's cells and q (selection == PyCA)"""

    @pyca.setter
    def pyca(self, arg: PycaConfig, /) -> None: ...

    @property
    def orbslam(self) -> OrbSlamConfig:
        """thresholds, cells and border (selection OrbSlam or LevelHarris)"""

    @orbslam.setter
    def orbslam(self, arg: OrbSlamConfig, /) -> None: ...

    @property
    def orb_descriptors(self) -> bool:
        """also compute each keypoint's ORB angle and 256-bit descriptor"""

    @orb_descriptors.setter
    def orb_descriptors(self, arg: bool, /) -> None: ...

    @property
    def threads(self) -> int:
        """CPU backend: threads of the detector's pool, [0, 256]; 0 = all"""

    @threads.setter
    def threads(self, arg: int, /) -> None: ...

    def validate(self) -> None:
        """
        Raises InvalidArgument (naming the parameter and the bound) unless valid.
        """

class FeatureDetector:
    """Image in, a well-distributed set of keypoints out (docs/detector.md)."""

    def __init__(self, config: DetectorConfig | None = None, backend: Backend | None = None) -> None:
        """
        config: DetectorConfig (default: DetectorConfig()); backend: Backend, default default_backend(). Backend.Cuda raises NoDeviceError without a usable device.
        """

    @property
    def config(self) -> DetectorConfig:
        """a copy of the settings"""

    @property
    def backend(self) -> Backend: ...

    def detect(self, image: ImageLike, *, stream: StreamLike | None = None) -> NDArray:
        """
        Detects keypoints in `image`, a 2-D uint8 array: a NumPy array (any strides) or a CUDA array (CuPy, PyTorch; DLPack) used in place, without a host copy (CUDA backend). Returns a structured array (x, y, level, score) in cell order. `stream`: CUDA arrays only, the stream the work is enqueued on (int handle or a torch/cupy stream; default the legacy default stream); the call returns once that stream has completed the detection. The GIL is released during the work.
        """

    @property
    def angles(self) -> NDArray | None:
        """
        With orb_descriptors: the ORB angle (degrees, [0, 360]) of each keypoint of the last detect(), float32 (N,); else None.
        """

    @property
    def descriptors(self) -> NDArray | None:
        """
        With orb_descriptors: the 256-bit ORB descriptors of the last detect(), uint8 (N, 32) (bit i is bit i % 8 of byte i / 8, cv::ORB's layout); else None.
        """

    @property
    def capacity(self) -> int: ...

    @property
    def uses_cuda_graph(self) -> bool: ...

def detect_cpu(image: ImageLike, config: DetectorConfig | None = None) -> NDArray:
    """
    The CPU reference of the whole detector (the definition the CUDA backend matches exactly).
    """

TRACK_DTYPE: numpy.dtypes.VoidDType = ...

class LkMode(enum.Enum):
    """Which parameters LK estimates besides the translation."""

    Translation = 0

    TranslationOffset = 1

    TranslationGain = 2

    TranslationGainOffset = 3

class TemplateSource(enum.Enum):
    """Where a feature's template comes from."""

    PreviousFrame = 0

    FirstFrame = 1

class TrackStatus(enum.IntEnum):
    """
    Outcome of tracking one feature (an IntEnum: compare it with the `status` field).
    """

    Tracked = 0

    LostOutOfBounds = 1

    LostResidual = 2

    LostSingular = 3

    NotConverged = 4

    LostForwardBackward = 5

    LostAnchor = 6

    Outlier = 7

class LkConfig:
    """Pyramidal Lucas-Kanade settings (docs/tracker.md)."""

    def __init__(self, *, pyramid: PyramidConfig | None = None, mode: LkMode = LkMode.TranslationGainOffset, template_source: TemplateSource = TemplateSource.PreviousFrame, patch_size: int = 16, coarse_patch_size: int = 8, coarse_from_level: int = 3, max_iterations: int = 10, min_update: float = 0.009999999776482582, max_residual: float = 30.0, min_eigenvalue: float = 0.10000000149011612, coarse_max_iterations: int = 4) -> None:
        """pyramid: default PyramidConfig(levels=3, scale=2.0)."""

    @property
    def pyramid(self) -> PyramidConfig:
        """tracking pyramid (level 0 = frame)"""

    @pyramid.setter
    def pyramid(self, arg: PyramidConfig, /) -> None: ...

    @property
    def mode(self) -> LkMode: ...

    @mode.setter
    def mode(self, arg: LkMode, /) -> None: ...

    @property
    def template_source(self) -> TemplateSource: ...

    @template_source.setter
    def template_source(self, arg: TemplateSource, /) -> None: ...

    @property
    def patch_size(self) -> int:
        """patch side on levels < coarse_from_level, [4, 16]"""

    @patch_size.setter
    def patch_size(self, arg: int, /) -> None: ...

    @property
    def coarse_patch_size(self) -> int:
        """patch side on the other levels, [4, 16]"""

    @coarse_patch_size.setter
    def coarse_patch_size(self, arg: int, /) -> None: ...

    @property
    def coarse_from_level(self) -> int:
        """first level using coarse_patch_size, [1, 8]"""

    @coarse_from_level.setter
    def coarse_from_level(self, arg: int, /) -> None: ...

    @property
    def max_iterations(self) -> int:
        """Gauss-Newton iterations per level, [1, 100]"""

    @max_iterations.setter
    def max_iterations(self, arg: int, /) -> None: ...

    @property
    def min_update(self) -> float:
        """stop when |dt| (level pixels) < min_update, (0, 1]"""

    @min_update.setter
    def min_update(self, arg: float, /) -> None: ...

    @property
    def max_residual(self) -> float:
        """LostResidual above this mean |residual|, (0, 255]"""

    @max_residual.setter
    def max_residual(self, arg: float, /) -> None: ...

    @property
    def min_eigenvalue(self) -> float:
        """LostSingular below this eigenvalue, [0, 1e6]"""

    @min_eigenvalue.setter
    def min_eigenvalue(self, arg: float, /) -> None: ...

    @property
    def coarse_max_iterations(self) -> int:
        """at most this many of max_iterations on every level but 0, [1, 100]"""

    @coarse_max_iterations.setter
    def coarse_max_iterations(self, arg: int, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class AnchorConfig:
    """Refinement of every track against its first observation."""

    def __init__(self, *, enabled: bool = True, reanchor: bool = True, max_iterations: int = 5, max_residual: float = 20.0, max_distance: float = 0.5, interval: int = 1) -> None: ...

    @property
    def enabled(self) -> bool: ...

    @enabled.setter
    def enabled(self, arg: bool, /) -> None: ...

    @property
    def reanchor(self) -> bool:
        """on a failed fit: re-anchor (True) or lose the track"""

    @reanchor.setter
    def reanchor(self, arg: bool, /) -> None: ...

    @property
    def max_iterations(self) -> int:
        """[1, 100]"""

    @max_iterations.setter
    def max_iterations(self, arg: int, /) -> None: ...

    @property
    def max_residual(self) -> float:
        """(0, 255] grey levels"""

    @max_residual.setter
    def max_residual(self, arg: float, /) -> None: ...

    @property
    def max_distance(self) -> float:
        """(0, 100] level-0 px from the frame-to-frame estimate"""

    @max_distance.setter
    def max_distance(self, arg: float, /) -> None: ...

    @property
    def interval(self) -> int:
        """
        frames between a track's scheduled fits, [1, 64] (1: every frame; see docs/tracker.md)
        """

    @interval.setter
    def interval(self, arg: int, /) -> None: ...

class MotionConfig:
    """
    Where LK starts each track (constant velocity) and how many levels it searches.
    """

    def __init__(self, *, constant_velocity: bool = True, fewer_levels: bool = True, level_reach: float = 4.0) -> None: ...

    @property
    def constant_velocity(self) -> bool:
        """start from the track's last displacement (False: from its position)"""

    @constant_velocity.setter
    def constant_velocity(self, arg: bool, /) -> None: ...

    @property
    def fewer_levels(self) -> bool:
        """
        a track with a predicted start searches only the levels its displacement needs
        """

    @fewer_levels.setter
    def fewer_levels(self, arg: bool, /) -> None: ...

    @property
    def level_reach(self) -> float:
        """level-0 px per unit of level scale, (0, 1000]"""

    @level_reach.setter
    def level_reach(self, arg: float, /) -> None: ...

class CheckModel(enum.Enum):
    """The motion model that decided a frame's geometric check."""

    Essential = 1

    TwoPoint = 2

    RotationOnly = 3

class GeometricCheckConfig:
    """
    The tracker's geometric check (docs/tracker.md, 'Geometric check'): tracks that disagree with the frame's relative pose end as TrackStatus.Outlier.
    """

    def __init__(self, *, enabled: bool = False, camera: Camera | None = None, threshold_px: float = 1.0, confidence: float = 0.999, max_hypotheses: int = 512, min_tracks: int = 12, seed: int = 0, baseline_frames: int = 3) -> None:
        """camera: the frames' Camera (needed when enabled)."""

    @property
    def enabled(self) -> bool: ...

    @enabled.setter
    def enabled(self, arg: bool, /) -> None: ...

    @property
    def camera(self) -> Camera:
        """the frames' camera"""

    @camera.setter
    def camera(self, arg: Camera, /) -> None: ...

    @property
    def threshold_px(self) -> float:
        """inlier threshold, (0, 100] px"""

    @threshold_px.setter
    def threshold_px(self, arg: float, /) -> None: ...

    @property
    def confidence(self) -> float:
        """RANSAC's adaptive stop, [0.5, 1)"""

    @confidence.setter
    def confidence(self, arg: float, /) -> None: ...

    @property
    def max_hypotheses(self) -> int:
        """[1, 1 << 20]"""

    @max_hypotheses.setter
    def max_hypotheses(self, arg: int, /) -> None: ...

    @property
    def min_tracks(self) -> int:
        """fewer checkable tracks end nothing, [8, 65536]"""

    @min_tracks.setter
    def min_tracks(self, arg: int, /) -> None: ...

    @property
    def seed(self) -> int: ...

    @seed.setter
    def seed(self, arg: int, /) -> None: ...

    @property
    def baseline_frames(self) -> int:
        """the second test's baseline in frames, [1, 16] (1: the frame pair alone)"""

    @baseline_frames.setter
    def baseline_frames(self, arg: int, /) -> None: ...

class GeometricCheckResult:
    """The last frame's geometric check."""

    @property
    def model(self) -> CheckModel:
        """the model that decided (CheckModel.None_: nothing ended)"""

    @property
    def pose_status(self) -> PoseStatus: ...

    @property
    def R(self) -> list[float]:
        """X_cur = R X_prev + t, row-major (9 numbers)"""

    @property
    def t(self) -> list[float]:
        """unit translation (zero for RotationOnly and None_)"""

    @property
    def checked(self) -> int: ...

    @property
    def inliers(self) -> int: ...

    @property
    def outliers(self) -> int: ...

    @property
    def hypotheses(self) -> int: ...

class TrackerConfig:
    """
    FeatureTracker's settings (docs/tracker.md). Keyword arguments, validated on construction (InvalidArgument names the parameter and the bound).
    """

    def __init__(self, *, lk: LkConfig | None = None, detector: DetectorConfig | None = None, target_features: int = 200, redetect_fraction: float = 0.30000001192092896, forward_backward: bool = False, fb_max_error: float = 0.5, anchor: AnchorConfig | None = None, motion: MotionConfig | None = None, threads: int = 0, geometric_check: GeometricCheckConfig | None = None) -> None:
        """
        lk: default LkConfig(); detector: default tracking_detector_config() (DetectorConfig with border=20); anchor: default AnchorConfig(); motion: default MotionConfig(); geometric_check: default GeometricCheckConfig() (off).
        """

    @property
    def lk(self) -> LkConfig:
        """tracking settings"""

    @lk.setter
    def lk(self, arg: LkConfig, /) -> None: ...

    @property
    def detector(self) -> DetectorConfig:
        """re-detection settings"""

    @detector.setter
    def detector(self, arg: DetectorConfig, /) -> None: ...

    @property
    def target_features(self) -> int:
        """wanted live tracks, [1, 65536]"""

    @target_features.setter
    def target_features(self, arg: int, /) -> None: ...

    @property
    def redetect_fraction(self) -> float:
        """re-detect when live < fraction * target"""

    @redetect_fraction.setter
    def redetect_fraction(self, arg: float, /) -> None: ...

    @property
    def forward_backward(self) -> bool:
        """drop round trips that miss"""

    @forward_backward.setter
    def forward_backward(self, arg: bool, /) -> None: ...

    @property
    def fb_max_error(self) -> float:
        """largest accepted round-trip error, (0, 100] px"""

    @fb_max_error.setter
    def fb_max_error(self, arg: float, /) -> None: ...

    @property
    def anchor(self) -> AnchorConfig:
        """refinement against each track's first observation"""

    @anchor.setter
    def anchor(self, arg: AnchorConfig, /) -> None: ...

    @property
    def motion(self) -> MotionConfig:
        """the tracks' start (constant velocity) and the levels searched"""

    @motion.setter
    def motion(self, arg: MotionConfig, /) -> None: ...

    @property
    def threads(self) -> int:
        """CPU backend: threads of the tracker's pool, [0, 256]; 0 = all"""

    @threads.setter
    def threads(self, arg: int, /) -> None: ...

    @property
    def geometric_check(self) -> GeometricCheckConfig:
        """tracks against one relative pose per frame"""

    @geometric_check.setter
    def geometric_check(self, arg: GeometricCheckConfig, /) -> None: ...

    def validate(self) -> None:
        """
        Raises InvalidArgument (naming the parameter and the bound) unless valid.
        """

def tracking_detector_config() -> DetectorConfig:
    """The detector settings FeatureTracker re-detects with by default."""

class FeatureTracker:
    """
    Frames in, tracks with stable ids out (docs/tracker.md). Every frame must be width x height.
    """

    def __init__(self, width: int, height: int, config: TrackerConfig | None = None, backend: Backend | None = None) -> None:
        """
        config: TrackerConfig (default TrackerConfig()); backend: Backend, default default_backend().
        """

    @property
    def config(self) -> TrackerConfig:
        """a copy of the settings"""

    @property
    def backend(self) -> Backend: ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    def track(self, frame: ImageLike, predictions: numpy.typing.ArrayLike | None = None, *, stream: StreamLike | None = None, rotation_prior: numpy.typing.ArrayLike | None = None) -> NDArray:
        """
        Tracks one frame, a 2-D uint8 array of width x height: NumPy (any strides) or a CUDA array (CuPy, PyTorch; DLPack) used in place (CUDA backend). `predictions`: optional (N, 2) initial guesses (x, y) for the N tracks returned by the previous call, in their order. `stream`: CUDA arrays only, the stream the work is enqueued on (default the legacy default stream); the call returns when the frame is done. Returns the live tracks as a structured array (id, x, y, prev_x, prev_y, age, status, gain, offset, residual, score, level). `rotation_prior`: optional 3x3 rotation (X_cur = R X_prev + t, e.g. the integrated gyro) for the geometric check (config.geometric_check), which then estimates the translation alone. The GIL is released during the work.
        """

    @property
    def geometric_check(self) -> GeometricCheckResult:
        """the last frame's geometric check (GeometricCheckResult)"""

    @property
    def tracks(self) -> NDArray:
        """live tracks after the last frame (structured array)"""

    @property
    def lost_tracks(self) -> NDArray:
        """tracks dropped in the last frame, with their status (structured array)"""

    @property
    def frame_count(self) -> int:
        """frames finished so far"""

    @property
    def redetected(self) -> bool:
        """whether the last frame ran the detector"""

    def reset(self) -> None:
        """
        Forgets every track; the next frame starts like the first (ids keep increasing).
        """

class CameraConfig:
    """
    One camera of a MultiCameraTracker: its frame size and tracker settings.
    """

    def __init__(self, *, width: int, height: int, tracker: TrackerConfig | None = None) -> None: ...

    @property
    def width(self) -> int: ...

    @width.setter
    def width(self, arg: int, /) -> None: ...

    @property
    def height(self) -> int: ...

    @height.setter
    def height(self, arg: int, /) -> None: ...

    @property
    def tracker(self) -> TrackerConfig: ...

    @tracker.setter
    def tracker(self, arg: TrackerConfig, /) -> None: ...

class MultiCameraTracker:
    """
    Several cameras tracked in one submission per frame set (docs/tracker.md); each camera's results equal a FeatureTracker's on the same frames.
    """

    def __init__(self, cameras: Sequence[CameraConfig], backend: Backend | None = None) -> None:
        """cameras: a list of CameraConfig (at most 32)."""

    @property
    def size(self) -> int:
        """number of cameras"""

    def __len__(self) -> int: ...

    @property
    def backend(self) -> Backend: ...

    def track(self, frames: Sequence[ImageLike], *, stream: StreamLike | None = None) -> list[NDArray]:
        """
        Tracks one frame per camera (a list of 2-D uint8 arrays, all NumPy or all CUDA arrays); returns a list of structured arrays of live tracks, one per camera. The GIL is released during the work.
        """

    def tracks(self, camera: int) -> NDArray:
        """the camera's live tracks after the last frame set"""

    def lost_tracks(self, camera: int) -> NDArray:
        """the camera's tracks dropped in the last frame set"""

MATCH_DTYPE: numpy.dtypes.VoidDType = ...

ORB_DESCRIPTOR_BYTES: int = 32

class MatcherConfig:
    """Brute-force Hamming matching settings (docs/features.md)."""

    def __init__(self, *, ratio: float = 0.800000011920929, cross_check: bool = False, radius: float = 0.0, epipolar_band: float = -1.0, max_distance: int = 256) -> None: ...

    @property
    def ratio(self) -> float:
        """ratio test d1 < ratio * d2, in (0, 1]; 1 disables it"""

    @ratio.setter
    def ratio(self, arg: float, /) -> None: ...

    @property
    def cross_check(self) -> bool:
        """keep mutual best matches only"""

    @cross_check.setter
    def cross_check(self, arg: bool, /) -> None: ...

    @property
    def radius(self) -> float:
        """> 0: train points within this distance of the query position"""

    @radius.setter
    def radius(self, arg: float, /) -> None: ...

    @property
    def epipolar_band(self) -> float:
        """>= 0: train points within this many rows"""

    @epipolar_band.setter
    def epipolar_band(self, arg: float, /) -> None: ...

    @property
    def max_distance(self) -> int:
        """largest kept distance, [0, 256]"""

    @max_distance.setter
    def max_distance(self, arg: int, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

def match_cpu(query: numpy.typing.ArrayLike, train: numpy.typing.ArrayLike, config: MatcherConfig | None = None, query_pos: numpy.typing.ArrayLike | None = None, train_pos: numpy.typing.ArrayLike | None = None) -> NDArray:
    """
    CPU reference of the matcher: one match (train, distance, second) per query; train = -1 when rejected. Positions (N, 2) are needed when config.radius > 0 or config.epipolar_band >= 0.
    """

class HammingMatcher:
    """Brute-force Hamming matcher (both backends, same matches)."""

    def __init__(self, config: MatcherConfig | None = None, capacity: int = 4096, backend: Backend | None = None) -> None:
        """capacity: most query and most train descriptors per call."""

    @property
    def config(self) -> MatcherConfig: ...

    @property
    def backend(self) -> Backend: ...

    @property
    def capacity(self) -> int: ...

    def match(self, query: numpy.typing.ArrayLike, train: numpy.typing.ArrayLike, query_pos: numpy.typing.ArrayLike | None = None, train_pos: numpy.typing.ArrayLike | None = None) -> NDArray:
        """One match (train, distance, second) per query, as match_cpu()."""

class CameraModel(enum.Enum):
    """Projection model of a Camera (docs/geometry.md)."""

    Pinhole = 0

    PinholeRadtan = 1

    Fisheye = 2

class UnprojectStatus(enum.IntEnum):
    """What became of one point's unprojection."""

    Ok = 0

    NonFinite = 1

    OutsideModel = 2

    NotConverged = 3

class Camera:
    """
    A calibrated camera: u = fx * xd + cx, v = fy * yd + cy with (xd, yd) the distorted normalized point. Validated on construction.
    """

    def __init__(self, *, model: CameraModel = CameraModel.Pinhole, width: int, height: int, fx: float, fy: float, cx: float, cy: float, d: Sequence[float] = [0.0, 0.0, 0.0, 0.0, 0.0]) -> None:
        """
        d: PinholeRadtan (k1, k2, p1, p2, k3); Fisheye (k1, k2, k3, k4, 0); Pinhole all zero.
        """

    @property
    def model(self) -> CameraModel: ...

    @model.setter
    def model(self, arg: CameraModel, /) -> None: ...

    @property
    def width(self) -> int: ...

    @width.setter
    def width(self, arg: int, /) -> None: ...

    @property
    def height(self) -> int: ...

    @height.setter
    def height(self, arg: int, /) -> None: ...

    @property
    def fx(self) -> float: ...

    @fx.setter
    def fx(self, arg: float, /) -> None: ...

    @property
    def fy(self) -> float: ...

    @fy.setter
    def fy(self, arg: float, /) -> None: ...

    @property
    def cx(self) -> float: ...

    @cx.setter
    def cx(self, arg: float, /) -> None: ...

    @property
    def cy(self) -> float: ...

    @cy.setter
    def cy(self, arg: float, /) -> None: ...

    @property
    def d(self) -> list[float]:
        """the 5 distortion coefficients"""

    @d.setter
    def d(self, arg: Sequence[float], /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class UndistortConfig:
    """Settings of the iterative undistortion."""

    def __init__(self, *, max_iterations: int = 20, tolerance: float = 1e-12) -> None: ...

    @property
    def max_iterations(self) -> int:
        """[1, 100]"""

    @max_iterations.setter
    def max_iterations(self, arg: int, /) -> None: ...

    @property
    def tolerance(self) -> float:
        """[1e-15, 1e-3] normalized units"""

    @tolerance.setter
    def tolerance(self, arg: float, /) -> None: ...

def project(camera: Camera, points: numpy.typing.ArrayLike) -> NDArray:
    """
    Pixels (N, 2) of normalized points (N, 2) = (X/Z, Y/Z), float64 (NaN in, NaN out).
    """

def unproject(camera: Camera, pixels: numpy.typing.ArrayLike, config: UndistortConfig | None = None) -> tuple[NDArray, NDArray]:
    """
    Normalized points of pixels (N, 2) (taken as float32, as keypoints are): returns (normalized (N, 2) float64, status (N,) uint8 of UnprojectStatus); coordinates are NaN unless the status is Ok.
    """

def unproject_bearing(camera: Camera, pixels: numpy.typing.ArrayLike, config: UndistortConfig | None = None) -> tuple[NDArray, NDArray]:
    """
    Unit bearing vectors (N, 3) of pixels (N, 2) and their statuses (N,) int32 (UnprojectStatus values): any direction the model sees, a fisheye's beyond 90 degrees off the axis too (z < 0). NaN rows unless Ok.
    """

def pixels_per_radian(camera: Camera, bearings: numpy.typing.ArrayLike) -> NDArray:
    """
    Pixels per radian (N,) of a bearing's motion at each direction (N, 3) in this camera: threshold_px divided by it is the point's angular threshold (RelativePoseEstimator.estimate_bearings). NaN where the model has no image of the direction.
    """

class PoseMethod(enum.Enum):
    """Which minimal solver RANSAC samples with."""

    FivePoint = 0

    TwoPointWithRotation = 1

class PoseStatus(enum.Enum):
    """What an estimate ended with; only Ok carries a model."""

    Ok = 0

    TooFewPoints = 1

    NoModel = 2

    Degenerate = 3

class RelativePoseConfig:
    """RANSAC settings of the relative pose (docs/geometry.md)."""

    def __init__(self, *, focal_px: float = 500.0, threshold_px: float = 1.0, confidence: float = 0.999, max_hypotheses: int = 4096, batch: int = 1, seed: int = 0, method: PoseMethod = PoseMethod.FivePoint, refine: bool = True, min_inliers: int = 8) -> None: ...

    @property
    def focal_px(self) -> float:
        """pixels per normalized unit, (0, 1e6]"""

    @focal_px.setter
    def focal_px(self, arg: float, /) -> None: ...

    @property
    def threshold_px(self) -> float:
        """inlier threshold on the Sampson error, px"""

    @threshold_px.setter
    def threshold_px(self, arg: float, /) -> None: ...

    @property
    def confidence(self) -> float:
        """adaptive stop, [0.5, 1)"""

    @confidence.setter
    def confidence(self, arg: float, /) -> None: ...

    @property
    def max_hypotheses(self) -> int:
        """minimal samples drawn at most"""

    @max_hypotheses.setter
    def max_hypotheses(self, arg: int, /) -> None: ...

    @property
    def batch(self) -> int:
        """CPU backend: hypotheses scored per round"""

    @batch.setter
    def batch(self, arg: int, /) -> None: ...

    @property
    def seed(self) -> int:
        """the generator's seed: same input + seed -> same result"""

    @seed.setter
    def seed(self, arg: int, /) -> None: ...

    @property
    def method(self) -> PoseMethod: ...

    @method.setter
    def method(self, arg: PoseMethod, /) -> None: ...

    @property
    def refine(self) -> bool:
        """Gauss-Newton on the Sampson error over the inliers"""

    @refine.setter
    def refine(self, arg: bool, /) -> None: ...

    @property
    def min_inliers(self) -> int:
        """fewer inliers -> NoModel"""

    @min_inliers.setter
    def min_inliers(self, arg: int, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class RelativePoseResult:
    """The estimate: status, E, R, t (X2 = R X1 + t, |t| = 1)."""

    @property
    def status(self) -> PoseStatus: ...

    @property
    def E(self) -> NDArray:
        """3x3 essential matrix"""

    @property
    def R(self) -> NDArray:
        """3x3 rotation"""

    @property
    def t(self) -> NDArray:
        """unit translation"""

    @property
    def inliers(self) -> int: ...

    @property
    def cheirality_inliers(self) -> int: ...

    @property
    def hypotheses(self) -> int: ...

    @property
    def best_hypothesis(self) -> int: ...

    @property
    def cost(self) -> float: ...

class RelativePoseEstimator:
    """
    Relative pose of two calibrated views: RANSAC over the five-point solver (or two points with a rotation prior), refinement, cheirality.
    """

    def __init__(self, max_points: int, config: RelativePoseConfig | None = None, backend: Backend | None = None) -> None: ...

    @property
    def backend(self) -> Backend: ...

    @property
    def config(self) -> RelativePoseConfig: ...

    @property
    def max_points(self) -> int: ...

    def estimate(self, x1: numpy.typing.ArrayLike, x2: numpy.typing.ArrayLike, rotation_prior: numpy.typing.ArrayLike | None = None) -> tuple[RelativePoseResult, NDArray]:
        """
        x1, x2: (N, 2) normalized coordinates of the correspondences in the first and second view. Returns (RelativePoseResult, inlier mask (N,) bool). rotation_prior (3x3) is required by PoseMethod.TwoPointWithRotation.
        """

    def estimate_bearings(self, b1: numpy.typing.ArrayLike, b2: numpy.typing.ArrayLike, rotation_prior: numpy.typing.ArrayLike | None = None, pixels_per_radian: numpy.typing.ArrayLike | None = None) -> tuple[RelativePoseResult, NDArray]:
        """
        b1, b2: (N, 3) bearing vectors (any direction, normalized when staged) of the correspondences in the first and second view. The inlier test is the tangent-plane Sampson error in radians times each point's pixels per radian (pixels_per_radian (N,); None: focal_px for every point) against threshold_px. Returns (RelativePoseResult, inlier mask (N,) bool). rotation_prior (3x3) is required by PoseMethod.TwoPointWithRotation.
        """

    def estimate_device(self, b1: Any, b2: Any, pixels_per_radian: Any | None = None, rotation_prior: numpy.typing.ArrayLike | None = None, stream: StreamLike | None = None) -> tuple[RelativePoseResult, NDArray]:
        """
        The device entry (Backend.Cuda): b1, b2 (N, 3) float32 CUDA arrays of unit bearings (CuPy, PyTorch), pixels_per_radian an optional (N,) float32 CUDA array, used in place; with rotation_prior (3x3) the two-point RANSAC runs, else the five-point one (config.method is not used). The work is enqueued on `stream` (default the legacy default stream) and waited for. Returns (RelativePoseResult, inlier mask (N,) bool).
        """

STEREO_TRACK_DTYPE: numpy.dtypes.VoidDType = ...

class RigType(enum.Enum):
    """How the two images of a stereo pair relate."""

    Rectified = 0

    Raw = 1

class StereoStatus(enum.IntEnum):
    """
    What became of a track's left-to-right match (an IntEnum: compare it with the `stereo_status` field).
    """

    Matched = 0

    NoMatch = 1

    Inconsistent = 2

    OffEpipolar = 3

    OutOfRange = 4

class StereoRig:
    """
    A stereo rig (docs/stereo.md): rectified_rig(focal, cx, cy, baseline), or raw with two cameras and the extrinsics X_right = R_rl X_left + t_rl (rig_from_body_poses for EuRoC).
    """

    def __init__(self, *, type: RigType = RigType.Rectified, focal: float = 0.0, cx: float = 0.0, cy: float = 0.0, baseline: float = 0.0, left: Camera | None = None, right: Camera | None = None, R_rl: Sequence[float] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], t_rl: Sequence[float] = [0.0, 0.0, 0.0]) -> None:
        """
        Validated on construction (InvalidArgument names the field and its bound).
        """

    @property
    def type(self) -> RigType: ...

    @type.setter
    def type(self, arg: RigType, /) -> None: ...

    @property
    def focal(self) -> float:
        """rectified: focal length, px"""

    @focal.setter
    def focal(self, arg: float, /) -> None: ...

    @property
    def cx(self) -> float: ...

    @cx.setter
    def cx(self, arg: float, /) -> None: ...

    @property
    def cy(self) -> float: ...

    @cy.setter
    def cy(self, arg: float, /) -> None: ...

    @property
    def baseline(self) -> float:
        """rectified: metres (or depth's unit)"""

    @baseline.setter
    def baseline(self, arg: float, /) -> None: ...

    @property
    def left(self) -> Camera:
        """raw: the left camera"""

    @left.setter
    def left(self, arg: Camera, /) -> None: ...

    @property
    def right(self) -> Camera:
        """raw: the right camera"""

    @right.setter
    def right(self, arg: Camera, /) -> None: ...

    @property
    def R_rl(self) -> list[float]:
        """raw: rotation right from left, row-major"""

    @R_rl.setter
    def R_rl(self, arg: Sequence[float], /) -> None: ...

    @property
    def t_rl(self) -> list[float]:
        """raw: translation right from left, metres"""

    @t_rl.setter
    def t_rl(self, arg: Sequence[float], /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

def rectified_rig(focal: float, cx: float, cy: float, baseline: float) -> StereoRig:
    """
    A rectified rig: focal length and principal point in pixels, baseline in metres.
    """

def rig_from_body_poses(left: Camera, T_BS_left: Sequence[float], right: Camera, T_BS_right: Sequence[float]) -> StereoRig:
    """
    A raw rig from each camera's pose in the body frame (row-major 4x4 T_BS, as EuRoC's sensor.yaml).
    """

class StereoMatchConfig:
    """The left-to-right matching's settings (docs/stereo.md)."""

    def __init__(self, *, lk: LkConfig | None = None, refine_levels: int = 2, epipolar_tolerance: float = 1.0, max_round_trip: float = 0.5, trust_distance: float = 0.5, min_disparity: float = 0.0, max_disparity: float = 256.0) -> None:
        """
        lk: default stereo_match_lk_config() (LkConfig's defaults on 5 levels, 16 px patches). Validated with the StereoConfig that holds it.
        """

    @property
    def lk(self) -> LkConfig: ...

    @lk.setter
    def lk(self, arg: LkConfig, /) -> None: ...

    @property
    def refine_levels(self) -> int:
        """
        levels a track matched in the previous frame is refined on, [0, levels]
        """

    @refine_levels.setter
    def refine_levels(self, arg: int, /) -> None: ...

    @property
    def epipolar_tolerance(self) -> float:
        """px, (0, 100]"""

    @epipolar_tolerance.setter
    def epipolar_tolerance(self, arg: float, /) -> None: ...

    @property
    def max_round_trip(self) -> float:
        """px, (0, 100]"""

    @max_round_trip.setter
    def max_round_trip(self, arg: float, /) -> None: ...

    @property
    def trust_distance(self) -> float:
        """
        px, [0, 100]: a track matched in the previous frame whose match lands this close to its seed is not matched back; 0: every track is
        """

    @trust_distance.setter
    def trust_distance(self, arg: float, /) -> None: ...

    @property
    def min_disparity(self) -> float:
        """px"""

    @min_disparity.setter
    def min_disparity(self, arg: float, /) -> None: ...

    @property
    def max_disparity(self) -> float:
        """px"""

    @max_disparity.setter
    def max_disparity(self, arg: float, /) -> None: ...

def stereo_match_lk_config() -> LkConfig:
    """The matching LK's defaults."""

class StereoConfig:
    """
    StereoTracker's settings: the left tracking (TrackerConfig), the matching, track_right. Validated on construction.
    """

    def __init__(self, *, tracker: TrackerConfig | None = None, match: StereoMatchConfig | None = None, track_right: bool = False) -> None: ...

    @property
    def tracker(self) -> TrackerConfig: ...

    @tracker.setter
    def tracker(self, arg: TrackerConfig, /) -> None: ...

    @property
    def match(self) -> StereoMatchConfig: ...

    @match.setter
    def match(self, arg: StereoMatchConfig, /) -> None: ...

    @property
    def track_right(self) -> bool:
        """also track the right image's own features in time"""

    @track_right.setter
    def track_right(self, arg: bool, /) -> None: ...

    def validate(self) -> None:
        """Raises InvalidArgument unless valid."""

class StereoTracker:
    """
    Both cameras of a rig per frame (docs/stereo.md): the left tracks in time, each matched into the right image with a disparity, a depth and a stereo status.
    """

    def __init__(self, width: int, height: int, rig: StereoRig, config: StereoConfig | None = None, backend: Backend | None = None) -> None: ...

    @property
    def config(self) -> StereoConfig: ...

    @property
    def rig(self) -> StereoRig: ...

    @property
    def backend(self) -> Backend: ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    def track(self, left: object, right: object, predictions: numpy.typing.ArrayLike | None = None, *, stream: StreamLike | None = None) -> NDArray:
        """
        Tracks one stereo frame: two 2-D uint8 arrays of width x height, both NumPy (any strides) or both CUDA arrays (CuPy, PyTorch; DLPack, CUDA backend, on `stream`). `predictions`: optional (N, 2) guesses for the left tracks of the previous call. Returns the live left tracks with their matches as a structured array (FeatureTracker's fields, then right_x, right_y, disparity, depth, stereo_status). The GIL is released during the work.
        """

    @property
    def tracks(self) -> NDArray:
        """live left tracks with their matches after the last frame"""

    @property
    def lost_tracks(self) -> NDArray:
        """
        left tracks dropped in the last frame (FeatureTracker's structured array)
        """

    @property
    def right_tracks(self) -> NDArray:
        """track_right: the right image's own tracks (else empty)"""

    @property
    def right_lost_tracks(self) -> NDArray:
        """
        track_right: the right image's tracks dropped in the last frame (else empty)
        """

    @property
    def frame_count(self) -> int: ...

    @property
    def redetected(self) -> bool: ...

    def reset(self) -> None:
        """Forgets every track (both cameras)."""
