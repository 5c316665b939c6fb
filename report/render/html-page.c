/* cprof html's page: header, verdict, phases, findings, processes, footer around the timeline, charts and tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PR_FMT "cprof html"
#include "common/log.h"
#include "common/version.h"
#include "report/render/html.h"
#include "report/model/report.h"
#include "report/term.h"

/* ---- the page ---- */

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0;color:#202124;"
	"background:#f8f9fa}"
	"main{max-width:1500px;margin:0 auto;padding:16px 24px 40px}"
	"h1{font-size:22px;margin:4px 0}h1 small{font-weight:normal;color:#5f6368;font-size:15px}"
	"h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dadce0;padding-bottom:4px}h3{font-size:15px;"
	"margin:18px 0 6px}"
	".meta{color:#3c4043;margin:4px 0}.meta b{font-weight:600}code{font-size:13px}"
	".sim{display:inline-block;background:#fef7e0;border:1px solid #f9ab00;color:#7a4f01;border-radius:4px;"
	"padding:2px 8px;"
	"margin:6px 0;font-weight:600}"
	".inc{display:inline-block;background:#fce8e6;border:1px solid #d93025;color:#a50e0e;border-radius:4px;"
	"padding:2px 8px;"
	"margin:6px 0;font-weight:600}"
	".verdict{border-radius:8px;padding:14px 18px;margin:14px 0;color:#fff}"
	".verdict.ob{background:#c5590a}.verdict.cb{background:#137333}.verdict.mx{background:#1967d2}"
	".verdict.ng{background:#5f6368}"
	".vword{font-size:28px;font-weight:700;letter-spacing:.3px}.vword .simtag{font-size:14px;font-weight:600;"
	"background:rgba(255,255,255,.2);border-radius:4px;padding:2px 6px;margin-left:10px;vertical-align:middle}"
	".vline{margin:4px 0 10px;opacity:.95}"
	".cards{display:flex;flex-wrap:wrap;gap:10px}.card{background:rgba(255,255,255,.16);border-radius:6px;"
	"padding:6px 12px;"
	"min-width:150px}.card .k{font-size:12px;opacity:.9}.card .v{font-size:19px;font-weight:700}"
	".card .s{font-size:12px;opacity:.9}"
	".advice{margin-top:10px;font-size:15px}.advice b{font-weight:700}"
	"table{border-collapse:collapse;background:#fff;font-size:13px}th,td{padding:3px 8px;"
	"border-bottom:1px solid #e8eaed;"
	"text-align:right;white-space:nowrap}th{background:#f1f3f4;position:sticky;top:0}"
	"table.sortable th{cursor:pointer}table.sortable th:hover{background:#e8eaed}"
	"th[data-d=a]::after{content:' \\25b2'}th[data-d=d]::after{content:' \\25bc'}"
	"td.name,th.name,td.l{text-align:left}td.name{max-width:760px;overflow:hidden;text-overflow:ellipsis}"
	".tw{overflow-x:auto;max-height:480px;overflow-y:auto;border:1px solid #dadce0;display:inline-block;"
	"max-width:100%}"
	".note{color:#5f6368;font-size:12.5px;margin:4px 0}"
	".findings{list-style:none;padding:0;margin:0}.findings li{background:#fff;border:1px solid #dadce0;"
	"border-left:5px solid #1a73e8;"
	"border-radius:4px;padding:8px 12px;margin:6px 0}.findings li.warn{border-left-color:#e37400}"
	".sev{font-size:11px;font-weight:700;text-transform:uppercase;border-radius:3px;padding:1px 5px;"
	"margin-right:6px;"
	"background:#e8f0fe;color:#1967d2}.warn .sev{background:#feefe3;color:#b06000}.fid{font-family:monospace;"
	"color:#5f6368}"
	".ev{color:#5f6368;font-size:12.5px;margin-top:3px}"
	/* timeline */
	"#tl{position:relative;background:#fff;border:1px solid #dadce0;user-select:none;cursor:grab;overflow:hidden}"
	".lane{display:flex;align-items:stretch;height:20px;border-bottom:1px solid #f1f3f4;position:relative}"
	".lane.gpu{background:#fbfcfe}.lane.util{height:22px;border-bottom:1px solid #dadce0}"
	".ll{width:230px;flex:none;font-size:12px;line-height:20px;white-space:nowrap;overflow:hidden;"
	"text-overflow:ellipsis;"
	"padding:0 6px;border-right:1px solid #dadce0;background:#fff;z-index:2}"
	".lane svg{flex:1;height:100%;display:block;min-width:0;z-index:1}"
	/* a 1-pixel stroke that does not scale: an op far shorter than a pixel still shows */
	".lane .m rect,.lane .s rect{stroke-width:1px;vector-effect:non-scaling-stroke}.lane .m rect{y:3px;"
	"height:14px}.lane .s rect{y:15px;height:4px}.lane.host .s+.m rect,.lane.host .m rect{height:11px}"
	"rect.u{fill:#34a853}"
	".lane.axis{height:22px;border-bottom:1px solid #dadce0}#axis{flex:1;position:relative;overflow:hidden;"
	"font-size:11px;"
	"color:#5f6368}#axis span{position:absolute;top:4px;border-left:1px solid #bdc1c6;padding-left:3px;"
	"white-space:nowrap}"
	".lane.phs{height:22px}.marks{flex:1;position:relative;overflow:hidden}"
	".pm{position:absolute;top:2px;height:17px;font-size:11px;line-height:17px;color:#fff;white-space:nowrap;"
	"overflow:hidden;"
	"text-overflow:ellipsis;padding:0 4px;box-sizing:border-box;border-radius:3px;min-width:2px}"
	".pm.ob{background:#e8710a}.pm.cb{background:#188038}.pm.mx{background:#1a73e8}.pm.ng{background:#80868b}"
	".pm.ex{background:repeating-linear-gradient(45deg,#bdc1c6,#bdc1c6 4px,#dadce0 4px,#dadce0 8px);color:#3c4043}"
	"#bands{position:absolute;left:243px;right:0;top:22px;bottom:0;width:calc(100% - 243px);"
	"height:calc(100% - 22px);"
	"pointer-events:none;z-index:0}"
	".b-ob{fill:#e8710a;fill-opacity:.07}.b-cb{fill:#188038;fill-opacity:.07}.b-mx{fill:#1a73e8;fill-opacity:.07}"
	".b-ng{fill:#80868b;fill-opacity:.07}rect.b-ex{fill:#80868b;fill-opacity:.12}"
	"#tip{position:absolute;display:none;background:#202124;color:#fff;font-size:12px;padding:4px 8px;"
	"border-radius:4px;"
	"pointer-events:none;z-index:5;max-width:560px;white-space:normal}"
	".tlbar{margin:6px 0}.tlbar button{font:inherit;margin-right:4px;padding:1px 10px}#zinfo{margin-left:8px;"
	"color:#5f6368}"
	".legend{font-size:12px;color:#3c4043;margin:6px 0}.legend span{display:inline-block;margin:2px 12px 2px 0}"
	".legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border-radius:2px}"
	".legend i.b-ex{background:#dadce0}"
	/* charts */
	".charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px}"
	".chart{background:#fff;border:1px solid #dadce0;border-radius:6px;margin:0;padding:10px 12px}"
	".chart figcaption{font-weight:600;margin-bottom:6px}.chart svg{width:100%;height:auto;display:block;"
	"font-size:11.5px}"
	".chart text{fill:#202124}.chart text.muted{fill:#5f6368}.chart text.b{font-weight:600}"
	".chart text.inbar{fill:#fff}"
	".c-cpu{fill:#4a8af4}.c-gpu{fill:#34a853}.c-launch{fill:#4a8af4}.c-busy{fill:#34a853}.c-host{fill:#e8710a}"
	".c-kern{fill:#fbbc04}.c-other{fill:#9aa0a6}.t-launch{fill:#1a73e8}.t-gpu{fill:#188038}"
	"line.axis{stroke:#9aa0a6}line.med{stroke-width:1.5;stroke-dasharray:4 3}.c-launch-l{stroke:#1a73e8}"
	".c-gpu-l{stroke:#188038}"
	"sup{line-height:0}footer{color:#5f6368;font-size:12px;margin-top:30px}";

