/* safefs_test.c: the directory checks, mkdir -p modes and temporary files of base/safefs.c,
 * fb_write_file_atomic over planted names, and the probe cache's file check and temporary
 * (archprobe's use of base/safefs.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/safefs.h"
#include "fatbuild.h"

static char root[512];

static const char *
at(const char *name)
{
	static char buf[8][1024];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, name);
	return buf[i];
}

static unsigned
mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (unsigned)st.st_mode & 07777 : 0;
}

static char *
slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int
check(const char *path, unsigned flags, struct fb_error *e)
{
	memset(e, 0, sizeof(*e));
	return fb_dir_check(path, "build dir", "FIX", flags, e);
}

static void
test_dir_check(void)
{
	struct fb_error e;
	mkdir(at("mine"), 0700);
	chmod(at("mine"), 0700);
	CHECK(check(at("mine"), 0, &e) == 0);
	chmod(at("mine"), 0770);
	CHECK(check(at("mine"), 0, &e) == FB_EUNSAFE);
	CHECK(strstr(e.msg, "is group-writable") && strstr(e.msg, "mode 0770") && strstr(e.msg, "FIX"));
	CHECK(strstr(e.msg, at("mine")) != NULL);
	CHECK(check(at("mine"), FB_DIR_EXPLICIT, &e) == 0); /* named by the user, owned by the user */
	chmod(at("mine"), 0777);
	CHECK(check(at("mine"), FB_DIR_EXPLICIT, &e) == FB_EUNSAFE);
	CHECK(strstr(e.msg, "world-writable") != NULL);
	chmod(at("mine"), 0700);
	/* missing, or not a directory: I/O errors, not trust errors */
	CHECK(check(at("nothing"), 0, &e) == FB_EIO);
	put(at("afile"), "x");
	CHECK(check(at("afile"), 0, &e) == FB_EIO);
	/* a symlink of the user's, in a directory only the user can write: followed, target checked */
	symlink(at("mine"), at("link"));
	CHECK(check(at("link"), 0, &e) == 0);
	chmod(at("mine"), 0777);
	CHECK(check(at("link"), 0, &e) == FB_EUNSAFE);
	chmod(at("mine"), 0700);
	/* the same symlink in a directory others can write: refused; sticky: followed */
	mkdir(at("open"), 0777);
	chmod(at("open"), 0777);
	symlink(at("mine"), at("open/link"));
	CHECK(check(at("open/link"), 0, &e) == FB_EUNSAFE);
	CHECK(strstr(e.msg, "is a symlink in") && strstr(e.msg, "mode 0777"));
	CHECK(check(at("open/link/"), 0, &e) == FB_EUNSAFE); /* a trailing slash does not follow it */
	CHECK(check(at("open/link//"), 0, &e) == FB_EUNSAFE);
	chmod(at("open"), 01777);
	CHECK(check(at("open/link"), 0, &e) == 0);
	/* a shared cache: group-writable needs setgid and one of the user's groups */
	mkdir(at("team"), 0770);
	chmod(at("team"), 0770);
	CHECK(check(at("team"), FB_DIR_SHARED, &e) == FB_EUNSAFE);
	CHECK(strstr(e.msg, "setgid") != NULL);
	chmod(at("team"), 02770);
	CHECK(check(at("team"), FB_DIR_SHARED, &e) == 0);
	CHECK(check(at("team"), 0, &e) == FB_EUNSAFE); /* not without the opt-in */
	chmod(at("team"), 02777);
	CHECK(check(at("team"), FB_DIR_SHARED, &e) == FB_EUNSAFE);
	if (geteuid() == 0) {
		/* another owner: refused, named; a symlink another user planted: refused */
		chmod(at("mine"), 0755);
		CHECK(chown(at("mine"), 54322, 54322) == 0);
		CHECK(check(at("mine"), FB_DIR_EXPLICIT, &e) == FB_EUNSAFE);
		CHECK(strstr(e.msg, "is owned by uid 54322") && strstr(e.msg, "mode 0755") && strstr(e.msg, "not by you"));
		CHECK(chown(at("mine"), 0, 0) == 0);
		CHECK(lchown(at("link"), 54322, 54322) == 0);
		CHECK(check(at("link"), 0, &e) == FB_EUNSAFE);
		CHECK(strstr(e.msg, "is a symlink owned by uid 54322") != NULL);
		/* with the opt-in, a team member's setgid dir of one of our groups is fine */
		CHECK(chown(at("team"), 54322, getegid()) == 0);
		chmod(at("team"), 02770);
		CHECK(check(at("team"), FB_DIR_SHARED, &e) == 0);
		CHECK(check(at("team"), FB_DIR_EXPLICIT, &e) == FB_EUNSAFE);
	}
}

