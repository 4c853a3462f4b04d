/*
 * cgprobe report: the timeline, one canvas per device stacked by category
 * or by allocation from the view's buckets, zoomed, hovered and clicked.
 */

var mode = 'category';
var showCkpt = true;
var view = {t0: 0, t1: 1};
var full = {t0: 0, t1: 1};
var panels = [];
var M = {l: 64, r: 12, t: 14, b: 20};
/* The toolbar's listeners, added once: a job's page draws one process's timeline after another. */
var timelineWired = false;

function gridEnd() {
	var g = D.grid;
	return Math.max(g.end_ns, g.start_ns + g.n * g.bucket_ns, g.start_ns + 1, baseEnd());
}
function bucketOf(t) {
	var g = D.grid;
	if (!g.n || !g.bucket_ns || t <= g.start_ns)
		return 0;
	var i = Math.floor((t - g.start_ns) / g.bucket_ns);
	return i < g.n ? i : g.n - 1;
}

/* The kept allocations of each device, in allocation order: bands stack oldest first. */
function prepareAllocs() {
	D.devices.forEach(function (d) {
		d.kept = [];
	});
	D.allocs.forEach(function (a, i) {
		a.i = i;
		if (D.devices[a.d])
			D.devices[a.d].kept.push(a);
	});
	D.devices.forEach(function (d) {
		d.kept.sort(function (a, b) {
			return a.t0 - b.t0 || a.i - b.i;
		});
	});
}
/* The kept allocations drawn in bucket i, oldest first: live at its highest instant (the view's alloc_live). */
function keptLive(d, i) {
	return d.kept.filter(function (a) {
		return a.live[0] <= i && i < a.live[1];
	});
}

/* The segments stacked at bucket i: by category, or the kept allocations and the rest. */
function segments(d, i, how) {
	var b = d.buckets, segs = [];
	if (how === 'category') {
		for (var c = 0; c < b.cat.length; c++)
			if (b.cat[c][i] > 0)
				segs.push({v: b.cat[c][i], color: P.category[c], c: c});
		return segs;
	}
	var sum = 0;
	keptLive(d, i).forEach(function (a) {
		segs.push({v: a.b, color: P.category[a.c] || P.rest, a: a});
		sum += a.b;
	});
	if (b.max[i] > sum)
		segs.push({v: b.max[i] - sum, color: P.rest, rest: true});
	return segs;
}

/*
 * Pixel columns of the visible buckets: buckets narrower than a pixel share one, which
 * shows the highest of them, so no peak is lost at any zoom.
 */
function columns(d, x0, w, how) {
	var g = D.grid, cols = [];
	if (!g.n)
		return cols;
	var span = view.t1 - view.t0, k = w / span;
	var i0 = bucketOf(view.t0), i1 = bucketOf(view.t1);
	var cur = null;
	for (var i = i0; i <= i1; i++) {
		var bs = g.start_ns + i * g.bucket_ns, be = i + 1 < g.n ? bs + g.bucket_ns : Math.max(bs + g.bucket_ns, g.end_ns);
		if (be <= view.t0 || bs >= view.t1)
			continue;
		var xa = x0 + (Math.max(bs, view.t0) - view.t0) * k;
		var xb = x0 + (Math.min(be, view.t1) - view.t0) * k;
		var px = Math.floor(xa);
		if (cur && px < cur.x1) {
			if (d.buckets.max[i] > d.buckets.max[cur.i])
				cur.i = i;
			cur.x1 = Math.max(cur.x1, Math.round(xb));
			cur.n++;
		} else {
			cur = {x0: px, x1: Math.max(px + 1, Math.round(xb)), i: i, n: 1};
			cols.push(cur);
		}
	}
	cols.forEach(function (c) {
		c.segs = segments(d, c.i, how);
		var top = 0;
		c.segs.forEach(function (s) {
			top += s.v;
		});
		c.top = top;
	});
	return cols;
}

