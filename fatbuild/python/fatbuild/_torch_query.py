"""_torch_query.py: what `fatbuild build --torch` asks a Python about its torch, one
"fbtq KEY=VALUE" line each (docs/pytorch.md "The torch query"). The one copy: fatbuild runs this
file's text with `python -c` (CMake embeds it into fatbuild/extension/torch.c), and
fatbuild.load() and build() call answer() in the process that has torch imported already,
sparing a cold build a second Python."""
import os
import re
import sys
import sysconfig


def cxx_std(ce):
    """The C++ standard torch's builder names ("c++20" for torch 2.15): the highest -std=c++NN
    in its source."""
    with open(ce.__file__) as f:
        stds = [int(x) for x in re.findall(r"-std=c\+\+(\d+)", f.read()) if int(x) < 50]
    return "c++%d" % (max(stds) if stds else 17)


def answer(torch, ce):
    """The answer lines for torch and its torch.utils.cpp_extension ce."""
    out = []

    def p(k, v):
        out.append("fbtq %s=%s" % (k, v))

    p("version", torch.__version__)
    p("cuda", torch.version.cuda or "")
    p("abi", int(bool(torch._C._GLIBCXX_USE_CXX11_ABI)))
    for d in ce.include_paths():
        p("include", d)
    p("libdir", getattr(ce, "TORCH_LIB_PATH", os.path.join(os.path.dirname(torch.__file__), "lib")))
    p("pyinclude", sysconfig.get_path("include", scheme="posix_prefix"))
    p("extsuffix", sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    p("std", cxx_std(ce))
    # torch's own files: the cached answer stands while they do
    for f in (torch.__file__, os.path.join(os.path.dirname(torch.__file__), "version.py")):
        st = os.stat(f)
        p("stamp", "%d %d %s" % (st.st_mtime_ns, st.st_size, f))
    return out


if __name__ == "__main__":
    try:
        import torch
        import torch.utils.cpp_extension as torch_ce
    except Exception as e:
        print("fbtq error=" + (type(e).__name__ + ": " + str(e)).splitlines()[0])
        sys.exit(3)
    print("\n".join(answer(torch, torch_ce)))
