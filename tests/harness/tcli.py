"""Python bindings for TCLIService, generated from the repository's IDL with Debian's
thrift-compiler. Unlike the ones PyHive ships (from an old compiler), they work with
thrift's C-accelerated protocol, which keeps multi-million-row fetches quick."""

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

from .engine import REPO_ROOT

IDL = REPO_ROOT / "thrift-idl" / "TCLIService.thrift"
PACKAGE = "kumiho_tcli"


def _generate():
    out = Path(tempfile.mkdtemp(prefix="kumiho-tcli-py-"))
    subprocess.run(
        ["thrift", "--gen", "py", "-out", str(out), str(IDL)],
        check=True,
        capture_output=True,
    )
    # The generated modules import each other relatively: the package can be renamed,
    # so that it does not shadow PyHive's own `TCLIService` package.
    (out / "TCLIService").rename(out / PACKAGE)
    sys.path.insert(0, str(out))
    return (
        importlib.import_module(f"{PACKAGE}.TCLIService"),
        importlib.import_module(f"{PACKAGE}.ttypes"),
    )


TCLIService, ttypes = _generate()
