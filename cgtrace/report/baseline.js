/*
 * cgprobe report against a baseline (cgtrace report --baseline BASE,
 * docs/report.md, "Against a baseline"): BASE's live bytes as a muted
 * line under each device's stack, aligned at both runs' starts or by
 * training update number, and the figures of both with the signed
 * difference. A job's lanes draw their baseline with the same line.
 */

var align = 'time'; /* or 'update': BASE's updates laid on the new run's */
var baseCache = {};

/* BASE's device of that name on a trace's page, or null. */
function baseDevice(name) {
	var b = D.baseline;
	if (!b)
		return null;
	for (var i = 0; i < b.devices.length; i++)
		if (b.devices[i].name === name)
			return b.devices[i];
	return null;
}

/* The updates both runs mark, as [BASE's start, the new run's start], both rising. */
function updatePairs() {
	var a = D.updates && D.updates.marks, b = D.baseline && D.baseline.updates.marks, at = {}, pairs = [];
	if (!a || !b)
		return pairs;
	a.update.forEach(function (u, i) {
		at[u] = a.t0[i];
	});
	b.update.forEach(function (u, i) {
		var last = pairs[pairs.length - 1];
		if (at[u] !== undefined && (!last || (b.t0[i] > last[0] && at[u] > last[1])))
			pairs.push([b.t0[i], at[u]]);
	});
	return pairs;
}
function canAlignUpdates() {
	return updatePairs().length > 0;
}

/*
 * A time of BASE on the new run's axis: as it is (both from their
 * session's start), or by update: within the same update number at the
 * same fraction of it, before the first and after the last shifted as
 * they are.
 */
