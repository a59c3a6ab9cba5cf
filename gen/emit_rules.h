/* Writes the templates' rules as C (common/template_rules.h's tables) for
 * the dispatch library: build/emit-rules runs it over templates/ at build
 * time. */
#ifndef AT_GEN_EMIT_RULES_H
#define AT_GEN_EMIT_RULES_H

#include <stdio.h>

#include "common/error.h"
#include "gen/manifest.h"

/* Writes a C file defining `const tr_template tr_templates[]` and
 * `const int tr_ntemplates` for the n manifests. Returns 0, or -1 with err
 * set (a template body that cannot be read). */
int emit_rules(FILE *out, const tmpl_manifest *ms, size_t n, at_error *err);

#endif
