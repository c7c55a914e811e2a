import { HEX_BYTES } from "../hex.ts";
import { GENESIS_HASH } from "../steps/hash.ts";
import { SpanKey } from "../steps/kernel.ts";
import { REDACTED } from "./rows.ts";

const enc = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const B = (s: string): Uint8Array => enc.encode(s);

const OPEN_REFS = B('{"blob_refs":[],');
const EFFORT = B('"effort":');
const MODEL = B(',"model":');
const PREV = B(',"prev_hash":"');
const PROMPT = B('","prompt":');
const SCHEMA = B(',"schema_version":');
const SEQ = B(',"seq":');
const STEP = B(',"step_hash":"');
const TOOL_CALL_Q = B('","tool_call":');
const TOOL_CALL = B(',"tool_call":');
const TOOL_RESULT = B(',"tool_result":');
const TS = B(',"ts":');
const CLOSE_LINE = B("}\n");
const PRE_EFFORT = B('{"effort":');
const PRE_INPUT_AFTER = B(',"input_hash":');
const PRE_INPUT_FIRST = B('{"input_hash":');
const CLOSE = B("}");
const COMMA = B(",");
const REDACTED_JSON = B(JSON.stringify(REDACTED));
/** What the published line and its pre-image may add to the row's own length (key names, marks, hashes). */
const GROWTH = 512;

/**
 * The running head of the redacted chain, as the 64 hex digits both
 * publish paths link to: the byte path writes it, the exact path
 * (`redactRow`) reads and sets its text.
 */
export class OutHead {
  readonly bytes = enc.encode(GENESIS_HASH);
  private cached: string | null = GENESIS_HASH;
  get text(): string {
    return (this.cached ??= latin1.decode(this.bytes));
  }
  set text(hex: string) {
    enc.encodeInto(hex, this.bytes);
    this.cached = hex;
  }
  fromDigest(d: Uint8Array): void {
    const h = this.bytes;
    for (let i = 0; i < 32; i++) {
      h[2 * i] = HEX_BYTES[d[i]! >> 4]!;
      h[2 * i + 1] = HEX_BYTES[d[i]! & 15]!;
    }
    this.cached = null;
  }
}

/**
 * Publish's byte path (§5): a row the step kernel took in dict-form mode
 * (so its bytes are its export dict form) is redacted and re-chained from
 * its value spans, without parsing: the policy's non-null fields become
 * `"<<redacted>>"`, `blob_refs` is already empty, `prev_hash` is the
 * redacted head, and the step hash is recomputed over the same pre-image
 * `redactRow` hashes. The line comes out sorted-key canonical, as
 * `rowLine` would write it. Both are built in the kernel's own memory
 * (`area`, see ChainWalker.kernelScratch), where spans are copied without
 * a view each.
 */
export class FastRedactor {
  private o = 0;
  private readonly digest = new Uint8Array(32);
  private readonly redact: boolean[] = [];
  private readonly views: (Uint8Array | undefined)[] = [];
  private readonly half: number;

  constructor(
    policy: ReadonlySet<string>,
    readonly head: OutHead,
    private readonly u8: Uint8Array,
    private readonly area: { at: number; size: number },
  ) {
    this.redact[SpanKey.Model] = policy.has("model");
    this.redact[SpanKey.Prompt] = policy.has("prompt");
    this.redact[SpanKey.ToolCall] = policy.has("tool_call");
    this.redact[SpanKey.ToolResult] = policy.has("tool_result");
    this.half = area.size >> 1;
  }

  private put(b: Uint8Array): void {
    this.u8.set(b, this.o);
    this.o += b.length;
  }

  private copy(s: number, e: number): void {
    this.u8.copyWithin(this.o, s, e);
    this.o += e - s;
  }

  private span(spans: Int32Array, k: SpanKey): void {
    this.copy(spans[4 * k]!, spans[4 * k + 1]!);
  }

  /** A field's value as published: the redaction mark, or its own bytes (null stays null). */
  private value(spans: Int32Array, k: SpanKey): void {
    const s = spans[4 * k]!;
    const e = spans[4 * k + 1]!;
    if (this.redact[k] && !(e - s === 4 && this.u8[s] === 0x6e)) this.put(REDACTED_JSON);
    else this.copy(s, e);
  }

  private view(at: number, n: number): Uint8Array {
    if (at !== this.area.at) return this.u8.subarray(at, at + n);
    let v = this.views[n];
    if (v === undefined) this.views[n] = v = this.u8.subarray(at, at + n);
    return v;
  }

  /**
   * The published line of the row [p, q) whose spans are `spans` (offsets
   * into the kernel's memory); the head moves to its new step hash. The
   * view is valid until the next call. Null for a row too long to build in
   * the area (the caller takes the exact path).
   */
  row(spans: Int32Array, p: number, q: number): Uint8Array | null {
    if (q - p + GROWTH > this.half) return null;
    const hasEffort = spans[4 * SpanKey.Effort]! >= 0;
    const pre = this.area.at;
    this.o = pre;
    if (hasEffort) {
      this.put(PRE_EFFORT);
      this.span(spans, SpanKey.Effort);
      this.put(PRE_INPUT_AFTER);
    } else this.put(PRE_INPUT_FIRST);
    const inputAt = hasEffort ? this.o - PRE_INPUT_AFTER.length + 1 : pre + 1;
    this.span(spans, SpanKey.InputHash);
    this.put(MODEL);
    this.value(spans, SpanKey.Model);
    this.put(PREV);
    this.put(this.head.bytes);
    this.put(PROMPT);
    this.value(spans, SpanKey.Prompt);
    const preTail = this.o;
    this.put(TOOL_CALL);
    this.value(spans, SpanKey.ToolCall);
    this.put(TOOL_RESULT);
    this.value(spans, SpanKey.ToolResult);
    this.put(CLOSE);
    const preEnd = this.o;
    Bun.SHA256.hash(this.view(pre, preEnd - pre), this.digest);
    this.head.fromDigest(this.digest);

    // The line: sorted keys, blob_refs first and ts last; its hashed values as in the pre-image.
    const line = pre + this.half;
    this.o = line;
    this.put(OPEN_REFS);
    if (hasEffort) {
      this.put(EFFORT);
      this.span(spans, SpanKey.Effort);
      this.put(COMMA);
    }
    this.copy(inputAt, preTail); // "input_hash": .. the prompt's value (prev_hash: the old head)
    this.put(SCHEMA);
    this.span(spans, SpanKey.SchemaVersion);
    this.put(SEQ);
    this.span(spans, SpanKey.Seq);
    this.put(STEP);
    this.put(this.head.bytes);
    this.put(TOOL_CALL_Q);
    this.copy(preTail + TOOL_CALL.length, preEnd - 1); // tool_call's value .. tool_result's
    this.put(TS);
    this.span(spans, SpanKey.Ts);
    this.put(CLOSE_LINE);
    return this.u8.subarray(line, this.o);
  }
}
