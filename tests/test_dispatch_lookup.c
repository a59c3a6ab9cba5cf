/* Tests of the dispatch library's lookup table (dispatch/policy/lookup.c), the
 * cache atd_softmax probes on every call: keys differing in any one field
 * are distinct, values survive growth, a put replaces, and an empty table
 * finds nothing. */
#include <criterion/criterion.h>

#include "dispatch/policy/lookup.h"

static atdi_resolved value(unsigned grid)
{
	atdi_resolved r = { 0 };
	r.grid = grid;
	r.level = ATD_LEVEL_NEAREST;
	r.geom.threads = (int)grid % 1024 + 1;
	return r;
}

Test(dispatch_lookup, an_empty_table_finds_nothing)
{
	atdi_lookup l = { 0 };
	atdi_key k = { NULL, 1, 1, 0 };
	atdi_resolved r;
	cr_assert_eq(atdi_lookup_find(&l, &k, &r), 0);
	atdi_lookup_free(&l);
}

Test(dispatch_lookup, every_field_of_the_key_counts)
{
	atdi_lookup l = { 0 };
	int ctx_a, ctx_b;
	const atdi_key keys[] = {
		{ &ctx_a, 4096, 1000, 0 }, { &ctx_b, 4096, 1000, 0 }, { &ctx_a, 4096, 1000, 1 },
		{ &ctx_a, 4097, 1000, 0 }, { &ctx_a, 4096, 1001, 0 }, { NULL, 4096, 1000, 0 },
	};
	enum { NKEYS = sizeof keys / sizeof keys[0] };
	for (unsigned i = 0; i < NKEYS; i++) {
		atdi_resolved v = value(100 + i);
		cr_assert_eq(atdi_lookup_put(&l, &keys[i], &v), 0);
	}
	cr_assert_eq(l.count, NKEYS);
	for (unsigned i = 0; i < NKEYS; i++) {
		atdi_resolved r;
		cr_assert_eq(atdi_lookup_find(&l, &keys[i], &r), 1);
		cr_assert_eq(r.grid, 100 + i);
	}
	atdi_lookup_free(&l);
	cr_assert_eq(l.cap, 0);
}

Test(dispatch_lookup, values_survive_growth_and_puts_replace)
{
	atdi_lookup l = { 0 };
	int ctx;
	enum { COUNT = 20000 };
	for (unsigned i = 0; i < COUNT; i++) {
		atdi_key k = { &ctx, i % 97 + 1, i + 1, (int)(i % 3) };
		atdi_resolved v = value(i);
		cr_assert_eq(atdi_lookup_put(&l, &k, &v), 0);
	}
	cr_assert_eq(l.count, COUNT);
	cr_assert_leq(2 * l.count, l.cap, "the table is more than half full");
	for (unsigned i = 0; i < COUNT; i += 2) {
		atdi_key k = { &ctx, i % 97 + 1, i + 1, (int)(i % 3) };
		atdi_resolved v = value(i + 1000000);
		cr_assert_eq(atdi_lookup_put(&l, &k, &v), 0);
	}
	cr_assert_eq(l.count, COUNT);
	for (unsigned i = 0; i < COUNT; i++) {
		atdi_key k = { &ctx, i % 97 + 1, i + 1, (int)(i % 3) };
		atdi_resolved r;
		cr_assert_eq(atdi_lookup_find(&l, &k, &r), 1, "key %u lost", i);
		cr_assert_eq(r.grid, i % 2 ? i : i + 1000000);
		cr_assert_eq(r.level, ATD_LEVEL_NEAREST);
	}
	atdi_key absent = { &ctx, 1, COUNT + 5, 0 };
	atdi_resolved r;
	cr_assert_eq(atdi_lookup_find(&l, &absent, &r), 0);
	atdi_lookup_free(&l);
}
