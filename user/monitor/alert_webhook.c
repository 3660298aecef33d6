// SPDX-License-Identifier: MIT
/*
 * alert_webhook.c — Alertmanager's webhook receiver. See alert_webhook.h.
 *
 * libmicrohttpd, one thread per connection (at most 8, 4 per client): a
 * request that waits for the daemon's loop holds only its own thread.
 * Everything that can be refused is refused before the body is read
 * (method, path, token, declared length, rate), and a body that grows past
 * the bound is dropped as it arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "lib/clock.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/units.h"
#include "monitor/alert_payload.h"
#include "monitor/alert_webhook.h"
#include "monitor/http_metrics.h"
#include "monitor/monitor_agg.h"

#define ANSWER_WAIT_NS (120 * NSEC_PER_SEC)

static const unsigned codes[] = { 200, 400, 401, 404, 405, 410, 413, 422, 429, 503 };
#define NCODES (sizeof(codes) / sizeof(codes[0]))

struct alert_webhook {
	struct alert_webhook_opts o;
	struct MHD_Daemon *d;
	int fd;
	char token[512];
	size_t token_len;
	char *cert, *key;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* the notification handed to the daemon's loop (one at a time) */
	const struct alert_payload *pending;
	bool taken, answered;
	unsigned code;
	char msg[4096];
	/* the rate of authenticated requests: a count per minute */
	__u64 rate_start;
	unsigned rate_count;
	unsigned long long answers[NCODES];
};

struct conn {
	char *body;
	size_t len;
	bool too_big;
};

static enum MHD_Result answer(struct alert_webhook *w, struct MHD_Connection *c, unsigned code,
			      const char *json)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json,
								  MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"gpuio\"");
	if (code == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, "Retry-After", "60");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < NCODES; i++)
		if (codes[i] == code)
			w->answers[i]++;
	pthread_mutex_unlock(&w->lock);
	return ret;
}

static enum MHD_Result error(struct alert_webhook *w, struct MHD_Connection *c, unsigned code,
			     const char *why)
{
	char esc[600], body[700];

	json_escape(esc, sizeof(esc), why, strlen(why));
	snprintf(body, sizeof(body), "{\"status\":\"error\",\"error\":\"%s\"}\n", esc);
	return answer(w, c, code, body);
}

/* The Authorization header against the token, in time independent of where they differ. */
static bool authorized(const struct alert_webhook *w, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	size_t n;
	unsigned char diff;

	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	n = strlen(h);
	diff = n != w->token_len;
	for (size_t i = 0; i < w->token_len; i++)
		diff |= (unsigned char)(w->token[i] ^ (i < n ? h[i] : 0));
	return diff == 0;
}

/* One more authenticated request this minute? */
static bool within_rate(struct alert_webhook *w)
{
	__u64 now = clock_mono_ns();
	bool ok;

	pthread_mutex_lock(&w->lock);
	if (!w->rate_start || now - w->rate_start >= 60 * NSEC_PER_SEC) {
		w->rate_start = now;
		w->rate_count = 0;
	}
	ok = w->rate_count < w->o.rate;
	w->rate_count += ok;
	pthread_mutex_unlock(&w->lock);
	return ok;
}