/* Zoom and pan change the viewBox of every lane; the axis, phase marks and tooltip follow. Sorting moves
 * table rows by their data-v (numbers) or text. data-js on <html> tells a headless browser the script ran. */
static const char script[] =
	"(function(){\n"
	"var tl=document.getElementById('tl');\n"
	"if(tl){\n"
	"var D=+tl.getAttribute('data-w'),K=+tl.getAttribute('data-dur')/D,v0=0,v1=D,drag=null;\n"
	"var svgs=tl.querySelectorAll('svg.z'),axis=document.getElementById('axis'),"
	"marks=tl.querySelectorAll('[data-t0]');\n"
	"var tip=document.getElementById('tip'),info=document.getElementById('zinfo'),N=window.CPROF_NAMES||[];\n"
	"var fmt=function(x){var u=x*K,a=Math.abs(u);"
	"return a>=1e6?+(u/1e6).toFixed(3)+' s':a>=1e3?+(u/1e3).toFixed(3)+' ms':"
	"a>=1?+u.toFixed(3)+' us':Math.round(u*1e3)+' ns';};\n"
	"var draw=function(){var w=v1-v0,i;\n"
	" for(i=0;i<svgs.length;i++){var b=svgs[i].viewBox.baseVal;svgs[i].setAttribute('viewBox',"
	"v0+' '+b.y+' '+w+' '+b.height);}\n"
	/* ticks at round times: steps of 1, 2 or 5 times a power of ten microseconds */
	" var wu=w*K,st=Math.pow(10,Math.floor(Math.log(wu/8)/Math.LN10)),m=wu/8/st;st*=m>5?10:m>2?5:m>1?2:1;\n"
	" var h='';for(var t=Math.ceil(v0*K/st)*st;t<=v1*K;"
	"t+=st)h+='<span style=\"left:'+((t/K-v0)/w*100)+'%\">'+fmt(t/K)+'</span>';\n"
	" axis.innerHTML=h;\n"
	" for(i=0;i<marks.length;i++){var e=marks[i],l=Math.max(+e.getAttribute('data-t0'),v0),"
	"r=Math.min(+e.getAttribute('data-t1'),v1);\n"
	"  if(r<=l&&!(r==l&&l>v0&&l<v1)){e.style.display='none';continue;}\n"
	"  e.style.display='';e.style.left=((l-v0)/w*100)+'%';e.style.width=((r-l)/w*100)+'%';}\n"
	" info.textContent=w<D?'showing '+fmt(v0)+' to '+fmt(v1)+' of '+fmt(D):'whole run: '+fmt(D);};\n"
	"var clamp=function(){var w=v1-v0;if(v0<0){v0=0;v1=w;}if(v1>D){v1=D;v0=Math.max(0,D-w);}};\n"
	"var zoom=function(f,c){var w=v1-v0,nw=Math.min(D,Math.max(w*f,1)),fr=(c-v0)/w;v0=c-fr*nw;v1=v0+nw;clamp();"
	"draw();};\n"
	"var area=function(){return axis.getBoundingClientRect();};\n"
	"tl.addEventListener('wheel',function(e){var r=area();if(e.clientX<r.left)return;e.preventDefault();\n"
	" zoom(e.deltaY>0?1.25:0.8,v0+(e.clientX-r.left)/r.width*(v1-v0));},{passive:false});\n"
	"tl.addEventListener('mousedown',function(e){drag={x:e.clientX,a:v0,b:v1};});\n"
	"window.addEventListener('mouseup',function(){drag=null;});\n"
	"tl.addEventListener('dblclick',function(){v0=0;v1=D;draw();});\n"
	"document.getElementById('zin').onclick=function(){zoom(0.5,(v0+v1)/2);};\n"
	"document.getElementById('zout').onclick=function(){zoom(2,(v0+v1)/2);};\n"
	"document.getElementById('zall').onclick=function(){v0=0;v1=D;draw();};\n"
	/* the verdict's window first: the start-up one click away */
	"var W0=+tl.getAttribute('data-v0'),W1=+tl.getAttribute('data-v1'),verd=function(){if(W1>W0){v0=W0;v1=W1;}};\n"
	"document.getElementById('zverdict').onclick=function(){verd();draw();};\n"
	"tl.addEventListener('mouseleave',function(){tip.style.display='none';});\n"
	"tl.addEventListener('mousemove',function(e){var r=area(),g=tl.getBoundingClientRect(),t=e.target,s='';\n"
	" if(drag){var dt=(e.clientX-drag.x)/r.width*(drag.b-drag.a);v0=drag.a-dt;v1=drag.b-dt;clamp();draw();return;"
	"}\n"
	" if(t.tagName=='rect'&&t.parentNode.id!='bands'){var x=+t.getAttribute('x'),w=+t.getAttribute('width'),"
	"c=t.getAttribute('class')||'';\n"
	"  if(c=='u')s='GPU busy '+t.getAttribute('data-u')+'% from '+fmt(x)+' to '+fmt(x+w);\n"
	"  else{var n=N[+c.slice(1)]||'?';\n"
	"   if(t.hasAttribute('data-c'))s=t.getAttribute('data-c')+' events from '+fmt(x)+' to '+fmt(x+w)+',"
	" busy '+t.getAttribute('data-b')+'%; mostly '+n;\n"
	"   else s=n+'<br>'+fmt(w)+' at '+fmt(x);}}\n"
	" if(!s){tip.style.display='none';return;}\n"
	" tip.innerHTML=s.replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/&lt;br>/g,'<br>');"
	"tip.style.display='block';\n"
	" var L=e.clientX-g.left+14;if(L+tip.offsetWidth>g.width)L=Math.max(0,e.clientX-g.left-tip.offsetWidth-14);\n"
	" tip.style.left=L+'px';tip.style.top=(e.clientY-g.top+14)+'px';});\n"
	/* report.html#t=FROM-TO (microseconds from time 0) opens zoomed in: a link can point at a moment */
	"verd();var z=/#t=([0-9.]+)-([0-9.]+)/.exec(location.hash);if(z&&+z[2]>+z[1]){v0=Math.max(0,z[1]/K);v1=Math.min(D,"
	"z[2]/K);}\n"
	"draw();}\n"
	"var ths=document.querySelectorAll('table.sortable th');\n"
	"for(var i=0;i<ths.length;i++)ths[i].addEventListener('click',function(){var th=this,"
	"tb=th.parentNode.parentNode.parentNode.tBodies[0];\n"
	" var k=th.cellIndex,d=th.getAttribute('data-d')=='d'?'a':'d',rows=Array.prototype.slice.call(tb.rows);\n"
	" var hs=th.parentNode.cells;for(var j=0;j<hs.length;j++)hs[j].removeAttribute('data-d');"
	"th.setAttribute('data-d',d);\n"
	" rows.sort(function(x,y){var a=x.cells[k],b=y.cells[k],p=a.getAttribute('data-v'),"
	"q=b.getAttribute('data-v');\n"
	"  var c=p!==null&&q!==null?p-q:a.textContent.localeCompare(b.textContent);return d=='a'?c:-c;});\n"
	" for(var j2=0;j2<rows.length;j2++)tb.appendChild(rows[j2]);});\n"
	"document.documentElement.setAttribute('data-js','ok');\n"
	"})();\n";

