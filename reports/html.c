/*
 * html.c - analyze --format html: the report as one self-contained page
 * (issue 30).  No network request, no external script, style or font: the
 * data are three JSON documents in <script type="application/json">
 * elements (the analyze report with the step series cut to at most
 * HTML_MAX_STEPS, the flame graph's call paths, the memory samples at step
 * ends), and a small script renders them with DOM text nodes only, so a
 * name from the profile is never markup.  In the JSON every '<', '>' and '&'
 * is written \\u003c, \\u003e, \\u0026, so no text ends the script
 * element.
 *
 * Size is bounded for big profiles: at most HTML_MAX_STEPS steps (the
 * longest of each run kept), HTML_MAX_MEM memory points (the highest of
 * each run), and the flame graph's paths that hold at least 1/HTML_MIN_SHARE
 * of the run, HTML_MAX_NODES at most (the rest counted as left out).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "escape.h"
#include "jsonw.h"
#include "prism/job.h"
#include "report.h"
#include "prism/compare.h"

#define HTML_MAX_STEPS 4000u
#define HTML_MAX_MEM 2000u
#define HTML_MAX_NODES 20000u
#define HTML_MIN_SHARE 20000.0
#define HTML_HEAT_BINS 400u

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 40px;color:#1d2330;background:#fff}\n"
    "h1{font-size:20px;margin:18px 0 4px;word-break:break-all}h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #dde}\n"
    ".meta{color:#667;margin:0;word-break:break-all}.note{color:#667;font-size:12px}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:8px}.card{border:1px solid #dde;border-radius:6px;padding:6px 10px;min-width:120px}\n"
    ".card .k{color:#667;font-size:12px}.card .v{font-weight:600}\n"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eef;vertical-align:top}\n"
    "td{word-break:break-all}th{color:#556;font-weight:600}\n"
    ".finding{border-left:4px solid #bbc;padding:4px 10px;margin:6px 0;background:#fafafe}\n"
    ".sev-high{border-color:#d33}.sev-medium{border-color:#e90}.sev-low{border-color:#39c}\n"
    ".ftitle{font-weight:600}.fline{word-break:break-word}\n"
    ".chart{width:100%;height:auto;background:#fcfcff;border:1px solid #eef}\n"
    ".axis{stroke:#99a}.series{fill:none;stroke:#3a6ea5;stroke-width:1.2}.fit{stroke:#d33;stroke-dasharray:5 4}\n"
    ".outlier{fill:#d33}.lab{font-size:11px;fill:#556}.lab.end{text-anchor:end}\n"
    ".fbar{display:flex;gap:8px;align-items:center;margin-bottom:6px}.finfo{color:#556;font-size:12px}\n"
    ".flame{position:relative;width:100%;overflow:hidden;border:1px solid #eef}\n"
    ".fr{position:absolute;height:17px;box-sizing:border-box;border:1px solid #fff;background:#f2a65a;font-size:11px;line-height:15px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:0 3px;cursor:pointer}\n"
    ".fr:hover{background:#e8833a}.fr.fslow{background:#f0a0a0}.fr.fslow2{background:#d44;color:#fff}.fr.ffast{background:#a8c8ef}.fr.ffast2{background:#3a78c8;color:#fff}.fr.fsame{background:#ddd}.fr.fnew{background:#b58bd8}\n"
    ".heat{max-width:100%;image-rendering:pixelated;border:1px solid #eef}\n"
    ".fr.hit{background:#c050c0;color:#fff}\n"
    ".fr.ffold{background:repeating-linear-gradient(135deg,#e4e4e4 0 5px,#f4f4f4 5px 10px);color:#556}\n"
    ".tlines{margin:8px 0}.tline{white-space:pre-wrap;word-break:break-word;font-size:13px}\n"
    "tr.folded td{color:#667}\n";

static const char script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  function data(id) {\n"
    "    var e = document.getElementById(id);\n"
    "    try { return e ? JSON.parse(e.textContent) : null; } catch (x) { return null; }\n"
    "  }\n"
    "  var A = data('prism-analyze') || {}, F = data('prism-flame') || {}, M = data('prism-memory') || {};\n"
    "  var C = data('prism-compare'), J = data('prism-job'), H = data('prism-heatmap') || {};\n"
    "  var SL = data('prism-summary') || {}, W = data('prism-words') || {};\n"
    "  var app = document.getElementById('app');\n"
    "  function el(tag, cls, text) {\n"
    "    var e = document.createElement(tag);\n"
    "    if (cls) e.className = cls;\n"
    "    if (text !== undefined && text !== null) e.textContent = String(text);\n"
    "    return e;\n"
    "  }\n"
    "  function add(parent, child) { parent.appendChild(child); return child; }\n"
    "  /* a text report's lines (reports/report.h), each one as the text words it */\n"
    "  function lines(parent, ls, id) {\n"
    "    var d = add(parent, el('div', 'tlines'));\n"
    "    if (id) d.id = id;\n"
    "    (ls || []).forEach(function (l) { add(d, el('div', 'tline', l)); });\n"
    "    return d;\n"
    "  }\n"
    "  function ns(v) {\n"
    "    if (v === null || v === undefined || isNaN(v)) return '-';\n"
    "    var a = Math.abs(v);\n"
    "    if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 1 : 2) + ' s';\n"
    "    if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 1 : 2) + ' ms';\n"
    "    if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 1 : 2) + ' us';\n"
    "    return Math.round(v) + ' ns';\n"
    "  }\n"
    "  function bytes(v) {\n"
    "    if (v === null || v === undefined || isNaN(v)) return '-';\n"
    "    var u = ['B', 'KB', 'MB', 'GB', 'TB'], i = 0;\n"
    "    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }\n"
    "    return (i ? v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) : Math.round(v)) + ' ' + u[i];\n"
    "  }\n"
    "  function pct(v) { return v === null || v === undefined || isNaN(v) ? '-' : (100 * v).toFixed(1) + '%'; }\n"
    "  function section(title, id) {\n"
    "    var s = add(app, el('section'));\n"
    "    if (id) s.id = id;\n"
    "    add(s, el('h2', null, title));\n"
    "    return s;\n"
    "  }\n"
    "  function table(parent, head, rows, cls) {\n"
    "    var t = add(parent, el('table', cls));\n"
    "    var tr = add(add(t, el('thead')), el('tr'));\n"
    "    head.forEach(function (h) { add(tr, el('th', null, h)); });\n"
    "    var tb = add(t, el('tbody'));\n"
    "    rows.forEach(function (r) {\n"
    "      var row = add(tb, el('tr'));\n"
    "      r.forEach(function (c) {\n"
    "        if (c && c.nodeType) add(add(row, el('td')), c); else add(row, el('td', null, c));\n"
    "      });\n"
    "    });\n"
    "    return t;\n"
    "  }\n"
    "  var SVGNS = ['http:', '', 'www.w3.org', '2000', 'svg'].join('/');  /* a name, not a request */\n"
    "  function svg(tag, attrs) {\n"
    "    var e = document.createElementNS(SVGNS, tag);\n"
    "    for (var k in attrs) e.setAttribute(k, attrs[k]);\n"
    "    return e;\n"
    "  }\n"
    "  function drawAnalyze() {\n"
    "  /* title and summary */\n"
    "  var hdr = A.header || {}, st = A.steps || {}, sm = A.summary || {};\n"
    "  add(app, el('h1', null, 'PRISM report: ' + (A.file || '')));\n"
    "  var meta = add(app, el('p', 'meta'));\n"
    "  meta.textContent = [hdr.producer, hdr.host, (hdr.argv || []).join(' ')].filter(Boolean).join('  |  ') +\n"
    "    (A.complete ? '' : '  |  ' + (A.status || 'incomplete: no footer'));\n"
    "  var s1 = section('Summary', 'summary');\n"
    "  var cards = add(s1, el('div', 'cards'));\n"
    "  function card(k, v) { var c = add(cards, el('div', 'card')); add(c, el('div', 'k', k)); add(c, el('div', 'v', v)); }\n"
    "  card('Steps', st.count);\n"
    "  card('Mean step', ns(st.mean_ns));\n"
    "  card('p50 / p95', ns(st.p50_ns) + ' / ' + ns(st.p95_ns));\n"
    "  card('Max step', ns(st.max_ns));\n"
    "  card('Events', sm.events);\n"
    "  card('Dropped', sm.dropped);\n"
    "  var mem = A.memory || {};\n"
    "  var halloc = mem.host_memory === 'allocated';  /* an imported trace: the allocator's bytes */\n"
    "  card(halloc ? 'Peak allocated (torch\\'s CPU allocator, from the trace)' : 'Peak host RSS', bytes(mem.peak_rss_bytes));\n"
    "  if (mem.have_gpu) card('Peak GPU used', bytes(mem.peak_gpu_used_bytes));\n"
    "  card('Memory leak', mem.leak_detected ? 'DETECTED' : 'none');\n"
    "  var sy = A.system || {};\n"
    "  if (sy.readings) {\n"
    "    card('Disk read / written', bytes(sy.io_read_bytes) + ' / ' + bytes(sy.io_write_bytes));\n"
    "    if (sy.cpu_user_pct !== null) card('Process CPU', sy.cpu_user_pct.toFixed(0) + '% user, ' + sy.cpu_sys_pct.toFixed(0) + '% sys');\n"
    "    if (sy.energy_j !== null) card('Energy', sy.energy_j.toFixed(1) + ' J');\n"
    "  }\n"
    "  /* the text report's Summary: what lies outside the steps, workers, folded modules, CPU load, memory, system */\n"
    "  lines(s1, SL.lines, 'summary-lines');\n"
    "  /* bottlenecks */\n"
    "  var bn = A.bottlenecks || [];\n"
    "  var s2 = section('Bottlenecks (' + bn.length + ')', 'bottlenecks');\n"
    "  if (!bn.length) add(s2, el('p', null, 'None: nothing stands out.'));\n"
    "  bn.forEach(function (b) {\n"
    "    var d = add(s2, el('div', 'finding sev-' + String(b.severity).toLowerCase()));\n"
    "    add(d, el('div', 'ftitle', '[' + b.severity + '] ' + b.type + ': ' + b.description));\n"
    "    if (b.path) add(d, el('div', 'fline', 'Region: ' + b.path));\n"
    "    add(d, el('div', 'fline', 'Evidence: ' + b.evidence));\n"
    "    if (b.inside) add(d, el('div', 'fline', 'Inside: ' + b.inside));\n"
    "    if (b.worth) { var wt = 'Worth: the step ' + ns(b.worth.step_ns) + ' -> ' + ns(b.worth.step_without_ns) + ' if the wait were zero (x' + (b.worth.step_ns / b.worth.step_without_ns).toFixed(2) + ' steps/s)';\n"
    "      if (b.worth.with_workers) wt += '; with ' + b.worth.with_workers.workers + ' workers (now ' + b.worth.with_workers.workers_now + ') ' + ns(b.worth.with_workers.step_ns) + ' (x' + (b.worth.step_ns / b.worth.with_workers.step_ns).toFixed(2) + ')';\n"
    "      add(d, el('div', 'fline', wt)); }\n"
    "    add(d, el('div', 'fline', 'Fix: ' + b.recommendation));\n"
    "  });\n"
    "  /* top operations */\n"
    "  var ops = A.ops || [];\n"
    "  var s3 = section('Top operations', 'ops');\n"
    "  table(s3, ['#', 'operation', 'total', 'calls', 'share', 'self'], ops.slice(0, 30).map(function (o, i) {\n"
    "    return [i + 1, o.name, ns(o.total_ns), o.calls, pct(o.share), ns(o.self_ns)];\n"
    "  }), 'ops');\n"
    "  /* the operator window (analyze_ops.c): every figure a window step's */\n"
    "  var ow = A.op_window;\n"
    "  function flop(v) {\n"
    "    if (v === null || v === undefined || isNaN(v)) return '-';\n"
    "    var u = ['', 'k', 'M', 'G', 'T', 'P'], i = 0;\n"
    "    while (Math.abs(v) >= 999.5 && i < u.length - 1) { v /= 1000; i++; }\n"
    "    return Number(v.toPrecision(3)) + ' ' + u[i];\n"
    "  }\n"
    "  if (ow) {\n"
    "    var s6 = section('Operator window: steps ' + ow.first_step + '-' + ow.last_step + ' (' + ow.steps + ' steps, left out of the step times)', 'opwindow');\n"
    "    var ol = 'FLOPs a step: ' + flop(ow.flops_per_step) + 'FLOP' + (ow.dtype ? ', mostly ' + ow.dtype : '') +\n"
    "      '; achieved ' + flop(ow.achieved_flops) + 'FLOP/s over the median step (' + ns(ow.step_ns) + ')';\n"
    "    if (ow.mfu !== null) ol += '; MFU ' + pct(ow.mfu) + ' of ' + ow.peak_tflops + ' TFLOP/s (' + (ow.device || 'the device') + '; peak from ' + ow.peak_from + ')';\n"
    "    add(s6, el('p', 'oline', ol));\n"
    "    table(s6, ['operator', 'a step', 'share', 'FLOPs a step'], (ow.heaviest || []).map(function (o) {\n"
    "      return [o.name, ns(o.per_step_ns), pct(o.share), o.flops_per_step ? flop(o.flops_per_step) + 'FLOP' : ''];\n"
    "    }), 'opheavy');\n"
    "    table(s6, ['region', 'FLOPs a step', 'a step', 'achieved'], (ow.regions || []).map(function (r) {\n"
    "      return [r.path, flop(r.flops_per_step) + 'FLOP', ns(r.per_step_ns), flop(r.achieved_flops) + 'FLOP/s'];\n"
    "    }), 'opregions');\n"
    "  }\n"
    "  /* step times */\n"
    "  var series = st.series || [];\n"
    "  var s4 = section('Step times' + (st.series_every ? ' (the longest of every ' + st.series_every + ' steps)' : ''), 'steps');\n"
    "  function chart(parent, xs, ys, opts) {\n"
    "    var W = 900, H = 220, P = 40;\n"
    "    var g = add(parent, svg('svg', { viewBox: '0 0 ' + W + ' ' + H, 'class': 'chart', role: 'img' }));\n"
    "    if (!xs.length) return g;\n"
    "    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);\n"
    "    var y1 = Math.max.apply(null, ys.concat(opts.extra || [])) || 1;\n"
    "    if (x1 === x0) x1 = x0 + 1;\n"
    "    function X(v) { return P + (W - 2 * P) * (v - x0) / (x1 - x0); }\n"
    "    function Y(v) { return H - P + -(H - 2 * P) * v / y1; }\n"
    "    add(g, svg('line', { x1: P, y1: H - P, x2: W - P, y2: H - P, 'class': 'axis' }));\n"
    "    add(g, svg('line', { x1: P, y1: P, x2: P, y2: H - P, 'class': 'axis' }));\n"
    "    var lab = add(g, svg('text', { x: 2, y: P - 6, 'class': 'lab' })); lab.textContent = opts.fmt(y1);\n"
    "    var lab0 = add(g, svg('text', { x: P, y: H - P + 16, 'class': 'lab' })); lab0.textContent = opts.xlab(x0);\n"
    "    var lab1 = add(g, svg('text', { x: W - P, y: H - P + 16, 'class': 'lab end' })); lab1.textContent = opts.xlab(x1);\n"
    "    var pts = xs.map(function (x, i) { return X(x).toFixed(1) + ',' + Y(ys[i]).toFixed(1); }).join(' ');\n"
    "    add(g, svg('polyline', { points: pts, 'class': 'series' }));\n"
    "    if (opts.mark) xs.forEach(function (x, i) {\n"
    "      if (opts.mark(ys[i])) {\n"
    "        var c = add(g, svg('circle', { cx: X(x).toFixed(1), cy: Y(ys[i]).toFixed(1), r: 3, 'class': 'outlier' }));\n"
    "        var t = add(c, svg('title', {})); t.textContent = opts.xlab(x) + ': ' + opts.fmt(ys[i]);\n"
    "      }\n"
    "    });\n"
    "    if (opts.line) add(g, svg('line', { x1: X(opts.line[0]), y1: Y(opts.line[1]), x2: X(opts.line[2]), y2: Y(opts.line[3]), 'class': 'fit' }));\n"
    "    return g;\n"
    "  }\n"
    "  var p95 = st.p95_ns || 0;\n"
    "  chart(s4, series.map(function (s) { return s.index; }), series.map(function (s) { return s.duration_ns; }), {\n"
    "    fmt: ns, xlab: function (v) { return 'step ' + v; }, mark: function (v) { return p95 && v > p95; }\n"
    "  });\n"
    "  add(s4, el('p', 'note', 'Dots: steps above p95 (' + ns(p95) + ').'));\n"
    "  /* memory */\n"
    "  var pts = M.points || [];\n"
    "  var s5 = section('Memory at step ends', 'memory');\n"
    "  var host = pts.some(function (p) { return p[1] > 0; }), gpuMem = pts.some(function (p) { return p[2] > 0; });\n"
    "  var hl = (host ? mem.host_leak : mem.gpu_leak) || {};\n"
    "  if (!pts.length || (!host && !gpuMem)) add(s5, el('p', null, 'No memory samples at step boundaries.'));\n"
    "  else {\n"
    "    var MB = 1048576, col = host ? 1 : 2, ys = pts.map(function (p) { return p[col]; });\n"
    "    chart(s5, pts.map(function (p) { return p[0]; }), ys, {\n"
    "      fmt: bytes, xlab: function (v) { return 'step ' + v; },\n"
    "      line: hl.have_fit ? [pts[0][0], hl.start_mb * MB, pts[pts.length - 1][0], hl.end_mb * MB] : null,\n"
    "      extra: hl.have_fit ? [hl.start_mb * MB, hl.end_mb * MB] : []\n"
    "    });\n"
    "    add(s5, el('p', 'note', (host ? (halloc ? 'Host memory allocated (torch\\'s CPU allocator, from the trace)' : 'Host RSS') : 'GPU memory used') + (hl.have_fit ? '; line: the leak fit, ' + (hl.slope_mb_per_step || 0).toFixed(3) + ' MB/step, ' + hl.verdict + ' (' + hl.reason + ')' : '')));\n"
    "  }\n"
    "  /* GPU */\n"
    "  var g = A.gpu || {};\n"
    "  if (g.present) {\n"
    "    var s7 = section('GPU', 'gpu');\n"
    "    add(s7, el('p', null, 'Kernels ' + ns(g.kernel_ns) + ', copies ' + ns(g.copy_ns) + ', launches ' + g.launches + ', idle ' + pct(g.idle_share)));\n"
    "    table(s7, ['kernel', 'calls', 'total', 'mean', 'share'], (g.kernels || []).slice(0, 20).map(function (k) {\n"
    "      return [k.name, k.count, ns(k.total_ns), ns(k.mean_ns), pct(k.share)];\n"
    "    }), 'ops');\n"
    "    if ((g.copies || []).length)\n"
    "      table(s7, ['copy', 'host memory', 'count', 'bytes', 'total', 'GB/s'], g.copies.map(function (c) {\n"
    "        return [c.kind, c.host_memory, c.count, bytes(c.bytes), ns(c.total_ns),\n"
    "                c.gb_per_s === null || c.gb_per_s === undefined ? '-' : c.gb_per_s.toFixed(1)];\n"
    "      }), 'ops');\n"
    "  }\n"
    "  }\n"
    "  /* ---- compare: base against new ---- */\n"
    "  function drawCompare(C) {\n"
    "    var b = C.base || {}, n = C.new || {}, run = C.run || {};\n"
    "    add(app, el('h1', null, 'PRISM compare: ' + (b.file || '') + '  ->  ' + (n.file || '')));\n"
    "    var s1 = section('Runs', 'summary');\n"
    "    function ratio(x, y) { return x && y ? (y / x).toFixed(3) + 'x' : '-'; }\n"
    "    table(s1, ['', 'base', 'new', 'new / base'], [\n"
    "      ['steps', b.steps, n.steps, ''],\n"
    "      ['mean step', ns(b.mean_step_ns), ns(n.mean_step_ns), ratio(b.mean_step_ns, n.mean_step_ns)],\n"
    "      ['p95 step', ns(b.p95_step_ns), ns(n.p95_step_ns), ratio(b.p95_step_ns, n.p95_step_ns)],\n"
    "      [b.host_memory === 'allocated' && n.host_memory === 'allocated' ? 'peak allocated (torch\\'s CPU allocator, from the traces)' : b.host_memory === 'allocated' || n.host_memory === 'allocated' ? 'peak host memory (a profile\\'s RSS, a trace\\'s allocated bytes)' : 'peak host RSS', bytes(b.peak_rss_bytes), bytes(n.peak_rss_bytes), ratio(b.peak_rss_bytes, n.peak_rss_bytes)],\n"
    "      ['memory leak', b.leak_detected ? 'DETECTED' : 'none', n.leak_detected ? 'DETECTED' : 'none', '']\n"
    "    ], 'ops');\n"
    "    lines(s1, W.run, 'run-lines');\n"
    "    var regs = (C.regions || []).slice().sort(function (x, y) { return Math.abs(y.delta_ns) - Math.abs(x.delta_ns); });\n"
    "    var s2 = section('Changes by region (' + regs.length + ')', 'regions');\n"
    "    function pc(v) { return v === null || v === undefined ? 'n/a' : (v > 0 ? '+' : '') + v.toFixed(1) + '%'; }\n"
    "    var shown = regs.slice(0, 60), raw = !!run.whole_run_shift;   /* raw: the change without the run factor, as the text shows it */\n"
    "    if (W.regions_legend) add(s2, el('p', 'note', '(' + W.regions_legend + ')'));\n"
    "    var head = ['region', 'status', 'base', 'new', 'change', 'med %'].concat(raw ? ['raw %'] : [], ['share', 'p', '*']);\n"
    "    var t2 = table(s2, head, shown.map(function (r) {\n"
    "      var both = r.status === 'both';\n"
    "      return [r.path, r.status, ns(r.base_ns), ns(r.new_ns),\n"
    "              (r.delta_ns > 0 ? '+' : '') + ns(r.delta_ns) + (r.delta_pct === null || r.delta_pct === undefined ? '' : ' (' + (r.delta_pct > 0 ? '+' : '') + r.delta_pct.toFixed(1) + '%)'),\n"
    "              both ? pc(r.folded_one ? null : r.median_pct) : '-'].concat(raw ? [both ? pc(r.raw_median_pct) : '-'] : [], [\n"
    "              pct(r.new_share), r.folded_one ? 'folded' : r.p_value === null || r.p_value === undefined ? (both ? 'n/a' : '-') : r.p_value.toPrecision(2),\n"
    "              (r.hook_ns ? 'h' : '') + (r.significant ? '*' : r.raw_significant ? '~' : '')]);\n"
    "    }), 'ops');\n"
    "    var rows2 = t2.tBodies[0].rows, anyFolded = false;\n"
    "    shown.forEach(function (r, i) { if (r.folded_one) { rows2[i].className = 'folded'; anyFolded = true; } });\n"
    "    if (anyFolded && W.folded_legend) { var lg = add(s2, el('p', 'note', W.folded_legend)); lg.id = 'folded-legend'; }\n"
    "    if (shown.some(function (r) { return r.hook_ns; }) && W.hooks_legend) { var hl = add(s2, el('p', 'note', '(' + W.hooks_legend + ')')); hl.id = 'hooks-legend'; }\n"

    "    var nb = C.bottlenecks_new || [], gb = C.bottlenecks_gone || [];\n"
    "    if (nb.length || gb.length) {\n"
    "      var s3 = section('Findings', 'bottlenecks');\n"
    "      nb.forEach(function (x) { add(s3, el('div', 'finding sev-' + String(x.severity).toLowerCase(), 'new: [' + x.severity + '] ' + x.type + ': ' + x.description)); });\n"
    "      gb.forEach(function (x) { add(s3, el('div', 'finding', 'gone: [' + x.severity + '] ' + x.type + ': ' + x.description)); });\n"
    "    }\n"
    "  }\n"
    "  /* ---- a job: ranks, stragglers, the rank x step heatmap ---- */\n"
    "  function drawJob(J, H) {\n"
    "    add(app, el('h1', null, 'PRISM job: ' + J.ranks_count + ' ranks, ' + J.steps_aligned + ' aligned steps'));\n"
    "    var s1 = section('Summary', 'summary');\n"
    "    var cards = add(s1, el('div', 'cards'));\n"
    "    function card(k, v) { var c = add(cards, el('div', 'card')); add(c, el('div', 'k', k)); add(c, el('div', 'v', v)); }\n"
    "    var js = J.job_step || {}, sk = J.skew || {};\n"
    "    card('Ranks', J.ranks_count);\n"
    "    card('Job step (median)', ns(js.median_ns));\n"
    "    card('Job step (mean)', ns(js.mean_ns));\n"
    "    card('Skew (median / max)', ns(sk.step_median_ns) + ' / ' + ns(sk.step_max_ns));\n"
    "    card('Stragglers', (J.stragglers || []).length);\n"
    "    var st = J.stragglers || [];\n"
    "    if (st.length) {\n"
    "      var s2 = section('Stragglers', 'stragglers');\n"
    "      st.forEach(function (x) {\n"
    "        var d = add(s2, el('div', 'finding sev-high'));\n"
    "        add(d, el('div', 'ftitle', 'rank ' + x.rank + ': +' + ns(x.excess_ns) + ' a step, slow in ' + x.slowed + ' of ' + x.steps + ' steps'));\n"
    "        if (x.cause) add(d, el('div', 'fline', 'Where: ' + x.cause.path + ' (' + ns(x.cause.rank_ns) + ' against the median rank\\'s ' + ns(x.cause.median_ns) + ')'));\n"
    "        /* what it costs the others, as the text report says it */\n"
    "        if (x.wait_region) add(d, el('div', 'fline', 'The other ranks wait for it: ' + x.wait_region.path + ', ' + ns(x.wait_region.median_ns) + ' per step (median; rank ' + x.rank + ': ' + ns(x.wait_region.rank_ns) + '): waiting for the slowest rank, not work'));\n"
    "        else if (x.others_wait_ns > 0) add(d, el('div', 'fline', 'The other ranks wait ' + ns(x.others_wait_ns) + ' per step (median): waiting for the slowest rank, not work'));\n"
    "        add(d, el('div', 'fline', 'Source: ' + x.source));\n"
    "      });\n"
    "    }\n"
    "    var s3 = section('Ranks', 'ranks');\n"
    "    table(s3, ['rank', 'source', 'host', 'steps', 'step median', 'work median', 'wait median', 'straggler'], (J.ranks || []).map(function (r) {\n"
    "      return [r.rank, r.source, r.host, r.steps, ns(r.step_median_ns), ns(r.work_median_ns), ns(r.wait_median_ns), r.straggler ? 'yes' : ''];\n"
    "    }), 'ops');\n"
    "    var s4 = section('By rank and step' + (H.every > 1 ? ' (the slowest of every ' + H.every + ' steps)' : ''), 'by-rank');\n"
    "    var nb = H.bins || 0, nr = (H.ranks || []).length;\n"
    "    if (!nr || !nb) { add(s4, el('p', null, 'No aligned steps.')); return; }\n"
    "    var hb = add(s4, el('div', 'fbar'));\n"
    "    var toggle = add(hb, el('button', null, 'show step time')); toggle.id = 'heat-toggle';\n"
    "    var what = add(hb, el('span', 'finfo'));\n"
    "    var cw = Math.max(2, Math.min(24, Math.floor(1000 / nb))), ch = Math.max(3, Math.min(18, Math.floor(600 / nr)));\n"
    "    var cv = add(s4, el('canvas', 'heat'));\n"
    "    cv.id = 'heatmap'; cv.width = nb * cw; cv.height = nr * ch;\n"
    "    var tip = add(s4, el('p', 'note', 'Hover a cell. Darker: further above the median of the ranks at that step.'));\n"
    "    tip.id = 'heat-info';\n"
    "    var ctx = cv.getContext('2d'), mode = 'work_ns', rows = [], med = [];\n"
    "    function paint() {\n"
    "      rows = H[mode] || []; med = [];\n"
    "      what.textContent = mode === 'work_ns' ? 'work time (the step less its waits): who is slow' : 'step time (waits included): what every rank paid';\n"
    "      toggle.textContent = mode === 'work_ns' ? 'show step time' : 'show work time';\n"
    "      for (var b = 0; b < nb; b++) {\n"
    "        var col = rows.map(function (r) { return r[b]; }).filter(function (v) { return v !== null; }).sort(function (x, y) { return x - y; });\n"
    "        var h = Math.floor(col.length / 2);   /* the median: of two ranks, their mean */\n"
    "        med.push(col.length ? (col.length % 2 ? col[h] : (col[h - 1] + col[h]) / 2) : null);\n"
    "      }\n"
    "      ctx.clearRect(0, 0, cv.width, cv.height);\n"
    "      rows.forEach(function (r, i) {\n"
    "        r.forEach(function (v, b) {\n"
    "          if (v === null || med[b] === null) { ctx.fillStyle = '#eee'; }\n"
    "          else {\n"
    "            var x = med[b] > 0 ? Math.min(1, Math.max(0, (v - med[b]) / med[b])) : (v > 0 ? 1 : 0);\n"
    "            ctx.fillStyle = 'rgb(' + Math.round(255 - 40 * x) + ',' + Math.round(240 - 200 * x) + ',' + Math.round(220 - 200 * x) + ')';\n"
    "          }\n"
    "          ctx.fillRect(b * cw, i * ch, cw - (cw > 3 ? 1 : 0), ch - (ch > 3 ? 1 : 0));\n"
    "        });\n"
    "      });\n"
    "    }\n"
    "    toggle.addEventListener('click', function () { mode = mode === 'work_ns' ? 'step_ns' : 'work_ns'; paint(); });\n"
    "    paint();\n"
    "    cv.addEventListener('mousemove', function (ev) {\n"
    "      var rc = cv.getBoundingClientRect();\n"
    "      var b = Math.floor((ev.clientX - rc.left) * cv.width / rc.width / cw), i = Math.floor((ev.clientY - rc.top) * cv.height / rc.height / ch);\n"
    "      if (i < 0 || i >= rows.length || b < 0 || b >= nb) return;\n"
    "      var v = rows[i][b];\n"
    "      tip.textContent = 'rank ' + H.ranks[i] + ', step ' + H.first[b] + (H.every > 1 ? '..' + (H.first[b] + H.every - 1) : '') + ': ' +\n"
    "        (v === null ? 'no step' : ns(v) + (med[b] !== null ? ' (median ' + ns(med[b]) + ')' : '')) + (mode === 'work_ns' ? ' of work' : ' a step');\n"
    "    });\n"
    "  }\n"
    "  if (J) drawJob(J, H); else if (C) drawCompare(C); else drawAnalyze();\n"
    "  /* flame graph */\n"
    "  if (!J) {\n"
    "    var s6 = section(C ? 'Flame graph of the new run, against the base' : 'Flame graph', 'flame');\n"
    "    if (C) add(s6, el('p', 'note', 'Red: slower than the base (5% or more; dark: 25%), blue: faster, grey: within 5%, purple: not in the base, striped: folded in one run (not compared). Totals, not corrected for a whole-run shift.'));\n"
    "    var bar = add(s6, el('div', 'fbar'));\n"
    "    var search = add(bar, el('input'));\n"
    "    search.type = 'search'; search.placeholder = 'search names'; search.id = 'flame-search';\n"
    "    var reset = add(bar, el('button', null, 'reset zoom')); reset.id = 'flame-reset';\n"
    "    var info = add(bar, el('span', 'finfo'));\n"
    "    var fl = add(s6, el('div', 'flame')); fl.id = 'flame-graph';\n"
    "    var nodes = F.nodes || [], kids = nodes.map(function () { return []; }), roots = [];\n"
    "    nodes.forEach(function (n, i) { if (n[0] < 0 || n[0] >= i) roots.push(i); else kids[n[0]].push(i); });\n"
    "    var rootTotal = roots.reduce(function (a, i) { return a + nodes[i][2]; }, 0) || 1;\n"
    "    var focus = -1, ROW = 18;\n"
    "    function drawFlame() {\n"
    "      fl.textContent = '';\n"
    "      var q = search.value.toLowerCase(), hits = 0, maxd = 0;\n"
    "      var base = focus < 0 ? roots : [focus];\n"
    "      var tot = focus < 0 ? rootTotal : (nodes[focus][2] || 1);\n"
    "      function place(i, x, depth) {\n"
    "        var n = nodes[i], w = n[2] / tot;\n"
    "        if (w < 0.001) return;\n"
    "        if (depth > maxd) maxd = depth;\n"
    "        var d = add(fl, el('div', 'fr', n[1]));\n"
    "        d.style.left = (100 * x) + '%'; d.style.width = (100 * w) + '%'; d.style.top = (depth * ROW) + 'px';\n"
    "        d.title = n[1] + '\\n' + ns(n[2]) + ' total (' + pct(n[2] / rootTotal) + '), ' + ns(n[3]) + ' self, ' + n[4] + ' calls';\n"
    "        if (n.length > 5) {                 /* compare: the new run against the base */\n"
    "          var base = n[5];\n"
    "          if (base < 0) { d.className += ' fnew'; d.title += '\\nnot in the base run'; }\n"
    "          else if (n[6]) { d.className += ' ffold'; d.title += '\\nbase ' + ns(base) + '; folded into its parent in one run: not compared'; }\n"
    "          else {\n"
    "            var r = base > 0 ? (n[2] - base) / base : 0;\n"
    "            d.title += '\\nbase ' + ns(base) + ' (' + (r > 0 ? '+' : '') + (100 * r).toFixed(1) + '%)';\n"
    "            if (r >= 0.05) d.className += r >= 0.25 ? ' fslow2' : ' fslow';\n"
    "            else if (r <= -0.05) d.className += r <= -0.2 ? ' ffast2' : ' ffast';\n"
    "            else d.className += ' fsame';\n"
    "          }\n"
    "        }\n"
    "        d.setAttribute('data-node', i);\n"
    "        if (q && n[1].toLowerCase().indexOf(q) >= 0) { d.className += ' hit'; hits++; }\n"
    "        var cx = x;\n"
    "        kids[i].forEach(function (k) { place(k, cx, depth + 1); cx += nodes[k][2] / tot; });\n"
    "      }\n"
    "      var x = 0;\n"
    "      base.forEach(function (i) { place(i, x, 0); x += nodes[i][2] / tot; });\n"
    "      fl.style.height = ((maxd + 1) * ROW + 2) + 'px';\n"
    "      info.textContent = (focus < 0 ? 'all' : nodes[focus][1]) + (q ? ' | ' + hits + ' match' + (hits === 1 ? '' : 'es') : '') +\n"
    "        (F.pruned ? ' | ' + F.pruned + ' small paths left out' : '');\n"
    "    }\n"
    "    fl.addEventListener('click', function (ev) {\n"
    "      var t = ev.target;\n"
    "      if (t && t.getAttribute && t.getAttribute('data-node') !== null) { focus = +t.getAttribute('data-node'); drawFlame(); }\n"
    "    });\n"
    "    reset.addEventListener('click', function () { focus = -1; drawFlame(); });\n"
    "    search.addEventListener('input', drawFlame);\n"
    "    drawFlame();\n"
    "  }\n"
    "  document.body.setAttribute('data-ready', '1');\n"
    "})();\n";

