// SPDX-License-Identifier: MIT
/*
 * report_html.c — `gpuio report --html FILE`: one self-contained page, the
 * same sections as the text report, with inline SVG charts (latency
 * histograms, throughput over time, reads in flight, a GPU busy/idle bar
 * coloured by idle cause). No external URL anywhere: it opens offline.
 *
 * A few lines of inline JS count the charts into <html data-charts=N> and
 * record any script error into <html data-js-errors=N>, so a headless browser
 * test can read both from the DOM.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/report_model.h"
#include "report/report_net.h"
#include "lib/json_writer.h"
#include "lib/units.h"

static const char *const cause_color[RPT_CAUSE_N] = {
	"#e15759", "#f28e2b", "#76b7b2", "#59a14f", "#bab0ac",
};
static const char *const cause_label[RPT_CAUSE_N] = {
	"file reads", "writes/fsync", "other file calls", "CUDA sync", "other (compute, ...)",
};
#define BUSY_COLOR  "#4e79a7"
#define WRITE_COLOR "#f28e2b"

static void esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* control bytes are not worth a parse error */
			fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
		}
	}
}

static const char *bytes(uint64_t v, char *buf, size_t len)
{
	rpt_fmt_bytes(v, buf, len);
	return buf;
}

static const char *dur(uint64_t v, char *buf, size_t len)
{
	rpt_fmt_dur(v, buf, len);
	return buf;
}

static void ts(FILE *f, const struct rpt_model *m, uint64_t t)
{
	char wall[48], rel[32];

	rpt_fmt_wall(m, t, wall, sizeof(wall));
	json_fmt_us(rel, rpt_ts_rel_ns(m, t));   /* any value, INT64_MIN too */
	fprintf(f, "<span class=ts title=\"%s\">ts=%sus</span>", wall, rel);
}

/* A log2 histogram as vertical bars. */
static void svg_hist(FILE *f, const char *title, const uint32_t *h, const char *unit)
{
	int lo = -1, hi = -1, nb;
	uint32_t max = 0;
	const int W = 420, H = 160, L = 40, B = 40;

	for (int i = 0; i < RPT_LOG2_BUCKETS; i++)
		if (h[i]) {
			if (lo < 0)
				lo = i;
			hi = i;
			if (h[i] > max)
				max = h[i];
		}
	if (lo < 0)
		return;
	nb = hi - lo + 1;
	fprintf(f, "<figure><figcaption>%s</figcaption><svg class=chart width=%d height=%d "
		"viewBox=\"0 0 %d %d\">", title, W, H, W, H);
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 />", L, H - B, W - 5, H - B);
	for (int i = lo; i <= hi; i++) {
		double bw = (double)(W - L - 10) / nb;
		double x = L + (i - lo) * bw, bh = (double)(H - B - 10) * h[i] / max;
		uint64_t a = i ? 1ull << (i - 1) : 0;

		fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=%s><title>%" PRIu64
			"..%" PRIu64 " %s: %u</title></rect>", x + 1, H - B - bh, bw - 2, bh,
			BUSY_COLOR, a, (uint64_t)(i ? (1ull << i) - 1 : 0), unit, h[i]);
		if (nb <= 12 || (i - lo) % 2 == 0)
			fprintf(f, "<text x=%.1f y=%d font-size=9 text-anchor=middle>%" PRIu64
				"</text>", x + bw / 2, H - B + 12, a);
	}
	fprintf(f, "<text x=%d y=%d font-size=10 text-anchor=middle>%s (log2 buckets)</text>"
		"<text x=4 y=14 font-size=10>%u</text></svg></figure>\n", (W + L) / 2, H - 8, unit,
		max);
}

/* Lines over the capture's timeline; values already in display units. */
struct line {
	const struct rpt_series *s;
	double div;
	const char *color, *label;
};