static const char *verdict_class(const char *v)
{
	return !strcmp(v, "overhead-bound") ? "ob" : !strcmp(v, "compute-bound") ? "cb" : !strcmp(v, "mixed") ? "mx" : "ng";
}

static void card(FILE *f, const char *k, const char *v, const char *s)
{
	fprintf(f, "<div class=\"card\"><div class=\"k\">%s</div><div class=\"v\">", k);
	html_text(f, v);
	fputs("</div><div class=\"s\">", f);
	html_text(f, s);
	fputs("</div></div>", f);
}

static void write_verdict(struct html *h)
{
	const struct cprof_verdict *v = &h->v;
	FILE *f = h->f;
	char line[1024], a[32], b[32], c[64], s[320];

	cprof_verdict_line(v, line, sizeof(line));
	fprintf(f, "<section class=\"verdict %s\" id=\"verdict\"><div class=\"vword\">%s%s</div>\n<div class=\"vline\">",
		verdict_class(v->verdict), v->verdict,
		h->simulated ? "<span class=\"simtag\">simulated GPU: timings are modelled, not measured</span>" : "");
	fputs("Verdict: ", f);
	html_text(f, line);
	fputs("</div>\n", f);
	if (!cprof_verdict_no_gpu(v)) {
		fputs("<div class=\"cards\">", f);
		cprof_fmt_dur(a, sizeof(a), (double)(v->end - v->start));
		snprintf(c, sizeof(c), "%.1f%%", v->busy_pct);
		snprintf(s, sizeof(s), "of a %s window%s", a, h->nph > 1 ? " (the phases together)" : "");
		card(f, "GPU busy", c, s);
		/* who waited for whom (docs/verdict.md), HTA's host-wait share beside it */
		cprof_fmt_dur(a, sizeof(a), (double)v->starved_ns);
		cprof_fmt_dur(b, sizeof(b), (double)v->blocked_ns);
		snprintf(c, sizeof(c), "%.0f%%", v->end > v->start ? 100.0 * v->starved_ns / (double)(v->end - v->start) : 0.0);
		/* one definition of the host wait on the page: the starved time (HTA's buckets are in the idle
		 * chart, named as HTA's and as shares of the idle time) */
		snprintf(s, sizeof(s), "%s idle with nothing queued%s%s; the host waited for the GPU %s", a,
			 v->starved_ns ? ": " : "", v->starved_ns ? v->cause : "", b);
		card(f, "of the window the GPU waited for the host", c, s);
		cprof_fmt_dur(a, sizeof(a), (double)v->self_cpu_ns);
		cprof_fmt_dur(b, sizeof(b), (double)v->self_gpu_ns);
		snprintf(c, sizeof(c), "%.2f", v->self_gpu_ns ? (double)v->self_cpu_ns / v->self_gpu_ns : 0.0);
		snprintf(s, sizeof(s), "Self CPU %s vs Self GPU %s", a, b);
		card(f, "Self CPU / Self GPU", c, s);
		cprof_fmt_dur(a, sizeof(a), v->med_launch_ns);
		cprof_fmt_dur(b, sizeof(b), v->med_kernel_ns);
		snprintf(c, sizeof(c), "%s", a);
		snprintf(s, sizeof(s), "median launch call, vs %s median kernel", b);
		card(f, "launch call", c, s);
		cprof_fmt_dur(a, sizeof(a), (double)(v->startup_ns + v->warmup_ns));
		cprof_fmt_dur(b, sizeof(b), (double)v->overhead_ns);
		snprintf(s, sizeof(s), "start-up and warm-up; profiler overhead %s", b);
		card(f, "excluded", a, s);
		fputs("</div>\n", f);
	}
	fputs("<div class=\"advice\"><b>Advice:</b> ", f);
	html_text(f, v->advice);
	fputs("</div></section>\n", f);
}