/* s as HTML text: escape.h's rule for untrusted text (controls and
 * invisible characters as visible escapes), then the five markup
 * characters as entities. */
static void html_text(pb_buf *b, const char *s)
{
    char rep[ESC_CHAR_MAX];
    while (s && *s) {
        s += esc_char(s, rep, NULL);
        for (const char *r = rep; *r; r++) {
            switch (*r) {
            case '&': pb_buf_puts(b, "&amp;"); break;
            case '<': pb_buf_puts(b, "&lt;"); break;
            case '>': pb_buf_puts(b, "&gt;"); break;
            case '"': pb_buf_puts(b, "&quot;"); break;
            case '\'': pb_buf_puts(b, "&#39;"); break;
            default: pb_buf_putc(b, *r);
            }
        }
    }
}

/* b's JSON into f with '<', '>' and '&' as \\u escapes (they occur in
 * strings only, where the escape is the same character). */
static void put_json(FILE *f, const pb_buf *b)
{
    for (size_t i = 0; i < b->len; i++) {
        char c = b->data[i];
        if (c == '<')
            fputs("\\u003c", f);
        else if (c == '>')
            fputs("\\u003e", f);
        else if (c == '&')
            fputs("\\u0026", f);
        else
            fputc(c, f);
    }
}

/* The flame graph's paths: {"nodes": [[parent, name, total_ns, self_ns,
 * calls], ...], "pruned": N} in preorder of the all-threads tree (a parent
 * before its children; -1: a root), the paths below the size floor left
 * out with everything under them.  With a base analysis, each node also
 * carries the same path's total there (-1: not in the base), then 1 when
 * c says the path was folded in one run only (not compared), else 0. */
