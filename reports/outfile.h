/* Writing an output file whole or not at all: the bytes go to a temporary
 * file in the same folder, which is then renamed over the target, so a
 * reader (or a crash) never sees a half-written file. A symbolic link is
 * followed (the file it names is replaced, the link stays); a device, pipe
 * or socket (/dev/stdout, say) is written to directly, never replaced. */
#ifndef AT_REPORTS_OUTFILE_H
#define AT_REPORTS_OUTFILE_H

#include <stddef.h>

#include "common/error.h"

/* Writes data to path (a new file gets mode 0666 less the umask; a
 * replaced one keeps its mode). Returns 0, or -1 with err naming path and
 * the cause; on failure a regular file at path is untouched and no
 * temporary file is left. */
int outfile_write(const char *path, const void *data, size_t len, at_error *err);

#endif
