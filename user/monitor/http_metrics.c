// SPDX-License-Identifier: MIT
/*
 * http_metrics.c — GET /metrics in the Prometheus text exposition format
 * (0.0.4). The listening socket is ours (so a bind error says exactly what
 * went wrong); libmicrohttpd serves it from its own thread, a few
 * connections at a time, with a timeout, so a stuck client costs one fd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "monitor/http_metrics.h"
#include "lib/log.h"
#include "monitor/monitor_agg.h"

struct http_metrics {
	struct MHD_Daemon *d;
	int fd;
	http_metrics_render_fn fn;
	void *ctx;
	unsigned long long scrapes;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	static char index_page[] =
		"gpuio monitor: metrics at /metrics (Prometheus text format)\n";
	static char not_found[] = "not found: try /metrics\n";
	static char bad_method[] = "only GET and HEAD\n";
	struct http_metrics *h = cls;
	struct mon_buf b = { 0 };

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method,
			     sizeof(bad_method) - 1, false);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/plain", index_page, sizeof(index_page) - 1, false);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1, false);
	h->fn(&b, h->ctx);
	if (b.oom || !b.p) {
		mon_buf__free(&b);
		return MHD_NO;
	}
	h->scrapes++;
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len, true);
}

/* "ADDR:PORT" -> sockaddr. */
int http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *colon;
	char *end;
	long port;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(rb - s - 1), s + 1);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	}
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -EINVAL;
}

int http_listen(const char *listen_at, const char *opt, const char *what)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, fd, err;

	if (http_parse_listen(listen_at, &ss, &sl)) {
		pr_err("%s %s: expected ADDR:PORT (e.g. 127.0.0.1:9477, [::1]:9477)", opt, listen_at);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) == 0 && listen(fd, 16) == 0)
		return fd;
fail:
	err = -errno;
	pr_err("cannot serve %s on %s: %s%s%s%s", what, listen_at, strerror(-err),
	       err == -EADDRINUSE ? " (another program on that port? choose one with " : "",
	       err == -EADDRINUSE ? opt : "", err == -EADDRINUSE ? ")" : "");
	if (fd >= 0)
		close(fd);
	return err;
}

int http_metrics__start(const char *listen_at, http_metrics_render_fn fn, void *ctx,
			struct http_metrics **out)
{
	struct http_metrics *h;
	int fd = http_listen(listen_at, "--listen", "metrics");

	if (fd < 0)
		return fd;
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->fn = fn;
	h->ctx = ctx;
	h->fd = fd;
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG,
				0, NULL, NULL, on_request, h,
				MHD_OPTION_LISTEN_SOCKET, h->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	if (!h->d) {
		pr_err("cannot serve metrics on %s: libmicrohttpd did not start", listen_at);
		close(h->fd);
		free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

void http_metrics__stop(struct http_metrics *h)
{
	if (!h)
		return;
	if (h->d)
		MHD_stop_daemon(h->d);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

unsigned long long http_metrics__scrapes(const struct http_metrics *h)
{
	return h ? h->scrapes : 0;
}
