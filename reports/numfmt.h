/* Number formatting for the report: each function writes into a caller's
 * buffer (NUMFMT_CAP bytes is always enough) and returns it, so calls can
 * sit directly in a printf argument list. Non-finite values print as an
 * en dash. */
#ifndef AT_REPORTS_NUMFMT_H
#define AT_REPORTS_NUMFMT_H

#include <stddef.h>

#define NUMFMT_CAP 48

/* v with `decimals` (0 to 6) digits after the point and commas between
 * groups of three digits: 3,079.5. From 1e15 on, %g without groups. */
const char *fmt_grouped(char *buf, double v, int decimals);

/* An integer count with thousands groups: 3,212. */
const char *fmt_count(char *buf, long long v);

/* Microseconds with about four significant digits: 5.568, 87.17, 412.3,
 * 1,204. */
const char *fmt_us(char *buf, double us);

/* GB/s: no decimals (3,080), two below 10 GB/s (7.25). */
const char *fmt_gbps(char *buf, double gbps);

/* A percentage with one decimal: 101.5. */
const char *fmt_pct(char *buf, double pct);

/* A byte count in binary units: 256 B, 48 KiB, 79.2 GiB. */
const char *fmt_bytes(char *buf, long long bytes);

/* A duration: 0.4 s, 74.6 s, 3 min 27 s, 2 h 05 min. */
const char *fmt_seconds(char *buf, double s);

/* A shape's row length or count as an axis label: 128, 1000, 8192, 16K,
 * 1M (exact multiples of 1024 above 8192 only; others in full). */
const char *fmt_axis_n(char *buf, double n);

/* cuDriverGetVersion's number as major.minor: 13000 -> "13.0". */
const char *fmt_driver(char *buf, int version);

#endif
