/* SPDX-License-Identifier: MIT */
/*
 * model_priv.h — what the model's own files share (the .c files of user/model/) and no
 * one else may use: pass-1 helpers, the GPU record cache, lane layout, args.
 */
#ifndef GPUIO_MODEL_PRIV_H
#define GPUIO_MODEL_PRIV_H
#include "model/model.h"

struct lane_busy;

/* Any GPU record at all (types GPU_INFO .. GPU_SYM). */
static inline bool exp_model__gpu_any(const struct exp_model *x)
{
	for (unsigned t = GPUIO_REC_GPU_INFO; t <= GPUIO_REC_GPU_SYM; t++)
		if (x->f->counts[t])
			return true;
	return false;
}

#define MAX_BUCKETS     2000
#define MIN_BUCKET_NS   1000000ull
struct exp_arg *arg_add(struct exp_args *a, const char *key, uint8_t type);
void arg_u64(struct exp_args *a, const char *k, uint64_t v);
void arg_s64(struct exp_args *a, const char *k, int64_t v);
void arg_bool(struct exp_args *a, const char *k, bool v);
void arg_us(struct exp_args *a, const char *k, int64_t ns);
void arg_null(struct exp_args *a, const char *k);
void arg_str(struct exp_args *a, const char *k, const char *s, size_t len, bool intern);
void arg_copy(struct exp_args *a, const char *k, const char *s, bool intern);
void args_reset(struct exp_args *a);
int note_thread(struct exp_model *x, uint32_t pid, uint32_t tid, struct thread_ent **out);
extern const char *const memcpy_kind_names[11];
extern const char *const memcpy_slice_names[11];
extern const char *const mem_kind_names[8];
extern const char *const api_source_names[5];
extern const char *const api_kind_names[8];
extern const char *const sync_names[5];
extern const char *const object_kind_names[6];
#define NAME_OF(tab, i) ((size_t)(i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : NULL)
bool is_uprobe(unsigned source);
int gact_add(struct exp_model *x, uint64_t off, uint64_t ts, uint64_t end, uint32_t device,
	     uint32_t pid, uint64_t stream, uint8_t what);
size_t rec_name_len(const struct gpuio_hdr *h, size_t name_off, const char *name, size_t len, size_t max);
void gpu_tool_handlers(struct model_tool *t);
void gpu_free(struct exp_gpu *g);
int pass_meta(struct exp_model *x);
uint64_t blk_end(const struct blk_ent *b);
struct exp_lanes {
	struct lane_busy *busy;
	uint32_t *free;
	size_t nbusy, cbusy, nfree, cfree;
	uint32_t nlanes;
};
void exp_lanes__reset(struct exp_lanes *l);
void exp_lanes__free(struct exp_lanes *l);
int exp_lanes__assign(struct exp_lanes *l, uint64_t start, uint64_t end, uint32_t *lane);
int layout_block(struct exp_model *x);
int layout_async(struct exp_model *x);
const struct gcorr_ent *gcorr_find(const struct exp_gpu *g, uint32_t pid, uint32_t corr);
int gpu_layout(struct exp_model *x);
uint64_t *flow_get(const struct exp_model *x, uint32_t tid, uint32_t seq);
void arg_name(struct exp_args *a, const char *k, const char *const *tab, size_t n, unsigned v);
void arg_cstr(struct exp_args *a, const char *k, const char *s);
void arg_f3(struct exp_args *a, const char *k, double v);
#define ARG_NAME(a, k, tab, v) arg_name(a, k, tab, sizeof(tab) / sizeof(tab[0]), v)
void arg_hex(struct exp_args *a, const char *k, uint64_t v);

#endif /* GPUIO_MODEL_PRIV_H */
