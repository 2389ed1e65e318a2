"""ROS bags in: frames, cameras and gyro readings for Kestrel, without a ROS installation.

Reads ROS 1 bags (``.bag``) and ROS 2 bags (a folder with ``metadata.yaml``, or a bare ``.db3`` / ``.mcap``
file) through the pure-Python ``rosbags`` package (``pip install kestrel[ros]``). docs/ros.md is the guide.

    >>> from kestrel import ros
    >>> for f in ros.frames("MH_01_easy.bag", "/cam0/image_raw"):
    ...     tracks = tracker.track(f.image)      # f.index, f.timestamp_ns, f.image (2-D uint8)

Conversions, the same as the command-line tools' (``track_sequence``) for the same pixels:

* ``sensor_msgs/Image``: ``mono8`` / ``8UC1`` as they are; ``mono16`` / ``16UC1`` reduced to 8 bits by keeping
  the high byte (v >> 8, as OpenCV's IMREAD_GRAYSCALE does with a 16-bit file); ``rgb8``, ``bgr8``, ``rgba8``,
  ``bgra8`` to grey with OpenCV's BT.601 fixed point, ``(4899 R + 9617 G + 1868 B + 8192) >> 14``, alpha dropped
  (the rule of the tools' video, PPM and BMP input).
* ``sensor_msgs/CompressedImage``: PNG decoded by OpenCV (``cv2``) when it is installed, else by Pillow, and
  converted to grey as the tools convert a PNG file (libpng's rgb_to_gray weights, the file's gamma when it has
  one); JPEG decoded to its luma channel by libjpeg (OpenCV's ``IMREAD_GRAYSCALE``, else Pillow's grey draft
  mode): the same rule as the tools' ``cv::imread(IMREAD_GRAYSCALE)``.
* ``sensor_msgs/CameraInfo``: a :class:`kestrel.Camera` (see :func:`camera_from_info`).
* ``sensor_msgs/Imu``: the gyro readings (:func:`read_gyro`) and their integral between two frames
  (:func:`gyro_rotation`).

Timestamps are the messages' header stamps; they must increase. A size change, an unknown encoding, a message of
the wrong type or a broken message raises :class:`BagError` naming the topic and the message index (0 = the
topic's first message).
"""
from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import numpy as np

__all__ = [
    "BagError", "MissingDependency", "Frame", "StereoFrame", "TopicInfo", "open_bag", "topics", "frames",
    "stereo_frames", "image_to_grey", "compressed_to_grey", "camera_from_info", "read_camera_info",
    "rig_from_infos", "read_gyro", "gyro_rotation", "predict_rotation", "bt601_grey",
]

IMAGE = "sensor_msgs/msg/Image"
COMPRESSED = "sensor_msgs/msg/CompressedImage"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
IMU = "sensor_msgs/msg/Imu"

INSTALL_HINT = "pip install 'kestrel[ros]' (or: pip install rosbags)"


class BagError(ValueError):
    """A bag that cannot be used as asked: the message names the bag, the topic and the message index."""


class MissingDependency(ImportError):
    """An optional package that the asked-for input needs is not installed; the message says what to install."""


def _rosbags():
    try:
        import rosbags.highlevel
        import rosbags.typesys
    except ImportError as e:
        raise MissingDependency("reading ROS bags needs the 'rosbags' package, which is not installed (%s): %s"
                                % (e, INSTALL_HINT)) from None
    return rosbags.highlevel, rosbags.typesys


# ----------------------------------------------------------------------------------------------------------------
# Opening a bag


