"""fb_muladd: the muladd example as a package (setup.py builds fb_muladd._C with fatbuild)."""
import torch

from . import _C  # noqa: F401  (loading it registers torch.ops.fb_muladd)


def muladd(a, b, c):
    """a * b + c, by the extension's CPU or CUDA kernel."""
    return torch.ops.fb_muladd.muladd(a, b, c)
