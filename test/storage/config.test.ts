import { describe, expect, test } from "bun:test";
import { deadlineFor, parseDeadline, parseMinRate, readLimits, s3Config } from "../../src/storage/config.ts";
import { kindOf, kindOfStatus } from "../../src/storage/errors.ts";
import { isRemotePath, parseRemote, redactUrl } from "../../src/storage/ref.ts";

describe("storage configuration", () => {
  test("flags over S3_* over AWS_*; the region is never left to Bun's 'auto'", () => {
    expect(s3Config({}, {})).toEqual({ endpoint: "https://s3.us-east-1.amazonaws.com", region: "us-east-1", accessKeyId: undefined, secretAccessKey: undefined, sessionToken: undefined });
    const env = {
      AWS_REGION: "eu-west-1",
      AWS_ENDPOINT_URL: "https://aws.example/",
      AWS_ACCESS_KEY_ID: "aws-id",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
      AWS_SESSION_TOKEN: "tok",
    };
    expect(s3Config({}, env)).toEqual({ endpoint: "https://aws.example", region: "eu-west-1", accessKeyId: "aws-id", secretAccessKey: "aws-secret", sessionToken: "tok" });
    const both = { ...env, S3_REGION: "r2", S3_ENDPOINT: "http://s3.local:9000", S3_ACCESS_KEY_ID: "s3-id", S3_SECRET_ACCESS_KEY: "s3-secret" };
    expect(s3Config({}, both)).toMatchObject({ endpoint: "http://s3.local:9000", region: "r2", accessKeyId: "s3-id", secretAccessKey: "s3-secret" });
    expect(s3Config({ endpoint: "http://flag:1", region: "ap-south-1" }, both)).toMatchObject({ endpoint: "http://flag:1", region: "ap-south-1" });
    // Without an endpoint, AWS in the region given.
    expect(s3Config({}, { AWS_DEFAULT_REGION: "sa-east-1" }).endpoint).toBe("https://s3.sa-east-1.amazonaws.com");
  });

  test("URLs: the bucket and key are the URL's, taken literally; a presigned query is never shown", () => {
    expect(parseRemote("s3://b/k/with spaces%20and:colons")).toEqual({ kind: "s3", url: "s3://b/k/with spaces%20and:colons", bucket: "b", key: "k/with spaces%20and:colons" });
    expect(parseRemote("https://h/x?X-Amz-Signature=abc")).toEqual({ kind: "http", url: "https://h/x?X-Amz-Signature=abc" });
    for (const bad of ["s3://bucket", "s3://bucket/", "s3:///key"]) expect(() => parseRemote(bad)).toThrow(expect.objectContaining({ code: "storage_url_invalid" }));
    expect(redactUrl("https://h/x?X-Amz-Signature=abc")).toBe("https://h/x?…");
    expect(["s3://b/k", "S3://b/k", "https://h/x", "http://h/x"].every(isRemotePath)).toBe(true);
    expect(["./s3:/b", "run-1", "-", "/tmp/x.jsonl", "file:///x"].some(isRemotePath)).toBe(false);
  });

  test("failures map to the typed kinds", () => {
    expect(kindOf({ code: "NoSuchKey" })).toBe("not_found");
    expect(kindOf({ code: "NoSuchBucket" })).toBe("not_found");
    expect(kindOf({ code: "SignatureDoesNotMatch" })).toBe("access_denied");
    expect(kindOf({ code: "InvalidAccessKeyId" })).toBe("access_denied");
    expect(kindOf({ code: "ConnectionRefused" })).toBe("unreachable");
    expect(kindOf(new TypeError("ECONNREFUSED: Unable to connect"))).toBe("unreachable");
    expect(kindOf({ code: "Timeout" })).toBe("unreachable");
    expect(kindOf({ code: "InternalError" })).toBe("request_failed");
    expect([404, 403, 401, 500, 416].map(kindOfStatus)).toEqual(["not_found", "access_denied", "access_denied", "request_failed", "request_failed"]);
  });

  test("read limits: defaults, flags over BERNSTEIN_S3_*, units and windows, 0 for none", () => {
    expect(readLimits({}, {})).toEqual({ deadlineS: null, minRate: 1024, windowS: 30 });
    // The default deadline: 600 s, plus 4 s per MiB once the size is known.
    expect(deadlineFor(readLimits({}, {}), null)).toBe(600);
    expect(deadlineFor(readLimits({}, {}), 1 << 30)).toBe(600 + 4 * 1024);
    expect(readLimits({}, { BERNSTEIN_S3_DEADLINE: "90", BERNSTEIN_S3_MIN_RATE: "4KiB/10s" })).toEqual({ deadlineS: 90, minRate: 4096, windowS: 10 });
    expect(readLimits({ deadline: "5", minRate: "100" }, { BERNSTEIN_S3_DEADLINE: "90", BERNSTEIN_S3_MIN_RATE: "4KiB/10s" })).toEqual({ deadlineS: 5, minRate: 100, windowS: 30 });
    expect(deadlineFor(readLimits({ deadline: "5" }, {}), 1 << 30)).toBe(5);
    expect(parseDeadline("0")).toBe(Infinity);
    expect(parseDeadline("2.5s")).toBe(2.5);
    for (const bad of ["", "-1", "soon", "1m", "1e3"]) expect(parseDeadline(bad)).toBeNull();
    expect(parseMinRate("0")).toEqual({ bytesPerS: 0, windowS: 30 });
    expect(parseMinRate("1KiB/30s")).toEqual({ bytesPerS: 1024, windowS: 30 });
    expect(parseMinRate("2M/5")).toEqual({ bytesPerS: 2 << 20, windowS: 5 });
    expect(parseMinRate("512B/s/2s")).toEqual({ bytesPerS: 512, windowS: 2 });
    for (const bad of ["", "fast", "1KiB/0s", "-5", "1 GiB", "1KiB/"]) expect(parseMinRate(bad)).toBeNull();
  });
});
