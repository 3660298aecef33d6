// SPDX-License-Identifier: MIT
/* start_at.c — wait for a wall-clock start time. See start_at.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/start_at.h"
#include "lib/units.h"

static int from_double(double v, struct timespec *out)
{
	if (v < 0 || v > 4e12)
		return -EINVAL;
	out->tv_sec = (time_t)v;
	out->tv_nsec = (long)((v - (double)out->tv_sec) * NS_PER_SEC_F);
	return 0;
}

int gpuio_start_at__parse(const char *s, struct timespec *out)
{
	unsigned hh, mm;
	double ss = 0;
	int n = 0;
	char *end;

	if (*s == '@' || (strchr(s, ':') == NULL && *s)) {
		double v = strtod(*s == '@' ? s + 1 : s, &end);

		if (end == s || *end)
			return -EINVAL;
		return from_double(v, out);
	}
	if ((sscanf(s, "%u:%u:%lf%n", &hh, &mm, &ss, &n) == 3 && !s[n]) ||
	    (ss = 0, n = 0, sscanf(s, "%u:%u%n", &hh, &mm, &n) == 2 && !s[n])) {
		struct timespec now;
		struct tm tm;
		time_t t;

		if (hh > 23 || mm > 59 || ss < 0 || ss >= 61)
			return -EINVAL;
		clock_gettime(CLOCK_REALTIME, &now);
		localtime_r(&now.tv_sec, &tm);
		tm.tm_hour = (int)hh;
		tm.tm_min = (int)mm;
		tm.tm_sec = (int)ss;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		/* already past today: the same time tomorrow */
		if ((double)t + (ss - (int)ss) <= (double)now.tv_sec + now.tv_nsec / NS_PER_SEC_F) {
			tm.tm_mday++;
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
		out->tv_sec = t;
		out->tv_nsec = (long)((ss - (int)ss) * NS_PER_SEC_F);
		return 0;
	}
	return -EINVAL;
}

int gpuio_start_at__wait(const struct timespec *t)
{
	int rc = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, t, NULL);

	return rc == 0 ? 0 : -rc;
}
