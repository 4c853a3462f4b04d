/* cgprobe report: the header, the summary cards and the tables below the timeline. */

/* ---- header and summary ---- */

function renderHeader() {
	var m = D.meta || {};
	var name = m.entrypoint || D.trace || 'trace';
	document.title = 'cgprobe: ' + name;
	$('cg-title').textContent = 'Memory of ' + name;
	var meta = $('cg-meta');
	meta.textContent = '';
	var parts = [D.trace ? 'trace ' + D.trace : null, m.run_id ? 'run ' + m.run_id : null, m.timestamp || null,
		m.phase ? 'phase ' + m.phase : null, m.device ? 'device ' + m.device : null,
		D.capture ? 'capture window ' + fmtNs(D.capture.begin_ns) + ' to ' + fmtNs(D.capture.end_ns) : null,
		plural(D.records.memory, 'memory record'),
		D.baseline ? 'compared with the baseline ' + D.baseline.trace : null];
	parts.forEach(function (p) {
		if (p)
			meta.appendChild(el('span', {text: p}));
	});
	var tags = m.tags ? Object.keys(m.tags) : [];
	if (tags.length) {
		var list = el('div');
		tags.forEach(function (k) {
			list.appendChild(el('div', {text: k + ' = ' + m.tags[k]}));
		});
		meta.appendChild(el('span', null, [el('details', null, [el('summary', {text: plural(tags.length, 'tag')}), list])]));
	}
	$('cg-footer').textContent = 'Written by ' + D.generator + ' from ' + (D.trace || 'a trace') + '. ' +
		'The timeline shows, per device and time bucket (' + fmtNs(D.grid.bucket_ns) + ' each, ' + fmtCount(D.grid.n) +
		' buckets), the instant its live bytes were highest, so its highest point is the peak.';
}

function card(k, v, s, props) {
	var c = el('div', {cls: 'card'});
	c.appendChild(el('div', {cls: 'k', text: k}));
	var ve = el('div', {cls: 'v', text: v});
	if (props)
		for (var p in props)
			ve.setAttribute(p, props[p]);
	c.appendChild(ve);
	(s || []).forEach(function (line) {
		if (line)
			c.appendChild(typeof line === 'object' ? line : el('div', {cls: 's', text: line}));
	});
	return c;
}

function renderSummary() {
	var box = $('cg-summary');
	box.textContent = '';
	var best = -1;
	D.devices.forEach(function (d, i) {
		if (best < 0 || d.peak > D.devices[best].peak)
			best = i;
	});
	D.devices.forEach(function (d, i) {
		var cap = d.capacity ? ' of ' + fmtBytes(d.capacity) + ' (' + pct(d.peak, d.capacity) + ')' : '';
		var c = card('peak on ' + d.name, fmtBytes(d.peak), [
			d.peak ? 'at ' + fmtT(d.peak_ns) + cap : 'no live memory',
			topCategories(d.peak_by_category),
			diffLine(peakDiff(d.name), fmtBytes)
		], {'data-bytes': String(d.peak), title: fmtCount(d.peak) + ' bytes', 'data-device': d.name});
		if (i === best)
			c.querySelector('.v').classList.add('peakv');
		box.appendChild(c);
	});
	var allocs = 0, frees = 0, total = 0, fin = 0, live = 0;
	D.devices.forEach(function (d) {
		allocs += d.alloc_count;
		frees += d.free_count;
		total += d.alloc_bytes;
		fin += d.final_bytes;
		live += Math.max(0, d.alloc_count - d.free_count);
	});
	var leakCount = D.leaks_total ? D.leaks_total.count : live;
	box.appendChild(card('never freed', fmtBytes(fin), [plural(leakCount, 'allocation') + ' live at the end',
		D.devices.length > 1 ? D.devices.map(function (d) { return d.name + ' ' + fmtBytes(d.final_bytes); }).join(', ') : null,
		D.diff && diffLine(D.diff.leaked, fmtBytes)], {'data-bytes': String(fin)}));
	box.appendChild(card('allocations', fmtCount(allocs), [fmtCount(frees) + ' frees', fmtBytes(total) + ' allocated in total',
		D.diff && diffLine(D.diff.allocs, fmtCount)]));
	box.appendChild(card('duration', fmtNs(D.grid.end_ns - D.grid.start_ns), ['from ' + fmtT(D.grid.start_ns),
		plural(D.spans_total, 'span') + ' with memory', D.diff && diffLine(D.diff.duration, fmtNs)]));
	baseOnlyCards(box);
}
function topCategories(byCat) {
	var tot = 0;
	byCat.forEach(function (b) {
		tot += b;
	});
	if (!tot)
		return null;
	return byCat.map(function (b, c) {
		return {b: b, c: c};
	}).filter(function (x) {
		return x.b > 0;
	}).sort(function (a, b) {
		return b.b - a.b;
	}).slice(0, 2).map(function (x) {
		return cats[x.c] + ' ' + pct(x.b, tot);
	}).join(', ');
}


