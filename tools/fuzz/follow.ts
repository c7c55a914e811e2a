import { followJournal, type FollowResult } from "../../src/replay/follow.ts";
import { FollowLines } from "../../src/replay/follow-lines.ts";

/** What one `replay --follow` of a finished journal printed and how its events were read. */
export interface FinishedFollow {
  result: FollowResult;
  /** index:line of each event */
  at: string[];
  /** The lines printed (prose, or JSON). */
  text: string;
  /** Events read by a fast path (0 reading row by row). */
  loaded: number;
  /** Events written as their own bytes (the rows the verify kernel took; JSON only). */
  verbatim: number;
}

/**
 * `replay --follow` of a journal that no longer grows (its run gone), as
 * prose or `--as-json` prints it. `fastFrom`: the bytes from which the
 * catch-up takes the fast passes (Infinity: row by row, the reference).
 */
export async function followFinished(path: string, fastFrom: number, json: boolean): Promise<FinishedFollow> {
  const lines = new FollowLines(json);
  const decoder = new TextDecoder();
  let text = "";
  const at: string[] = [];
  let loaded = 0;
  let verbatim = 0;
  const result = await followJournal({
    path,
    runAlive: () => false,
    signal: new AbortController().signal,
    quietMs: 0,
    fastFrom,
    wants: json ? "json" : "display",
    onEvent: (index, line, ev) => {
      at.push(`${index}:${line}`);
      if (ev.via !== "whole") loaded++;
      if (ev.via === "verbatim") verbatim++;
      lines.event(index, ev);
    },
    drain: () => {
      text += decoder.decode(lines.view());
      lines.reset();
    },
  });
  return { result, at, text, loaded, verbatim };
}