function niceStep(range, n) {
	var raw = range / Math.max(1, n);
	var p = Math.pow(10, Math.floor(Math.log10(raw)));
	var f = raw / p;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}
function byteTicks(max, n) {
	var u = 0, div = 1;
	while (u < UNITS.length && max / (div * 1024) >= 1) {
		div *= 1024;
		u++;
	}
	var unit = u ? UNITS[u - 1] : 'B';
	var step = niceStep(max / div, n);
	if (!u)
		step = Math.max(1, Math.round(step));
	var ticks = [];
	for (var v = 0; v <= max / div + 1e-9; v += step)
		ticks.push({v: v * div, s: (Math.round(v / step) * step).toFixed(step < 1 ? Math.ceil(-Math.log10(step)) : 0) + ' ' + unit});
	return ticks;
}

function makePanels() {
	var box = $('cg-panels');
	box.textContent = '';
	panels = [];
	var n = D.devices.length;
	var h = n <= 1 ? 300 : n === 2 ? 210 : 170;
	D.devices.forEach(function (d, di) {
		var title = el('div', {cls: 'ptitle'}, [d.name + ' ', el('span', {cls: 's',
			text: 'peak ' + fmtBytes(d.peak) + (d.capacity ? ' of ' + fmtBytes(d.capacity) : '') + ', ' +
				plural(d.alloc_count, 'allocation') + (d.n_ooms ? ', ' + plural(d.n_ooms, 'out-of-memory failure') : '')})]);
		var canvas = el('canvas', {'aria-label': 'live bytes on ' + d.name, role: 'img'});
		var p = el('div', {cls: 'panel'}, [title, canvas]);
		box.appendChild(p);
		var panel = {d: d, di: di, el: p, canvas: canvas, h: h, cols: [], ymax: 1, drawnMax: 0};
		panels.push(panel);
		attachEvents(panel);
	});
}

function drawAll() {
	var top = 0;
	panels.forEach(function (p) {
		draw(p);
		top = Math.max(top, p.drawnMax);
	});
	return top;
}