class _Bag:
    """An open bag: AnyReader with errors that name the file."""

    def __init__(self, path):
        hl, ts = _rosbags()
        self.path = Path(path)
        if not self.path.exists():
            raise BagError("%s: no such file or folder" % self.path)
        if self.path.is_dir() and not (self.path / "metadata.yaml").exists():
            raise BagError("%s: a folder without metadata.yaml is not a ROS 2 bag (give the folder a ROS 2 recorder "
                           "wrote, or its .db3 / .mcap file)" % self.path)
        if self.path.is_file() and self.path.suffix not in (".bag", ".db3", ".mcap"):
            raise BagError("%s: not a ROS bag (expected a ROS 1 .bag file, a ROS 2 bag folder, or a ROS 2 .db3 or "
                           ".mcap file)" % self.path)
        is2 = self.path.suffix != ".bag"
        store = ts.Stores.ROS2_HUMBLE if is2 else ts.Stores.ROS1_NOETIC
        try:
            self.reader = hl.AnyReader([self.path], default_typestore=ts.get_typestore(store))
            self.reader.open()
        except Exception as e:  # rosbags raises several types for unreadable files
            raise BagError("%s: cannot read the bag: %s" % (self.path, _reason(e))) from None

    def close(self):
        try:
            self.reader.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def topic_types(self):
        """{topic: message type} (None where a topic's connections disagree)."""
        return {name: info.msgtype for name, info in self.reader.topics.items()}

    def connections(self, topic, allowed, role):
        """The topic's connections, checked to exist and to carry one of `allowed` message types."""
        conns = [c for c in self.reader.connections if c.topic == topic]
        if not conns:
            raise BagError("%s: no topic %s in the bag; its topics are:\n%s"
                           % (self.path, topic, _topic_lines(self.reader)))
        for c in conns:
            if c.msgtype not in allowed:
                raise BagError("%s: topic %s carries %s, not %s (%s)"
                               % (self.path, topic, c.msgtype, " or ".join(allowed), role))
        return conns

    def messages(self, topic, allowed, role):
        """(index, message) of one topic in the bag's order; a broken message names its topic and index."""
        conns = self.connections(topic, allowed, role)
        index = 0
        it = self.reader.messages(connections=conns)
        while True:
            try:
                conn, _, raw = next(it)
            except StopIteration:
                return
            except Exception as e:
                raise BagError("%s: topic %s: message %d cannot be read (the file may be truncated or damaged): %s"
                               % (self.path, topic, index, _reason(e))) from None
            try:
                msg = self.reader.deserialize(raw, conn.msgtype)
            except Exception as e:
                raise BagError("%s: topic %s: message %d cannot be decoded as %s: %s"
                               % (self.path, topic, index, conn.msgtype, _reason(e))) from None
            yield index, msg
            index += 1

    def count(self, topic):
        info = self.reader.topics.get(topic)
        return info.msgcount if info is not None else 0


def _reason(e):
    text = str(e) or type(e).__name__
    return "%s: %s" % (type(e).__name__, text) if type(e).__name__ not in text else text


def _topic_lines(reader):
    rows = sorted((name, info.msgtype or "(mixed types)", info.msgcount) for name, info in reader.topics.items())
    if not rows:
        return "  (none)"
    w = max(len(r[0]) for r in rows)
    return "\n".join("  %-*s  %-32s %d messages" % (w, n, t, c) for n, t, c in rows)


def open_bag(path) -> _Bag:
    """Opens a bag (a context manager); raises BagError for a file that is not a readable bag."""
    return _Bag(path)


@dataclass
class TopicInfo:
    topic: str
    msgtype: Optional[str]
    count: int


def topics(path) -> List[TopicInfo]:
    """The bag's topics with their message types and counts, sorted by name."""
    with open_bag(path) as bag:
        return sorted((TopicInfo(n, i.msgtype, i.msgcount) for n, i in bag.reader.topics.items()),
                      key=lambda t: t.topic)


def topics_text(path) -> str:
    """The bag's topics, one line each (what `python -m kestrel.track BAG` prints)."""
    with open_bag(path) as bag:
        return _topic_lines(bag.reader)


# ----------------------------------------------------------------------------------------------------------------
# Images


def _stamp_ns(msg, where):
    try:
        st = msg.header.stamp
        return int(st.sec) * 1000000000 + int(st.nanosec)
    except AttributeError:
        raise BagError("%s: the message has no header stamp" % where) from None


# OpenCV's BT.601 weights (imgproc's cvtColor, imgcodecs' BGR2Gray), 14-bit fixed point.
_CV_R, _CV_G, _CV_B = 4899, 9617, 1868
# libpng's rgb_to_gray weights as OpenCV sets them (0.299, 0.587 in PNG fixed point, times 32768 / 100000, not
# rounded); blue takes the rest.
_PNG_R, _PNG_G = 9797, 19234
_PNG_B = 32768 - _PNG_R - _PNG_G


def bt601_grey(r, g, b):
    """OpenCV's BGR2GRAY on 8-bit samples: (4899 R + 9617 G + 1868 B + 8192) >> 14, as uint8."""
    y = (_CV_R * r.astype(np.uint32) + _CV_G * g.astype(np.uint32) + _CV_B * b.astype(np.uint32) + 8192) >> 14
    return y.astype(np.uint8)


