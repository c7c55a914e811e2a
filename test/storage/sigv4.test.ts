import { describe, expect, test } from "bun:test";
import { amzDate, objectPath, signedHeaders } from "../../src/storage/sigv4.ts";

/** AWS's published Signature V4 example "GET Object" (the S3 API reference, signing with the Authorization header). */
const AWS_EXAMPLE = {
  cfg: { endpoint: "https://examplebucket.s3.amazonaws.com", region: "us-east-1", accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
  signature: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
};

describe("SigV4 for the ranged reader", () => {
  test("reproduces AWS's GET Object example (Range signed)", () => {
    const h = signedHeaders("GET", "examplebucket.s3.amazonaws.com", "/test.txt", AWS_EXAMPLE.cfg, { range: "bytes=0-9" }, new Date("2013-05-24T00:00:00Z"));
    expect(h["x-amz-date"]).toBe("20130524T000000Z");
    expect(h["x-amz-content-sha256"]).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(h.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=${AWS_EXAMPLE.signature}`,
    );
    // host and the caller's own headers are not returned: the caller sends them.
    expect(Object.keys(h).sort()).toEqual(["authorization", "x-amz-content-sha256", "x-amz-date"]);
  });

  test("a session token is sent and signed; no credentials: nothing is signed", () => {
    const h = signedHeaders("HEAD", "h", "/b/k", { ...AWS_EXAMPLE.cfg, sessionToken: "tok" }, {}, new Date(0));
    expect(h["x-amz-security-token"]).toBe("tok");
    expect(h.authorization).toContain("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,");
    expect(signedHeaders("GET", "h", "/b/k", { endpoint: "http://h", region: "us-east-1" })).toEqual({});
  });

  test("the object path: the endpoint's own path, each key segment RFC 3986-encoded, slashes kept", () => {
    expect(objectPath(new URL("http://127.0.0.1:9000"), { kind: "s3", url: "", bucket: "b", key: "runs/a b+c/jö (1)*.jsonl" })).toBe("/b/runs/a%20b%2Bc/j%C3%B6%20%281%29%2A.jsonl");
    expect(objectPath(new URL("http://h/prefix/"), { kind: "s3", url: "", bucket: "b", key: "k~-_.x" })).toBe("/prefix/b/k~-_.x");
    expect(amzDate(new Date("2026-12-01T15:04:05.678Z"))).toBe("20261201T150405Z");
  });
});