function draw(p) {
	var d = p.d, canvas = p.canvas;
	var cssW = Math.max(300, canvas.parentNode.clientWidth), cssH = p.h;
	var dpr = window.devicePixelRatio || 1;
	if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(cssH * dpr)) {
		canvas.width = Math.round(cssW * dpr);
		canvas.height = Math.round(cssH * dpr);
		canvas.style.height = cssH + 'px';
	}
	var ctx = canvas.getContext('2d');
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.clearRect(0, 0, cssW, cssH);
	var x0 = M.l, w = cssW - M.l - M.r, y0 = M.t, h = cssH - M.t - M.b;
	p.x0 = x0;
	p.w = w;
	p.y0 = y0;
	p.ph = h;
	var cols = columns(d, x0, w, mode);
	p.cols = cols;
	var ymax = 0;
	cols.forEach(function (c) {
		ymax = Math.max(ymax, c.top);
	});
	/* The baseline's line (baseline.js) on the same axes: the scale holds both. */
	var bcols = D.baseline ? baseColumns(p) : null;
	(bcols || []).forEach(function (v) {
		ymax = Math.max(ymax, v);
	});
	p.bcols = bcols;
	var ck = d.checkpoints, ckIdx = [];
	if (showCkpt && ck && ck.t.length) {
		for (var j = 0; j < ck.t.length; j++)
			if (ck.t[j] >= view.t0 && ck.t[j] <= view.t1) {
				ckIdx.push(j);
				ymax = Math.max(ymax, ck.used[j]);
			}
	}
	ymax = ymax > 0 ? ymax * 1.08 : 1024;
	p.ymax = ymax;
	var X = function (t) {
		return x0 + (t - view.t0) * w / (view.t1 - view.t0);
	};
	var Y = function (v) {
		return y0 + h - v * h / ymax;
	};
	p.X = X;
	p.Y = Y;

	/* Step spans behind everything. */
	var sb = D.step_bands;
	if (sb)
		for (var s = 0; s < sb.t0.length; s++) {
			if (sb.t1[s] < view.t0 || sb.t0[s] > view.t1)
				continue;
			var a = Math.max(x0, X(sb.t0[s])), b = Math.min(x0 + w, X(sb.t1[s]));
			ctx.fillStyle = bandFill(sb.k[s]);
			ctx.fillRect(a, y0, Math.max(1, b - a), h);
		}

	/* Grid lines and the y axis. */
	ctx.font = '11px system-ui, sans-serif';
	ctx.fillStyle = '#5f6368';
	ctx.strokeStyle = '#e8eaed';
	ctx.lineWidth = 1;
	ctx.textAlign = 'right';
	ctx.textBaseline = 'middle';
	byteTicks(ymax, Math.max(2, Math.floor(h / 40))).forEach(function (t) {
		var y = Math.round(Y(t.v)) + 0.5;
		ctx.beginPath();
		ctx.moveTo(x0, y);
		ctx.lineTo(x0 + w, y);
		ctx.stroke();
		ctx.fillText(t.s, x0 - 6, y);
	});

	if (bcols)
		fillBase(ctx, bcols, x0, Y, y0 + h);

	/* The stacked columns; what is drawn is what a test's self-test measures. */
	var drawnMax = 0;
	cols.forEach(function (c) {
		var acc = 0, cw = c.x1 - c.x0;
		for (var k = 0; k < c.segs.length; k++) {
			var sg = c.segs[k];
			var yt = Y(acc + sg.v), yb = Y(acc);
			ctx.fillStyle = sg.color;
			ctx.fillRect(c.x0, yt, cw, Math.max(yb - yt, 0.5));
			if (sg.a && yb - yt >= 4) {
				ctx.fillStyle = 'rgba(255,255,255,0.55)';
				ctx.fillRect(c.x0, yt, cw, 1);
			}
			acc += sg.v;
		}
		drawnMax = Math.max(drawnMax, acc);
	});
	p.drawnMax = drawnMax;
	p.baseDrawnMax = bcols ? strokeBase(ctx, bcols, x0, Y) : null;

	/* The training updates' starts, over the stack (updates.js). */
	drawUpdateMarks(p, ctx);

	/* Device checkpoints: the driver's used bytes, a line over the stack. */
	if (ckIdx.length) {
		ctx.strokeStyle = P.used;
		ctx.lineWidth = 1.2;
		ctx.setLineDash([4, 3]);
		ctx.beginPath();
		ckIdx.forEach(function (j, n) {
			var x = X(ck.t[j]), y = Y(ck.used[j]);
			if (n)
				ctx.lineTo(x, y);
			else
				ctx.moveTo(x, y);
		});
		ctx.stroke();
		ctx.setLineDash([]);
		if (ckIdx.length < 60) {
			ctx.fillStyle = P.used;
			ckIdx.forEach(function (j) {
				ctx.fillRect(X(ck.t[j]) - 1.5, Y(ck.used[j]) - 1.5, 3, 3);
			});
		}
	}

	/* Out-of-memory failures: a mark at the top. */
	(d.ooms || []).forEach(function (o) {
		if (o.t < view.t0 || o.t > view.t1)
			return;
		var x = X(o.t);
		ctx.strokeStyle = P.oom;
		ctx.lineWidth = 1;
		ctx.beginPath();
		ctx.moveTo(x, y0);
		ctx.lineTo(x, y0 + h);
		ctx.stroke();
		ctx.fillStyle = P.oom;
		ctx.beginPath();
		ctx.moveTo(x - 5, y0 - 1);
		ctx.lineTo(x + 5, y0 - 1);
		ctx.lineTo(x, y0 + 7);
		ctx.closePath();
		ctx.fill();
	});

	/* The peak. */
	if (d.peak > 0 && d.peak_ns >= view.t0 && d.peak_ns <= view.t1) {
		var px = Math.round(X(d.peak_ns)) + 0.5, py = Y(d.peak);
		ctx.strokeStyle = P.peak;
		ctx.lineWidth = 1;
		ctx.setLineDash([3, 3]);
		ctx.beginPath();
		ctx.moveTo(px, y0 + h);
		ctx.lineTo(px, py);
		ctx.stroke();
		ctx.setLineDash([]);
		ctx.fillStyle = P.peak;
		ctx.beginPath();
		ctx.arc(px, py, 3.5, 0, 2 * Math.PI);
		ctx.fill();
		var label = 'peak ' + fmtBytes(d.peak) + ' at ' + fmtT(d.peak_ns);
		ctx.font = '600 11px system-ui, sans-serif';
		var tw = ctx.measureText(label).width;
		var right = px + 6 + tw < x0 + w;
		ctx.textAlign = right ? 'left' : 'right';
		ctx.textBaseline = 'bottom';
		var ly = Math.max(y0 + 11, py - 3);
		ctx.fillStyle = 'rgba(255,255,255,0.8)';
		ctx.fillRect(right ? px + 4 : px - 6 - tw, ly - 12, tw + 4, 13);
		ctx.fillStyle = P.peak;
		ctx.fillText(label, right ? px + 6 : px - 6, ly);
		ctx.font = '11px system-ui, sans-serif';
	}

	/* The x axis: seconds from the session start. */
	ctx.strokeStyle = '#9aa0a6';
	ctx.lineWidth = 1;
	ctx.beginPath();
	ctx.moveTo(x0, y0 + h + 0.5);
	ctx.lineTo(x0 + w, y0 + h + 0.5);
	ctx.stroke();
	ctx.fillStyle = '#5f6368';
	ctx.textAlign = 'center';
	ctx.textBaseline = 'top';
	var span = view.t1 - view.t0, step = Math.max(1, niceStep(span, Math.max(2, Math.floor(w / 110))));
	var first = Math.ceil(view.t0 / step) * step;
	var dec = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / 1e9))));
	var lastRight = -Infinity;
	for (var t = first; t <= view.t1 + 1e-6; t += step) {
		var x = Math.round(X(t)) + 0.5;
		ctx.beginPath();
		ctx.moveTo(x, y0 + h);
		ctx.lineTo(x, y0 + h + 4);
		ctx.stroke();
		var lab = (t / 1e9).toFixed(dec) + ' s', lw = ctx.measureText(lab).width;
		/* The last label stays inside the canvas; one that would overlap the previous is left out. */
		var left = Math.min(x - lw / 2, cssW - 1 - lw);
		if (left < lastRight + 8)
			continue;
		ctx.textAlign = 'left';
		ctx.fillText(lab, left, y0 + h + 5);
		lastRight = left + lw;
	}
}