static void svg_lines(FILE *f, const struct rpt_model *m, const char *title, const char *unit,
		      const struct line *ls, int n)
{
	const int W = 860, H = 180, L = 50, B = 30;
	double max = 0;
	unsigned last = 0;

	for (int k = 0; k < n; k++)
		for (unsigned i = 0; i < RPT_TL_BUCKETS; i++) {
			double v = ls[k].s->v[i] / ls[k].div;

			if (v > max)
				max = v;
			if (ls[k].s->v[i] > 0 && i > last)
				last = i;
		}
	if (max <= 0)
		return;
	last = last + 1 < RPT_TL_BUCKETS ? last + 1 : RPT_TL_BUCKETS - 1;
	fprintf(f, "<figure><figcaption>%s</figcaption><svg class=chart width=%d height=%d "
		"viewBox=\"0 0 %d %d\">", title, W, H, W, H);
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 /><line x1=%d y1=10 x2=%d y2=%d "
		"stroke=#888 />", L, H - B, W - 5, H - B, L, L, H - B);
	for (int k = 0; k < n; k++) {
		fprintf(f, "<polyline fill=none stroke-width=2 stroke=\"%s\" points=\"", ls[k].color);
		for (unsigned i = 0; i <= last; i++)
			fprintf(f, "%.1f,%.1f ", L + (double)(W - L - 10) * i / (last ? last : 1),
				H - B - (H - B - 10) * (ls[k].s->v[i] / ls[k].div) / max);
		fprintf(f, "\"><title>%s</title></polyline>", ls[k].label);
		fprintf(f, "<text x=%d y=%d font-size=10 fill=\"%s\">%s</text>", L + 10 + k * 150,
			H - 6, ls[k].color, ls[k].label);
	}
	fprintf(f, "<text x=4 y=14 font-size=10>%.1f %s</text>", max, unit);
	fprintf(f, "<text x=%d y=%d font-size=10 text-anchor=end>+%.3f s (bucket %.3f ms)</text>"
		"</svg></figure>\n", W - 5, H - 6, (double)(last * m->tl_width) / NS_PER_SEC_F,
		(double)m->tl_width / 1e6);
}

/* One GPU over time: per bucket a column of busy (blue) then idle split by
 * cause; below it one bar of the totals. */
static void svg_gpu(FILE *f, const struct rpt_model *m, const struct rpt_gpu *g)
{
	const int W = 860, H = 150, L = 50, B = 20;
	unsigned a, b;
	double bw, tot;
	uint64_t span = g->last - g->first;
	double x = L;

	a = (unsigned)((g->first > m->tl_t0 ? g->first - m->tl_t0 : 0) / m->tl_width);
	b = (unsigned)((g->last > m->tl_t0 ? g->last - m->tl_t0 : 0) / m->tl_width);
	if (a >= RPT_TL_BUCKETS)
		a = RPT_TL_BUCKETS - 1;
	if (b >= RPT_TL_BUCKETS)
		b = RPT_TL_BUCKETS - 1;
	bw = (double)(W - L - 10) / (b - a + 1);
	fprintf(f, "<figure><figcaption>GPU %u of pid %u: busy and idle by cause over time"
		"</figcaption><svg class=chart width=%d height=%d viewBox=\"0 0 %d %d\">",
		g->device, g->pid, W, H + 40, W, H + 40);
	for (unsigned i = a; i <= b; i++) {
		double y = H - B, w = (double)m->tl_width;
		double v = g->busy->v[i] / w, h = (H - B - 10) * v;

		fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=%s />",
			L + (i - a) * bw, y - h, bw, h, BUSY_COLOR);
		y -= h;
		for (int c = 0; c < RPT_CAUSE_N; c++) {
			h = (H - B - 10) * g->cause[c]->v[i] / w;
			if (h <= 0)
				continue;
			fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=\"%s\" />",
				L + (i - a) * bw, y - h, bw, h, cause_color[c]);
			y -= h;
		}
	}
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 />", L, H - B, W - 5, H - B);
	fprintf(f, "<text x=4 y=14 font-size=10>100%%</text>");
	/* totals bar */
	tot = span ? (double)span : 1;
	fprintf(f, "<rect x=%.1f y=%d width=%.1f height=18 fill=%s><title>busy %.1f%%</title></rect>",
		x, H, (W - L - 10) * (double)g->busy_ns / tot, BUSY_COLOR,
		100.0 * (double)g->busy_ns / tot);
	x += (W - L - 10) * (double)g->busy_ns / tot;
	for (int c = 0; c < RPT_CAUSE_N; c++) {
		double w = (W - L - 10) * (double)g->cause_ns[c] / tot;

		if (w <= 0)
			continue;
		fprintf(f, "<rect x=%.1f y=%d width=%.1f height=18 fill=\"%s\"><title>idle, %s: "
			"%.1f%%</title></rect>", x, H, w, cause_color[c], cause_label[c],
			100.0 * (double)g->cause_ns[c] / tot);
		x += w;
	}
	fprintf(f, "<text x=4 y=%d font-size=10>total</text>", H + 13);
	fprintf(f, "<rect x=%d y=%d width=10 height=10 fill=%s /><text x=%d y=%d font-size=10>"
		"busy</text>", L, H + 26, BUSY_COLOR, L + 14, H + 35);
	for (int c = 0; c < RPT_CAUSE_N; c++)
		fprintf(f, "<rect x=%d y=%d width=10 height=10 fill=\"%s\" /><text x=%d y=%d "
			"font-size=10>idle: %s</text>", L + 60 + c * 140, H + 26, cause_color[c],
			L + 74 + c * 140, H + 35, cause_label[c]);
	fprintf(f, "</svg></figure>\n");
}

