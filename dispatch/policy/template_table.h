/* The templates' rules built into the library (generated at build time by
 * build/emit-rules from the manifests in templates/). */
#ifndef AT_DISPATCH_TEMPLATE_TABLE_H
#define AT_DISPATCH_TEMPLATE_TABLE_H

#include "common/template_rules.h"

extern const tr_template tr_templates[];
extern const int tr_ntemplates;

#endif