/* Hand p to the daemon's loop and wait for its answer (code, msg). */
static unsigned decide(struct alert_webhook *w, const struct alert_payload *p, char *msg, size_t len)
{
	struct timespec until;
	unsigned code = 0;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ANSWER_WAIT_NS / NSEC_PER_SEC;
	pthread_mutex_lock(&w->lock);
	while (w->pending && rc == 0)          /* another notification first */
		rc = pthread_cond_timedwait(&w->cond, &w->lock, &until);
	if (rc == 0) {
		w->pending = p;
		w->taken = w->answered = false;
		while (!w->answered && rc == 0)
			rc = pthread_cond_timedwait(&w->cond, &w->lock, &until);
		if (w->answered) {
			code = w->code;
			snprintf(msg, len, "%s", w->msg);
		} else if (w->taken) {
			/* the loop still holds p: wait for it, however long, p is ours */
			while (!w->answered)
				pthread_cond_wait(&w->cond, &w->lock);
			code = w->code;
			snprintf(msg, len, "%s", w->msg);
		}
		w->pending = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (!code)
		snprintf(msg, len, "{\"status\":\"error\",\"error\":\"the monitor's loop did not "
			 "answer in time\"}\n");
	return code ? code : MHD_HTTP_SERVICE_UNAVAILABLE;
}

/* The whole body is here: parse, decide, answer. */
static enum MHD_Result on_body(struct alert_webhook *w, struct MHD_Connection *c, struct conn *s)
{
	struct alert_payload *p = malloc(sizeof(*p));
	char err[256], msg[sizeof(w->msg)];
	unsigned code;

	if (!p)
		return MHD_NO;
	if (alert_payload__parse(s->body ? s->body : "", s->len, p, err, sizeof(err))) {
		free(p);
		return error(w, c, MHD_HTTP_BAD_REQUEST, err);
	}
	code = decide(w, p, msg, sizeof(msg));
	free(p);
	return answer(w, c, code, msg);
}

/* Before the body: everything that can be refused from the headers. */
static enum MHD_Result on_headers(struct alert_webhook *w, struct MHD_Connection *c,
				  const char *url, const char *method, void **state)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	struct conn *s;

	if (strcmp(url, "/alert"))
		return error(w, c, MHD_HTTP_NOT_FOUND, "not found: Alertmanager's webhook is POST /alert");
	if (strcmp(method, "POST"))
		return error(w, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only POST");
	if (!authorized(w, c))
		return error(w, c, MHD_HTTP_UNAUTHORIZED, "no or wrong bearer token");
	if (cl && strtoull(cl, NULL, 10) > w->o.max_body)
		return error(w, c, MHD_HTTP_CONTENT_TOO_LARGE, "body larger than --alert-max-body");
	if (!within_rate(w))
		return error(w, c, MHD_HTTP_TOO_MANY_REQUESTS, "more than --alert-rate requests a minute");
	s = calloc(1, sizeof(*s));
	if (!s)
		return MHD_NO;
	*state = s;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	struct alert_webhook *w = cls;
	struct conn *s = *state;

	(void)version;
	if (!s)
		return on_headers(w, c, url, method, state);
	if (*upload_len) {
		if (!s->too_big && s->len + *upload_len <= w->o.max_body) {
			char *nb = realloc(s->body, s->len + *upload_len + 1);

			if (!nb)
				return MHD_NO;
			s->body = nb;
			memcpy(s->body + s->len, upload, *upload_len);
			s->len += *upload_len;
			s->body[s->len] = 0;
		} else {
			s->too_big = true;
		}
		*upload_len = 0;
		return MHD_YES;
	}
	if (s->too_big)
		return error(w, c, MHD_HTTP_CONTENT_TOO_LARGE, "body larger than --alert-max-body");
	return on_body(w, c, s);
}

static void on_done(void *cls, struct MHD_Connection *c, void **state,
		    enum MHD_RequestTerminationCode why)
{
	struct conn *s = *state;

	(void)cls; (void)c; (void)why;
	if (s) {
		free(s->body);
		free(s);
		*state = NULL;
	}
}

/* The token file: not readable by others, one non-empty line. 0 or -errno (said). */
static int read_token(struct alert_webhook *w, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		pr_err("--alert-token-file %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	if (st.st_mode & S_IROTH) {
		pr_err("--alert-token-file %s is readable by every user: chmod o-r it (0600)", path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, w->token, sizeof(w->token) - 1);
	close(fd);
	while (n > 0 && (w->token[n - 1] == '\n' || w->token[n - 1] == '\r' || w->token[n - 1] == ' '))
		n--;
	if (n <= 0 || (size_t)n >= sizeof(w->token) - 1 || memchr(w->token, '\n', (size_t)n)) {
		pr_err("--alert-token-file %s: expected one line, the token (1 to %zu bytes)", path,
		       sizeof(w->token) - 2);
		return -EINVAL;
	}
	w->token[n] = 0;
	w->token_len = (size_t)n;
	return 0;
}

/* A small PEM file, NUL-terminated, in *out (malloc'd). 0 or -errno. */
static int slurp(const char *path, char **out)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	int err = 0;

	if (!f)
		return -errno;
	buf = malloc(1 << 20);
	if (buf) {
		len = fread(buf, 1, (1 << 20) - 1, f);
		buf[len] = 0;
	}
	if (!buf || ferror(f) || !len)
		err = buf && !ferror(f) ? -EINVAL : -EIO;
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

static int read_tls(struct alert_webhook *w)
{
	int err;

	if (!w->o.tls_cert != !w->o.tls_key) {
		pr_err("--alert-tls-cert and --alert-tls-key go together");
		return -EINVAL;
	}
	if (!w->o.tls_cert)
		return 0;
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
		pr_err("--alert-tls-cert: this libmicrohttpd has no TLS");
		return -ENOTSUP;
	}
	if ((err = slurp(w->o.tls_cert, &w->cert)) || (err = slurp(w->o.tls_key, &w->key))) {
		pr_err("cannot read %s: %s", w->cert ? w->o.tls_key : w->o.tls_cert,
		       err == -EINVAL ? "empty" : strerror(-err));
		return err;
	}
	return 0;
}

int alert_webhook__start(const struct alert_webhook_opts *o, struct alert_webhook **out)
{
	struct alert_webhook *w = calloc(1, sizeof(*w));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG;
	int err;

	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->fd = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (!o->token_file) {
		pr_err("--alert-listen needs --alert-token-file (the bearer token Alertmanager sends)");
		err = -EINVAL;
		goto fail;
	}
	if ((err = read_token(w, o->token_file)) || (err = read_tls(w)))
		goto fail;
	w->fd = http_listen(o->listen, "--alert-listen", "Alertmanager's webhook");
	if (w->fd < 0) {
		err = w->fd;
		goto fail;
	}
	if (w->cert)
		flags |= MHD_USE_TLS;
	w->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, w,
				MHD_OPTION_LISTEN_SOCKET, w->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)8,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)4,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, w,
				w->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, w->cert,
				MHD_OPTION_HTTPS_MEM_KEY, w->key,
				MHD_OPTION_END);
	if (!w->d) {
		pr_err("cannot serve Alertmanager's webhook on %s: libmicrohttpd did not start%s",
		       o->listen, w->cert ? " (a bad certificate or key?)" : "");
		err = -EIO;
		goto fail;
	}
	pr_info("monitor: Alertmanager's webhook on %s://%s/alert (bearer token from %s; body "
		"at most %zu bytes, %u requests a minute)", w->cert ? "https" : "http", o->listen,
		o->token_file, o->max_body, o->rate);
	*out = w;
	return 0;
