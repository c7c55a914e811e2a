/**
 * A small, dependency-free assembler from a SUBSET of the WebAssembly text
 * format (WAT) to the WebAssembly binary format.
 *
 * It exists so the hand-written verify kernel (src/journal/fast/kernel.wat)
 * stays readable text in the repository while the product ships only the
 * bytes (scripts/build-wasm.ts turns the text into kernel-wasm.ts), without
 * carrying an assembler package as a dependency.
 *
 * The subset (everything else is rejected with an Error naming the line and
 * the offending token, never silently skipped):
 *
 *   - one `(module $id? field*)`; fields `import` (func, memory), `func`,
 *     `memory` (one, index 0), `global` (i32/i64, mutable or not), `export`
 *     (func, memory, global) and active `data` segments into memory 0;
 *   - function types are deduplicated automatically (no `(type ...)`);
 *   - value types i32 and i64; at most one result per function or block;
 *   - instructions flat, folded or mixed: control (unreachable nop block loop
 *     if else end br br_if br_table return call drop select), variables,
 *     every i32/i64 load and store with `offset=`/`align=`, memory.size,
 *     memory.grow, memory.copy, memory.fill, i32/i64 constants, comparisons,
 *     arithmetic and bit operations, wrap/extend and the sign-extension ops.
 *
 * The assembler checks names, immediates and syntax; operand types are left
 * to the engine's validator (`new WebAssembly.Module`), which is exact.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

// ---------------------------------------------------------------------------
// Errors

/** Every error names the line and the token, so a kernel author can find it. */
function fail(line: number, message: string, token: string): never {
  const shown = token.length > 40 ? `${token.slice(0, 40)}...` : token;
  throw new Error(`wat: line ${line}: ${message}: ${JSON.stringify(shown)}`);
}

// ---------------------------------------------------------------------------
// Lexing into S-expressions

interface Atom {
  kind: "atom";
  text: string;
  line: number;
}
interface Str {
  kind: "string";
  /** The decoded bytes (escapes resolved, other characters UTF-8 encoded). */
  bytes: Uint8Array;
  /** The source text, quotes included, for error messages. */
  text: string;
  line: number;
}
interface List {
  kind: "list";
  items: Node[];
  line: number;
}
type Node = Atom | Str | List;

// The spec's idchar set: atoms (keywords, $names, numbers, offset=N) are runs of these.
const IDCHAR = /[0-9A-Za-z!#$%&'*+\-./:<=>?@\\^_`|~]/;

/** How a node reads in an error message: an atom or string as written, a list by its head. */
function shown(node: Node): string {
  if (node.kind !== "list") return node.text;
  const head = node.items[0];
  return head && head.kind === "atom" ? `(${head.text}` : "(";
}

function parseTree(src: string): Node[] {
  const top: Node[] = [];
  const open: List[] = [];
  let line = 1;
  let i = 0;
  const add = (node: Node): void => {
    (open.length > 0 ? open[open.length - 1]!.items : top).push(node);
  };
  // Tokens other than parentheses must be separated, as in the spec: `a"b"` is an error.
  const checkSeparated = (at: number, token: string): void => {
    const c = src[at];
    if (c !== undefined && !/[\s();]/.test(c)) fail(line, "token not followed by a space or parenthesis", token + c);
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r") {
      i++;
    } else if (c === ";") {
      if (src[i + 1] !== ";") fail(line, "unexpected character", c);
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "(" && src[i + 1] === ";") {
      const r = skipBlockComment(src, i, line);
      i = r.end;
      line = r.line;
    } else if (c === "(") {
      const list: List = { kind: "list", items: [], line };
      add(list);
      open.push(list);
      i++;
    } else if (c === ")") {
      if (open.length === 0) fail(line, "unbalanced parenthesis (nothing to close)", ")");
      open.pop();
      i++;
    } else if (c === '"') {
      const r = readString(src, i, line);
      add({ kind: "string", bytes: r.bytes, text: src.slice(i, r.end), line });
      i = r.end;
      checkSeparated(i, src.slice(r.start, r.end));
    } else if (IDCHAR.test(c)) {
      const start = i;
      while (i < src.length && IDCHAR.test(src[i]!)) i++;
      const text = src.slice(start, i);
      add({ kind: "atom", text, line });
      checkSeparated(i, text);
    } else {
      fail(line, "unexpected character", c);
    }
  }
  if (open.length > 0) {
    const unclosed = open[open.length - 1]!;
    fail(unclosed.line, "unbalanced parenthesis (never closed)", shown(unclosed));
  }
  return top;
}

/** Block comments nest: `(; a (; b ;) c ;)` is one comment. */
function skipBlockComment(src: string, start: number, startLine: number): { end: number; line: number } {
  let depth = 0;
  let line = startLine;
  let i = start;
  while (i < src.length) {
    if (src[i] === "(" && src[i + 1] === ";") {
      depth++;
      i += 2;
    } else if (src[i] === ";" && src[i + 1] === ")") {
      depth--;
      i += 2;
      if (depth === 0) return { end: i, line };
    } else {
      if (src[i] === "\n") line++;
      i++;
    }
  }
  return fail(startLine, "unterminated block comment", "(;");
}

const SIMPLE_ESCAPES: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d, '"': 0x22, "'": 0x27, "\\": 0x5c };

/** Reads a string literal starting at the opening quote; returns its bytes and the index past the closing quote. */
function readString(src: string, start: number, line: number): { bytes: Uint8Array; start: number; end: number } {
  const out: number[] = [];
  let i = start + 1;
  for (;;) {
    if (i >= src.length) fail(line, "unterminated string", src.slice(start, start + 20));
    const cp = src.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (ch === '"') return { bytes: Uint8Array.from(out), start, end: i + 1 };
    // Raw control characters (a newline in particular) are not allowed: they usually mean a missing quote.
    if (cp < 0x20 || cp === 0x7f) fail(line, "control character in string (use an escape)", src.slice(start, i));
    if (ch !== "\\") {
      pushUtf8(out, cp);
      i += ch.length;
      continue;
    }
    const e = src[i + 1] ?? "";
    if (e in SIMPLE_ESCAPES) {
      out.push(SIMPLE_ESCAPES[e]!);
      i += 2;
    } else if (/^[0-9a-fA-F]{2}$/.test(src.slice(i + 1, i + 3))) {
      out.push(parseInt(src.slice(i + 1, i + 3), 16));
      i += 3;
    } else if (e === "u") {
      const m = /^u\{([0-9a-fA-F](?:_?[0-9a-fA-F])*)\}/.exec(src.slice(i + 1, i + 20));
      const value = m ? parseInt(m[1]!.replaceAll("_", ""), 16) : -1;
      if (!m || value >= 0x110000 || (value >= 0xd800 && value < 0xe000)) {
        fail(line, "bad \\u{...} escape in string", m ? src.slice(i, i + 1 + m[0].length) : src.slice(i, i + 12));
      }
      pushUtf8(out, value);
      i += 1 + m[0].length;
    } else {
      fail(line, "unknown escape in string", src.slice(i, i + 2));
    }
  }
}

