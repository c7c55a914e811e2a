;; The codec's one structural JSON scanner in WebAssembly: objects, arrays,
;; members, separators, whitespace, numbers and literals, reading strings
;; with bytes.wat's $string. Not a module of its own: the row scanner
;; (row-index.wat) and both verify kernels (src/journal/fast/kernel.wat,
;; src/steps/kernel.wat) include it (scripts/build-wasm.ts readWat), so
;; every module reads a row's grammar with this one scanner and differs
;; only in what it does with what the scanner finds: the consumer, a set of
;; functions the including module defines (wasm resolves them by name). A
;; module with two consumers includes the file twice, the second time under
;; a name (`(@include "scan.wat" name)`: build-wasm.ts renames this file's
;; functions, globals and hooks `$name.x`), and defines that consumer's hooks
;; as `$name.onKey` and so on.
;;
;; @hooks $isWs $push $onKey $onValue $onElement $onElementValue $onOpen $onClose $numberFlags $tape $orderFrom $spaced $keysTo $containersTo $minusZero
;;
;;   $isWs (c) -> i32           c is whitespace within a row: row-index.wat
;;                              takes JSON's four; the kernels, whose data
;;                              holds many lines, only space and tab (a line
;;                              break ends a row; the sentinel is one)
;;   $push (word s end) -> a    a token (see the flags below); a container's
;;                              at its opening, its end given at $onClose; a
;;                              string's or key's once read. Called only when
;;                              $tape is 1 (row-index.wat's tape); else a is 0
;;                              (the scanner itself never writes to a)
;;   $onKey (depth a ks ke) -> i32
;;                              an object's member key (token a; its text
;;                              [ks, ke) between the quotes), before its value
;;   $onValue (depth vs ve) -> i32
;;                              that member's value [vs, ve), after it
;;   $onElement (depth i) -> i32, $onElementValue (depth vs ve) -> i32
;;                              an array's element i, before and after it
;;   $onOpen (kind depth) -> i32
;;                              a container opens (kind 1 object, 2 array)
;;   $onClose (a kind depth flags own end) -> i32
;;                              it closes at `end` (past its bracket): flags
;;                              its spelling with its values', own the
;;                              object's own key order (Unsorted or 0)
;;   $numberFlags (s e) -> i32  a float lexeme's spelling flags (NotPython,
;;                              FloatUndecided), or -1 to decline the row (an
;;                              int's are the scanner's: $minusZero for -0)
;;
;; and globals (constants but one), which cost no call in the engine's
;; first tier, where a short run spends much of its time:
;;
;;   $keysTo                    the deepest object whose members the key and
;;                              value hooks see
;;   $containersTo              the deepest container the open, close and
;;                              element hooks see
;;   $tape                      1: $push is called
;;   $orderFrom                 the depth from which an object's members
;;                              are compared for their order (Unsorted; 1001:
;;                              never)
;;   $spaced                    1: one space after a separator is the spelling
;;                              to expect (Python's default writer), decided
;;                              inline like none
;;   $minusZero                 the flags of the int -0 (NotPython; a consumer
;;                              that takes it where a hash does not cover its
;;                              spelling makes this global mutable)
;;
;; A hook returning 0 declines the row (the scan returns -1). `depth` is the
;; nesting of the container the member or element is in (the row's object
;; is 1). After any value, $valKind and $valFlags say what it was.
;;
;; Token kinds and spelling flags (row-index.ts Tok and Spell):
;;   Object 1, Array 2, Key 3, String 4, Int 5, Float 6, Literal 7, NonFinite 8
;;   Escaped 16, Utf8 32, NotPython 64, Unsorted 128, Tight 256, Spaced 512,
;;   OddSpace 1024, KeyNotPlain 2048, NonFinite 4096, FloatUndecided 8192
;;
;; The data ends in a byte no path takes (row-index.wat writes a 0 after the
;; row, the kernels a line feed at their data's end), so no loop here checks
;; an end: every path that would read past it reaches it first and declines.
;; Word loads read up to 15 bytes past it (the including module leaves slack).

  (global $at (mut i32) (i32.const 0))       ;; set by $gap and $afterValue
  (global $sepFlags (mut i32) (i32.const 0))
  (global $valFlags (mut i32) (i32.const 0))
  (global $valKind (mut i32) (i32.const 0))

  (func $skipAnyWs (param $p i32) (result i32)
    (loop $ws
      (if (call $isWs (i32.load8_u (local.get $p)))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $ws))))
    (local.get $p))

  ;; Whitespace after a separator or bracket: its spelling flag; the next
  ;; token's start in $at.
  (func $gap (param $p i32) (param $afterSep i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eqz (call $isWs (local.get $c)))
      (then
        (global.set $at (local.get $p))
        (return (select (i32.const 256) (i32.const 0) (local.get $afterSep)))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0x20)) (local.get $afterSep))
      (then
        (if (i32.eqz (call $isWs (i32.load8_u offset=1 (local.get $p))))
          (then
            (global.set $at (i32.add (local.get $p) (i32.const 1)))
            (return (i32.const 512))))))
    (global.set $at (call $skipAnyWs (local.get $p)))
    (i32.const 1024))

  ;; End container token a (kind, at depth) at `end` with `flags` (own: its own key order).
  (func $close (param $a i32) (param $kind i32) (param $depth i32) (param $flags i32) (param $own i32) (param $end i32) (result i32)
    (global.set $valFlags (local.get $flags))
    (global.set $valKind (local.get $kind))
    (if (i32.le_s (local.get $depth) (global.get $containersTo))
      (then
        (if (i32.eqz (call $onClose (local.get $a) (local.get $kind) (local.get $depth) (local.get $flags) (local.get $own) (local.get $end)))
          (then (return (i32.const -1))))))
    (local.get $end))

  ;; What follows a value at p: a comma (returns the next value's start) or
  ;; `closer` (returns -2, the container's end in $at); -1 otherwise.
  (func $afterValue (param $p i32) (param $closer i32) (result i32)
    (local $f i32) (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.and (i32.ne (local.get $c) (i32.const 0x2c)) (i32.ne (local.get $c) (local.get $closer)))
      (then
        (if (call $gap (local.get $p) (i32.const 0)) (then (local.set $f (i32.const 1024))))
        (local.set $p (global.get $at))
        (local.set $c (i32.load8_u (local.get $p)))))
    (if (i32.eq (local.get $c) (i32.const 0x2c))
      (then
        (local.set $c (i32.load8_u offset=1 (local.get $p)))
        (if (i32.gt_u (local.get $c) (i32.const 0x20))
          (then
            (global.set $sepFlags (i32.or (local.get $f) (i32.const 256)))
            (return (i32.add (local.get $p) (i32.const 1)))))
        (if (global.get $spaced)
          (then
            (if (i32.and (i32.eq (local.get $c) (i32.const 0x20)) (i32.gt_u (i32.load8_u offset=2 (local.get $p)) (i32.const 0x20)))
              (then
                (global.set $sepFlags (i32.or (local.get $f) (i32.const 512)))
                (return (i32.add (local.get $p) (i32.const 2)))))))
        (global.set $sepFlags (i32.or (local.get $f) (call $gap (i32.add (local.get $p) (i32.const 1)) (i32.const 1))))
        (return (global.get $at))))
    (global.set $sepFlags (local.get $f))
    (if (i32.ne (local.get $c) (local.get $closer)) (then (return (i32.const -1))))
    (global.set $at (i32.add (local.get $p) (i32.const 1)))
    (i32.const -2))

  ;; The object at p (its `{`), at depth: its end, or -1.
  (func $object (param $p i32) (param $depth i32) (result i32)
    (local $t i32) (local $flags i32)
    (if (i32.gt_s (local.get $depth) (i32.const 1000)) (then (return (i32.const -1))))
    (if (global.get $tape) (then (local.set $t (call $push (i32.const 1) (local.get $p) (i32.const 0)))))
    (if (i32.le_s (local.get $depth) (global.get $containersTo))
      (then (if (i32.eqz (call $onOpen (i32.const 1) (local.get $depth))) (then (return (i32.const -1))))))
    (local.set $flags (call $gap (i32.add (local.get $p) (i32.const 1)) (i32.const 0)))
    (local.set $p (global.get $at))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x7d))
      (then (return (call $close (local.get $t) (i32.const 1) (local.get $depth) (local.get $flags) (i32.const 0)
                                 (i32.add (local.get $p) (i32.const 1))))))
    (call $members (local.get $p) (local.get $t) (local.get $depth) (local.get $flags)))

  ;; The members of object t (at depth) from the first key at p to the
  ;; object's end, its spelling so far in `flags`: the object's end, or -1.
  ;; A kernel that matched a row's first members itself enters here.
  (func $members (param $p i32) (param $t i32) (param $depth i32) (param $flags i32) (result i32)
    (local $kt i32) (local $ke i32) (local $kf i32) (local $own i32) (local $vs i32)
    (local $prevS i32) (local $prevE i32) (local $order i32) (local $c i32) (local $d i32) (local $hooks i32)
    (local.set $prevS (i32.const -1))
    (local.set $order (i32.ge_s (local.get $depth) (global.get $orderFrom)))
    (local.set $hooks (i32.le_s (local.get $depth) (global.get $keysTo)))
    (loop $member
      (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x22)) (then (return (i32.const -1))))
      (local.set $ke (call $string (local.get $p)))
      (if (i32.lt_s (local.get $ke) (i32.const 0)) (then (return (i32.const -1))))
      (local.set $kf (global.get $strFlags))
      (if (i32.and (local.get $kf) (i32.const 48)) (then (local.set $kf (i32.or (local.get $kf) (i32.const 2048)))))
      (if (global.get $tape) (then (local.set $kt (call $push (i32.or (i32.const 3) (local.get $kf)) (local.get $p) (local.get $ke)))))
      (local.set $flags (i32.or (local.get $flags) (local.get $kf)))
      (if (i32.and (local.get $order) (i32.ge_s (local.get $prevS) (i32.const 0)))
        (then
          (if (i32.ge_s (call $cmp (local.get $prevS) (local.get $prevE) (i32.add (local.get $p) (i32.const 1)) (i32.sub (local.get $ke) (i32.const 1))) (i32.const 0))
            (then (local.set $own (i32.const 128))))))
      (local.set $prevS (i32.add (local.get $p) (i32.const 1)))
      (local.set $prevE (i32.sub (local.get $ke) (i32.const 1)))
      (if (local.get $hooks)
        (then
          (if (i32.eqz (call $onKey (local.get $depth) (local.get $kt) (local.get $prevS) (local.get $prevE)))
            (then (return (i32.const -1))))))
      (local.set $p (local.get $ke))
      (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x3a))
        (then
          (if (call $gap (local.get $p) (i32.const 0)) (then (local.set $flags (i32.or (local.get $flags) (i32.const 1024)))))
          (local.set $p (global.get $at))
          (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x3a)) (then (return (i32.const -1))))))
      ;; the writers' spellings, no space (or one, where the consumer expects
      ;; it: $spaced), decided without $gap
      (local.set $c (i32.load8_u offset=1 (local.get $p)))
      (if (i32.gt_u (local.get $c) (i32.const 0x20))
        (then
          (local.set $flags (i32.or (local.get $flags) (i32.const 256)))
          (local.set $vs (i32.add (local.get $p) (i32.const 1))))
        (else
          (if (i32.and (global.get $spaced)
                (i32.and (i32.eq (local.get $c) (i32.const 0x20)) (i32.gt_u (i32.load8_u offset=2 (local.get $p)) (i32.const 0x20))))
            (then
              (local.set $flags (i32.or (local.get $flags) (i32.const 512)))
              (local.set $vs (i32.add (local.get $p) (i32.const 2))))
            (else
              (local.set $flags (i32.or (local.get $flags) (call $gap (i32.add (local.get $p) (i32.const 1)) (i32.const 1))))
              (local.set $vs (global.get $at))))))
      (local.set $p (call $value (local.get $vs) (local.get $depth)))
      (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const -1))))
      (if (local.get $hooks)
        (then (if (i32.eqz (call $onValue (local.get $depth) (local.get $vs) (local.get $p))) (then (return (i32.const -1))))))
      (local.set $flags (i32.or (local.get $flags) (global.get $valFlags)))
      ;; the writers' separators inline (a comma and no space, or one where
      ;; expected; the closing brace), any other by $afterValue
      (local.set $c (i32.load8_u (local.get $p)))
      (block $next
        (if (i32.eq (local.get $c) (i32.const 0x2c))
          (then
            (local.set $d (i32.load8_u offset=1 (local.get $p)))
            (if (i32.gt_u (local.get $d) (i32.const 0x20))
              (then
                (local.set $flags (i32.or (local.get $flags) (i32.const 256)))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br $next)))
            (if (i32.and (global.get $spaced)
                  (i32.and (i32.eq (local.get $d) (i32.const 0x20)) (i32.gt_u (i32.load8_u offset=2 (local.get $p)) (i32.const 0x20))))
              (then
                (local.set $flags (i32.or (local.get $flags) (i32.const 512)))
                (local.set $p (i32.add (local.get $p) (i32.const 2)))
                (br $next)))))
        (if (i32.eq (local.get $c) (i32.const 0x7d))
          (then
            (global.set $at (i32.add (local.get $p) (i32.const 1)))
            (local.set $p (i32.const -2))
            (br $next)))
        (local.set $p (call $afterValue (local.get $p) (i32.const 0x7d)))
        (local.set $flags (i32.or (local.get $flags) (global.get $sepFlags))))
      (if (i32.eq (local.get $p) (i32.const -2))
        (then (return (call $close (local.get $t) (i32.const 1) (local.get $depth) (i32.or (local.get $flags) (local.get $own))
                                   (local.get $own) (global.get $at)))))
      (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const -1))))
      (br $member))
    (i32.const -1))

  (func $array (param $p i32) (param $depth i32) (result i32)
    (local $t i32) (local $flags i32) (local $i i32) (local $vs i32) (local $hooks i32)
    (if (i32.gt_s (local.get $depth) (i32.const 1000)) (then (return (i32.const -1))))
    (if (global.get $tape) (then (local.set $t (call $push (i32.const 2) (local.get $p) (i32.const 0)))))
    (local.set $hooks (i32.le_s (local.get $depth) (global.get $containersTo)))
    (if (local.get $hooks)
      (then (if (i32.eqz (call $onOpen (i32.const 2) (local.get $depth))) (then (return (i32.const -1))))))
    (local.set $flags (call $gap (i32.add (local.get $p) (i32.const 1)) (i32.const 0)))
    (local.set $p (global.get $at))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x5d))
      (then (return (call $close (local.get $t) (i32.const 2) (local.get $depth) (local.get $flags) (i32.const 0)
                                 (i32.add (local.get $p) (i32.const 1))))))
    (loop $element
      (if (local.get $hooks)
        (then (if (i32.eqz (call $onElement (local.get $depth) (local.get $i))) (then (return (i32.const -1))))))
      (local.set $vs (local.get $p))
      (local.set $p (call $value (local.get $p) (local.get $depth)))
      (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const -1))))
      (if (local.get $hooks)
        (then (if (i32.eqz (call $onElementValue (local.get $depth) (local.get $vs) (local.get $p))) (then (return (i32.const -1))))))
      (local.set $flags (i32.or (local.get $flags) (global.get $valFlags)))
      (local.set $p (call $afterValue (local.get $p) (i32.const 0x5d)))
      (local.set $flags (i32.or (local.get $flags) (global.get $sepFlags)))
      (if (i32.eq (local.get $p) (i32.const -2))
        (then (return (call $close (local.get $t) (i32.const 2) (local.get $depth) (local.get $flags) (i32.const 0) (global.get $at)))))
      (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const -1))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $element))
    (i32.const -1))

  ;; Any value at p, in a container at depth: its end, or -1.
  (func $value (param $p i32) (param $depth i32) (result i32)
    (local $c i32) (local $end i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x22))
      (then
        (local.set $end (call $string (local.get $p)))
        (if (i32.lt_s (local.get $end) (i32.const 0)) (then (return (i32.const -1))))
        (if (global.get $tape) (then (drop (call $push (i32.or (i32.const 4) (global.get $strFlags)) (local.get $p) (local.get $end)))))
        (global.set $valFlags (global.get $strFlags))
        (global.set $valKind (i32.const 4))
        (return (local.get $end))))
    (if (i32.eq (local.get $c) (i32.const 0x7b))
      (then (return (call $object (local.get $p) (i32.add (local.get $depth) (i32.const 1))))))
    (if (i32.eq (local.get $c) (i32.const 0x5b))
      (then (return (call $array (local.get $p) (i32.add (local.get $depth) (i32.const 1))))))
    (call $atom (local.get $p)))

  ;; The literal of n bytes at p (already compared): push it; its end.
  (func $literal (param $p i32) (param $n i32) (param $kind i32) (result i32)
    (global.set $valFlags (i32.and (local.get $kind) (i32.const -16)))
    (global.set $valKind (i32.and (local.get $kind) (i32.const 15)))
    (if (global.get $tape) (then (drop (call $push (local.get $kind) (local.get $p) (i32.add (local.get $p) (local.get $n))))))
    (i32.add (local.get $p) (local.get $n)))

  ;; A number or literal at p: its end or -1.
  (func $atom (param $p i32) (result i32)
    (local $c i32) (local $start i32) (local $f i32) (local $kind i32)
    (local.set $c (i32.load8_u (local.get $p)))
    ;; the end byte stops each comparison: no literal byte is a 0 or a line feed
    (if (i32.eq (local.get $c) (i32.const 0x74))
      (then (return (if (result i32) (i32.eq (i32.load (local.get $p)) (i32.const 0x65757274))
        (then (call $literal (local.get $p) (i32.const 4) (i32.const 7))) (else (i32.const -1))))))
    (if (i32.eq (local.get $c) (i32.const 0x66))
      (then (return (if (result i32) (i32.and (i32.eq (i32.load (local.get $p)) (i32.const 0x736c6166))
                                              (i32.eq (i32.load8_u offset=4 (local.get $p)) (i32.const 0x65)))
        (then (call $literal (local.get $p) (i32.const 5) (i32.const 7))) (else (i32.const -1))))))
    (if (i32.eq (local.get $c) (i32.const 0x6e))
      (then (return (if (result i32) (i32.eq (i32.load (local.get $p)) (i32.const 0x6c6c756e))
        (then (call $literal (local.get $p) (i32.const 4) (i32.const 7))) (else (i32.const -1))))))
    (if (i32.eq (local.get $c) (i32.const 0x4e))
      (then (return (if (result i32) (i32.eq (i32.and (i32.load (local.get $p)) (i32.const 0xffffff)) (i32.const 0x4e614e))
        (then (call $literal (local.get $p) (i32.const 3) (i32.const 4104))) (else (i32.const -1))))))
    (if (i32.eq (local.get $c) (i32.const 0x49))
      (then (return (if (result i32) (i64.eq (i64.load (local.get $p)) (i64.const 0x7974696e69666e49))
        (then (call $literal (local.get $p) (i32.const 8) (i32.const 4104))) (else (i32.const -1))))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0x2d)) (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 0x49)))
      (then (return (if (result i32) (i64.eq (i64.load offset=1 (local.get $p)) (i64.const 0x7974696e69666e49))
        (then (call $literal (local.get $p) (i32.const 9) (i32.const 4104))) (else (i32.const -1))))))
    (local.set $start (local.get $p))
    ;; the lexeme by bytes.wat's number reader (which refuses an int longer than Python reads)
    (local.set $p (call $skipNumber (local.get $p)))
    (if (i32.lt_s (local.get $p) (i32.const 0)) (then (return (i32.const -1))))
    (if (i32.eqz (global.get $isFloat))
      (then
        ;; -0 is not Python's spelling of zero: the consumer's flag for it
        (local.set $f (select (global.get $minusZero) (i32.const 0)
          (i32.and (i32.eq (i32.sub (local.get $p) (local.get $start)) (i32.const 2))
                   (i32.eq (i32.load16_u (local.get $start)) (i32.const 0x302d)))))
        (local.set $kind (i32.const 5)))
      (else
        (local.set $f (call $numberFlags (local.get $start) (local.get $p)))
        (if (i32.lt_s (local.get $f) (i32.const 0)) (then (return (i32.const -1))))
        (local.set $kind (i32.const 6))))
    (global.set $valFlags (local.get $f))
    (global.set $valKind (local.get $kind))
    (if (global.get $tape) (then (drop (call $push (i32.or (local.get $kind) (local.get $f)) (local.get $start) (local.get $p)))))
    (local.get $p))
