# FATBUILD_CACHE_MAX_SIZE and cache trim --max-size: one grammar (docs/caches.md "Size"): decimal
# digits, a fraction only before a unit, one unit k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti
# (of 1024), a trailing B; nothing else (no blank, sign, hexadecimal, exponent, and nothing past
# 2^64 - 1 bytes). Each accepted form shows the limit `cache stats` reads from it; each refused
# one is one line naming the variable or option, and exit 2 before anything runs.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache
unset FATBUILD_CACHE_MAX_SIZE
printf 'extern "C" __global__ void k(float *p) { p[0] = 1.f; }\n' >k.cu
for v in 0 123 2k 500M 5G 1T 10Ki 1.5GiB 4Mi 3KB 7g 0.5k 2.25Ti 007M 18446744073709551615 16777215Ti; do
	printf '%s: ' "$v"
	FATBUILD_CACHE_MAX_SIZE=$v $FATBUILD cache stats 2>&1 | sed -n 's/^limit: //p;/^fatbuild:/p'
done
for v in ' 5G' '5G ' '5 G' 0x10 1e9 1E3 1.5e3 -1 +5 .5G 5.G 1.5 1.5B 0.0001k 5X 5GG 5iB 5Bi 5b k 18446744073709551616 20000000T 16777216Ti 99999999999999999999999; do
	run2 FATBUILD_CACHE_MAX_SIZE="$v" $FATBUILD cache stats
done
run2 FATBUILD_CACHE_MAX_SIZE=1e9 $FATBUILD compile --arch-list 8.0 -o k.fatbin k.cu
run2 $FATBUILD cache trim --max-size 0x10
run2 $FATBUILD cache trim --max-size ' 5G'
run2 $FATBUILD cache trim --max-size ''
run2 $FATBUILD cache trim --max-size 1.5GiB
# fatbuild env: the cache line says the value is invalid, the one line on stderr says why
FATBUILD_CACHE_MAX_SIZE=1e9 $FATBUILD env 2>env.err | mask | grep '^cache '
mask <env.err
