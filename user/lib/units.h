/* SPDX-License-Identifier: MIT */
/* units.h — the few constants and macros every file would otherwise spell out. */
#ifndef GPUIO_LIB_UNITS_H
#define GPUIO_LIB_UNITS_H

#define NSEC_PER_USEC   1000ull
#define NSEC_PER_MSEC   1000000ull
#define NSEC_PER_SEC    1000000000ull
#define NS_PER_SEC_F    1e9             /* for double arithmetic */

#define KiB             (1ull << 10)
#define MiB             (1ull << 20)
#define GiB             (1ull << 30)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)   (sizeof(a) / sizeof((a)[0]))
#endif

#endif /* GPUIO_LIB_UNITS_H */