def _bytes_array(data):
    """A message's data field as a flat uint8 array: a NumPy array (rosbags), bytes or array('B') (rclpy)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    return np.asarray(data, dtype=np.uint8).reshape(-1)


_CHANNELS = {"mono8": (1, 1), "8uc1": (1, 1), "mono16": (1, 2), "16uc1": (1, 2),
             "rgb8": (3, 1), "bgr8": (3, 1), "rgba8": (4, 1), "bgra8": (4, 1), "8uc3": (3, 1), "8uc4": (4, 1)}


def image_to_grey(msg, where="image") -> Tuple[np.ndarray, int]:
    """A sensor_msgs/Image as a 2-D uint8 array and the source's bits per sample (8 or 16).

    `where` prefixes error messages (e.g. "bag.db3: topic /cam0/image_raw: message 12")."""
    enc = str(msg.encoding).strip()
    key = enc.lower()
    if key not in _CHANNELS:
        raise BagError("%s: image encoding '%s' is not supported (mono8, mono16, rgb8, bgr8, rgba8, bgra8, 8UC1, "
                       "16UC1, 8UC3 = bgr8, 8UC4 = bgra8)" % (where, enc))
    ch, nbytes = _CHANNELS[key]
    w, h, step = int(msg.width), int(msg.height), int(msg.step)
    if w < 1 or h < 1:
        raise BagError("%s: the image is %dx%d" % (where, w, h))
    row = w * ch * nbytes
    if step < row:
        raise BagError("%s: step %d is smaller than width x bytes per pixel = %d (%s)" % (where, step, row, enc))
    data = _bytes_array(msg.data)
    need = step * (h - 1) + row
    if data.size < need:
        raise BagError("%s: the image holds %d bytes; %dx%d %s with step %d needs %d"
                       % (where, data.size, w, h, enc, step, need))
    if data.size < step * h:
        data = np.concatenate([data, np.zeros(step * h - data.size, np.uint8)])
    rows = data[:step * h].reshape(h, step)[:, :row]
    if nbytes == 2:
        hi = 0 if int(msg.is_bigendian) else 1  # the high byte of each sample: v >> 8
        return np.ascontiguousarray(rows.reshape(h, w, 2)[:, :, hi]), 16
    if ch == 1:
        return np.ascontiguousarray(rows), 8
    px = rows.reshape(h, w, ch)
    if key.startswith("rgb"):
        return bt601_grey(px[:, :, 0], px[:, :, 1], px[:, :, 2]), 8
    return bt601_grey(px[:, :, 2], px[:, :, 1], px[:, :, 0]), 8  # bgr8, bgra8, 8UC3, 8UC4


def _decoders():
    """(cv2 or None, PIL.Image or None)."""
    cv2 = pil = None
    try:
        import cv2  # noqa: F811
    except ImportError:
        cv2 = None
    try:
        from PIL import Image as pil
    except ImportError:
        pil = None
    return cv2, pil


def decoder_name() -> str:
    """Which decoder reads CompressedImage messages here: 'OpenCV', 'Pillow' or 'none'."""
    cv2, pil = _decoders()
    return "OpenCV" if cv2 is not None else "Pillow" if pil is not None else "none"


def _png_gamma(data: bytes) -> int:
    """The file gamma libpng works with (PNG fixed point): 45455 with an sRGB chunk, else gAMA's value when libpng
    accepts it, else 0. Chunks before the first IDAT."""
    pos, gamma, srgb = 8, 0, False
    while pos + 8 <= len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        if kind in (b"IDAT", b"IEND"):
            break
        if kind == b"gAMA" and n == 4 and pos + 12 <= len(data):
            v = struct.unpack(">I", data[pos + 8:pos + 12])[0]
            if 16 <= v <= 625000000:
                gamma = v
        elif kind == b"sRGB":
            srgb = True
        pos += 12 + n
    return 45455 if srgb else gamma


def _png_significant(g):
    return g < 100000 - 5000 or g > 100000 + 5000


def _png_reciprocal(a):
    return int(np.floor(1e10 / float(a) + 0.5))


def _png_gamma_table(gamma):
    i = np.arange(256, dtype=np.float64)
    t = np.floor(255.0 * np.power(i / 255.0, gamma * 0.00001) + 0.5)
    if not _png_significant(gamma):
        t = i.copy()
    t[0], t[255] = 0, 255
    return t.astype(np.uint8)


def _png_colour_to_grey(rgb, bits, gamma):
    """libpng's rgb_to_gray (as the tools read a colour PNG); rgb: (h, w, 3) uint8 or uint16 samples."""
    r, g, b = (rgb[:, :, i].astype(np.int64) for i in range(3))
    use_gamma = gamma != 0 and _png_significant(gamma)
    if bits == 16:
        if use_gamma:
            gm = gamma * 0.00001
            to1 = lambda c: np.power(c / 65535.0, 1.0 / gm)  # noqa: E731
            y = (_PNG_R * to1(r) + _PNG_G * to1(g) + _PNG_B * to1(b)) / 32768.0
            v = np.rint(65535.0 * np.power(y, gm)).astype(np.int64)
        else:
            v = (_PNG_R * r + _PNG_G * g + _PNG_B * b + 16384) >> 15
        return (v >> 8).astype(np.uint8)
    same = (r == g) & (r == b)
    if not use_gamma:
        y = (_PNG_R * r + _PNG_G * g + _PNG_B * b) >> 15
    else:
        screen = _png_reciprocal(gamma)
        to1 = _png_gamma_table(_png_reciprocal(gamma)).astype(np.int64)
        from1 = _png_gamma_table(_png_reciprocal(screen))
        y = from1[(_PNG_R * to1[r] + _PNG_G * to1[g] + _PNG_B * to1[b] + 16384) >> 15]
    return np.where(same, r, y).astype(np.uint8)


