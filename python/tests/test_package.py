"""The package: version, exports, type stubs in step with the compiled module."""
import re
from pathlib import Path

import kestrel
from conftest import ROOT


def test_version_matches_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "%s"$' % re.escape(kestrel.__version__), text, re.M)


def test_stubs_cover_the_module():
    pkg = Path(kestrel.__file__).parent
    stub = (pkg / "_kestrel.pyi").read_text()
    assert (pkg / "py.typed").exists()
    public = [n for n in dir(kestrel._kestrel) if not n.startswith("_")]
    assert len(public) > 30
    missing = [n for n in public
               if not re.search(r"^(class|def) %s\b|^%s(: | = )" % (n, n), stub, re.M)]
    assert not missing, "python/kestrel/_kestrel.pyi lacks %s: rerun python/tools/stubgen.py" % missing
    for n in public:
        assert hasattr(kestrel, n), "kestrel does not re-export %s" % n


def test_track_status_is_an_int_enum():
    assert kestrel.TrackStatus.LostResidual == 2 and int(kestrel.TrackStatus.LostAnchor) == 6
    assert issubclass(kestrel.InvalidArgument, ValueError) and issubclass(kestrel.Error, RuntimeError)