static void
test_dir_make(void)
{
	struct fb_error e = {0};
	mode_t old = umask(0); /* the modes are fatbuild's, not the umask's */
	CHECK(fb_dir_make(at("a/b/c"), "build dir", "FIX", 0, &e) == 0);
	CHECK(mode_of(at("a")) == 0700 && mode_of(at("a/b")) == 0700 && mode_of(at("a/b/c")) == 0700);
	CHECK(fb_dir_make(at("a/b/c"), "build dir", "FIX", 0, &e) == 0); /* exists: checked only */
	umask(077);
	CHECK(fb_dir_make(at("s/shard"), "cache dir", "FIX", FB_DIR_SHARED, &e) == 0);
	CHECK(mode_of(at("s")) == 0700 && mode_of(at("s/shard")) == 02770);
	umask(0);
	mkdir(at("ww"), 0777);
	CHECK(fb_dir_make(at("ww"), "build dir", "FIX", 0, &e) == FB_EUNSAFE);
	umask(old);
}

static void
test_tmp_and_atomic(void)
{
	struct fb_error e = {0};
	char t1[1024], t2[1024];
	int f1, f2;
	mode_t old = umask(027);
	CHECK(fb_tmp_open(at("out.bin"), 0666, t1, sizeof(t1), &f1, &e) == 0);
	CHECK(fb_tmp_open(at("out.bin"), 0666, t2, sizeof(t2), &f2, &e) == 0);
	CHECK(strcmp(t1, t2) != 0);                                      /* random, not the pid */
	CHECK(strncmp(t1, at("out.bin.tmp."), strlen(at("out.bin.tmp."))) == 0 && strlen(t1) == strlen(at("out.bin.tmp.")) + 10);
	CHECK(mode_of(t1) == 0640);                                      /* through the umask */
	close(f1);
	close(f2);
	unlink(t1);
	unlink(t2);
	/* outputs keep the umask; a symlink at the target is replaced, not followed; planted files
	 * at the old predictable names are left alone */
	put(at("victim"), "victim");
	symlink(at("victim"), at("o.fatbin"));
	char pidname[1024];
	snprintf(pidname, sizeof(pidname), "%s.tmp.%ld", at("o.fatbin"), (long)getpid());
	symlink(at("victim"), pidname);
	umask(002);
	CHECK(fb_write_file_atomic(at("o.fatbin"), "new", 3, 0, &e) == 0);
	CHECK_STR(slurp(at("victim")), "victim");
	CHECK_STR(slurp(at("o.fatbin")), "new");
	CHECK(mode_of(at("o.fatbin")) == 0664);
	struct stat st;
	CHECK(lstat(pidname, &st) == 0 && S_ISLNK(st.st_mode));
	umask(old);
}

static void
test_probe_cache(void)
{
	char why[1200];
	mkdir(at("pc"), 0700);
	CHECK(fb_file_trusted(at("pc/probe"), why, sizeof(why)));      /* missing file: fine */
	put(at("pc/probe"), "x");
	chmod(at("pc/probe"), 0600);
	CHECK(fb_file_trusted(at("pc/probe"), why, sizeof(why)));
	chmod(at("pc/probe"), 0620);
	CHECK(!fb_file_trusted(at("pc/probe"), why, sizeof(why)) && strstr(why, "mode 0620"));
	unlink(at("pc/probe"));
	symlink(at("victim"), at("pc/probe"));
	CHECK(!fb_file_trusted(at("pc/probe"), why, sizeof(why)) && strstr(why, "a symlink"));
	unlink(at("pc/probe"));
	chmod(at("pc"), 0770);
	CHECK(!fb_file_trusted(at("pc/probe"), why, sizeof(why)) && strstr(why, "mode 0770"));
	chmod(at("pc"), 0700);
	char tmp[1200];
	int fd = -1;
	CHECK(fb_tmp_open(at("pc/probe"), 0600, tmp, sizeof(tmp), &fd, NULL) == 0 && fd >= 0 && mode_of(tmp) == 0600);
	if (fd >= 0)
		close(fd);
}