def compressed_to_grey(msg, where="image") -> Tuple[np.ndarray, int]:
    """A sensor_msgs/CompressedImage (PNG or JPEG, told by the data's signature) as a 2-D uint8 array and the
    source's bits per sample. Needs OpenCV (cv2) or Pillow; the error says what to install."""
    data = _bytes_array(msg.data).tobytes()
    fmt = str(getattr(msg, "format", ""))
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        kind = "PNG"
    elif data[:3] == b"\xff\xd8\xff":
        kind = "JPEG"
    else:
        raise BagError("%s: compressed image of format '%s' is neither PNG nor JPEG (its data starts with %s)"
                       % (where, fmt, data[:8].hex() or "nothing"))
    cv2, pil = _decoders()
    if cv2 is None and pil is None:
        raise MissingDependency("%s: decoding a %s CompressedImage needs Pillow or OpenCV, neither is installed: "
                                "pip install pillow (or: pip install 'kestrel[ros]')" % (where, kind))
    try:
        if kind == "JPEG":
            if cv2 is not None:
                img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
                if img is None:
                    raise ValueError("OpenCV could not decode it")
                return np.ascontiguousarray(img), 8
            im = pil.open(io.BytesIO(data))
            im.draft("L", im.size)  # libjpeg's grey output: the luma channel, as IMREAD_GRAYSCALE
            if im.mode != "L":
                im = im.convert("L")
            return np.asarray(im, dtype=np.uint8).copy(), 8
        return _png_to_grey(data, cv2, pil)
    except (BagError, MissingDependency):
        raise
    except Exception as e:
        raise BagError("%s: cannot decode the %s image (format '%s'): %s" % (where, kind, fmt, _reason(e))) from None


def _png_to_grey(data, cv2, pil):
    bit_depth, colour_type = data[24], data[25]
    bits = 16 if bit_depth == 16 else 8
    if cv2 is not None:
        arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if arr is None:
            raise ValueError("OpenCV could not decode it")
        if arr.ndim == 3 and arr.shape[2] >= 3:
            arr = arr[:, :, [2, 1, 0]]  # BGR(A) -> RGB
        elif arr.ndim == 3:
            arr = arr[:, :, 0]
    else:
        im = pil.open(io.BytesIO(data))
        im.load()
        if im.mode == "P":
            im = im.convert("RGBA" if "transparency" in im.info else "RGB")
        elif im.mode == "1":
            im = im.convert("L")
        elif im.mode == "LA":
            im = im.getchannel(0)
        elif im.mode == "PA":
            im = im.convert("RGBA")
        arr = np.asarray(im)
        if arr.dtype.kind == "i" or arr.dtype == np.uint16 or im.mode.startswith("I"):
            arr = arr.astype(np.uint16)
        if bits == 16 and colour_type in (2, 6) and arr.dtype == np.uint8:
            # Pillow reads 16-bit colour PNGs as 8 bits: read the samples from the file itself
            arr = _png_samples_16(data)
    if arr.ndim == 2:
        if arr.dtype == np.uint16:
            return np.ascontiguousarray((arr >> 8).astype(np.uint8)), 16
        return np.ascontiguousarray(arr.astype(np.uint8)), bits
    rgb = arr[:, :, :3]
    return _png_colour_to_grey(rgb, 16 if rgb.dtype == np.uint16 else 8, _png_gamma(data)), bits


