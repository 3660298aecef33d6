// SPDX-License-Identifier: MIT
/* stream_runner.c — the live stream's own thread. See stream_runner.h. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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
#define CATCH_UP_NS  2000000000ull  /* behind more than this: at the drain's priority */

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

struct stream_runner {
	struct gpuio_stream *s;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, finish, kicked;
	int err;
	pid_t tid;
	int rt_prio;                /* 0: never real-time */
	bool rt;                    /* at rt_prio now */
	uint64_t rt_since;
	struct stream_runner_stats st;
};

/* To the drain's real-time priority (catching up) and back to nice +5. */
static void set_rt(struct stream_runner *r, bool on)
{
	struct sched_param p = { .sched_priority = on ? r->rt_prio : 0 };
	uint64_t now = clock_mono_ns();

	if (on == r->rt)
		return;
	if (sched_setscheduler(r->tid, on ? SCHED_FIFO | SCHED_RESET_ON_FORK : SCHED_OTHER, &p) < 0) {
		pr_debug("stream: cannot %s the export's priority: %s", on ? "raise" : "restore",
			 strerror(errno));
		if (on)
			r->rt_prio = 0;     /* asked once */
		return;
	}
	r->rt = on;
	if (on) {
		r->rt_since = now;
		r->st.rt_times++;
	} else {
		r->st.rt_ns += now - r->rt_since;
	}
}

static void *run(void *arg)
{
	struct stream_runner *r = arg;

	r->tid = (pid_t)syscall(SYS_gettid);
	errno = 0;
	if (setpriority(PRIO_PROCESS, (id_t)r->tid, getpriority(PRIO_PROCESS, (id_t)r->tid) + NICE_BELOW) < 0)
		pr_debug("stream: cannot lower the export thread's priority: %s", strerror(errno));
	for (;;) {
		int err = gpuio_stream__pump(r->s, clock_mono_ns());
		bool behind = err >= 0 && gpuio_stream__behind(r->s);
		uint64_t lag = behind ? gpuio_stream__lag_ns(r->s, clock_mono_ns()) : 0;
		bool finishing;

		pthread_mutex_lock(&r->lock);
		finishing = r->stop && r->finish;
		pthread_mutex_unlock(&r->lock);
		/* far behind, or the trace over and the tail left: the drain's
		 * priority (the user chose real-time tracing); caught up: back */
		if (r->rt_prio && behind && (lag > CATCH_UP_NS || finishing))
			set_rt(r, true);
		else if (!behind)
			set_rt(r, false);
		pthread_mutex_lock(&r->lock);
		if (err < 0)
			r->err = err;
		if (err < 0 || (r->stop && !(r->finish && behind))) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		/* behind: straight on; caught up: until a flush or the period */
		if (!behind && !r->kicked && !r->stop) {
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

int stream_runner__start(struct gpuio_stream *s, int rt_prio, struct stream_runner **out)
{
	struct stream_runner *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	int err;

	if (!r)
		return -ENOMEM;
	r->s = s;
	r->rt_prio = rt_prio;
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

static void stop(struct stream_runner *r, bool finish, struct stream_runner_stats *st)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	r->finish = finish;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->th, NULL);
	if (r->rt)
		r->st.rt_ns += clock_mono_ns() - r->rt_since;
	if (st)
		*st = r->st;
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void stream_runner__stop(struct stream_runner *r)
{
	stop(r, false, NULL);
}

void stream_runner__finish(struct stream_runner *r, struct stream_runner_stats *st)
{
	stop(r, true, st);
}
