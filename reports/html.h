/* HTML output for the report: the one escaping function that every string
 * read from the database goes through, and the page's frame (the head with
 * its inline style, and the small inline script that adds table sorting and
 * row selection). The page uses nothing outside itself: no links, fonts,
 * images or scripts from elsewhere. */
#ifndef AT_REPORTS_HTML_H
#define AT_REPORTS_HTML_H

#include "common/strbuf.h"

/* Appends text with & < > " ' written as entities, so that it is safe both
 * as element content and inside a double- or single-quoted attribute (in
 * HTML and in inline SVG). Control characters other than tab, newline and
 * carriage return become U+FFFD. NULL appends nothing. */
void html_escape(strbuf *out, const char *text);

/* Opens the document: doctype, head (title escaped, inline CSS), <body>
 * and <main>. */
void html_page_begin(strbuf *out, const char *title);

/* Closes <main>, adds the inline script and closes the document. */
void html_page_end(strbuf *out);

#endif
