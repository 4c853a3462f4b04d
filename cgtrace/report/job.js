/*
 * cgprobe report of a job (docs/report.md, "A job"): a lane per process
 * and per physical GPU on the job's time axis, and the table of
 * processes. A click on a process opens its own page, which the trace's
 * page code draws from its block (cg-p-I), parsed only then; the URL's
 * #process=I names that page, so back and forward move between them.
 */

var J = null; /* the job's data block */
var BJ = null; /* the baseline job's block (cg-base), with --baseline */
var jobLanes = []; /* what each lane drew, for a resize and a test */
var JM = {l: 64, r: 12, row: 18, gpu: 48, axis: 22};

/* A device's fill on the lanes: the palette's, the host's in the colour of "other". */
function deviceFill(name) {
	return name === 'cpu' ? P.category[4] : P.category[0];
}

/* A process's lane block (p of block id), parsed once. */
function laneBlock(p, id) {
	if (p.lane === undefined) {
		var e = $(id);
		p.lane = e ? JSON.parse(e.textContent) : null;
	}
	return p.lane;
}
function laneOf(i) {
	return laneBlock(J.processes[i], 'cg-lane-' + i);
}

/* The lanes' time axis: the job's, or the baseline's where that is longer (both from their first start). */
function jobSpan() {
	return Math.max(1, J.job.span_ns, BJ ? BJ.job.span_ns : 0);
}

function jobX(t, w) {
	return JM.l + t * w / jobSpan();
}

/* A baseline process's lane block. */
function baseLaneOf(m) {
	return laneBlock(BJ.processes[m], 'cg-base-lane-' + m);
}

/* The device of a lane's block by name, or null. */
function laneDevice(L, name) {
	return (L ? L.devices : []).filter(function (d) {
		return d.name === name;
	})[0] || null;
}

/* A row's scale: bytes to y, top the highest of the run and its baseline. */
function rowY(y0, h, top) {
	return function (v) {
		return y0 + h - v * h / Math.max(1, top);
	};
}

/*
 * Columns of a series filled from the row's bottom, scaled to top, as one
 * outline (one fill a row, not one a column: hundreds of lanes draw at
 * once); anything live is at least a pixel high. Returns the highest drawn.
 */
function fillColumns(ctx, cols, y0, h, top, color) {
	var drawn = 0, base = y0 + h;
	ctx.fillStyle = color;
	ctx.beginPath();
	ctx.moveTo(JM.l, base);
	for (var x = 0; x < cols.length; x++) {
		var y = cols[x] > 0 ? base - Math.max(1, cols[x] * h / Math.max(1, top)) : base;
		ctx.lineTo(JM.l + x, y);
		ctx.lineTo(JM.l + x + 1, y);
		drawn = Math.max(drawn, cols[x]);
	}
	ctx.lineTo(JM.l + cols.length, base);
	ctx.closePath();
	ctx.fill();
	return drawn;
}

function laneCanvas(lane, h) {
	var c = lane.canvas, cssW = Math.max(300, c.parentNode.clientWidth), dpr = window.devicePixelRatio || 1;
	c.width = Math.round(cssW * dpr);
	c.height = Math.round(h * dpr);
	c.style.height = h + 'px';
	var ctx = c.getContext('2d');
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.clearRect(0, 0, cssW, h);
	ctx.font = '11px system-ui, sans-serif';
	lane.w = cssW - JM.l - JM.r;
	return ctx;
}

