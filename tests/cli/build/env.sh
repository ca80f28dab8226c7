# env: what the build will use, how each piece was found; a missing ninja is named (exit 1).
. "$FB_TESTS_DIR/cli/lib.sh"
$FATBUILD env --help | head -n 1
$FATBUILD env | cut -c1-10 | sed 's/ *$//'
$FATBUILD env --include-paths | sed "s|^$FB_CUDA_HOME|CUDA|" | while read -r d; do [ -d "${d/#CUDA/$FB_CUDA_HOME}" ] && echo "dir ${d##*/}"; done
run FATBUILD_NINJA=/nonexistent/ninja $FATBUILD env | grep -E '^(\$ |\[exit |ninja |fatbuild: )'
$FATBUILD env --bogus 2>&1 | head -n 1
# the compile server's switch, read as every FATBUILD_* switch (no, off, false, 0; any case)
for v in 0 no OFF false 1 yes bogus; do echo "FATBUILD_COMPILE_SERVER=$v: $(FATBUILD_COMPILE_SERVER=$v $FATBUILD env | awk '$1 == "server" { print $2 }')"; done
