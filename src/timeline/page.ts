import CLIENT_JS from "./client.js" with { type: "text" };
import STYLE_CSS from "./style.css" with { type: "text" };

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
  return `<script type="application/json" class="tl-data" data-kind="${kind}">${scriptJson(value)}</script>\n`;
}

/** A data block of items already in their `scriptJson` form (the same bytes as `dataBlock` of the items). */
export function dataBlockOf(kind: "events" | "attempts", items: readonly string[]): string {
  return `<script type="application/json" class="tl-data" data-kind="${kind}">[${items.join(",")}]</script>\n`;
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
