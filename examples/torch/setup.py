# setup.py: the muladd example as an installable package, built by fatbuild through its
# setuptools command (pip install ., or with --no-build-isolation): no compiler flags, paths or
# libraries here; fatbuild asks this Python's torch for them.
from setuptools import setup

from fatbuild.setuptools import BuildExtension, CUDAExtension

setup(
    name="fb_muladd",
    version="0.1.0",
    packages=["fb_muladd"],
    ext_modules=[CUDAExtension("fb_muladd._C", ["muladd.cpp", "muladd.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
