/* The report tests' database and page helpers (tests/test_report_fixture.c),
 * shared by test_report.c and test_report_cli.c. The databases go in the
 * test's temporary folder (tests/tmp_folder.h). */
#ifndef TESTS_TEST_REPORT_FIXTURE_H
#define TESTS_TEST_REPORT_FIXTURE_H

#include <stddef.h>

#include "tests/tmp_folder.h"

/* A tuning database tmp_path(name), written through the tuner's own writer:
 * two dtypes, several N at two M, variants that pass, tie and fail, naive
 * and cuDNN baselines, a shape where nothing passed, and hostile strings
 * that must come out escaped. */
void rf_make_db(const char *name);
/* A tuning database tmp_path(name) with a GPU and a sweep but no results. */
void rf_make_empty_db(const char *name);
/* A copy of text from the first `start` to the next `end` after it (both
 * included); fails the test if either is missing. */
char *rf_between(const char *text, const char *start, const char *end);
/* How many times needle occurs in text. */
size_t rf_count(const char *text, const char *needle);
/* The number of points (each with its <title>) of the series with
 * data-series="key" in the plot <svg id="svg_id"> of html (0 when the plot
 * has no such series; fails the test when there is no such plot). */
size_t rf_points_of(const char *html, const char *svg_id, const char *key);

#endif
