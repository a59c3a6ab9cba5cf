/* SHA-256 (FIPS 180-4): the digest of each kernel image that the tuner
 * stores beside it in the tuning database, and that the dispatch library
 * checks before it loads the image (dispatch.h says what that protects
 * against). */
#ifndef AT_COMMON_SHA256_H
#define AT_COMMON_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* The digest of data[0..len) as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