static const char CSS[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222;max-width:1100px}"
	"h1{font-size:20px}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:28px}"
	"table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;border-bottom:1px "
	"solid #eee;text-align:right}td.l,th.l{text-align:left;word-break:break-all}"
	".warn{background:#fde2e1;border:1px solid #e15759;padding:6px 10px;margin:6px 0}"
	".reco{background:#eef5ee;border-left:4px solid #59a14f;padding:6px 10px;margin:8px 0}"
	".ev{color:#555;font-size:12px}.ts{font-family:monospace;color:#345}"
	"figure{margin:10px 0}figcaption{font-size:12px;color:#444}svg.chart{background:#fafafa}";

static void warnings(FILE *f, const struct rpt_model *m)
{
	uint64_t d;
	bool known = rpt_model__dropped(m, &d);

	if (!known)
		fprintf(f, "<div class=warn>Drops unknown: the capture has no stats record.</div>");
	else if (d)
		fprintf(f, "<div class=warn>LOSSY CAPTURE: %" PRIu64 " events were lost; totals "
			"undercount.</div>", d);
	if (m->f->truncated)
		fprintf(f, "<div class=warn>Capture cut short at offset %" PRIu64 ".</div>",
			m->f->trunc_offset);
	if (!m->f->records)
		fprintf(f, "<div class=warn>The capture holds no records.</div>");
}

static void summary(FILE *f, const struct rpt_model *m)
{
	const struct gpuio_cap_header *h = m->hdr;
	char a[32], b[32];
	uint64_t d;

	fprintf(f, "<h2>Summary</h2><table>");
	fprintf(f, "<tr><th class=l>host</th><td class=l>");
	esc(f, h->hostname, sizeof(h->hostname));
	fprintf(f, "</td></tr><tr><th class=l>target</th><td class=l>");
	esc(f, h->target, sizeof(h->target));
	fprintf(f, "</td></tr><tr><th class=l>start</th><td class=l>");
	if (m->first_ts)
		ts(f, m, m->first_ts);
	fprintf(f, " for %s</td></tr>", dur(rpt_model__duration(m), a, sizeof(a)));
	fprintf(f, "<tr><th class=l>time base</th><td class=l>ts = µs after MONOTONIC %" PRIu64
		" ns, as in the exports (hover a ts for UTC)</td></tr>", (uint64_t)h->monotonic_ns);
	fprintf(f, "<tr><th class=l>tasks</th><td class=l>%zu processes, %zu threads</td></tr>",
		m->nprocs, m->nthreads);
	fprintf(f, "<tr><th class=l>VFS</th><td class=l>read %s in %" PRIu64 " calls, write %s "
		"in %" PRIu64 " calls</td></tr>", bytes(m->vfs_rbytes, a, sizeof(a)), m->vfs_rops,
		bytes(m->vfs_wbytes, b, sizeof(b)), m->vfs_wops);
	fprintf(f, "<tr><th class=l>block</th><td class=l>read %s in %" PRIu64 " requests, write "
		"%s in %" PRIu64 " requests</td></tr>", bytes(m->blk_rbytes, a, sizeof(a)),
		m->blk_rops, bytes(m->blk_wbytes, b, sizeof(b)), m->blk_wops);
	if (m->pages)
		fprintf(f, "<tr><th class=l>page cache</th><td class=l>hit ratio %.1f%%</td></tr>",
			100 * rpt_ratio(m->hit_pages, m->pages));
	if (m->minor_faults || m->major_faults)
		fprintf(f, "<tr><th class=l>page faults</th><td class=l>%" PRIu64 " minor, %" PRIu64
			" major on file mappings</td></tr>", m->minor_faults, m->major_faults);
	fprintf(f, "<tr><th class=l>attach modes</th><td class=l>vfs=");
	esc(f, h->vfs_mode, sizeof(h->vfs_mode));
	fprintf(f, " block=");
	esc(f, h->block_mode, sizeof(h->block_mode));
	fprintf(f, "</td></tr><tr><th class=l>drops</th><td class=l>");
	if (rpt_model__dropped(m, &d))
		fprintf(f, "%" PRIu64 " (measured)", d);
	else
		fprintf(f, "unknown");
	fprintf(f, "</td></tr></table>\n");
}

