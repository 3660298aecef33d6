/* SPDX-License-Identifier: MIT */
/*
 * cap_layers.h — the attach layers a capture header names, declared once: a
 * row per layer with its name, its header field and how the outputs show a
 * capture that names no mode for it. The loader writes the header through
 * it, and `gpuio info`, its JSON, the timeline's info and the report read it
 * back through it; a new layer is a header field and one row here (and
 * its attach variants in the loader).
 *
 * A renderer walks the rows:
 *
 *	const struct gpuio_cap_layer *ly;
 *	size_t len;
 *
 *	gpuio_cap_layer__for_each(ly)
 *		if (gpuio_cap_layer__shown(ly, h))
 *			put(ly->name, gpuio_cap_layer__mode(ly, h, &len), len);
 *
 * or takes the text line whole (gpuio_cap_layers__text).
 */
#ifndef GPUIO_CAP_LAYERS_H
#define GPUIO_CAP_LAYERS_H

#include <stdbool.h>
#include <stddef.h>

struct gpuio_cap_header;

/* The layers, in the order the outputs list them. */
enum gpuio_layer {
	GPUIO_LAYER_VFS,
	GPUIO_LAYER_BLOCK,
	GPUIO_LAYER_PROC,
	GPUIO_LAYER_PAGECACHE,
	GPUIO_LAYER_IOURING,
	GPUIO_LAYER_SCHED,
	GPUIO_LAYER_FAULT,
	GPUIO_LAYER_STACK,
	GPUIO_LAYER_SAMPLE,
	GPUIO_NLAYERS
};

struct gpuio_cap_layer {
	const char *name;       /* as printed, and its key in JSON's modes ("io_uring") */
	const char *field;      /* the header field, the timeline info's key ("iouring_mode") */
	size_t off, size;       /* where that field is in struct gpuio_cap_header, its bytes */
	const char *unset;      /* text shown for a capture that names no mode ("none"); NULL: "" */
	bool hide_unset;        /* left out where a capture names no mode (made before the layer) */
};
extern const struct gpuio_cap_layer gpuio_cap_layers[GPUIO_NLAYERS];

#define gpuio_cap_layer__for_each(ly) \
	for ((ly) = gpuio_cap_layers; (ly) < gpuio_cap_layers + GPUIO_NLAYERS; (ly)++)

/*
 * The mode h names for layer ly, bounded by its field (not NUL-terminated
 * when it fills it: print it with "%.*s"); its length in *len. "" when h
 * names none.
 */
const char *gpuio_cap_layer__mode(const struct gpuio_cap_layer *ly,
				  const struct gpuio_cap_header *h, size_t *len);
/* Whether the outputs list ly for h (not when it names no mode and ly->hide_unset). */
bool gpuio_cap_layer__shown(const struct gpuio_cap_layer *ly, const struct gpuio_cap_header *h);
/* Set ly's mode in h (cut to its field, NUL-terminated). */
void gpuio_cap_layer__set(const struct gpuio_cap_layer *ly, struct gpuio_cap_header *h,
			  const char *mode);
/* NUL-terminate every layer's mode of h (a header read from a file). */
void gpuio_cap_layers__terminate(struct gpuio_cap_header *h);
/*
 * The text outputs' line: "vfs=MODE block=MODE ... sched=none" (each
 * layer shown, its unset words where h names no mode), into buf.
 */
void gpuio_cap_layers__text(const struct gpuio_cap_header *h, char *buf, size_t len);

#endif /* GPUIO_CAP_LAYERS_H */
