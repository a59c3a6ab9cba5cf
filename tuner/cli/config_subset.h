/* A config restricted to some dtypes, written back as YAML, so that a
 * command offering --dtype (bench) can hand the sweep a config of only
 * those shapes. Entries left without a dtype are dropped. */
#ifndef AT_TUNER_CONFIG_SUBSET_H
#define AT_TUNER_CONFIG_SUBSET_H

#include "tuner/config.h"

/* The YAML text (malloc'd) of cfg with only the dtypes in mask (bit 1 << dtype),
 * or NULL when no entry keeps a dtype. */
char *config_dtype_subset(const sweep_config *cfg, unsigned mask);

/* Parses "f32,bf16" (or one name) into bits of *mask (added to it).
 * Returns -1 on an unknown or empty name. */
int dtype_list_parse(const char *text, unsigned *mask);

#endif
