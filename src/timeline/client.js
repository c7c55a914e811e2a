// The timeline page's script. Runs from a local file with no network (the page's
// CSP forbids every fetch). Journal text is untrusted: it reaches the DOM
// only through textContent and fixed class names, never as markup, and
// control, bidi and zero-width characters are shown as visible ⟦U+XXXX⟧.
(function () {
  "use strict";
  // The SVG namespace, read from the page's own markup (no URL string in the page).
  var SVGNS = document.getElementById("cost-svg").namespaceURI;
  var OUTCOMES = ["done", "failed", "retried", "cancelled", "unfinished", "unknown"];
  var OUTCOME_TEXT = { done: "done", failed: "failed verification", retried: "failed, retried", cancelled: "cancelled / requeued", unfinished: "unfinished", unknown: "no outcome recorded" };
  var ROW_H = 20, LANE_H = 18, AXIS_H = 22, LABEL_W = 190;
  var HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
  var HIDDEN_CELL = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

  function mark(c) {
    var h = c.charCodeAt(0).toString(16).toUpperCase();
    return "\u27e6U+" + "0000".slice(h.length) + h + "\u27e7";
  }
  function vis(s) { return String(s).replace(HIDDEN, mark); }
  function cell(s) { return String(s).replace(HIDDEN_CELL, mark); }
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

  function fmtMs(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return "?";
    var neg = ms < 0; ms = Math.abs(ms);
    var s = Math.floor(ms / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60);
    var frac = String(Math.floor(ms % 1000)); frac = "000".slice(frac.length) + frac;
    var ss = String(s % 60); ss = ss.length < 2 ? "0" + ss : ss;
    var out = (h ? h + ":" + (m % 60 < 10 ? "0" : "") + (m % 60) : String(m)) + ":" + ss + "." + frac;
    return (neg ? "-" : "") + out;
  }
  function fmtSpan(ms) {
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
    if (ms < 3600000) return Math.floor(ms / 60000) + " min " + Math.round((ms % 60000) / 1000) + " s";
    return Math.floor(ms / 3600000) + " h " + Math.round((ms % 3600000) / 60000) + " min";
  }

  // Compact recorded JSON, re-indented without parsing (numbers stay as recorded).
  function pretty(s) {
    var out = "", ind = 0, i = 0, n = s.length;
    function nl() { out += "\n"; for (var k = 0; k < ind; k++) out += "  "; }
    while (i < n) {
      var c = s[i];
      if (c === '"') {
        var j = i + 1;
        while (j < n && s[j] !== '"') { if (s[j] === "\\") j++; j++; }
        out += s.slice(i, j + 1); i = j + 1; continue;
      }
      if (c === "{" || c === "[") {
        var close = c === "{" ? "}" : "]", k2 = i + 1;
        while (s[k2] === " ") k2++;
        if (s[k2] === close) { out += c + close; i = k2 + 1; continue; }
        out += c; ind++; nl(); i++; continue;
      }
      if (c === "}" || c === "]") { ind--; nl(); out += c; i++; continue; }
      if (c === ",") { out += ","; nl(); i++; while (s[i] === " ") i++; continue; }
      if (c === ":") { out += ": "; i++; while (s[i] === " ") i++; continue; }
      if (c === " ") { i++; continue; }
      out += c; i++;
    }
    return out;
  }

  // ---------------------------------------------------------------- data
  var events = [], attempts = [], summary = null;
  var blocks = document.querySelectorAll("script.tl-data");
  for (var b = 0; b < blocks.length; b++) {
    var kind = blocks[b].getAttribute("data-kind"), v = JSON.parse(blocks[b].textContent);
    if (kind === "events") for (var r = 0; r < v.length; r++) events.push(v[r]);
    else if (kind === "attempts") for (var a = 0; a < v.length; a++) attempts.push(v[a]);
    else if (kind === "summary") summary = v;
  }
  if (!summary) { $("status").textContent = "This page is incomplete: its summary block is missing."; return; }
  var verdict = summary.verdict;
  // Attempt tuples: [agent, task, model, role, start_ms, end_ms, outcome, signals, reason, event indices]
  // The table holds one window of the run's events (all of them, for most runs): event idx is events[idx - base].
  var base = events.length ? events[0][0] : 0, win = summary.window || null;
  function eventAt(idx) {
    var k = idx - base;
    return k >= 0 && k < events.length && events[k][0] === idx ? events[k] : null;
  }
  function payloadOf(idx) { var e = eventAt(idx); return e ? e[6] : null; }
  function eventName(idx) { var e = eventAt(idx); return e ? e[2] : ""; }
  function embeddedText() {
    if (!win) return "only the first " + summary.embedded + " events are embedded";
    return summary.embedded ? "only events #" + win.from + " to #" + win.to + " are embedded" : "no event is embedded";
  }

  // -------------------------------------------------------------- header
  function fact(label, value, id) {
    var d = el("div"), dd = el("dd", "", vis(value));
    d.appendChild(el("dt", "", label));
    if (id) dd.id = id;
    dd.title = vis(value);
    d.appendChild(dd);
    $("facts").appendChild(d);
  }
  fact("Run", summary.run_id, "f-run");
  fact("Started", summary.started || "?", "f-start");
  fact("Duration", fmtSpan(summary.duration_ms), "f-duration");
  fact("Branch", summary.git_branch || "-", "f-branch");
  fact("SHA", summary.git_sha || "-", "f-sha");
  fact("Events", String(summary.events) + (summary.discarded ? " (" + summary.discarded + " unreadable line(s))" : ""), "f-events");
  fact("Attempts", String(summary.attempts), "f-attempts");
  fact("Fingerprint", summary.fingerprint || "-", "f-fingerprint");
  fact("Merkle head", summary.head || (verdict.ok ? "(empty)" : "none: the chain does not verify"), "f-head");
  fact("Verdict", verdict.text, "f-verdict");

  // --------------------------------------------------------------- gantt
  // The bars span the run, or the window's time when the page has one.
  var origin = win && win.t0 !== null ? win.t0 : 0;
  var total = Math.max(1, win && win.t1 !== null ? win.t1 - origin : summary.duration_ms);
  var grouping = summary.lanes || "agent";
  $("group").value = grouping;
  var gantt = $("gantt"), sizer = $("gantt-sizer"), zoom = 1, ganttRows = [], selected = -1;
  var legend = $("legend"), counts = {};
  for (var i = 0; i < attempts.length; i++) counts[attempts[i][6]] = (counts[attempts[i][6]] || 0) + 1;
  OUTCOMES.forEach(function (o) {
    var s = el("span", "", OUTCOME_TEXT[o] + " (" + (counts[o] || 0) + ")");
    s.style.setProperty("--c", "var(--" + o + ")");
    legend.appendChild(s);
  });

  function layout() {
    var col = grouping === "agent" ? 0 : grouping === "model" ? 2 : 3;
    var lanes = {}, order = [];
    for (var i = 0; i < attempts.length; i++) {
      var key = attempts[i][col] || "(none)";
      if (!lanes[key]) { lanes[key] = []; order.push(key); }
      lanes[key].push(i);
    }
    ganttRows = [];
    order.forEach(function (key) {
      var list = lanes[key].sort(function (x, y) { return attempts[x][4] - attempts[y][4]; });
      var subs = [], ends = [];
      list.forEach(function (ai) {
        var s = attempts[ai][4], r = 0;
        while (r < ends.length && ends[r] > s) r++;
        if (r === ends.length) { ends.push(0); subs.push([]); }
        ends[r] = Math.max(attempts[ai][5], s + 1e-9); subs[r].push(ai);
      });
      subs.forEach(function (bars, k) { ganttRows.push({ label: k === 0 ? key : "", bars: bars }); });
    });
    $("gantt-empty").hidden = ganttRows.length > 0;
  }
  function plotWidth() { return Math.max(200, (gantt.clientWidth - LABEL_W - 12) * zoom); }
  function drawGantt() {
    var w = plotWidth(), scale = w / total, H = AXIS_H + ganttRows.length * LANE_H + 4;
    sizer.style.width = (LABEL_W + w + 8) + "px";
    sizer.style.height = H + "px";
    gantt.style.height = Math.min(420, H + 18) + "px";
    var top = gantt.scrollTop, left = gantt.scrollLeft, viewH = gantt.clientHeight, viewW = gantt.clientWidth;
    var first = Math.max(0, Math.floor((top - AXIS_H) / LANE_H) - 2), last = Math.min(ganttRows.length, Math.ceil((top + viewH) / LANE_H) + 2);
    var svg = sv("svg", { width: LABEL_W + w + 8, height: H, id: "gantt-svg" });
    for (var r = first; r < last; r++) {
      var y = AXIS_H + r * LANE_H, row = ganttRows[r];
      if (r % 2 === 0) svg.appendChild(sv("rect", { x: 0, y: y, width: LABEL_W + w + 8, height: LANE_H, "class": "lane-bg" }));
      var runStart = -1, runEnd = -1, runCls = "", runIdx = -1, runN = 0;
      var flush = function () {
        if (runIdx < 0) return;
        var rect = sv("rect", { x: runStart, y: y + 2, width: Math.max(1, runEnd - runStart), height: LANE_H - 4, rx: 2, "class": "bar o-" + runCls + (runIdx === selected ? " sel" : ""), "data-a": runIdx, "data-n": runN });
        var at = attempts[runIdx], t = sv("title", {});
        t.textContent = vis(at[1] + " · " + at[0] + " · " + OUTCOME_TEXT[at[6]] + " · " + fmtSpan(at[5] - at[4]) + (runN > 1 ? " (+" + (runN - 1) + " more at this zoom)" : ""));
        rect.appendChild(t);
        svg.appendChild(rect);
        runIdx = -1; runN = 0;
      };
      for (var k = 0; k < row.bars.length; k++) {
        var ai = row.bars[k], at = attempts[ai];
        var x0 = LABEL_W + (at[4] - origin) * scale, x1 = LABEL_W + (at[5] - origin) * scale;
        if (x1 < left - 2 || x0 > left + viewW + 2) continue;
        // Bars narrower than a pixel that touch merge, so a huge run draws at most a few per pixel.
        if (runIdx >= 0 && x1 - x0 < 2 && (runEnd - runStart < 2 || runN > 1) && at[6] === runCls && x0 <= runEnd + 1) {
          runEnd = Math.max(runEnd, x1); runN++; continue;
        }
        flush();
        runStart = x0; runEnd = Math.max(x1, x0 + 1); runCls = at[6]; runIdx = ai; runN = 1;
      }
      flush();
      if (row.label) {
        svg.appendChild(sv("rect", { x: left, y: y, width: LABEL_W - 4, height: LANE_H, "class": "lane-label-bg" }));
        var lt = sv("text", { x: left + 4, y: y + 13, "class": "lane-label" });
        var lab = cell(row.label);
        lt.textContent = lab.length > 26 ? lab.slice(0, 25) + "\u2026" : lab;
        var tt = sv("title", {}); tt.textContent = cell(row.label); lt.appendChild(tt);
        svg.appendChild(lt);
      }
    }
    var axis = sv("g", { "class": "axis" });
    axis.appendChild(sv("rect", { x: 0, y: top, width: LABEL_W + w + 8, height: AXIS_H, fill: "#fbfcfd" }));
    var step = niceStep(total, w / 90);
    for (var t = 0; t <= total; t += step) {
      var x = LABEL_W + t * scale;
      if (x < left - 60 || x > left + viewW + 60) continue;
      axis.appendChild(sv("line", { x1: x, x2: x, y1: top + AXIS_H - 4, y2: top + Math.min(H, viewH) }));
      var tx = sv("text", { x: x + 2, y: top + 12 }); tx.textContent = fmtSpan(origin + t); axis.appendChild(tx);
    }
    svg.appendChild(axis);
    var old = $("gantt-svg");
    if (old) sizer.replaceChild(svg, old); else sizer.appendChild(svg);
  }
  function niceStep(span, n) {
    var raw = span / Math.max(1, n), steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
    for (var i = 0; i < steps.length; i++) if (steps[i] >= raw) return steps[i];
    return Math.ceil(raw / 86400000) * 86400000;
  }
  var pending = false;
  function redraw() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; drawGantt(); }); } }
  if (verdict.ok) {
    layout();
    gantt.addEventListener("scroll", redraw);
    window.addEventListener("resize", redraw);
    $("group").addEventListener("change", function () { grouping = this.value; layout(); gantt.scrollTop = 0; drawGantt(); });
    $("zoom-in").addEventListener("click", function () { zoom = Math.min(4096, zoom * 2); drawGantt(); });
    $("zoom-out").addEventListener("click", function () { zoom = Math.max(1, zoom / 2); drawGantt(); });
    $("zoom-fit").addEventListener("click", function () { zoom = 1; drawGantt(); });
    gantt.addEventListener("click", function (e) {
      var t = e.target.closest ? e.target.closest("[data-a]") : null;
      if (t) showAttempt(Number(t.getAttribute("data-a")));
    });
    drawGantt();
  } else {
    // A journal that does not verify gets no timeline and no curves: only its rows, marked.
    $("timeline").hidden = true;
    $("charts").hidden = true;
  }

  // -------------------------------------------------------------- charts
  function chart(svgId, values, cumulative, bars, label) {
    var svg = $(svgId); clear(svg);
    var W = svg.clientWidth || 600, H = 120, pad = 22, n = values.length;
    if (!n) return;
    var ys = [], acc = 0, max = 0;
    for (var i = 0; i < n; i++) {
      var val = values[i];
      if (cumulative === "sum") { acc += val || 0; val = acc; }
      ys.push(val);
      if (val !== null && val > max) max = val;
    }
    var bw = (W - pad) / n;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.appendChild(sv("line", { x1: pad, x2: W, y1: H - 14, y2: H - 14, "class": "grid" }));
    var mx = sv("text", { x: 0, y: 10 }); mx.textContent = label(max); svg.appendChild(mx);
    var end = sv("text", { x: W - 60, y: H - 2 }); end.textContent = fmtSpan(Math.max(1, summary.duration_ms)); svg.appendChild(end);
    var zero = sv("text", { x: pad, y: H - 2 }); zero.textContent = "0"; svg.appendChild(zero);
    var ph = H - 30;
    if (bars) {
      for (var j = 0; j < n; j++) {
        if (!ys[j]) continue;
        var hgt = Math.max(1, ys[j] / (max || 1) * ph);
        svg.appendChild(sv("rect", { x: pad + j * bw, y: H - 14 - hgt, width: Math.max(1, bw - 0.5), height: hgt, "class": bars }));
      }
      return;
    }
    var pts = [], started = false;
    for (var k = 0; k < n; k++) {
      if (ys[k] === null) continue;
      var x = pad + (k + 1) * bw, y = H - 14 - (max ? ys[k] / max * ph : 0);
      if (!started) { pts.push((pad + k * bw) + "," + (H - 14)); started = true; }
      pts.push(x + "," + y);
    }
    if (pts.length) {
      svg.appendChild(sv("polygon", { points: pts.join(" ") + " " + pts[pts.length - 1].split(",")[0] + "," + (H - 14), "class": "area" }));
      svg.appendChild(sv("polyline", { points: pts.join(" "), "class": "line" }));
    }
  }
  // ------------------------------------------------------------- density
  // A run with too many attempts for one bar each: per lane, the attempts running at once (the curve) and those that
  // did not end done (red ticks), over the whole run; the window's span is shaded, its attempts are the bars above.
  function drawDensity() {
    var d = summary.density;
    if (!d || !verdict.ok) return;
    $("density").hidden = false;
    $("density-note").textContent = summary.attempts + " attempts, too many for one bar each: one curve per " + d.by + ", each on its own scale" +
      " (attempts running at once; red: attempts that did not end done) over the whole run; the bars below are the attempts of the window" +
      (win && win.t0 !== null ? ", " + fmtMs(win.t0) + " to " + fmtMs(win.t1) + " (events #" + win.from + " to #" + win.to + ")" : " (no event is in it)") +
      (d.undrawn ? "; " + d.undrawn + " of them are beyond the page's bound and not drawn" : "") +
      (d.folded_attempts ? "; lanes beyond the first " + (d.lanes.length - 1) + " are folded into (other)" : "") + ".";
    var svg = $("density-svg"); clear(svg);
    var W = svg.clientWidth || 900, LH = 30, n = 1;
    d.lanes.forEach(function (l) { n = Math.max(n, l.busy.length); });
    var H = d.lanes.length * LH + 16, pw = W - LABEL_W - 8, bw = pw / n;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("height", H);
    d.lanes.forEach(function (l, r) {
      var y0 = r * LH, base = y0 + LH - 3, ph = LH - 8, g = sv("g", { "class": "dlane", "data-lane": l.key });
      if (r % 2 === 0) g.appendChild(sv("rect", { x: 0, y: y0, width: W, height: LH, "class": "lane-bg" }));
      // Each lane on its own scale (its peak in its title): a lane of one short-lived agent stays visible beside (other).
      var max = 0;
      l.busy.forEach(function (v) { if (v > max) max = v; });
      var pts = [LABEL_W + "," + base];
      for (var k = 0; k < l.busy.length; k++) {
        var y = base - (max ? l.busy[k] / max * ph : 0);
        pts.push((LABEL_W + k * bw) + "," + y, (LABEL_W + (k + 1) * bw) + "," + y);
        if (l.failed[k]) g.appendChild(sv("rect", { x: LABEL_W + k * bw, y: base - 4, width: Math.max(1, bw), height: 4, "class": "dfail" }));
      }
      pts.push((LABEL_W + l.busy.length * bw) + "," + base);
      g.appendChild(sv("polygon", { points: pts.join(" "), "class": "darea" }));
      var lt = sv("text", { x: 4, y: y0 + 18, "class": "lane-label" }), lab = cell(l.key);
      lt.textContent = lab.length > 26 ? lab.slice(0, 25) + "\u2026" : lab;
      var tt = sv("title", {}); tt.textContent = cell(l.key) + " · " + l.attempts + " attempt(s) · at most " + max + " at once (mean over " + fmtSpan(d.bucket_ms) + ")"; lt.appendChild(tt);
      g.appendChild(lt);
      svg.appendChild(g);
    });
    var ax0 = sv("text", { x: LABEL_W, y: H - 3, "class": "daxis" }); ax0.textContent = "0"; svg.appendChild(ax0);
    var ax1 = sv("text", { x: W - 70, y: H - 3, "class": "daxis" }); ax1.textContent = fmtSpan(Math.max(1, summary.duration_ms)); svg.appendChild(ax1);
    // Over the lanes, translucent: where the window's bars and table are.
    if (win && win.t0 !== null) {
      var wx = LABEL_W + win.t0 / d.bucket_ms * bw, ww = Math.max(2, (win.t1 - win.t0) / d.bucket_ms * bw);
      svg.appendChild(sv("rect", { x: wx, y: 0, width: ww, height: H - 14, "class": "dwin" }));
    }
  }
  drawDensity();

  var series = summary.series;
  function drawCharts() {
    chart("cost-svg", series.cost, null, null, function (m) { return "$" + m.toFixed(4); });
    var anyTokens = series.tokens.some(function (x) { return x > 0; });
    $("tokens-none").hidden = anyTokens;
    if (anyTokens) chart("tokens-svg", series.tokens, "sum", null, function (m) { return Math.round(m) + " tokens"; });
    chart("events-svg", series.events, null, "ev", function (m) { return m + " events / " + fmtSpan(series.bucket_ms); });
    chart("ticks-svg", series.ticks, null, "tk", function (m) { return m + " ticks / " + fmtSpan(series.bucket_ms); });
  }
  drawCharts();
  // An agent that reported no cost makes the total unknown (or a known part of it), never a "$0.0000" that reads as free.
  $("cost-total").textContent = summary.cost_usd === null
    ? (summary.cost_known === false ? "unknown (an agent reported no cost)" : "no cost recorded")
    : summary.cost_known === false
      ? (summary.cost_usd > 0 ? "$" + summary.cost_usd.toFixed(4) + " + unknown in total" : "unknown (an agent reported no cost)")
      : "$" + summary.cost_usd.toFixed(4) + " in total";
  $("tokens-total").textContent = summary.tokens ? summary.tokens + " tokens in total" : "";
  $("ticks-total").textContent = summary.ticks + " ticks";

  // -------------------------------------------------------------- detail
  function showPayload(idx) {
    var p = payloadOf(idx);
    $("payload-title").textContent = "Event #" + idx + (eventName(idx) ? " · " + cell(eventName(idx)) : "");
    $("payload").textContent = p === null
      ? "The payload of event #" + idx + " is not in this page (" + embeddedText() + "); 'bernstein replay " + vis(summary.run_id) + " --as-json' prints every event."
      : vis(pretty(p));
    $("payload").hidden = false;
  }
  function showAttempt(ai) {
    var at = attempts[ai], d = $("detail");
    selected = ai;
    clear(d);
    d.appendChild(el("h3", "", cell(at[1]) + " — " + OUTCOME_TEXT[at[6]]));
    var dl = el("dl", "attempt");
    [["Agent", at[0]], ["Task", at[1]], ["Model", at[2] || "-"], ["Role", at[3] || "-"], ["From", fmtMs(at[4])], ["To", fmtMs(at[5])], ["Took", fmtSpan(at[5] - at[4])], ["Outcome", OUTCOME_TEXT[at[6]]]].forEach(function (kv) {
      dl.appendChild(el("dt", "", kv[0])); dl.appendChild(el("dd", "", cell(kv[1])));
    });
    d.appendChild(dl);
    if (at[7].length) {
      d.appendChild(el("div", "", "Failed signals:"));
      var ul = el("ul", "signals");
      at[7].forEach(function (s) { ul.appendChild(el("li", "", cell(s))); });
      d.appendChild(ul);
    }
    if (at[8]) d.appendChild(el("p", "reason", "Reason: " + cell(at[8])));
    var list = el("div", "evlist");
    attemptEvents(at).forEach(function (idx) {
      var btn = el("button", "", "#" + idx + (eventName(idx) ? " " + cell(eventName(idx)) : ""));
      btn.addEventListener("click", function () { showPayload(idx); });
      list.appendChild(btn);
    });
    d.appendChild(list);
    // The event that decided the outcome: the gate's failure when there is one, else the last.
    var evs = attemptEvents(at), pick = evs[evs.length - 1];
    for (var q = 0; q < evs.length; q++) if (eventName(evs[q]) === "task_verification_failed") { pick = evs[q]; break; }
    if (evs.length) showPayload(pick);
    if (verdict.ok) drawGantt();
  }
  function attemptEvents(at) { return at[9] || []; }

  // --------------------------------------------------------------- table
  var fEvent = $("f-event"), fAgent = $("f-agent"), fTask = $("f-task");
  var types = Object.keys(summary.types).sort();
  types.forEach(function (t) { var o = el("option", "", cell(t) + " (" + summary.types[t] + ")"); o.value = t; fEvent.appendChild(o); });
  function fillList(id, col) {
    var seen = {}, list = $(id), n = 0;
    for (var i = 0; i < events.length && n < 500; i++) {
      var v = events[i][col];
      if (v && !seen[v]) { seen[v] = 1; n++; var o = document.createElement("option"); o.value = v; list.appendChild(o); }
    }
    return seen;
  }
  var knownAgents = fillList("agents-list", 3), knownTasks = fillList("tasks-list", 4);
  var view = new Int32Array(events.length), viewN = 0, selRow = -1;
  var rowsBox = $("rows"), rowsSizer = $("rows-sizer"), rowsWin = $("rows-win");
  function matcher(value, known) {
    if (!value) return null;
    if (known[value]) return function (x) { return x === value; };
    return function (x) { return x.indexOf(value) >= 0; };
  }
  var lastFilter = null;
  function applyFilter() {
    // "change" follows "input" (and fires again on blur): redraw only for a new filter, so a click that blurs the field still lands.
    var key = JSON.stringify([fEvent.value, fAgent.value, fTask.value]);
    if (key === lastFilter) return;
    lastFilter = key;
    var ev = fEvent.value, ma = matcher(fAgent.value, knownAgents), mt = matcher(fTask.value, knownTasks);
    viewN = 0;
    for (var i = 0; i < events.length; i++) {
      var e = events[i];
      if (ev && e[2] !== ev) continue;
      if (ma && !ma(e[3])) continue;
      if (mt && !mt(e[4])) continue;
      view[viewN++] = i;
    }
    $("shown").textContent = "showing " + viewN + " of " + events.length + " event(s) in this page" +
      (summary.embedded < summary.events ? "; the run has " + summary.events + " (" + (win ? embeddedText().replace("only ", "") : "the first " + summary.embedded + " are embedded") + "; 'bernstein replay " + vis(summary.run_id) + " --as-json' prints all)" : "");
    rowsSizer.style.height = viewN * ROW_H + "px";
    rowsBox.scrollTop = 0;
    drawRows();
  }
  function drawRows() {
    var first = Math.max(0, Math.floor(rowsBox.scrollTop / ROW_H) - 5), last = Math.min(viewN, first + Math.ceil(rowsBox.clientHeight / ROW_H) + 10);
    rowsWin.style.top = first * ROW_H + "px";
    clear(rowsWin);
    var bad = verdict.ok ? Infinity : verdict.divergent_index === null ? Infinity : verdict.divergent_index;
    for (var k = first; k < last; k++) {
      var e = events[view[k]], row = el("div", "row" + (e[0] >= bad ? " unverified" : "") + (e[0] === selRow ? " sel" : ""));
      row.setAttribute("data-i", e[0]);
      [String(e[0]), e[1] === null ? "?" : fmtMs(e[1]), e[2], e[3], e[4], e[5]].forEach(function (c) {
        var s = el("span", "", cell(c)); s.title = cell(c); row.appendChild(s);
      });
      rowsWin.appendChild(row);
    }
  }
  var rowsPending = false;
  rowsBox.addEventListener("scroll", function () { if (!rowsPending) { rowsPending = true; requestAnimationFrame(function () { rowsPending = false; drawRows(); }); } });
  rowsWin.addEventListener("click", function (e) {
    var r = e.target.closest ? e.target.closest("[data-i]") : null;
    if (!r) return;
    selRow = Number(r.getAttribute("data-i"));
    showPayload(selRow);
    drawRows();
  });
  [fEvent, fAgent, fTask].forEach(function (f) { f.addEventListener("input", applyFilter); f.addEventListener("change", applyFilter); });
  $("f-clear").addEventListener("click", function () { fEvent.value = ""; fAgent.value = ""; fTask.value = ""; applyFilter(); });
  applyFilter();
  $("status").textContent = "";
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
})();
