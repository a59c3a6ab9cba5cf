/* Tests the tree ensemble's numbers as text (common/tree_ensemble.h): the
 * fast reader gives strtod's double for every form the writer emits and
 * more, and an ensemble reads back to the same doubles, rounded or not. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/tree_ensemble.h"

static unsigned long long state = 0x9e3779b97f4a7c15ull;

/* A double of any sign and of magnitude 1e-30 to 1e30 (xorshift). */
static double any_double(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	double mant = (double)(state >> 11) / 9007199254740992.0;
	int ex = (int)(state % 61) - 30;
	return (state & 1 ? -1 : 1) * mant * pow(10, ex);
}

static void same_as_strtod(const char *text)
{
	double fast, slow = strtod(text, NULL);
	const char *end;
	cr_assert_eq(te_parse_double(text, &fast, &end), 0, "%s", text);
	cr_assert(memcmp(&fast, &slow, sizeof fast) == 0, "%s: %.17g, strtod %.17g", text, fast,
		  slow);
	cr_assert_eq(end, text + strlen(text), "%s: stopped at %s", text, end);
}

Test(tree_text, the_fast_reader_gives_strtods_double_at_every_form)
{
	char buf[64];
	for (int i = 0; i < 200000; i++) {
		double v = any_double();
		snprintf(buf, sizeof buf, "%.17g", v);
		same_as_strtod(buf);
		snprintf(buf, sizeof buf, "%.15g", v);
		same_as_strtod(buf);
		snprintf(buf, sizeof buf, "%.6g", v);
		same_as_strtod(buf);
	}
	const char *odd[] = { "0", "-0", "1", "-1.5", "100", "0.000123", "1e22", "1e-22",
			      "123456789012345", "1234567890123456789", "9e-23", "3.5E+7",
			      "0.1", "inf", "-inf", "nan", "1e308", "4.9e-324", "7.", ".5" };
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		double fast;
		const char *end;
		cr_assert_eq(te_parse_double(odd[i], &fast, &end), 0, "%s", odd[i]);
		double slow = strtod(odd[i], NULL);
		cr_assert(isnan(slow) ? isnan(fast) : memcmp(&fast, &slow, sizeof fast) == 0,
			  "%s: %.17g, strtod %.17g", odd[i], fast, slow);
	}
	double v;
	const char *end;
	cr_assert_eq(te_parse_double("  tree", &v, &end), -1, "no number");
}

/* A two-tree ensemble of arbitrary doubles. */
static void make_ensemble(te_ensemble *e)
{
	memset(e, 0, sizeof *e);
	e->base = any_double();
	e->ntrees = 2;
	e->trees = calloc(2, sizeof *e->trees);
	for (int i = 0; i < 2; i++) {
		te_tree *t = &e->trees[i];
		t->nnodes = 3;
		t->nodes = calloc(3, sizeof *t->nodes);
		t->nodes[0] = (te_node){ .feature = 1, .threshold = any_double(), .left = 1,
					 .right = 2, .value = any_double() };
		for (int k = 1; k < 3; k++)
			t->nodes[k] = (te_node){ .feature = -1, .value = any_double() };
	}
}

static void reads_back_the_same(const te_ensemble *e)
{
	strbuf text = { 0 };
	te_to_text(e, &text);
	const char *p = text.data;
	te_ensemble back;
	at_error err;
	cr_assert_eq(te_from_text(&p, 4, &back, &err), 0, "%s", err.msg);
	cr_assert_eq(memcmp(&back.base, &e->base, sizeof e->base), 0);
	for (int i = 0; i < e->ntrees; i++)
		for (int k = 0; k < e->trees[i].nnodes; k++) {
			const te_node *a = &e->trees[i].nodes[k], *b = &back.trees[i].nodes[k];
			cr_assert(memcmp(&a->threshold, &b->threshold, sizeof a->threshold) == 0);
			cr_assert(memcmp(&a->value, &b->value, sizeof a->value) == 0);
		}
	te_free(&back);
	strbuf_free(&text);
}

Test(tree_text, an_ensemble_reads_back_exactly_rounded_or_not_and_rounded_is_short)
{
	te_ensemble e;
	make_ensemble(&e);
	reads_back_the_same(&e);
	strbuf full = { 0 }, shorter = { 0 };
	te_to_text(&e, &full);
	te_round(&e);
	reads_back_the_same(&e);
	te_to_text(&e, &shorter);
	cr_assert_lt(shorter.len, full.len, "15 digits a number, not 17");
	strbuf_free(&full);
	strbuf_free(&shorter);
	te_free(&e);
}
