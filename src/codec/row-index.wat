;; The codec's row scanner as WebAssembly: the same scan as the JavaScript
;; Scanner in row-index.ts, writing the same tape (every word identical) for
;; every row that one takes and declining exactly the rows it declines.
;; row-index.ts copies a row into this module's memory, calls $scan and
;; copies the tape out; it fills the top-level members from the tape.
;;
;; Memory (exported; the module grows it when the tape needs more room):
;;      0  the byte tables of bytes.wat (STRCLASS, HEXVAL, HEXPAIR, SHORTESC),
;;         up to 1280
;;   1280  KEYPROBE[256]  the key table's probe slots (row-index.ts KeyTable):
;;                        a name's id, 0 empty
;;   1536  KEYNAME[128]   per id: u16 offset (from 2048) and u16 length of its name
;;   2048  the names' bytes, up to 4040
;;   4040  LEXEME[48]     a float lexeme the host asks about (floatRepr)
;;   4088  the last $scan's token count and top-level member count (i32 each)
;;   4096  SEEN[2048]     $distinctKeys' table of an object's keys: their
;;                        tokens' tape addresses
;;  12288  SEENGEN[2048]  the object each SEEN slot was filled for ($seenGen
;;                        then; any other value: empty), up to 20480
;;  20480  heapBase: the host puts the row here, then a sentinel 0 byte at
;;         its end and slack, then the top-level members (8 bytes each: the
;;         key's token, its name's id; a fixed number), then the tape (16-byte tokens: kind |
;;         flags, start, end, next; spans are written with the host's bias
;;         added, so they are offsets into the caller's buffer).
;;
;; The sentinel replaces the JavaScript scan's end checks: a 0 byte is no
;; JSON token, no whitespace and no digit, and refused inside a string, so
;; every path that would read past the row's end reaches it first and
;; declines exactly where the JavaScript scan declines. Word loads may read
;; up to 15 bytes past it (the slack).
(module
  (memory (export "memory") 1)
  (global (export "keyProbe") i32 (i32.const 1280))
  (global (export "keyName") i32 (i32.const 1536))
  (global (export "keyBytes") i32 (i32.const 2048))
  (global (export "lexeme") i32 (i32.const 4040))
  (global (export "counts") i32 (i32.const 4088))
  (global (export "heapBase") i32 (i32.const 20480))

  ;; token kinds and spelling flags (row-index.ts Tok and Spell)
  ;; Object 1, Array 2, Key 3, String 4, Int 5, Float 6, Literal 7, NonFinite 8
  ;; Escaped 16, Utf8 32, NotPython 64, Unsorted 128, Tight 256, Spaced 512,
  ;; OddSpace 1024, KeyNotPlain 2048, NonFinite 4096, FloatUndecided 8192

  (global $tape0 (mut i32) (i32.const 0))   ;; the tape's first byte
  (global $tapeEnd (mut i32) (i32.const 0)) ;; the end of memory
  (global $maxPages (mut i32) (i32.const 0)) ;; the memory's size, in pages, that the tape may not grow past
  (global $count (mut i32) (i32.const 0))   ;; tokens on the tape
  (global $bias (mut i32) (i32.const 0))    ;; added to every span offset
  (global $members0 (mut i32) (i32.const 0)) ;; the members area
  (global $mp (mut i32) (i32.const 0))       ;; its next free entry
  (global $keysOn (mut i32) (i32.const 0))   ;; a key table is loaded
  (global $seenGen (mut i32) (i32.const 0))  ;; SEEN's current object (a new number empties every slot at once)

  (start $setupTables)

  ;; Whether a key table is loaded (the host wrote its tables).
  (func (export "useKeys") (param $on i32) (global.set $keysOn (local.get $on)))

  ;; The id of the key name [s, e) in the loaded key table, or 0.
  (func $keyId (param $s i32) (param $e i32) (result i32)
    (local $n i32) (local $h i32) (local $id i32) (local $name i32)
    (local.set $n (i32.sub (local.get $e) (local.get $s)))
    (if (i32.or (i32.eqz (global.get $keysOn)) (i32.eqz (local.get $n))) (then (return (i32.const 0))))
    (local.set $h
      (i32.and
        (i32.add
          (i32.add (i32.mul (local.get $n) (i32.const 31)) (i32.mul (i32.load8_u (local.get $s)) (i32.const 7)))
          (i32.load8_u (i32.sub (local.get $e) (i32.const 1))))
        (i32.const 255)))
    (loop $probe
      (local.set $id (i32.load8_u offset=1280 (local.get $h)))
      (if (i32.eqz (local.get $id)) (then (return (i32.const 0))))
      (local.set $name (i32.add (i32.const 1536) (i32.shl (local.get $id) (i32.const 2))))
      (if (i32.eq (i32.load16_u offset=2 (local.get $name)) (local.get $n))
        (then
          (if (call $eq (local.get $s) (i32.add (i32.const 2048) (i32.load16_u (local.get $name))) (local.get $n))
            (then (return (local.get $id))))))
      (local.set $h (i32.and (i32.add (local.get $h) (i32.const 1)) (i32.const 255)))
      (br $probe))
    (i32.const 0))

  ;; Scan the object at p (the row copied at heapBase, its sentinel at e);
  ;; the tape from tape0 (16-byte aligned, past e's slack), its token count
  ;; and member count at `counts`. Returns the
  ;; object's end (an address) or -1. The top-level members go to `members`,
  ;; as many as fit before the tape. A tape that would grow the memory past
  ;; maxPages traps (the host then scans the row another way).
  (func (export "scan") (param $p i32) (param $e i32) (param $members i32) (param $tape0 i32) (param $bias i32) (param $maxPages i32) (result i32)
    (global.set $maxPages (local.get $maxPages))
    (global.set $members0 (local.get $members))
    (global.set $mp (local.get $members))
    (global.set $tape0 (local.get $tape0))
    (global.set $tapeEnd (i32.shl (memory.size) (i32.const 16)))
    (global.set $count (i32.const 0))
    (global.set $deepest (i32.const 0))
    (global.set $bias (local.get $bias))
    (i32.store8 (local.get $e) (i32.const 0))
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x7b)) (then (return (i32.const -1))))
    (local.set $p (call $object (local.get $p) (i32.const 1)))
    (i32.store (i32.const 4088) (global.get $count))
    (i32.store (i32.const 4092) (i32.shr_u (i32.sub (global.get $mp) (global.get $members0)) (i32.const 3)))
    (local.get $p))

  ;; ---- The consumer of scan.wat's scanner: the tape ----

  ;; Push a token; returns its tape address.
  (func $push (param $word i32) (param $s i32) (param $end i32) (result i32)
    (local $a i32) (local $pages i32)
    (local.set $a (i32.add (global.get $tape0) (i32.shl (global.get $count) (i32.const 4))))
    (if (i32.gt_u (i32.add (local.get $a) (i32.const 16)) (global.get $tapeEnd))
      (then
        (local.set $pages (memory.size))
        (if (i32.gt_u (i32.shl (local.get $pages) (i32.const 1)) (global.get $maxPages)) (then unreachable))
        (if (i32.eq (memory.grow (local.get $pages)) (i32.const -1)) (then unreachable))
        (global.set $tapeEnd (i32.shl (memory.size) (i32.const 16)))))
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (i32.store (local.get $a) (local.get $word))
    (i32.store offset=4 (local.get $a) (i32.add (local.get $s) (global.get $bias)))
    (i32.store offset=8 (local.get $a) (i32.add (local.get $end) (global.get $bias)))
    (i32.store offset=12 (local.get $a) (global.get $count))
    (local.get $a))

  (func $isWs (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
      (i32.or (i32.eq (local.get $c) (i32.const 0x09)) (i32.eq (local.get $c) (i32.const 0x0d)))))

  ;; A top-level key: into the members area (counted always, written while
  ;; the area has room: the host reads the members of a row with more off the tape).
  (func $onKey (param $depth i32) (param $kt i32) (param $ks i32) (param $ke i32) (result i32)
    (if (i32.eq (local.get $depth) (i32.const 1))
      (then
        (if (i32.lt_u (global.get $mp) (global.get $tape0))
          (then
            (i32.store (global.get $mp) (i32.shr_u (i32.sub (local.get $kt) (global.get $tape0)) (i32.const 4)))
            (i32.store offset=4 (global.get $mp) (call $keyId (local.get $ks) (local.get $ke)))))
        (global.set $mp (i32.add (global.get $mp) (i32.const 8)))))
    (i32.const 1))

  (func $onValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32) (i32.const 1))
  (func $onElement (param $depth i32) (param $i i32) (result i32) (i32.const 1))
  (func $onElementValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32) (i32.const 1))
  ;; The deepest container of the last scan (the row's object is 1): what
  ;; the host makes room for when it renders the row's lines' indents.
  (global $deepest (export "deepest") (mut i32) (i32.const 0))
  (func $onOpen (param $kind i32) (param $depth i32) (result i32)
    (if (i32.gt_s (local.get $depth) (global.get $deepest)) (then (global.set $deepest (local.get $depth))))
    (i32.const 1))
  (global $tape i32 (i32.const 1))
  (global $keysTo i32 (i32.const 1))
  ;; every container (the scanner's depth bound, bytes.ts MAX_DEPTH)
  (global $containersTo i32 (i32.const 1000))
  (global $minusZero i32 (i32.const 64))
  (global $orderFrom i32 (i32.const 1))
  (global $spaced i32 (i32.const 1))

  ;; A container's token completed: its flags, its end, the token after its subtree.
  (func $onClose (param $a i32) (param $kind i32) (param $depth i32) (param $flags i32) (param $own i32) (param $end i32) (result i32)
    (i32.store (local.get $a) (i32.or (i32.load (local.get $a)) (local.get $flags)))
    (i32.store offset=8 (local.get $a) (i32.add (local.get $end) (global.get $bias)))
    (i32.store offset=12 (local.get $a) (global.get $count))
    (i32.const 1))

  ;; A float: 0 when float.wat's quick test finds it Python's repr,
  ;; NotPython when it finds it not (or it is longer than any repr),
  ;; FloatUndecided for the host's exact test (floatRepr).
  (func $numberFlags (param $s i32) (param $e i32) (result i32)
    (local $quick i32)
    (local.set $quick
      (if (result i32) (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 32))
        (then (i32.const -1))
        (else (call $fixedFloat (local.get $s) (local.get $e)))))
    (if (result i32) (i32.gt_s (local.get $quick) (i32.const 0))
      (then (i32.const 0))
      (else (select (i32.const 64) (i32.const 8192) (i32.lt_s (local.get $quick) (i32.const 0))))))

  ;; Whether the float lexeme the host wrote at LEXEME (`n` bytes, a 0 byte
  ;; after it) is Python's repr of its value: 1 yes, -1 no, 0 undecided
  ;; (only the host's exact test tells: ties, and forms float.wat leaves).
  (func (export "floatRepr") (param $n i32) (result i32)
    (call $floatRepr (i32.const 4040) (i32.add (i32.const 4040) (local.get $n))))

  ;; ---- Rendering from the tape (the last scan's): renderJson(row, 2) ----
  ;; A consumer's rendering, reading the index, never the grammar again: the
  ;; row re-indented as renderJson(row, 2) prints the parsed row (indent 2,
  ;; "," / ": ", raw UTF-8, escapes decoded but for the ones the renderer
  ;; writes, lone surrogates escaped, numbers as recorded, keys in their
  ;; order), every line indented by $pad more spaces; $inline: one line,
  ;; renderJson(row, null)'s ", " / ": ". It declines an object with a
  ;; repeated key, with keys out of order among which an escaped one stands
  ;; beside raw UTF-8 or a spelling Python does not write (it could equal
  ;; one once decoded), or with keys out of order and more than 1024 of
  ;; them (the repeat check's table holds twice that: a map keyed by path or
  ;; id, in the order it was filled). The host made room for the output.

  (global $op (mut i32) (i32.const 0))    ;; the output's next byte
  (global $pad (mut i32) (i32.const 0))
  (global $inline (mut i32) (i32.const 0))

  ;; Render the tape's root at $out: the output's end, or -1 (declined).
  (func (export "render") (param $out i32) (param $pad i32) (param $inline i32) (result i32)
    (global.set $op (local.get $out))
    (global.set $pad (local.get $pad))
    (global.set $inline (local.get $inline))
    (call $fill (local.get $pad))
    (if (i32.eqz (call $render (i32.const 0) (i32.const 0))) (then (return (i32.const -1))))
    (global.get $op))

  (func $tok (param $t i32) (result i32)
    (i32.add (global.get $tape0) (i32.shl (local.get $t) (i32.const 4))))
  (func $nextOf (param $t i32) (result i32)
    (i32.load offset=12 (call $tok (local.get $t))))

  (func $put (param $c i32)
    (i32.store8 (global.get $op) (local.get $c))
    (global.set $op (i32.add (global.get $op) (i32.const 1))))

  ;; A line break and the indent of `level` (nothing inline).
  (func $newline (param $level i32)
    (local $n i32)
    (if (global.get $inline) (then (return)))
    (call $put (i32.const 0x0a))
    (local.set $n (i32.add (global.get $pad) (i32.shl (local.get $level) (i32.const 1))))
    (call $fill (local.get $n)))

  ;; n spaces, eight at a time (the output has room past its end: what is
  ;; written past the n is written over next).
  (func $fill (param $n i32)
    (local $o i32) (local $end i32)
    (local.set $o (global.get $op))
    (local.set $end (i32.add (local.get $o) (local.get $n)))
    (block $done
      (loop $words
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (i64.store (local.get $o) (i64.const 0x2020202020202020))
        (local.set $o (i32.add (local.get $o) (i32.const 8)))
        (br $words)))
    (global.set $op (local.get $end)))

  (func $separator
    (call $put (i32.const 0x2c))
    (if (global.get $inline) (then (call $put (i32.const 0x20)))))

  (func $render (param $t i32) (param $level i32) (result i32)
    (local $a i32) (local $kind i32) (local $end i32) (local $c i32)
    (local.set $a (call $tok (local.get $t)))
    (local.set $kind (i32.and (i32.load (local.get $a)) (i32.const 15)))
    (if (i32.or (i32.eq (local.get $kind) (i32.const 4)) (i32.eq (local.get $kind) (i32.const 3)))
      (then (call $renderString (local.get $a)) (return (i32.const 1))))
    (if (i32.gt_u (local.get $kind) (i32.const 2))
      (then (call $copyToken (local.get $a)) (return (i32.const 1))))
    (local.set $end (i32.load offset=12 (local.get $a)))
    ;; { or [
    (call $put (select (i32.const 0x7b) (i32.const 0x5b) (i32.eq (local.get $kind) (i32.const 1))))
    (if (i32.eq (local.get $end) (i32.add (local.get $t) (i32.const 1)))
      (then
        (call $put (select (i32.const 0x7d) (i32.const 0x5d) (i32.eq (local.get $kind) (i32.const 1))))
        (return (i32.const 1))))
    (local.set $c (i32.add (local.get $t) (i32.const 1)))
    (if (i32.eq (local.get $kind) (i32.const 1))
      (then
        (if (i32.eqz (call $distinctKeys (local.get $t) (local.get $end))) (then (return (i32.const 0))))
        (loop $member
          (if (i32.ne (local.get $c) (i32.add (local.get $t) (i32.const 1))) (then (call $separator)))
          (call $newline (i32.add (local.get $level) (i32.const 1)))
          (call $renderString (call $tok (local.get $c)))
          (call $put (i32.const 0x3a))
          (call $put (i32.const 0x20))
          (if (i32.eqz (call $render (i32.add (local.get $c) (i32.const 1)) (i32.add (local.get $level) (i32.const 1))))
            (then (return (i32.const 0))))
          (local.set $c (call $nextOf (i32.add (local.get $c) (i32.const 1))))
          (br_if $member (i32.lt_u (local.get $c) (local.get $end))))
        (call $newline (local.get $level))
        (call $put (i32.const 0x7d))
        (return (i32.const 1))))
    (loop $element
      (if (i32.ne (local.get $c) (i32.add (local.get $t) (i32.const 1))) (then (call $separator)))
      (call $newline (i32.add (local.get $level) (i32.const 1)))
      (if (i32.eqz (call $render (local.get $c) (i32.add (local.get $level) (i32.const 1))))
        (then (return (i32.const 0))))
      (local.set $c (call $nextOf (local.get $c)))
      (br_if $element (i32.lt_u (local.get $c) (local.get $end))))
    (call $newline (local.get $level))
    (call $put (i32.const 0x5d))
    (i32.const 1))

  ;; The keys of object t (its subtree ends at `end`) are distinct as json.loads reads them.
  ;; A few keys are compared pairwise; more are each put in SEEN by a hash of their bytes
  ;; and compared only with the keys already there under the same hash (linear in the
  ;; keys, where comparing every pair is not). A new $seenGen empties SEEN for each object.
  (func $distinctKeys (param $t i32) (param $end i32) (result i32)
    (local $k i32) (local $n i32) (local $ka i32) (local $ja i32) (local $s i32) (local $len i32) (local $h i32)
    (local.set $k (i32.add (local.get $t) (i32.const 1)))
    (if (i32.eq (call $nextOf (i32.add (local.get $k) (i32.const 1))) (local.get $end)) (then (return (i32.const 1))))
    ;; Unsorted covers the objects inside too: without it none has keys out of
    ;; order (Python's order, escapes decoded: $cmp), so none repeats one
    (if (i32.eqz (i32.and (i32.load (call $tok (local.get $t))) (i32.const 128))) (then (return (i32.const 1))))
    ;; keys are compared by their bytes below: an escaped key could equal
    ;; another spelled with raw UTF-8 or an escape Python does not write (a
    ;; string has one spelling in Python's json.dumps, and one without escapes)
    (loop $keys
      (local.set $s (i32.or (local.get $s) (i32.load (call $tok (local.get $k)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (local.set $k (call $nextOf (i32.add (local.get $k) (i32.const 1))))
      (br_if $keys (i32.lt_u (local.get $k) (local.get $end))))
    (if (i32.and (i32.ne (i32.and (local.get $s) (i32.const 16)) (i32.const 0))
                 (i32.ne (i32.and (local.get $s) (i32.const 96)) (i32.const 0)))
      (then (return (i32.const 0))))
    ;; SEEN, twice this size, stays at most half full
    (if (i32.gt_u (local.get $n) (i32.const 1024)) (then (return (i32.const 0))))
    (if (i32.le_u (local.get $n) (i32.const 4)) (then (return (call $fewDistinct (local.get $t) (local.get $end)))))
    (global.set $seenGen (i32.add (global.get $seenGen) (i32.const 1)))
    ;; after 2^32 objects the numbers come round again: every slot emptied once, as at the start
    (if (i32.eqz (global.get $seenGen))
      (then
        (memory.fill (i32.const 12288) (i32.const 0) (i32.const 8192))
        (global.set $seenGen (i32.const 1))))
    (local.set $k (i32.add (local.get $t) (i32.const 1)))
    (loop $outer
      (local.set $ka (call $tok (local.get $k)))
      (local.set $s (i32.sub (i32.load offset=4 (local.get $ka)) (global.get $bias)))
      (local.set $len (i32.sub (i32.load offset=8 (local.get $ka)) (i32.load offset=4 (local.get $ka))))
      (local.set $h (call $keyHash (local.get $s) (local.get $len)))
      (block $free
        (loop $probe
          (br_if $free (i32.ne (i32.load offset=12288 (i32.shl (local.get $h) (i32.const 2))) (global.get $seenGen)))
          (local.set $ja (i32.load offset=4096 (i32.shl (local.get $h) (i32.const 2))))
          (if (i32.eq (i32.sub (i32.load offset=8 (local.get $ja)) (i32.load offset=4 (local.get $ja))) (local.get $len))
            (then
              (if (call $eq (local.get $s) (i32.sub (i32.load offset=4 (local.get $ja)) (global.get $bias)) (local.get $len))
                (then (return (i32.const 0))))))
          (local.set $h (i32.and (i32.add (local.get $h) (i32.const 1)) (i32.const 2047)))
          (br $probe)))
      (i32.store offset=4096 (i32.shl (local.get $h) (i32.const 2)) (local.get $ka))
      (i32.store offset=12288 (i32.shl (local.get $h) (i32.const 2)) (global.get $seenGen))
      (local.set $k (call $nextOf (i32.add (local.get $k) (i32.const 1))))
      (br_if $outer (i32.lt_u (local.get $k) (local.get $end))))
    (i32.const 1))

  ;; $distinctKeys for an object of at most four keys: each key
  ;; against the ones before it, where the table's hashing costs more.
  (func $fewDistinct (param $t i32) (param $end i32) (result i32)
    (local $k i32) (local $j i32) (local $ka i32) (local $ja i32) (local $len i32)
    (local.set $k (call $nextOf (i32.add (i32.add (local.get $t) (i32.const 1)) (i32.const 1))))
    (loop $outer
      (local.set $ka (call $tok (local.get $k)))
      (local.set $len (i32.sub (i32.load offset=8 (local.get $ka)) (i32.load offset=4 (local.get $ka))))
      (local.set $j (i32.add (local.get $t) (i32.const 1)))
      (loop $inner
        (local.set $ja (call $tok (local.get $j)))
        (if (i32.eq (i32.sub (i32.load offset=8 (local.get $ja)) (i32.load offset=4 (local.get $ja))) (local.get $len))
          (then
            (if (call $eq
                  (i32.sub (i32.load offset=4 (local.get $ka)) (global.get $bias))
                  (i32.sub (i32.load offset=4 (local.get $ja)) (global.get $bias))
                  (local.get $len))
              (then (return (i32.const 0))))))
        (local.set $j (call $nextOf (i32.add (local.get $j) (i32.const 1))))
        (br_if $inner (i32.lt_u (local.get $j) (local.get $k))))
      (local.set $k (call $nextOf (i32.add (local.get $k) (i32.const 1))))
      (br_if $outer (i32.lt_u (local.get $k) (local.get $end))))
    (i32.const 1))

  ;; A SEEN slot (0-2047) for the key token's bytes [s, s+len), quotes included (so
  ;; len >= 2): from its length and every four bytes of it (the last four
  ;; overlapping), or, under four, its last byte before the closing quote;
  ;; never a byte outside the key. Every byte counts: keys of a map often
  ;; share a long prefix and suffix (`src/module_0001.py`).
  (func $keyHash (param $s i32) (param $len i32) (result i32)
    (local $h i32) (local $p i32) (local $e i32)
    (if (i32.lt_u (local.get $len) (i32.const 4))
      (then
        (return (i32.and (i32.add (i32.mul (local.get $len) (i32.const 31))
                                  (i32.load8_u (i32.sub (i32.add (local.get $s) (local.get $len)) (i32.const 2))))
                         (i32.const 2047)))))
    (local.set $h (i32.mul (local.get $len) (i32.const 0x9e3779b1)))
    (local.set $p (local.get $s))
    (local.set $e (i32.sub (i32.add (local.get $s) (local.get $len)) (i32.const 4)))
    (block $words
      (loop $word
        (br_if $words (i32.gt_u (local.get $p) (local.get $e)))
        (local.set $h (i32.mul (i32.xor (i32.rotl (local.get $h) (i32.const 13)) (i32.load (local.get $p))) (i32.const 0x85ebca6b)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $word)))
    (if (i32.lt_u (local.get $p) (i32.add (local.get $e) (i32.const 4)))
      (then (local.set $h (i32.mul (i32.xor (i32.rotl (local.get $h) (i32.const 13)) (i32.load (local.get $e))) (i32.const 0x85ebca6b)))))
    (i32.shr_u (i32.mul (i32.xor (local.get $h) (i32.shr_u (local.get $h) (i32.const 15))) (i32.const 0x9e3779b1)) (i32.const 21)))

  ;; The token at tape address a, its bytes as they are.
  (func $copyToken (param $a i32)
    (local $n i32) (local $src i32) (local $o i32) (local $end i32)
    (local.set $n (i32.sub (i32.load offset=8 (local.get $a)) (i32.load offset=4 (local.get $a))))
    (local.set $src (i32.sub (i32.load offset=4 (local.get $a)) (global.get $bias)))
    (if (i32.gt_u (local.get $n) (i32.const 64))
      (then
        (memory.copy (global.get $op) (local.get $src) (local.get $n))
        (global.set $op (i32.add (global.get $op) (local.get $n)))
        (return)))
    ;; a short token eight bytes at a time: the row is followed by its slack, the
    ;; output has room past its end (what is written past the n is written over next)
    (local.set $o (global.get $op))
    (local.set $end (i32.add (local.get $o) (local.get $n)))
    (block $done
      (loop $words
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (i64.store (local.get $o) (i64.load (local.get $src)))
        (local.set $o (i32.add (local.get $o) (i32.const 8)))
        (local.set $src (i32.add (local.get $src) (i32.const 8)))
        (br $words)))
    (global.set $op (local.get $end)))

  ;; \uXXXX, lowercase, as the renderer writes a code unit it escapes, at o: returns the output's end.
  (func $unicodeEscape (param $o i32) (param $u i32) (result i32)
    (i32.store16 (local.get $o) (i32.const 0x755c))
    (i32.store8 offset=2 (local.get $o) (call $hexChar (i32.and (i32.shr_u (local.get $u) (i32.const 12)) (i32.const 15))))
    (i32.store8 offset=3 (local.get $o) (call $hexChar (i32.and (i32.shr_u (local.get $u) (i32.const 8)) (i32.const 15))))
    (i32.store8 offset=4 (local.get $o) (call $hexChar (i32.and (i32.shr_u (local.get $u) (i32.const 4)) (i32.const 15))))
    (i32.store8 offset=5 (local.get $o) (call $hexChar (i32.and (local.get $u) (i32.const 15))))
    (i32.add (local.get $o) (i32.const 6)))

  ;; A code unit below 0x80 as the renderer writes it, at o: its short escape,
  ;; \u00XX for another control, else itself. Returns the output's end.
  (func $unit (param $o i32) (param $u i32) (result i32)
    (local $letter i32)
    (block $found
      (local.set $letter (i32.const 0x22))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x22)))
      (local.set $letter (i32.const 0x5c))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x5c)))
      (local.set $letter (i32.const 0x62))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x08)))
      (local.set $letter (i32.const 0x74))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x09)))
      (local.set $letter (i32.const 0x6e))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x0a)))
      (local.set $letter (i32.const 0x66))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x0c)))
      (local.set $letter (i32.const 0x72))
      (br_if $found (i32.eq (local.get $u) (i32.const 0x0d)))
      (if (i32.lt_u (local.get $u) (i32.const 0x20)) (then (return (call $unicodeEscape (local.get $o) (local.get $u)))))
      (i32.store8 (local.get $o) (local.get $u))
      (return (i32.add (local.get $o) (i32.const 1))))
    (i32.store8 (local.get $o) (i32.const 0x5c))
    (i32.store8 offset=1 (local.get $o) (local.get $letter))
    (i32.add (local.get $o) (i32.const 2)))

  ;; The string or key token at tape address a as the renderer writes it.
  (func $renderString (param $a i32)
    (local $p i32) (local $e i32) (local $o i32) (local $w i64) (local $c i32) (local $cp i32)
    (if (i32.eqz (i32.and (i32.load (local.get $a)) (i32.const 16)))
      (then (call $copyToken (local.get $a)) (return)))
    (local.set $p (i32.sub (i32.load offset=4 (local.get $a)) (global.get $bias)))
    ;; the closing quote
    (local.set $e (i32.sub (i32.sub (i32.load offset=8 (local.get $a)) (global.get $bias)) (i32.const 1)))
    (local.set $o (global.get $op))
    (i32.store8 (local.get $o) (i32.const 0x22))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (block $done
      (loop $bytes
        ;; eight bytes at a time while they end before the closing quote: copied
        ;; whole, the output moved past those before the first backslash
        (if (i32.le_u (i32.add (local.get $p) (i32.const 8)) (local.get $e))
          (then
            (local.set $w (call $backslashMask (i64.load (local.get $p))))
            (i64.store (local.get $o) (i64.load (local.get $p)))
            (if (i64.eqz (local.get $w))
              (then
                (local.set $o (i32.add (local.get $o) (i32.const 8)))
                (local.set $p (i32.add (local.get $p) (i32.const 8)))
                (br $bytes)))
            ;; the lowest flagged byte is the first backslash
            (local.set $c (i32.wrap_i64 (i64.shr_u (i64.ctz (local.get $w)) (i64.const 3))))
            (local.set $o (i32.add (local.get $o) (local.get $c)))
            (local.set $p (i32.add (local.get $p) (local.get $c))))
          (else
            (br_if $done (i32.ge_u (local.get $p) (local.get $e)))
            (local.set $c (i32.load8_u (local.get $p)))
            (if (i32.ne (local.get $c) (i32.const 0x5c))
              (then
                (i32.store8 (local.get $o) (local.get $c))
                (local.set $o (i32.add (local.get $o) (i32.const 1)))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br $bytes)))))
        ;; an escape: its character (bytes.wat: a surrogate pair joined as Python joins it)
        (local.set $cp (call $codePoint (local.get $p) (local.get $e)))
        (local.set $p (global.get $pointEnd))
        (if (i32.lt_u (local.get $cp) (i32.const 0x80))
          (then (local.set $o (call $unit (local.get $o) (local.get $cp))) (br $bytes)))
        ;; (a surrogate is below 0x10000: an astral character's low bits may look like one, U+1D921 say)
        (if (i32.ne (i32.and (local.get $cp) (i32.const 0x1ff800)) (i32.const 0xd800))
          (then (local.set $o (call $putUtf8 (local.get $o) (local.get $cp))) (br $bytes)))
        ;; a lone surrogate cannot be UTF-8: the renderer escapes it
        (local.set $o (call $unicodeEscape (local.get $o) (local.get $cp)))
        (br $bytes)))
    (i32.store8 (local.get $o) (i32.const 0x22))
    (global.set $op (i32.add (local.get $o) (i32.const 1))))

  (@include "scan.wat")
  (@include "bytes.wat")
  (@include "float.wat")
)