def _png_samples_16(data):
    """A 16-bit RGB or RGBA PNG's samples (non-interlaced), decoded here: zlib and the five row filters."""
    w, h = struct.unpack(">II", data[16:24])
    colour_type, interlace = data[25], data[28]
    if interlace:
        raise ValueError("interlaced 16-bit colour PNG is not supported")
    ch = 3 if colour_type == 2 else 4
    idat, pos = bytearray(), 8
    while pos + 8 <= len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(bytes(idat)), np.uint8)
    bpp, stride = 2 * ch, w * 2 * ch
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)].astype(np.int32)
        cur = np.zeros(stride, np.int32)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) >> 1
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else b if pb <= pc else c
            cur[x] = (line[x] + p) & 255
        out[y] = cur
        prev = cur
    return out.view(">u2").reshape(h, w, ch).astype(np.uint16)


@dataclass
class Frame:
    """One image of a topic: its index among the topic's messages, header stamp, grey image, bits per sample."""
    index: int
    timestamp_ns: int
    image: np.ndarray
    source_bits: int
    topic: str = ""


@dataclass
class StereoFrame:
    left: Frame
    right: Frame

    @property
    def timestamp_ns(self):
        return self.left.timestamp_ns


class GapNotes:
    """Timing notes of one topic: an interval over 1.5 times the median of the ones before is a gap (frames
    dropped while recording), said once per gap on `out` and counted."""

    def __init__(self, topic, out=None):
        self.topic, self.out, self.gaps, self.intervals = topic, out, [], []

    def add(self, index, dt_ns):
        if len(self.intervals) >= 3:
            med = float(np.median(self.intervals[-50:]))
            if dt_ns > 1.5 * med:
                self.gaps.append((index, dt_ns, med))
                if self.out is not None:
                    self.out.write("kestrel.track: note: topic %s: message %d comes %.3f s after the previous one, "
                                   "%.1f times the usual %.3f s: a gap (frames dropped while recording?)\n"
                                   % (self.topic, index, dt_ns * 1e-9, dt_ns / med, med * 1e-9))
        self.intervals.append(dt_ns)


def _image_messages(bag, topic, role):
    return bag.messages(topic, (IMAGE, COMPRESSED), role)


def _decode(msg, where):
    if getattr(msg, "__msgtype__", "") == COMPRESSED or (hasattr(msg, "format") and not hasattr(msg, "encoding")):
        return compressed_to_grey(msg, where)
    return image_to_grey(msg, where)


def _checked_stamps(bag, topic, role, notes):
    """(index, stamp, msg) of an image topic, stamps checked to increase."""
    prev = None
    for index, msg in _image_messages(bag, topic, role):
        where = "%s: topic %s: message %d" % (bag.path.name, topic, index)
        t = _stamp_ns(msg, where)
        if prev is not None:
            if t <= prev[1]:
                raise BagError("%s: header stamp %s is %s message %d's %s: the stamps must increase"
                               % (where, _seconds(t), "equal to" if t == prev[1] else "before", prev[0],
                                  _seconds(prev[1])))
            if notes is not None:
                notes.add(index, t - prev[1])
        prev = (index, t)
        yield index, t, msg, where


