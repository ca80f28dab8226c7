"""check.py: loads a built muladd extension and compares fb_muladd::muladd with PyTorch's own
a * b + c, on the CPU (and with --cuda on the GPU too). Prints one line per check; exit 1 on
a mismatch.
    check.py --library PATH        torch.ops.load_library(PATH)
    check.py --module DIR NAME     import NAME from DIR (a --python-module build)
    check.py --package NAME        import NAME (installed, e.g. by setup.py)
"""
import importlib
import os
import sys

# Not this directory's fb_muladd (the sources) but the one built or installed.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import torch  # noqa: E402


def main(argv):
    cuda = "--cuda" in argv
    argv = [a for a in argv if a != "--cuda"]
    if argv[0] == "--library":
        torch.ops.load_library(argv[1])
        what = "load_library " + argv[1]
    elif argv[0] == "--module":
        sys.path.insert(0, argv[1])
        mod = importlib.import_module(argv[2])
        what = "import %s from %s" % (argv[2], mod.__file__)
    elif argv[0] == "--package":
        mod = importlib.import_module(argv[1])
        what = "import %s" % argv[1]
    else:
        raise SystemExit(__doc__)
    torch.manual_seed(0)
    devices = ["cpu"] + (["cuda"] if cuda else [])
    bad = 0
    for dev in devices:
        a = torch.randn(4097, device=dev)
        b = torch.randn(4097, device=dev)
        got = torch.ops.fb_muladd.muladd(a, b, 0.75)
        want = a * b + 0.75
        err = (got - want).abs().max().item()
        ok = got.shape == want.shape and got.device == want.device and torch.allclose(got, want, rtol=1e-6, atol=1e-6)
        print("%s: %s muladd max |error| %.3g: %s" % (what, dev, err, "ok" if ok else "MISMATCH"))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