/* The recording windows (issue 31): the page covers only these. */
static void write_windows(struct html *h)
{
	const struct cprof_recording *r = &h->model.rec;
	FILE *f = h->f;
	char dur[32], cost[32];
	size_t i;

	if (r->n) {
		fprintf(f, "<p class=\"meta\"><b>Recorded windows:</b> %zu (the page covers only these; outside them calls"
			   " passed through unrecorded)</p>\n<table class=\"windows\"><thead><tr><th>#</th><th>Process</th>"
			   "<th>Start</th><th>Length</th><th>Opened by</th><th>Closed by</th><th>cprof cost</th></tr></thead><tbody>\n", r->n);
		for (i = 0; i < r->n; i++) {
			const struct cprof_window *w = &r->w[i];

			cprof_fmt_dur(dur, sizeof(dur), (double)(w->end - w->start));
			fprintf(f, "<tr><td>%d</td><td>", w->number);
			if (w->pid)
				fprintf(f, "%lld", (long long)w->pid);
			else
				fputs("all", f);
			fprintf(f, "</td><td>+%.3f s</td><td>%s</td><td>", w->start >= r->base_ns ? (w->start - r->base_ns) / 1e9 : 0.0,
				dur);
			html_text(f, w->why);
			fputs("</td><td>", f);
			html_text(f, w->end_why);
			cprof_fmt_dur(cost, sizeof(cost), (double)w->cost_ns);
			fprintf(f, "</td><td>%s%s</td></tr>\n", cost, w->cost_measured ? "" : " (CUPTI's part only)");
		}
		fputs("</tbody></table>\n", f);
	}
	if (r->max_size_cut_ns)
		fprintf(f, "<p class=\"meta\"><b>Recording stopped at --max-size %.1f MiB:</b> %lld events and GPU records"
			   " after it were not recorded</p>\n", r->max_size / 1048576.0, (long long)r->unrecorded);
}

