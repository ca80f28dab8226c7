/* stop.c: a stopped fatbuild takes everything it started with it.
 *
 * The process-level state this needs (signal handlers, the pid they forward to and the flag
 * they set) lives here, in the CLI; the libraries keep none. They only read the flag, through
 * the `cancel` pointer of fb_build_opts / fb_compile_opts, when a wait is interrupted and
 * before each step that starts processes or writes.
 *
 * Two processes. The one the caller started, and signals, is the supervisor: it stays in the
 * caller's process group (so a shell's job control, Ctrl-C and a wrapper's kill of one pid
 * behave as with any program), forks the worker, which runs the command in a process group
 * of its own, and then only waits for it.
 *   - SIGINT, SIGTERM or SIGHUP at the supervisor: forwarded to the worker.
 *   - The worker, on its first such signal (forwarded, sent to it directly, or its
 *     PR_SET_PDEATHSIG), sets the flag and sends the signal to its whole process group: ninja,
 *     the NVRTC jobs, the device-probe child and any other process it forked or spawned, with
 *     no list of them to keep. ninja in turn signals the process group of each edge it runs
 *     and waits for them (ninja 1.11 does so on SIGINT, SIGTERM and SIGHUP) and deletes the
 *     outputs they had started; a `fatbuild compile` edge is itself a supervisor and worker.
 *     The worker's library calls see the flag, wait for their children, remove their
 *     temporaries and return FB_ECANCELED; the command prints one line and exits 128+signal.
 *   - SIGKILL of the supervisor: the worker has PR_SET_PDEATHSIG = SIGTERM and stops as above
 *     (the caller sees 137). The processes the libraries start carry PR_SET_PDEATHSIG too, so
 *     a SIGKILL of the worker itself does not leave them running.
 *   - The supervisor exits with the worker's status once the worker is gone; after a signal
 *     it first SIGKILLs whatever is still in the worker's group (nothing, normally).
 *   - SIGTSTP (Ctrl-Z) at the supervisor stops the worker's group too, and continuing the
 *     supervisor continues it.
 * A forked child of the worker that did not reset its handlers (a library's fork without
 * exec) gets the default action from the handler: only the worker forwards. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t stop_sig;  /* the first stopping signal, 0 before it */
static volatile pid_t worker_pid;       /* in the supervisor: the worker; in the worker: itself */
static int is_supervisor;
static int own_group;                   /* the worker leads a process group of its own */

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof(stop_signals) / sizeof(stop_signals[0]))
static struct sigaction started_with[NSTOP]; /* the dispositions before install(), for cli_stop_release */

static void
on_signal(int sig)
{
	int saved = errno;
	if (is_supervisor) {
		if (!stop_sig)
			stop_sig = sig;
		kill(worker_pid, sig);
	} else if (getpid() != worker_pid) {
		/* a fork of the worker that kept the handler: die as by default */
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (!stop_sig) {
		stop_sig = sig;
		if (own_group)
			kill(0, sig); /* the worker's own group; reaches this handler again, as a no-op */
	}
	errno = saved;
}

/* Ctrl-Z stops the supervisor, the one in the terminal's foreground group: it stops the
 * worker's group with it and continues it when it is continued itself (fg, bg). */
static void
on_tstp(int sig)
{
	int saved = errno;
	(void)sig;
	kill(-worker_pid, SIGSTOP);
	raise(SIGSTOP);
	kill(-worker_pid, SIGCONT);
	errno = saved;
}

static void
install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocking wait returns EINTR and looks at the flag */
	for (size_t i = 0; i < NSTOP; i++) {
		/* nohup's ignored SIGHUP stays ignored. SIGINT is caught even when inherited as
		 * ignored (a shell script's background job), as ninja, which used to be the one to
		 * see it, always did. */
		if (sigaction(stop_signals[i], NULL, &started_with[i]) != 0)
			continue;
		if (stop_signals[i] == SIGHUP && started_with[i].sa_handler == SIG_IGN)
			continue;
		sigaction(stop_signals[i], &sa, NULL);
	}
}

void
cli_supervise(void)
{
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < NSTOP; i++)
		sigaddset(&block, stop_signals[i]);
	/* Blocked across the fork, so a signal between fork and the handlers is held, not lost. */
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		/* No worker: run the command here, in the caller's group, which is not ours to
		 * signal; the libraries still stop their children when they see the flag. */
		worker_pid = getpid();
		install();
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (pid == 0) {
		own_group = setpgid(0, 0) == 0;
		worker_pid = getpid();
		install();
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (getppid() != parent) /* the supervisor died before PR_SET_PDEATHSIG took */
			kill(getpid(), SIGTERM);
		return;
	}
	setpgid(pid, pid); /* also here, so the group exists whichever of the two runs first */
	is_supervisor = 1;
	worker_pid = pid;
	install();
	struct sigaction ts;
	memset(&ts, 0, sizeof(ts));
	ts.sa_handler = on_tstp;
	sigemptyset(&ts.sa_mask);
	struct sigaction prev;
	if (sigaction(SIGTSTP, NULL, &prev) == 0 && prev.sa_handler != SIG_IGN)
		sigaction(SIGTSTP, &ts, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = 1 << 8;
			break;
		}
	}
	if (stop_sig)
		kill(-pid, SIGKILL); /* stragglers of the worker's group, if any */
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	_exit(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 1));
}

const volatile sig_atomic_t *
cli_cancel_flag(void)
{
	return &stop_sig;
}

int
cli_stopped(void)
{
	return stop_sig;
}

void
cli_stop_release(void)
{
	if (!worker_pid) /* never supervised: nothing installed */
		return;
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &started_with[i], NULL);
}

const char *
cli_stop_name(void)
{
	int sig = stop_sig;
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

int
cli_stop_exit(const char *what)
{
	warn("%s: interrupted by %s; stopped everything it had started, nothing written", what, cli_stop_name());
	return 128 + stop_sig;
}
