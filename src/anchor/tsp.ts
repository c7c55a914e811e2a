import { createHash, verify as verifySig, X509Certificate } from "node:crypto";
import { children, DerError, encodeInteger, encodeOid, expectTag, generalizedTime, integer, oid, readNode, TAG, tlv, value, whole, type Node } from "./der.ts";

/**
 * RFC 3161 time-stamp protocol, as much as anchoring a journal head needs:
 * the request (a SHA-256 imprint, a nonce, certReq), the response or bare
 * token, and the offline check of a token (imprint, CMS signature over the
 * signed attributes, the signer certificate's chain to trusted roots, its
 * time-stamping key usage and validity at `genTime`). RFC 5652 CMS is read
 * only as far as a time-stamp token uses it.
 */

const OID = {
  sha256: "2.16.840.1.101.3.4.2.1",
  sha384: "2.16.840.1.101.3.4.2.2",
  sha512: "2.16.840.1.101.3.4.2.3",
  sha1: "1.3.14.3.2.26",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentType: "1.2.840.113549.1.9.3",
  messageDigest: "1.2.840.113549.1.9.4",
  timeStamping: "1.3.6.1.5.5.7.3.8",
  ed25519: "1.3.101.112",
} as const;

const HASH_NAMES: Record<string, string> = { [OID.sha256]: "sha256", [OID.sha384]: "sha384", [OID.sha512]: "sha512", [OID.sha1]: "sha1" };

/** DER `TimeStampReq` v1 for a SHA-256 imprint. */
export function timeStampRequest(imprint: Uint8Array, nonce: bigint): Uint8Array {
  const algorithm = tlv(TAG.SEQUENCE, encodeOid(OID.sha256), tlv(TAG.NULL));
  const messageImprint = tlv(TAG.SEQUENCE, algorithm, tlv(TAG.OCTET_STRING, imprint));
  return tlv(TAG.SEQUENCE, encodeInteger(1n), messageImprint, encodeInteger(nonce), tlv(TAG.BOOLEAN, new Uint8Array([0xff])));
}

export interface ParsedToken {
  /** The DER of the bare `TimeStampToken` (ContentInfo). */
  token: Uint8Array;
  /** PKIStatus of a response (null for a bare token). */
  status: number | null;
}

/**
 * A DER `TimeStampResp` or bare `TimeStampToken`: the token's bytes and the
 * response status. Throws `DerError` on anything else.
 */
export function tokenOf(der: Uint8Array): ParsedToken {
  const top = expectTag(readNode(der), TAG.SEQUENCE, "time-stamp response or token");
  if (top.end !== der.length) throw new DerError("trailing bytes after the time-stamp response");
  const [first, second] = children(top);
  if (first?.tag === TAG.OID) return { token: whole(top), status: null };
  const statusInfo = expectTag(first, TAG.SEQUENCE, "PKIStatusInfo");
  const status = Number(integer(children(statusInfo)[0]!));
  if (!second) return { token: new Uint8Array(), status };
  return { token: whole(expectTag(second, TAG.SEQUENCE, "timeStampToken")), status };
}

interface SignedParts {
  tstInfo: Node;
  tstInfoBytes: Uint8Array;
  certs: Uint8Array[];
  signer: Node[];
}

function signedData(token: Uint8Array): SignedParts {
  const ci = children(expectTag(readNode(token), TAG.SEQUENCE, "ContentInfo"));
  if (oid(ci[0]!) !== OID.signedData) throw new DerError("the token is not CMS SignedData");
  const sd = children(expectTag(children(expectTag(ci[1], 0xa0, "content"))[0], TAG.SEQUENCE, "SignedData"));
  const encap = children(expectTag(sd[2], TAG.SEQUENCE, "encapContentInfo"));
  if (oid(encap[0]!) !== OID.tstInfo) throw new DerError("the signed content is not a TSTInfo");
  const eContent = expectTag(children(expectTag(encap[1], 0xa0, "eContent"))[0], TAG.OCTET_STRING, "eContent");
  const tstInfoBytes = value(eContent);
  let i = 3;
  const certs: Uint8Array[] = [];
  if (sd[i]?.tag === 0xa0) {
    for (const c of children(sd[i]!)) if (c.tag === TAG.SEQUENCE) certs.push(whole(c));
    i++;
  }
  if (sd[i]?.tag === 0xa1) i++;
  const signerInfos = children(expectTag(sd[i], TAG.SET, "signerInfos"));
  if (signerInfos.length !== 1) throw new DerError(`a time-stamp token has exactly one signer (found ${signerInfos.length})`);
  return { tstInfo: readNode(tstInfoBytes), tstInfoBytes, certs, signer: children(signerInfos[0]!) };
}

export interface TstInfo {
  hashAlgorithm: string;
  imprint: Uint8Array;
  genTime: string;
  nonce: bigint | null;
  serial: bigint;
}

function readTstInfo(n: Node): TstInfo {
  const f = children(expectTag(n, TAG.SEQUENCE, "TSTInfo"));
  const mi = children(expectTag(f[2], TAG.SEQUENCE, "messageImprint"));
  const alg = oid(children(mi[0]!)[0]!);
  let nonce: bigint | null = null;
  for (const x of f.slice(5)) if (x.tag === TAG.INTEGER) nonce = integer(x);
  return { hashAlgorithm: alg, imprint: value(expectTag(mi[1], TAG.OCTET_STRING, "hashedMessage")), genTime: generalizedTime(f[4]!), nonce, serial: integer(f[3]!) };
}

