;; The step kernel: the fast path of receipt verification (§5b) for step rows
;; already in canonical form (compact, sorted keys, ASCII, Python's string
;; escapes and number spellings), as WebAssembly.
;;
;; Why WebAssembly: a JavaScript scanner spends much of a one-shot
;; `replay verify` being JIT-compiled before it runs at full speed; a
;; WebAssembly module compiles in a few milliseconds and runs at native
;; speed from its first row. SHA-256 stays native: the kernel calls back
;; into Bun's hasher (import `hash`).
;;
;; Contract (kernel.ts drives it; the walker's `take` calls it for the line
;; splitter): `verify` walks consecutive rows ended by `\n` or `\r\n` from a
;; line start and returns at the first row it does not take (`crlfs` says
;; how many of those taken ended in `\r\n`). It takes a row only
;; when it is canonical (compact, sorted keys, ASCII, Python's escapes, and
;; Python's number spelling where the hash covers it), ChainWalker.fast
;; would hash it, and it checks out: seq is the expected one, prev_hash is
;; the head and step_hash is the recomputed digest. Every other row (a spelling it does
;; not prove, an error to report, a line break other than those, a row cut
;; by the end of the data) is left to the JavaScript path, which decides it
;; exactly as before; so this kernel only has to be exact for the rows it
;; takes. Where the kernel is stricter (long floats) it only refuses more.
;;
;; A canonical row holds only printable ASCII outside its terminator, so it
;; contains no line break of either splitting dialect: each row it takes is
;; exactly one line for the splitter.
;;
;; Memory (imported; src/wasm/arena.ts lays it out from the exported
;; globals below): [0, heapBase) holds this module's tables and constants;
;; the walker's arena (read area, then its scratch)
;; follows; the pre-image area `out` comes after that ($setup). `verify`
;; writes a line feed at `bound` for the duration of the call, so every
;; scanning loop stops at the end of the data; word loads may read up to 7
;; bytes past a row's end (the arena's scratch lies beyond the read area).
;;
;; Fixed addresses:
;;      0  the byte tables of src/codec/bytes.wat (STRCLASS, HEXVAL, HEXPAIR,
;;         SHORTESC), filled by $setupTables; with the helpers that read them,
;;         shared with the other modules (included at the end of this module)
;;   1280  the top-level key names the walker reads (data segments below)
;;   1392  the pre-image pieces, as ChainWalker.putPieces writes them
;;   1536  digest (32)    1600  head: the previous step hash, 64 hex digits
;;   1712  the digest's hex (64), to compare with a row's step_hash
;;   1792  SPANS: 16 bytes per key id: value start, value end, plain string flag
;;
;;   1664  the key names only dict-form mode reads (blob_refs, schema_version, ts)
;;   2048  the agent view's entry layout (prettyRow), 32 bytes per key
;;   3072  publish mode: the redacted chain's head (64 hex digits), its line's
;;         pieces, the leak scan's byte table (3328) and home directory (3584)
;;   4096  per scanner depth, whether the container being rendered has an item
;;         yet (to the scanner's bound, bytes.ts MAX_DEPTH: to 5097)
;;
;; Key ids: 0 any other key, 1 seq, 2 step_hash, then the hashed ones (whose
;; numbers must be spelled as Python re-spells them): 3 prev_hash,
;; 4 input_hash, 5 model, 6 prompt, 7 tool_call, 8 tool_result, 9 effort;
;; then the unhashed keys of the dict form: 10 blob_refs, 11 schema_version,
;; 12 ts.
;;
;; Modes (`setMode`, bits): 1 dict form: a row is taken only when it is also
;; exactly its export dict form (§2.4: the eleven keys, `effort` only when
;; non-null, int seq and schema_version, a float ts as Python spells it,
;; `blob_refs` empty), so its bytes are its export line; 2 report: each
;; taken row is handed to the host (import `row`) with SPANS still holding
;; its value spans, for the readers that render or rewrite it; 4 display:
;; with 1, a ts needs only be a float lexeme (the display prints it as it
;; is spelled, not re-spelled); 8 links: the stored step_hash is trusted
;; (not recomputed) and only the links are checked, for a second pass over
;; rows a first one verified (a row that no longer links goes to the host);
;; 16 render: with 1 and 4, each taken row is also rendered as the agent
;; view's entry at the render cursor (renderArm), in the same visit that
;; hashed it; a row that does not fit while the render area holds anything
;; stops the walk (renderFull) for the host to empty it and call again, and
;; a row prettyRow leaves to the host is not taken; 32 record: each taken
;; row in dict form (by isDictForm; with 4 for its ts) shorter than 64 KiB
;; leaves a span record (recordArm) for a later pass over the same file, a
;; full record area stopping the walk like a full render area;
;; 64 publish: with 1, each taken row is also redacted and re-chained
;; ($publishRow: `replay publish`'s line, byte for byte what rows.ts
;; redactRow + rowLine make of it) into the area `setPublish` names (handed to the host,
;; import `flush`, whenever the next line may not fit), and handed to the
;; host (import `row`) only when a field left unredacted may hold a path;
;; 128 replay: a row whose record is next (fed by recordFeed; matched by
;; file offset, setChunk) takes its spans from it instead of being
;; scanned, and counts as dict form; a row without one is scanned as usual. Records are the
;; host's to trust: it feeds them only for the file they were made from.
(module
  (import "env" "memory" (memory 1))
  ;; SHA-256 of the pre-image [out, out+len) into the digest
  (import "env" "hash" (func $hash (param i32)))
  ;; 1 when the float lexeme [s, e) is spelled as Python re-spells its value
  (import "env" "floatIsCanonical" (func $floatIsCanonical (param i32 i32) (result i32)))
  ;; 1 when the float lexeme [s, e) is the repr of its value (dict-form mode's ts)
  (import "env" "tsIsCanonical" (func $tsIsCanonical (param i32 i32) (result i32)))
  ;; a taken row [p, q) (q: its line feed), in report mode
  (import "env" "row" (func $onRow (param i32 i32)))
  ;; publish mode: the area is full; the host takes its lines (`published`) and it starts over
  (import "env" "flush" (func $flush))

  ;; the layout the host reads (src/wasm/arena.ts): fixed addresses, and the first byte it may use
  (global (export "digest") i32 (i32.const 1536))
  (global (export "head") i32 (i32.const 1600))
  (global (export "spans") i32 (i32.const 1792))
  (global (export "pubHead") i32 (i32.const 3072))
  (global (export "pubHome") i32 (i32.const 3584))
  (global (export "heapBase") i32 (i32.const 5120))

  (global $out (mut i32) (i32.const 0))
  (global $expected (mut i64) (i64.const 0))  ;; the seq the next row must carry
  (global $rows (mut i32) (i32.const 0))
  ;; the last row taken: its line feed; and how many rows the current `verify` took that end in CR LF
  (global $lineEnd (mut i32) (i32.const 0))
  (global $crlfs (mut i32) (i32.const 0))
  (global $keyCount (mut i32) (i32.const 0)) ;; top-level keys of the row $scanTop read
  (global $mode (mut i32) (i32.const 0))
  ;; publish mode: its output area [$pubAt, $pubLimit), the end of what the
  ;; current `verify` wrote, the key ids to redact and to scan for leaks (bit
  ;; per id), the home directory's length at 3584, and whether every row is reported
  (global $pubAt (mut i32) (i32.const 0))
  (global $pubO (mut i32) (i32.const 0))
  (global $pubLimit (mut i32) (i32.const 0))
  (global $redactIds (mut i32) (i32.const 0))
  (global $leakIds (mut i32) (i32.const 0))
  (global $homeLen (mut i32) (i32.const 0))
  (global $leakAlways (mut i32) (i32.const 0))

  (data (i32.const 1280) "seq")
  (data (i32.const 1288) "model")
  (data (i32.const 1296) "effort")
  (data (i32.const 1304) "prompt")
  (data (i32.const 1312) "prev_hash")
  (data (i32.const 1328) "step_hash")
  (data (i32.const 1344) "tool_call")
  (data (i32.const 1360) "input_hash")
  (data (i32.const 1376) "tool_result")
  (data (i32.const 1392) "{\"effort\":")
  (data (i32.const 1408) "{\"input_hash\":")
  (data (i32.const 1424) ",\"input_hash\":")
  (data (i32.const 1440) ",\"model\":")
  (data (i32.const 1456) ",\"prev_hash\":")
  (data (i32.const 1472) ",\"prompt\":")
  (data (i32.const 1488) ",\"tool_call\":")
  (data (i32.const 1504) ",\"tool_result\":")
  (data (i32.const 1520) "null")
  (data (i32.const 1664) "blob_refs")
  (data (i32.const 1680) "schema_version")
  ;; The agent view's entry: per key in dict-form order, its key id, the length
  ;; of its line's opening, that opening (prettyRow); then the closing line.
  (data (i32.const 2048) "\01\13    {\0a      \22seq\22: ")  ;; seq
  (data (i32.const 2080) "\03\15,\0a      \22prev_hash\22: ")  ;; prev_hash
  (data (i32.const 2112) "\04\16,\0a      \22input_hash\22: ")  ;; input_hash
  (data (i32.const 2144) "\05\11,\0a      \22model\22: ")  ;; model
  (data (i32.const 2176) "\06\12,\0a      \22prompt\22: ")  ;; prompt
  (data (i32.const 2208) "\07\15,\0a      \22tool_call\22: ")  ;; tool_call
  (data (i32.const 2240) "\08\17,\0a      \22tool_result\22: ")  ;; tool_result
  (data (i32.const 2272) "\09\12,\0a      \22effort\22: ")  ;; effort
  (data (i32.const 2304) "\02\15,\0a      \22step_hash\22: ")  ;; step_hash
  (data (i32.const 2336) "\0c\0e,\0a      \22ts\22: ")  ;; ts
  (data (i32.const 2368) "\0a\15,\0a      \22blob_refs\22: ")  ;; blob_refs
  (data (i32.const 2400) "\0b\1a,\0a      \22schema_version\22: ")  ;; schema_version
  (data (i32.const 2432) "\0a    }")  ;; the row's closing line
  ;; publish mode's line pieces (the head at 3072 is written by the host)
  (data (i32.const 3136) "{\22blob_refs\22:[],")
  (data (i32.const 3152) ",\22schema_version\22:")
  (data (i32.const 3184) ",\22seq\22:")
  (data (i32.const 3192) ",\22step_hash\22:\22")
  (data (i32.const 3208) ",\22ts\22:")
  (data (i32.const 3216) "\22<<redacted>>\22")

  (func (export "rows") (result i32) (global.get $rows))
  (func (export "crlfs") (result i32) (global.get $crlfs))
  (func (export "setMode") (param $m i32) (global.set $mode (local.get $m)))

  ;; Tables, and where the pre-image is assembled.
  (func (export "setup") (param $out i32)
    (global.set $out (local.get $out))
    (call $setupTables))

  ;; ---------------------------------------------------------------- the scanner's consumer

  ;; A row is read by the codec's scanner (src/codec/scan.wat, included at
  ;; the end); what this kernel keeps of it is each top-level value's span
  ;; in SPANS, by key id, and whether the row is canonical: its spelling
  ;; flags, decided when its object closes.

  (global $keyId (mut i32) (i32.const 0))  ;; the top-level key whose value is being read
  (global $strict (mut i32) (i32.const 0)) ;; that value is hashed: its numbers must be as Python re-spells them

  ;; No tape: nothing reads a token back ($push is never called).
  (global $tape i32 (i32.const 0))
  (func $push (param $word i32) (param $s i32) (param $end i32) (result i32) (i32.const 0))

  ;; A canonical row holds no whitespace; a line break ends it (the data's
  ;; sentinel is one), so only space and tab are read as such (and refused).
  (func $isWs (param $c i32) (result i32)
    (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 9))))

  ;; canonical rows are compact, their keys strictly ascending at every depth
  (global $spaced i32 (i32.const 0))
  (global $keysTo i32 (i32.const 1))
  (global $containersTo i32 (i32.const 1))
  ;; -0: NotPython in a hashed value, taken elsewhere (set per top-level key)
  (global $minusZero (mut i32) (i32.const 64))
  (global $orderFrom i32 (i32.const 1))

  ;; (the key and value hooks see the row's own members only: $keysTo)
  (func $onKey (param $depth i32) (param $kt i32) (param $ks i32) (param $ke i32) (result i32)
    (global.set $keyId (call $identify (local.get $ks) (i32.sub (local.get $ke) (local.get $ks))))
    (global.set $strict (i32.and (i32.ge_u (global.get $keyId) (i32.const 3)) (i32.le_u (global.get $keyId) (i32.const 9))))
    (global.set $minusZero (select (i32.const 64) (i32.const 0) (global.get $strict)))
    (i32.const 1))

  ;; A top-level value: its span and whether it is a string without escapes.
  (func $onValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32)
    (local $slot i32)
    (global.set $keyCount (i32.add (global.get $keyCount) (i32.const 1)))
    (local.set $slot (i32.add (i32.const 1792) (i32.shl (global.get $keyId) (i32.const 4))))
    (i32.store (local.get $slot) (local.get $vs))
    (i32.store offset=4 (local.get $slot) (local.get $ve))
    (i32.store offset=8 (local.get $slot)
      (i32.and (i32.eq (global.get $valKind) (i32.const 4)) (i32.eqz (i32.and (global.get $valFlags) (i32.const 16)))))
    (i32.const 1))

  (func $onElement (param $depth i32) (param $i i32) (result i32) (i32.const 1))
  (func $onElementValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32) (i32.const 1))
  (func $onOpen (param $kind i32) (param $depth i32) (result i32) (i32.const 1))

  ;; The row's object closes: canonical when compact (Tight only), its keys
  ;; strictly ascending in Python's order ($cmp: so none repeats), its keys
  ;; and strings ASCII in Python's escapes and its hashed numbers in
  ;; Python's spelling. (the container hooks see the row's object only: $containersTo)
  (func $onClose (param $a i32) (param $kind i32) (param $depth i32) (param $flags i32) (param $own i32) (param $end i32) (result i32)
    ;; Spaced | OddSpace | Unsorted | Utf8 | NotPython | FloatUndecided
    (i32.eqz (i32.and (local.get $flags) (i32.const 9952))))

  ;; A float in a hashed value as Python re-spells it (decided here when the
  ;; digits tell, float.wat, else by the host); elsewhere any float: the hash
  ;; does not cover its spelling. (An int's -0 likewise: $minusZero.)
  (func $numberFlags (param $s i32) (param $e i32) (result i32)
    (local $r i32)
    (if (i32.eqz (global.get $strict)) (then (return (i32.const 0))))
    ;; no float repr is this long: spare the call
    (if (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 32)) (then (return (i32.const -1))))
    (local.set $r (call $floatRepr (local.get $s) (local.get $e)))
    (if (i32.eqz (local.get $r)) (then (local.set $r (select (i32.const 1) (i32.const -1) (call $floatIsCanonical (local.get $s) (local.get $e))))))
    (select (i32.const 0) (i32.const -1) (i32.gt_s (local.get $r) (i32.const 0))))

  ;; ---------------------------------------------------------------- rows

  ;; The id of the top-level key [ks, ks+n) (see the header), 0 for any other.
  (func $identify (param $ks i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $n) (i32.const 2))
      (then (return (select (i32.const 12) (i32.const 0) (i32.eq (i32.load16_u (local.get $ks)) (i32.const 0x7374))))))
    (if (i32.eq (local.get $n) (i32.const 14))
      (then (return (select (i32.const 11) (i32.const 0) (call $eq (local.get $ks) (i32.const 1680) (i32.const 14))))))
    (if (i32.eq (local.get $n) (i32.const 3))
      (then (return (select (i32.const 1) (i32.const 0) (call $eq (local.get $ks) (i32.const 1280) (i32.const 3))))))
    (if (i32.eq (local.get $n) (i32.const 5))
      (then (return (select (i32.const 5) (i32.const 0) (call $eq (local.get $ks) (i32.const 1288) (i32.const 5))))))
    (if (i32.eq (local.get $n) (i32.const 6))
      (then
        (if (call $eq (local.get $ks) (i32.const 1296) (i32.const 6)) (then (return (i32.const 9))))
        (return (select (i32.const 6) (i32.const 0) (call $eq (local.get $ks) (i32.const 1304) (i32.const 6))))))
    (if (i32.eq (local.get $n) (i32.const 9))
      (then
        (if (call $eq (local.get $ks) (i32.const 1312) (i32.const 9)) (then (return (i32.const 3))))
        (if (call $eq (local.get $ks) (i32.const 1328) (i32.const 9)) (then (return (i32.const 2))))
        (if (call $eq (local.get $ks) (i32.const 1664) (i32.const 9)) (then (return (i32.const 10))))
        (return (select (i32.const 7) (i32.const 0) (call $eq (local.get $ks) (i32.const 1344) (i32.const 9))))))
    (if (i32.eq (local.get $n) (i32.const 10))
      (then (return (select (i32.const 4) (i32.const 0) (call $eq (local.get $ks) (i32.const 1360) (i32.const 10))))))
    (if (i32.eq (local.get $n) (i32.const 11))
      (then (return (select (i32.const 8) (i32.const 0) (call $eq (local.get $ks) (i32.const 1376) (i32.const 11))))))
    (i32.const 0))

  ;; The row's top-level object at p (its `{`): its end, or -1; the value
  ;; spans of the keys the walker reads are left in SPANS (start -1: absent).
  ;; An empty object has no seq: the fast path never takes it.
  (func $scanTop (param $p i32) (result i32)
    (memory.fill (i32.const 1792) (i32.const 0xff) (i32.const 208))
    (global.set $keyCount (i32.const 0))
    (call $object (local.get $p) (i32.const 1)))

  ;; SPANS of key id k: value start, value end, plain string flag.
  (func $spanStart (param $k i32) (result i32)
    (i32.load (i32.add (i32.const 1792) (i32.shl (local.get $k) (i32.const 4)))))
  (func $spanEnd (param $k i32) (result i32)
    (i32.load offset=4 (i32.add (i32.const 1792) (i32.shl (local.get $k) (i32.const 4)))))

  ;; Append n bytes from src at o: the new end.
  (func $put (param $o i32) (param $src i32) (param $n i32) (result i32)
    (call $copy (local.get $o) (local.get $src) (local.get $n))
    (i32.add (local.get $o) (local.get $n)))

  ;; Append the value of key id k, `null` when the row lacks it.
  (func $putValue (param $o i32) (param $k i32) (result i32)
    (local $s i32)
    (local.set $s (call $spanStart (local.get $k)))
    (if (i32.lt_s (local.get $s) (i32.const 0)) (then (return (call $put (local.get $o) (i32.const 1520) (i32.const 4)))))
    (call $put (local.get $o) (local.get $s) (i32.sub (call $spanEnd (local.get $k)) (local.get $s))))

  ;; The step-hash pre-image (§1.3) at out, as ChainWalker.putPieces
  ;; assembles it (a null effort is omitted): its length.
  (func $preimage (result i32)
    (local $o i32) (local $es i32) (local $effort i32)
    (local.set $o (global.get $out))
    (local.set $es (call $spanStart (i32.const 9)))
    (if (i32.ge_s (local.get $es) (i32.const 0))
      (then
        (local.set $effort
          (i32.eqz (i32.and (i32.eq (i32.sub (call $spanEnd (i32.const 9)) (local.get $es)) (i32.const 4))
                            (i32.eq (i32.load8_u (local.get $es)) (i32.const 0x6e)))))))
    (if (local.get $effort)
      (then
        (local.set $o (call $put (local.get $o) (i32.const 1392) (i32.const 10)))
        (local.set $o (call $putValue (local.get $o) (i32.const 9)))
        (local.set $o (call $put (local.get $o) (i32.const 1424) (i32.const 14))))
      (else (local.set $o (call $put (local.get $o) (i32.const 1408) (i32.const 14)))))
    (local.set $o (call $putValue (local.get $o) (i32.const 4)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1440) (i32.const 9)) (i32.const 5)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1456) (i32.const 13)) (i32.const 3)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1472) (i32.const 10)) (i32.const 6)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1488) (i32.const 13)) (i32.const 7)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1504) (i32.const 15)) (i32.const 8)))
    (i32.store8 (local.get $o) (i32.const 0x7d))
    (i32.sub (i32.add (local.get $o) (i32.const 1)) (global.get $out)))

  ;; The row's seq is plain digits (at most 15, as ChainWalker.fast reads
  ;; them) equal to the expected one.
  (func $seqIsExpected (result i32)
    (local $s i32) (local $e i32) (local $c i32) (local $v i64)
    (local.set $s (call $spanStart (i32.const 1)))
    (local.set $e (call $spanEnd (i32.const 1)))
    (if (i32.or (i32.lt_s (local.get $s) (i32.const 0)) (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 15)))
      (then (return (i32.const 0))))
    (loop $digit
      (local.set $c (i32.sub (i32.load8_u (local.get $s)) (i32.const 0x30)))
      (if (i32.ge_u (local.get $c) (i32.const 10)) (then (return (i32.const 0))))
      (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $s) (local.get $e))))
    (i64.eq (local.get $v) (global.get $expected)))

