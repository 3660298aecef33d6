// SPDX-License-Identifier: MIT
/* unit_parse — numbers with units (lib/parse.c) and default names (cmd/options.c). */
#include <stdlib.h>
#include <string.h>
#include "cmd/options.h"
#include "lib/parse.h"
#include "unit.h"

static void dur(const char *s, int ok, uint64_t want)
{
	uint64_t v = 0;
	int rc = parse_duration_ns(s, false, &v);

	CHECK((rc == 0) == ok, "'%s': rc %d", s, rc);
	if (ok)
		CHECK(v == want, "'%s': %llu, want %llu", s, (unsigned long long)v, (unsigned long long)want);
}

static void bytes(const char *s, int ok, uint64_t want)
{
	uint64_t v = 0;
	int rc = parse_bytes(s, &v);

	CHECK((rc == 0) == ok, "'%s': rc %d", s, rc);
	if (ok)
		CHECK(v == want, "'%s': %llu, want %llu", s, (unsigned long long)v, (unsigned long long)want);
}

int main(void)
{
	char buf[256];
	unsigned long u;
	uint64_t z;
	char *o;

	dur("30", 1, 30000000000ull);
	dur("500ms", 1, 500000000ull);
	dur("1.5s", 1, 1500000000ull);
	dur("5m", 1, 300000000000ull);
	dur("5min", 1, 300000000000ull);
	dur("2h", 1, 7200000000000ull);
	dur("250us", 1, 250000ull);
	dur("0", 0, 0);
	dur("-1s", 0, 0);
	dur("1x", 0, 0);
	dur("", 0, 0);
	dur("s", 0, 0);
	CHECK(parse_duration_ns("0", true, &z) == 0 && z == 0, "0 with allow_zero");
	bytes("4096", 1, 4096);
	bytes("64k", 1, 65536);
	bytes("16M", 1, 16u << 20);
	bytes("2GiB", 1, 2ull << 30);
	bytes("1.5G", 1, 3ull << 29);
	bytes("100B", 1, 100);
	bytes("12Mx", 0, 0);
	bytes("-1", 0, 0);
	bytes("k", 0, 0);
	CHECK(parse_ulong("17", 1, 100, &u) == 0 && u == 17, "17");
	CHECK(parse_ulong("0", 1, 100, &u) != 0, "0 below min");
	CHECK(parse_ulong("101", 1, 100, &u) != 0, "101 above max");
	CHECK(parse_ulong("+5", 1, 100, &u) != 0, "+5");
	CHECK(parse_ulong("5 ", 1, 100, &u) != 0, "trailing space");
	CHECK(parse_str_ends_with("a.json.gz", ".gz") && !parse_str_ends_with(".gz", ".gz"), "ends_with");
	cmd_opt__capture_for_output("run.json.gz", buf, sizeof(buf));
	CHECK(!strcmp(buf, "run.gpuio"), "%s", buf);
	cmd_opt__capture_for_output("/x/y.pftrace", buf, sizeof(buf));
	CHECK(!strcmp(buf, "/x/y.gpuio"), "%s", buf);
	cmd_opt__capture_for_output("trace", buf, sizeof(buf));
	CHECK(!strcmp(buf, "trace.gpuio"), "%s", buf);
	o = cmd_opt__output_for_capture("a/b.gpuio");
	CHECK(o && !strcmp(o, "a/b.json"), "%s", o);
	free(o);
	o = cmd_opt__output_for_capture("cap");
	CHECK(o && !strcmp(o, "cap.json"), "%s", o);
	free(o);
	return unit_done("unit_parse");
}
