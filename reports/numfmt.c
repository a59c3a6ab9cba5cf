/* Number formatting for the report: see numfmt.h. */
#include "reports/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char dash[] = "\xe2\x80\x93"; /* U+2013, an en dash */

const char *fmt_grouped(char *buf, double v, int decimals)
{
	if (!isfinite(v)) {
		snprintf(buf, NUMFMT_CAP, "%s", dash);
		return buf;
	}
	if (fabs(v) >= 1e15) { /* absurdly large: no grouping */
		snprintf(buf, NUMFMT_CAP, "%.6g", v);
		return buf;
	}
	decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
	char raw[NUMFMT_CAP]; /* at most 15 digits, the point and 6 decimals */
	snprintf(raw, sizeof raw, "%.*f", decimals, fabs(v));
	const char *point = strchr(raw, '.');
	size_t int_len = point ? (size_t)(point - raw) : strlen(raw);
	char *o = buf;
	/* "-0" after rounding is printed as 0 */
	if (v < 0 && strspn(raw, "0.") != strlen(raw))
		*o++ = '-';
	for (size_t i = 0; i < int_len; i++) {
		if (i > 0 && (int_len - i) % 3 == 0)
			*o++ = ',';
		*o++ = raw[i];
	}
	strcpy(o, raw + int_len);
	return buf;
}

const char *fmt_count(char *buf, long long v)
{
	return fmt_grouped(buf, (double)v, 0);
}

const char *fmt_us(char *buf, double us)
{
	if (!isfinite(us))
		return fmt_grouped(buf, us, 0);
	double a = fabs(us);
	int decimals = a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0;
	return fmt_grouped(buf, us, decimals);
}

const char *fmt_gbps(char *buf, double gbps)
{
	return fmt_grouped(buf, gbps, isfinite(gbps) && fabs(gbps) < 10 ? 2 : 0);
}

const char *fmt_pct(char *buf, double pct)
{
	return fmt_grouped(buf, pct, 1);
}

const char *fmt_bytes(char *buf, long long bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;
	while (fabs(v) >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, NUMFMT_CAP, "%lld B", bytes);
	else if (v == floor(v))
		snprintf(buf, NUMFMT_CAP, "%.0f %s", v, units[u]);
	else
		snprintf(buf, NUMFMT_CAP, "%.1f %s", v, units[u]);
	return buf;
}

const char *fmt_seconds(char *buf, double s)
{
	if (!isfinite(s) || s < 0) {
		snprintf(buf, NUMFMT_CAP, "%s", dash);
	} else if (s < 100) {
		snprintf(buf, NUMFMT_CAP, "%.1f s", s);
	} else if (s < 3600) {
		long t = lround(s);
		snprintf(buf, NUMFMT_CAP, "%ld min %02ld s", t / 60, t % 60);
	} else {
		long t = lround(s / 60);
		snprintf(buf, NUMFMT_CAP, "%ld h %02ld min", t / 60, t % 60);
	}
	return buf;
}

const char *fmt_axis_n(char *buf, double n)
{
	long long v = llround(n);
	if (v >= 1048576 && v % 1048576 == 0)
		snprintf(buf, NUMFMT_CAP, "%lldM", v / 1048576);
	else if (v > 8192 && v % 1024 == 0)
		snprintf(buf, NUMFMT_CAP, "%lldK", v / 1024);
	else
		snprintf(buf, NUMFMT_CAP, "%lld", v);
	return buf;
}

const char *fmt_driver(char *buf, int version)
{
	snprintf(buf, NUMFMT_CAP, "%d.%d", version / 1000, version % 1000 / 10);
	return buf;
}
