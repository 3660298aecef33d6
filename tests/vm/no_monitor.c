// SPDX-License-Identifier: MIT
/*
 * no_monitor.c — `gpuio monitor` for the static guest build only: the
 * daemon's HTTP library (libmicrohttpd) drags GnuTLS into a static link,
 * and the VM suite tests the tracer, not the daemon.
 */
#include <stdio.h>
#include "cmd/commands.h"

int cmd_monitor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpuio: monitor is not in this static build (tests/vm)\n");
	return 1;
}
