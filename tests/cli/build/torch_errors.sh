# --torch without an importable torch: Python's own reason and what to do, exit 1. The
# interpreter is a real Python with its site-packages turned off (-S), so torch cannot be found.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '#!/bin/sh\nexec python3 -S -s "$@"\n' >py
chmod +x py
printf 'int f(void);\n' >a.cpp
run $FATBUILD build --torch --python ./py --build-dir bd -o x.so a.cpp
run $FATBUILD build --torch --python ./nosuch --build-dir bd -o x.so a.cpp
run1 $FATBUILD build --python-module -o x.so a.cpp
run $FATBUILD build --torch --python-module --build-dir bd -o dir/ a.cpp
