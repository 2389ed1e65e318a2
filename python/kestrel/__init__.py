"""Kestrel: GPU feature detection and tracking for visual-inertial odometry.

NumPy arrays in and out; frames already on a CUDA device (CuPy arrays, PyTorch CUDA tensors) are used in
place through DLPack. See docs/python.md for the tour.

    >>> import numpy as np, kestrel
    >>> det = kestrel.FeatureDetector(kestrel.DetectorConfig(max_features=500))
    >>> kps = det.detect(image)            # image: 2-D uint8 array
    >>> kps["x"], kps["y"], kps["level"], kps["score"]
"""

from ._kestrel import (  # noqa: F401  (the public API, re-exported)
    __version__,
    # core
    Backend,
    Error,
    InvalidArgument,
    StateError,
    CudaError,
    NoDeviceError,
    cuda_available,
    built_with_cuda,
    default_backend,
    MAX_IMAGE_SIDE,
    # detect
    ScoreType,
    SelectionPolicy,
    PyramidConfig,
    FastConfig,
    PycaConfig,
    OrbSlamConfig,
    DetectorConfig,
    FeatureDetector,
    detect_cpu,
    KEYPOINT_DTYPE,
    # track
    LkMode,
    TemplateSource,
    TrackStatus,
    LkConfig,
    AnchorConfig,
    MotionConfig,
    GeometricCheckConfig,
    GeometricCheckResult,
    CheckModel,
    TrackerConfig,
    FeatureTracker,
    tracking_detector_config,
    TRACK_DTYPE,
    CameraConfig,
    MultiCameraTracker,
    # features
    MatcherConfig,
    HammingMatcher,
    match_cpu,
    MATCH_DTYPE,
    ORB_DESCRIPTOR_BYTES,
    # geometry
    CameraModel,
    UnprojectStatus,
    Camera,
    UndistortConfig,
    project,
    unproject,
    unproject_bearing,
    pixels_per_radian,
    PoseMethod,
    PoseStatus,
    RelativePoseConfig,
    RelativePoseResult,
    RelativePoseEstimator,
    # stereo
    RigType,
    StereoStatus,
    StereoRig,
    rectified_rig,
    rig_from_body_poses,
    StereoMatchConfig,
    stereo_match_lk_config,
    StereoConfig,
    StereoTracker,
    STEREO_TRACK_DTYPE,
)
from . import _kestrel


def _config_repr(self):
    fields = [name for name in dir(type(self))
              if not name.startswith("_") and name != "validate"]
    return "%s(%s)" % (type(self).__name__,
                       ", ".join("%s=%r" % (f, getattr(self, f)) for f in fields))


for _cls in (PyramidConfig, FastConfig, PycaConfig, OrbSlamConfig, DetectorConfig, LkConfig, AnchorConfig, MotionConfig,
             GeometricCheckConfig,
             TrackerConfig,
             MatcherConfig, Camera, UndistortConfig, CameraConfig, RelativePoseConfig, StereoRig, StereoMatchConfig,
             StereoConfig):
    _cls.__repr__ = _config_repr
del _cls

__all__ = [name for name in dir(_kestrel) if not name.startswith("_")] + ["__version__"]
