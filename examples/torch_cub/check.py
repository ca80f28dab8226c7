"""check.py: loads a built fb_cub extension and compares fb_cub::rowsum, rowscan and rowsort
with PyTorch's own sum, cumsum and sort along rows, on the CPU (and with --cuda on the GPU
too, where the CUB kernels run). Prints one line per check; exit 1 on a mismatch.
    check.py --module DIR NAME [--cuda]     import NAME from DIR (a --python-module build)
    check.py --library PATH [--cuda]        torch.ops.load_library(PATH)
"""
import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import torch  # noqa: E402


def main(argv):
    cuda = "--cuda" in argv
    argv = [a for a in argv if a != "--cuda"]
    if argv[:1] == ["--module"] and len(argv) == 3:
        sys.path.insert(0, argv[1])
        importlib.import_module(argv[2])
    elif argv[:1] == ["--library"] and len(argv) == 2:
        torch.ops.load_library(argv[1])
    else:
        raise SystemExit(__doc__)
    torch.manual_seed(0)
    bad = 0
    for dev in ["cpu"] + (["cuda"] if cuda else []):
        x = torch.randn(7, 1000, device=dev)
        checks = [
            ("rowsum", torch.ops.fb_cub.rowsum(x), x.sum(1)),
            ("rowscan", torch.ops.fb_cub.rowscan(x), x.cumsum(1)),
            ("rowsort", torch.ops.fb_cub.rowsort(x), x.sort(1)[0]),
        ]
        for name, got, want in checks:
            ok = got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-3)
            print("%s %s on %s" % ("ok" if ok else "MISMATCH", name, dev))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
