/* The tool's version, stored with every sweep. */
#ifndef AT_TUNER_VERSION_H
#define AT_TUNER_VERSION_H

#define AUTOTUNE_VERSION "0.1.0"

#endif
