"""The example (python/examples/track_and_plot.py) and the overhead benchmark (python/bench/bench_detect.py) run
end to end on generated frames."""
import runpy
import subprocess
import sys

import numpy as np
import pytest

import kestrel
from conftest import ROOT, shifted, textured_image


def test_track_and_plot_on_an_image_folder(tmp_path):
    pytest.importorskip("matplotlib", reason="SKIPPED: the example needs matplotlib (pip install matplotlib)")
    from PIL import Image
    frames = tmp_path / "frames"
    frames.mkdir()
    base = textured_image(240, 320, seed=30)
    for i in range(6):
        rgb = np.repeat(shifted(base, 2 * i, i)[:, :, None], 3, axis=2)  # colour frames: converted to grey
        Image.fromarray(rgb).save(frames / ("%03d.png" % i))
    out = tmp_path / "tracks.png"
    r = subprocess.run([sys.executable, str(ROOT / "python/examples/track_and_plot.py"), str(frames), "--out",
                        str(out), "--backend", "cpu", "--features", "80"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "320x240 frames, backend Cpu" in r.stdout and "frames 6; tracks born" in r.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(out) as im:
        assert im.size[0] >= 300 and im.size[1] >= 200
    r = subprocess.run([sys.executable, str(ROOT / "python/examples/track_and_plot.py"), str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert r.returncode != 0


def test_bench_detect_runs(tmp_path, capsys):
    img = textured_image(576, 768, seed=31)
    pgm = tmp_path / "frame.pgm"
    pgm.write_bytes(b"P5\n768 576\n255\n" + img.tobytes())
    sys_argv = sys.argv
    sys.argv = ["bench_detect.py", "--image", str(pgm), "--iterations", "10"]
    try:
        runpy.run_path(str(ROOT / "python/bench/bench_detect.py"), run_name="__main__")
    finally:
        sys.argv = sys_argv
    out = capsys.readouterr().out
    assert "detect/python-overhead/752x480/cpu" in out and "overhead" in out


def test_bench_helper_validates():
    det = kestrel.FeatureDetector(backend=kestrel.Backend.Cpu)
    assert kestrel._kestrel._bench_detect_cpp(det, textured_image(64, 64), 3) > 0
    with pytest.raises(kestrel.InvalidArgument, match="iterations"):
        kestrel._kestrel._bench_detect_cpp(det, textured_image(64, 64), 0)