static bool flame_json(pb_buf *b, const prism_analysis *a, const prism_analysis *base,
                       const prism_compare *c)
{
    const prism_tree *bt = base ? prism_analysis_tree(base) : NULL;
    const prism_tree *t = prism_analysis_tree(a);
    bool *folded = c ? calloc(t->count + 1, sizeof *folded) : NULL;
    for (size_t i = 0; folded && i < c->count; i++)
        if (c->deltas[i].folded_one && c->deltas[i].new_node < t->count)
            folded[c->deltas[i].new_node] = true;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    uint64_t total = 0;
    for (uint32_t r = t->count ? 0 : PRISM_NO_NODE; r != PRISM_NO_NODE && r < t->count;
         r = t->nodes[r].next_sibling)
        total += t->nodes[r].total_ns;
    double floor = (double)total / HTML_MIN_SHARE;
    uint32_t *stack = malloc((t->count + 1) * sizeof *stack);
    int64_t *out = malloc((t->count + 1) * sizeof *out);   /* tree node -> emitted index */
    uint64_t pruned = 0, n = 0;
    pb_json_key(&w, "nodes");
    pb_json_begin_array(&w);
    if (stack && out && t->count) {
        size_t sp = 0;
        for (uint32_t r = 0; r != PRISM_NO_NODE; r = t->nodes[r].next_sibling)
            stack[sp++] = r;
        /* roots pushed in order: reverse them so the first comes out first */
        for (size_t i = 0; i < sp / 2; i++) {
            uint32_t x = stack[i];
            stack[i] = stack[sp - 1 - i];
            stack[sp - 1 - i] = x;
        }
        while (sp) {
            uint32_t i = stack[--sp];
            const prism_node *nd = &t->nodes[i];
            if ((double)nd->total_ns < floor || n >= HTML_MAX_NODES) {
                pruned++;
                continue;
            }
            int64_t parent = nd->parent == PRISM_NO_NODE ? -1 : out[nd->parent];
            out[i] = (int64_t)n++;
            pb_json_begin_array(&w);
            pb_json_int(&w, parent);
            pb_json_string(&w, nd->name ? nd->name : "");
            pb_json_uint(&w, nd->total_ns);
            pb_json_uint(&w, nd->self_ns);
            pb_json_uint(&w, nd->calls);
            if (bt) {
                uint32_t k = prism_analysis_find(base, nd->path_hash);
                if (k < bt->count)
                    pb_json_uint(&w, bt->nodes[k].total_ns);
                else
                    pb_json_int(&w, -1);
                pb_json_uint(&w, folded && folded[i]);
            }
            pb_json_end_array(&w);
            size_t first = sp;
            for (uint32_t k = nd->first_child; k != PRISM_NO_NODE; k = t->nodes[k].next_sibling)
                stack[sp++] = k;
            for (size_t x = first, y = sp; x + 1 < y; x++, y--) {   /* first child first */
                uint32_t tmp = stack[x];
                stack[x] = stack[y - 1];
                stack[y - 1] = tmp;
            }
        }
    }
    pb_json_end_array(&w);
    pb_json_kuint(&w, "pruned", pruned);
    pb_json_end_object(&w);
    bool ok = (t->count == 0 || (stack && out)) && (!c || folded) && pb_json_finish(&w) &&
              !b->oom;
    free(stack);
    free(out);
    free(folded);
    return ok;
}

