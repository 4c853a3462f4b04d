/* cgprobe report: draws the data block that cgtrace report embeds (docs/report.md). No library. */
(function () {
	'use strict';

	var STEP_NAMES = ['none', 'forward', 'backward', 'optimizer'];

	var D; /* the data block */
	var P; /* its palette: the colours of every picture of cgtrace (cgtrace/palette.c) */
	var cats;

	/* ---- formatting, as the command line prints ---- */

	var UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
	function fmtBytes(b) {
		if (b < 1024)
			return b + ' B';
		var v = b / 1024, u = 0;
		while (v >= 1024 && u + 1 < UNITS.length) {
			v /= 1024;
			u++;
		}
		return v.toFixed(1) + ' ' + UNITS[u];
	}
	function fmtNs(ns) {
		if (ns < 1e3)
			return ns + ' ns';
		if (ns < 1e6)
			return (ns / 1e3).toFixed(3) + ' us';
		if (ns < 1e9)
			return (ns / 1e6).toFixed(3) + ' ms';
		return (ns / 1e9).toFixed(3) + ' s';
	}
	/* Seconds from the session start, fine enough to tell apart instants of a range of span ns. */
	function fmtSec(ns, span) {
		var d = span > 0 ? Math.max(3, Math.min(9, Math.ceil(-Math.log10(span / 1e9)) + 3)) : 3;
		return (ns / 1e9).toFixed(d) + ' s';
	}
	/* An instant of the trace in cards and tables, as cgtrace memory prints it. */
	function fmtT(ns) {
		return fmtNs(ns);
	}
	function plural(n, noun) {
		return fmtCount(n) + ' ' + noun + (n === 1 ? '' : 's');
	}
	function fmtCount(n) {
		return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}
	function pct(a, b) {
		return b > 0 ? (100 * a / b).toFixed(1) + '%' : '-';
	}

	/* ---- DOM ---- */

	function el(tag, props, kids) {
		var e = document.createElement(tag);
		if (props)
			for (var k in props) {
				if (!Object.prototype.hasOwnProperty.call(props, k) || props[k] == null)
					continue;
				if (k === 'text')
					e.textContent = props[k];
				else if (k === 'cls')
					e.className = props[k];
				else if (k === 'style')
					e.style.cssText = props[k];
				else
					e.setAttribute(k, props[k]);
			}
		if (kids)
			for (var i = 0; i < kids.length; i++)
				if (kids[i] != null)
					e.appendChild(typeof kids[i] === 'string' ? document.createTextNode(kids[i]) : kids[i]);
		return e;
	}
	function $(id) {
		return document.getElementById(id);
	}
	/* A step band's fill: its tint at the palette's opacity. */
	function bandFill(k) {
		var c = P.step[k], n = parseInt(c.slice(1), 16);
		return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + P.band_opacity + ')';
	}
	function swatch(color, line) {
		var s = el('span', {cls: line ? 'sw line' : 'sw'});
		s.style.background = color;
		return s;
	}
	function catCell(c) {
		return el('span', null, [swatch(P.category[c] || P.rest), cats[c] || '?']);
	}

	/*
	 * A sortable table: columns [{h, v(row) for sorting, f(row) -> text or node, n: numeric}],
	 * the first `limit` rows shown with a button for the rest.
	 */
	function table(columns, rows, opts) {
		opts = opts || {};
		var limit = opts.limit || 20;
		var wrap = el('div');
		var sortCol = opts.sort == null ? -1 : opts.sort, asc = !!opts.asc, showAll = false;
		var tbl = el('table'), thead = el('thead'), tbody = el('tbody');
		tbl.appendChild(thead);
		tbl.appendChild(tbody);
		wrap.appendChild(tbl);
		var more = el('div', {cls: 'more'});
		wrap.appendChild(more);
		var hr = el('tr');
		columns.forEach(function (c, i) {
			var th = el('th', {cls: c.n ? 'n' : null, text: c.h, title: c.title || 'sort by ' + c.h});
			th.addEventListener('click', function () {
				if (sortCol === i)
					asc = !asc;
				else {
					sortCol = i;
					asc = !c.n;
				}
				fill();
			});
			hr.appendChild(th);
		});
		thead.appendChild(hr);
		function fill() {
			var list = rows.slice();
			if (sortCol >= 0) {
				var c = columns[sortCol];
				list.sort(function (a, b) {
					var x = c.v(a), y = c.v(b);
					if (x == null)
						x = c.n ? -Infinity : '';
					if (y == null)
						y = c.n ? -Infinity : '';
					var r = x < y ? -1 : x > y ? 1 : 0;
					return asc ? r : -r;
				});
			}
			var ths = thead.firstChild.childNodes;
			for (var i = 0; i < ths.length; i++)
				ths[i].className = (columns[i].n ? 'n' : '') + (i === sortCol ? ' sorted' + (asc ? ' asc' : '') : '');
			tbody.textContent = '';
			var shown = showAll ? list.length : Math.min(limit, list.length);
			for (var r = 0; r < shown; r++) {
				var tr = el('tr');
				columns.forEach(function (c) {
					var v = c.f ? c.f(list[r]) : c.v(list[r]);
					var td = el('td', {cls: c.n ? 'n' : c.code ? 'code' : null});
					if (v != null && typeof v === 'object')
						td.appendChild(v);
					else
						td.textContent = v == null ? '' : String(v);
					if (c.code && typeof v !== 'object')
						td.title = td.textContent;
					tr.appendChild(td);
				});
				tbody.appendChild(tr);
			}
			if (opts.restRow)
				tbody.appendChild(opts.restRow());
			more.textContent = '';
			if (list.length > limit)
				more.appendChild(el('button', {type: 'button', text: showAll ? 'show the first ' + limit : 'show all ' + list.length}));
			if (more.firstChild)
				more.firstChild.addEventListener('click', function () {
					showAll = !showAll;
					fill();
				});
		}
		fill();
		return wrap;
	}
	function section(id, title, kids) {
		var s = $(id);
		s.textContent = '';
		s.appendChild(el('h2', {text: title}));
		kids.forEach(function (k) {
			if (k)
				s.appendChild(k);
		});
		return s;
	}
	function note(text) {
		return el('p', {cls: 'note', text: text});
	}
	function siteName(i) {
		return i != null && i >= 0 && D.sites && i < D.sites.length ? D.sites[i] : '';
	}
	function bytesBar(b, max, color) {
		var w = max > 0 ? Math.max(1, Math.round(80 * b / max)) : 0;
		var bar = el('span', {cls: 'bar'});
		bar.style.width = w + 'px';
		bar.style.background = color;
		return el('span', null, [bar, fmtBytes(b)]);
	}

	/* ---- header and summary ---- */

	function renderHeader() {
		var m = D.meta || {};
		var name = m.entrypoint || D.trace || 'trace';
		document.title = 'cgprobe: ' + name;
		$('cg-title').textContent = 'Memory of ' + name;
		var meta = $('cg-meta');
		var parts = [D.trace ? 'trace ' + D.trace : null, m.run_id ? 'run ' + m.run_id : null, m.timestamp || null,
			m.phase ? 'phase ' + m.phase : null, m.device ? 'device ' + m.device : null,
			D.capture ? 'capture window ' + fmtNs(D.capture.begin_ns) + ' to ' + fmtNs(D.capture.end_ns) : null,
			plural(D.records.memory, 'memory record')];
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
				c.appendChild(el('div', {cls: 's', text: line}));
		});
		return c;
	}

	function renderSummary() {
		var box = $('cg-summary');
		var best = -1;
		D.devices.forEach(function (d, i) {
			if (best < 0 || d.peak > D.devices[best].peak)
				best = i;
		});
		D.devices.forEach(function (d, i) {
			var cap = d.capacity ? ' of ' + fmtBytes(d.capacity) + ' (' + pct(d.peak, d.capacity) + ')' : '';
			var c = card('peak on ' + d.name, fmtBytes(d.peak), [
				d.peak ? 'at ' + fmtT(d.peak_ns) + cap : 'no live memory',
				topCategories(d.peak_by_category)
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
			D.devices.length > 1 ? D.devices.map(function (d) { return d.name + ' ' + fmtBytes(d.final_bytes); }).join(', ') : null],
			{'data-bytes': String(fin)}));
		box.appendChild(card('allocations', fmtCount(allocs), [fmtCount(frees) + ' frees', fmtBytes(total) + ' allocated in total']));
		box.appendChild(card('duration', fmtNs(D.grid.end_ns - D.grid.start_ns), ['from ' + fmtT(D.grid.start_ns),
			plural(D.spans_total, 'span') + ' with memory']));
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

	/* ---- the timeline ---- */

	var mode = 'category';
	var showCkpt = true;
	var view = {t0: 0, t1: 1};
	var full = {t0: 0, t1: 1};
	var panels = [];
	var M = {l: 64, r: 12, t: 14, b: 20};

	function gridEnd() {
		var g = D.grid;
		return Math.max(g.end_ns, g.start_ns + g.n * g.bucket_ns, g.start_ns + 1);
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
		tip.textContent = '';
		tip.appendChild(el('div', {cls: 't', text: d.name + ' at ' + fmtSec(timeAt(p, q.x), span)}));
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
		lg.appendChild(el('span', null, [swatch(P.peak), 'peak']));
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

	function main() {
		D = JSON.parse($('cg-data').textContent);
		P = D.palette;
		cats = D.categories;
		/* The style sheet's colours of the marks are the palette's too. */
		document.documentElement.style.setProperty('--peak', P.peak);
		document.documentElement.style.setProperty('--oom', P.oom);
		full.t0 = D.grid.start_ns;
		full.t1 = gridEnd();
		renderHeader();
		renderSummary();
		renderTimeline();
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
	 * live=DEVICE,T (what was live on the device index at T seconds).
	 */
	function applyHash() {
		var h = location.hash.replace(/^#/, '');
		if (!h)
			return;
		h.split('&').forEach(function (kv) {
			var p = kv.split('='), v = (p[1] || '').split(',').map(Number);
			if (p[0] === 'mode' && (p[1] === 'alloc' || p[1] === 'category')) {
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
})();