/* A process's lane: a row per device, each scaled to its own peak, over the process's life. */
function drawProcessLane(lane) {
	var p = J.processes[lane.i], L = laneOf(lane.i), devs = L ? L.devices : [];
	var ctx = laneCanvas(lane, Math.max(1, devs.length) * JM.row + 2), w = lane.w;
	var x0 = jobX(p.start_ns, w), x1 = jobX(p.end_ns, w);
	ctx.fillStyle = '#f1f3f4';
	ctx.fillRect(x0, 0, Math.max(1, x1 - x0), devs.length * JM.row);
	lane.cols = [];
	lane.drawnMax = 0;
	/* Its match in the baseline, on the baseline job's axis, in each device's row. */
	var bp = BJ && p.baseline != null ? BJ.processes[p.baseline] : null, BL = bp ? baseLaneOf(p.baseline) : null;
	lane.baseDrawnMax = bp ? 0 : null;
	devs.forEach(function (d, k) {
		var y0 = k * JM.row + 1, h = JM.row - 3, bd = laneDevice(BL, d.name), top = Math.max(d.peak, bd ? bd.peak : 0);
		var cols = seriesColumns(d.t, d.v, p.start_ns, w, 0, jobSpan(), p.start_ns, p.end_ns);
		var drawn = fillColumns(ctx, cols, y0, h, top, deviceFill(d.name));
		lane.cols.push(cols);
		lane.drawnMax = Math.max(lane.drawnMax, drawn);
		if (bd)
			lane.baseDrawnMax = Math.max(lane.baseDrawnMax, strokeBase(ctx,
				baseRange(bd.t, bd.v, bp.start_ns, w, 0, jobSpan(), bp.start_ns, bp.end_ns), JM.l, rowY(y0, h, top)));
		ctx.fillStyle = '#5f6368';
		ctx.textAlign = 'right';
		ctx.textBaseline = 'middle';
		ctx.fillText(d.name, JM.l - 6, y0 + h / 2);
	});
	if (!devs.length) {
		ctx.fillStyle = '#5f6368';
		ctx.textBaseline = 'middle';
		ctx.fillText('no page: its trace could not be read', JM.l + 4, JM.row / 2);
	}
}

/* A GPU's lane: every process's bytes on it summed, its peak marked. */
function drawGpuLane(lane) {
	var g = J.gpus[lane.g], ctx = laneCanvas(lane, JM.gpu), w = lane.w, h = JM.gpu - 14, y0 = 10;
	var cols = seriesColumns(g.t, g.v, 0, w, 0, jobSpan(), 0, J.job.span_ns);
	var bg = BJ && g.baseline != null ? BJ.gpus[g.baseline] : null, top = Math.max(g.peak, bg ? bg.peak : 0);
	lane.cols = [cols];
	lane.drawnMax = fillColumns(ctx, cols, y0, h, top, P.category[0]);
	lane.baseDrawnMax = bg ? strokeBase(ctx, baseRange(bg.t, bg.v, 0, w, 0, jobSpan(), 0, BJ.job.span_ns),
		JM.l, rowY(y0, h, top)) : null;
	ctx.fillStyle = '#5f6368';
	ctx.textAlign = 'right';
	ctx.textBaseline = 'middle';
	ctx.fillText(g.device, JM.l - 6, y0 + h / 2);
	lane.peakMarked = null;
	if (!g.peak)
		return;
	var px = Math.min(JM.l + w - 1, Math.round(jobX(g.peak_ns, w))) + 0.5, py = rowY(y0, h, top)(g.peak);
	ctx.fillStyle = P.peak;
	ctx.beginPath();
	ctx.arc(px, py, 3.5, 0, 2 * Math.PI);
	ctx.fill();
	var label = 'peak ' + fmtBytes(g.peak) + ' at ' + fmtNs(g.peak_ns);
	ctx.font = '600 11px system-ui, sans-serif';
	var tw = ctx.measureText(label).width, right = px + 6 + tw < JM.l + w;
	ctx.textAlign = right ? 'left' : 'right';
	ctx.textBaseline = 'top';
	ctx.fillText(label, right ? px + 6 : px - 6, py - 8);
	lane.peakMarked = {bytes: g.peak, t: g.peak_ns};
}

/* The job's time axis: milliseconds or seconds from the job's first start. */
function drawJobAxis(lane) {
	var ctx = laneCanvas(lane, JM.axis), w = lane.w, span = jobSpan();
	var step = niceStep(span, Math.max(2, Math.floor(w / 110)));
	ctx.strokeStyle = '#9aa0a6';
	ctx.fillStyle = '#5f6368';
	ctx.textBaseline = 'top';
	ctx.textAlign = 'center';
	ctx.beginPath();
	ctx.moveTo(JM.l, 0.5);
	ctx.lineTo(JM.l + w, 0.5);
	ctx.stroke();
	for (var t = 0; t <= span + 1e-6; t += step) {
		var x = Math.round(jobX(t, w)) + 0.5;
		ctx.beginPath();
		ctx.moveTo(x, 0);
		ctx.lineTo(x, 4);
		ctx.stroke();
		ctx.fillText(fmtNs(Math.round(t)), Math.min(x, JM.l + w - 20), 6);
	}
}