static void gpu(FILE *f, const struct rpt_model *m)
{
	char a[32], b[32];

	fprintf(f, "<h2>GPU</h2>");
	if (!m->ngpus) {
		fprintf(f, "<p>No GPU activity records in this capture.</p>");
		return;
	}
	for (size_t i = 0; i < m->ngpus; i++) {
		const struct rpt_gpu *g = &m->gpus[i];
		uint64_t span = g->last - g->first;

		fprintf(f, "<p>GPU %u of pid %u (", g->device, g->pid);
		esc(f, rpt_proc_comm(m, g->pid), 16);
		fprintf(f, "): busy %.1f%% of %s; %" PRIu64 " idle gaps, %s idle.</p>",
			span ? 100.0 * (double)g->busy_ns / (double)span : 0, dur(span, a, sizeof(a)),
			g->ngaps, dur(g->idle_ns, b, sizeof(b)));
		svg_gpu(f, m, g);
	}
	fprintf(f, "<table><tr><th class=l>idle cause</th><th>time</th></tr>");
	for (int c = 0; c < RPT_CAUSE_N; c++)
		fprintf(f, "<tr><td class=l><span style=\"color:%s\">&#9632;</span> %s</td><td>%s"
			"</td></tr>", cause_color[c], cause_label[c],
			dur(m->cause_ns[c], a, sizeof(a)));
	fprintf(f, "</table>");
	if (m->launch_states) {
		/* the launching threads' states: why the GPU got no work */
		fprintf(f, "<table><tr><th class=l>the launching thread was</th><th>time</th></tr>");
		for (int c = 0; c < RPT_LS_N; c++)
			fprintf(f, "<tr><td class=l>%s</td><td>%s</td></tr>", rpt_ls_name(c),
				dur(m->launch_ns[c], a, sizeof(a)));
		fprintf(f, "</table>");
	}
	fprintf(f, "<h3>Largest idle gaps</h3><table><tr><th class=l>start</th>"
		"<th>length</th><th class=l>host threads were</th><th class=l>launching thread</th>"
		"<th class=l>files</th></tr>");
	for (size_t i = 0; i < m->ntop_gaps; i++) {
		const struct rpt_gap *gp = &m->gaps[m->top_gaps[i]];

		fprintf(f, "<tr><td class=l>");
		ts(f, m, gp->s);
		fprintf(f, "</td><td>%s</td><td class=l>", dur(gp->e - gp->s, a, sizeof(a)));
		for (int c = 0; c < RPT_CAUSE_N; c++)
			if (gp->cause_ns[c])
				fprintf(f, "%s %s; ", cause_label[c], dur(gp->cause_ns[c], b, sizeof(b)));
		fprintf(f, "</td><td class=l>");
		for (int c = 0; m->launch_states && c < RPT_LS_N; c++)
			if (gp->launch_ns[c])
				fprintf(f, "%s %s; ", rpt_ls_name(c), dur(gp->launch_ns[c], b, sizeof(b)));
		fprintf(f, "</td><td class=l>");
		for (int k = 0; k < RPT_GAP_FILES && m->top_gap_files[i][k].ns; k++) {
			const struct rpt_file *fl = &m->files[m->top_gap_files[i][k].file - 1];

			esc(f, fl->path, fl->path_len);
			fprintf(f, " (%s)<br>", dur(m->top_gap_files[i][k].ns, a, sizeof(a)));
		}
		fprintf(f, "</td></tr>");
	}
	fprintf(f, "</table>\n");
}

