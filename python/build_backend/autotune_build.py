"""A PEP 517 build backend for the autotune_dispatch package, written with
the standard library only: the package is a folder of .py files, so a
wheel is a zip of them plus the metadata, and an editable install is a
.pth file naming this folder. Reads name, description, requires-python
and the optional dependencies from pyproject.toml; the version is the
library's, ATD_VERSION_STRING of include/autotune/dispatch.h (one number
for the CLI, the library, its .pc and this package), or, in an unpacked
sdist, the one its PKG-INFO kept.

A wheel built from a source checkout (`pip install ./python` builds in
place) records the checkout's path in its autotune_dispatch/_build_info.py,
so that the installed package finds the library that `make lib` builds
there (library.py).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "autotune_dispatch"


def _project():
    """The [project] fields this backend uses, from pyproject.toml."""
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    fields, extras, section = {}, {}, None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
            continue
        m = re.match(r'([\w-]+)\s*=\s*"([^"]*)"$', line)
        if m and section == "project":
            fields[m.group(1)] = m.group(2)
        m = re.match(r'([\w-]+)\s*=\s*\[(.*)\]$', line)
        if m and section == "project.optional-dependencies":
            extras[m.group(1)] = re.findall(r'"([^"]+)"', m.group(2))
    return fields, extras


def _version():
    """The header's ATD_VERSION_STRING, in a checkout; else the Version of
    the PKG-INFO that build_sdist wrote."""
    checkout = _checkout()
    if checkout:
        path, pattern = os.path.join(checkout, "include", "autotune", "dispatch.h"), \
            r'^#define ATD_VERSION_STRING "([^"]+)"'
    else:
        path, pattern = os.path.join(ROOT, "PKG-INFO"), r"^Version: (\S+)$"
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        text = ""
    m = re.search(pattern, text, re.M)
    if not m:
        raise RuntimeError(f"autotune_build: no version: {path} lacks it (build from a source "
                           f"checkout, or from an sdist of one)")
    return m.group(1)


def _metadata():
    fields, extras = _project()
    fields["version"] = _version()
    lines = ["Metadata-Version: 2.1", f"Name: {fields['name']}", f"Version: {fields['version']}",
             f"Summary: {fields.get('description', '')}"]
    if "requires-python" in fields:
        lines.append(f"Requires-Python: {fields['requires-python']}")
    for extra, reqs in extras.items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    return fields, "\n".join(lines) + "\n"


def _dist(fields):
    return re.sub(r"[-_.]+", "_", fields["name"]).lower() + "-" + fields["version"]


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files):
    fields, metadata = _metadata()
    dist = _dist(fields)
    info = f"{dist}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: autotune_build\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0)), d)
    return name


def _package_files():
    folder = os.path.join(ROOT, PACKAGE)
    return {f"{PACKAGE}/{n}": open(os.path.join(folder, n), "rb").read()
            for n in sorted(os.listdir(folder)) if n.endswith(".py")}


def _checkout():
    """The source checkout this python/ folder is in, or None (an sdist
    unpacked elsewhere, a copy)."""
    root = os.path.dirname(ROOT)
    if os.path.isfile(os.path.join(root, "include", "autotune", "dispatch.h")):
        return root
    return None


def _wheel_files():
    """The package's files, its _build_info.py saying what was known here."""
    files = _package_files()
    info = f"{PACKAGE}/_build_info.py"
    files[info] += (f"\n# written by the build backend\nCHECKOUT = {_checkout()!r}\n"
                    f"VERSION = {_version()!r}\n").encode()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_sdist = get_requires_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _wheel_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {f"{PACKAGE}.pth": (ROOT + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    fields, metadata = _metadata()
    dist = _dist(fields)
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "build_backend/autotune_build.py"] + \
                [n for n in _package_files()]:
            tar.add(os.path.join(ROOT, rel), arcname=f"{dist}/{rel}")
        info = tarfile.TarInfo(f"{dist}/PKG-INFO")
        info.size = len(metadata.encode())
        tar.addfile(info, io.BytesIO(metadata.encode()))
    return name