function drawJobLanes() {
	jobLanes.forEach(function (lane) {
		if (lane.kind === 'process')
			drawProcessLane(lane);
		else if (lane.kind === 'gpu')
			drawGpuLane(lane);
		else
			drawJobAxis(lane);
	});
}

/* The tooltip over a lane: who, when, the bytes under the pointer. */
function laneHover(lane, ev) {
	var tip = $('cg-jobtip'), r = lane.canvas.getBoundingClientRect(), x = Math.floor(ev.clientX - r.left - JM.l);
	if (x < 0 || x >= lane.w || !lane.cols) {
		tip.hidden = true;
		return;
	}
	var t = x * jobSpan() / lane.w;
	tip.textContent = '';
	if (lane.kind === 'gpu') {
		var g = J.gpus[lane.g];
		tip.appendChild(el('div', {cls: 't', text: g.label + ' at ' + fmtNs(Math.round(t))}));
		tip.appendChild(el('div', {text: fmtBytes(lane.cols[0][x]) + ', every process on it (the highest here)'}));
	} else {
		var p = J.processes[lane.i], L = laneOf(lane.i);
		tip.appendChild(el('div', {cls: 't', text: p.label}));
		tip.appendChild(el('div', {text: 'at ' + fmtNs(Math.round(t)) + ' of the job, ' + fmtNs(Math.max(0, Math.round(t - p.start_ns))) + ' of its own'}));
		(L ? L.devices : []).forEach(function (d, k) {
			tip.appendChild(el('div', null, [swatch(deviceFill(d.name)), d.name + ' ' + fmtBytes(lane.cols[k][x]) + ' (peak ' + fmtBytes(d.peak) + ')']));
		});
		tip.appendChild(el('div', {text: 'click for its own page'}));
	}
	tip.hidden = false;
	tip.style.left = Math.max(4, Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4)) + 'px';
	tip.style.top = Math.max(4, Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 4)) + 'px';
}

function makeLane(box, kind, title, extra) {
	var canvas = el('canvas', {role: 'img', 'aria-label': title});
	var lane = {kind: kind, canvas: canvas};
	for (var k in extra)
		lane[k] = extra[k];
	var kids = title ? [el('div', {cls: 'ltitle', text: title}), canvas] : [canvas];
	lane.el = el('div', {cls: 'lane ' + kind}, kids);
	box.appendChild(lane.el);
	jobLanes.push(lane);
	if (kind !== 'axis') {
		canvas.addEventListener('mousemove', function (ev) {
			laneHover(lane, ev);
		});
		canvas.addEventListener('mouseleave', function () {
			$('cg-jobtip').hidden = true;
		});
	}
	return lane;
}

/* The peaks of a process's devices, for its lane's title: "cpu 7.0 KiB, cuda:0 1000 B". */
function peaksText(p) {
	return (p.devices || []).map(function (d) {
		return d.device + ' ' + fmtBytes(d.peak);
	}).join(', ');
}

/* A figure against the baseline's: "; baseline 3.0 MiB, +2.0 MiB (+66.7%)". */
function baseText(now, base) {
	var d = now - base;
	return '; baseline ' + fmtBytes(base) + ', ' + fmtDelta({delta: d, pct: base ? 100 * d / base : null}, fmtBytes);
}

/* What a GPU's lane title says of its match in the baseline. */
function baseGpuText(g) {
	if (!BJ)
		return '';
	var b = g.baseline != null ? BJ.gpus[g.baseline] : null;
	if (!b)
		return '; not in the baseline';
	/* Another machine's GPU, matched in order: named. */
	return baseText(g.peak, b.peak) + (b.key === g.key ? '' : ' (' + b.label + ')');
}

/* What a process's lane title says of its match: each device's peak against its own. */
function baseProcessText(p) {
	if (!BJ)
		return '';
	var b = p.baseline != null ? BJ.processes[p.baseline] : null;
	if (!b)
		return '; no match in the baseline';
	return (p.devices || []).map(function (d) {
		var o = (b.devices || []).filter(function (x) {
			return x.device === d.device;
		})[0];
		return o ? '; ' + d.device + baseText(d.peak, o.peak).slice(1) : '';
	}).join('');
}