/* ---- tables ---- */

function renderPeak() {
	var pk = D.peak;
	if (!pk || !pk.bytes) {
		section('cg-peak', 'At the peak', [note('No live memory: the trace recorded no allocation.')]);
		return;
	}
	var span = full.t1 - full.t0;
	var head = note(fmtBytes(pk.bytes) + ' live on ' + pk.device + ' at ' + fmtT(pk.ns) + ', in ' +
		plural(pk.count, 'allocation') + (pk.autograd_retained ? '; ' + fmtBytes(pk.autograd_retained) + ' retained for autograd' : '') + '.');
	var maxCat = Math.max.apply(null, pk.by_category);
	var catRows = pk.by_category.map(function (b, c) {
		return {c: c, b: b};
	});
	var catT = table([
		{h: 'category', v: function (r) { return cats[r.c]; }, f: function (r) { return catCell(r.c); }},
		{h: 'bytes', n: true, v: function (r) { return r.b; }, f: function (r) { return bytesBar(r.b, maxCat, P.category[r.c]); }},
		{h: 'share', n: true, v: function (r) { return r.b; }, f: function (r) { return pct(r.b, pk.bytes); }}
	], catRows, {sort: 1});
	var maxOp = pk.by_op.length ? pk.by_op[0].bytes : 0;
	var opT = table([
		{h: 'op', v: function (r) { return r.op == null ? '(none)' : r.op; }},
		{h: 'allocations', n: true, v: function (r) { return r.count; }, f: function (r) { return fmtCount(r.count); }},
		{h: 'bytes', n: true, v: function (r) { return r.bytes; }, f: function (r) { return bytesBar(r.bytes, maxOp, '#7f8c9a'); }}
	], pk.by_op, {sort: 2, limit: 10, restRow: pk.by_op_rest && pk.by_op_rest.count ? function () {
		return el('tr', {cls: 'rest'}, [el('td', {text: fmtCount(pk.by_op_rest.count) + ' more ops'}), el('td', {cls: 'n', text: ''}),
			el('td', {cls: 'n', text: fmtBytes(pk.by_op_rest.bytes)})]);
	} : null});
	var cols = [
		{h: 'bytes', n: true, v: function (a) { return a.b; }, f: function (a) { return fmtBytes(a.b); }},
		{h: 'device', v: function (a) { return a.device; }},
		{h: 'category', v: function (a) { return cats[a.c]; }, f: function (a) { return catCell(a.c); }},
		{h: 'op', v: function (a) { return a.op || ''; }},
		{h: 'span', v: function (a) { return a.span_name || a.span; }},
		{h: 'tensor_id', code: true, v: function (a) { return a.tensor; }},
		{h: 'dtype, shape', v: function (a) { return (a.dtype || '') + (a.shape && a.shape.length ? ' [' + a.shape.join(', ') + ']' : ''); }}
	];
	if (D.stacks)
		cols.push({h: 'site', code: true, v: function (a) { return siteName(a.s); }});
	var bd = table(cols, pk.breakdown, {sort: 0, limit: 15, restRow: pk.rest && pk.rest.count ? function () {
		return el('tr', {cls: 'rest'}, [el('td', {cls: 'n', text: fmtBytes(pk.rest.bytes)}),
			el('td', {colspan: String(cols.length - 1), text: fmtCount(pk.rest.count) + ' smaller allocations'})]);
	} : null});
	section('cg-peak', 'At the peak', [head,
		el('div', {cls: 'tables'}, [el('div', null, [el('h3', {text: 'By category'}), catT]),
			el('div', null, [el('h3', {text: 'By op'}), opT])]),
		el('h3', {text: 'Largest allocations live at the peak'}), bd]);
}

function frames(r) {
	if (!r.frames || !r.frames.length)
		return r.site;
	var ol = el('ol');
	r.frames.forEach(function (f) {
		ol.appendChild(el('li', {text: f}));
	});
	return el('details', null, [el('summary', {text: r.site, title: r.site}), ol]);
}

