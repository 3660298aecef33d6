// SPDX-License-Identifier: MIT
/*
 * no_monitor.c — `gpuio monitor` for the static guest build only: the
 * daemon's HTTP library (libmicrohttpd) drags GnuTLS into a static link,
 * and the VM suite tests the tracer, not the daemon (nor its loader, which
 * `gpuio doctor` would call).
 */
#include <errno.h>
#include <stdio.h>
#include "cmd/commands.h"
#include "monitor/monitor_bpf.h"

int cmd_monitor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpuio: monitor is not in this static build (tests/vm)\n");
	return 1;
}

/* `gpuio doctor` asks the monitor's loader too: here it says the monitor is absent. */
int monitor_loader__open(const struct monitor_loader_opts *o, struct monitor_loader **out)
{
	(void)o;
	*out = NULL;
	return -ENOTSUP;
}

void monitor_loader__destroy(struct monitor_loader *m)
{
	(void)m;
}