/* Host RSS (and GPU memory used) at step ends: {"points": [[step, rss,
 * gpu_used], ...]}, at most HTML_MAX_MEM (the highest RSS of each run). */
static bool memory_json(pb_buf *b, const prism_analysis *a)
{
    const prism_memory_stats *m = prism_analysis_memory(a);
    size_t k = 0;
    for (size_t i = 0; i < m->count; i++)
        k += m->samples[i].step != PRISM_NO_STEP;
    size_t every = k > HTML_MAX_MEM ? (k + HTML_MAX_MEM - 1) / HTML_MAX_MEM : 1, seen = 0;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "points");
    pb_json_begin_array(&w);
    const prism_mem_point *best = NULL;
    for (size_t i = 0; i < m->count; i++) {
        const prism_mem_point *p = &m->samples[i];
        if (p->step == PRISM_NO_STEP)
            continue;
        if (!best || p->rss > best->rss)
            best = p;
        if (++seen % every && i + 1 < m->count)
            continue;
        pb_json_begin_array(&w);
        pb_json_uint(&w, best->step);
        pb_json_uint(&w, best->rss);
        pb_json_uint(&w, best->gpu_used);
        pb_json_end_array(&w);
        best = NULL;
    }
    pb_json_end_array(&w);
    pb_json_end_object(&w);
    return pb_json_finish(&w) && !b->oom;
}