static void write_header(struct html *h)
{
	FILE *f = h->f;
	const struct cprof_meta_facts *mf = &h->model.x->meta;
	const char *command = mf->command, *reason = mf->reason, *note = mf->gpu_note;
	char dur[32];
	int complete = mf->complete, killed = 0;
	size_t i;
	const char *base = strrchr(h->profile, '/');
	int64_t api_calls = 0;
	struct call_counts cc;
	char calls_text[160];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      /* an empty icon: the browser asks for /favicon.ico otherwise */
	      "<link rel=\"icon\" href=\"data:,\">\n"
	      "<script>window.addEventListener('error',function(){var d=document.documentElement;"
	      "d.setAttribute('data-js-errors',(+d.getAttribute('data-js-errors')||0)+1);});</script>\n<title>cprof: ",
	      f);
	html_text(f, h->v.verdict);
	fputs(" - ", f);
	html_text(f, base ? base + 1 : h->profile);
	if (h->simulated)
		fputs(" (simulated GPU)", f);
	fprintf(f, "</title>\n<style>%s</style>\n</head><body><main>\n<header><h1>cprof report <small>", css);
	html_text(f, h->profile);
	fputs("</small></h1>\n", f);
	if (h->simulated)
		fputs("<div class=\"sim\">simulated GPU (tests/simgpu): timings are modelled, not measured</div>\n", f);
	if (!complete) {
		fputs("<div class=\"inc\">INCOMPLETE: ", f);
		html_text(f, reason[0] ? reason : "the profile was not finalised");
		fputs("</div>\n", f);
	}
	/* a process killed from outside could not count what it had not sent; a collector that did not finish the
	 * profile wrote no count */
	for (i = 0; i < h->model.nprocs; i++)
		if (h->model.procs[i].end && h->model.procs[i].end->killed)
			killed = 1;
	fputs("<p class=\"meta\"><b>Command:</b> <code>", f);
	html_text(f, command);
	cprof_fmt_dur(dur, sizeof(dur), (double)(h->v.run_end - h->v.run_start));
	/* every call, the hooks' and those only CUPTI saw, as the API table lists them (cprof report's count),
	 * named for what each part counts */
	memset(&cc, 0, sizeof(cc));
	for (i = 0; i < h->apis.n; i++)
		report_call_counts_row(&cc, h->apis.rows[i].name, h->apis.rows[i].cupti, (int64_t)h->apis.rows[i].st.n);
	report_call_counts_split(&h->model, 0, &cc);
	api_calls = cc.total;
	report_call_counts_text(&cc, calls_text, sizeof(calls_text));
	fprintf(f, "</code><br><b>Processes:</b> %zu &nbsp; <b>CUDA API calls:</b> %lld (%s) &nbsp; <b>kernels:</b> %llu &nbsp; "
		   "<b>run:</b> %s &nbsp; <b>lost events:</b> %s%lld%s &nbsp; %s</p>\n",
		h->nprocs, (long long)api_calls, calls_text,
		(unsigned long long)h->n_kernel_total, dur, killed || !mf->lost_known ? "at least " : "",
		(long long)mf->lost_events,
		cprof_lost_note(mf, killed),
		complete ? "complete" : "<b>INCOMPLETE</b>");
	if (note[0]) {
		fputs("<p class=\"meta\"><b>GPU records:</b> ", f);
		html_text(f, note);
		fputs("</p>\n", f);
	}
	write_windows(h);
	fputs("</header>\n", f);
}

