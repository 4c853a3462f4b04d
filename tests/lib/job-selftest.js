/*
 * The self-test of a job's report page, which a test puts on the page
 * before its script (report-selftest.sh PAGE OUT job-selftest.js); no
 * report ships it. Once the job page has drawn (job.js calls
 * window.cgJobSelftest) it notes what each lane drew and the rows of the
 * process table; with #selftest-open=PID in the URL it clicks that
 * process's lane, and once the process's own page has drawn (the trace's
 * page code calls window.cgReportSelftest) it notes what that page shows.
 * All of it goes into <pre id="cg-job-selftest"> as JSON, which the test
 * reads from the browser's DOM (docs/report.md, "The self-test").
 */
(function () {
	'use strict';

	var result = {rendered: false, render_ms: null, lanes: null, gpus: null, table_rows: null, opened: null, page: null,
		errors: []};
	var out = document.createElement('pre');
	out.id = 'cg-job-selftest';
	out.hidden = true;

	function write() {
		if (!out.parentNode)
			document.body.appendChild(out);
		out.textContent = JSON.stringify(result);
	}
	function noteError(msg) {
		result.errors.push(String(msg));
		write();
	}
	window.addEventListener('error', function (ev) {
		noteError((ev.message || 'error') + (ev.lineno ? ' (line ' + ev.lineno + ')' : ''));
	});
	window.addEventListener('unhandledrejection', function (ev) {
		noteError('unhandled rejection: ' + ev.reason);
	});
	var consoleError = console.error;
	console.error = function () {
		noteError(Array.prototype.join.call(arguments, ' '));
		consoleError.apply(console, arguments);
	};
	window.addEventListener('load', write);

	/* r: what the job page drew (job.js, route): its data and lanes. */
	window.cgJobSelftest = function (r) {
		if (result.rendered)
			return;
		result.rendered = true;
		result.render_ms = Math.round(performance.now());
		result.lanes = [];
		result.gpus = [];
		r.lanes.forEach(function (l) {
			if (l.kind === 'process')
				result.lanes.push({process: l.i, pid: Number(l.el.getAttribute('data-pid')),
					name: l.el.getAttribute('data-name'), drawn_max: l.drawnMax, base_drawn_max: l.baseDrawnMax});
			else if (l.kind === 'gpu')
				result.gpus.push({key: l.el.getAttribute('data-gpu'), drawn_max: l.drawnMax, base_drawn_max: l.baseDrawnMax,
					peak_marked: l.peakMarked});
		});
		result.table_rows = document.querySelectorAll('#cg-jobtable tbody tr').length;
		write();
		var m = /selftest-open=(\d+)/.exec(location.hash);
		if (!m)
			return;
		var lane = document.querySelector('#cg-joblanes .lane[data-pid="' + m[1] + '"]');
		if (!lane) {
			result.opened = 'no lane of pid ' + m[1];
			write();
			return;
		}
		result.opened = Number(lane.getAttribute('data-process'));
		lane.querySelector('canvas').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
		write();
	};

	/* r: what a process's page drew (report.js, showReport). */
	window.cgReportSelftest = function (r) {
		var shown = 0, vs = document.querySelectorAll('#cg-summary .v[data-device]');
		for (var i = 0; i < vs.length; i++)
			shown = Math.max(shown, Number(vs[i].getAttribute('data-bytes')));
		var top = 0, base = null;
		r.panels.forEach(function (p) {
			top = Math.max(top, p.drawnMax);
			if (p.baseDrawnMax != null)
				base = Math.max(base || 0, p.baseDrawnMax);
		});
		var nav = document.getElementById('cg-jobnav');
		result.page = {hash: location.hash, trace: r.data.trace, title: document.getElementById('cg-title').textContent,
			nav: nav && !nav.hidden ? nav.textContent : null, job_hidden: document.getElementById('cg-job').hidden,
			peak_shown: shown, timeline_max: top, baseline_max: base};
		write();
	};
})();
