/* The library's version, and the names of its status codes and levels
 * (generated from ATD_STATUS_LIST, so that the enum and the strings can
 * never disagree). */
#include "include/autotune/dispatch.h"

ATD_API int atd_version_number(void)
{
	return ATD_VERSION_NUMBER;
}

ATD_API const char *atd_version(void)
{
	return ATD_VERSION_STRING;
}

ATD_API const char *atd_status_string(atd_status s)
{
	switch (s) {
#define ATD_STATUS_CASE(name, value, text) \
	case name: return text;
		ATD_STATUS_LIST(ATD_STATUS_CASE)
#undef ATD_STATUS_CASE
	}
	return "unknown status";
}

ATD_API const char *atd_level_name(atd_level level)
{
	switch (level) {
	case ATD_LEVEL_EXACT: return "exact";
	case ATD_LEVEL_NEAREST: return "nearest";
	case ATD_LEVEL_SAME_ARCH: return "same-arch";
	case ATD_LEVEL_BUILTIN: return "built-in";
	case ATD_LEVEL_DERIVED: return "derived";
	case ATD_LEVEL_TUNED: return "tuned online";
	case ATD_LEVEL_PREDICTED: return "predicted";
	}
	return "?";
}
