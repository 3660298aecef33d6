/* SPDX-License-Identifier: MIT */
/*
 * http_metrics.h — `gpuio monitor`'s /metrics endpoint (libmicrohttpd, its
 * own polling thread). The page is rendered on each scrape by a callback.
 */
#ifndef GPUIO_HTTP_METRICS_H
#define GPUIO_HTTP_METRICS_H
#include <sys/socket.h>

struct mon_buf;
struct http_metrics;

typedef void (*http_metrics_render_fn)(struct mon_buf *b, void *ctx);

/* "ADDR:PORT" ("127.0.0.1:9477", "[::1]:9477") -> *ss, *len (socklen_t). 0 or -EINVAL. */
int http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* A listening TCP socket at listen_at (CLOEXEC), or -errno with the reason
 * printed, naming the option (opt) and what is served (what). */
int http_listen(const char *listen_at, const char *opt, const char *what);

/* listen: "ADDR:PORT" ("127.0.0.1:9477", "[::1]:9477", "0.0.0.0:9477").
 * Returns 0 or -errno with the reason printed. */
int http_metrics__start(const char *listen, http_metrics_render_fn fn, void *ctx,
			struct http_metrics **out);
void http_metrics__stop(struct http_metrics *h);
/* Scrapes served so far. */
unsigned long long http_metrics__scrapes(const struct http_metrics *h);

#endif
