/* common/sha256.c against the digests of FIPS 180-4's examples and of
 * sha256sum, at the lengths where the padding takes one block or two. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"

static void expect(const void *data, size_t len, const char *want)
{
	char got[SHA256_HEX_LEN + 1];
	sha256_hex(data, len, got);
	cr_assert_str_eq(got, want, "length %zu", len);
}

Test(sha256, the_standard_examples)
{
	expect("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	expect(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, a_million_a_over_many_blocks)
{
	char *a = malloc(1000000);
	cr_assert_not_null(a);
	memset(a, 'a', 1000000);
	expect(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

/* 55 bytes pad in one block, 56 and 63 need a second, 64 is a whole block
 * (digests of `head -c L /dev/zero | sha256sum`). */
Test(sha256, zeros_around_the_block_boundary)
{
	static const unsigned char zeros[64];
	expect(zeros, 55, "02779466cdec163811d078815c633f21901413081449002f24aa3e80f0b88ef7");
	expect(zeros, 56, "d4817aa5497628e7c77e6b606107042bbba3130888c5f47a375e6179be789fbb");
	expect(zeros, 63, "c7723fa1e0127975e49e62e753db53924c1bd84b8ac1ac08df78d09270f3d971");
	expect(zeros, 64, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
}
