/*
 * cgprobe report: draws the data block that cgtrace report embeds
 * (docs/report.md), with page.js, tables.js, timeline.js, updates.js and,
 * for a job's page, job.js. No library.
 */

var STEP_NAMES = ['none', 'forward', 'backward', 'optimizer'];

var D; /* the data block */
var P; /* its palette: the colours of every picture of cgtrace (cgtrace/palette.c) */
var cats;

function main() {
	var data = JSON.parse($('cg-data').textContent);
	if (data.format === 'cgprobe-job-report/1')
		jobMain(data);
	else
		showReport(data);
}

/* A trace's page from its data block: the page of one trace, or of a job's process (job.js). */
function showReport(data) {
	D = data;
	P = D.palette;
	cats = D.categories;
	resetBaseline();
	/* The style sheet's colours of the marks are the palette's too. */
	document.documentElement.style.setProperty('--peak', P.peak);
	document.documentElement.style.setProperty('--oom', P.oom);
	full.t0 = D.grid.start_ns;
	full.t1 = gridEnd();
	renderHeader();
	renderSummary();
	renderTimeline();
	renderUpdates();
	renderPeak();
	renderSites();
	renderSpans();
	renderDevices();
	applyHash();
	/* A test that put its self-test on the page gets what was drawn (tests/lib/report-selftest.js). */
	if (typeof window.cgReportSelftest === 'function')
		window.cgReportSelftest({data: D, panels: panels, view: view, drawAll: drawAll, columns: columns,
			keptLive: keptLive});
}

/*
 * A link can open the page in a state: #mode=alloc, zoom=T0,T1 (seconds),
 * live=DEVICE,T (what was live on the device index at T seconds),
 * align=update (the baseline laid on by update number).
 */
function applyHash() {
	var h = location.hash.replace(/^#/, '');
	if (!h)
		return;
	h.split('&').forEach(function (kv) {
		var p = kv.split('='), v = (p[1] || '').split(',').map(Number);
		if (p[0] === 'align' && p[1] === 'update') {
			setAlign('update');
		} else if (p[0] === 'mode' && (p[1] === 'alloc' || p[1] === 'category')) {
			mode = p[1];
			document.querySelector('input[name=cg-mode][value=' + mode + ']').checked = true;
			renderLegend();
			drawAll();
		} else if (p[0] === 'zoom' && v.length === 2 && v[1] > v[0]) {
			setView(v[0] * 1e9, v[1] * 1e9);
		} else if (p[0] === 'live' && v.length === 2 && D.devices[v[0]]) {
			showLive(D.devices[v[0]], bucketOf(v[1] * 1e9));
		}
	});
}

main();