function baseTime(t, pairs) {
	if (!pairs || !pairs.length)
		return t;
	var lo = 0, hi = pairs.length - 1;
	if (t < pairs[0][0])
		return t + pairs[0][1] - pairs[0][0];
	while (lo < hi) {
		var mid = (lo + hi + 1) >> 1;
		if (pairs[mid][0] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	var p = pairs[lo], q = pairs[lo + 1];
	if (!q)
		return t + p[1] - p[0];
	return p[1] + (t - p[0]) * (q[1] - p[1]) / (q[0] - p[0]);
}

/* A device's baseline series on the new run's axis, in the alignment chosen: {t, v, from, to}. */
function baseSeries(bd) {
	var key = align + ':' + bd.name;
	if (baseCache[key])
		return baseCache[key];
	var pairs = align === 'update' ? updatePairs() : null, g = D.baseline.grid;
	var s = {
		t: bd.t.map(function (t) {
			return baseTime(t, pairs);
		}),
		v: bd.v,
		from: baseTime(g.start_ns, pairs),
		to: baseTime(Math.max(g.end_ns, g.start_ns + 1), pairs)
	};
	baseCache[key] = s;
	return s;
}

/* Where BASE ends on the new run's axis, so the timeline spans both; 0 without one. */
function baseEnd() {
	if (!D || !D.baseline)
		return 0;
	var g = D.baseline.grid;
	return baseTime(Math.max(g.end_ns, g.start_ns + 1), align === 'update' ? updatePairs() : null);
}

/*
 * A baseline's columns over [t0, t1) (seriesColumns), null where BASE
 * did not run (before from, after to): its line stops where it ended
 * rather than running on at 0.
 */
function baseRange(t, v, shift, w, t0, t1, from, to) {
	var cols = seriesColumns(t, v, shift, w, t0, t1, from, to), span = t1 - t0;
	for (var x = 0; x < cols.length; x++)
		if (t0 + (x + 1) * span / w <= from || t0 + x * span / w > to)
			cols[x] = null;
	return cols;
}

/* The baseline's columns of a panel: its highest bytes in each pixel column of the view. */
function baseColumns(p) {
	var bd = baseDevice(p.d.name);
	if (!bd)
		return null;
	var s = baseSeries(bd);
	return baseRange(s.t, s.v, 0, p.w, view.t0, view.t1, s.from, s.to);
}

/* Columns as a muted area from the bottom (under the stack), from x0, scaled by Y. */
function fillBase(ctx, cols, x0, Y, bottom) {
	ctx.save();
	ctx.globalAlpha = 0.18;
	ctx.fillStyle = P.baseline;
	ctx.beginPath();
	ctx.moveTo(x0, bottom);
	for (var x = 0; x < cols.length; x++) {
		ctx.lineTo(x0 + x, Y(cols[x] || 0));
		ctx.lineTo(x0 + x + 1, Y(cols[x] || 0));
	}
	ctx.lineTo(x0 + cols.length, bottom);
	ctx.closePath();
	ctx.fill();
	ctx.restore();
}

/*
 * Columns as the baseline's line, over what is drawn so that it shows
 * where the new run is higher too: a white halo under a muted line, none
 * where a column is null. Returns the highest value drawn.
 */
function strokeBase(ctx, cols, x0, Y) {
	var top = 0;
	[['rgba(255,255,255,0.85)', 3.5], [P.baseline, 1.5]].forEach(function (pen) {
		ctx.strokeStyle = pen[0];
		ctx.lineWidth = pen[1];
		ctx.beginPath();
		for (var x = 0; x < cols.length; x++) {
			if (cols[x] == null)
				continue;
			var y = Y(cols[x]);
			if (x && cols[x - 1] != null)
				ctx.lineTo(x0 + x, y);
			else
				ctx.moveTo(x0 + x, y);
			ctx.lineTo(x0 + x + 1, y);
			top = Math.max(top, cols[x]);
		}
		ctx.stroke();
	});
	return top;
}

/* "+1.0 MiB (+25.0%)", "-300 B (-30.0%)", "no change"; fmt formats the magnitude. */
function fmtDelta(pair, fmt) {
	var d = pair.delta;
	if (!d)
		return 'no change';
	var s = (d > 0 ? '+' : '-') + fmt(Math.abs(d));
	if (pair.pct != null)
		s += ' (' + (d > 0 ? '+' : '-') + Math.abs(pair.pct).toFixed(1) + '%)';
	return s;
}

/* A card's line: BASE's figure and the difference, red when it grew. */
function diffLine(pair, fmt) {
	if (!pair)
		return null;
	var text = pair.base == null ? 'not in the baseline' : 'baseline ' + fmt(pair.base) + ', ' + fmtDelta(pair, fmt);
	return el('div', {cls: 's delta' + (pair.delta > 0 ? ' up' : pair.delta < 0 ? ' down' : ''),
		'data-delta': String(pair.delta), 'data-base': pair.base == null ? null : String(pair.base), text: text});
}

/* The difference of a device's peak. */
function peakDiff(name) {
	if (!D.diff)
		return null;
	for (var i = 0; i < D.diff.devices.length; i++)
		if (D.diff.devices[i].name === name)
			return D.diff.devices[i].peak;
	return null;
}

/* Cards of the devices only BASE has: their peak there, none here. */
function baseOnlyCards(box) {
	if (!D.diff)
		return;
	D.diff.devices.forEach(function (x) {
		if (x.peak.new == null)
			box.appendChild(card('peak on ' + x.name, 'none', ['no memory on ' + x.name + ' in this run', diffLine(x.peak, fmtBytes)]));
	});
}

/* The legend's entry and, when both runs have updates, the choice of alignment. */
function baseLegend(lg) {
	if (!D.baseline)
		return;
	lg.appendChild(el('span', null, [swatch(P.baseline, true), 'baseline: ' + D.baseline.trace]));
	if (!canAlignUpdates())
		return;
	var seg = el('span', {cls: 'seg', role: 'group', 'aria-label': 'align the baseline'}, ['aligned ']);
	[['time', 'from the start'], ['update', 'by update number']].forEach(function (o) {
		var r = el('input', {type: 'radio', name: 'cg-align', value: o[0]});
		r.checked = align === o[0];
		r.addEventListener('change', function () {
			setAlign(o[0]);
		});
		seg.appendChild(el('label', null, [r, ' ' + o[1]]));
	});
	lg.appendChild(seg);
}

/* Lays BASE on the new run's axis anew: the whole of both shown. */
function setAlign(how) {
	align = how === 'update' && canAlignUpdates() ? 'update' : 'time';
	full.t1 = gridEnd();
	renderLegend();
	setView(full.t0, full.t1);
}

/* A new page's data: nothing of the last one's baseline kept (a job opens one process after another). */
function resetBaseline() {
	baseCache = {};
	align = 'time';
}