/* The page around its JSON documents: ids[i] holds docs[i]. */
static bool page(FILE *f, const char *what, const char *title, const char *const *ids,
                 const pb_buf *docs, size_t n)
{
    pb_buf t = { 0 };
    html_text(&t, title);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"generator\" content=\"prism-top %s --format html\">\n"
            "<title>PRISM %s: %s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
            "<div id=\"app\"></div>\n"
            "<noscript>This report draws itself with JavaScript; its data are in the "
            "page as JSON (docs/JSON.md).</noscript>\n",
            what, what, pb_buf_str(&t), css);
    bool ok = !t.oom;
    pb_buf_free(&t);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<script type=\"application/json\" id=\"prism-%s\">", ids[i]);
        put_json(f, &docs[i]);
        fputs("</script>\n", f);
    }
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
    return ok;
}

/* What a text report writer prints (report.h, "words a page shares"),
 * for the page: w's next value is an array of its lines, each without the
 * first `strip` spaces (the text's indent), so the page says what the text
 * says in the same words; the names in them are escaped as the text
 * escapes them, and the page shows them as text. */
typedef struct text_lines {
    const char *path;
    const prism_analysis *a, *b;
    const prism_compare *c;
} text_lines;

static void summary_text(FILE *f, const text_lines *t)
{
    analyze_write_summary(f, t->path, t->a);
}

