#!/usr/bin/env python3
"""make dist: writes the wheel (PEP 427) that carries the staged bundle; pip puts cprof-run and cprof on PATH."""
import base64
import hashlib
import os
import sys
import zipfile

LAUNCH = '''"""Console scripts: each runs the bundle's own executable, which finds the rest relative to itself."""
import os
import sys

_BUNDLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundle")


def _exec(name):
    path = os.path.join(_BUNDLE, "bin", name)
    try:
        os.execv(path, [name] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("cprof: cannot run %s: %s\\n" % (path, e.strerror))
        sys.exit(126)


def cprof_run():
    _exec("cprof-run")


def cprof():
    _exec("cprof")


def cprof_gpu_check():
    _exec("cprof-gpu-check")
'''


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    if len(sys.argv) != 5:
        sys.stderr.write("usage: mkwheel.py STAGE VERSION PLATFORM_TAG OUTDIR\n")
        return 2
    stage, version, plat, outdir = sys.argv[1:]
    tag = "py3-none-" + plat
    dist_info = "cprof-%s.dist-info" % version
    path = os.path.join(outdir, "cprof-%s-%s.whl" % (version, tag))
    record = []

    def add(zf, name, data, mode=0o644):
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, data)
        record.append("%s,%s,%d" % (name, digest(data), len(data)))

    with zipfile.ZipFile(path + ".tmp", "w") as zf:
        add(zf, "cprof/__init__.py", ('"""cprof, a CUDA profiler: the bundle and its launchers."""\n'
                                      '__version__ = "%s"\n' % version).encode())
        add(zf, "cprof/_launch.py", LAUNCH.encode())
        for top, dirs, files in os.walk(stage):
            dirs.sort()
            for f in sorted(files):
                full = os.path.join(top, f)
                if os.path.islink(full):
                    raise SystemExit("mkwheel: %s is a link; wheels carry none" % full)
                rel = os.path.relpath(full, stage)
                mode = 0o755 if os.access(full, os.X_OK) else 0o644
                with open(full, "rb") as fh:
                    data = fh.read()
                add(zf, "cprof/bundle/" + rel, data, mode)
                # man pages also as data files: pip puts them in the environment's share/man/man1
                if rel.startswith("share/man/"):
                    add(zf, "cprof-%s.data/data/%s" % (version, rel), data)
        add(zf, dist_info + "/METADATA", (
            "Metadata-Version: 2.1\nName: cprof\nVersion: %s\n"
            "Summary: CUDA profiler: cprof-run -- CMD profiles any CUDA program; cprof reports it\n"
            "Requires-Python: >=3.8\n" % version).encode())
        add(zf, dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: cprof scripts/mkwheel.py\n"
                                       "Root-Is-Purelib: false\nTag: %s\n" % tag).encode())
        add(zf, dist_info + "/entry_points.txt", (
            "[console_scripts]\ncprof-run = cprof._launch:cprof_run\ncprof = cprof._launch:cprof\n"
            "cprof-gpu-check = cprof._launch:cprof_gpu_check\n").encode())
        add(zf, dist_info + "/top_level.txt", b"cprof\n")
        record.append(dist_info + "/RECORD,,")
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        zf.writestr(info, "\n".join(record) + "\n")
    os.rename(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
