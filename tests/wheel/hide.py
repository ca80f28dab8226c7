"""hide.py FARM HOSTDIR ROOT...: for each ROOT (/usr/include, /usr/lib/x86_64-linux-gnu), FARM/ROOT
becomes a tree of symlinks to HOSTDIR/ROOT (where the sandbox mounts the real ROOT) without what a
machine that never built fatbuild lacks: the files of every -dev package but the C and C++
toolchain's own (libc6-dev, linux-libc-dev, libcrypt-dev, libgcc-*-dev, libstdc++-*-dev, and
libc's libnsl/libtirpc), and the runtime libraries the fatbuild programs link (libelf, libzstd,
liblz4, gRPC with libgpr, absl, re2, c-ares, upb, address_sorting). The sandbox (sandbox.sh) mounts
FARM/ROOT over ROOT. Prints one line: how many entries were left out, per ROOT."""
import os
import re
import subprocess
import sys

KEEP_DEV = re.compile(r"^(libc6|linux-libc|libcrypt|libgcc-[0-9]+|libstdc\+\+-[0-9]+|libnsl|libtirpc)-dev$")
HIDE_LIB = re.compile(r"^lib(elf[-.]|zstd\.|lz4\.|grpc|gpr\.|absl_|re2\.|cares\.|upb|address_sorting)")


def dev_files():
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\n"], capture_output=True, text=True,
                         check=True).stdout
    pkgs = [p.split()[0] for p in out.splitlines() if p.endswith(" installed")]
    hidden = [p for p in pkgs if p.endswith("-dev") and not KEEP_DEV.match(p)]
    files = set()
    for p in hidden:
        lst = subprocess.run(["dpkg", "-L", p], capture_output=True, text=True).stdout
        files.update(f for f in lst.splitlines() if f)
    return files


def farm(dst, host, root, hidden):
    left = 0
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        # A directory symlink is an entry, not walked.
        for n in [x for x in dirs if os.path.islink(os.path.join(d, x))] + names:
            p = os.path.join(d, n)
            if p in hidden or (d == root and HIDE_LIB.match(n)):
                left += 1
                continue
            os.symlink(os.path.join(host, os.path.relpath(p, "/")), os.path.join(dst, rel, n))
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(d, x))]
    return left


def main():
    dst, host, roots = sys.argv[1], sys.argv[2], sys.argv[3:]
    hidden = dev_files()
    counts = [f"{r}: {farm(os.path.join(dst, r.lstrip('/')), host, r, hidden)} hidden" for r in roots]
    print("; ".join(counts))


if __name__ == "__main__":
    main()
