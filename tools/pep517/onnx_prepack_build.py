"""PEP 517 backend of onnx-prepack's Python package (pyproject.toml).

build_wheel configures and builds the CMake target onnx_prepack_python (in a
temporary folder, or in ONNX_PREPACK_BUILD_DIR when set, e.g. an existing
build/ to reuse its objects), then zips build/python/onnx_prepack/ into a wheel
for this interpreter: the compiled core, its private libprotobuf copy, the
Python files and stubs. No network, no third-party build requirement.
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = "onnx_prepack"


def _version():
    text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"project\(onnx_prepack VERSION ([0-9.]+)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: no project(onnx_prepack VERSION ...)")
    return m.group(1)


def _tag():
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    py = f"{impl}{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return py, py, plat


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: onnx-prepack\nVersion: {version}\n"
            "Summary: ONNX models that load fast: persisted packed weights, checked against "
            "their source\nRequires-Python: >=3.9\nRequires-Dist: numpy\n")


def _build(build_dir):
    # An existing build folder (ONNX_PREPACK_BUILD_DIR) keeps its configuration:
    # only the package's target is brought up to date.
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, *generator,
                        "-DCMAKE_BUILD_TYPE=Release", "-DONNX_PREPACK_TESTS=OFF",
                        "-DONNX_PREPACK_BENCH=OFF", f"-DPython3_EXECUTABLE={_system_python()}"],
                       check=True, stdout=sys.stderr)
    subprocess.run(["cmake", "--build", build_dir, "--target", "onnx_prepack_python",
                    "-j", str(os.cpu_count() or 1)], check=True, stdout=sys.stderr)
    package = os.path.join(build_dir, "python", NAME)
    if not os.path.isfile(os.path.join(package, "__init__.py")):
        raise RuntimeError(f"{package}: the build made no Python package (are python3-dev and "
                           "pybind11-dev installed?)")
    return package


def _system_python():
    # The interpreter whose headers and site the package is for: inside pip's
    # isolated build env sys.executable is a venv's, whose base is the real one.
    return getattr(sys, "_base_executable", sys.executable) or sys.executable


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(package, wheel_directory):
    version = _version()
    py, abi, plat = _tag()
    tag = f"{py}-{abi}-{plat}"
    wheel_name = f"{NAME}-{version}-{tag}.whl"
    dist_info = f"{NAME}-{version}.dist-info"
    records = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(package)):
            full = os.path.join(package, name)
            if not os.path.isfile(full) or name.endswith(".pyc"):
                continue
            data = open(full, "rb").read()
            arc = f"{NAME}/{name}"
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (os.stat(full).st_mode & 0o777) << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
            records.append(_record_line(arc, data))
        meta = {
            "METADATA": _metadata(version),
            "WHEEL": ("Wheel-Version: 1.0\nGenerator: onnx_prepack_build\n"
                      f"Root-Is-Purelib: false\nTag: {tag}\n"),
        }
        for name, text in meta.items():
            arc = f"{dist_info}/{name}"
            z.writestr(zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0)), text)
            records.append(_record_line(arc, text.encode()))
        records.append(f"{dist_info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                   "\n".join(records) + "\n")
    return wheel_name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    # Without this hook pip builds the whole wheel once just to read its metadata.
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    py, abi, plat = _tag()
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as f:
        f.write(_metadata(version))
    with open(os.path.join(metadata_directory, dist_info, "WHEEL"), "w") as f:
        f.write("Wheel-Version: 1.0\nGenerator: onnx_prepack_build\n"
                f"Root-Is-Purelib: false\nTag: {py}-{abi}-{plat}\n")
    return dist_info


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build_dir = os.environ.get("ONNX_PREPACK_BUILD_DIR")
    if build_dir:
        return _write_wheel(_build(os.path.abspath(build_dir)), wheel_directory)
    with tempfile.TemporaryDirectory(prefix="onnx-prepack-wheel-") as tmp:
        return _write_wheel(_build(tmp), wheel_directory)


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    version = _version()
    name = f"onnx_prepack-{version}"
    files = subprocess.run(["git", "-C", ROOT, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    path = os.path.join(sdist_directory, name + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for f in files:
            t.add(os.path.join(ROOT, f), arcname=f"{name}/{f}")
        data = _metadata(version).encode()
        info = tarfile.TarInfo(f"{name}/PKG-INFO")
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name + ".tar.gz"
