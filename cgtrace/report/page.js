/*
 * cgprobe report, what every section shares: numbers and times as the
 * command line prints them, elements, sortable tables. The report's
 * scripts are one script (embed.py puts them in one function, in the
 * order cgtrace/meson.build names them): report.js, last, draws.
 */

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
/*
 * A series of samples (t[], v[]: the value from each t on, times shifted
 * by shift) as w pixel columns over [t0, t1), from `from` to `to` (0
 * outside): each column the highest value it holds, what was carried in
 * from the column before included, so the highest column is the highest
 * sample. A job's lanes and a baseline's line draw with it.
 */
function seriesColumns(t, v, shift, w, t0, t1, from, to) {
	var cols = new Array(Math.max(0, Math.floor(w))), k = 0, cur = 0, n = t.length, span = t1 - t0;
	/* What was live when the range begins, without what came before it. */
	while (k < n && t[k] + shift < t0)
		cur = v[k++];
	for (var x = 0; x < cols.length; x++) {
		var a = t0 + x * span / w, b = t0 + (x + 1) * span / w, last = x + 1 === cols.length;
		var m = cur;
		/* The last column holds what falls on the range's end too. */
		while (k < n && (t[k] + shift < b || (last && t[k] + shift <= t1))) {
			m = Math.max(m, v[k]);
			cur = v[k];
			k++;
		}
		cols[x] = b <= from || a > to ? 0 : m;
	}
	return cols;
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