/* Only regular files are opened, and a FIFO without a writer never blocks the open. */
static void
test_open_regular(void)
{
	struct fb_error err = {0};
	int fd = -2;
	put(at("reg"), "x");
	CHECK(fb_open_regular(at("reg"), 0, &fd, NULL, &err) == 0 && fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(mkfifo(at("fifo"), 0600) == 0);
	CHECK(fb_open_regular(at("fifo"), 0, &fd, NULL, &err) == FB_EIO && fd == -1);
	CHECK(strstr(err.msg, "fifo: not a regular file (a FIFO)") != NULL);
	CHECK(fb_open_regular("/dev/zero", 0, &fd, NULL, &err) == FB_EIO);
	CHECK(strstr(err.msg, "/dev/zero: not a regular file (a character device)") != NULL);
	char *data = NULL;
	size_t n = 0;
	CHECK(fb_read_file(at("fifo"), &data, &n, &err) == FB_EIO && !data);
	symlink(at("reg"), at("reglink"));
	CHECK(fb_open_regular(at("reglink"), O_NOFOLLOW, &fd, NULL, &err) == FB_EIO); /* ELOOP */
	FILE *f = fb_fopen_regular(at("fifo"), 0);
	CHECK(!f);
	f = fb_fopen_regular(at("reg"), 0);
	CHECK(f != NULL);
	if (f)
		fclose(f);
}

/* An output is never an input (by path, hard link or symlink) nor anything but a file. */
static void
test_output_check(void)
{
	struct fb_error err = {0};
	char reg[1024];
	snprintf(reg, sizeof(reg), "%s", at("reg")); /* at() reuses its buffers */
	const char *in[] = {reg};
	CHECK(fb_output_check("-o", at("new"), in, 1, &err) == 0); /* nothing there yet */
	CHECK(fb_output_check("-o", at("reg"), in, 1, &err) == FB_EINVAL && strstr(err.msg, "is also an input"));
	link(at("reg"), at("reghard"));
	CHECK(fb_output_check("-o", at("reghard"), in, 1, &err) == FB_EINVAL && strstr(err.msg, "(the same file)"));
	CHECK(fb_output_check("-o", at("reglink"), in, 1, &err) == FB_EINVAL && strstr(err.msg, "(the same file)"));
	put(at("other"), "y");
	CHECK(fb_output_check("-o", at("other"), in, 1, &err) == 0);
	CHECK(fb_output_check("-o", at("fifo"), NULL, 0, &err) == FB_EINVAL && strstr(err.msg, "(a FIFO)"));
	CHECK(fb_output_check("-o", root, NULL, 0, &err) == FB_EINVAL && strstr(err.msg, "(a directory)"));
	CHECK(fb_output_check("-o", "/dev/null", NULL, 0, &err) == FB_EINVAL && strstr(err.msg, "(a character device)"));
	symlink("/dev/null", at("nulllink")); /* the rename replaces the link, never /dev/null */
	CHECK(fb_output_check("-o", at("nulllink"), NULL, 0, &err) == 0);
}

int
main(void)
{
	snprintf(root, sizeof(root), "%s/safefs_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_dir_check();
	test_dir_make();
	test_tmp_and_atomic();
	test_probe_cache();
	test_open_regular();
	test_output_check();
	int rc = check_done();
	if (rc == 0) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", root);
	} else {
		fprintf(stderr, "kept %s\n", root);
	}
	return rc;
}