static void write_phases_table(struct html *h)
{
	FILE *f = h->f;
	char a[32], b[32], c[32];
	int i;

	if (h->nph <= 1)
		return;
	fprintf(f, "<h2>Phases</h2>\n<p class=\"note\">The run cut at %s; neighbours with the same verdict "
	      "merged. Start is from time 0 of the timeline.</p>\n", h->v.steps ? "its NVTX steps" : "synchronising calls");
	fputs("<table><thead><tr><th>#</th><th>Start</th><th>Length</th>"
	      "<th class=\"name\">Verdict</th><th>GPU busy</th><th>Kernels</th><th>Median kernel</th><th>Median launch</th>"
	      "</tr></thead><tbody>\n", f);
	for (i = 0; i < h->nph; i++) {
		const struct cprof_phase *p = &h->ph[i];

		cprof_fmt_dur(a, sizeof(a), (double)(p->start - h->t0));
		cprof_fmt_dur(b, sizeof(b), (double)(p->end - p->start));
		cprof_fmt_dur(c, sizeof(c), p->v.med_kernel_ns);
		fprintf(f, "<tr><td>%d</td><td>%s</td><td>%s</td><td class=\"l\"><b>%s</b></td><td>%.1f%%</td><td>%llu</td>"
			   "<td>%s</td>",
			i + 1, a, b, p->v.verdict, p->v.busy_pct, (unsigned long long)p->v.kernels, c);
		cprof_fmt_dur(c, sizeof(c), p->v.med_launch_ns);
		fprintf(f, "<td>%s</td></tr>\n", c);
	}
	fputs("</tbody></table>\n", f);
}

