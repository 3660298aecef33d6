/* SPDX-License-Identifier: MIT */
/* commands.h — one function per subcommand; argv[0] is the subcommand name. */
#ifndef GPUIO_COMMANDS_H
#define GPUIO_COMMANDS_H

/* Exit codes shared by all commands. */
#define GPUIO_EXIT_OK     0
#define GPUIO_EXIT_ERROR  1   /* runtime failure: message printed */
#define GPUIO_EXIT_USAGE  2   /* bad option or argument */

int cmd_trace(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_inject(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