static void ckpts(FILE *f, const struct rpt_model *m)
{
	char a[32], b[32], c[32];

	fprintf(f, "<h2>Checkpoints</h2>");
	if (!m->nckpts) {
		fprintf(f, "<p>No write burst of 1 MiB or more ended by fsync/close.</p>");
		return;
	}
	fprintf(f, "<table><tr><th class=l>start</th><th>bytes</th><th>duration</th><th>MiB/s"
		"</th><th>GPU idle</th><th class=l>file</th></tr>");
	for (size_t i = 0; i < m->nckpts && i < 200; i++) {
		const struct rpt_ckpt *k = &m->ckpts[i];
		uint64_t d = k->e - k->s;

		fprintf(f, "<tr><td class=l>");
		ts(f, m, k->s);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%.1f</td><td>%s</td><td class=l>",
			bytes(k->bytes, a, sizeof(a)), dur(d, b, sizeof(b)),
			d ? (double)k->bytes / 1048576.0 / ((double)d / NS_PER_SEC_F) : 0,
			dur(k->gpu_lost_ns, c, sizeof(c)));
		esc(f, m->files[k->file].path, m->files[k->file].path_len);
		fprintf(f, "</td></tr>");
	}
	fprintf(f, "</table>\n");
}

static void files(FILE *f, const struct rpt_model *m, const struct rpt_opts *opt)
{
	char a[32], b[32], c[32], d[32], e[32], g[32];
	size_t n, *idx = rpt_model__ranked_files(m, opt->top, &n);

	fprintf(f, "<h2>Files</h2><p>%zu of %zu files (top %u by time, bytes and ops).</p>",
		n, m->nfiles, opt->top);
	fprintf(f, "<table><tr><th class=l>path</th><th class=l>role</th><th>read</th><th>ops</th>"
		"<th>write</th><th>ops</th><th>time</th><th>mean</th><th>p50</th><th>p99</th>"
		"<th>cache hit</th><th class=l>pattern</th><th>opens</th>%s</tr>",
		m->faults ? "<th>minor faults</th><th>major faults</th>" : "");
	for (size_t k = 0; k < n; k++) {
		const struct rpt_file *fl = &m->files[idx[k]];
		uint64_t single;
		enum rpt_pattern p = rpt_file__pattern(fl, &single);

		fprintf(f, "<tr><td class=l>");
		esc(f, fl->path, fl->path_len);
		fprintf(f, "</td><td class=l>%s", rpt_role_names[fl->role]);
		fprintf(f, "</td><td>%s</td><td>%" PRIu64 "</td><td>%s</td><td>%" PRIu64 "</td>"
			"<td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
			bytes(fl->rbytes, a, sizeof(a)), fl->rops, bytes(fl->wbytes, b, sizeof(b)),
			fl->wops, dur(fl->rtime + fl->wtime + fl->otime, c, sizeof(c)),
			dur(fl->lat.n ? fl->lat.sum / fl->lat.n : 0, d, sizeof(d)),
			dur(rpt_hist__pct(&fl->lat, 0.5), e, sizeof(e)),
			dur(rpt_hist__pct(&fl->lat, 0.99), g, sizeof(g)));
		if (fl->pages)
			fprintf(f, "<td>%.1f%%</td>", 100 * rpt_ratio(fl->hit_pages, fl->pages));
		else
			fprintf(f, "<td>-</td>");
		fprintf(f, "<td class=l>%s</td><td>%" PRIu64 "</td>",
			single ? "-" : rpt_pattern_name(p), fl->opens);
		if (m->faults)
			fprintf(f, "<td>%" PRIu64 "</td><td>%" PRIu64 "</td>", fl->minor_faults,
				fl->major_faults);
		fprintf(f, "</tr>");
	}
	fprintf(f, "</table>\n");
	free(idx);
	if (m->small_files)
		fprintf(f, "<p>%" PRIu64 " of %" PRIu64 " data files read are under 1 MiB and read once."
			"</p>", m->small_files, m->read_files);
}