function renderSites() {
	if (!D.stacks) {
		section('cg-sites', 'Allocation sites', [note('This trace has no call stacks, so no sites (docs/stacks.md).')]);
		$('cg-leaks').textContent = '';
		return;
	}
	var cols = [
		{h: 'site', code: true, v: function (r) { return r.site; }, f: frames},
		{h: 'device', v: function (r) { return r.device; }},
		{h: 'at the peak', n: true, v: function (r) { return r.peak; }, f: function (r) { return fmtBytes(r.peak); }},
		{h: 'allocated', n: true, v: function (r) { return r.total; }, f: function (r) { return fmtBytes(r.total); }},
		{h: 'allocations', n: true, v: function (r) { return r.count; }, f: function (r) { return fmtCount(r.count); }},
		{h: 'never freed', n: true, v: function (r) { return r.leaked; }, f: function (r) { return fmtBytes(r.leaked); }},
		{h: 'temporaries', n: true, v: function (r) { return r.temporary; }, f: function (r) { return fmtCount(r.temporary); }}
	];
	section('cg-sites', 'Top allocation sites', [
		note('By bytes live at their device\'s peak; ' + fmtCount(D.top_sites.length) + ' sites shown' +
			(D.top_sites_rows > D.top_sites.length ? ' of ' + fmtCount(D.top_sites_rows) : '') + '. Click a site for its stack.'),
		D.top_sites.length ? table(cols, D.top_sites, {sort: 2, limit: 15}) : null]);
	var lt = D.leaks_total || {count: 0, bytes: 0};
	section('cg-leaks', 'Never freed', [
		note(lt.count ? 'Live at the end of the trace: ' + plural(lt.count, 'allocation') + ', ' + fmtBytes(lt.bytes) +
			(D.leaks_rows > D.leaks.length ? ' (the ' + D.leaks.length + ' largest of ' + fmtCount(D.leaks_rows) + ' sites shown)' : '') + '.'
			: 'Every allocation was freed.'),
		D.leaks.length ? table([cols[0], cols[1],
			{h: 'never freed', n: true, v: function (r) { return r.leaked; }, f: function (r) { return fmtBytes(r.leaked); }},
			{h: 'allocations', n: true, v: function (r) { return r.leaked_count; }, f: function (r) { return fmtCount(r.leaked_count); }}],
			D.leaks, {sort: 2, limit: 15}) : null]);
}

function renderSpans() {
	var span = full.t1 - full.t0;
	var stepT = table([
		{h: 'step', v: function (r) { return r.step; }},
		{h: 'spans', n: true, v: function (r) { return r.spans; }, f: function (r) { return fmtCount(r.spans); }},
		{h: 'allocations', n: true, v: function (r) { return r.alloc_count; }, f: function (r) { return fmtCount(r.alloc_count); }},
		{h: 'allocated', n: true, v: function (r) { return r.alloc_bytes; }, f: function (r) { return fmtBytes(r.alloc_bytes); }},
		{h: 'frees', n: true, v: function (r) { return r.free_count; }, f: function (r) { return fmtCount(r.free_count); }},
		{h: 'freed', n: true, v: function (r) { return r.free_bytes; }, f: function (r) { return fmtBytes(r.free_bytes); }}
	], D.steps, {});
	var spanT = table([
		{h: 'span', v: function (r) { return r.name; }},
		{h: 'id', v: function (r) { return r.id; }},
		{h: 'step', v: function (r) { return r.step; }},
		{h: 'start', n: true, v: function (r) { return r.start; }, f: function (r) { return r.start == null ? '' : fmtT(r.start); }},
		{h: 'duration', n: true, v: function (r) { return r.dur; }, f: function (r) { return r.dur == null ? '' : fmtNs(r.dur); }},
		{h: 'allocations', n: true, v: function (r) { return r.alloc_count; }, f: function (r) { return fmtCount(r.alloc_count); }},
		{h: 'allocated', n: true, v: function (r) { return r.alloc_bytes; }, f: function (r) { return fmtBytes(r.alloc_bytes); }},
		{h: 'frees', n: true, v: function (r) { return r.free_count; }, f: function (r) { return fmtCount(r.free_count); }},
		{h: 'freed', n: true, v: function (r) { return r.free_bytes; }, f: function (r) { return fmtBytes(r.free_bytes); }}
	], D.spans, {sort: 6, limit: 15});
	var kids = [
		el('h3', {text: 'By step kind'}), D.steps.length ? stepT : note('No memory records inside spans.'),
		el('h3', {text: 'Spans that allocated the most'}),
		note(fmtCount(D.spans.length) + ' of ' + fmtCount(D.spans_total) + ' spans with memory records, by bytes allocated in them.'),
		D.spans.length ? spanT : null
	];
	if (D.step_spans && D.step_spans.length) {
		var cols = [
			{h: 'span', v: function (r) { return r.name; }},
			{h: 'step', v: function (r) { return r.step; }},
			{h: 'start', n: true, v: function (r) { return r.start; }, f: function (r) { return fmtT(r.start); }},
			{h: 'duration', n: true, v: function (r) { return r.dur; }, f: function (r) { return fmtNs(r.dur); }}
		];
		D.devices.forEach(function (d, di) {
			cols.push({h: 'highest on ' + d.name, n: true, v: function (r) { return r.max[di]; }, f: function (r) { return fmtBytes(r.max[di]); }});
		});
		kids.push(el('h3', {text: 'Step spans'}),
			note('Each forward, backward and optimizer span with the highest live bytes of the time buckets it covers' +
				(D.step_spans_total > D.step_spans.length ? ' (the ' + fmtCount(D.step_spans.length) + ' highest of ' + fmtCount(D.step_spans_total) + ')' : '') + '.'),
			table(cols, D.step_spans, {sort: 2, asc: true, limit: 15}));
	}
	section('cg-spans', 'Memory by span and step', kids);
}

