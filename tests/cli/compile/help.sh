# --help teaches: stdout, exit 0.
$FATBUILD compile --help
$FATBUILD cache --help
