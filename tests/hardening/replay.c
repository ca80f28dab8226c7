/* replay.c: a main() for the libFuzzer targets, so that every build (gcc or clang, with or
 * without sanitizers) replays the seed corpora and the crash regressions in tests/hardening/.
 *   replay_fuzz_X FILE|DIR...   runs LLVMFuzzerTestOneInput once per file; prints the count */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: cannot open\n", path);
		return -1;
	}
	size_t cap = 4096, n = 0, r;
	unsigned char *buf = malloc(cap);
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			unsigned char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay: %s: out of memory\n", path);
		return -1;
	}
	/* an exact-size copy so that reads past the end are caught by ASan/valgrind */
	unsigned char *exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(int argc, char **argv)
{
	int count = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue; /* a target without regressions yet */
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]) != 0;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			continue;
		char *names[4096];
		size_t n = 0;
		struct dirent *de;
		while ((de = readdir(d)) && n < 4096)
			if (de->d_name[0] != '.')
				names[n++] = strdup(de->d_name);
		closedir(d);
		qsort(names, n, sizeof(*names), cmp);
		for (size_t k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]);
			fprintf(stderr, "replay: %s\n", path);
			bad |= run_file(path) != 0;
			count++;
			free(names[k]);
		}
	}
	printf("replayed %d inputs\n", count);
	return bad ? 1 : 0;
}