static void devices(FILE *f, const struct rpt_model *m)
{
	double secs = (double)m->tl_width / NS_PER_SEC_F;

	fprintf(f, "<h2>Devices</h2>");
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct rpt_dev *d = &m->devs[i];
		char t[96], a[32], b[32];
		uint64_t reqs = 0;

		for (int k = 0; k < 5; k++)
			reqs += d->ops[k];
		if (!reqs)
			continue;
		fprintf(f, "<h3>");
		esc(f, d->name, sizeof(d->name));
		fprintf(f, "</h3><p>%" PRIu64 " requests; read %s, write %s; writeback %.1f%% of "
			"written bytes.</p>", reqs, bytes(d->bytes[0], a, sizeof(a)),
			bytes(d->bytes[1], b, sizeof(b)),
			d->bytes[1] ? 100.0 * (double)d->wb_bytes / (double)d->bytes[1] : 0);
		snprintf(t, sizeof(t), "%s: queue time (insert to issue)", d->name);
		fprintf(f, "<div style=\"display:flex;gap:12px\">");
		svg_hist(f, t, d->q_hist, "us");
		snprintf(t, sizeof(t), "%s: service time (issue to complete)", d->name);
		svg_hist(f, t, d->s_hist, "us");
		fprintf(f, "</div>");
		{
			struct line ls[] = {
				{ d->rd, 1048576.0 * secs, BUSY_COLOR, "read MiB/s" },
				{ d->wr, 1048576.0 * secs, WRITE_COLOR, "write MiB/s" },
			};
			struct line q[] = { { d->depth, (double)m->tl_width, "#76b7b2", "queue depth" } };

			snprintf(t, sizeof(t), "%s: throughput over time", d->name);
			svg_lines(f, m, t, "MiB/s", ls, 2);
			snprintf(t, sizeof(t), "%s: requests in flight (mean per bucket)", d->name);
			svg_lines(f, m, t, "requests", q, 1);
		}
	}
}

static void threads(FILE *f, const struct rpt_model *m, const struct rpt_opts *opt)
{
	char a[32], b[32], c[32], d[32], e[32], g[32];
	size_t lim = opt->top && opt->top * 5 < m->nthreads ? opt->top * 5 : m->nthreads;

	fprintf(f, "<h2>Threads</h2><table><tr><th>pid</th><th>tid</th><th class=l>comm</th>"
		"<th>wall</th><th>I/O</th><th>read</th><th>write</th><th>CUDA sync</th>"
		"<th>read bytes</th></tr>");
	for (size_t i = 0; i < lim; i++) {
		const struct rpt_thread *t = &m->threads[i];

		fprintf(f, "<tr><td>%u</td><td>%u</td><td class=l>", t->pid, t->tid);
		esc(f, t->comm[0] ? t->comm : rpt_proc_comm(m, t->pid), 16);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
			"</tr>", dur(rpt_thread__wall(m, t), a, sizeof(a)), dur(t->io_ns, b, sizeof(b)),
			dur(t->read_ns, c, sizeof(c)), dur(t->write_ns, d, sizeof(d)),
			dur(t->cuda_sync_ns, e, sizeof(e)), bytes(t->rbytes, g, sizeof(g)));
	}
	fprintf(f, "</table>");
	{
		struct line ls[] = { { m->tl_reads_inflight, (double)m->tl_width, "#e15759",
				       "reads in flight" } };
		struct line tp[] = {
			{ m->tl_rbytes, 1048576.0 * (double)m->tl_width / NS_PER_SEC_F, BUSY_COLOR, "read MiB/s" },
			{ m->tl_wbytes, 1048576.0 * (double)m->tl_width / NS_PER_SEC_F, WRITE_COLOR, "write MiB/s" },
		};

		svg_lines(f, m, "File reads in flight over time (loader concurrency)", "reads", ls, 1);
		svg_lines(f, m, "VFS throughput over time", "MiB/s", tp, 2);
	}
}

