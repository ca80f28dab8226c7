# --torch without an importable torch: Python's own reason and what to do, exit 1. The
# interpreter is a real Python with its site-packages turned off (-S), so torch cannot be found.
printf '#!/bin/sh\nexec python3 -S -s "$@"\n' >py
chmod +x py
printf 'int f(void);\n' >a.cpp
$FATBUILD build --torch --python ./py --build-dir bd -o x.so a.cpp 2>&1 | sed "s|$PWD|PWD|g"
echo "exit ${PIPESTATUS[0]}"
$FATBUILD build --torch --python ./nosuch --build-dir bd -o x.so a.cpp 2>&1
$FATBUILD build --python-module -o x.so a.cpp 2>&1 | head -n 1
$FATBUILD build --torch --python-module --build-dir bd -o dir/ a.cpp 2>&1