function renderDevices() {
	var kids = [];
	var span = full.t1 - full.t0;
	var any = false;
	D.devices.forEach(function (d) {
		var ck = d.checkpoints;
		if (!ck || !ck.t.length)
			return;
		any = true;
		var rows = ck.t.map(function (t, j) {
			return {t: t, used: ck.used[j], free: ck.free[j], reserved: ck.reserved[j]};
		});
		var maxUsed = 0, minFree = Infinity;
		rows.forEach(function (r) {
			maxUsed = Math.max(maxUsed, r.used);
			minFree = Math.min(minFree, r.free);
		});
		kids.push(el('h3', {text: d.name}), note(fmtCount(rows.length) + ' checkpoints (the highest of each time bucket): at most ' +
			fmtBytes(maxUsed) + ' used, at least ' + fmtBytes(minFree) + ' free' + (d.capacity ? ', capacity ' + fmtBytes(d.capacity) : '') + '.'),
		table([
			{h: 'time', n: true, v: function (r) { return r.t; }, f: function (r) { return fmtT(r.t); }},
			{h: 'used', n: true, v: function (r) { return r.used; }, f: function (r) { return fmtBytes(r.used); }},
			{h: 'free', n: true, v: function (r) { return r.free; }, f: function (r) { return fmtBytes(r.free); }},
			{h: 'reserved', n: true, v: function (r) { return r.reserved; }, f: function (r) { return r.reserved == null ? '-' : fmtBytes(r.reserved); }}
		], rows, {sort: 0, asc: true, limit: 10}));
	});
	var ooms = [];
	D.devices.forEach(function (d) {
		(d.ooms || []).forEach(function (o) {
			ooms.push({device: d.name, t: o.t, request: o.request, used: o.used, free: o.free});
		});
	});
	var nOoms = 0;
	D.devices.forEach(function (d) {
		nOoms += d.n_ooms || 0;
	});
	if (nOoms) {
		any = true;
		kids.push(el('h3', {cls: 'warn', text: 'Out-of-memory failures'}),
			note(plural(nOoms, 'allocation') + ' failed for lack of device memory' + (ooms.length < nOoms ? ' (' + fmtCount(ooms.length) + ' listed)' : '') + '.'),
			table([
				{h: 'time', n: true, v: function (r) { return r.t; }, f: function (r) { return fmtT(r.t); }},
				{h: 'device', v: function (r) { return r.device; }},
				{h: 'requested', n: true, v: function (r) { return r.request; }, f: function (r) { return fmtBytes(r.request); }},
				{h: 'used', n: true, v: function (r) { return r.used; }, f: function (r) { return fmtBytes(r.used); }},
				{h: 'free', n: true, v: function (r) { return r.free; }, f: function (r) { return fmtBytes(r.free); }}
			], ooms, {sort: 0, asc: true, limit: 10}));
	}
	if (!any)
		kids.push(note('No device checkpoints in this trace.'));
	section('cg-devices', 'Device checkpoints and out-of-memory failures', kids);
}