def _seconds(ns):
    neg = ns < 0
    a = -ns if neg else ns
    return "%s%d.%09d" % ("-" if neg else "", a // 1000000000, a % 1000000000)


def frames(path, topic, notes=None, bag=None) -> Iterator[Frame]:
    """The frames of an image topic (sensor_msgs/Image or CompressedImage) as grey images, in header-stamp order
    (checked: a stamp that does not increase raises BagError), every frame checked to have the first one's size.
    `notes`: a GapNotes to report gaps to."""
    own = bag is None
    bag = bag or open_bag(path)
    try:
        size = None
        for index, t, msg, where in _checked_stamps(bag, topic, "an image topic", notes):
            img, bits = _decode(msg, where)
            if size is None:
                size = (img.shape, index)
            elif img.shape != size[0]:
                raise BagError("%s: the image is %dx%d, the topic started at %dx%d (message %d)"
                               % (where, img.shape[1], img.shape[0], size[0][1], size[0][0], size[1]))
            yield Frame(index, t, img, bits, topic)
    finally:
        if own:
            bag.close()


def stereo_frames(path, left_topic, right_topic, notes=None, bag=None, warn=None) -> Iterator[StereoFrame]:
    """Left and right frames paired by equal header stamps. A frame with no partner raises BagError naming it,
    except at the very end of the bag (the recorder stopped between the two), which is said on `warn` (a file)."""
    own = bag is None
    bag = bag or open_bag(path)
    try:
        bag.connections(right_topic, (IMAGE, COMPRESSED), "the right image topic")
        left = _checked_stamps(bag, left_topic, "the left image topic", notes)
        right = _checked_stamps(bag, right_topic, "the right image topic", None)
        size = None
        for (li, lt, lm, lw), r in _zip_stamps(left, right, left_topic, right_topic, warn):
            ri, rt, rm, rw = r
            limg, lbits = _decode(lm, lw)
            rimg, rbits = _decode(rm, rw)
            if size is None:
                size = (limg.shape, li)
            for img, where in ((limg, lw), (rimg, rw)):
                if img.shape != size[0]:
                    raise BagError("%s: the image is %dx%d, the left topic started at %dx%d (message %d)"
                                   % (where, img.shape[1], img.shape[0], size[0][1], size[0][0], size[1]))
            yield StereoFrame(Frame(li, lt, limg, lbits, left_topic), Frame(ri, rt, rimg, rbits, right_topic))
    finally:
        if own:
            bag.close()


def _zip_stamps(left, right, lname, rname, warn):
    """Pairs two stamp-ordered streams on equal stamps (each yields (index, stamp, msg, where))."""
    lq = next(left, None)
    rq = next(right, None)
    while lq is not None and rq is not None:
        if lq[1] == rq[1]:
            yield lq, rq
            lq, rq = next(left, None), next(right, None)
        elif lq[1] < rq[1]:
            raise BagError("%s: stamp %s has no right image on %s (the right topic's next is message %d at %s)"
                           % (lq[3], _seconds(lq[1]), rname, rq[0], _seconds(rq[1])))
        else:
            raise BagError("%s: stamp %s has no left image on %s (the left topic's next is message %d at %s)"
                           % (rq[3], _seconds(rq[1]), lname, lq[0], _seconds(lq[1])))
    rest = lq if lq is not None else rq
    if rest is not None:
        more = 1 + sum(1 for _ in (left if lq is not None else right))
        if more > 1:
            raise BagError("%s: %d images at the end have no partner on %s"
                           % (rest[3], more, rname if lq is not None else lname))
        if warn is not None:
            warn.write("kestrel.track: note: %s: the last image (stamp %s) has no partner on %s: skipped\n"
                       % (rest[3], _seconds(rest[1]), rname if lq is not None else lname))


# ----------------------------------------------------------------------------------------------------------------
# CameraInfo


def _field(msg, lower):
    v = getattr(msg, lower, None)
    if v is None:
        v = getattr(msg, lower.upper(), None)  # ROS 1 names: D, K, R, P
    return np.asarray(v if v is not None else [], dtype=np.float64).reshape(-1)


def camera_from_info(msg, where="camera info"):
    """A sensor_msgs/CameraInfo as a kestrel.Camera: K's fx, fy, cx, cy and the image size, with

    * ``plumb_bob`` (k1, k2, p1, p2[, k3]): CameraModel.PinholeRadtan, or Pinhole when every coefficient is 0;
    * ``rational_polynomial`` (k1, k2, p1, p2, k3, k4, k5, k6): PinholeRadtan when k4 = k5 = k6 = 0 (the model
      then reduces to radial-tangential), else an error;
    * ``equidistant`` (k1, k2, k3, k4; also spelled ``fisheye``): CameraModel.Fisheye.

    K and D describe the raw (unrectified) image, as ROS defines them. Binning and a region of interest are not
    supported (an error says so)."""
    import kestrel
    model = str(msg.distortion_model).strip()
    k = _field(msg, "k")
    d = _field(msg, "d")
    w, h = int(msg.width), int(msg.height)
    if k.size != 9:
        raise BagError("%s: K has %d numbers, not 9" % (where, k.size))
    if k[1] != 0.0 or k[3] != 0.0 or k[6] != 0.0 or k[7] != 0.0 or k[8] != 1.0:
        raise BagError("%s: K = %s is not [fx 0 cx; 0 fy cy; 0 0 1] (skew is not supported)"
                       % (where, np.array2string(k, separator=", ")))
    if not np.all(np.isfinite(d)):
        raise BagError("%s: D holds a number that is not finite" % where)
    for name in ("binning_x", "binning_y"):
        b = int(getattr(msg, name, 0) or 0)
        if b > 1:
            raise BagError("%s: %s = %d: binning is not supported (give the camera of the binned image in a "
                           "sensor.yaml with --sensor)" % (where, name, b))
    roi = getattr(msg, "roi", None)
    if roi is not None and int(roi.width) not in (0, w) and int(roi.height) not in (0, h):
        raise BagError("%s: a region of interest (%dx%d at %d,%d) is not supported"
                       % (where, roi.width, roi.height, roi.x_offset, roi.y_offset))
    coeffs = [0.0] * 5
    if model == "plumb_bob":
        if d.size not in (0, 4, 5):
            raise BagError("%s: plumb_bob takes 5 coefficients (k1, k2, p1, p2, k3), D has %d" % (where, d.size))
        cm = kestrel.CameraModel.PinholeRadtan if np.any(d != 0) else kestrel.CameraModel.Pinhole
        coeffs[:d.size] = d.tolist()
    elif model == "rational_polynomial":
        if d.size not in (5, 8, 12, 14):
            raise BagError("%s: rational_polynomial takes 8 coefficients (k1, k2, p1, p2, k3, k4, k5, k6), D has %d"
                           % (where, d.size))
        if np.any(d[5:] != 0):
            raise BagError("%s: rational_polynomial with k4, k5, k6 (or thin-prism / tilt terms) = %s is not "
                           "supported: only the case k4 = k5 = k6 = 0, which is plumb_bob (radial-tangential), maps "
                           "to a Kestrel camera" % (where, np.array2string(d[5:], separator=", ")))
        cm = kestrel.CameraModel.PinholeRadtan if np.any(d[:5] != 0) else kestrel.CameraModel.Pinhole
        coeffs[:5] = d[:5].tolist()
    elif model in ("equidistant", "fisheye"):
        if d.size != 4:
            raise BagError("%s: %s takes 4 coefficients (k1, k2, k3, k4), D has %d" % (where, model, d.size))
        cm = kestrel.CameraModel.Fisheye
        coeffs[:4] = d.tolist()
    elif model == "" and not np.any(d != 0):
        cm = kestrel.CameraModel.Pinhole
    else:
        raise BagError("%s: distortion model '%s' is not supported (plumb_bob, rational_polynomial with k4 = k5 = "
                       "k6 = 0, equidistant)" % (where, model))
    try:
        return kestrel.Camera(model=cm, width=w, height=h, fx=float(k[0]), fy=float(k[4]), cx=float(k[2]),
                              cy=float(k[5]), d=coeffs)
    except kestrel.InvalidArgument as e:
        raise BagError("%s: %s" % (where, e)) from None


def read_camera_info(path, topic, bag=None):
    """(Camera, message) from the first CameraInfo message of `topic`."""
    own = bag is None
    bag = bag or open_bag(path)
    try:
        for index, msg in bag.messages(topic, (CAMERA_INFO,), "a camera info topic"):
            where = "%s: topic %s: message %d" % (bag.path.name, topic, index)
            return camera_from_info(msg, where), msg
        raise BagError("%s: topic %s has no messages" % (bag.path.name, topic))
    finally:
        if own:
            bag.close()


def rig_from_infos(left_msg, right_msg, where="camera info"):
    """A raw StereoRig from a ROS stereo calibration's two CameraInfo messages (K, D of each camera, the
    rectification rotations R and the right projection's P[3] = -fx' * baseline): the left camera is the body, the
    right camera sits at R_l^T (B, 0, 0) with orientation R_l^T R_r."""
    import kestrel
    left = camera_from_info(left_msg, where + " (left)")
    right = camera_from_info(right_msg, where + " (right)")
    rl = _field(left_msg, "r").reshape(3, 3)
    rr = _field(right_msg, "r").reshape(3, 3)
    p = _field(right_msg, "p")
    if p.size != 12 or p[0] == 0:
        raise BagError("%s (right): P must hold 12 numbers with P[0] = fx' != 0" % where)
    baseline = -p[3] / p[0]
    if not baseline > 0:
        raise BagError("%s (right): P[3] = %g gives a baseline of %g: the right camera's P[3] must be -fx' * B < 0"
                       % (where, p[3], baseline))
    t_left = np.eye(4)
    t_right = np.eye(4)
    t_right[:3, :3] = rl.T @ rr
    t_right[:3, 3] = rl.T @ np.array([baseline, 0.0, 0.0])
    return kestrel.rig_from_body_poses(left, t_left.reshape(-1).tolist(), right, t_right.reshape(-1).tolist())


# ----------------------------------------------------------------------------------------------------------------
# IMU


def read_gyro(path, topic, bag=None) -> Tuple[np.ndarray, np.ndarray]:
    """(t_ns (N,) int64, omega (N, 3) float64 rad/s) of a sensor_msgs/Imu topic, by header stamp; the stamps must
    increase (an error names the message)."""
    own = bag is None
    bag = bag or open_bag(path)
    try:
        ts, ws = [], []
        for index, msg in bag.messages(topic, (IMU,), "the IMU topic"):
            where = "%s: topic %s: message %d" % (bag.path.name, topic, index)
            t = _stamp_ns(msg, where)
            if ts and t <= ts[-1]:
                raise BagError("%s: header stamp %s does not increase (message %d: %s)"
                               % (where, _seconds(t), index - 1, _seconds(ts[-1])))
            a = msg.angular_velocity
            w = (float(a.x), float(a.y), float(a.z))
            if not all(np.isfinite(w)):
                raise BagError("%s: angular_velocity is not finite" % where)
            ts.append(t)
            ws.append(w)
        if len(ts) < 2:
            raise BagError("%s: topic %s has %d messages; the gyro needs at least 2" % (bag.path.name, topic, len(ts)))
        return np.asarray(ts, np.int64), np.asarray(ws, np.float64)
    finally:
        if own:
            bag.close()


def _exp_so3(v):
    th = float(np.linalg.norm(v))
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]], dtype=np.float64)
    if th < 1e-12:
        return np.eye(3) + k
    return np.eye(3) + np.sin(th) / th * k + (1 - np.cos(th)) / (th * th) * (k @ k)