/* "1 process", "3 processes". */
function processes(n) {
	return fmtCount(n) + ' process' + (n === 1 ? '' : 'es');
}

function whoOf(i) {
	var p = J.processes[i];
	return p.who || p.trace;
}

function renderJobLanes(box) {
	box.appendChild(el('h2', {text: 'Processes and GPUs over the job\'s time'}));
	box.appendChild(note('Each process\'s devices in a row each, scaled to the device\'s own peak, over the process\'s life (grey); each physical GPU ' +
		'with the bytes of every process on it summed. Times from the job\'s first start. Click a process for its own page.'));
	var lanes = el('div', {cls: 'lanes'});
	box.appendChild(lanes);
	jobLanes = [];
	makeLane(lanes, 'axis', null, {});
	J.gpus.forEach(function (g, gi) {
		/* The largest shares at the peak; a GPU of hundreds of processes names five. */
		var shares = g.shares.slice(0, 5).map(function (s) {
			return whoOf(s.process) + ' ' + fmtBytes(s.bytes);
		}).join(', ') + (g.shares.length > 5 ? ' and ' + processes(g.shares.length - 5) + ' more' : '');
		var lane = makeLane(lanes, 'gpu', g.label + ': ' + processes(g.processes) +
			', peak ' + fmtBytes(g.peak) + ' at ' + fmtNs(g.peak_ns) + baseGpuText(g) + (shares ? ' (' + shares + ')' : ''), {g: gi});
		lane.el.setAttribute('data-gpu', g.key);
		lane.el.setAttribute('data-peak', String(g.peak));
	});
	J.order.forEach(function (i) {
		var p = J.processes[i];
		if (p.error)
			return;
		var lane = makeLane(lanes, 'process', p.label + (p.complete ? '' : ' [incomplete]') + ' \u2014 ' + peaksText(p) + baseProcessText(p), {i: i});
		lane.el.setAttribute('data-process', String(i));
		lane.el.setAttribute('data-pid', String(p.pid));
		lane.el.setAttribute('data-name', p.label);
		lane.el.addEventListener('click', function () {
			location.hash = 'process=' + i;
		});
	});
}

/* The summary's table of processes, in the lanes' order; a process's command opens its page. */
function renderJobTable(box) {
	var rows = J.order.map(function (i) {
		return {i: i, p: J.processes[i]};
	}).filter(function (r) {
		return !r.p.error;
	});
	var host = function (p) {
		var c = (p.devices || []).filter(function (d) { return d.device === 'cpu'; })[0];
		return c || null;
	};
	var pidOf = function (i) {
		return i == null || i < 0 || !J.processes[i] ? null : J.processes[i].pid;
	};
	box.appendChild(el('h2', {text: 'Processes'}));
	box.appendChild(table([
		{h: 'rank', n: true, v: function (r) { return r.p.rank; }, f: function (r) { return r.p.rank == null ? '-' : String(r.p.rank); }},
		{h: 'pid', n: true, v: function (r) { return r.p.pid; }, f: function (r) { return '\u2002'.repeat(Math.min(8, r.p.depth)) + (r.p.pid == null ? '-' : r.p.pid); }},
		{h: 'parent', n: true, v: function (r) { return r.p.parent != null ? pidOf(r.p.parent) : r.p.ppid; }, f: function (r) {
			var v = r.p.parent != null ? pidOf(r.p.parent) : r.p.ppid;
			return v == null ? '-' : String(v);
		}},
		{h: 'host', v: function (r) { return r.p.host || '-'; }},
		{h: 'host peak', n: true, v: function (r) { var c = host(r.p); return c ? c.peak : null; }, f: function (r) {
			var c = host(r.p);
			return c ? fmtBytes(c.peak) + ' at ' + fmtNs(c.peak_ns) : '-';
		}},
		{h: 'leaked', n: true, v: function (r) { return r.p.leaked; }, f: function (r) { return fmtBytes(r.p.leaked); }},
		{h: 'command', code: true, v: function (r) { return r.p.command; }, f: function (r) {
			return el('a', {href: '#process=' + r.i, text: r.p.command || r.p.trace, title: r.p.path});
		}}
	], rows, {limit: 50}));
}

