# --help teaches on stdout with exit 0.
$FATBUILD flags --help