function pushUtf8(out: number[], cp: number): void {
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

// ---------------------------------------------------------------------------
// Numbers and LEB128

// Underscores may only separate digits (spec), so `1__0`, `_1` and `1_` are rejected.
const DEC_NAT = /^[0-9](?:_?[0-9])*$/;
const HEX_NAT = /^0x[0-9a-fA-F](?:_?[0-9a-fA-F])*$/;

function parseNat(text: string): bigint | null {
  if (HEX_NAT.test(text)) return BigInt(`0x${text.slice(2).replaceAll("_", "")}`);
  if (DEC_NAT.test(text)) return BigInt(text.replaceAll("_", ""));
  return null;
}

/**
 * An integer constant of `bits` width, wrapped to its signed value for the
 * signed LEB128 encoding: unsigned literals may use the full range
 * (0xffffffff is i32 -1), signed ones must fit the signed range (spec iN).
 */
function parseIntConst(token: Atom, bits: 32 | 64): bigint {
  const text = token.text;
  const sign = text[0] === "-" || text[0] === "+" ? text[0] : "";
  const magnitude = parseNat(text.slice(sign.length));
  if (magnitude === null) fail(token.line, `bad i${bits} constant`, text);
  const half = 1n << BigInt(bits - 1);
  const inRange = sign === "" ? magnitude < half * 2n : sign === "+" ? magnitude < half : magnitude <= half;
  if (!inRange) fail(token.line, `i${bits} constant out of range`, text);
  return BigInt.asIntN(bits, sign === "-" ? -magnitude : magnitude);
}

/** An unsigned 32-bit number (an index, page count, offset or alignment); no sign allowed. */
function parseU32(token: Atom, text: string, what: string): number {
  const n = parseNat(text);
  if (n === null) fail(token.line, `bad ${what} (expected an unsigned number)`, token.text);
  if (n > 0xffffffffn) fail(token.line, `${what} out of range`, token.text);
  return Number(n);
}

/** Unsigned LEB128 of a u32 (sizes, counts, indices, offsets). */
export function uleb128(value: number): number[] {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error(`uleb128: not a u32: ${value}`);
  const out: number[] = [];
  let v = value;
  for (;;) {
    const byte = v % 128;
    v = Math.floor(v / 128);
    if (v === 0) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** Signed LEB128 of an i32/i64 value (constants), BigInt so i64 is exact. */
export function sleb128(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n; // arithmetic shift: negative values converge to -1
    const done = (v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0);
    if (done) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

// ---------------------------------------------------------------------------
// Types

type ValType = "i32" | "i64";
const VALTYPE_BYTE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e };
const EMPTY_BLOCK_TYPE = 0x40;

function valType(node: Node | undefined, context: Node): ValType {
  if (node && node.kind === "atom" && (node.text === "i32" || node.text === "i64")) return node.text;
  if (node && node.kind === "atom" && (node.text === "f32" || node.text === "f64")) {
    fail(node.line, "value type not supported by this assembler (only i32 and i64)", node.text);
  }
  return fail(node?.line ?? context.line, "expected a value type (i32 or i64)", node ? shown(node) : shown(context));
}

interface FuncType {
  params: ValType[];
  results: ValType[];
}

const isAtom = (node: Node | undefined): node is Atom => node !== undefined && node.kind === "atom";
// These return the node or undefined rather than being type guards: "not a $name" must not narrow to "not an atom".
const asName = (node: Node | undefined): Atom | undefined => (isAtom(node) && node.text.startsWith("$") ? node : undefined);
const asList = (node: Node | undefined, head: string): List | undefined =>
  node !== undefined && node.kind === "list" && isAtom(node.items[0]) && node.items[0].text === head ? node : undefined;

function checkName(token: Atom): string {
  if (token.text.length < 2) fail(token.line, "empty $name", token.text);
  return token.text;
}

// ---------------------------------------------------------------------------
// Instruction table (WebAssembly core spec, "Instructions" in the binary format)

/** What follows an instruction's opcode in the text, and so in the binary. */
type Immediate = "none" | "label" | "labels" | "func" | "local" | "global" | "memarg" | "i32" | "i64" | "memory";

interface OpSpec {
  opcode: number[];
  immediate: Immediate;
  /** log2 of the natural alignment, the default `align=` of a load or store. */
  naturalAlign?: number;
  /** Instructions that need the (single) memory. */
  usesMemory?: boolean;
}

const OPS = new Map<string, OpSpec>();
const op = (name: string, opcode: number | number[], immediate: Immediate = "none"): void => {
  const bytes = typeof opcode === "number" ? [opcode] : opcode;
  OPS.set(name, { opcode: bytes, immediate, usesMemory: immediate === "memory" });
};
const mem = (name: string, opcode: number, naturalAlign: number): void => {
  OPS.set(name, { opcode: [opcode], immediate: "memarg", naturalAlign, usesMemory: true });
};

// Control and parametric (block, loop, if, else and end are structured: see BodyAssembler).
op("unreachable", 0x00);
op("nop", 0x01);
op("br", 0x0c, "label");
op("br_if", 0x0d, "label");
op("br_table", 0x0e, "labels");
op("return", 0x0f);
op("call", 0x10, "func");
op("drop", 0x1a);
op("select", 0x1b);
// Variables.
op("local.get", 0x20, "local");
op("local.set", 0x21, "local");
op("local.tee", 0x22, "local");
op("global.get", 0x23, "global");
op("global.set", 0x24, "global");
// Memory: the memarg's default alignment is the access width.
mem("i32.load", 0x28, 2);
mem("i64.load", 0x29, 3);
mem("i32.load8_s", 0x2c, 0);
mem("i32.load8_u", 0x2d, 0);
mem("i32.load16_s", 0x2e, 1);
mem("i32.load16_u", 0x2f, 1);
mem("i64.load8_s", 0x30, 0);
mem("i64.load8_u", 0x31, 0);
mem("i64.load16_s", 0x32, 1);
mem("i64.load16_u", 0x33, 1);
mem("i64.load32_s", 0x34, 2);
mem("i64.load32_u", 0x35, 2);
mem("i32.store", 0x36, 2);
mem("i64.store", 0x37, 3);
mem("i32.store8", 0x3a, 0);
mem("i32.store16", 0x3b, 1);
mem("i64.store8", 0x3c, 0);
mem("i64.store16", 0x3d, 1);
mem("i64.store32", 0x3e, 2);
// The trailing zero bytes are the memory indices (always memory 0 here).
op("memory.size", [0x3f, 0x00], "memory");
op("memory.grow", [0x40, 0x00], "memory");
op("memory.copy", [0xfc, 0x0a, 0x00, 0x00], "memory");
op("memory.fill", [0xfc, 0x0b, 0x00], "memory");
// Constants.
op("i32.const", 0x41, "i32");
op("i64.const", 0x42, "i64");
// i32 comparisons.
op("i32.eqz", 0x45);
op("i32.eq", 0x46);
op("i32.ne", 0x47);
op("i32.lt_s", 0x48);
op("i32.lt_u", 0x49);
op("i32.gt_s", 0x4a);
op("i32.gt_u", 0x4b);
op("i32.le_s", 0x4c);
op("i32.le_u", 0x4d);
op("i32.ge_s", 0x4e);
op("i32.ge_u", 0x4f);
// i64 comparisons.
op("i64.eqz", 0x50);
op("i64.eq", 0x51);
op("i64.ne", 0x52);
op("i64.lt_s", 0x53);
op("i64.lt_u", 0x54);
op("i64.gt_s", 0x55);
op("i64.gt_u", 0x56);
op("i64.le_s", 0x57);
op("i64.le_u", 0x58);
op("i64.ge_s", 0x59);
op("i64.ge_u", 0x5a);
// i32 arithmetic and bits.
op("i32.clz", 0x67);
op("i32.ctz", 0x68);
op("i32.popcnt", 0x69);
op("i32.add", 0x6a);
op("i32.sub", 0x6b);
op("i32.mul", 0x6c);
op("i32.div_s", 0x6d);
op("i32.div_u", 0x6e);
op("i32.rem_s", 0x6f);
op("i32.rem_u", 0x70);
op("i32.and", 0x71);
op("i32.or", 0x72);
op("i32.xor", 0x73);
op("i32.shl", 0x74);
op("i32.shr_s", 0x75);
op("i32.shr_u", 0x76);
op("i32.rotl", 0x77);
op("i32.rotr", 0x78);
// i64 arithmetic and bits.
op("i64.clz", 0x79);
op("i64.ctz", 0x7a);
op("i64.popcnt", 0x7b);
op("i64.add", 0x7c);
op("i64.sub", 0x7d);
op("i64.mul", 0x7e);
op("i64.div_s", 0x7f);
op("i64.div_u", 0x80);
op("i64.rem_s", 0x81);
op("i64.rem_u", 0x82);
op("i64.and", 0x83);
op("i64.or", 0x84);
op("i64.xor", 0x85);
op("i64.shl", 0x86);
op("i64.shr_s", 0x87);
op("i64.shr_u", 0x88);
op("i64.rotl", 0x89);
op("i64.rotr", 0x8a);
// Conversions and sign extension.
op("i32.wrap_i64", 0xa7);
op("i64.extend_i32_s", 0xac);
op("i64.extend_i32_u", 0xad);
op("i32.extend8_s", 0xc0);
op("i32.extend16_s", 0xc1);
op("i64.extend8_s", 0xc2);
op("i64.extend16_s", 0xc3);
op("i64.extend32_s", 0xc4);

const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const ELSE = 0x05;
const END = 0x0b;

/** Every instruction keyword, so a missing immediate is not mistaken for the next instruction. */
const INSTRUCTION_NAMES = new Set([...OPS.keys(), "block", "loop", "if", "else", "end"]);

// ---------------------------------------------------------------------------
// Module model (filled by the first pass over the fields)

interface FuncDecl {
  name: string | null;
  typeIndex: number;
  /** Params then locals, in index order, with their names. */
  localTypes: ValType[];
  localNames: Map<string, number>;
  paramCount: number;
  /** Defined functions: the field's items and where the instructions start. */
  body: { items: Node[]; start: number } | null;
}

interface GlobalDecl {
  name: string | null;
  type: ValType;
  mutable: boolean;
  init: number[];
}

interface MemoryDecl {
  name: string | null;
  min: number;
  max: number | null;
  imported: boolean;
}

interface Import {
  module: Uint8Array;
  field: Uint8Array;
  /** The import description (kind byte and type). */
  desc: number[];
}

interface Export {
  name: Uint8Array;
  kind: number;
  index: number;
}

const EXPORT_KIND = { func: 0x00, memory: 0x02, global: 0x03 } as const;

/** A reference to resolve after the first pass (exports may name later fields). */
interface PendingExport {
  name: Uint8Array;
  nameText: string;
  line: number;
  kind: keyof typeof EXPORT_KIND;
  /** Inline exports know their index already; `(export ...)` fields carry a reference to resolve. */
  index: number;
  ref: Node | undefined;
}

class ModuleBuilder {
  readonly types: FuncType[] = [];
  private readonly typeKeys = new Map<string, number>();
  readonly funcs: FuncDecl[] = [];
  readonly funcNames = new Map<string, number>();
  readonly globals: GlobalDecl[] = [];
  readonly globalNames = new Map<string, number>();
  memory: MemoryDecl | null = null;
  memoryLine = 0;
  readonly imports: Import[] = [];
  readonly exports: PendingExport[] = [];
  readonly data: { offset: number[]; bytes: Uint8Array; line: number }[] = [];
  /** Imports must precede definitions (spec): function indices put imports first. */
  private sawDefinition = false;

  typeIndex(type: FuncType): number {
    const key = `${type.params.join(",")}->${type.results.join(",")}`;
    let index = this.typeKeys.get(key);
    if (index === undefined) {
      index = this.types.length;
      this.types.push(type);
      this.typeKeys.set(key, index);
    }
    return index;
  }

  field(field: Node): void {
    if (field.kind !== "list" || !isAtom(field.items[0])) fail(field.line, "expected a module field", shown(field));
    const head = field.items[0].text;
    switch (head) {
      case "import":
        return this.importField(field);
      case "func":
        this.sawDefinition = true;
        return this.funcField(field);
      case "memory":
        this.sawDefinition = true;
        return this.memoryField(field);
      case "global":
        this.sawDefinition = true;
        return this.globalField(field);
      case "export":
        return this.exportField(field);
      case "data":
        return this.dataField(field);
      default:
        return fail(field.line, "unsupported module field", `(${head}`);
    }
  }

  private declareName(names: Map<string, number>, token: Atom | undefined, index: number, space: string): string | null {
    if (!token) return null;
    const name = checkName(token);
    if (names.has(name)) fail(token.line, `duplicate ${space} name`, name);
    names.set(name, index);
    return name;
  }

  /** A UTF-8 name string (import module/field, export name); engines reject invalid UTF-8. */
  private nameString(node: Node | undefined, context: List, what: string): Str {
    if (!node || node.kind !== "string") return fail(node?.line ?? context.line, `expected ${what} string`, node ? shown(node) : shown(context));
    checkUtf8(node, what);
    return node;
  }

  private importField(field: List): void {
    if (this.sawDefinition) fail(field.line, "import after a func, memory or global definition", "(import");
    const module = this.nameString(field.items[1], field, "import module name");
    const name = this.nameString(field.items[2], field, "import name");
    const desc = field.items[3];
    if (field.items.length !== 4 || !desc || desc.kind !== "list") {
      fail(field.line, "expected (import \"module\" \"name\" (func ...)) or (memory ...)", shown(field.items[3] ?? field));
    }
    const func = asList(desc, "func");
    const memory = asList(desc, "memory");
    if (func) {
      const index = this.funcs.length;
      const idToken = asName(func.items[1]);
      const header = parseFuncHeader(func, idToken ? 2 : 1, false);
      if (header.next !== func.items.length) fail(func.line, "unexpected item in an imported func", shown(func.items[header.next]!));
      const typeIndex = this.typeIndex({ params: header.params, results: header.results });
      this.funcs.push({
        name: this.declareName(this.funcNames, idToken, index, "func"),
        typeIndex,
        localTypes: header.params,
        localNames: header.names,
        paramCount: header.params.length,
        body: null,
      });
      this.imports.push({ module: module.bytes, field: name.bytes, desc: [0x00, ...uleb128(typeIndex)] });
    } else if (memory) {
      const decl = this.memoryDecl(memory, true, false);
      this.imports.push({ module: module.bytes, field: name.bytes, desc: [0x02, ...limits(decl)] });
    } else {
      fail(desc.line, "unsupported import kind (only func and memory)", shown(desc));
    }
  }

  private funcField(field: List): void {
    const index = this.funcs.length;
    const idToken = asName(field.items[1]);
    const name = this.declareName(this.funcNames, idToken, index, "func");
    const header = parseFuncHeader(field, idToken ? 2 : 1, true);
    for (const e of header.exports) this.exports.push({ ...e, kind: "func", ref: undefined, index });
    this.funcs.push({
      name,
      typeIndex: this.typeIndex({ params: header.params, results: header.results }),
      localTypes: [...header.params, ...header.locals],
      localNames: header.names,
      paramCount: header.params.length,
      body: { items: field.items, start: header.next },
    });
  }

  private memoryField(field: List): void {
    this.memoryDecl(field, false, true);
  }

  /** `(memory $id? (export "x")* min max?)`; only one memory exists, index 0. */
  private memoryDecl(list: List, imported: boolean, allowExports: boolean): MemoryDecl {
    if (this.memory) fail(list.line, `only one memory is supported (the first is on line ${this.memoryLine})`, "(memory");
    let i = 1;
    const idToken = asName(list.items[i]);
    if (idToken) i++;
    const exports = allowExports ? inlineExports(list, i) : { exports: [], next: i };
    i = exports.next;
    const minToken = list.items[i++];
    if (!isAtom(minToken)) return fail(minToken?.line ?? list.line, "expected the memory's minimum page count", minToken ? shown(minToken) : "(memory");
    const min = parsePages(minToken);
    let max: number | null = null;
    const maxToken = list.items[i];
    if (isAtom(maxToken)) {
      max = parsePages(maxToken);
      if (max < min) fail(maxToken.line, "memory maximum is below its minimum", maxToken.text);
      i++;
    }
    if (i !== list.items.length) fail(list.items[i]!.line, "unexpected item in memory", shown(list.items[i]!));
    const memory: MemoryDecl = { name: idToken ? checkName(idToken) : null, min, max, imported };
    this.memory = memory;
    this.memoryLine = list.line;
    for (const e of exports.exports) this.exports.push({ ...e, kind: "memory", ref: undefined, index: 0 });
    return memory;
  }

  private globalField(field: List): void {
    const index = this.globals.length;
    let i = 1;
    const idToken = asName(field.items[i]);
    if (idToken) i++;
    const name = this.declareName(this.globalNames, idToken, index, "global");
    const exports = inlineExports(field, i);
    i = exports.next;
    const typeNode = field.items[i++];
    let mutable = false;
    let type: ValType;
    const mut = asList(typeNode, "mut");
    if (mut) {
      if (mut.items.length !== 2) fail(mut.line, "expected (mut i32) or (mut i64)", shown(mut));
      mutable = true;
      type = valType(mut.items[1], mut);
    } else {
      type = valType(typeNode, field);
    }
    const init = constExpr(field.items.slice(i), field, type);
    this.globals.push({ name, type, mutable, init });
    for (const e of exports.exports) this.exports.push({ ...e, kind: "global", ref: undefined, index });
  }

  private exportField(field: List): void {
    const name = this.nameString(field.items[1], field, "export name");
    const desc = field.items[2];
    if (field.items.length !== 3 || !desc || desc.kind !== "list" || !isAtom(desc.items[0])) {
      fail(field.line, 'expected (export "name" (func|memory|global ref))', shown(field.items[2] ?? field));
    }
    const kind = desc.items[0].text;
    if (kind !== "func" && kind !== "memory" && kind !== "global") fail(desc.line, "unsupported export kind", kind);
    if (desc.items.length !== 2) fail(desc.line, "expected exactly one reference", shown(desc));
    this.exports.push({ name: name.bytes, nameText: name.text, line: field.line, kind, index: -1, ref: desc.items[1] });
  }

  /** `(data (i32.const N) "..."*)` or `(data (offset (i32.const N)) "..."*)`: active, memory 0. */
  private dataField(field: List): void {
    let i = 1;
    if (asName(field.items[i])) i++; // a data segment's name is never referenced in this subset
    const offsetNode = field.items[i++];
    let offset: number[];
    const offsetClause = asList(offsetNode, "offset");
    if (offsetClause) offset = constExpr(offsetClause.items.slice(1), offsetClause, "i32");
    else if (offsetNode && offsetNode.kind === "list") offset = constExpr([offsetNode], field, "i32");
    else return fail(offsetNode?.line ?? field.line, "expected an active data segment offset such as (i32.const 0)", offsetNode ? shown(offsetNode) : "(data");
    const parts: Uint8Array[] = [];
    for (; i < field.items.length; i++) {
      const s = field.items[i]!;
      if (s.kind !== "string") fail(s.line, "expected a data string", shown(s));
      parts.push(s.bytes);
    }
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    this.data.push({ offset, bytes, line: field.line });
  }

  /** Resolves the export references once every field has declared its name. */
  resolveExports(): Export[] {
    const out: Export[] = [];
    const seen = new Set<string>();
    for (const e of this.exports) {
      const key = Array.from(e.name).join(",");
      if (seen.has(key)) fail(e.line, "duplicate export name", e.nameText);
      seen.add(key);
      let index = e.index;
      if (e.ref !== undefined) index = this.resolveRef(e.kind, e.ref);
      out.push({ name: e.name, kind: EXPORT_KIND[e.kind], index });
    }
    return out;
  }

  private resolveRef(kind: keyof typeof EXPORT_KIND, ref: Node): number {
    if (!isAtom(ref)) return fail(ref.line, `expected a ${kind} name or index`, shown(ref));
    if (kind === "func") return this.funcIndex(ref);
    if (kind === "global") return this.globalIndex(ref);
    if (!this.memory) fail(ref.line, "no memory is declared", ref.text);
    if (asName(ref)) {
      if (ref.text !== this.memory.name) fail(ref.line, "unknown memory", ref.text);
      return 0;
    }
    if (parseU32(ref, ref.text, "memory index") !== 0) fail(ref.line, "memory index out of range (only memory 0)", ref.text);
    return 0;
  }

  funcIndex(token: Atom): number {
    return lookup(token, this.funcNames, this.funcs.length, "func");
  }

  globalIndex(token: Atom): number {
    return lookup(token, this.globalNames, this.globals.length, "global");
  }
}

/** A `$name` from its namespace, or a numeric index below `count`. */
function lookup(token: Atom, names: Map<string, number>, count: number, what: string): number {
  if (asName(token)) {
    const index = names.get(token.text);
    if (index === undefined) fail(token.line, `unknown ${what}`, token.text);
    return index;
  }
  const index = parseU32(token, token.text, `${what} index`);
  if (index >= count) fail(token.line, `${what} index out of range`, token.text);
  return index;
}

function parsePages(token: Atom): number {
  const pages = parseU32(token, token.text, "memory page count");
  if (pages > 65536) fail(token.line, "memory page count above 65536", token.text);
  return pages;
}

function limits(memory: MemoryDecl): number[] {
  return memory.max === null ? [0x00, ...uleb128(memory.min)] : [0x01, ...uleb128(memory.min), ...uleb128(memory.max)];
}

/** An `(export "name")` written inside the field it exports. */
interface InlineExport {
  name: Uint8Array;
  nameText: string;
  line: number;
}

/** `(export "name")*` right after a field's $id. */
function inlineExports(list: List, start: number): { exports: InlineExport[]; next: number } {
  const exports: InlineExport[] = [];
  let i = start;
  for (let e = asList(list.items[i], "export"); e; e = asList(list.items[++i], "export")) {
    const s = e.items[1];
    if (e.items.length !== 2 || !s || s.kind !== "string") return fail(e.line, 'expected (export "name")', shown(e.items[2] ?? e.items[1] ?? e));
    checkUtf8(s, "export name");
    exports.push({ name: s.bytes, nameText: s.text, line: e.line });
  }
  return { exports, next: i };
}

/** Names (import module/field, export) must be valid UTF-8, or the engine rejects the module. */
function checkUtf8(s: Str, what: string): void {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(s.bytes);
  } catch {
    fail(s.line, `${what} is not valid UTF-8`, s.text);
  }
}

/**
 * A constant expression (global initialiser, data offset): one `i32.const`
 * or `i64.const`, folded `(i32.const N)` or flat `i32.const N`, of the given
 * type. Returns its bytes including the terminating `end`.
 */
function constExpr(nodes: Node[], context: List, type: ValType): number[] {
  let opToken: Atom | undefined;
  let valueToken: Node | undefined;
  if (nodes.length === 1 && nodes[0]!.kind === "list") {
    const l = nodes[0] as List;
    if (l.items.length !== 2) fail(l.line, "expected a constant such as (i32.const 0)", shown(l));
    opToken = isAtom(l.items[0]) ? l.items[0] : undefined;
    valueToken = l.items[1];
  } else if (nodes.length === 2 && isAtom(nodes[0])) {
    opToken = nodes[0];
    valueToken = nodes[1];
  } else {
    fail(nodes[0]?.line ?? context.line, "expected a constant expression such as (i32.const 0)", nodes[0] ? shown(nodes[0]) : shown(context));
  }
  if (!opToken || (opToken.text !== "i32.const" && opToken.text !== "i64.const")) {
    return fail(opToken?.line ?? context.line, "only i32.const and i64.const are supported in constant expressions", opToken?.text ?? shown(context));
  }
  if (opToken.text !== `${type}.const`) fail(opToken.line, `expected a ${type} constant`, opToken.text);
  if (!isAtom(valueToken)) return fail(opToken.line, "missing constant value after", opToken.text);
  const value = parseIntConst(valueToken, type === "i32" ? 32 : 64);
  return [type === "i32" ? 0x41 : 0x42, ...sleb128(value), END];
}

/**
 * A function's header after its $id: `(export "n")*` (defined functions
 * only), then `(param ...)*`, `(result ...)?`, `(local ...)*` in that order.
 * Returns where the instructions start.
 */
function parseFuncHeader(
  list: List,
  start: number,
  defined: boolean,
): {
  exports: InlineExport[];
  params: ValType[];
  results: ValType[];
  locals: ValType[];
  names: Map<string, number>;
  next: number;
} {
  const exports = defined ? inlineExports(list, start) : { exports: [], next: start };
  const params: ValType[] = [];
  const results: ValType[] = [];
  const locals: ValType[] = [];
  const names = new Map<string, number>();
  const stages = ["param", "result", "local"];
  let stage = 0;
  let i = exports.next;
  for (; i < list.items.length; i++) {
    const clause = list.items[i]!;
    if (clause.kind !== "list" || !isAtom(clause.items[0])) break;
    const head = clause.items[0].text;
    if (head === "type") fail(clause.line, "(type ...) uses are not supported; types are inferred", "(type");
    if (head === "export") fail(clause.line, defined ? "(export ...) must come right after the func's $id" : "an imported func cannot be exported inline", "(export");
    const s = stages.indexOf(head);
    if (s < 0) break; // the first instruction
    if (s < stage) fail(clause.line, `(${head} ...) after (${stages[stage]} ...)`, `(${head}`);
    if (head === "local" && !defined) fail(clause.line, "an imported func has no locals", "(local");
    stage = s;
    if (head === "result") {
      for (const t of clause.items.slice(1)) results.push(valType(t, clause));
      if (results.length > 1) fail(clause.line, "at most one result is supported", shown(clause));
      continue;
    }
    const into = head === "param" ? params : locals;
    const first = asName(clause.items[1]);
    if (first) {
      // A named clause declares exactly one param or local.
      if (clause.items.length !== 3) fail(clause.line, `a named ${head} declares exactly one type`, shown(clause));
      const name = checkName(first);
      if (names.has(name)) fail(first.line, "duplicate local name", name);
      names.set(name, params.length + locals.length);
      into.push(valType(clause.items[2], clause));
    } else {
      for (const t of clause.items.slice(1)) into.push(valType(t, clause));
    }
  }
  return { exports: exports.exports, params, results, locals, names, next: i };
}

// ---------------------------------------------------------------------------
// Function bodies

/** Reads the items of one list from left to right. */
class Cursor {
  constructor(
    readonly items: Node[],
    public pos: number,
  ) {}
  peek(): Node | undefined {
    return this.items[this.pos];
  }
  next(): Node | undefined {
    return this.items[this.pos++];
  }
  done(): boolean {
    return this.pos >= this.items.length;
  }
}

class BodyAssembler {
  readonly code: number[] = [];
  /** Enclosing block labels, innermost last; the function body is the outermost (unnamed) target. */
  private readonly labels: (string | null)[] = [null];

  constructor(
    private readonly module: ModuleBuilder,
    private readonly func: FuncDecl,
  ) {}

  /**
   * Instructions until the cursor runs out or until a flat terminator
   * (`end`, `else`) that the caller expects; returns that terminator.
   */
  sequence(cur: Cursor, terminators: readonly string[]): Atom | null {
    while (!cur.done()) {
      const node = cur.next()!;
      if (node.kind === "list") {
        this.folded(node);
      } else if (node.kind === "string") {
        fail(node.line, "unexpected string among instructions", node.text);
      } else if (node.text === "end" || node.text === "else") {
        if (terminators.includes(node.text)) return node;
        fail(node.line, node.text === "else" ? "'else' outside a flat if" : "'end' without an open flat block", node.text);
      } else {
        this.flat(node, cur);
      }
    }
    return null;
  }

  /** A flat instruction whose keyword has been read; its immediates follow on the cursor. */
  private flat(keyword: Atom, cur: Cursor): void {
    if (keyword.text === "block" || keyword.text === "loop") {
      const label = this.optionalLabel(cur);
      this.code.push(keyword.text === "block" ? BLOCK : LOOP, this.blockType(cur));
      this.labels.push(label);
      const end = this.sequence(cur, ["end"]);
      if (!end) fail(keyword.line, "missing 'end' for", keyword.text);
      this.endLabel(cur, label);
      this.labels.pop();
      this.code.push(END);
    } else if (keyword.text === "if") {
      const label = this.optionalLabel(cur);
      this.code.push(IF, this.blockType(cur));
      this.labels.push(label);
      let end = this.sequence(cur, ["else", "end"]);
      if (end?.text === "else") {
        this.endLabel(cur, label);
        this.code.push(ELSE);
        end = this.sequence(cur, ["end"]);
      }
      if (!end) fail(keyword.line, "missing 'end' for", keyword.text);
      this.endLabel(cur, label);
      this.labels.pop();
      this.code.push(END);
    } else {
      this.code.push(...this.plain(keyword, cur));
    }
  }

  /** A folded instruction: operands (nested folded instructions) first, then the operator. */
  private folded(list: List): void {
    const keyword = list.items[0];
    if (!isAtom(keyword)) return fail(list.line, "expected an instruction", shown(list));
    const cur = new Cursor(list.items, 1);
    switch (keyword.text) {
      case "block":
      case "loop": {
        const label = this.optionalLabel(cur);
        this.code.push(keyword.text === "block" ? BLOCK : LOOP, this.blockType(cur));
        this.labels.push(label);
        this.sequence(cur, []);
        this.labels.pop();
        this.code.push(END);
        return;
      }
      case "if":
        return this.foldedIf(list, cur);
      default: {
        const operator = this.plain(keyword, cur);
        while (!cur.done()) {
          const operand = cur.next()!;
          if (operand.kind !== "list") fail(operand.line, `unexpected token in folded ${keyword.text} (operands must be parenthesised)`, shown(operand));
          this.folded(operand);
        }
        this.code.push(...operator);
      }
    }
  }

  /** `(if $l? (result t)? cond* (then instr*) (else instr*)?)`: the condition lies outside the if's label. */
  private foldedIf(list: List, cur: Cursor): void {
    const label = this.optionalLabel(cur);
    const type = this.blockType(cur);
    while (!cur.done() && !asList(cur.peek(), "then")) {
      const cond = cur.next()!;
      if (cond.kind !== "list") fail(cond.line, "expected a folded condition or (then ...) in folded if", shown(cond));
      if (asList(cond, "else")) fail(cond.line, "(else ...) before (then ...)", "(else");
      this.folded(cond);
    }
    const then = asList(cur.next(), "then");
    if (!then) return fail(list.line, "folded if without (then ...)", "(if");
    this.code.push(IF, type);
    this.labels.push(label);
    this.sequence(new Cursor(then.items, 1), []);
    const otherwise = cur.next();
    if (otherwise !== undefined) {
      const elseClause = asList(otherwise, "else");
      if (!elseClause) return fail(otherwise.line, "expected (else ...) after (then ...)", shown(otherwise));
      this.code.push(ELSE);
      this.sequence(new Cursor(elseClause.items, 1), []);
    }
    if (!cur.done()) fail(cur.peek()!.line, "unexpected item after (else ...)", shown(cur.peek()!));
    this.labels.pop();
    this.code.push(END);
  }

  private optionalLabel(cur: Cursor): string | null {
    const node = asName(cur.peek());
    if (!node) return null;
    cur.next();
    return checkName(node);
  }

  /** `(result t)?` after a block keyword: the empty block type or one value type. */
  private blockType(cur: Cursor): number {
    const unsupported = asList(cur.peek(), "param") ?? asList(cur.peek(), "type");
    if (unsupported) fail(unsupported.line, "block params and type uses are not supported", shown(unsupported));
    const node = asList(cur.peek(), "result");
    if (!node) return EMPTY_BLOCK_TYPE;
    cur.next();
    if (node.items.length > 2) fail(node.line, "at most one block result is supported", shown(node));
    if (asList(cur.peek(), "result")) fail(node.line, "at most one block result is supported", "(result");
    return node.items.length === 2 ? VALTYPE_BYTE[valType(node.items[1], node)] : EMPTY_BLOCK_TYPE;
  }

  /** `end $l` / `else $l` may repeat the block's label; it must then match. */
  private endLabel(cur: Cursor, label: string | null): void {
    const node = asName(cur.peek());
    if (!node) return;
    cur.next();
    if (node.text !== label) fail(node.line, label ? `label does not match the block's ${label}` : "label after end/else of an unlabelled block", node.text);
  }

  /** An instruction without a nested body: opcode and immediates (read from the cursor). */
  private plain(keyword: Atom, cur: Cursor): number[] {
    const spec = OPS.get(keyword.text);
    if (!spec) return fail(keyword.line, "unknown instruction", keyword.text);
    if (spec.usesMemory && !this.module.memory) fail(keyword.line, "instruction needs a memory, and none is declared", keyword.text);
    const out = [...spec.opcode];
    switch (spec.immediate) {
      case "none":
      case "memory":
        break;
      case "label":
        out.push(...uleb128(this.labelDepth(this.immediate(keyword, cur))));
        break;
      case "labels": {
        const depths: number[] = [];
        while (isAtom(cur.peek()) && /^[$0-9]/.test((cur.peek() as Atom).text)) depths.push(this.labelDepth(cur.next() as Atom));
        if (depths.length === 0) fail(keyword.line, "br_table needs at least a default label", keyword.text);
        out.push(...uleb128(depths.length - 1));
        for (const d of depths) out.push(...uleb128(d));
        break;
      }
      case "func":
        out.push(...uleb128(this.module.funcIndex(this.immediate(keyword, cur))));
        break;
      case "local":
        out.push(...uleb128(lookup(this.immediate(keyword, cur), this.func.localNames, this.func.localTypes.length, "local")));
        break;
      case "global": {
        const index = this.module.globalIndex(this.immediate(keyword, cur));
        if (keyword.text === "global.set" && !this.module.globals[index]!.mutable) fail(keyword.line, "global.set of an immutable global", keyword.text);
        out.push(...uleb128(index));
        break;
      }
      case "memarg":
        out.push(...memarg(keyword, spec.naturalAlign!, cur));
        break;
      case "i32":
      case "i64":
        out.push(...sleb128(parseIntConst(this.immediate(keyword, cur), spec.immediate === "i32" ? 32 : 64)));
        break;
    }
    return out;
  }

  /** The one atom a `label`/`func`/`local`/`global`/const instruction requires. */
  private immediate(keyword: Atom, cur: Cursor): Atom {
    const node = cur.peek();
    if (!isAtom(node) || INSTRUCTION_NAMES.has(node.text)) {
      return fail(keyword.line, "missing immediate after", keyword.text);
    }
    cur.next();
    return node;
  }

  /** A `$label` resolves to the innermost enclosing block of that name; a number is a depth. */
  private labelDepth(token: Atom): number {
    if (asName(token)) {
      for (let depth = 0; depth < this.labels.length; depth++) {
        if (this.labels[this.labels.length - 1 - depth] === token.text) return depth;
      }
      return fail(token.line, "unknown label", token.text);
    }
    const depth = parseU32(token, token.text, "label depth");
    if (depth >= this.labels.length) fail(token.line, "label depth out of range", token.text);
    return depth;
  }
}

/** `offset=N? align=N?` (in that order); align is written in bytes and encoded as its log2. */
function memarg(keyword: Atom, naturalAlign: number, cur: Cursor): number[] {
  let offset = 0;
  let alignLog2 = naturalAlign;
  let node = cur.peek();
  if (isAtom(node) && node.text.startsWith("offset=")) {
    cur.next();
    offset = parseU32(node, node.text.slice("offset=".length), "offset");
    node = cur.peek();
  }
  if (isAtom(node) && node.text.startsWith("align=")) {
    cur.next();
    const align = parseU32(node, node.text.slice("align=".length), "alignment");
    if (align === 0 || (align & (align - 1)) !== 0) fail(node.line, "alignment must be a power of two", node.text);
    alignLog2 = Math.log2(align);
    if (alignLog2 > naturalAlign) fail(node.line, `alignment larger than the natural ${2 ** naturalAlign} of ${keyword.text}`, node.text);
    node = cur.peek();
  }
  if (isAtom(node) && (node.text.startsWith("offset=") || node.text.startsWith("align="))) {
    fail(node.line, "repeated or misordered memarg (write offset= before align=)", node.text);
  }
  return [...uleb128(alignLog2), ...uleb128(offset)];
}

// ---------------------------------------------------------------------------
// Binary encoding

/** A growable byte buffer; appends by loop, because spreading a large data segment would overflow the stack. */
class Bytes {
  readonly out: number[] = [];
  byte(b: number): this {
    this.out.push(b);
    return this;
  }
  u32(n: number): this {
    return this.append(uleb128(n));
  }
  append(bytes: ArrayLike<number>): this {
    for (let i = 0; i < bytes.length; i++) this.out.push(bytes[i]!);
    return this;
  }
  name(bytes: Uint8Array): this {
    return this.u32(bytes.length).append(bytes);
  }
}

function section(out: Bytes, id: number, content: Bytes): void {
  out.byte(id).u32(content.out.length).append(content.out);
}

function encodeModule(m: ModuleBuilder, exports: Export[], bodies: number[][]): Uint8Array {
  const out = new Bytes().append([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const defined = m.funcs.filter((f) => f.body !== null);

  if (m.types.length > 0) {
    const s = new Bytes().u32(m.types.length);
    for (const t of m.types) {
      s.byte(0x60).u32(t.params.length).append(t.params.map((v) => VALTYPE_BYTE[v]));
      s.u32(t.results.length).append(t.results.map((v) => VALTYPE_BYTE[v]));
    }
    section(out, 1, s);
  }
  if (m.imports.length > 0) {
    const s = new Bytes().u32(m.imports.length);
    for (const imp of m.imports) s.name(imp.module).name(imp.field).append(imp.desc);
    section(out, 2, s);
  }
  if (defined.length > 0) {
    const s = new Bytes().u32(defined.length);
    for (const f of defined) s.u32(f.typeIndex);
    section(out, 3, s);
  }
  if (m.memory && !m.memory.imported) section(out, 5, new Bytes().u32(1).append(limits(m.memory)));
  if (m.globals.length > 0) {
    const s = new Bytes().u32(m.globals.length);
    for (const g of m.globals) s.byte(VALTYPE_BYTE[g.type]).byte(g.mutable ? 1 : 0).append(g.init);
    section(out, 6, s);
  }
  if (exports.length > 0) {
    const s = new Bytes().u32(exports.length);
    for (const e of exports) s.name(e.name).byte(e.kind).u32(e.index);
    section(out, 7, s);
  }
  // DataCount lets validators accept bulk-memory instructions before they have seen the data section.
  if (m.data.length > 0) section(out, 12, new Bytes().u32(m.data.length));
  if (defined.length > 0) {
    const s = new Bytes().u32(defined.length);
    defined.forEach((f, i) => {
      const body = new Bytes();
      const runs = localRuns(f.localTypes.slice(f.paramCount));
      body.u32(runs.length);
      for (const r of runs) body.u32(r.count).byte(VALTYPE_BYTE[r.type]);
      body.append(bodies[i]!).byte(END);
      s.u32(body.out.length).append(body.out);
    });
    section(out, 10, s);
  }
  if (m.data.length > 0) {
    const s = new Bytes().u32(m.data.length);
    for (const d of m.data) s.byte(0x00).append(d.offset).name(d.bytes); // 0x00: active, memory 0
    section(out, 11, s);
  }
  return Uint8Array.from(out.out);
}

/** Locals are declared as runs of one type (count, type). */
function localRuns(types: ValType[]): { count: number; type: ValType }[] {
  const runs: { count: number; type: ValType }[] = [];
  for (const type of types) {
    const last = runs[runs.length - 1];
    if (last && last.type === type) last.count++;
    else runs.push({ count: 1, type });
  }
  return runs;
}

// ---------------------------------------------------------------------------
// Entry points

/** Assembles a `(module ...)` in the supported WAT subset to WebAssembly binary. */
export function assembleWat(source: string): Uint8Array {
  const top = parseTree(source);
  if (top.length === 0) fail(1, "expected (module ...)", "");
  const moduleList = asList(top[0], "module");
  if (!moduleList) return fail(top[0]!.line, "expected (module ...)", shown(top[0]!));
  if (top.length > 1) fail(top[1]!.line, "unexpected content after (module ...)", shown(top[1]!));

  const m = new ModuleBuilder();
  let i = 1;
  if (asName(moduleList.items[1])) i++; // the module's own name has no binary meaning here
  for (; i < moduleList.items.length; i++) m.field(moduleList.items[i]!);
  for (const d of m.data) if (!m.memory) fail(d.line, "data segment without a memory", "(data");

  const exports = m.resolveExports();
  const bodies: number[][] = [];
  for (const f of m.funcs) {
    if (!f.body) continue;
    const asm = new BodyAssembler(m, f);
    asm.sequence(new Cursor(f.body.items, f.body.start), []);
    bodies.push(asm.code);
  }
  return encodeModule(m, exports, bodies);
}

/** The text of a kernel-wasm.ts (src/journal/fast/, src/steps/) for its kernel.wat source (scripts/build-wasm.ts writes it; a test compares). */
/**
 * A .wat file with its `(@include "relative/path.wat")` fields replaced by
 * the named files' text (module fields shared by several kernels, e.g.
 * src/wasm/bytes.wat). An include stands on a line of its own; kernels put
 * theirs last, so line numbers in error messages stay those of the kernel's
 * own text. Included files may not include others.
 */
const INCLUDE = /^[ \t]*\(@include "([^"]+)"\)[ \t]*$/gm;

export function readWat(path: string): string {
  return readFileSync(path, "utf8").replace(INCLUDE, (_, rel: string) => {
    const text = readFileSync(join(dirname(path), rel), "utf8");
    if (new RegExp(INCLUDE.source, "m").test(text)) throw new Error(`${rel}: an included file may not include others`);
    return text;
  });
}

export function kernelModuleSource(watText: string): string {
  const base64 = Buffer.from(assembleWat(watText)).toString("base64");
  return (
    "// Generated by scripts/build-wasm.ts from kernel.wat; do not edit. A test checks it is current.\n" +
    `export const KERNEL_WASM_BASE64 = "${base64}";\n`
  );
}