;; The int lexeme [s, e) as export keeps it: at most 18 characters, an
  ;; optional minus, digits without a leading zero, and not "-0".
  (func $isIntLexeme (param $s i32) (param $e i32) (result i32)
    (local $i i32) (local $c i32)
    (if (i32.or (i32.lt_s (local.get $s) (i32.const 0)) (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 18)))
      (then (return (i32.const 0))))
    (local.set $i (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (if (i32.ge_u (local.get $i) (local.get $e)) (then (return (i32.const 0))))
    (if (i32.and (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x30)) (i32.ne (i32.sub (local.get $e) (local.get $s)) (i32.const 1)))
      (then (return (i32.const 0))))
    (loop $digit
      (local.set $c (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)))
      (if (i32.ge_u (local.get $c) (i32.const 10)) (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (local.get $e))))
    (i32.const 1))

  ;; Dict-form mode: the row $scanTop just read is exactly its export dict
  ;; form (see the header). The hashes' spelling is checked by $row.
  (func $isDictForm (result i32)
    (local $k i32) (local $s i32) (local $e i32) (local $c i32) (local $want i32) (local $i i32) (local $dot i32)
    (local.set $want (i32.const 11))
    (local.set $s (call $spanStart (i32.const 9)))
    (if (i32.ge_s (local.get $s) (i32.const 0))
      (then
        ;; a null effort is dropped by the dict form: not this row's bytes
        (if (i32.and (i32.eq (i32.sub (call $spanEnd (i32.const 9)) (local.get $s)) (i32.const 4))
                     (i32.eq (i32.load8_u (local.get $s)) (i32.const 0x6e)))
          (then (return (i32.const 0))))
        (local.set $want (i32.const 12))))
    (if (i32.ne (global.get $keyCount) (local.get $want)) (then (return (i32.const 0))))
    ;; every key but effort present (keys are strictly ascending, so these are all the keys)
    (local.set $k (i32.const 1))
    (loop $key
      (if (i32.ne (local.get $k) (i32.const 9))
        (then (if (i32.lt_s (call $spanStart (local.get $k)) (i32.const 0)) (then (return (i32.const 0))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $key (i32.le_u (local.get $k) (i32.const 12))))
    (if (i32.eqz (call $isIntLexeme (call $spanStart (i32.const 1)) (call $spanEnd (i32.const 1)))) (then (return (i32.const 0))))
    (if (i32.eqz (call $isIntLexeme (call $spanStart (i32.const 11)) (call $spanEnd (i32.const 11)))) (then (return (i32.const 0))))
    ;; blob_refs: [] (a row with refs goes to the host, which collects them)
    (local.set $s (call $spanStart (i32.const 10)))
    (if (i32.or (i32.ne (i32.sub (call $spanEnd (i32.const 10)) (local.get $s)) (i32.const 2))
                (i32.ne (i32.load16_u (local.get $s)) (i32.const 0x5d5b)))
      (then (return (i32.const 0))))
    ;; ts: a float lexeme (a `.` or an exponent; no word) Python spells so
    (local.set $s (call $spanStart (i32.const 12)))
    (local.set $e (call $spanEnd (i32.const 12)))
    (if (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 32)) (then (return (i32.const 0))))
    (local.set $c (i32.load8_u (local.get $s)))
    (if (i32.and (i32.ne (local.get $c) (i32.const 0x2d)) (i32.ge_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
      (then (return (i32.const 0))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0x2d)) (i32.eq (i32.load8_u offset=1 (local.get $s)) (i32.const 0x49)))
      (then (return (i32.const 0))))
    (local.set $i (local.get $s))
    (loop $ch
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.or (i32.eq (local.get $c) (i32.const 0x2e)) (i32.eq (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x65)))
        (then (local.set $dot (i32.const 1))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $ch (i32.lt_u (local.get $i) (local.get $e))))
    (if (i32.eqz (local.get $dot)) (then (return (i32.const 0))))
    (if (i32.and (global.get $mode) (i32.const 4)) (then (return (i32.const 1))))
    ;; decided here when the digits tell (float.wat), else by the host
    (local.set $c (call $floatRepr (local.get $s) (local.get $e)))
    (if (local.get $c) (then (return (i32.gt_s (local.get $c) (i32.const 0)))))
    (call $tsIsCanonical (local.get $s) (local.get $e)))

  ;; The value of key id k is a string of 64 bytes (a hash, if anything).
  (func $isHash (param $k i32) (result i32)
    (local $s i32)
    (local.set $s (call $spanStart (local.get $k)))
    ;; (i32.and evaluates both sides: an absent key must not be loaded from)
    (if (i32.lt_s (local.get $s) (i32.const 0)) (then (return (i32.const 0))))
    (i32.and (i32.eq (i32.sub (call $spanEnd (local.get $k)) (local.get $s)) (i32.const 66))
             (i32.eq (i32.load8_u (local.get $s)) (i32.const 0x22))))

  ;; The 64 bytes at p are the lowercase hex of the digest (written at 1712).
  (func $isDigestHex (param $p i32) (result i32)
    (call $hex (i32.const 1712) (i32.const 1536))
    (call $eq (local.get $p) (i32.const 1712) (i32.const 64)))

  ;; Take the row at p if it is canonical, within `maxLine`, ended by a line
  ;; feed before `bound`, and checks out: the index of that line feed, or -1.
  ;; A taken row's step_hash becomes the head.
  (func $row (param $p i32) (param $bound i32) (param $maxLine i32) (result i32)
    (local $q i32) (local $step i32) (local $replayed i32) (local $lf i32)
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x7b)) (then (return (i32.const -1))))
    (local.set $q (i32.const -1))
    (if (i32.and (global.get $mode) (i32.const 128))
      (then
        (local.set $q (call $replay (local.get $p)))
        ;; out of records while more exist: stop here for the host to feed them
        (if (global.get $recWant) (then (return (i32.const -1))))
        (local.set $replayed (i32.ge_s (local.get $q) (i32.const 0)))))
    (if (i32.lt_s (local.get $q) (i32.const 0)) (then (local.set $q (call $scanTop (local.get $p)))))
    (if (i32.lt_s (local.get $q) (i32.const 0)) (then (return (i32.const -1))))
    ;; the row ends its line: a line feed, or a CR LF (Python's text mode on Windows; one break to
    ;; both splitting dialects); a line feed at `bound` is the sentinel: the row may go on in the next chunk
    (local.set $lf (local.get $q))
    (if (i32.eq (i32.load8_u (local.get $q)) (i32.const 0x0d)) (then (local.set $lf (i32.add (local.get $q) (i32.const 1)))))
    (if (i32.or (i32.ge_u (local.get $lf) (local.get $bound)) (i32.ne (i32.load8_u (local.get $lf)) (i32.const 0x0a)))
      (then (return (i32.const -1))))
    (if (i32.gt_u (i32.sub (local.get $q) (local.get $p)) (local.get $maxLine)) (then (return (i32.const -1))))
    ;; publish mode: room for the row's line (it grows by at most 13 bytes per redacted value),
    ;; after the host took the lines before it; a row longer than the area goes to the host
    (if (i32.and (global.get $mode) (i32.const 64))
      (then
        (if (i32.gt_u (i32.add (global.get $pubAt) (i32.add (i32.sub (local.get $q) (local.get $p)) (i32.const 128))) (global.get $pubLimit))
          (then (return (i32.const -1))))
        (if (i32.gt_u (i32.add (global.get $pubO) (i32.add (i32.sub (local.get $q) (local.get $p)) (i32.const 128))) (global.get $pubLimit))
          (then
            (call $flush)
            (global.set $pubO (global.get $pubAt))))))
    (if (i32.eqz (call $seqIsExpected)) (then (return (i32.const -1))))
    (if (i32.and (i32.and (global.get $mode) (i32.const 1)) (i32.eqz (local.get $replayed)))
      (then (if (i32.eqz (call $isDictForm)) (then (return (i32.const -1))))))
    ;; the fast path hashes input_hash only as a string without escapes
    (if (i32.ne (i32.load (i32.const 1864)) (i32.const 1)) (then (return (i32.const -1))))
    (if (i32.eqz (i32.and (call $isHash (i32.const 3)) (call $isHash (i32.const 2)))) (then (return (i32.const -1))))
    (if (i32.eqz (call $eq (i32.add (call $spanStart (i32.const 3)) (i32.const 1)) (i32.const 1600) (i32.const 64)))
      (then (return (i32.const -1))))
    (local.set $step (i32.add (call $spanStart (i32.const 2)) (i32.const 1)))
    (if (i32.eqz (i32.and (global.get $mode) (i32.const 8)))
      (then
        (call $hash (call $preimage))
        (if (i32.eqz (call $isDigestHex (local.get $step))) (then (return (i32.const -1))))))
    (if (i32.and (global.get $mode) (i32.const 16))
      (then (if (i32.eqz (call $renderTaken)) (then (return (i32.const -1))))))
    (if (i32.and (global.get $mode) (i32.const 32))
      (then (if (i32.eqz (call $recordRow (local.get $p) (local.get $q))) (then (return (i32.const -1))))))
    (call $copy (i32.const 1600) (local.get $step) (i32.const 64))
    (global.set $expected (i64.add (global.get $expected) (i64.const 1)))
    (if (i32.and (global.get $mode) (i32.const 2)) (then (call $onRow (local.get $p) (local.get $q))))
    (if (i32.and (global.get $mode) (i32.const 64)) (then (call $publishRow (local.get $p) (local.get $q))))
    (global.set $lineEnd (local.get $lf))
    (if (i32.ne (local.get $lf) (local.get $q)) (then (global.set $crlfs (i32.add (global.get $crlfs) (i32.const 1)))))
    (local.get $q))

  ;; Take rows from the line start p while they check out, the first
  ;; carrying seq lo + hi * 2^32, linked to the head at 1600 (the walker
  ;; puts it there). Returns where the first row not taken starts; `rows`
  ;; tells how many were taken, and the head is then the last one's hash.
  (func (export "verify") (param $p i32) (param $bound i32) (param $maxLine i32) (param $lo i32) (param $hi i32) (result i32)
    (local $saved i32) (local $q i32)
    (global.set $expected (i64.or (i64.shl (i64.extend_i32_u (local.get $hi)) (i64.const 32)) (i64.extend_i32_u (local.get $lo))))
    (global.set $rows (i32.const 0))
    (global.set $crlfs (i32.const 0))
    (global.set $pubO (global.get $pubAt))
    (local.set $saved (i32.load8_u (local.get $bound)))
    (i32.store8 (local.get $bound) (i32.const 0x0a))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $bound)))
        (local.set $q (call $row (local.get $p) (local.get $bound) (local.get $maxLine)))
        (br_if $done (i32.lt_s (local.get $q) (i32.const 0)))
        (global.set $rows (i32.add (global.get $rows) (i32.const 1)))
        (local.set $p (i32.add (global.get $lineEnd) (i32.const 1)))
        (br $next)))
    (i32.store8 (local.get $bound) (local.get $saved))
    (local.get $p))

  ;; ---------------------------------------------------------------- publish

  ;; Publish mode's output area [at, limit), the key ids to redact (bit per
  ;; id: 5 model .. 8 tool_result), the length of the home directory the
  ;; host put at 3584 (0: none), and `always`: report every row (a home the
  ;; byte scan cannot look for). The other redactable fields are scanned.
  (func (export "setPublish") (param $at i32) (param $limit i32) (param $redact i32) (param $homeLen i32) (param $always i32)
    (global.set $pubAt (local.get $at))
    (global.set $pubO (local.get $at))
    (global.set $pubLimit (local.get $limit))
    (global.set $redactIds (local.get $redact))
    (global.set $leakIds (i32.and (i32.const 0x1e0) (i32.xor (local.get $redact) (i32.const -1))))
    (global.set $homeLen (local.get $homeLen))
    (global.set $leakAlways (local.get $always))
    ;; the characters PathLeakScanner's pattern lets stand before a slash: " \t\n\v\f\r\"'=:,;([~"
    (memory.fill (i32.const 3328) (i32.const 0) (i32.const 256))
    (memory.fill (i32.const 3337) (i32.const 1) (i32.const 5)) ;; \t \n \v \f \r
    (i32.store8 (i32.const 3360) (i32.const 1)) ;; space
    (i32.store8 (i32.const 3362) (i32.const 1)) ;; "
    (i32.store8 (i32.const 3367) (i32.const 1)) ;; '
    (i32.store8 (i32.const 3368) (i32.const 1)) ;; (
    (i32.store8 (i32.const 3372) (i32.const 1)) ;; ,
    (i32.store8 (i32.const 3386) (i32.const 1)) ;; :
    (i32.store8 (i32.const 3387) (i32.const 1)) ;; ;
    (i32.store8 (i32.const 3389) (i32.const 1)) ;; =
    (i32.store8 (i32.const 3419) (i32.const 1)) ;; [
    (i32.store8 (i32.const 3454) (i32.const 1))) ;; ~

  ;; Bytes publish mode wrote in the last `verify`, from `at`.
  (func (export "published") (result i32) (i32.sub (global.get $pubO) (global.get $pubAt)))

  ;; Append key id k's value as published: the redaction mark when k is
  ;; redacted and the value is not null, else its own bytes.
  (func $pubValue (param $o i32) (param $k i32) (result i32)
    (local $s i32) (local $e i32)
    (local.set $s (call $spanStart (local.get $k)))
    (local.set $e (call $spanEnd (local.get $k)))
    (if (i32.and (i32.shr_u (global.get $redactIds) (local.get $k)) (i32.const 1))
      (then
        (if (i32.eqz (i32.and (i32.eq (i32.sub (local.get $e) (local.get $s)) (i32.const 4))
                              (i32.eq (i32.load8_u (local.get $s)) (i32.const 0x6e))))
          (then (return (call $put (local.get $o) (i32.const 3216) (i32.const 14)))))))
    (call $put (local.get $o) (local.get $s) (i32.sub (local.get $e) (local.get $s))))

  ;; PathLeakScanner.mayHold of the value [s, e): an escaped backslash after
  ;; a colon or before another (or an escaped slash), a slash after an
  ;; escape of a space or a quote, a slash after a byte of the table at
  ;; 3328, or the home directory at a slash.
  (func $mayHold (param $s i32) (param $e i32) (result i32)
    (local $i i32) (local $c i32) (local $d i32) (local $next i32) (local $before i32)
    (local.set $i (local.get $s))
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $i) (local.get $e)))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.eq (local.get $c) (i32.const 0x5c))
          (then
            (local.set $d (i32.load8_u offset=1 (local.get $i)))
            ;; a backslash after a drive's colon, or two (a UNC path); an escaped slash
            (if (i32.eq (local.get $d) (i32.const 0x5c))
              (then
                (if (i32.or (i32.and (i32.gt_u (local.get $i) (local.get $s)) (i32.eq (i32.load8_u (i32.sub (local.get $i) (i32.const 1))) (i32.const 0x3a)))
                            (i32.eq (i32.load16_u offset=2 (local.get $i)) (i32.const 0x5c5c)))
                  (then (return (i32.const 1))))))
            (if (i32.eq (local.get $d) (i32.const 0x2f)) (then (return (i32.const 1))))
            (if (i32.eq (local.get $d) (i32.const 0x75))
              (then
                (local.set $next (i32.add (local.get $i) (i32.const 6)))
                (local.set $before (call $isSpace (call $hex4At (i32.add (local.get $i) (i32.const 2))))))
              (else
                (local.set $next (i32.add (local.get $i) (i32.const 2)))
                ;; \t \n \f \r \"
                (local.set $before
                  (i32.or (i32.or (i32.eq (local.get $d) (i32.const 0x74)) (i32.eq (local.get $d) (i32.const 0x6e)))
                          (i32.or (i32.or (i32.eq (local.get $d) (i32.const 0x66)) (i32.eq (local.get $d) (i32.const 0x72)))
                                  (i32.eq (local.get $d) (i32.const 0x22)))))))
            (if (i32.and (local.get $before) (i32.eq (i32.load8_u (local.get $next)) (i32.const 0x2f))) (then (return (i32.const 1))))
            (local.set $i (local.get $next))
            (br $byte)))
        (if (i32.eq (local.get $c) (i32.const 0x2f))
          (then
            (if (i32.gt_u (local.get $i) (local.get $s))
              (then
                (if (i32.load8_u (i32.add (i32.const 3328) (i32.load8_u (i32.sub (local.get $i) (i32.const 1)))))
                  (then (return (i32.const 1))))))
            (if (i32.and (i32.ne (global.get $homeLen) (i32.const 0))
                         (i32.ge_u (i32.sub (local.get $e) (local.get $i)) (global.get $homeLen)))
              (then
                (if (call $eq (local.get $i) (i32.const 3584) (global.get $homeLen)) (then (return (i32.const 1))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
    (i32.const 0))

  ;; The UTF-16 unit u is white space to JavaScript's \s (path-leaks.ts isSpace).
  (func $isSpace (param $u i32) (result i32)
    (i32.or
      (i32.or
        (i32.or (i32.lt_u (i32.sub (local.get $u) (i32.const 9)) (i32.const 5)) (i32.eq (local.get $u) (i32.const 0x20)))
        (i32.or (i32.eq (local.get $u) (i32.const 0xa0)) (i32.eq (local.get $u) (i32.const 0x1680))))
      (i32.or
        (i32.or (i32.le_u (i32.sub (local.get $u) (i32.const 0x2000)) (i32.const 10))
                (i32.or (i32.eq (local.get $u) (i32.const 0x2028)) (i32.eq (local.get $u) (i32.const 0x2029))))
        (i32.or
          (i32.or (i32.eq (local.get $u) (i32.const 0x202f)) (i32.eq (local.get $u) (i32.const 0x205f)))
          (i32.or (i32.eq (local.get $u) (i32.const 0x3000)) (i32.eq (local.get $u) (i32.const 0xfeff)))))))

  ;; Whether the host must scan the row for leaks: a field it scans may hold a path.
  (func $mayLeak (result i32)
    (local $k i32)
    (if (global.get $leakAlways) (then (return (i32.const 1))))
    (local.set $k (i32.const 5))
    (loop $field
      (if (i32.and (i32.shr_u (global.get $leakIds) (local.get $k)) (i32.const 1))
        (then
          (if (call $mayHold (call $spanStart (local.get $k)) (call $spanEnd (local.get $k))) (then (return (i32.const 1))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $field (i32.le_u (local.get $k) (i32.const 8))))
    (i32.const 0))

  ;; The taken row [p, q) (in dict form) redacted and re-chained (§5): its
  ;; redacted pre-image, linked to the head at 3072, is hashed at `out`; the
  ;; head becomes that digest's hex; the published line (sorted keys,
  ;; blob_refs first, ts last, hashed values as in the pre-image) is
  ;; appended at $pubO.
  (func $publishRow (param $p i32) (param $q i32)
    (local $o i32) (local $inputAt i32) (local $preTail i32) (local $preEnd i32) (local $effort i32)
    (local.set $effort (i32.ge_s (call $spanStart (i32.const 9)) (i32.const 0)))
    (local.set $o (global.get $out))
    (if (local.get $effort)
      (then
        (local.set $o (call $put (local.get $o) (i32.const 1392) (i32.const 10)))
        (local.set $o (call $putValue (local.get $o) (i32.const 9)))
        (local.set $inputAt (i32.add (local.get $o) (i32.const 1)))
        (local.set $o (call $put (local.get $o) (i32.const 1424) (i32.const 14))))
      (else
        (local.set $inputAt (i32.add (local.get $o) (i32.const 1)))
        (local.set $o (call $put (local.get $o) (i32.const 1408) (i32.const 14)))))
    (local.set $o (call $putValue (local.get $o) (i32.const 4)))
    (local.set $o (call $pubValue (call $put (local.get $o) (i32.const 1440) (i32.const 9)) (i32.const 5)))
    (local.set $o (call $put (local.get $o) (i32.const 1456) (i32.const 13)))
    (i32.store8 (local.get $o) (i32.const 0x22))
    (local.set $o (call $put (i32.add (local.get $o) (i32.const 1)) (i32.const 3072) (i32.const 64)))
    (i32.store8 (local.get $o) (i32.const 0x22))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (local.set $o (call $pubValue (call $put (local.get $o) (i32.const 1472) (i32.const 10)) (i32.const 6)))
    (local.set $preTail (local.get $o))
    (local.set $o (call $pubValue (call $put (local.get $o) (i32.const 1488) (i32.const 13)) (i32.const 7)))
    (local.set $o (call $pubValue (call $put (local.get $o) (i32.const 1504) (i32.const 15)) (i32.const 8)))
    (local.set $preEnd (local.get $o))
    (i32.store8 (local.get $o) (i32.const 0x7d))
    (call $hash (i32.sub (i32.add (local.get $o) (i32.const 1)) (global.get $out)))
    ;; the line, from the pre-image's pieces (they hold the old head as prev_hash)
    (local.set $o (call $put (global.get $pubO) (i32.const 3136) (i32.const 16)))
    (if (local.get $effort)
      (then
        (local.set $o (call $putValue (call $put (local.get $o) (i32.const 1393) (i32.const 9)) (i32.const 9)))
        (i32.store8 (local.get $o) (i32.const 0x2c))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))))
    (local.set $o (call $put (local.get $o) (local.get $inputAt) (i32.sub (local.get $preTail) (local.get $inputAt))))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 3152) (i32.const 18)) (i32.const 11)))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 3184) (i32.const 7)) (i32.const 1)))
    (local.set $o (call $put (local.get $o) (i32.const 3192) (i32.const 14)))
    ;; the new head: the digest's hex
    (call $hex (i32.const 3072) (i32.const 1536))
    (local.set $o (call $put (local.get $o) (i32.const 3072) (i32.const 64)))
    (i32.store8 (local.get $o) (i32.const 0x22))
    (local.set $o (call $put (i32.add (local.get $o) (i32.const 1)) (local.get $preTail) (i32.sub (local.get $preEnd) (local.get $preTail))))
    (local.set $o (call $putValue (call $put (local.get $o) (i32.const 3208) (i32.const 6)) (i32.const 12)))
    (i32.store16 (local.get $o) (i32.const 0x0a7d)) ;; "}\n"
    (global.set $pubO (i32.add (local.get $o) (i32.const 2)))
    (if (call $mayLeak) (then (call $onRow (local.get $p) (local.get $q)))))

  ;; ---------------------------------------------------------------- display

  ;; The agent view's rendering of a taken row (its bytes are its dict form):
  ;; `replay <AGENT_ID> --as-json` prints each entry as renderJson of it,
  ;; indented 4 deeper, keys in dict-form order (the table at 2048). Here,
  ;; not in JavaScript, because the per-value and per-byte calls cost the
  ;; view more there than the kernel's whole link pass.
  ;;
  ;; prettyRow: the entry, preceded by its separator (`,\n` when `next`,
  ;; else `\n`), at o: its end, or -1 when it may not fit below `limit` or
  ;; a value holds a lone surrogate (the host's exact path renders those).
  (func $prettyRow (param $next i32) (param $o i32) (param $limit i32) (result i32)
    (local $f i32) (local $slot i32) (local $s i32) (local $e i32) (local $n i32)
    (if (i32.gt_s (i32.add (local.get $o) (i32.const 2)) (local.get $limit)) (then (return (i32.const -1))))
    (if (local.get $next)
      (then (i32.store8 (local.get $o) (i32.const 0x2c)) (local.set $o (i32.add (local.get $o) (i32.const 1)))))
    (i32.store8 (local.get $o) (i32.const 0x0a))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (local.set $f (i32.const 2048))
    (loop $field
      (local.set $slot (i32.add (i32.const 1792) (i32.shl (i32.load8_u (local.get $f)) (i32.const 4))))
      (local.set $s (i32.load (local.get $slot)))
      ;; an absent key (effort: the kernel took no null one) prints nothing
      (if (i32.ge_s (local.get $s) (i32.const 0))
        (then
          (local.set $e (i32.load offset=4 (local.get $slot)))
          (local.set $n (i32.load8_u offset=1 (local.get $f)))
          (if (i32.gt_s (i32.add (i32.add (local.get $o) (local.get $n)) (i32.sub (local.get $e) (local.get $s))) (local.get $limit))
            (then (return (i32.const -1))))
          (local.set $o (call $put (local.get $o) (i32.add (local.get $f) (i32.const 2)) (local.get $n)))
          ;; a string the kernel saw no escape in (hashes, most prompts) renders as its bytes
          (if (i32.load offset=8 (local.get $slot))
            (then (local.set $o (call $put (local.get $o) (local.get $s) (i32.sub (local.get $e) (local.get $s)))))
            (else
              (local.set $o (call $prettyValue (local.get $s) (local.get $e) (local.get $o) (local.get $limit) (i32.const 6)))
              (if (i32.lt_s (local.get $o) (i32.const 0)) (then (return (i32.const -1))))))))
      (local.set $f (i32.add (local.get $f) (i32.const 32)))
      (br_if $field (i32.lt_u (local.get $f) (i32.const 2432))))
    (if (i32.gt_s (i32.add (local.get $o) (i32.const 6)) (local.get $limit)) (then (return (i32.const -1))))
    (call $put (local.get $o) (i32.const 2432) (i32.const 6)))

  ;; ---------------------------------------------------------------- render mode

  ;; Mode 16: where taken rows' entries go. The host arms it (its area
  ;; [base, limit), the cursor o in it, whether an entry precedes the next,
  ;; how many entries it still wants) before a walk and again after taking
  ;; what was rendered.
  (global $rBase (mut i32) (i32.const 0))
  (global $rOut (mut i32) (i32.const 0))
  (global $rLimit (mut i32) (i32.const 0))
  (global $rNext (mut i32) (i32.const 0))
  (global $rLeft (mut i32) (i32.const 0))
  (global $rCount (mut i32) (i32.const 0))
  (global $rFull (mut i32) (i32.const 0))

  (func (export "renderArm") (param $base i32) (param $o i32) (param $limit i32) (param $next i32) (param $left i32)
    (global.set $rBase (local.get $base))
    (global.set $rOut (local.get $o))
    (global.set $rLimit (local.get $limit))
    (global.set $rNext (local.get $next))
    (global.set $rLeft (local.get $left))
    (global.set $rCount (i32.const 0))
    (global.set $rFull (i32.const 0)))
  ;; the end of what was rendered since renderArm, how many entries, and whether the walk stopped for room
  (func (export "renderEnd") (result i32) (global.get $rOut))
  (func (export "renderCount") (result i32) (global.get $rCount))
  (func (export "renderFull") (result i32) (global.get $rFull))

  ;; The row $row is taking, rendered at the cursor: 1, or 0 when it is not
  ;; to be taken (no room while the area holds anything: renderFull, the
  ;; host empties it and calls again; or prettyRow leaves it to the host).
  (func $renderTaken (result i32)
    (local $end i32)
    (if (i32.eqz (global.get $rLeft)) (then (return (i32.const 1))))
    (local.set $end (call $prettyRow (global.get $rNext) (global.get $rOut) (global.get $rLimit)))
    (if (i32.lt_s (local.get $end) (i32.const 0))
      (then
        (global.set $rFull (i32.gt_u (global.get $rOut) (global.get $rBase)))
        (return (i32.const 0))))
    (global.set $rOut (local.get $end))
    (global.set $rNext (i32.const 1))
    (global.set $rLeft (i32.sub (global.get $rLeft) (i32.const 1)))
    (global.set $rCount (i32.add (global.get $rCount) (i32.const 1)))
    (i32.const 1))

  ;; ---------------------------------------------------------------- span records

  ;; A record (64 bytes): the row's file offset (u64), its length (u32), the
  ;; plain-string flags (u32, bit k for key id k), then for key ids 1..12
  ;; the value starts (u16 each, 0xffff: absent) and ends (u16 each),
  ;; relative to the row's start.
  (global $recOut (mut i32) (i32.const 0))
  (global $recLimit (mut i32) (i32.const 0))
  (global $recIn (mut i32) (i32.const 0))
  (global $recEnd (mut i32) (i32.const 0))
  (global $recMore (mut i32) (i32.const 0))
  (global $recWant (mut i32) (i32.const 0))
  (global $fileBase (mut i64) (i64.const 0))
  (global $addrBase (mut i32) (i32.const 0))

  ;; The bytes at addr are the file's at offset lo + hi * 2^32 (the chunk being walked).
  (func (export "setChunk") (param $addr i32) (param $lo i32) (param $hi i32)
    (global.set $addrBase (local.get $addr))
    (global.set $fileBase (i64.or (i64.shl (i64.extend_i32_u (local.get $hi)) (i64.const 32)) (i64.extend_i32_u (local.get $lo)))))
  ;; mode 32: records go to [o, limit); recordEnd: where they end
  (func (export "recordArm") (param $o i32) (param $limit i32)
    (global.set $recOut (local.get $o))
    (global.set $recLimit (local.get $limit))
    (global.set $rFull (i32.const 0)))
  (func (export "recordEnd") (result i32) (global.get $recOut))
  ;; mode 64: the records [in, end) are next, and whether more follow them
  (func (export "recordFeed") (param $in i32) (param $end i32) (param $more i32)
    (global.set $recIn (local.get $in))
    (global.set $recEnd (local.get $end))
    (global.set $recMore (local.get $more))
    (global.set $recWant (i32.const 0)))
  (func (export "recordsWanted") (result i32) (global.get $recWant))

  (func $fileOffset (param $p i32) (result i64)
    (i64.add (global.get $fileBase) (i64.extend_i32_u (i32.sub (local.get $p) (global.get $addrBase)))))

  ;; The row [p, q) $scanTop just read and $row is taking: its record, if it
  ;; is in dict form and short enough. 0 when the area has no room (renderFull).
  (func $recordRow (param $p i32) (param $q i32) (result i32)
    (local $r i32) (local $k i32) (local $slot i32) (local $s i32) (local $flags i32) (local $at i32)
    (if (i32.ge_u (i32.sub (local.get $q) (local.get $p)) (i32.const 0xffff)) (then (return (i32.const 1))))
    (if (i32.eqz (call $isDictForm)) (then (return (i32.const 1))))
    (local.set $r (global.get $recOut))
    (if (i32.gt_u (i32.add (local.get $r) (i32.const 64)) (global.get $recLimit))
      (then (global.set $rFull (i32.const 1)) (return (i32.const 0))))
    (i64.store (local.get $r) (call $fileOffset (local.get $p)))
    (i32.store offset=8 (local.get $r) (i32.sub (local.get $q) (local.get $p)))
    (local.set $k (i32.const 1))
    (loop $key
      (local.set $slot (i32.add (i32.const 1792) (i32.shl (local.get $k) (i32.const 4))))
      (local.set $at (i32.add (local.get $r) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 1))))
      (local.set $s (i32.load (local.get $slot)))
      (if (i32.lt_s (local.get $s) (i32.const 0))
        (then (i32.store16 offset=16 (local.get $at) (i32.const 0xffff)) (i32.store16 offset=40 (local.get $at) (i32.const 0)))
        (else
          (i32.store16 offset=16 (local.get $at) (i32.sub (local.get $s) (local.get $p)))
          (i32.store16 offset=40 (local.get $at) (i32.sub (i32.load offset=4 (local.get $slot)) (local.get $p)))
          (local.set $flags (i32.or (local.get $flags) (i32.shl (i32.load offset=8 (local.get $slot)) (local.get $k))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $key (i32.le_u (local.get $k) (i32.const 12))))
    (i32.store offset=12 (local.get $r) (local.get $flags))
    (global.set $recOut (i32.add (local.get $r) (i32.const 64)))
    (i32.const 1))

  ;; Mode 64: the row at p from its record (records of rows passed by are
  ;; skipped): SPANS filled, the row's end (its line feed); -1 when it has
  ;; none, or the records ran out while more exist (recordsWanted).
  (func $replay (param $p i32) (result i32)
    (local $off i64) (local $r i32) (local $k i32) (local $s i32) (local $flags i32) (local $slot i32) (local $at i32)
    (local.set $off (call $fileOffset (local.get $p)))
    (loop $skip
      (if (i32.ge_u (global.get $recIn) (global.get $recEnd))
        (then (global.set $recWant (global.get $recMore)) (return (i32.const -1))))
      (local.set $r (global.get $recIn))
      (if (i64.lt_u (i64.load (local.get $r)) (local.get $off))
        (then (global.set $recIn (i32.add (local.get $r) (i32.const 64))) (br $skip))))
    (if (i64.ne (i64.load (local.get $r)) (local.get $off)) (then (return (i32.const -1))))
    (global.set $recIn (i32.add (local.get $r) (i32.const 64)))
    (memory.fill (i32.const 1792) (i32.const 0xff) (i32.const 208))
    (local.set $flags (i32.load offset=12 (local.get $r)))
    (local.set $k (i32.const 1))
    (loop $key
      (local.set $at (i32.add (local.get $r) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 1))))
      (local.set $s (i32.load16_u offset=16 (local.get $at)))
      (if (i32.ne (local.get $s) (i32.const 0xffff))
        (then
          (local.set $slot (i32.add (i32.const 1792) (i32.shl (local.get $k) (i32.const 4))))
          (i32.store (local.get $slot) (i32.add (local.get $p) (local.get $s)))
          (i32.store offset=4 (local.get $slot) (i32.add (local.get $p) (i32.load16_u offset=40 (local.get $at))))
          (i32.store offset=8 (local.get $slot) (i32.and (i32.shr_u (local.get $flags) (local.get $k)) (i32.const 1)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $key (i32.le_u (local.get $k) (i32.const 12))))
    (i32.add (local.get $p) (i32.load offset=8 (local.get $r))))

  ;; The canonical value [s, e) at o, re-indented as renderJson prints it:
  ;; items a line each at `depth` + 2 spaces, `": "`, empty containers
  ;; kept, `\uXXXX` of a printable character as its UTF-8 (a pair as one
  ;; character), control escapes kept. The new end, or -1 when it may pass
  ;; `limit` (checked with slack) or holds a lone surrogate. The value is
  ;; read by the codec's scanner included a second time, as `render`, whose
  ;; consumer ($render.onKey and the rest, below) writes what it finds.
  (global $po (mut i32) (i32.const 0))     ;; the rendering's next byte
  (global $pLimit (mut i32) (i32.const 0))
  (global $pIndent (mut i32) (i32.const 0)) ;; the indent of a top-level value's line
  (global $pFailed (mut i32) (i32.const 0))
  (global $pDepth (mut i32) (i32.const 0))  ;; the scanner depth of the innermost container open

  (func $prettyValue (param $s i32) (param $e i32) (param $o i32) (param $limit i32) (param $depth i32) (result i32)
    (local $end i32)
    (global.set $po (local.get $o))
    (global.set $pLimit (local.get $limit))
    (global.set $pIndent (local.get $depth))
    (global.set $pDepth (i32.const 0))
    (global.set $pFailed (i32.const 0))
    (local.set $end (call $render.value (local.get $s) (i32.const 1)))
    ;; a scalar is written here (a container wrote itself, through the hooks)
    (if (i32.ge_s (local.get $end) (i32.const 0))
      (then (if (i32.eqz (call $render.onValue (i32.const 1) (local.get $s) (local.get $end))) (then (global.set $pFailed (i32.const 1))))))
    (if (i32.or (global.get $pFailed) (i32.ne (local.get $end) (local.get $e))) (then (return (i32.const -1))))
    (global.get $po))

  ;; The render consumer. A value rendered was read before (by the row's
  ;; scan): its order and numbers are not looked at again.
  (func $render.isWs (param $c i32) (result i32) (i32.const 0))
  (global $render.tape i32 (i32.const 0))
  (func $render.push (param $word i32) (param $s i32) (param $end i32) (result i32) (i32.const 0))
  (global $render.keysTo i32 (i32.const 1000))
  (global $render.containersTo i32 (i32.const 1000))
  (global $render.minusZero i32 (i32.const 0))
  (global $render.orderFrom i32 (i32.const 1001))
  (global $render.spaced i32 (i32.const 0))
  (func $render.numberFlags (param $s i32) (param $e i32) (result i32) (i32.const 0))
  (func $render.onKey (param $depth i32) (param $kt i32) (param $ks i32) (param $ke i32) (result i32)
    (call $renderKey (local.get $depth) (local.get $ks) (local.get $ke)))
  (func $render.onValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32)
    (call $renderScalar (local.get $vs) (local.get $ve)))
  (func $render.onElement (param $depth i32) (param $i i32) (result i32)
    (call $renderItem (local.get $depth) (i32.const 0)))
  (func $render.onElementValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32)
    (call $renderScalar (local.get $vs) (local.get $ve)))
  (func $render.onOpen (param $kind i32) (param $depth i32) (result i32)
    (call $renderOpen (local.get $kind) (local.get $depth)))
  (func $render.onClose (param $a i32) (param $kind i32) (param $depth i32) (param $flags i32) (param $own i32) (param $end i32) (result i32)
    (call $renderClose (local.get $kind) (local.get $depth)))

  ;; Room for n more bytes and a line's indent (2 spaces a level of the
  ;; containers open, and a few bytes: a comma, the break, the fill's word);
  ;; else the rendering fails.
  (func $room (param $n i32) (result i32)
    (if (i32.gt_s (i32.add (i32.add (global.get $po) (local.get $n))
                           (i32.add (global.get $pIndent) (i32.add (i32.shl (global.get $pDepth) (i32.const 1)) (i32.const 12))))
                  (global.get $pLimit))
      (then (global.set $pFailed (i32.const 1)) (return (i32.const 0))))
    (i32.const 1))

  ;; The indent of an item of the container at scanner depth d (the top-level value's: 2).
  (func $itemIndent (param $d i32) (result i32)
    (i32.add (global.get $pIndent) (i32.shl (i32.sub (local.get $d) (i32.const 1)) (i32.const 1))))

  ;; Before an item of the container at depth d: a comma after the one
  ;; before it, then its line (and room for `extra` bytes more).
  (func $renderItem (param $d i32) (param $extra i32) (result i32)
    (local $flag i32)
    (if (i32.eqz (call $room (i32.add (local.get $extra) (i32.const 2)))) (then (return (i32.const 0))))
    (local.set $flag (i32.add (i32.const 4096) (local.get $d)))
    (if (i32.load8_u (local.get $flag))
      (then (i32.store8 (global.get $po) (i32.const 0x2c)) (global.set $po (i32.add (global.get $po) (i32.const 1)))))
    (i32.store8 (local.get $flag) (i32.const 1))
    (global.set $po (call $newline (global.get $po) (call $itemIndent (local.get $d))))
    (i32.const 1))

  ;; A scalar value [vs, ve) as rendered (a container wrote itself).
  (func $renderScalar (param $vs i32) (param $ve i32) (result i32)
    (if (i32.le_u (global.get $render.valKind) (i32.const 2)) (then (return (i32.const 1))))
    (if (i32.eq (global.get $render.valKind) (i32.const 4)) (then (return (call $renderString (local.get $vs) (local.get $ve) (global.get $render.valFlags)))))
    (if (i32.eqz (call $room (i32.sub (local.get $ve) (local.get $vs)))) (then (return (i32.const 0))))
    (global.set $po (call $put (global.get $po) (local.get $vs) (i32.sub (local.get $ve) (local.get $vs))))
    (i32.const 1))

  (func $renderOpen (param $kind i32) (param $d i32) (result i32)
    (if (i32.eqz (call $room (i32.const 1))) (then (return (i32.const 0))))
    (i32.store8 (global.get $po) (select (i32.const 0x7b) (i32.const 0x5b) (i32.eq (local.get $kind) (i32.const 1))))
    (global.set $po (i32.add (global.get $po) (i32.const 1)))
    (i32.store8 (i32.add (i32.const 4096) (local.get $d)) (i32.const 0))
    (global.set $pDepth (local.get $d))
    (i32.const 1))

  (func $renderClose (param $kind i32) (param $d i32) (result i32)
    (if (i32.eqz (call $room (i32.const 1))) (then (return (i32.const 0))))
    ;; an empty container stays on its line
    (if (i32.load8_u (i32.add (i32.const 4096) (local.get $d)))
      (then (global.set $po (call $newline (global.get $po) (i32.sub (call $itemIndent (local.get $d)) (i32.const 2))))))
    (i32.store8 (global.get $po) (select (i32.const 0x7d) (i32.const 0x5d) (i32.eq (local.get $kind) (i32.const 1))))
    (global.set $po (i32.add (global.get $po) (i32.const 1)))
    (global.set $pDepth (i32.sub (local.get $d) (i32.const 1)))
    (i32.const 1))

  ;; A key (plain: its bytes are its text) and `": "`.
  (func $renderKey (param $d i32) (param $ks i32) (param $ke i32) (result i32)
    (local $n i32)
    (local.set $n (i32.add (i32.sub (local.get $ke) (local.get $ks)) (i32.const 1)))
    (if (i32.eqz (call $renderItem (local.get $d) (i32.add (local.get $n) (i32.const 3)))) (then (return (i32.const 0))))
    ;; the key's opening quote and text (an escaped key's decoded: its flags are still $string's)
    (if (i32.and (global.get $strFlags) (i32.const 16))
      (then (if (i32.eqz (call $renderString (i32.sub (local.get $ks) (i32.const 1)) (local.get $ke) (i32.const 16))) (then (return (i32.const 0)))))
      (else (global.set $po (call $put (global.get $po) (i32.sub (local.get $ks) (i32.const 1)) (local.get $n)))))
    (i32.store16 (global.get $po) (i32.const 0x3a22)) ;; ":
    (i32.store8 offset=2 (global.get $po) (i32.const 0x20))
    (global.set $po (i32.add (global.get $po) (i32.const 3)))
    (i32.const 1))

  ;; The string token [s, e) as renderJson writes it: short escapes and
  ;; those of control characters kept, any other \uXXXX as its UTF-8 (a
  ;; surrogate pair as one character; a lone one fails the rendering).
  ;; `flags`: its spelling flags (Escaped 16: not its bytes as they are).
  (func $renderString (param $s i32) (param $e i32) (param $flags i32) (result i32)
    (local $c i32) (local $cp i32)
    ;; UTF-8 is never longer than the escapes it stands for
    (if (i32.eqz (call $room (i32.sub (local.get $e) (local.get $s)))) (then (return (i32.const 0))))
    (if (i32.eqz (i32.and (local.get $flags) (i32.const 16)))
      (then
        (global.set $po (call $put (global.get $po) (local.get $s) (i32.sub (local.get $e) (local.get $s))))
        (return (i32.const 1))))
    (loop $str
      (if (i32.ge_u (local.get $s) (local.get $e)) (then (return (i32.const 1))))
      (local.set $c (i32.load8_u (local.get $s)))
      (if (i32.ne (local.get $c) (i32.const 0x5c))
        (then
          (i32.store8 (global.get $po) (local.get $c))
          (global.set $po (i32.add (global.get $po) (i32.const 1)))
          (local.set $s (i32.add (local.get $s) (i32.const 1)))
          (br $str)))
      (if (i32.ne (i32.load8_u offset=1 (local.get $s)) (i32.const 0x75))
        (then
          (i32.store16 (global.get $po) (i32.load16_u (local.get $s)))
          (global.set $po (i32.add (global.get $po) (i32.const 2)))
          (local.set $s (i32.add (local.get $s) (i32.const 2)))
          (br $str)))
      ;; the escape's character (bytes.wat: a surrogate pair joined as Python joins it)
      (local.set $cp (call $codePoint (local.get $s) (local.get $e)))
      (if (i32.lt_u (local.get $cp) (i32.const 0x20))
        (then
          (call $copy (global.get $po) (local.get $s) (i32.const 6))
          (global.set $po (i32.add (global.get $po) (i32.const 6)))
          (local.set $s (i32.add (local.get $s) (i32.const 6)))
          (br $str)))
      (local.set $s (global.get $pointEnd))
      ;; a lone surrogate: the renderer fails (the exact path escapes it)
      ;; (a surrogate is below 0x10000: an astral character's low bits may look like one, U+1D921 say)
      (if (i32.eq (i32.and (local.get $cp) (i32.const 0x1ff800)) (i32.const 0xd800))
        (then (global.set $pFailed (i32.const 1)) (return (i32.const 0))))
      (global.set $po (call $putUtf8 (global.get $po) (local.get $cp)))
      (br $str))
    (i32.const 0))

  ;; A line feed and `depth` spaces at o, eight at a time (the rendering
  ;; keeps room past its end: what is written past them is written over
  ;; next): the new end.
  (func $newline (param $o i32) (param $depth i32) (result i32)
    (local $p i32) (local $end i32)
    (i32.store8 (local.get $o) (i32.const 0x0a))
    (local.set $p (i32.add (local.get $o) (i32.const 1)))
    (local.set $end (i32.add (local.get $p) (local.get $depth)))
    (loop $words
      (i64.store (local.get $p) (i64.const 0x2020202020202020))
      (local.set $p (i32.add (local.get $p) (i32.const 8)))
      (br_if $words (i32.lt_u (local.get $p) (local.get $end))))
    (local.get $end))

  ;; The byte tables and helpers both kernels share.
  (@include "../codec/scan.wat")
  (@include "../codec/scan.wat" render)
  (@include "../codec/bytes.wat")
  (@include "../codec/float.wat")
)
