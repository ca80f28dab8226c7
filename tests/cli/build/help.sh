# --help teaches: stdout, exit 0 (the man page and the completion are read from it).
$FATBUILD build --help
