/* HTML escaping and the page frame of the report: see html.h. The style
 * and the script are constant text; nothing from the database reaches them. */
#include "reports/html.h"

#include <string.h>

void html_escape(strbuf *out, const char *text)
{
	if (!text)
		return;
	const char *run = text; /* start of the bytes not yet copied */
	for (const char *p = text; *p; p++) {
		const char *rep;
		unsigned char c = (unsigned char)*p;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
				rep = "&#xFFFD;";
			else
				continue;
		}
		strbuf_append(out, run, (size_t)(p - run));
		strbuf_puts(out, rep);
		run = p + 1;
	}
	strbuf_puts(out, run);
}

static const char page_style[] =
	":root{--fg:#1d232b;--muted:#5b6673;--line:#dde2e8;--soft:#f4f6f8;"
	"--win:#e2f3e4;--tie:#fbf3d5;--base:#edf0f5;--sel:#dbe8fb;--accent:#1f5fbf}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;color:var(--fg);background:#fff;"
	"font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif}\n"
	"main{max-width:1240px;margin:0 auto;padding:20px 32px 64px}\n"
	"h1{font-size:26px;margin:0 0 2px}\n"
	"h2{font-size:21px;margin:36px 0 10px;padding-bottom:5px;border-bottom:2px solid var(--fg)}\n"
	"h3{font-size:17px;margin:28px 0 8px;padding-bottom:3px;border-bottom:1px solid var(--line)}\n"
	"h4{font-size:15px;margin:20px 0 6px}\n"
	"p{margin:6px 0;max-width:75em}\n"
	".sub,.note,figcaption{color:var(--muted)}\n"
	".note,figcaption{font-size:13px}\n"
	"a{color:var(--accent)}\n"
	"code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"DejaVu Sans Mono\",monospace;"
	"font-size:12.5px}\n"
	"pre{background:var(--soft);border:1px solid var(--line);padding:10px 12px;overflow:auto;"
	"max-height:32em}\n"
	"nav{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 16px;"
	"margin:14px 0}\n"
	"nav ul{margin:2px 0;padding-left:20px}nav li{margin:1px 0}\n"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0 10px}\n"
	"th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}\n"
	"th{background:var(--soft);font-weight:600;white-space:nowrap}\n"
	"th.n,td.n{text-align:right;white-space:nowrap}\n"
	"td.p{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"DejaVu Sans Mono\",monospace;"
	"font-size:12px}\n"
	"td.t{white-space:nowrap}\n"
	/* the widest tables, 14 and 11 columns, fit a 1400 px window: narrower
	 * params, headers that wrap, names of baselines and peers that wrap */
	"table.winners td.p{min-width:18em}table.results td.p{min-width:22em}\n"
	"table.winners th,table.winners td{padding:3px 6px}table.winners th{white-space:normal}\n"
	"table.results td.t,table.winners td.t{white-space:normal}\n"
	/* a failure's strings are whatever the database holds: broken anywhere */
	"table.failed td{white-space:normal;overflow-wrap:anywhere}\n"
	/* a results cell has no class: the numbers' columns are aligned here */
	"table.results td:first-child,table.results td:nth-child(n+5){text-align:right;"
	"white-space:nowrap}\n"
	"tr.win td{background:var(--win)}tr.tie td{background:var(--tie)}"
	"tr.base td{background:var(--base)}tr.peer td{background:#f3ecf8}tr.sel td{background:var(--sel)}\n"
	".badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:11px;font-weight:600;"
	"color:#fff;white-space:nowrap}\n"
	".badge.win{background:#2e7d32}.badge.tie{background:#a87a00}.badge.base{background:#5b6673}"
	".badge.fail{background:#c62828}.badge.peer{background:#6a1b9a}\n"
	"details{border:1px solid var(--line);border-radius:5px;padding:3px 10px;margin:5px 0}\n"
	"details>summary{cursor:pointer;padding:2px 0}\n"
	"details[open]>summary{margin-bottom:4px}\n"
	"figure{margin:12px 0 18px}\n"
	"figure svg{max-width:100%;height:auto;display:block}\n"
	".plots{display:flex;flex-wrap:wrap;gap:4px 28px;align-items:flex-start}\n"
	".plots figure{margin:8px 0 14px;flex:0 1 auto}\n"
	"figure.curve{width:570px;max-width:100%}\n"
	"figure.heat{width:min-content;max-width:100%}figure.heat figcaption{min-width:420px}\n"
	"dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr);"
	"gap:1px 18px;margin:6px 0}\n"
	"dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}\n"
	".scroll{overflow-x:auto}\n"
	"html.js table.sortable th{cursor:pointer}\n"
	"html.js table.sortable th[aria-sort=ascending]::after{content:\" \\25B2\";font-size:9px}\n"
	"html.js table.sortable th[aria-sort=descending]::after{content:\" \\25BC\";font-size:9px}\n"
	"html.js table.sortable tbody tr{cursor:default}\n"
	"html.js details.rest{display:none}\n"
	"button.more{font:inherit;font-size:13px;margin:0 0 8px;padding:2px 10px;cursor:pointer}\n"
	"@media print{details{border:0}nav{display:none}}\n";

/* Sorting: a click (or Enter) on a header sorts the body by that column,
 * numerically for columns of class "n" (empty cells last); a second click
 * reverses. Selection: a click on a row toggles its highlight. The rest of
 * a shape's rows (reports/report_rest.h): a button before each text block
 * turns its lines into rows of the table above it, in rank order, their
 * variants read from the page's list (reports/variant_dict.h); text goes
 * in by textContent only. */
