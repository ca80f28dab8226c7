/* output.c: ninja's output as a build shows it. An edge's command is what ninja runs: for a
 * compile, the compiler's command wrapped in fatbuild's own (`fatbuild edge`, the torch PCH's
 * `{ [ -f ... ] || /bin/sh .../pch.sh; } &&`, nvcc's keep dir). What is shown is the compiler's
 * command alone (graph_host.c keeps both in the graph's list shown, graph_edge.h): in `-v`'s
 * "[n/N] COMMAND" lines, and for a failed edge, whose block ninja prints as
 *     FAILED: OUTPUTS / COMMAND / what the command printed
 * which becomes
 *     FAILED: OUTPUTS / what the compiler printed / command: COMPILER'S COMMAND
 * so that the compiler's message comes first, as a reader looks for it, and the wrapper's shell
 * text never. The first failure also leaves BUILD_DIR/.fatbuild.failed, on which PCH work
 * still running stops (hostpch.c's pch.sh): ninja waits for the edges that run when one fails. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

struct filter {
	const struct fb_strlist *shown; /* per compile edge: its command as ninja runs it, as shown */
	const char *failed_path;        /* BUILD_DIR/.fatbuild.failed */
	int out;
	enum { NORMAL, COMMAND, MESSAGE } state;
	char *header;     /* the "FAILED: ..." line, until the block shows it */
	const char *held; /* the failed edge's command as shown */
	bool failed;      /* the marker is made */
	bool first;       /* the block is the build's first failure */
};

static void
put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a reader gone: the build goes on */
		s += w;
		n -= (size_t)w;
	}
}

static void
puts_line(int fd, const char *s)
{
	put(fd, s, strlen(s));
	put(fd, "\n", 1);
}

/* The command as shown, for the command ninja ran (cmd itself when it is not a compile's). */
static const char *
shown_cmd(const struct fb_strlist *shown, const char *cmd)
{
	for (size_t i = 0; i + 1 < shown->n; i += 2)
		if (strcmp(shown->v[i], cmd) == 0)
			return shown->v[i + 1];
	return cmd;
}

/* The length of a "[n/N] " status prefix (ninja's NINJA_STATUS as ninja_run.c sets it), else 0. */
static size_t
status_len(const char *line)
{
	const char *p = line;
	if (*p++ != '[')
		return 0;
	size_t d = strspn(p, "0123456789");
	if (!d || p[d] != '/')
		return 0;
	p += d + 1;
	d = strspn(p, "0123456789");
	if (!d || p[d] != ']' || p[d + 1] != ' ')
		return 0;
	return (size_t)(p + d + 2 - line);
}

static void
mark_failed(struct filter *f)
{
	if (f->failed)
		return;
	f->failed = true;
	int fd = open(f->failed_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

/* The block's "FAILED: ..." line, once. */
static void
show_header(struct filter *f)
{
	if (f->header) {
		puts_line(f->out, f->header);
		free(f->header);
		f->header = NULL;
	}
}

/* The end of a failure block: its command, after its message. A later failure that printed
 * nothing is an edge that stopped because the build had failed (a PCH being made, pch.sh):
 * not shown. */
static void
end_block(struct filter *f)
{
	if (f->state != NORMAL && (f->first || !f->header)) {
		show_header(f);
		if (f->held) {
			put(f->out, "command: ", 9);
			puts_line(f->out, f->held);
		}
	}
	free(f->header);
	f->header = NULL;
	f->state = NORMAL;
	f->held = NULL;
}

static void
line(struct filter *f, const char *s)
{
	if (f->state == COMMAND) {
		f->held = shown_cmd(f->shown, s);
		f->state = MESSAGE;
		return;
	}
	size_t st = status_len(s);
	if (f->state == MESSAGE && (st || strncmp(s, "ninja: ", 7) == 0 || strncmp(s, "FAILED: ", 8) == 0))
		end_block(f);
	if (f->state == MESSAGE) {
		show_header(f);
		puts_line(f->out, s);
	} else if (strncmp(s, "FAILED: ", 8) == 0) {
		f->first = !f->failed;
		mark_failed(f);
		free(f->header);
		f->header = strdup(s);
		f->state = COMMAND;
	} else if (st) {
		put(f->out, s, st);
		puts_line(f->out, shown_cmd(f->shown, s + st));
	} else {
		puts_line(f->out, s);
	}
}

/* Takes the complete lines of buf (len bytes), moves a partial last one to the front; returns
 * its length. */
static size_t
take_lines(struct filter *f, char *buf, size_t len)
{
	size_t start = 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n') {
			buf[i] = 0;
			line(f, buf + start);
			start = i + 1;
		}
	memmove(buf, buf + start, len - start);
	return len - start;
}

int
fb_build_show_output(const struct fb_strlist *shown, const char *failed, const volatile sig_atomic_t *cancel, int in,
                     int out, pid_t ninja)
{
	struct filter f = {.shown = shown, .failed_path = failed, .out = out};
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	bool forwarded = false;
	for (;;) {
		if (!forwarded && cancel && *cancel) {
			kill(ninja, *cancel > 0 && *cancel < 65 ? *cancel : SIGTERM);
			forwarded = true;
		}
		struct pollfd p = {.fd = in, .events = POLLIN};
		int r = poll(&p, 1, 100);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		if (len == cap) { /* a line longer than the buffer: grow it, or pass the part on */
			char *nb = buf ? realloc(buf, 2 * cap + 1) : NULL;
			if (nb) {
				buf = nb;
				cap *= 2;
			} else if (buf) {
				put(out, buf, len);
				len = 0;
			}
		}
		ssize_t n = buf ? read(in, buf + len, cap - len) : -1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len = take_lines(&f, buf, len + (size_t)n);
	}
	if (buf && len) {
		buf[len] = 0;
		line(&f, buf);
	}
	end_block(&f);
	free(buf);
	close(in);
	return f.failed;
}
