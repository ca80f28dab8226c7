# --version: the tool, NVRTC's version and library, its arches.
$FATBUILD --version
