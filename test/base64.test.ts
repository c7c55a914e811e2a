import { describe, expect, test } from "bun:test";
import { decodeBase64Canonical, decodePem, encodeBase64, encodedLength } from "../src/base64.ts";

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);

describe("decodeBase64Canonical", () => {
  test("every length round-trips in both forms, and the length option holds", () => {
    for (let n = 0; n <= 70; n++) {
      for (const form of ["std", "url"] as const) {
        const b = bytes(n);
        const text = encodeBase64(b, form);
        expect(text.length).toBe(encodedLength(n, form));
        expect(decodeBase64Canonical(text, { form })).toEqual(b);
        expect(decodeBase64Canonical(text, { form, length: n })).toEqual(b);
        expect(decodeBase64Canonical(text, { form, length: n + 1 })).toBeNull();
      }
    }
  });

  test("a 64-byte signature: every non-canonical text is refused", () => {
    const sig = encodeBase64(bytes(64));
    expect(sig.endsWith("==")).toBe(true);
    const last = sig.at(-3)!;
    const stray = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const malleated = [
      sig + "\n",
      sig + " ",
      " " + sig,
      sig.slice(0, -2),
      sig.slice(0, -1),
      sig + "=",
      sig.slice(0, 10) + "\n" + sig.slice(10),
      sig.slice(0, 10) + " " + sig.slice(10),
      sig.slice(0, -3) + stray[stray.indexOf(last) | 1] + "==",
      sig.slice(0, -3) + stray[stray.indexOf(last) | 8] + "==",
      sig.replace(/\+/g, "-").replace(/\//g, "_"),
      sig.slice(4),
      sig.slice(0, -2) + "AA==",
      "",
    ];
    for (const t of malleated) expect([JSON.stringify(t), decodeBase64Canonical(t, { length: 64 })]).toEqual([JSON.stringify(t), null]);
    expect(decodeBase64Canonical(sig, { length: 64 })).toEqual(bytes(64));
  });

  test("base64url is unpadded and URL-safe only", () => {
    const b = Uint8Array.from([0xfb, 0xff, 0xbf, 0x3e, 0x7f]);
    const url = encodeBase64(b, "url");
    expect(url).toBe("-_-_Pn8");
    expect(decodeBase64Canonical(url, { form: "url" })).toEqual(b);
    expect(decodeBase64Canonical(url + "=", { form: "url" })).toBeNull();
    expect(decodeBase64Canonical("+/+/Pn8", { form: "url" })).toBeNull();
    expect(decodeBase64Canonical(url, { form: "std" })).toBeNull();
    expect(decodeBase64Canonical("-_-_Pn9", { form: "url" })).toBeNull();
  });
});

describe("decodePem", () => {
  const der = bytes(100);
  const body = encodeBase64(der);
  const pem = `-----BEGIN PUBLIC KEY-----\n${body.slice(0, 64)}\n${body.slice(64, 128)}\n${body.slice(128)}\n-----END PUBLIC KEY-----\n`;

  test("the strict form, with LF or CRLF and whitespace around the block", () => {
    expect(decodePem(pem, "PUBLIC KEY")).toEqual(der);
    expect(decodePem(pem.replace(/\n/g, "\r\n"), "PUBLIC KEY")).toEqual(der);
    expect(decodePem(`\n  ${pem}  \n`, "PUBLIC KEY")).toEqual(der);
  });

  test("anything else is refused", () => {
    const lines = pem.trim().split("\n");
    const bad = [
      pem.replace("PUBLIC KEY-----\n", "PRIVATE KEY-----\n"),
      `-----BEGIN PUBLIC KEY-----\n${body.slice(0, 60)}\n${body.slice(60)}\n-----END PUBLIC KEY-----\n`,
      `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----\n`,
      [lines[0], lines[1] + " ", ...lines.slice(2)].join("\n"),
      [lines[0], "", ...lines.slice(1)].join("\n"),
      "comment\n" + pem,
      pem.replace(/=+\n-----END/, "\n-----END"),
    ];
    for (const t of bad) expect([t, decodePem(t, "PUBLIC KEY")]).toEqual([t, null]);
    expect(decodePem(pem, "PRIVATE KEY")).toBeNull();
  });
});
