/* Reading a tuning database without writing: see sqlite_reader.h. Part of
 * the dispatch library too, so it allocates with malloc and never aborts. */
#include "common/sqlite_reader.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether path with suffix appended exists. */
static int beside_exists(const char *path, const char *suffix)
{
	size_t n = strlen(path) + strlen(suffix) + 1;
	char *p = malloc(n);
	if (!p)
		return 1; /* out of memory: assume a writer, the careful choice */
	snprintf(p, n, "%s%s", path, suffix);
	int found = access(p, F_OK) == 0;
	free(p);
	return found;
}

/* Whether this process may write path's folder. */
static int folder_writable(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return access(".", W_OK) == 0;
	if (slash == path)
		return access("/", W_OK) == 0;
	size_t len = (size_t)(slash - path);
	char *dir = malloc(len + 1);
	if (!dir)
		return 0;
	memcpy(dir, path, len);
	dir[len] = '\0';
	int ok = access(dir, W_OK) == 0;
	free(dir);
	return ok;
}

at_read_mode at_sqlite_read_mode(const char *path)
{
	if (access(path, W_OK) == 0 && folder_writable(path))
		return AT_READ_QUERY_ONLY;
	if (beside_exists(path, "-wal") || beside_exists(path, "-journal"))
		return AT_READ_SHARED;
	return AT_READ_IMMUTABLE;
}

char *at_sqlite_uri(const char *path, at_read_mode mode)
{
	const char *query = mode == AT_READ_SHARED      ? "?mode=ro"
			    : mode == AT_READ_IMMUTABLE ? "?mode=ro&immutable=1"
							: "";
	/* every byte escaped at most triples; "file:" and the query besides */
	size_t cap = 3 * strlen(path) + strlen(query) + 8;
	char *uri = malloc(cap);
	if (!uri)
		return NULL;
	/* an absolute path after an empty authority ("file://"), a relative
	 * one after "./" (so that neither can read as an authority) */
	char *o = uri + sprintf(uri, path[0] == '/' ? "file://" : "file:./");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p <= ' ' || *p >= 0x7f)
			o += sprintf(o, "%%%02X", *p);
		else
			*o++ = (char)*p;
	}
	strcpy(o, query);
	return uri;
}

int at_sqlite_open_reader(const char *path, sqlite3 **out)
{
	*out = NULL;
	at_read_mode mode = at_sqlite_read_mode(path);
	char *uri = at_sqlite_uri(path, mode);
	if (!uri)
		return SQLITE_NOMEM;
	int flags = SQLITE_OPEN_URI |
		    (mode == AT_READ_QUERY_ONLY ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
	int rc = sqlite3_open_v2(uri, out, flags, NULL);
	free(uri);
	if (rc == SQLITE_OK && mode == AT_READ_QUERY_ONLY)
		rc = sqlite3_exec(*out, "PRAGMA query_only = ON", NULL, NULL, NULL);
	return rc;
}