/** The TSTInfo of a token (no signature check: for publish's nonce and imprint checks). */
export function tstInfoOf(token: Uint8Array): TstInfo {
  return readTstInfo(signedData(token).tstInfo);
}

export interface TokenCheck {
  ok: boolean;
  errors: string[];
  genTime: string | null;
  tsaSubject: string | null;
}

function eq(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The certificate a SignerInfo names (issuer + serial, or subject key identifier). */
function findSigner(sid: Node, certs: X509Certificate[]): X509Certificate | null {
  if (sid.tag === TAG.SEQUENCE) {
    const [, serial] = children(sid);
    const want = integer(serial!);
    return certs.find((c) => BigInt("0x" + c.serialNumber) === want) ?? null;
  }
  const ski = Buffer.from(value(sid)).toString("hex").toUpperCase();
  return certs.find((c) => (c as unknown as { subjectKeyIdentifier?: string }).subjectKeyIdentifier?.replace(/:/g, "").toUpperCase() === ski) ?? null;
}

/** Walk from the signer to a trusted root through the token's certificates. */
function chains(signer: X509Certificate, pool: X509Certificate[], roots: X509Certificate[], at: Date): string | null {
  let cur = signer;
  for (let depth = 0; depth < 8; depth++) {
    if (at < new Date(cur.validFrom) || at > new Date(cur.validTo)) return `certificate ${cur.subject.replace(/\n/g, ", ")} is not valid at ${at.toISOString()}`;
    if (roots.some((r) => r.fingerprint256 === cur.fingerprint256)) return null;
    const root = roots.find((r) => cur.checkIssued(r) && cur.verify(r.publicKey));
    if (root) return null;
    const next = pool.find((c) => c.fingerprint256 !== cur.fingerprint256 && cur.checkIssued(c) && cur.verify(c.publicKey) && c.ca);
    if (!next) return `certificate ${cur.subject.replace(/\n/g, ", ")} does not chain to a trusted TSA certificate`;
    cur = next;
  }
  return "certificate chain too long";
}

/**
 * Check a token offline against `imprint` and the trusted roots (PEM
 * certificates). Every failure is named; a token that cannot be read at all
 * is one error.
 */
export function checkToken(token: Uint8Array, imprint: Uint8Array, roots: X509Certificate[]): TokenCheck {
  const errors: string[] = [];
  let parts: SignedParts;
  let info: TstInfo;
  try {
    parts = signedData(token);
    info = readTstInfo(parts.tstInfo);
  } catch (err) {
    return { ok: false, errors: [`token is not an RFC 3161 time-stamp token: ${(err as Error).message}`], genTime: null, tsaSubject: null };
  }
  if (info.hashAlgorithm !== OID.sha256 || !eq(info.imprint, imprint)) errors.push("the token's message imprint is not the SHA-256 journal head");
  let tsaSubject: string | null = null;
  try {
    const certs = parts.certs.map((c) => new X509Certificate(Buffer.from(c)));
    const [, sid, digestAlg, maybeAttrs] = parts.signer;
    const signer = findSigner(sid!, certs);
    if (!signer) throw new DerError("the signer's certificate is not in the token");
    tsaSubject = signer.subject.replace(/\n/g, ", ");
    const hashName = HASH_NAMES[oid(children(digestAlg!)[0]!)];
    if (!hashName) throw new DerError("unsupported digest algorithm");
    if (maybeAttrs?.tag !== 0xa0) throw new DerError("the signer has no signed attributes");
    const attrs = new Map<string, Node>();
    for (const a of children(maybeAttrs)) {
      const [type, values] = children(a);
      attrs.set(oid(type!), children(values!)[0]!);
    }
    const md = attrs.get(OID.messageDigest);
    if (!md || !eq(value(md), createHash(hashName).update(parts.tstInfoBytes).digest())) errors.push("the signed message digest is not the digest of the TSTInfo");
    const ct = attrs.get(OID.contentType);
    if (!ct || oid(ct) !== OID.tstInfo) errors.push("the signed content type is not id-ct-TSTInfo");
    const rest = parts.signer.slice(4);
    const sigAlg = oid(children(rest[0]!)[0]!);
    const signature = value(expectTag(rest[1], TAG.OCTET_STRING, "signature"));
    // The signature covers the DER of the attributes as a SET (RFC 5652 §5.4).
    const signedBytes = Buffer.from(whole(maybeAttrs));
    signedBytes[0] = TAG.SET;
    if (!verifySig(sigAlg === OID.ed25519 ? null : hashName, signedBytes, signer.publicKey, signature)) errors.push("the CMS signature does not verify with the signer's certificate");
    const eku = (signer as unknown as { keyUsage?: string[] }).keyUsage;
    if (!eku || !eku.includes(OID.timeStamping)) errors.push("the signer's certificate is not for time stamping (extendedKeyUsage)");
    const broken = chains(signer, certs, roots, new Date(info.genTime));
    if (broken) errors.push(broken);
  } catch (err) {
    errors.push(err instanceof DerError ? err.message : `cannot check the signature: ${(err as Error).message}`);
  }
  return { ok: errors.length === 0, errors, genTime: info.genTime, tsaSubject };
}

/** Parse a PEM bundle of certificates. */
export function parseBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}