/* ---- zoom, hover, click ---- */

function setView(t0, t1) {
	var minSpan = Math.max(1000, D.grid.bucket_ns * 2);
	if (t1 - t0 < minSpan) {
		var mid = (t0 + t1) / 2;
		t0 = mid - minSpan / 2;
		t1 = mid + minSpan / 2;
	}
	if (t0 < full.t0) {
		t1 += full.t0 - t0;
		t0 = full.t0;
	}
	if (t1 > full.t1) {
		t0 -= t1 - full.t1;
		t1 = full.t1;
	}
	view.t0 = Math.max(full.t0, t0);
	view.t1 = Math.min(full.t1, t1);
	drawAll();
}
function timeAt(p, x) {
	return view.t0 + (x - p.x0) * (view.t1 - view.t0) / p.w;
}
function colAt(p, x) {
	var lo = 0, hi = p.cols.length - 1;
	while (lo <= hi) {
		var mid = (lo + hi) >> 1, c = p.cols[mid];
		if (x < c.x0)
			hi = mid - 1;
		else if (x >= c.x1)
			lo = mid + 1;
		else
			return c;
	}
	return null;
}
function localXY(p, ev) {
	var r = p.canvas.getBoundingClientRect();
	return {x: ev.clientX - r.left, y: ev.clientY - r.top};
}

