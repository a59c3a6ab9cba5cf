/* A template's manifest as the dispatch library carries it: what it needs
 * to re-derive a tuned winner's parameters for a row length nobody tuned,
 * to size the launch and to build the source that NVRTC compiles. The
 * tables are generated at build time from the manifests in templates/ by
 * build/emit-rules (gen/emit_rules.c), so the rules live in the manifests
 * and the library links nothing of the generator. */
#ifndef AT_COMMON_TEMPLATE_RULES_H
#define AT_COMMON_TEMPLATE_RULES_H

/* The order of tr_template.launch: gen/manifest.h's tmpl_launch fields. */
enum {
	TR_THREADS,
	TR_ROWS_PER_CTA,
	TR_SMEM_BYTES,
	TR_PERSISTENT,
	TR_MAX_N,
	TR_CTAS_PER_ROW,
	TR_COOPERATIVE,
	TR_LAUNCH_KEYS
};

typedef struct tr_param {
	const char *name;
	const long long *values;
	int nvalues;
	long long def; /* the manifest's default: fills a param an older database lacks */
} tr_param;

typedef struct tr_template {
	const char *name;        /* "softmax_block" */
	const char *source_file; /* "softmax_block.cu", for the source's header */
	const char *body;        /* the template, its includes expanded */
	unsigned dtype_mask;     /* bit (1u << at_dtype) per dtype served */
	const tr_param *params;
	int nparams;
	const char *const *constraints; /* all must hold */
	int nconstraints;
	const char *launch[TR_LAUNCH_KEYS];
	const int *derive; /* indices of the params searched for a new shape */
	int nderive;
	const int *widen; /* searched too when derive alone finds nothing */
	int nwiden;
	const char *const *prefer; /* in order of weight */
	int nprefer;
} tr_template;

/* The shape and device variables an expression may use besides the params,
 * in gen/manifest.h's order. */
#define TR_SHAPE_VARS 8
extern const char *const tr_shape_var_names[TR_SHAPE_VARS];

#endif