function renderJobHead(box) {
	var g = J.job, hosts = J.hosts.length;
	box.appendChild(el('h1', {text: 'Memory of a job: ' + processes(J.processes.length - g.errors)}));
	var meta = el('div', {cls: 'meta'});
	[plural(g.traces, 'trace'), plural(hosts, 'machine'), plural(J.gpus.length, 'physical GPU'),
		fmtNs(g.span_ns) + ' from the first start to the last end',
		g.clock_error_ns ? 'aligned by the wall clocks, within ' + fmtNs(g.clock_error_ns) : 'one boot\'s clock: times are exact',
		g.baseline ? 'compared with the baseline ' + g.baseline.name + ' (' + plural(g.baseline.traces, 'trace') +
			'): its lines muted over each lane, processes matched by rank' : null
	].forEach(function (s) {
		if (s)
			meta.appendChild(el('span', {text: s}));
	});
	box.appendChild(meta);
	J.processes.forEach(function (p) {
		if (p.error)
			box.appendChild(el('p', {cls: 'note warn', text: 'unreadable: ' + p.error}));
	});
	if (g.page.buckets < 2000 || g.page.updates < 2000)
		box.appendChild(note('Each process\'s page holds ' + fmtCount(g.page.buckets) + ' time buckets, ' + fmtCount(g.page.allocs) +
			' allocations one by one and shorter tables, shared out among the job\'s processes (docs/report.md).'));
}

function renderJob() {
	var box = $('cg-job');
	box.textContent = '';
	renderJobHead(box);
	var lanes = el('section', {id: 'cg-joblanes'});
	var tbl = el('section', {id: 'cg-jobtable'});
	box.appendChild(lanes);
	box.appendChild(tbl);
	box.appendChild(el('div', {id: 'cg-jobtip', cls: 'tip', hidden: 'hidden'}));
	renderJobLanes(lanes);
	renderJobTable(tbl);
	document.title = 'cgprobe: a job of ' + plural(J.processes.length, 'trace');
}

/* The job's page, or process i's own: one shows, the other hides. */
function showJobPart(i) {
	var onProcess = i != null;
	$('cg-job').hidden = onProcess;
	$('cg-jobnav').hidden = !onProcess;
	[$('cg-header'), document.querySelector('main'), $('cg-footer')].forEach(function (e) {
		e.hidden = !onProcess;
	});
	$('cg-tip').hidden = true;
	$('cg-jobtip').hidden = true;
}

function openProcess(i) {
	var p = J.processes[i], block = $('cg-p-' + i);
	showJobPart(i);
	var nav = $('cg-jobnav');
	nav.textContent = '';
	nav.appendChild(el('a', {href: '#job', text: '\u2190 the job (' + processes(J.processes.length) + ')'}));
	nav.appendChild(el('span', {text: p.label + ', started ' + fmtNs(p.start_ns) + ' after the job\'s first start; times below are its own'}));
	$('cg-live').textContent = '';
	if (!block) {
		$('cg-title').textContent = p.label;
		$('cg-meta').textContent = 'No page: its trace could not be read.';
		return;
	}
	showReport(JSON.parse(block.textContent));
	window.scrollTo(0, 0);
}

/* #process=I opens process I's page; anything else is the job's. */
function route() {
	var m = /(?:^#|&)process=(\d+)(?:&|$)/.exec(location.hash);
	var i = m ? Number(m[1]) : null;
	if (i != null && J.processes[i] && !J.processes[i].error) {
		openProcess(i);
		return;
	}
	showJobPart(null);
	drawJobLanes();
	if (typeof window.cgJobSelftest === 'function')
		window.cgJobSelftest({data: J, lanes: jobLanes});
}

function jobMain(data) {
	J = data;
	BJ = J.job.baseline && $('cg-base') ? JSON.parse($('cg-base').textContent) : null;
	P = J.palette;
	cats = J.categories;
	document.documentElement.style.setProperty('--peak', P.peak);
	document.documentElement.style.setProperty('--oom', P.oom);
	var job = el('div', {id: 'cg-job'}), nav = el('nav', {id: 'cg-jobnav', cls: 'jobnav', hidden: 'hidden'});
	document.body.insertBefore(job, document.body.firstChild);
	document.body.insertBefore(nav, job.nextSibling);
	renderJob();
	window.addEventListener('hashchange', route);
	window.addEventListener('resize', function () {
		if (!$('cg-job').hidden)
			drawJobLanes();
	});
	route();
}