/* Steps as stacked bars: the wait for data, then the rest of the step. */
static void svg_steps(FILE *f, const struct rpt_model *m, const struct rpt_wait *w)
{
	const int W = 720, H = 180, L = 50, B = 30;
	uint64_t max = 0;
	double bw;
	char a[32];

	for (size_t i = 0; i < w->nsteps; i++)
		if (w->steps[i].wait_ns + w->steps[i].compute_ns > max)
			max = w->steps[i].wait_ns + w->steps[i].compute_ns;
	if (!w->nsteps || !max)
		return;
	bw = (double)(W - L - 10) / (double)w->nsteps;
	rpt_fmt_dur(max, a, sizeof(a));
	fprintf(f, "<figure><figcaption>steps");
	if (w->step_range) {    /* a name the program chose: escaped */
		fprintf(f, " (NVTX range &quot;");
		esc(f, w->step_range, strlen(w->step_range));
		fprintf(f, "&quot;)");
	}
	fprintf(f, ": wait for data (red) and the rest of the step "
		"(blue)</figcaption><svg class=chart width=%d height=%d viewBox=\"0 0 %d %d\">",
		W, H, W, H);
	fprintf(f, "<line x1=%d y1=%d x2=%d y2=%d stroke=#888 />", L, H - B, W - 5, H - B);
	for (size_t i = 0; i < w->nsteps; i++) {
		const struct rpt_step *s = &w->steps[i];
		double hw = (double)(H - B - 10) * (double)s->wait_ns / (double)max;
		double hc = (double)(H - B - 10) * (double)s->compute_ns / (double)max;
		double x = L + (double)i * bw;

		fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=#d9534f><title>step %zu: "
			"wait %.3f ms</title></rect>", x + 0.5, H - B - hw, bw > 2 ? bw - 1 : bw, hw,
			i + 1, (double)s->wait_ns / 1e6);
		fprintf(f, "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=#4a7ebb><title>step %zu: "
			"rest %.3f ms</title></rect>", x + 0.5, H - B - hw - hc, bw > 2 ? bw - 1 : bw, hc,
			i + 1, (double)s->compute_ns / 1e6);
	}
	fprintf(f, "<text x=4 y=14 font-size=10>%s</text><text x=%d y=%d font-size=10 "
		"text-anchor=middle>step (1..%zu)</text></svg></figure>\n", a, (W + L) / 2, H - 8,
		w->nsteps);
}

/* One loop (report_wait.c): its time, what its producers did, its steps. */
static void loop_section(FILE *f, const struct rpt_model *m, const struct rpt_wait *w)
{
	uint64_t span = rpt_wait__span(w), act = rpt_wait__act_total(w);
	char line[1024], a[32];

	fprintf(f, "<p>");
	rpt_wait__headline(m, w, line, sizeof(line));
	esc(f, line, strlen(line));
	fprintf(f, "</p><table><tr><th class=l>the loop's time</th><th>time</th><th>%%</th></tr>");
	for (int k = 0; k < RPT_TW_N; k++) {
		if (!w->ns[k] && k != RPT_TW_CPU && k != RPT_TW_DATA)
			continue;
		rpt_fmt_dur(w->ns[k], a, sizeof(a));
		fprintf(f, "<tr><td class=l>%s</td><td>%s</td><td>%.1f</td></tr>", rpt_tw_names[k], a,
			span ? 100.0 * (double)w->ns[k] / (double)span : 0);
	}
	fprintf(f, "</table><table><tr><th class=l>while it waited, the producers that fetch its "
		"data</th><th>time</th><th>%%</th></tr>");
	for (int k = 0; k < RPT_WA_N; k++) {
		rpt_fmt_dur(w->act_ns[k], a, sizeof(a));
		fprintf(f, "<tr><td class=l>%s</td><td>%s</td><td>%.1f</td></tr>", rpt_wa_names[k], a,
			act ? 100.0 * (double)w->act_ns[k] / (double)act : 0);
	}
	fprintf(f, "</table>");
	svg_steps(f, m, w);
}

