# setup.py: the package is pure Python; with FATBUILD_BUNDLE=PREFIX (a `cmake --install`
# prefix) the wheel also carries PREFIX's fatbuild and archprobe, libfatbuild_runtime.a and
# fatbuild_runtime.h under fatbuild/_bundle/, where fatbuild finds them (../lib, ../include).
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLE = (("bin", "fatbuild"), ("bin", "archprobe"), ("lib", "libfatbuild_runtime.a"),
          ("include", "fatbuild_runtime.h"))


class build_py_bundle(build_py):
    def run(self):
        super().run()
        prefix = os.environ.get("FATBUILD_BUNDLE")
        if not prefix:
            return
        for sub, name in BUNDLE:
            src = os.path.join(prefix, sub, name)
            if not os.path.isfile(src):
                raise SystemExit(f"FATBUILD_BUNDLE={prefix}: {src} is missing (a `cmake --install` prefix?)")
            dst = os.path.join(self.build_lib, "fatbuild", "_bundle", sub)
            os.makedirs(dst, exist_ok=True)
            shutil.copy2(src, dst)


cmdclass = {"build_py": build_py_bundle}
try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None

if bdist_wheel is not None and os.environ.get("FATBUILD_BUNDLE"):
    class bdist_wheel_bundle(bdist_wheel):
        # Carrying programs, the wheel is for this platform, though for any Python 3.
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = bdist_wheel_bundle

setup(cmdclass=cmdclass)