static void run_text(FILE *f, const text_lines *t)
{
    compare_write_run(f, t->a, t->b, t->c);
}

static bool lines_json(pb_json *w, void (*write)(FILE *f, const text_lines *t),
                       const text_lines *t, size_t strip, bool join)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return false;
    write(m, t);
    bool ok = fclose(m) == 0;
    /* join: a line that goes on the one before it (it starts with a
     * space) joins it, one space between, as the page wraps its own lines */
    for (size_t i = 0, o = 0; ok && i < len; i++) {
        if (join && buf[i] == '\n' && i + 1 < len && buf[i + 1] == ' ') {
            while (i + 1 < len && buf[i + 1] == ' ')
                i++;
            buf[o++] = ' ';
        } else {
            buf[o++] = buf[i];
        }
        if (i + 1 == len)
            len = o;
    }
    pb_json_begin_array(w);
    for (size_t i = 0; ok && i < len;) {
        size_t e = i;
        while (e < len && buf[e] != '\n')
            e++;
        size_t s = i;
        while (s < e && s - i < strip && buf[s] == ' ')
            s++;
        pb_json_stringn(w, buf + s, e - s);
        i = e + 1;
    }
    pb_json_end_array(w);
    free(buf);
    return ok;
}

/* {"lines": [analyze's Summary lines]}. */
static bool summary_json(pb_buf *b, const char *path, const prism_analysis *a)
{
    text_lines t = { .path = path, .a = a };
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "lines");
    bool ok = lines_json(&w, summary_text, &t, 2, false);
    pb_json_end_object(&w);
    return ok && pb_json_finish(&w) && !b->oom;
}

