/*
 * cgprobe report: training updates (docs/report.md): the table per device,
 * each device's trend in cgtrace steps's words, and the updates' starts on
 * the timeline, all from the data block's "updates" (the view's steps).
 */

var FLAG_WARMUP = 1, FLAG_OPEN = 2;

/* The data's rows as objects: i, the row's index in the columns. */
function updateRows(U) {
	return U.rows.update.map(function (u, i) {
		return {i: i, u: u, start: U.rows.start[i], end: U.rows.end[i], flags: U.rows.flags[i]};
	});
}

/* What a shown row is besides its numbers: warm-up, open, the device's highest. */
function updateNotes(r, top) {
	var n = [];
	if (r.flags & FLAG_WARMUP)
		n.push('warm-up');
	if (r.flags & FLAG_OPEN)
		n.push('open');
	if (r.i === top)
		n.push('highest peak');
	return n.join(', ');
}

/* The table of one device, as cgtrace steps prints it: the categories its rows hold, no others. */
function updateTable(U, dev, rows) {
	var top = -1;
	dev.peak.forEach(function (b, i) {
		if (top < 0 || b > dev.peak[top])
			top = i;
	});
	var cols = [
		{h: 'update', n: true, v: function (r) { return r.u; }, f: function (r) { return String(r.u); }},
		{h: 'start', n: true, v: function (r) { return r.start; }, f: function (r) { return fmtT(r.start); }},
		{h: 'length', n: true, v: function (r) { return r.end - r.start; }, f: function (r) { return fmtNs(r.end - r.start); }},
		{h: 'peak', n: true, v: function (r) { return dev.peak[r.i]; }, f: function (r) {
			return el('span', {cls: 'upeak', 'data-bytes': String(dev.peak[r.i]), title: fmtCount(dev.peak[r.i]) + ' bytes',
				text: fmtBytes(dev.peak[r.i])});
		}},
		{h: 'peak at', n: true, title: 'sort by when the peak came, from the update\'s start',
			v: function (r) { return dev.peak_ns[r.i] - r.start; }, f: function (r) { return '+' + fmtNs(dev.peak_ns[r.i] - r.start); }},
		{h: 'at start', n: true, v: function (r) { return dev.start[r.i]; }, f: function (r) { return fmtBytes(dev.start[r.i]); }},
		{h: 'at end', n: true, v: function (r) { return dev.end[r.i]; }, f: function (r) { return fmtBytes(dev.end[r.i]); }},
		{h: 'allocations', n: true, v: function (r) { return dev.allocs[r.i]; }, f: function (r) { return fmtCount(dev.allocs[r.i]); }}
	];
	dev.cat.forEach(function (col, c) {
		if (col.some(function (b) { return b > 0; }))
			cols.push({h: cats[c], n: true, title: 'sort by ' + cats[c] + ' bytes at the peak',
				v: function (r) { return col[r.i]; }, f: function (r) { return fmtBytes(col[r.i]); }});
	});
	cols.push({h: 'notes', v: function (r) { return updateNotes(r, top); }});
	var t = table(cols, rows, {sort: 0, asc: true, limit: 20});
	t.setAttribute('data-device', dev.name);
	t.setAttribute('data-rows', String(rows.length));
	return t;
}

function renderUpdates() {
	var U = D.updates;
	if (!U || !U.total) {
		section('cg-updates', 'Training updates', [note('No training updates: ' + (U ? U.from_text : 'none') + ' (docs/steps.md).')]);
		return;
	}
	var rows = updateRows(U);
	var head = plural(U.total, 'update') + ', ' + U.from_text + '. Per device: the highest live bytes in each update and when, ' +
		'the live bytes at its start and end, the allocations made, the bytes by category at its peak' +
		(U.warmup ? '; the first ' + (U.warmup === 1 ? 'update is' : fmtCount(U.warmup) + ' updates are') +
			' warm-up, left out of the trend.' : '.');
	var kids = [note(head)];
	if (U.shown < U.total)
		kids.push(note(fmtCount(U.shown) + ' of ' + fmtCount(U.total) + ' updates shown (more than ' + fmtCount(U.limit) +
			'): the first and the last, on each device the updates with the highest peak, and an even sample of the rest.'));
	U.devices.forEach(function (dev) {
		kids.push(el('h3', {text: dev.name}), updateTable(U, dev, rows), note(dev.trend.text));
	});
	section('cg-updates', 'Training updates', kids);
}

/* The update at time t from the marks (only when they hold every update), or null. */
function updateAt(t) {
	var U = D.updates, m = U && U.marks;
	if (!m || !m.every)
		return null;
	var lo = 0, hi = m.t0.length - 1, at = -1;
	while (lo <= hi) {
		var mid = (lo + hi) >> 1;
		if (m.t0[mid] <= t) {
			at = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return at >= 0 && t < m.t1[at] ? {u: m.update[at], t0: m.t0[at], t1: m.t1[at]} : null;
}

/* The smallest of 1, 2, 5, 10, 20, ... at or above x. */
function niceAtLeast(x) {
	var s = 1;
	while (s < x)
		s = String(s)[0] === '2' ? s / 2 * 5 : s * 2;
	return s;
}

/*
 * The updates' starts on a panel, over its stack: a thin line each when
 * they are at least 4 px apart on average, else only at the labelled ones;
 * a label on the first update of every `stride` (1, 2, 5, 10, ...: the
 * smallest whose labels fit), where it does not overlap the one before.
 * The plot draws them by the same rule (plot-updates.c). What was drawn
 * stays on the panel for a test.
 */
function drawUpdateMarks(p, ctx) {
	var m = D.updates && D.updates.marks;
	p.updateLines = 0;
	p.updateLabels = 0;
	if (!m || !m.t0.length)
		return;
	var first = -1, last = -1;
	for (var i = 0; i < m.t0.length; i++)
		if (m.t0[i] >= view.t0 && m.t0[i] <= view.t1) {
			if (first < 0)
				first = i;
			last = i;
		}
	if (first < 0)
		return;
	ctx.save();
	ctx.font = '10px system-ui, sans-serif';
	var right = p.x0 + p.w, room = ctx.measureText(String(m.update[last])).width + 6;
	var dense = (last - first + 1) * 4 > p.w;
	var stride = niceAtLeast((m.update[last] - m.update[first] + 1) * room / p.w);
	var lastLabel = -Infinity, block = null;
	ctx.strokeStyle = P.update;
	ctx.fillStyle = P.update;
	ctx.lineWidth = 1;
	ctx.textAlign = 'left';
	ctx.textBaseline = 'top';
	for (i = first; i <= last; i++) {
		var x = Math.round(p.X(m.t0[i])) + 0.5, u = m.update[i], b = Math.floor(u / stride);
		var label = String(u), lw = ctx.measureText(label).width;
		var labelled = b !== block && x + 2 >= lastLabel + 6 && x + 2 + lw <= right;
		if (labelled)
			block = b;
		if (dense && !labelled)
			continue;
		ctx.globalAlpha = 0.6;
		ctx.beginPath();
		ctx.moveTo(x, p.y0);
		ctx.lineTo(x, p.y0 + p.ph);
		ctx.stroke();
		ctx.globalAlpha = 1;
		p.updateLines++;
		if (labelled) {
			ctx.fillText(label, x + 2, p.y0 + 2);
			lastLabel = x + 2 + lw;
			p.updateLabels++;
		}
	}
	ctx.restore();
}
