#!/usr/bin/env bash
# Renders plots of an `autotune report` page to one PNG, without a GPU or a
# browser: each plot's inline <svg> is cut out of the page, the plots are
# stacked top to bottom in one SVG, and rsvg-convert (Debian: librsvg2-bin)
# draws it at twice its size on white.
#
#   tools/report_png.sh REPORT.html OUT.png [PLOT-ID...]
#
# PLOT-ID: the plots' ids (e.g. g0-curve-m4096, g1-curve-m4096); default
# every GB/s curve of the page.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/report_png.sh REPORT.html OUT.png [PLOT-ID...]" >&2; exit 2; }
page=$1
out=$2
shift 2
command -v rsvg-convert >/dev/null ||
	{ echo "report_png: rsvg-convert not found (Debian: apt-get install librsvg2-bin)" >&2; exit 1; }
[ -f "$page" ] || { echo "report_png: $page: no such file" >&2; exit 1; }
work=$(mktemp -d /tmp/report_png.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$page" "$work/plots.svg" "$@" <<'PY'
import re, sys
page, dest, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(page, encoding="utf-8").read()
plots = {pid: svg for svg, pid in re.findall(r'(<svg id="([^"]+)".*?</svg>)', text, re.S)}
wanted = ids or [i for i in plots if "-curve-" in i]
missing = [i for i in wanted if i not in plots]
if missing or not wanted:
    sys.exit(f"report_png: {page} has no plot {', '.join(missing) or 'with -curve- in its id'} "
             f"(it has: {', '.join(plots) or 'none'})")
parts, y, width = [], 0, 0
for i in wanted:
    w, h = (int(re.search(rf'\b{a}="(\d+)"', plots[i]).group(1)) for a in ("width", "height"))
    parts.append(plots[i].replace("<svg ", f'<svg x="0" y="{y}" ', 1))
    y, width = y + h, max(width, w)
with open(dest, "w", encoding="utf-8") as f:
    f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
            f'viewBox="0 0 {width} {y}">\n' + "\n".join(parts) + "\n</svg>\n")
PY
rsvg-convert --zoom 2 --background-color white -o "$out" "$work/plots.svg"
echo "report_png: $out ($*)"