bool analyze_write_html(FILE *f, const char *path, const prism_analysis *a)
{
    pb_buf d[4] = { { 0 }, { 0 }, { 0 }, { 0 } };
    static const char *const ids[4] = { "analyze", "flame", "memory", "summary" };
    bool ok = analyze_json_buf(&d[0], path, a, HTML_MAX_STEPS) &&
              flame_json(&d[1], a, NULL, NULL) && memory_json(&d[2], a) &&
              summary_json(&d[3], path, a) && page(f, "analyze", path, ids, d, 4);
    for (size_t i = 0; i < 4; i++)
        pb_buf_free(&d[i]);
    return ok;
}

/* The rank x step heatmap: {"ranks": [id, ...], "bins": B, "every": E,
 * "first": [first aligned step index of each bin], "step_ns": [[per rank,
 * per bin: the slowest step of the bin, or null], ...], "work_ns": the
 * same of the work (the step less its waits)}, at most HTML_HEAT_BINS
 * bins. */
static bool heat_json(pb_buf *b, const prism_job *j)
{
    size_t every = j->nsteps > HTML_HEAT_BINS ? (j->nsteps + HTML_HEAT_BINS - 1) / HTML_HEAT_BINS
                                              : 1;
    size_t bins = (j->nsteps + every - 1) / every;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "ranks");
    pb_json_begin_array(&w);
    for (size_t r = 0; r < j->nranks; r++)
        pb_json_int(&w, j->ranks[r].id);
    pb_json_end_array(&w);
    pb_json_kuint(&w, "bins", bins);
    pb_json_kuint(&w, "every", every);
    pb_json_key(&w, "first");
    pb_json_begin_array(&w);
    for (size_t k = 0; k < bins; k++)
        pb_json_uint(&w, j->step_index[k * every]);
    pb_json_end_array(&w);
    for (int work = 0; work < 2; work++) {
        pb_json_key(&w, work ? "work_ns" : "step_ns");
        pb_json_begin_array(&w);
        for (size_t r = 0; r < j->nranks; r++) {
            pb_json_begin_array(&w);
            for (size_t k = 0; k < bins; k++) {
                double most = -1;
                for (size_t s = k * every; s < (k + 1) * every && s < j->nsteps; s++) {
                    double v = work ? prism_job_work(j, r, s) : prism_job_step(j, r, s);
                    if (isfinite(v) && v > most)
                        most = v;
                }
                if (most >= 0)
                    pb_json_uint(&w, (uint64_t)llround(most));
                else
                    pb_json_null(&w);
            }
            pb_json_end_array(&w);
        }
        pb_json_end_array(&w);
    }
    pb_json_end_object(&w);
    return pb_json_finish(&w) && !b->oom;
}

