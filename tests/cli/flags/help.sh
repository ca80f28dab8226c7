# --help teaches on stdout with exit 0.
echo "+ fatbuild flags --help" >&2
$FATBUILD flags --help
