/* build/emit-rules TEMPLATES_DIR OUT.c: the templates' rules as C for the
 * dispatch library (gen/emit_rules.h). Run by the Makefile. */
#include <stdio.h>

#include "gen/emit_rules.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: emit-rules TEMPLATES_DIR OUT.c\n");
		return 2;
	}
	at_error err;
	tmpl_manifest *ms;
	size_t n;
	if (manifest_load_dir(argv[1], &ms, &n, &err) != 0) {
		fprintf(stderr, "emit-rules: %s\n", err.msg);
		return 1;
	}
	FILE *out = fopen(argv[2], "w");
	int rc = out ? emit_rules(out, ms, n, &err) : -1;
	if (!out)
		snprintf(err.msg, sizeof err.msg, "%s: cannot write", argv[2]);
	if (out && fclose(out) != 0 && rc == 0) {
		rc = -1;
		snprintf(err.msg, sizeof err.msg, "%s: write failed", argv[2]);
	}
	manifest_free_all(ms, n);
	if (rc != 0) {
		fprintf(stderr, "emit-rules: %s\n", err.msg);
		remove(argv[2]);
		return 1;
	}
	return 0;
}
