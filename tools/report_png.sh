#!/usr/bin/env bash
# Renders plots of an `autotune report` page to PNG, without a GPU or a
# browser: each plot's inline <svg> is cut out of the page and drawn by
# rsvg-convert (Debian: librsvg2-bin), at twice its size.
#
#   tools/report_png.sh REPORT.html OUT.png [PLOT-ID...]
#
# PLOT-ID: the plots' ids (e.g. g0-curve-m4096, g1-curve-m4096); default
# every GB/s curve of the page. Several plots are stacked top to bottom in
# one PNG (ImageMagick's convert -append; with one plot, none is needed).
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
python3 - "$page" "$work" "$@" <<'PY'
import re, sys
page, work, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(page, encoding="utf-8").read()
plots = {pid: svg for svg, pid in re.findall(r'(<svg id="([^"]+)".*?</svg>)', text, re.S)}
wanted = ids or [i for i in plots if "-curve-" in i]
missing = [i for i in wanted if i not in plots]
if missing or not wanted:
    sys.exit(f"report_png: {page} has no plot {', '.join(missing) or 'with -curve- in its id'} "
             f"(it has: {', '.join(plots) or 'none'})")
for n, i in enumerate(wanted):
    svg = plots[i].replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
    open(f"{work}/{n:03d}.svg", "w", encoding="utf-8").write(svg)
PY
for f in "$work"/*.svg; do
	rsvg-convert --zoom 2 --background-color white -o "${f%.svg}.png" "$f"
done
pngs=("$work"/*.png)
if [ ${#pngs[@]} -eq 1 ]; then
	cp "${pngs[0]}" "$out"
else
	command -v convert >/dev/null ||
		{ echo "report_png: several plots need ImageMagick's convert (Debian: imagemagick)" >&2; exit 1; }
	convert "${pngs[@]}" -append "$out"
fi
echo "report_png: $out (${#pngs[@]} plot(s))"
