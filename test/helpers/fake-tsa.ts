/**
 * A local RFC 3161 time-stamping authority for `seal publish` tests: a
 * throw-away CA and TSA certificate made with the openssl CLI, and a
 * Bun.serve endpoint (port 0) that answers each DER TimeStampReq with
 * `openssl ts -reply` — tokens from an implementation independent of ours.
 * `mode` makes it misbehave: refuse (PKIStatus rejection), answer a
 * different nonce, or fail with HTTP 500.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type TsaMode = "ok" | "reject" | "wrong-nonce" | "http-500";

export interface FakeTsa {
  url: string;
  dir: string;
  /** The CA certificate (the trusted root) and the TSA's own certificate. */
  caPem: string;
  tsaPem: string;
  /** Time-stamp `data`'s SHA-256 imprint offline (what `--token` gets). */
  stampImprint(imprintHex: string): Uint8Array;
  mode: TsaMode;
  requests: number;
  stop(): void;
}

export function hasOpenssl(): boolean {
  return Bun.spawnSync(["openssl", "version"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

function sh(cwd: string, ...args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

const CONFIG = `[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = .
serial = ./serial
crypto_device = builtin
signer_cert = ./tsa.pem
certs = ./ca.pem
signer_key = ./tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_alg = sha256
`;

export function startFakeTsa(): FakeTsa {
  const dir = mkdtempSync(join(tmpdir(), "fake-tsa-"));
  writeFileSync(join(dir, "tsa.cnf"), CONFIG);
  writeFileSync(join(dir, "serial"), "01\n");
  writeFileSync(join(dir, "ext.cnf"), "extendedKeyUsage=critical,timeStamping\nbasicConstraints=CA:FALSE\n");
  sh(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Fake Root CA", "-days", "3650", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  sh(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", "/CN=Fake TSA");
  sh(dir, "x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "tsa.pem", "-days", "3650", "-extfile", "ext.cnf");
  let n = 0;
  const reply = (query: Uint8Array): Uint8Array => {
    const q = join(dir, `q${n}.der`);
    const r = join(dir, `r${n++}.der`);
    writeFileSync(q, query);
    sh(dir, "ts", "-reply", "-config", "tsa.cnf", "-queryfile", q, "-out", r);
    return new Uint8Array(readFileSync(r));
  };
  const queryFor = (imprintHex: string, nonce: boolean): Uint8Array => {
    const q = join(dir, `own${n++}.der`);
    sh(dir, "ts", "-query", "-digest", imprintHex, "-sha256", "-cert", ...(nonce ? [] : ["-no_nonce"]), "-out", q);
    return new Uint8Array(readFileSync(q));
  };
  const tsa: FakeTsa = {
    url: "",
    dir,
    caPem: join(dir, "ca.pem"),
    tsaPem: join(dir, "tsa.pem"),
    mode: "ok",
    requests: 0,
    stampImprint: (imprintHex) => reply(queryFor(imprintHex, true)),
    stop: () => {
      server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      tsa.requests++;
      if (req.method !== "POST" || req.headers.get("content-type") !== "application/timestamp-query") return new Response("bad request", { status: 400 });
      const body = new Uint8Array(await req.arrayBuffer());
      if (tsa.mode === "http-500") return new Response("down", { status: 500 });
      if (tsa.mode === "reject") return new Response(new Uint8Array([0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x02]), { headers: { "content-type": "application/timestamp-reply" } });
      // wrong-nonce: stamp the same imprint under a query of our own (another nonce).
      const query = tsa.mode === "wrong-nonce" ? queryFor(imprintOf(body), true) : body;
      return new Response(reply(query), { headers: { "content-type": "application/timestamp-reply" } });
    },
  });
  tsa.url = `http://127.0.0.1:${server.port}/tsa`;
  return tsa;
}

/** The 32 imprint bytes of a SHA-256 TimeStampReq, as hex (they are its only 32-byte OCTET STRING). */
function imprintOf(query: Uint8Array): string {
  for (let i = 0; i + 34 <= query.length; i++) if (query[i] === 0x04 && query[i + 1] === 0x20) return Buffer.from(query.subarray(i + 2, i + 34)).toString("hex");
  throw new Error("no imprint in the query");
}