fail:
	alert_webhook__stop(w);
	return err;
}

void alert_webhook__serve(struct alert_webhook *w, alert_webhook_fn fn, void *ctx)
{
	const struct alert_payload *p;
	char msg[sizeof(w->msg)];
	unsigned code;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	p = w->pending && !w->taken && !w->answered ? w->pending : NULL;
	if (p)
		w->taken = true;
	pthread_mutex_unlock(&w->lock);
	if (!p)
		return;
	code = fn(ctx, p, msg, sizeof(msg));
	pthread_mutex_lock(&w->lock);
	w->code = code;
	snprintf(w->msg, sizeof(w->msg), "%s", msg);
	w->answered = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void alert_webhook__metrics(struct mon_buf *b, void *ctx)
{
	struct alert_webhook *w = ctx;

	if (!w)
		return;
	mon_buf__printf(b, "# HELP gpuio_alert_requests_total Requests to Alertmanager's webhook, by the HTTP status answered.\n"
			"# TYPE gpuio_alert_requests_total counter\n");
	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < NCODES; i++)
		mon_buf__printf(b, "gpuio_alert_requests_total{code=\"%u\"} %llu\n", codes[i],
				w->answers[i]);
	pthread_mutex_unlock(&w->lock);
}

void alert_webhook__stop(struct alert_webhook *w)
{
	if (!w)
		return;
	if (w->d)
		MHD_stop_daemon(w->d);
	if (w->fd >= 0)
		close(w->fd);
	explicit_bzero(w->token, sizeof(w->token));
	if (w->key)
		explicit_bzero(w->key, strlen(w->key));
	free(w->cert);
	free(w->key);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
