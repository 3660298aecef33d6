// SPDX-License-Identifier: MIT
/* stream_runner.c — the live stream's own thread. See stream_runner.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "export/stream.h"
#include "export/stream_runner.h"
#include "lib/clock.h"
#include "lib/log.h"

#define IDLE_WAIT_NS 100000000ull   /* caught up: look again after this, or a kick */
#define NICE_BELOW   5              /* the drain comes first */

struct stream_runner {
	struct gpuio_stream *s;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, kicked;
	int err;
};

static void *run(void *arg)
{
	struct stream_runner *r = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	errno = 0;
	if (setpriority(PRIO_PROCESS, (id_t)tid, getpriority(PRIO_PROCESS, (id_t)tid) + NICE_BELOW) < 0)
		pr_debug("stream: cannot lower the export thread's priority: %s", strerror(errno));
	for (;;) {
		int err = gpuio_stream__pump(r->s, clock_mono_ns());
		bool behind = err >= 0 && gpuio_stream__behind(r->s);

		pthread_mutex_lock(&r->lock);
		if (err < 0)
			r->err = err;
		if (err < 0 || r->stop) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		/* behind: straight on; caught up: until a flush or the period */
		if (!behind && !r->kicked) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += IDLE_WAIT_NS;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&r->cond, &r->lock, &ts);
		}
		r->kicked = false;
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

int stream_runner__start(struct gpuio_stream *s, struct stream_runner **out)
{
	struct stream_runner *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	int err;

	if (!r)
		return -ENOMEM;
	r->s = s;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&r->th, NULL, run, r);
	if (err) {
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		free(r);
		return -err;
	}
	*out = r;
	return 0;
}

void stream_runner__kick(struct stream_runner *r)
{
	pthread_mutex_lock(&r->lock);
	r->kicked = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

int stream_runner__error(struct stream_runner *r)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = r->err;
	pthread_mutex_unlock(&r->lock);
	return err;
}

void stream_runner__stop(struct stream_runner *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->th, NULL);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
