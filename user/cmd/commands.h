/* SPDX-License-Identifier: MIT */
/* commands.h — one function per subcommand; argv[0] is the subcommand name. */
#ifndef GPUIO_COMMANDS_H
#define GPUIO_COMMANDS_H

#include "gpuio.h"         /* exit codes, version */

int cmd_trace(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_mcp(int argc, char **argv);

#endif
