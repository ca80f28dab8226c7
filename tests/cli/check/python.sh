# --python PY: the interpreter's purelib and platlib (a stand-in interpreter here prints them as
# fatbuild asks), walked as directories; an interpreter that does not answer is an error.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a80.ptx
mkdir -p env/lib/site-packages env/lib64/site-packages/fast env/lib64/site-packages/fast-1.2.dist-info
$FATBUILD pack -o env/lib64/site-packages/fast/k.fatbin a80.ptx
printf 'Name: fast\nVersion: 1.2\n' >env/lib64/site-packages/fast-1.2.dist-info/METADATA
printf 'fast/k.fatbin,,\n' >env/lib64/site-packages/fast-1.2.dist-info/RECORD
printf '#!/bin/sh\n[ "$1" = -I ] && [ "$2" = -c ] || exit 9\necho "fbsite %s/env/lib/site-packages"\necho "fbsite %s/env/lib64/site-packages"\n' "$PWD" "$PWD" >py
printf '#!/bin/sh\necho "Traceback: no" >&2\nexit 1\n' >badpy
chmod +x py badpy
run $FATBUILD check --arch 8.0,12.0 --python ./py
run $FATBUILD check --arch 8.0 --python ./badpy
run $FATBUILD check --arch 8.0 --python ./no-such-python
