import CLIENT_JS from "./client.js" with { type: "text" };
import STYLE_CSS from "./style.css" with { type: "text" };
import { ByteSink, writeUnicodeEscape } from "../pyjson/encode-bytes.ts";

/**
 * The timeline page's fixed parts: the document head (a Content-Security-
 * Policy that allows only this page's own script and style, by hash, and no
 * fetch of any kind), the static skeleton, the data blocks and the script.
 * Journal text enters the page in two ways only: HTML-escaped in the static
 * verdict banner, and as JSON inside `<script type="application/json">`
 * blocks with `<`, `>`, `&` and the JS line separators written as `\u` escapes, so no
 * field can close the block or open markup.
 */

const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** Control, bidi and zero-width characters as visible `⟦U+XXXX⟧` (the page's script does the same). */
export function visible(s: string): string {
  return s.replace(HIDDEN, (c) => `\u27e6U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e7`);
}

export function escapeHtml(s: string): string {
  return visible(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/g;

/** JSON that is safe inside a `<script type="application/json">` block. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(SCRIPT_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function dataBlock(kind: "events" | "attempts" | "summary", value: unknown): string {
  return `${blockOpen(kind)}${scriptJson(value)}</script>\n`;
}

function blockOpen(kind: string): string {
  return `<script type="application/json" class="tl-data" data-kind="${kind}">`;
}

const utf8 = new TextEncoder();
const EVENTS_OPEN = utf8.encode(`${blockOpen("events")}[`);
const BLOCK_CLOSE = utf8.encode("]</script>\n");

/**
 * The events data block of items already in their `scriptJson` form, as
 * UTF-8 and joined by commas (`items`): the bytes of `dataBlock("events", …)`
 * of the items.
 */
export function eventsBlock(items: Uint8Array): Uint8Array {
  const out = new Uint8Array(EVENTS_OPEN.length + items.length + BLOCK_CLOSE.length);
  out.set(EVENTS_OPEN, 0);
  out.set(items, EVENTS_OPEN.length);
  out.set(BLOCK_CLOSE, EVENTS_OPEN.length + items.length);
  return out;
}

/** Append `text` as UTF-8 to `out`; its UTF-16 length. */
export function appendText(out: ByteSink, text: string): number {
  out.reserve(text.length * 3);
  out.len += utf8.encodeInto(text, out.buf.subarray(out.len)).written;
  return text.length;
}

/** What a byte of UTF-8 text is to appendScriptString. */
const enum Byte {
  Plain = 0,
  /** `"`, `\`, a control character, `<`, `>`, `&`: written escaped */
  Escaped = 1,
  /** the first byte of a two- or three-byte character (one UTF-16 unit) */
  Lead = 2,
  /** the first byte of a four-byte character (a surrogate pair) */
  Lead4 = 3,
  /** E2, which begins U+2028 and U+2029 */
  E2 = 4,
}

const BYTE_CLASS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) BYTE_CLASS[c] = Byte.Escaped;
for (const c of [0x22, 0x5c, 0x3c, 0x3e, 0x26]) BYTE_CLASS[c] = Byte.Escaped;
for (let c = 0xc0; c < 0xf0; c++) BYTE_CLASS[c] = Byte.Lead;
for (let c = 0xf0; c < 0x100; c++) BYTE_CLASS[c] = Byte.Lead4;
BYTE_CLASS[0xe2] = Byte.E2;
/** JSON.stringify's two-character escapes (0: none). */
const SHORT = new Uint8Array(0x60);
for (const [c, l] of [[0x08, 0x62], [0x09, 0x74], [0x0a, 0x6e], [0x0c, 0x66], [0x0d, 0x72], [0x22, 0x22], [0x5c, 0x5c]] as const) SHORT[c] = l;

/**
 * Append the UTF-8 text `b[s, e)` as `scriptJson` writes it inside a JSON
 * string (no quotes): `"`, `\` and controls escaped as JSON.stringify
 * escapes them, `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes, the rest
 * as it is; only the text's first `maxUnits` UTF-16 code units, as `slice`
 * cuts a string (a pair cut in half leaves its high surrogate, which
 * JSON.stringify writes as an escape). Returns the UTF-16 length of what
 * it appended. The text must be valid UTF-8.
 */
export function appendScriptString(out: ByteSink, b: Uint8Array, s: number, e: number, maxUnits = Number.MAX_SAFE_INTEGER): number {
  out.reserve(e - s);
  let o: Uint8Array = out.buf;
  let l = out.len;
  let taken = 0;
  let units = 0;
  let p = s;
  while (p < e && taken < maxUnits) {
    const c = b[p]!;
    const k = BYTE_CLASS[c]!;
    if (k === Byte.Plain) {
      if (l === o.length) o = grown(out, l, e - p);
      o[l++] = c;
      p++;
      taken++;
      units++;
      continue;
    }
    if (k === Byte.Lead4) {
      if (taken + 1 === maxUnits) {
        // the pair's high surrogate alone
        const cp = ((c & 7) << 18) | ((b[p + 1]! & 63) << 12) | ((b[p + 2]! & 63) << 6) | (b[p + 3]! & 63);
        if (l + 6 > o.length) o = grown(out, l, 6);
        l = writeUnicodeEscape(o, l, 0xd800 + ((cp - 0x10000) >> 10));
        units += 6;
        break;
      }
      if (l + 4 > o.length) o = grown(out, l, 4);
      o[l++] = c;
      o[l++] = b[p + 1]!;
      o[l++] = b[p + 2]!;
      o[l++] = b[p + 3]!;
      p += 4;
      taken += 2;
      units += 2;
      continue;
    }
    if (k === Byte.Escaped) {
      if (l + 6 > o.length) o = grown(out, l, 6);
      const short = c < 0x60 ? SHORT[c]! : 0;
      if (short !== 0) {
        o[l++] = 0x5c;
        o[l++] = short;
        units += 2;
      } else {
        l = writeUnicodeEscape(o, l, c);
        units += 6;
      }
      p++;
      taken++;
      continue;
    }
    // a two- or three-byte character
    const n = c < 0xe0 ? 2 : 3;
    if (k === Byte.E2 && b[p + 1] === 0x80 && (b[p + 2] === 0xa8 || b[p + 2] === 0xa9)) {
      if (l + 6 > o.length) o = grown(out, l, 6);
      l = writeUnicodeEscape(o, l, b[p + 2] === 0xa8 ? 0x2028 : 0x2029);
      units += 6;
    } else {
      if (l + n > o.length) o = grown(out, l, n);
      for (let i = 0; i < n; i++) o[l++] = b[p + i]!;
      units++;
    }
    p += n;
    taken++;
  }
  out.len = l;
  return units;
}

/** `out`'s buffer grown to hold `n` more bytes after its first `l`. */
function grown(out: ByteSink, l: number, n: number): Uint8Array {
  out.len = l;
  out.reserve(n + 64);
  return out.buf;
}

/** UTF-16 code units of the valid UTF-8 text `b[s, e)`. */
export function utf16Length(b: Uint8Array, s: number, e: number): number {
  let n = 0;
  for (let p = s; p < e; p++) {
    const c = b[p]!;
    if ((c & 0xc0) !== 0x80) n += c >= 0xf0 ? 2 : 1;
  }
  return n;
}

function sha256Base64(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("base64");
}

export interface Banner {
  /** ok: verified against a seal; warn: chain intact, no seal; bad: negative verdict. */
  level: "ok" | "warn" | "bad";
  title: string;
  lines: string[];
}

export function pageHead(runId: string, banner: Banner): string {
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${sha256Base64(CLIENT_JS)}'`,
    `style-src 'sha256-${sha256Base64(STYLE_CSS)}'`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const lines = banner.lines.map((l) => `<li class="mono">${escapeHtml(l)}</li>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bernstein timeline · ${escapeHtml(runId)}</title>
<style>${STYLE_CSS}</style>
</head>
<body>
<main>
<h1>Run timeline · <span class="mono">${escapeHtml(runId)}</span></h1>
<div id="verdict" class="verdict ${banner.level}">${escapeHtml(banner.title)}${lines ? `<ul>${lines}</ul>` : ""}</div>
<p id="status" class="note">Loading… (this page needs JavaScript)</p>
<section><dl id="facts"></dl></section>
<section id="timeline">
<h2>Attempts</h2>
<div class="bar-controls">
<label>Lanes <select id="group"><option value="role">per role</option><option value="agent">per agent</option><option value="model">per model</option></select></label>
<span><button id="zoom-out" type="button">−</button> <button id="zoom-in" type="button">+</button> <button id="zoom-fit" type="button">fit</button></span>
<div id="legend" class="legend"></div>
</div>
<div id="density" hidden><p id="density-note" class="note"></p><div class="dscroll"><svg id="density-svg"></svg></div></div>
<p id="gantt-empty" class="note" hidden>No task attempt (task_claimed) was recorded.</p>
<div id="gantt"><div id="gantt-sizer"></div></div>
<p class="note">One bar per task attempt, from its task_claimed to its agent's reap; click a bar for its events and payloads.</p>
</section>
<section id="charts" class="charts">
<div class="chart"><h2>Cumulative cost <span id="cost-total" class="note"></span></h2><svg id="cost-svg"></svg></div>
<div class="chart"><h2>Cumulative tokens <span id="tokens-total" class="note"></span></h2><p id="tokens-none" class="note">No token counts are recorded in this journal.</p><svg id="tokens-svg"></svg></div>
<div class="chart"><h2>Events over time</h2><svg id="events-svg"></svg></div>
<div class="chart"><h2>Ticks <span id="ticks-total" class="note"></span></h2><svg id="ticks-svg"></svg></div>
</section>
<section>
<h2>Selection</h2>
<div id="detail"><p class="note">Click a bar or an event.</p></div>
<div id="payload-title" class="mono"></div>
<pre id="payload" hidden></pre>
</section>
<section>
<h2>Events</h2>
<div class="filters">
<label>Event <select id="f-event"><option value="">all</option></select></label>
<label>Agent <input id="f-agent" list="agents-list" placeholder="agent id"></label>
<label>Task <input id="f-task" list="tasks-list" placeholder="task id"></label>
<button id="f-clear" type="button">clear</button>
<span id="shown" class="note"></span>
</div>
<datalist id="agents-list"></datalist><datalist id="tasks-list"></datalist>
<div class="row-head"><span>#</span><span>time</span><span>event</span><span>agent</span><span>task</span><span>detail</span></div>
<div id="rows" class="rows"><div id="rows-sizer" class="rows-sizer"><div id="rows-win" class="rows-win"></div></div></div>
</section>
</main>
`;
}

export function pageTail(): string {
  return `<script>${CLIENT_JS}</script>\n</body>\n</html>\n`;
}
