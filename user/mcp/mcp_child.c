// SPDX-License-Identifier: MIT
/*
 * mcp_child.c — the server's children (gpuio report/convert, and
 * trace_processor_shell): stdout kept up to a bound, the end of stderr for
 * messages, a time limit. A child runs in its own process group so that a
 * kill on timeout reaches whatever it started.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "lib/clock.h"
#include "lib/units.h"
#include "mcp/mcp_priv.h"

/* In the child: stdin /dev/null, stdout and stderr to the pipes, then exec. */
static void child_exec(const char *prog, char *const argv[], int out, int err)
{
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);       /* the server ignores it; exec keeps that */
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	execv(prog, argv);
	dprintf(2, "cannot run %s: %s\n", prog, strerror(errno));
	_exit(127);
}

/* Keep the last bytes of stderr (the error is usually last). */
static void keep_err(struct mcp_child *c, size_t *elen, const char *buf, size_t n)
{
	size_t cap = sizeof(c->err) - 1;

	if (n >= cap) {
		memcpy(c->err, buf + n - cap, cap);
		*elen = cap;
	} else {
		if (*elen + n > cap) {
			size_t drop = *elen + n - cap;

			memmove(c->err, c->err + drop, *elen - drop);
			*elen -= drop;
		}
		memcpy(c->err + *elen, buf, n);
		*elen += n;
	}
	c->err[*elen] = 0;
}

/* Append to stdout's buffer; false past max_out or out of memory. */
static bool keep_out(struct mcp_child *c, size_t *cap, const char *buf, size_t n, size_t max_out)
{
	if (c->len + n > max_out)
		return false;
	if (c->len + n + 1 > *cap) {
		size_t nc = *cap ? *cap : 64 * KiB;
		char *p;

		while (nc < c->len + n + 1)
			nc *= 2;
		p = realloc(c->out, nc);
		if (!p)
			return false;
		c->out = p;
		*cap = nc;
	}
	memcpy(c->out + c->len, buf, n);
	c->len += n;
	c->out[c->len] = 0;
	return true;
}

/* Read both pipes until both end, the time is up or stdout is too big. */
static void pump(struct mcp_child *c, int out, int err, uint64_t end, size_t max_out)
{
	struct pollfd pf[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
	size_t cap = 0, elen = 0;
	char buf[64 * 1024];

	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		uint64_t now = clock_mono_ns();
		int rc;

		if (now >= end || mcp_stop) {
			c->timed_out = true;
			return;
		}
		rc = poll(pf, 2, (int)((end - now) / NSEC_PER_MSEC) + 1);
		if (rc < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 2 && rc > 0; i++) {
			ssize_t n;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pf[i].fd = -1;
				continue;
			}
			if (i == 1)
				keep_err(c, &elen, buf, (size_t)n);
			else if (!keep_out(c, &cap, buf, (size_t)n, max_out)) {
				c->too_big = true;
				return;
			}
		}
	}
}

/* Wait for it until end (it may close its pipes and live on), then kill it. */
static void reap(struct mcp_child *c, pid_t pid, uint64_t end)
{
	if (c->timed_out || c->too_big) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	for (;;) {
		pid_t r = waitpid(pid, &c->status, c->timed_out || c->too_big ? 0 : WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return;
		if (r == 0 && clock_mono_ns() >= end) {
			c->timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		} else if (r == 0) {
			usleep(5000);
		}
	}
}

static void describe(const struct mcp_child *c, const char *prog, uint64_t timeout_ns, char *why,
		     size_t whylen)
{
	if (c->timed_out)
		snprintf(why, whylen, "%s took longer than %.0f s (stopped; gpuio mcp --timeout)",
			 prog, (double)timeout_ns / NS_PER_SEC_F);
	else if (c->too_big)
		snprintf(why, whylen, "%s wrote more than the server keeps (stopped)", prog);
	else if (WIFSIGNALED(c->status))
		snprintf(why, whylen, "%s was killed by signal %d", prog, WTERMSIG(c->status));
	else
		snprintf(why, whylen, "%s exited with status %d", prog, WEXITSTATUS(c->status));
}

int mcp_child__run(const char *prog, char *const argv[], uint64_t timeout_ns, size_t max_out,
		   struct mcp_child *c, char *why, size_t whylen)
{
	uint64_t end = clock_mono_ns() + timeout_ns;
	int out[2], err[2];
	pid_t pid;

	memset(c, 0, sizeof(*c));
	if (pipe2(out, O_CLOEXEC))
		goto fail;
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		goto fail;
	}
	pid = fork();
	if (pid == 0)
		child_exec(prog, argv, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		goto fail;
	}
	setpgid(pid, pid);              /* as the child does: whichever runs first */
	pump(c, out[0], err[0], end, max_out);
	close(out[0]);
	close(err[0]);
	reap(c, pid, end);
	if (!c->timed_out && !c->too_big && WIFEXITED(c->status) && !WEXITSTATUS(c->status))
		return 0;
	describe(c, prog, timeout_ns, why, whylen);
	return -1;
fail:
	snprintf(why, whylen, "cannot start %s: %s", prog, strerror(errno));
	return -1;
}

void mcp_child__free(struct mcp_child *c)
{
	free(c->out);
	c->out = NULL;
	c->len = 0;
}

/* a line worth showing: not a progress line, not a timestamped log line, not where in
 * the file we composed (trace_processor's "Traceback", "File "stdin" line N") */
static bool worth(const char *l, size_t n)
{
	static const char *const skip[] = { "Loading trace", "Traceback (most recent call",
					    "  File \"stdin\" line " };

	if (!n)
		return false;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (n >= strlen(skip[i]) && !strncmp(l, skip[i], strlen(skip[i])))
			return false;
	return !(l[0] == '[' && n > 1 && (l[1] == ' ' || (l[1] >= '0' && l[1] <= '9')));
}

void mcp_child__clean_err(const char *err, char *out, size_t outlen)
{
	size_t k = 0;

	out[0] = 0;
	for (const char *l = err; *l && k + 1 < outlen;) {
		size_t n = strcspn(l, "\r\n");

		if (worth(l, n))
			k += (size_t)snprintf(out + k, outlen - k, "%s%.*s", k ? "\n" : "", (int)n, l);
		l += n;
		l += strspn(l, "\r\n");
	}
	if (k >= outlen)
		out[outlen - 1] = 0;
}