static void write_findings(struct html *h)
{
	FILE *f = h->f;
	int i;

	fputs("<h2>Findings</h2>\n", f);
	if (h->nf <= 0) {
		fputs("<p>None of the known patterns (cold start, occupancy query, batched GEMM, copy before GEMM, final "
		      "synchronize, CUPTI gaps, runtime variance, driver-API kernels, tiny kernels, syncs in loops) fired.</p>\n",
		      f);
		return;
	}
	fputs("<ul class=\"findings\">\n", f);
	for (i = 0; i < h->nf; i++) {
		fprintf(f, "<li class=\"%s\"><span class=\"sev\">", !strcmp(h->fd[i].severity, "warn") ? "warn" : "info");
		html_text(f, h->fd[i].severity);
		fputs("</span><span class=\"fid\">", f);
		html_text(f, h->fd[i].id);
		fputs("</span> ", f);
		html_text(f, h->fd[i].message);
		fputs("<div class=\"ev\">evidence: ", f);
		html_text(f, h->fd[i].evidence);
		fputs("</div></li>\n", f);
	}
	fputs("</ul>\n", f);
}

static void write_processes(struct html *h)
{
	FILE *f = h->f;
	size_t i;

	if (h->nprocs <= 1)
		return;
	fputs("<h2>Per process</h2>\n<div class=\"tw\"><table class=\"sortable\" id=\"t-procs\"><thead><tr><th>PID</th>"
	      "<th>PPID</th><th>Rank</th><th class=\"name\">Verdict</th><th>GPU busy</th><th class=\"name\">Command</th>"
	      "</tr></thead><tbody>\n", f);
	for (i = 0; i < h->nprocs; i++) {
		const struct html_proc *p = &h->procs[i];
		char line[1024];

		cprof_verdict_line(&p->v, line, sizeof(line));
		fprintf(f, "<tr><td data-v=\"%lld\">%lld</td><td data-v=\"%lld\">%lld</td>", (long long)p->pid,
			(long long)p->pid, (long long)p->ppid, (long long)p->ppid);
		if (p->rank >= 0)
			fprintf(f, "<td data-v=\"%lld\">%lld</td>", (long long)p->rank, (long long)p->rank);
		else
			fputs("<td data-v=\"-1\">-</td>", f);
		fputs("<td class=\"l\" title=\"", f);
		html_text(f, line);
		fprintf(f, "\">%s</td><td data-v=\"%.2f\">%.1f%%</td><td class=\"name\">", p->v.verdict, p->v.busy_pct,
			p->v.busy_pct);
		html_text(f, p->argv);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void write_footer(struct html *h)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime_r(&now, &tm));
	fprintf(h->f, "<footer>Written by cprof %s (<code>cprof html</code>) on %s from ", CPROF_VERSION, when);
	html_text(h->f, h->profile);
	fprintf(h->f, "%s. Self-contained: no network access, no external file.</footer>\n</main>\n<script>\n%s</script>\n"
		      "</body></html>\n",
		h->simulated ? " (simulated GPU)" : "", script);
}

