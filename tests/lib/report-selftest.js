/*
 * The HTML report's self-test, which a test puts on a page of cgtrace
 * report before the page's own script (report-selftest.sh); no report
 * ships it. It notes every error the page meets, and once the page's
 * script has drawn (it calls window.cgReportSelftest with what it drew)
 * writes into <pre id="cg-selftest"> what was drawn, which the test reads
 * from the browser's DOM (docs/report.md, "The self-test").
 */
(function () {
	'use strict';

	var started = performance.now();
	var result = {
		rendered: false,
		peak_shown: null,
		timeline_max: null,
		timeline_max_alloc: null,
		drawn_mismatch: null,
		updates: null,
		update_lines: null,
		update_labels: null,
		baseline_max: null,
		deltas: null,
		render_ms: null,
		script_ms: null,
		errors: []
	};
	var out = document.createElement('pre');
	out.id = 'cg-selftest';
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
	/* A page whose script never got to the end still says so. */
	window.addEventListener('load', write);

	/* The highest bytes a summary card of a device shows. */
	function peakShown() {
		var shown = 0, vs = document.querySelectorAll('#cg-summary .v[data-device]');
		for (var i = 0; i < vs.length; i++)
			shown = Math.max(shown, Number(vs[i].getAttribute('data-bytes')));
		return shown;
	}

	/*
	 * The stacking by allocation, computed as it would be drawn: it must
	 * reach the same peak; and per bucket, the kept allocations drawn there
	 * against the view's drawn bytes.
	 */
	function allocStacking(r) {
		var top = 0, mismatch = 0, n = r.data.grid.n;
		r.panels.forEach(function (p) {
			r.columns(p.d, p.x0, p.w, 'alloc').forEach(function (c) {
				top = Math.max(top, c.top);
			});
			/* Bounded work: with very many buckets and allocations the count is left out. */
			if (n * p.d.kept.length > 2e7) {
				mismatch = null;
				return;
			}
			for (var i = 0; i < n && mismatch !== null; i++) {
				var s = 0;
				r.keptLive(p.d, i).forEach(function (a) {
					s += a.b;
				});
				if (s !== p.d.buckets.drawn[i])
					mismatch++;
			}
		});
		result.timeline_max_alloc = top;
		result.drawn_mismatch = mismatch;
	}

	/*
	 * The training updates' tables, each shown whole: its device, its rows
	 * and the highest peak they show; the update starts the first panel drew.
	 */
	function updateTables(r) {
		var list = [], tables = document.querySelectorAll('#cg-updates [data-device]');
		for (var i = 0; i < tables.length; i++) {
			var t = tables[i], more = t.querySelector('.more button');
			if (more)
				more.click();
			var peak = 0, cells = t.querySelectorAll('.upeak');
			for (var k = 0; k < cells.length; k++)
				peak = Math.max(peak, Number(cells[k].getAttribute('data-bytes')));
			list.push({device: t.getAttribute('data-device'), rows: t.querySelectorAll('tbody tr').length,
				data_rows: Number(t.getAttribute('data-rows')), peak: peak});
		}
		result.updates = list;
		if (r.panels[0]) {
			result.update_lines = r.panels[0].updateLines;
			result.update_labels = r.panels[0].updateLabels;
		}
	}

	/*
	 * #selftest=interact: the pointer's work done by synthetic events, so a
	 * headless browser can check it: the hover's tooltip, the wheel's and a
	 * drag's zoom, the reset, a click's live list, the other stacking.
	 */
	function interactTest(r) {
		var $ = function (id) {
			return document.getElementById(id);
		};
		var p = r.panels[0], view = r.view;
		if (!p)
			return 'no timeline panel';
		var rc = p.canvas.getBoundingClientRect();
		var y = rc.top + p.y0 + p.ph - 2, xa = rc.left + p.x0 + p.w * 0.25, xb = rc.left + p.x0 + p.w * 0.6;
		var span0 = view.t1 - view.t0;
		function mouse(target, type, x) {
			target.dispatchEvent(new MouseEvent(type, {clientX: x, clientY: y, button: 0, bubbles: true, cancelable: true}));
		}
		mouse(p.canvas, 'mousemove', xa);
		if ($('cg-tip').hidden || !$('cg-tip').textContent)
			return 'hovering showed no tooltip';
		mouse(p.canvas, 'mouseleave', xa);
		p.canvas.dispatchEvent(new WheelEvent('wheel', {clientX: xa, clientY: y, deltaY: -120, bubbles: true, cancelable: true}));
		if (!(view.t1 - view.t0 < span0))
			return 'the wheel did not zoom in';
		$('cg-reset').click();
		if (view.t1 - view.t0 !== span0)
			return 'reset did not show the whole trace';
		mouse(p.canvas, 'mousedown', xa);
		mouse(window, 'mousemove', xb);
		mouse(window, 'mouseup', xb);
		if (!(view.t1 - view.t0 < span0 * 0.5))
			return 'a drag did not zoom to its range';
		$('cg-reset').click();
		mouse(p.canvas, 'mousedown', xb);
		mouse(p.canvas, 'mouseup', xb);
		if (!$('cg-live').querySelector('table'))
			return 'a click did not list what was live';
		var radio = document.querySelector('input[name=cg-mode][value=alloc]');
		radio.checked = true;
		radio.dispatchEvent(new Event('change'));
		var top = r.drawAll();
		document.querySelector('input[name=cg-mode][value=category]').checked = true;
		document.querySelector('input[name=cg-mode][value=category]').dispatchEvent(new Event('change'));
		$('cg-live').textContent = '';
		if (top !== result.timeline_max)
			return 'by allocation the timeline reaches ' + top + ', by category ' + result.timeline_max;
		return 'ok';
	}

	/* r: what the page drew (report.js, main): its data, panels, view and drawing functions. */
	window.cgReportSelftest = function (r) {
		result.rendered = true;
		result.peak_shown = peakShown();
		result.timeline_max = 0;
		r.panels.forEach(function (p) {
			result.timeline_max = Math.max(result.timeline_max, p.drawnMax);
		});
		/* Against a baseline: the highest its line drew, the differences the cards show. */
		r.panels.forEach(function (p) {
			if (p.baseDrawnMax != null)
				result.baseline_max = Math.max(result.baseline_max || 0, p.baseDrawnMax);
		});
		var ds = document.querySelectorAll('#cg-summary .delta');
		if (ds.length) {
			result.deltas = [];
			for (var i = 0; i < ds.length; i++)
				result.deltas.push({delta: Number(ds[i].getAttribute('data-delta')), text: ds[i].textContent});
		}
		allocStacking(r);
		updateTables(r);
		if (/(^#|&)selftest=interact(&|$)/.test(location.hash))
			result.interact = interactTest(r);
		result.script_ms = Math.round(performance.now() - started);
		result.render_ms = Math.round(performance.now());
		write();
	};
})();