function attachEvents(p) {
	var c = p.canvas, drag = null, sel = null;
	c.addEventListener('wheel', function (ev) {
		ev.preventDefault();
		var q = localXY(p, ev);
		var t = timeAt(p, Math.min(p.x0 + p.w, Math.max(p.x0, q.x)));
		/* Lines and pages as pixels; a trackpad's many small steps zoom as one wheel notch. */
		var dy = ev.deltaY * (ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1);
		var f = Math.min(2, Math.max(0.5, Math.exp(dy * 0.002)));
		setView(t - (t - view.t0) * f, t + (view.t1 - t) * f);
		hover(p, ev);
	}, {passive: false});
	c.addEventListener('mousedown', function (ev) {
		if (ev.button !== 0)
			return;
		drag = localXY(p, ev);
		ev.preventDefault();
	});
	window.addEventListener('mousemove', function (ev) {
		if (!drag)
			return;
		var q = localXY(p, ev);
		if (Math.abs(q.x - drag.x) < 4)
			return;
		if (!sel) {
			sel = el('div', {cls: 'sel'});
			p.el.appendChild(sel);
		}
		var a = Math.max(p.x0, Math.min(q.x, drag.x)), b = Math.min(p.x0 + p.w, Math.max(q.x, drag.x));
		sel.style.left = a + 'px';
		sel.style.width = Math.max(0, b - a) + 'px';
		sel.style.top = (c.offsetTop + p.y0) + 'px';
		sel.style.height = p.ph + 'px';
	});
	window.addEventListener('mouseup', function (ev) {
		if (!drag)
			return;
		var q = localXY(p, ev), start = drag;
		drag = null;
		if (sel) {
			sel.parentNode.removeChild(sel);
			sel = null;
		}
		if (Math.abs(q.x - start.x) >= 4) {
			var a = timeAt(p, Math.max(p.x0, Math.min(q.x, start.x)));
			var b = timeAt(p, Math.min(p.x0 + p.w, Math.max(q.x, start.x)));
			setView(a, b);
		} else if (ev.target === c) {
			var col = colAt(p, q.x);
			if (col)
				showLive(p.d, col.i);
		}
	});
	c.addEventListener('mousemove', function (ev) {
		hover(p, ev);
	});
	c.addEventListener('mouseleave', function () {
		$('cg-tip').hidden = true;
	});
}