def gyro_rotation(t_ns, omega, t0, t1, R_BS=None):
    """The camera's rotation from time t0 to t1 (ns) as the tracker's rotation prior takes it: X_cur = R X_prev,
    from the gyro readings integrated over [t0, t1] (the rate interpolated linearly between readings, midpoint
    steps). `R_BS`: the camera-to-IMU rotation (EuRoC's T_BS, upper left 3x3); None = the IMU's axes are the
    camera's. None when the readings do not cover [t0, t1]."""
    if t1 <= t0 or t0 < t_ns[0] or t1 > t_ns[-1]:
        return None
    inner = t_ns[(t_ns > t0) & (t_ns < t1)]
    knots = np.concatenate([[t0], inner, [t1]]).astype(np.int64)
    rate = np.stack([np.interp(knots.astype(np.float64), t_ns.astype(np.float64), omega[:, i]) for i in range(3)], 1)
    R = np.eye(3)  # R_{B0 B} (the body at t1 seen from the body at t0)
    for i in range(len(knots) - 1):
        dt = (knots[i + 1] - knots[i]) * 1e-9
        R = R @ _exp_so3(0.5 * (rate[i] + rate[i + 1]) * dt)
    R_cur_prev_body = R.T  # X_B1 = R_{B0 B1}^T X_B0
    if R_BS is None:
        return R_cur_prev_body
    R_BS = np.asarray(R_BS, np.float64).reshape(3, 3)
    return R_BS.T @ R_cur_prev_body @ R_BS


def predict_rotation(camera, R, xy):
    """Where points seen at pixels `xy` (N, 2) appear after the camera rotates by R (X_cur = R X_prev) and does
    not move: each pixel unprojected through `camera`, rotated, projected. A point that cannot be unprojected, or
    that the rotation takes behind the camera, keeps its position. Returns (N, 2) float32: the `predictions` that
    FeatureTracker.track takes for the tracks of its previous call."""
    import kestrel
    xy = np.asarray(xy, dtype=np.float32).reshape(-1, 2)
    if len(xy) == 0:
        return xy.copy()
    norm, status = kestrel.unproject(camera, xy)
    rays = np.column_stack([norm, np.ones(len(norm))]) @ np.asarray(R, np.float64).reshape(3, 3).T
    ok = (status == 0) & np.isfinite(rays).all(1) & (rays[:, 2] > 1e-6)
    out = xy.copy()
    if ok.any():
        px = kestrel.project(camera, rays[ok, :2] / rays[ok, 2:3])
        good = np.isfinite(px).all(1)
        idx = np.flatnonzero(ok)[good]
        out[idx] = px[good].astype(np.float32)
    return out
