/**
 * The plain-http ranged reader (src/storage/http1.ts) against a scripted
 * TCP server: what it does with answers a real server may give (a kept-
 * alive connection reused or closed, a 200 that ignored Range, a chunked
 * body, a body cut short) and that the body is pulled only as it is read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { closeIdle, request, type BodyReader } from "../../src/storage/http1.ts";

const OBJECT = Buffer.from(Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(""));
const BIG = 8 << 20;

/** How the server answers a request, by its path. */
type Script = (range: [number, number] | null) => { head: string; body: Uint8Array; close?: boolean };
const scripts: Record<string, Script> = {
  "/ranged": (r) => {
    const [a, b] = r ?? [0, OBJECT.length - 1];
    return { head: `HTTP/1.1 206 Partial Content\r\nContent-Length: ${b - a + 1}\r\nContent-Range: bytes ${a}-${b}/${OBJECT.length}`, body: OBJECT.subarray(a, b + 1) };
  },
  "/ignores-range": () => ({ head: `HTTP/1.1 200 OK\r\nContent-Length: ${OBJECT.length}`, body: OBJECT }),
  "/chunked": () => ({ head: "HTTP/1.1 206 Partial Content\r\nTransfer-Encoding: chunked", body: Buffer.from("5\r\nabcde\r\n0\r\n\r\n") }),
  "/cut": () => ({ head: "HTTP/1.1 206 Partial Content\r\nContent-Length: 1000", body: OBJECT.subarray(0, 400), close: true }),
  "/missing": () => ({ head: "HTTP/1.1 404 Not Found\r\nContent-Length: 60", body: Buffer.from("<Error><Code>NoSuchKey</Code><Message>x</Message></Error>   ") }),
  "/big": () => ({ head: `HTTP/1.1 206 Partial Content\r\nContent-Length: ${BIG}`, body: new Uint8Array(BIG) }),
};

let server: TCPSocketListener<{ buf: string; pending: Uint8Array | null }>;
let base: URL;
let connections = 0;
const open = new Set<{ end(): void }>();
/** Bytes of /big the server managed to hand to the kernel so far. */
let bigWritten = 0;

function answer(s: Parameters<NonNullable<Parameters<typeof Bun.listen>[0]["socket"]["data"]>>[0], req: string): void {
  const path = /^[A-Z]+ (\S+)/.exec(req)![1]!;
  const m = /\r\nRange: bytes=(\d+)-(\d+)/i.exec(req);
  const a = scripts[path]!(m ? [Number(m[1]), Number(m[2])] : null);
  s.write(`${a.head}\r\n\r\n`);
  const n = s.write(a.body);
  if (path === "/big") bigWritten = n;
  if (n < a.body.length) (s.data as { pending: Uint8Array | null }).pending = a.body.subarray(n);
  if (a.close) s.end();
}

beforeAll(() => {
  server = Bun.listen<{ buf: string; pending: Uint8Array | null }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(s) {
        connections++;
        open.add(s);
        s.data = { buf: "", pending: null };
      },
      data(s, d) {
        s.data.buf += d.toString("latin1");
        const end = s.data.buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const req = s.data.buf.slice(0, end);
        s.data.buf = s.data.buf.slice(end + 4);
        answer(s as never, req);
      },
      close(s) {
        open.delete(s);
      },
      drain(s) {
        const p = s.data.pending;
        if (!p) return;
        const n = s.write(p);
        bigWritten += n;
        s.data.pending = n < p.length ? p.subarray(n) : null;
      },
    },
  });
  base = new URL(`http://127.0.0.1:${server.port}`);
});

afterAll(() => {
  closeIdle();
  server.stop(true);
});

async function drain(body: BodyReader): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for (;;) {
    const r = await body.read();
    if (r.done) return Buffer.concat(parts);
    parts.push(r.value);
  }
}

describe("http1: the ranged reader of plain-http endpoints", () => {
  test("a ranged GET returns exactly the range; the kept-alive connection is reused", async () => {
    const before = connections;
    for (const [a, b] of [[0, 10], [99_990, 100_000], [5_000, 60_000]] as const) {
      const r = await request("GET", base, "/ranged", {}, { start: a, end: b });
      expect(r.status).toBe(206);
      expect((await drain(r.body)).equals(OBJECT.subarray(a, b))).toBe(true);
    }
    expect(connections - before).toBe(1);
  });

  test("an idle connection the server closed is replaced, not reported", async () => {
    await drain((await request("GET", base, "/ranged", {}, { start: 0, end: 5 })).body);
    // The server drops every connection it holds (as at its keep-alive timeout).
    for (const s of open) s.end();
    await Bun.sleep(50);
    const before = connections;
    const r = await request("GET", base, "/ranged", {}, { start: 10, end: 20 });
    expect((await drain(r.body)).equals(OBJECT.subarray(10, 20))).toBe(true);
    expect(connections - before).toBe(1);
  });

  test("a 200 that ignored Range is cut to the range", async () => {
    const r = await request("GET", base, "/ignores-range", {}, { start: 70_000, end: 70_100 });
    expect(r.status).toBe(200);
    expect((await drain(r.body)).equals(OBJECT.subarray(70_000, 70_100))).toBe(true);
  });

  test("a chunked object body is refused, never guessed at; a cut body is an error, not an end", async () => {
    await expect(request("GET", base, "/chunked", {}, { start: 0, end: 5 })).rejects.toThrow("without a Content-Length");
    const cut = await request("GET", base, "/cut", {}, { start: 0, end: 1000 });
    await expect(drain(cut.body)).rejects.toThrow(/connection closed .* 600 bytes of the body still to come/);
  });

  test("an error answer: its status, and its body to read the S3 code from", async () => {
    const r = await request("GET", base, "/missing", {}, { start: 0, end: 10 });
    expect(r.status).toBe(404);
    expect((await drain(r.body)).toString()).toContain("<Code>NoSuchKey</Code>");
  });

  test("a body is pulled from the socket only as it is read (the rest waits in the kernel)", async () => {
    const r = await request("GET", base, "/big", {}, { start: 0, end: BIG });
    await r.body.read();
    await Bun.sleep(300);
    // The reader took one chunk: the server could not write the 8 MiB body out.
    expect(bigWritten).toBeLessThan(BIG);
    expect((await drain(r.body)).length).toBeGreaterThan(BIG - (1 << 20));
    await Bun.sleep(50);
    expect(bigWritten).toBe(BIG);
  });
});
