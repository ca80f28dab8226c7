"""check.py: loads a built fb_cub extension and compares fb_cub::rowsum, rowscan and rowsort
with PyTorch's own sum, cumsum and sort along rows on the CPU; with --cuda also the ops on CUDA
tensors (where the CUB kernels run), their results against that CPU reference. Prints one line
per check; exit 1 on a mismatch.
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
    x = torch.randn(7, 1000)
    want = {"rowsum": x.sum(1), "rowscan": x.cumsum(1), "rowsort": x.sort(1)[0]}
    for dev in ["cpu"] + (["cuda"] if cuda else []):
        xd = x.to(dev)
        for name in ["rowsum", "rowscan", "rowsort"]:
            out = getattr(torch.ops.fb_cub, name)(xd)
            got = out.cpu()
            ok = out.device == xd.device and got.shape == want[name].shape and \
                torch.allclose(got, want[name], rtol=1e-4, atol=1e-3)
            print("%s %s on %s" % ("ok" if ok else "MISMATCH", name, dev))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
