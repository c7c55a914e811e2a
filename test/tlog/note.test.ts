import { createPrivateKey } from "node:crypto";
import { describe, expect, test } from "bun:test";
import { checkpointText, parseCheckpointText, parseSealNoteText, sealNoteText } from "../../src/tlog/checkpoint.ts";
import { checkNote, formatVerifierKey, openNote, parseNote, parseVerifierKey, rawPublicKey, signNote } from "../../src/tlog/note.ts";

// The signed-note reference vector of golang.org/x/mod/sumdb/note (the
// format C2SP's signed-note specifies): key pair, text and signature.
const VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const SKEY_B64 = "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"; // 0x01 ‖ 32-byte seed
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const NOTE = `${TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

function seedKey() {
  const seed = Buffer.from(SKEY_B64, "base64").subarray(1);
  return createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]), format: "der", type: "pkcs8" });
}

describe("C2SP signed notes", () => {
  test("the reference note verifies under its verifier key", () => {
    const key = parseVerifierKey(VKEY);
    expect(key.name).toBe("PeterNeumann");
    expect(key.keyId.toString(16)).toBe("c74f20a3");
    expect(openNote(NOTE, [key]).text).toBe(TEXT);
  });

  test("signing reproduces the reference note byte for byte; the verifier key round-trips", () => {
    const key = seedKey();
    expect(signNote(TEXT, [{ name: "PeterNeumann", key }])).toBe(NOTE);
    expect(formatVerifierKey("PeterNeumann", rawPublicKey(key))).toBe(VKEY);
  });

  test("any one-byte edit of the note is refused", () => {
    const key = parseVerifierKey(VKEY);
    const bytes = Buffer.from(NOTE);
    let refused = 0;
    for (let i = 0; i < bytes.length; i++) {
      const edited = Buffer.from(bytes);
      edited[i] = edited[i]! ^ 0x01;
      let ok = false;
      try {
        ok = openNote(new TextDecoder().decode(edited), [key]).text.length > 0;
      } catch {
        ok = false;
      }
      if (!ok) refused++;
    }
    expect(refused).toBe(bytes.length);
  });

  test("unknown keys are ignored; a failing known signature rejects; 16+ signatures are accepted", () => {
    const key = parseVerifierKey(VKEY);
    const other = { ...key, name: "Someone" };
    expect(() => openNote(NOTE, [other])).toThrow(/no signature by a known key/);
    const many = signNote(TEXT, [], [...parseNote(NOTE).signatures, ...Array.from({ length: 16 }, (_, i) => ({ name: `w${i}`, keyId: i, sig: new Uint8Array(64) }))]);
    const v = checkNote(many, [key]);
    expect(v.verified).toEqual(["PeterNeumann"]);
    expect(v.unknown).toBe(16);
    const forged = NOTE.replace("x08go", "x08gp");
    expect(() => openNote(forged, [key])).toThrow();
  });

  test("malformed notes and keys", () => {
    expect(() => parseNote(TEXT)).toThrow();
    expect(() => parseNote(NOTE.replace("\n\n", "\n"))).toThrow();
    expect(() => parseNote(NOTE.replace("you", "y\tou"))).toThrow(/control/);
    expect(() => parseVerifierKey(VKEY.replace("c74f20a3", "c74f20a4"))).toThrow();
    expect(() => parseVerifierKey("PeterNeumann+c74f20a3")).toThrow();
  });

  test("checkpoint and seal note texts round-trip and are strict", () => {
    const root = new Uint8Array(32).fill(7);
    const cp = checkpointText({ origin: "example.com/log", size: 12, root });
    expect(cp).toBe(`example.com/log\n12\n${Buffer.from(root).toString("base64")}\n`);
    expect(parseCheckpointText(cp).size).toBe(12);
    expect(() => parseCheckpointText(cp.replace("\n12\n", "\n012\n"))).toThrow();
    const seal = { origin: "o", runId: "r1", events: 3, head: "a".repeat(64), root };
    expect(parseSealNoteText(sealNoteText(seal))).toEqual(seal);
  });
});