static const char page_script[] =
	"(function(){\n"
	"document.documentElement.classList.add('js');\n"
	"function num(td){var t=td?td.textContent.replace(/[,\\s]/g,''):'';"
	"var v=parseFloat(t);return isNaN(v)?null:v;}\n"
	"function txt(td){return td?td.textContent.trim():'';}\n"
	"function sortable(t){\n"
	" var hs=t.tHead?t.tHead.rows[0].cells:[];\n"
	" Array.prototype.forEach.call(hs,function(h,i){\n"
	"  h.tabIndex=0;h.title=h.title||'sort by this column';\n"
	"  function go(){\n"
	"   var asc=h.getAttribute('aria-sort')!=='ascending',isn=h.classList.contains('n');\n"
	"   Array.prototype.forEach.call(hs,function(o){o.removeAttribute('aria-sort');});\n"
	"   h.setAttribute('aria-sort',asc?'ascending':'descending');\n"
	"   var b=t.tBodies[0],rs=Array.prototype.slice.call(b.rows);\n"
	"   rs.sort(function(a,c){var x,y;\n"
	"    if(isn){x=num(a.cells[i]);y=num(c.cells[i]);\n"
	"     if(x===null||y===null)return (x===null)-(y===null);return asc?x-y:y-x;}\n"
	"    x=txt(a.cells[i]);y=txt(c.cells[i]);return asc?x.localeCompare(y):y.localeCompare(x);});\n"
	"   rs.forEach(function(r){b.appendChild(r);});\n"
	"  }\n"
	"  h.addEventListener('click',go);\n"
	"  h.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();go();}});\n"
	" });\n"
	" Array.prototype.forEach.call(t.tBodies,function(b){b.addEventListener('click',function(e){\n"
	"  var r=e.target.closest('tr');if(r)r.classList.toggle('sel');});});\n"
	"}\n"
	"Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),sortable);\n"
	"var V=null,D='\\u2013';\n"
	"function variants(){if(V)return V;V=[];var p=document.getElementById('variants');\n"
	" if(!p)return V;var L={},ls=p.textContent.split('\\n'),i=0,m;\n"
	" for(;i<ls.length&&ls[i];i++)if((m=/^(\\S+) ([^:]*):(.*)$/.exec(ls[i])))\n"
	"  L[m[1]]={t:m[2],n:m[3].trim()?m[3].trim().split(' '):[]};\n"
	" for(i++;i<ls.length;i++){if(!ls[i])continue;var f=ls[i].split(' '),g=L[f[0]];\n"
	"  V.push(g?{t:g.t,p:g.n.map(function(n,k){return n+'='+f[k+1];}).join(' ')}:{t:'?',p:'?'});}\n"
	" return V;}\n"
	"function fmt(v,d){return isFinite(v)?v.toLocaleString('en-US',"
	"{minimumFractionDigits:d,maximumFractionDigits:d}):D;}\n"
	"function rank(r){return parseInt(r.cells[0].textContent,10);}\n"
	"function expand(det){\n"
	" var pre=det.querySelector('pre.rest'),t=det.parentNode.querySelector('table.results');\n"
	" var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),have={},k=0,vs=variants();\n"
	" var bytes=+pre.getAttribute('data-bytes'),copy=+pre.getAttribute('data-copy');\n"
	" rows.forEach(function(r){have[rank(r)]=1;});\n"
	" pre.textContent.split('\\n').forEach(function(l){if(!l)return;\n"
	"  var f=l.split(' '),v=vs[parseInt(f[0],36)]||{t:'?',p:'?'};\n"
	"  do k++;while(have[k]);\n"
	"  var gb=bytes/(parseFloat(f[1].replace(/,/g,''))*1e3),tr=document.createElement('tr');\n"
	"  [k,'',v.t,v.p,f[1],f[2]+D+f[3],fmt(gb,gb<10?2:0),copy>0?fmt(gb/copy*100,1):D,\n"
	"   f[4],f[5]||'0',f[6]||'0'].forEach(function(c,j){var td=document.createElement('td');\n"
	"   td.textContent=String(c);if(j===2)td.className='t';if(j===3)td.className='p';\n"
	"   tr.appendChild(td);});\n"
	"  rows.push(tr);});\n"
	" rows.sort(function(x,y){return rank(x)-rank(y);});\n"
	" rows.forEach(function(r){b.appendChild(r);});\n"
	" Array.prototype.forEach.call(t.tHead.rows[0].cells,function(o){o.removeAttribute('aria-sort');});\n"
	"}\n"
	"Array.prototype.forEach.call(document.querySelectorAll('details.rest'),function(det){\n"
	" var btn=document.createElement('button');btn.type='button';btn.className='more';\n"
	" btn.textContent='Show the other '+det.getAttribute('data-n')+' variants in the table';\n"
	" btn.addEventListener('click',function(){expand(det);btn.remove();});\n"
	" det.parentNode.insertBefore(btn,det);\n"
	"});\n"
	"})();\n";

void html_page_begin(strbuf *out, const char *title)
{
	strbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			 "<title>");
	html_escape(out, title);
	strbuf_puts(out, "</title>\n<style>\n");
	strbuf_puts(out, page_style);
	strbuf_puts(out, "</style>\n</head>\n<body>\n<main>\n");
}

void html_page_end(strbuf *out)
{
	strbuf_puts(out, "</main>\n<script>\n");
	strbuf_puts(out, page_script);
	strbuf_puts(out, "</script>\n</body>\n</html>\n");
}