/* Why the loops waited: the stragglers side by side, then each loop. */
static void wait_section(FILE *f, const struct rpt_model *m)
{
	char a[32];

	if (!m->wait)
		return;
	if (m->nloops == 1) {
		fprintf(f, "<h2>Why the loop waited</h2>");
		loop_section(f, m, m->wait);
		return;
	}
	fprintf(f, "<h2>Why the loops waited (%zu loops)</h2><table><tr><th class=l>loop</th>"
		"<th>data wait</th><th>%% of run</th><th class=l>its largest cause</th></tr>", m->nloops);
	for (size_t i = 0; i < m->nloops; i++) {
		const struct rpt_wait *w = m->loops[rpt_straggler(m, i)];
		uint64_t span = rpt_wait__span(w);

		rpt_fmt_dur(w->ns[RPT_TW_DATA], a, sizeof(a));
		fprintf(f, "<tr><td class=l>pid %u tid %u ", w->pid, w->tid);
		esc(f, rpt_proc_comm(m, w->pid), strlen(rpt_proc_comm(m, w->pid)));
		fprintf(f, "</td><td>%s</td><td>%.1f</td><td class=l>%s</td></tr>", a,
			span ? 100.0 * (double)w->ns[RPT_TW_DATA] / (double)span : 0, rpt_wait__cause(w));
	}
	fprintf(f, "</table>");
	for (size_t i = 0; i < m->nloops; i++) {
		const struct rpt_wait *w = m->loops[i];

		fprintf(f, "<h3>Loop %zu: pid %u tid %u</h3>", i + 1, w->pid, w->tid);
		loop_section(f, m, w);
	}
}

static int render(FILE *f, const struct rpt_model *m, const struct rpt_opts *opt)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
		"<title>gpuio report</title><style>%s</style>"
		"<script>window.addEventListener('error',function(){var h=document.documentElement;"
		"h.setAttribute('data-js-errors',(+h.getAttribute('data-js-errors')||0)+1);});"
		"</script></head><body>\n<h1>gpuio report: ", CSS);
	esc(f, m->path, strlen(m->path));
	fprintf(f, "</h1>\n");
	warnings(f, m);
	fprintf(f, "<h2>Recommendations</h2>");
	if (!m->nrecos)
		fprintf(f, "<p>None: no threshold was crossed.</p>");
	for (size_t i = 0; i < m->nrecos; i++) {
		fprintf(f, "<div class=reco><b>[");
		esc(f, m->recos[i].kind, sizeof(m->recos[i].kind));
		fprintf(f, "]</b> ");
		esc(f, m->recos[i].text, sizeof(m->recos[i].text));
		fprintf(f, "<div class=ev>evidence: ");
		esc(f, m->recos[i].evidence, sizeof(m->recos[i].evidence));
		fprintf(f, "</div></div>\n");
	}
	wait_section(f, m);
	summary(f, m);
	gpu(f, m);
	ckpts(f, m);
	files(f, m, opt);
	devices(f, m);
	threads(f, m, opt);
	rpt_net__html(f, m, esc);       /* only where sockets were named */
	fprintf(f, "\n<script>document.documentElement.setAttribute('data-charts',"
		"document.querySelectorAll('svg.chart').length);</script>\n</body></html>\n");
	return ferror(f) ? -EIO : 0;
}

int rpt_html__write(const struct rpt_model *m, const struct rpt_opts *opt, const char *out)
{
	char *tmp = NULL;
	FILE *f;
	int fd, rc;

	if (asprintf(&tmp, "%s.tmp", out) < 0)
		return -ENOMEM;
	/* never through a symlink */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		goto fail;
	}
	rc = render(f, m, opt);
	if (fflush(f) || fsync(fileno(f)))
		rc = rc ? rc : -errno;
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc)
		goto fail;
	if (rename(tmp, out)) {
		rc = -errno;
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	unlink(tmp);
	free(tmp);
	return rc;
}