bool job_write_html(FILE *f, const prism_job *j)
{
    pb_buf d[2] = { { 0 }, { 0 } };
    static const char *const ids[2] = { "job", "heatmap" };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool ok = m && job_write_json(m, j, false);
    if (m && fclose(m) != 0)
        ok = false;
    ok = ok && pb_buf_append(&d[0], buf, len) && heat_json(&d[1], j);
    free(buf);
    char title[64];
    snprintf(title, sizeof title, "%zu ranks", j->nranks);
    ok = ok && page(f, "job", title, ids, d, 2);
    for (size_t i = 0; i < 2; i++)
        pb_buf_free(&d[i]);
    return ok;
}

/* {"run": [compare's lines on the whole run, each sentence one line],
 * "regions_legend": the legend of its table of regions, "folded_legend":
 * that of its p-value 'folded', "hooks_legend": that of its mark 'h', each one line}. */
static bool words_json(pb_buf *b, const prism_analysis *a, const prism_analysis *n,
                       const prism_compare *c)
{
    text_lines t = { .a = a, .b = n, .c = c };
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "run");
    bool ok = lines_json(&w, run_text, &t, 0, true);
    static const char *const keys[3] = { "regions_legend", "folded_legend", "hooks_legend" };
    const char *const *legends[3] = { compare_regions_legend, compare_folded_legend,
                                      compare_hooks_legend };
    for (size_t k = 0; k < 3; k++) {
        pb_buf legend = { 0 };
        for (size_t i = 0; legends[k][i]; i++)
            pb_buf_printf(&legend, "%s%s", i ? " " : "", legends[k][i]);
        pb_json_kstring(&w, keys[k], pb_buf_str(&legend));
        ok = ok && !legend.oom;
        pb_buf_free(&legend);
    }
    pb_json_end_object(&w);
    return ok && pb_json_finish(&w) && !b->oom;
}

bool compare_write_html(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c)
{
    pb_buf d[3] = { { 0 }, { 0 }, { 0 } };
    static const char *const ids[3] = { "compare", "flame", "words" };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool ok = m && compare_write_json(m, pa, pb, a, b, c);
    if (m && fclose(m) != 0)
        ok = false;
    ok = ok && pb_buf_append(&d[0], buf, len) && flame_json(&d[1], b, a, c) &&
         words_json(&d[2], a, b, c);
    free(buf);
    pb_buf t = { 0 };
    pb_buf_printf(&t, "%s -> %s", pa, pb);
    ok = ok && !t.oom && page(f, "compare", pb_buf_str(&t), ids, d, 3);
    pb_buf_free(&t);
    for (size_t i = 0; i < 3; i++)
        pb_buf_free(&d[i]);
    return ok;
}