/* ---- loading ---- */

static int load_procs(struct html *h, const struct cprof_thresholds *th)
{
	size_t i;

	for (i = 0; i < h->model.nprocs; i++) {
		const struct cprof_proc *q = &h->model.procs[i];
		struct html_proc *p;

		if (cprof_grow(&h->procs, &h->nprocs_cap, h->nprocs, sizeof(*h->procs)) < 0)
			return -ENOMEM;
		p = &h->procs[h->nprocs];
		memset(p, 0, sizeof(*p));
		p->id = q->id;
		p->pid = q->pid;
		p->ppid = q->ppid;
		p->rank = q->rank;
		p->argv = strdup(q->argv[0] ? q->argv : q->exe);
		if (p->argv == NULL)
			return -ENOMEM;
		h->nprocs++;
	}
	if (h->nprocs > 1)
		for (i = 0; i < h->nprocs; i++) {
			struct cprof_phase *pp = NULL;

			if (cprof_headline(&h->model, h->procs[i].id, th, &h->procs[i].v, &pp) < 0)
				return -EIO;
			free(pp);
		}
	return 0;
}

/* Time 0 of the page: the first CUDA activity, counting calls only CUPTI saw (context creation inside
 * cudaSetDevice, say), which may come before the first hooked one. */
static void choose_origin(struct html *h)
{
	const struct cprof_model *m = &h->model;
	int64_t c0 = m->nrt ? (int64_t)m->rt[0].start : -1, c1 = -1;
	size_t i;

	for (i = 0; i < m->nrt; i++)
		if ((int64_t)m->rt[i].end > c1)
			c1 = (int64_t)m->rt[i].end;

	h->t0 = h->v.run_start;
	h->t1 = h->v.run_end;
	if (c0 > 0 && (h->t1 <= h->t0 || (uint64_t)c0 < h->t0))
		h->t0 = (uint64_t)c0;
	if (c1 > 0 && (uint64_t)c1 > h->t1)
		h->t1 = (uint64_t)c1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int html_write_page(struct html *h, const struct cprof_thresholds *th)
{
	double t0 = now_s(), t1;
	int ret;

	h->simulated = h->model.x->meta.simulated;
	if ((h->nph = cprof_headline(&h->model, 0, th, &h->v, &h->ph)) < 0)
		return -EIO;
	h->nf = cprof_findings(&h->model, 0, &h->v, &h->fd);
	if (h->nf < 0)
		h->nf = 0;
	h->n_kernel_total = 0;
	for (size_t i = 0; i < h->model.nops; i++)
		h->n_kernel_total += h->model.ops[i].kind == CPROF_OP_KERNEL;
	choose_origin(h);
	if ((ret = load_procs(h, th)) < 0 || (ret = html_tables_load(h)) < 0)
		return ret;
	t1 = now_s();
	/* at debug level: where the time goes on a large profile */
	pr_dbg("verdict, findings and tables: %.2f s", t1 - t0);
	write_header(h);
	write_verdict(h);
	write_phases_table(h);
	write_findings(h);
	write_processes(h);
	if ((ret = html_timeline(h)) < 0)
		return ret;
	pr_dbg("timeline: %.2f s", now_s() - t1);
	html_charts(h);
	html_tables_write(h);
	write_footer(h);
	return 0;
}