function hover(p, ev) {
	var tip = $('cg-tip');
	var q = localXY(p, ev);
	var col = colAt(p, q.x);
	if (!col || q.y < p.y0 - 8 || q.y > p.y0 + p.ph) {
		tip.hidden = true;
		return;
	}
	var d = p.d, b = d.buckets, i = col.i, span = view.t1 - view.t0;
	var up = updateAt(timeAt(p, q.x));
	tip.textContent = '';
	tip.appendChild(el('div', {cls: 't', text: d.name + ' at ' + fmtSec(timeAt(p, q.x), span) +
		(up ? ', in update ' + up.u + ' (' + fmtSec(up.t0, span) + ' to ' + fmtSec(up.t1, span) + ')' : '')}));
	tip.appendChild(el('div', {text: fmtBytes(b.max[i]) + ' live at ' + fmtSec(b.max_ns[i], span) +
		(col.n > 1 ? ' (highest of ' + col.n + ' buckets here)' : ' (the bucket\'s highest)')}));
	/* The segment under the pointer. */
	var v = (p.y0 + p.ph - q.y) * p.ymax / p.ph, acc = 0, hit = null;
	for (var k = 0; k < col.segs.length; k++) {
		if (v >= acc && v < acc + col.segs[k].v)
			hit = col.segs[k];
		acc += col.segs[k].v;
	}
	if (mode === 'category') {
		for (var c = 0; c < b.cat.length; c++)
			if (b.cat[c][i] > 0)
				tip.appendChild(el('div', null, [swatch(P.category[c]), (hit && hit.c === c ? '\u25B6 ' : '') + cats[c] + ' ' + fmtBytes(b.cat[c][i])]));
	} else if (hit && hit.a) {
		var a = hit.a;
		tip.appendChild(el('div', null, [swatch(P.category[a.c]), fmtBytes(a.b) + ' ' + cats[a.c] + (a.op ? ', ' + a.op : '')]));
		if (siteName(a.s))
			tip.appendChild(el('div', {text: siteName(a.s)}));
		tip.appendChild(el('div', {text: (a.pre ? 'live when the capture window began' : 'allocated at ' + fmtSec(a.t0, span)) +
			(a.t1 == null ? ', never freed' : ', freed at ' + fmtSec(a.t1, span))}));
	} else if (hit && hit.rest) {
		tip.appendChild(el('div', null, [swatch(P.rest), 'other allocations ' + fmtBytes(hit.v)]));
	}
	var bx = Math.floor(q.x - p.x0);
	if (p.bcols && bx >= 0 && bx < p.bcols.length && p.bcols[bx] != null)
		tip.appendChild(el('div', null, [swatch(P.baseline, true), 'baseline ' + fmtBytes(p.bcols[bx]) + ' (its highest here)']));
	var ck = d.checkpoints;
	if (showCkpt && ck && ck.t.length) {
		var t = timeAt(p, q.x), j = -1;
		for (var n = 0; n < ck.t.length && ck.t[n] <= t; n++)
			j = n;
		if (j >= 0)
			tip.appendChild(el('div', {text: 'device: ' + fmtBytes(ck.used[j]) + ' used, ' + fmtBytes(ck.free[j]) + ' free (checkpoint at ' + fmtSec(ck.t[j], span) + ')'}));
	}
	(d.ooms || []).forEach(function (o) {
		if (Math.abs(p.X(o.t) - q.x) <= 4)
			tip.appendChild(el('div', {cls: 'warn', text: 'out of memory at ' + fmtSec(o.t, span) + ': ' + fmtBytes(o.request) + ' requested'}));
	});
	tip.hidden = false;
	var tw = tip.offsetWidth, th = tip.offsetHeight;
	var x = ev.clientX + 14, y = ev.clientY + 14;
	if (x + tw > window.innerWidth - 4)
		x = ev.clientX - tw - 14;
	if (y + th > window.innerHeight - 4)
		y = ev.clientY - th - 14;
	tip.style.left = Math.max(4, x) + 'px';
	tip.style.top = Math.max(4, y) + 'px';
}

