/* A fixed-size error message that every fallible function in the project
 * fills on failure, so callers decide how (and whether) to show it. */
#ifndef AT_COMMON_ERROR_H
#define AT_COMMON_ERROR_H

typedef struct at_error {
	char msg[2048];
} at_error;

/* Formats into err->msg (truncating if needed). err may be NULL. Returns -1
 * so that callers can write `return at_error_set(err, ...);`. */
int at_error_set(at_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prepends "prefix: " to the message already in err (for context such as a
 * file name). Returns -1. */
int at_error_prefix(at_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
