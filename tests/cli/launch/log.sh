# FATBUILD_LAUNCH_LOG that cannot be written (a missing folder, a directory, a FIFO nobody
# reads, which an open for writing would wait on for ever): one line on stderr naming it and
# why, nothing on stdout but the compiler's, and the compiler's exit status; a log that can be
# written gets its line. The compiler is a script named cc that prints and exits 3.
. "$FB_TESTS_DIR/cli/lib.sh"
mkdir bin
printf '#!/bin/sh\necho "cc ran: $*"\nexit 3\n' >bin/cc
chmod +x bin/cc
mkfifo fifo
run2 FATBUILD_LAUNCH_LOG=/nonexistent/dir/launch.log $FATBUILD "$PWD/bin/cc" -c x.c
run2 FATBUILD_LAUNCH_LOG=$PWD timeout 10 $FATBUILD "$PWD/bin/cc" -c x.c
run2 FATBUILD_LAUNCH_LOG=$PWD/fifo timeout 10 $FATBUILD "$PWD/bin/cc" -c x.c
run2 FATBUILD_LAUNCH_LOG=$PWD/launch.log $FATBUILD "$PWD/bin/cc" -c x.c
cat launch.log