/* What was live at a bucket's highest instant: the kept allocations, then the rest. */
function showLive(d, i) {
	var b = d.buckets, t = b.max_ns[i];
	var live = keptLive(d, i).sort(function (x, y) {
		return y.b - x.b;
	});
	var sum = 0;
	live.forEach(function (a) {
		sum += a.b;
	});
	var rest = Math.max(0, b.max[i] - b.drawn[i]);
	var box = $('cg-live');
	box.textContent = '';
	var close = el('button', {type: 'button', text: 'close'});
	close.addEventListener('click', function () {
		box.textContent = '';
	});
	box.appendChild(el('h3', null, [fmtBytes(b.max[i]) + ' live on ' + d.name + ' at ' + fmtT(t) +
		' (the highest instant of its bucket) ', close]));
	var rows = live.slice();
	var cols = [
		{h: 'bytes', n: true, v: function (a) { return a.b; }, f: function (a) { return fmtBytes(a.b); }},
		{h: 'category', v: function (a) { return cats[a.c]; }, f: function (a) { return catCell(a.c); }},
		D.stacks ? {h: 'site', code: true, v: function (a) { return siteName(a.s); }} : null,
		{h: 'op', v: function (a) { return a.op || ''; }},
		{h: 'span', v: function (a) { return a.span_name || a.span || ''; }},
		{h: 'tensor_id', code: true, v: function (a) { return a.tensor; }},
		{h: 'allocated', n: true, v: function (a) { return a.t0; }, f: function (a) { return a.pre ? 'before the window' : fmtT(a.t0); }},
		{h: 'freed', n: true, v: function (a) { return a.t1; }, f: function (a) { return a.t1 == null ? 'never' : fmtT(a.t1); }}
	].filter(function (c) {
		return c;
	});
	box.appendChild(table(cols, rows, {limit: 15, restRow: function () {
		return el('tr', {cls: 'rest'}, [el('td', {cls: 'n', text: fmtBytes(rest)}),
			el('td', {colspan: String(cols.length - 1), text: plural(Math.max(0, b.count[i] - b.drawn_count[i]), 'other allocation') + ' (not kept one by one)'})]);
	}}));
	if (sum !== b.drawn[i])
		box.appendChild(note('The kept allocations live at this instant hold ' + fmtBytes(sum) + '; the trace says ' + fmtBytes(b.drawn[i]) + ' (allocations at the very same nanosecond).'));
	box.scrollIntoView({block: 'nearest'});
}

function renderLegend() {
	var lg = $('cg-legend');
	lg.textContent = '';
	if (mode === 'alloc')
		lg.appendChild(el('span', {text: 'the ' + plural(D.allocs.length, 'largest allocation') + ', one band each:'}));
	cats.forEach(function (c, i) {
		lg.appendChild(el('span', null, [swatch(P.category[i]), c]));
	});
	if (mode === 'alloc')
		lg.appendChild(el('span', null, [swatch(P.rest), 'all other allocations']));
	[1, 2, 3].forEach(function (k) {
		if (D.step_bands && D.step_bands.k.indexOf(k) >= 0)
			lg.appendChild(el('span', null, [swatch(bandFill(k)), STEP_NAMES[k] + ' step']));
	});
	if (D.updates && D.updates.marks.t0.length)
		lg.appendChild(el('span', null, [swatch(P.update, true), 'update starts (' + D.updates.from + ')']));
	lg.appendChild(el('span', null, [swatch(P.peak), 'peak']));
	baseLegend(lg);
	var hasCk = D.devices.some(function (d) {
		return d.checkpoints && d.checkpoints.t.length;
	});
	if (hasCk && showCkpt)
		lg.appendChild(el('span', null, [swatch(P.used, true), 'device used bytes (checkpoints)']));
	if (D.devices.some(function (d) { return d.n_ooms; }))
		lg.appendChild(el('span', {cls: 'warn'}, ['\u25BC out of memory']));
	$('cg-ckpt-toggle').hidden = !hasCk;
}

function renderTimeline() {
	full.t0 = D.grid.start_ns;
	full.t1 = gridEnd();
	view.t0 = full.t0;
	view.t1 = full.t1;
	prepareAllocs();
	makePanels();
	renderLegend();
	drawAll();
	$('cg-live').textContent = '';
	if (timelineWired)
		return;
	timelineWired = true;

	document.querySelectorAll('input[name=cg-mode]').forEach(function (r) {
		r.addEventListener('change', function () {
			mode = r.value;
			renderLegend();
			drawAll();
		});
	});
	$('cg-ckpt').addEventListener('change', function (ev) {
		showCkpt = ev.target.checked;
		renderLegend();
		drawAll();
	});
	$('cg-reset').addEventListener('click', function () {
		setView(full.t0, full.t1);
	});
	var pending = false;
	window.addEventListener('resize', function () {
		if (pending)
			return;
		pending = true;
		requestAnimationFrame(function () {
			pending = false;
			drawAll();
		});
	});
}
