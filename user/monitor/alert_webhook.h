/* SPDX-License-Identifier: MIT */
/*
 * alert_webhook.h — `gpuio monitor --alert-listen`: Alertmanager's webhook
 * receiver. Off unless configured; every request must carry the bearer
 * token read from --alert-token-file (compared in constant time); TLS when
 * --alert-tls-cert/--alert-tls-key are given; the body is bounded
 * (--alert-max-body) and so is the rate of authenticated requests
 * (--alert-rate per minute). A valid notification is handed to the
 * daemon's loop (the recorder is not shared between threads), which
 * decides, dumps and answers; the HTTP thread waits for that answer.
 *
 *   POST /alert   Alertmanager's JSON (version "4")
 *   answers: 200 (dumped, or nothing firing), 400 (not a notification),
 *   401 (no or wrong token), 404, 405, 410 (the window no longer holds the
 *   alert's instant), 413 (too big), 422 (no job of the
 *   alert on this node), 429 (rate), 503 (the daemon did not answer)
 */
#ifndef GPUIO_MONITOR_ALERT_WEBHOOK_H
#define GPUIO_MONITOR_ALERT_WEBHOOK_H
#include <stddef.h>

struct alert_payload;
struct alert_webhook;
struct mon_buf;

struct alert_webhook_opts {
	const char *listen;      /* ADDR:PORT */
	const char *token_file;  /* the bearer token (required) */
	const char *tls_cert;    /* PEM files: both or neither */
	const char *tls_key;
	size_t max_body;         /* bytes */
	unsigned rate;           /* authenticated requests per minute */
};

/* The daemon's decision on a notification: an HTTP status, and a body (JSON) in msg. */
typedef unsigned (*alert_webhook_fn)(void *ctx, const struct alert_payload *p, char *msg,
				     size_t msglen);

/* 0, or -errno with the reason printed. */
int alert_webhook__start(const struct alert_webhook_opts *o, struct alert_webhook **out);
/* The daemon's loop: decide on a waiting notification, if any (fn), and answer it. */
void alert_webhook__serve(struct alert_webhook *w, alert_webhook_fn fn, void *ctx);
/* Prometheus families: requests by answer. */
void alert_webhook__metrics(struct mon_buf *b, void *w);
void alert_webhook__stop(struct alert_webhook *w);

#endif
