#!/usr/bin/env python3
"""Regenerates python/kestrel/_kestrel.pyi (committed) from the built module: nanobind's stub generator, then the
types nanobind cannot know (array arguments and results, streams, backends, exceptions) filled in.

    PYTHONPATH=<build>/python python3 python/tools/stubgen.py
"""
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "kestrel" / "_kestrel.pyi"

HEADER = '''
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
'''


def main():
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-m", "kestrel._kestrel", "-o", str(OUT)], check=True)
    s = OUT.read_text()
    s = re.sub(r"from kestrel import \([^)]*\)\n", "", s)
    s = s.replace("import numpy.dtypes\n", "import numpy.dtypes\n" + HEADER, 1)
    for name in ("image", "frame"):
        s = s.replace("%s: object" % name, "%s: ImageLike" % name)
    s = s.replace("stream: object | None", "stream: StreamLike | None")
    s = s.replace("backend: object | None", "backend: Backend | None")
    for name in ("predictions", "query_pos", "train_pos", "points", "pixels", "query", "train", "x1", "x2",
                 "rotation_prior"):
        s = s.replace("%s: object" % name, "%s: numpy.typing.ArrayLike" % name)
    s = s.replace(") -> object:", ") -> NDArray:")
    s = re.sub(r"(def unproject\(.*\)) -> tuple:", r"\1 -> tuple[NDArray, NDArray]:", s)
    s = re.sub(r"(def estimate\(.*\)) -> tuple:", r"\1 -> tuple[RelativePoseResult, NDArray]:", s)
    s = s.replace("frames: Sequence,", "frames: Sequence[ImageLike],")
    s = s.replace(") -> list:", ") -> list[NDArray]:")
    s = re.sub(r"(def (angles|descriptors)\(self\)) -> NDArray:", r"\1 -> NDArray | None:", s)
    OUT.write_text(s)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
