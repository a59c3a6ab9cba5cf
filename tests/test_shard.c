/* --shard K/N: parsing and the partition of shapes. */
#include <criterion/criterion.h>
#include <string.h>

#include "tuner/sweep/shard.h"

Test(shard, parses_k_of_n)
{
	shard_spec s;
	cr_assert_eq(shard_parse("2/4", &s), 0);
	cr_assert_eq(s.index, 2);
	cr_assert_eq(s.count, 4);
	cr_assert_eq(shard_parse("1/1", &s), 0);
	static const char *const bad[] = { "0/4", "5/4", "2", "2/", "/4", "a/4", "2/4x", "-1/4",
					   "1/0", "1/100001", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_assert_eq(shard_parse(bad[i], &s), -1, "%s was accepted", bad[i]);
}

#define NSHAPES 600

static size_t make_shapes(sweep_shape *shapes)
{
	size_t n = 0;
	for (int d = 0; d < 3; d++)
		for (long long m = 1; m <= 4; m++)
			for (long long k = 0; k < 50; k++)
				shapes[n++] = (sweep_shape){ "softmax", (at_dtype)d, m * 1024, 128 + 64 * k, NULL };
	return n;
}

Test(shard, shares_are_disjoint_complete_and_deterministic)
{
	static sweep_shape all[NSHAPES];
	size_t n = make_shapes(all);
	cr_assert_eq(n, NSHAPES);
	int owner[NSHAPES];
	memset(owner, 0, sizeof owner);
	const int count = 7;
	size_t total = 0;
	for (int k = 1; k <= count; k++) {
		static sweep_shape part[NSHAPES];
		memcpy(part, all, sizeof all);
		shard_spec s = { k, count };
		size_t kept = shard_filter(part, n, &s);
		cr_assert_gt(kept, 0, "share %d is empty", k);
		total += kept;
		for (size_t i = 0; i < kept; i++) {
			size_t j = 0;
			while (j < n && memcmp(&all[j], &part[i], sizeof all[j]) != 0)
				j++;
			cr_assert_lt(j, n);
			cr_assert_eq(owner[j], 0, "shape %zu in shares %d and %d", j, owner[j], k);
			owner[j] = k;
		}
	}
	cr_assert_eq(total, n);
	/* the same shape always lands in the same share, whatever else is there */
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(shard_of(&all[i], count), owner[i]);
}

Test(shard, one_share_keeps_everything_in_order)
{
	static sweep_shape all[NSHAPES], part[NSHAPES];
	size_t n = make_shapes(all);
	memcpy(part, all, sizeof all);
	shard_spec s = { 1, 1 };
	cr_assert_eq(shard_filter(part, n, &s), n);
	cr_assert_eq(memcmp(part, all, sizeof all), 0);
}
