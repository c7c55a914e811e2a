;; The codec's byte layer in WebAssembly, beside bytes.ts: the byte tables
;; at the bottom of a module's memory and the byte-level helpers that read
;; JSON strings and digits, compare and copy (scan.wat's grammar reads with
;; them). Not a module of its own: the row scanner (row-index.wat) and both verify kernels
;; (src/journal/fast/kernel.wat, src/steps/kernel.wat) include this file,
;; which scripts/build-wasm.ts (readWat) replaces with these fields, so each
;; reads a string with the one reader here ($string).
;;
;; The including module declares the memory and runs $setupTables once
;; before any scan.
;;
;; Fixed addresses (the including module keeps [0, 1280) for them):
;;      0  STRCLASS[256]  string byte classes: 0 plain printable ASCII, 1 quote,
;;                        2 backslash, 3 a control byte, 4 a UTF-8 byte
;;                        (>= 0x80), 5 DEL
;;    256  HEXVAL[256]    a hex digit's value, | 0x10 for an uppercase one
;;                        (A-F); 0x80 for any other byte
;;    512  HEXPAIR[256]   u16: a byte's two lowercase hex digits, in memory order
;;   1024  SHORTESC[256]  1 for the bytes JSON accepts after a backslash (but
;;                        u, read apart)

  (global $isFloat (mut i32) (i32.const 0))   ;; set by $skipNumber
  (global $strFlags (mut i32) (i32.const 0))  ;; set by $string: Escaped 16, Utf8 32, NotPython 64

  (func $setupTables
    (local $i i32)
    ;; STRCLASS
    (memory.fill (i32.const 0) (i32.const 3) (i32.const 0x20))
    (memory.fill (i32.const 0x20) (i32.const 0) (i32.const 0x5f))
    (i32.store8 (i32.const 0x22) (i32.const 1))
    (i32.store8 (i32.const 0x5c) (i32.const 2))
    (i32.store8 (i32.const 0x7f) (i32.const 5))
    (memory.fill (i32.const 0x80) (i32.const 4) (i32.const 0x80))
    ;; HEXVAL
    (memory.fill (i32.const 256) (i32.const 0x80) (i32.const 256))
    (loop $digits
      (i32.store8 (i32.add (i32.const 0x130) (local.get $i)) (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digits (i32.lt_u (local.get $i) (i32.const 10))))
    (local.set $i (i32.const 0))
    (loop $letters
      (i32.store8 (i32.add (i32.const 0x161) (local.get $i)) (i32.add (i32.const 10) (local.get $i)))
      (i32.store8 (i32.add (i32.const 0x141) (local.get $i)) (i32.add (i32.const 0x1a) (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $letters (i32.lt_u (local.get $i) (i32.const 6))))
    ;; HEXPAIR
    (local.set $i (i32.const 0))
    (loop $pairs
      (i32.store16 (i32.add (i32.const 512) (i32.shl (local.get $i) (i32.const 1)))
        (i32.or
          (call $hexChar (i32.shr_u (local.get $i) (i32.const 4)))
          (i32.shl (call $hexChar (i32.and (local.get $i) (i32.const 15))) (i32.const 8))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $pairs (i32.lt_u (local.get $i) (i32.const 256))))
    ;; SHORTESC: " \ / b f n r t
    (memory.fill (i32.const 1024) (i32.const 0) (i32.const 256))
    (i32.store8 (i32.const 1058) (i32.const 1))
    (i32.store8 (i32.const 1116) (i32.const 1))
    (i32.store8 (i32.const 1071) (i32.const 1))
    (i32.store8 (i32.const 1122) (i32.const 1))
    (i32.store8 (i32.const 1126) (i32.const 1))
    (i32.store8 (i32.const 1134) (i32.const 1))
    (i32.store8 (i32.const 1138) (i32.const 1))
    (i32.store8 (i32.const 1140) (i32.const 1)))

  (func $hexChar (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 10))
      (then (i32.add (i32.const 0x30) (local.get $n)))
      (else (i32.add (i32.const 0x57) (local.get $n)))))

  ;; n bytes at a and b are equal: 16 at a time, the last vector
  ;; overlapping; below 16 bytes two overlapping words.
  (func $eq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $i i32) (local $last i32)
    (if (i32.lt_u (local.get $n) (i32.const 16))
      (then
        (if (i32.ge_u (local.get $n) (i32.const 8))
          (then
            (local.set $last (i32.sub (local.get $n) (i32.const 8)))
            (return (i32.and
              (i64.eq (i64.load (local.get $a)) (i64.load (local.get $b)))
              (i64.eq (i64.load (i32.add (local.get $a) (local.get $last)))
                      (i64.load (i32.add (local.get $b) (local.get $last))))))))
        (if (i32.ge_u (local.get $n) (i32.const 4))
          (then
            (local.set $last (i32.sub (local.get $n) (i32.const 4)))
            (return (i32.and
              (i32.eq (i32.load (local.get $a)) (i32.load (local.get $b)))
              (i32.eq (i32.load (i32.add (local.get $a) (local.get $last)))
                      (i32.load (i32.add (local.get $b) (local.get $last))))))))
        (block $done
          (loop $byte
            (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
            (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i)))
                        (i32.load8_u (i32.add (local.get $b) (local.get $i))))
              (then (return (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $byte)))
        (return (i32.const 1))))
    (local.set $last (i32.sub (local.get $n) (i32.const 16)))
    (block $done
      (loop $vec
        (br_if $done (i32.ge_u (local.get $i) (local.get $last)))
        (if (v128.any_true (v128.xor (v128.load (i32.add (local.get $a) (local.get $i)))
                                     (v128.load (i32.add (local.get $b) (local.get $i)))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $vec)))
    (i32.eqz (v128.any_true (v128.xor (v128.load (i32.add (local.get $a) (local.get $last)))
                                      (v128.load (i32.add (local.get $b) (local.get $last)))))))

  ;; Copy n bytes between non-overlapping spans: long ones by memory.copy,
  ;; shorter ones 16 bytes at a time, the last vector (or below 16 bytes,
  ;; the last word) overlapping what was already copied.
  (func $copy (param $dst i32) (param $src i32) (param $n i32)
    (local $i i32) (local $last i32)
    (if (i32.ge_u (local.get $n) (i32.const 256))
      (then (memory.copy (local.get $dst) (local.get $src) (local.get $n)) (return)))
    (if (i32.ge_u (local.get $n) (i32.const 16))
      (then
        (local.set $last (i32.sub (local.get $n) (i32.const 16)))
        (block $done
          (loop $vec
            (br_if $done (i32.ge_u (local.get $i) (local.get $last)))
            (v128.store (i32.add (local.get $dst) (local.get $i)) (v128.load (i32.add (local.get $src) (local.get $i))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $vec)))
        (v128.store (i32.add (local.get $dst) (local.get $last)) (v128.load (i32.add (local.get $src) (local.get $last))))
        (return)))
    (if (i32.ge_u (local.get $n) (i32.const 8))
      (then
        (i64.store (local.get $dst) (i64.load (local.get $src)))
        (i64.store (i32.sub (i32.add (local.get $dst) (local.get $n)) (i32.const 8))
                   (i64.load (i32.sub (i32.add (local.get $src) (local.get $n)) (i32.const 8))))
        (return)))
    (if (i32.ge_u (local.get $n) (i32.const 4))
      (then
        (i32.store (local.get $dst) (i32.load (local.get $src)))
        (i32.store (i32.sub (i32.add (local.get $dst) (local.get $n)) (i32.const 4))
                   (i32.load (i32.sub (i32.add (local.get $src) (local.get $n)) (i32.const 4))))
        (return)))
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i)) (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte))))

  ;; The string token at p (its opening quote): the end past its closing
  ;; quote, or -1 where json.loads refuses it (an invalid escape, a raw
  ;; control byte, invalid UTF-8); its spelling in $strFlags: Escaped 16,
  ;; Utf8 32 (raw UTF-8), NotPython 64 (`\/`, an uppercase or needless `\u`
  ;; escape, a raw DEL).
  (func $string (param $p i32) (result i32)
    (local $flags i32) (local $c i32) (local $cls i32) (local $d i32) (local $h i32) (local $v i32) (local $n i32)
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (loop $scan
      (local.set $p (call $plainWords (local.get $p)))
      (local.set $c (i32.load8_u (local.get $p)))
      (local.set $cls (i32.load8_u (local.get $c)))
      (if (i32.eq (local.get $cls) (i32.const 1))
        (then
          (global.set $strFlags (local.get $flags))
          (return (i32.add (local.get $p) (i32.const 1)))))
      (if (i32.eq (local.get $cls) (i32.const 2))
        (then
          (local.set $flags (i32.or (local.get $flags) (i32.const 16)))
          (local.set $d (i32.load8_u offset=1 (local.get $p)))
          (if (i32.eq (local.get $d) (i32.const 0x75))
            (then
              (local.set $h
                (i32.or
                  (i32.or
                    (i32.load8_u offset=256 (i32.load8_u offset=2 (local.get $p)))
                    (i32.load8_u offset=256 (i32.load8_u offset=3 (local.get $p))))
                  (i32.or
                    (i32.load8_u offset=256 (i32.load8_u offset=4 (local.get $p)))
                    (i32.load8_u offset=256 (i32.load8_u offset=5 (local.get $p))))))
              (if (i32.and (local.get $h) (i32.const 0x80)) (then (return (i32.const -1))))
              (local.set $v (call $hex4At (i32.add (local.get $p) (i32.const 2))))
              ;; NotPython: an uppercase digit, a printable ASCII code, or a
              ;; control code Python writes with a short escape (\b \t \n \f \r)
              (if (i32.or
                    (i32.or (i32.and (local.get $h) (i32.const 0x10))
                            (i32.lt_u (i32.sub (local.get $v) (i32.const 0x20)) (i32.const 0x5f)))
                    (i32.or (i32.lt_u (i32.sub (local.get $v) (i32.const 8)) (i32.const 3))
                            (i32.lt_u (i32.sub (local.get $v) (i32.const 12)) (i32.const 2))))
                (then (local.set $flags (i32.or (local.get $flags) (i32.const 64)))))
              (local.set $p (i32.add (local.get $p) (i32.const 6)))
              (br $scan)))
          (if (i32.eqz (i32.load8_u offset=1024 (local.get $d))) (then (return (i32.const -1))))
          (if (i32.eq (local.get $d) (i32.const 0x2f)) (then (local.set $flags (i32.or (local.get $flags) (i32.const 64)))))
          (local.set $p (i32.add (local.get $p) (i32.const 2)))
          (br $scan)))
      (if (i32.eq (local.get $cls) (i32.const 3)) (then (return (i32.const -1))))
      (if (i32.eq (local.get $cls) (i32.const 5))
        (then
          (local.set $flags (i32.or (local.get $flags) (i32.const 64)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $scan)))
      ;; a UTF-8 sequence, validated as Python's strict decoder does
      (local.set $n (call $utf8Length (local.get $p) (local.get $c)))
      (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const -1))))
      (local.set $flags (i32.or (local.get $flags) (i32.const 32)))
      (local.set $p (i32.add (local.get $p) (local.get $n)))
      (br $scan))
    (i32.const -1))

  ;; Length of the valid UTF-8 sequence at p (lead byte c): no overlongs, no
  ;; surrogates, <= U+10FFFF; or -1.
  (func $utf8Length (param $p i32) (param $c i32) (result i32)
    (local $c1 i32)
    (if (i32.lt_u (local.get $c) (i32.const 0xc2)) (then (return (i32.const -1))))
    (local.set $c1 (i32.load8_u offset=1 (local.get $p)))
    (if (i32.ne (i32.and (local.get $c1) (i32.const 0xc0)) (i32.const 0x80)) (then (return (i32.const -1))))
    (if (i32.lt_u (local.get $c) (i32.const 0xe0)) (then (return (i32.const 2))))
    (if (i32.ne (i32.and (i32.load8_u offset=2 (local.get $p)) (i32.const 0xc0)) (i32.const 0x80)) (then (return (i32.const -1))))
    (if (i32.lt_u (local.get $c) (i32.const 0xf0))
      (then
        (if (i32.and (i32.eq (local.get $c) (i32.const 0xe0)) (i32.lt_u (local.get $c1) (i32.const 0xa0))) (then (return (i32.const -1))))
        (if (i32.and (i32.eq (local.get $c) (i32.const 0xed)) (i32.ge_u (local.get $c1) (i32.const 0xa0))) (then (return (i32.const -1))))
        (return (i32.const 3))))
    (if (i32.ge_u (local.get $c) (i32.const 0xf5)) (then (return (i32.const -1))))
    (if (i32.ne (i32.and (i32.load8_u offset=3 (local.get $p)) (i32.const 0xc0)) (i32.const 0x80)) (then (return (i32.const -1))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0xf0)) (i32.lt_u (local.get $c1) (i32.const 0x90))) (then (return (i32.const -1))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0xf4)) (i32.ge_u (local.get $c1) (i32.const 0x90))) (then (return (i32.const -1))))
    (i32.const 4))

  ;; A string in json.dumps(ensure_ascii=True) spelling, from its first
  ;; content byte: the index of its closing quote, or -1 ($string, declining
  ;; raw UTF-8 and any spelling Python does not write).
  (func $scanString (param $p i32) (result i32)
    (local $e i32)
    (local.set $e (call $string (i32.sub (local.get $p) (i32.const 1))))
    (if (i32.or (i32.lt_s (local.get $e) (i32.const 0)) (i32.and (global.get $strFlags) (i32.const 96)))
      (then (return (i32.const -1))))
    (i32.sub (local.get $e) (i32.const 1)))

  ;; Skip plain string bytes (printable ASCII but the quote and the
  ;; backslash), sixteen at a time; returns the first other byte. A byte is
  ;; printable ASCII when adding 0x60 lands it in [0x80, 0xde], the signed
  ;; bytes up to -34: one signed compare instead of two unsigned ones (which
  ;; x86 has no instruction for). The bitmask's lowest set bit is the first
  ;; special byte. A line's terminator is special, so this never passes it;
  ;; a load may read up to 15 bytes past it (areas leave slack).
  (func $plainWords (param $p i32) (result i32)
    (local $x v128) (local $m i32)
    (loop $vec
      (local.set $x (v128.load (local.get $p)))
      (local.set $m
        (i8x16.bitmask
          (v128.or
            (i8x16.gt_s (i8x16.add (local.get $x) (v128.const i8x16 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60 0x60))
                        (v128.const i8x16 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34 -34))
            (v128.or
              (i8x16.eq (local.get $x) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
              (i8x16.eq (local.get $x) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))))))
      (if (i32.eqz (local.get $m))
        (then (local.set $p (i32.add (local.get $p) (i32.const 16))) (br $vec))))
    (i32.add (local.get $p) (i32.ctz (local.get $m))))

  ;; The 64 lowercase hex digits of the 32-byte digest at src, at dst:
  ;; each half's nibbles looked up in the digit table and interleaved.
  (func $hex (param $dst i32) (param $src i32)
    (call $hex16 (local.get $dst) (v128.load (local.get $src)))
    (call $hex16 (i32.add (local.get $dst) (i32.const 32)) (v128.load offset=16 (local.get $src))))

  (func $hex16 (param $dst i32) (param $v v128)
    (local $hi v128) (local $lo v128)
    (local.set $hi (i8x16.swizzle (v128.const i8x16 0x30 0x31 0x32 0x33 0x34 0x35 0x36 0x37 0x38 0x39 0x61 0x62 0x63 0x64 0x65 0x66)
                                  (i8x16.shr_u (local.get $v) (i32.const 4))))
    (local.set $lo (i8x16.swizzle (v128.const i8x16 0x30 0x31 0x32 0x33 0x34 0x35 0x36 0x37 0x38 0x39 0x61 0x62 0x63 0x64 0x65 0x66)
                                  (v128.and (local.get $v) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))))
    (v128.store (local.get $dst)
      (i8x16.shuffle 0 16 1 17 2 18 3 19 4 20 5 21 6 22 7 23 (local.get $hi) (local.get $lo)))
    (v128.store offset=16 (local.get $dst)
      (i8x16.shuffle 8 24 9 25 10 26 11 27 12 28 13 29 14 30 15 31 (local.get $hi) (local.get $lo))))

  ;; Code point cp as UTF-8 at o: the new end.
  (func $putUtf8 (param $o i32) (param $cp i32) (result i32)
    (if (i32.lt_u (local.get $cp) (i32.const 0x80))
      (then (i32.store8 (local.get $o) (local.get $cp)) (return (i32.add (local.get $o) (i32.const 1)))))
    (if (i32.lt_u (local.get $cp) (i32.const 0x800))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $cp) (i32.const 6))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 63))))
        (return (i32.add (local.get $o) (i32.const 2)))))
    (if (i32.lt_u (local.get $cp) (i32.const 0x10000))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xe0) (i32.shr_u (local.get $cp) (i32.const 12))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 6)) (i32.const 63))))
        (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 63))))
        (return (i32.add (local.get $o) (i32.const 3)))))
    (i32.store8 (local.get $o) (i32.or (i32.const 0xf0) (i32.shr_u (local.get $cp) (i32.const 18))))
    (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 12)) (i32.const 63))))
    (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $cp) (i32.const 6)) (i32.const 63))))
    (i32.store8 offset=3 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $cp) (i32.const 63))))
    (i32.add (local.get $o) (i32.const 4)))

  ;; The value of the four hex digits at p, either case (valid: the caller checked them).
  (func $hex4At (param $p i32) (result i32)
    (i32.or
      (i32.or
        (i32.shl (i32.and (i32.load8_u offset=256 (i32.load8_u (local.get $p))) (i32.const 15)) (i32.const 12))
        (i32.shl (i32.and (i32.load8_u offset=256 (i32.load8_u offset=1 (local.get $p))) (i32.const 15)) (i32.const 8)))
      (i32.or
        (i32.shl (i32.and (i32.load8_u offset=256 (i32.load8_u offset=2 (local.get $p))) (i32.const 15)) (i32.const 4))
        (i32.and (i32.load8_u offset=256 (i32.load8_u offset=3 (local.get $p))) (i32.const 15)))))

  ;; ASCII digits at p, eight at a time while a whole word is digits (a byte
  ;; is a digit when its high nibble is 3 and adding 6 keeps it 3).
  (func $skipDigits (param $p i32) (result i32)
    (local $x i64)
    (loop $word
      (local.set $x (i64.load (local.get $p)))
      (if (i32.and
            (i64.eq (i64.and (local.get $x) (i64.const 0xf0f0f0f0f0f0f0f0)) (i64.const 0x3030303030303030))
            (i64.eq (i64.and (i64.add (local.get $x) (i64.const 0x0606060606060606)) (i64.const 0xf0f0f0f0f0f0f0f0))
                    (i64.const 0x3030303030303030)))
        (then (local.set $p (i32.add (local.get $p) (i32.const 8))) (br $word))))
    (loop $byte
      (if (i32.lt_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)) (i32.const 10))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $byte))))
    (local.get $p))

  ;; JSON number syntax at p: its end, or -1. Sets $isFloat. An int of more
  ;; digits than CPython's int_max_str_digits (4300) is refused (Python
  ;; refuses it).
  (func $skipNumber (param $p i32) (result i32)
    (local $start i32) (local $c i32) (local $f i32)
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2d))
      (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (local.set $start (local.get $p))
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $p (i32.add (local.get $p) (i32.const 1))))
      (else
        (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9))
          (then (local.set $p (call $skipDigits (i32.add (local.get $p) (i32.const 1)))))
          (else (return (i32.const -1))))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2e))
      (then
        (if (i32.ge_u (i32.sub (i32.load8_u offset=1 (local.get $p)) (i32.const 0x30)) (i32.const 10))
          (then (return (i32.const -1))))
        (local.set $p (call $skipDigits (i32.add (local.get $p) (i32.const 2))))
        (local.set $f (i32.const 1))))
    ;; e or E
    (if (i32.eq (i32.or (i32.load8_u (local.get $p)) (i32.const 0x20)) (i32.const 0x65))
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
        (if (i32.ge_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)) (i32.const 10))
          (then (return (i32.const -1))))
        (loop $exp
          (if (i32.lt_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)) (i32.const 10))
            (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $exp))))
        (local.set $f (i32.const 1))))
    (if (i32.and (i32.eqz (local.get $f)) (i32.gt_s (i32.sub (local.get $p) (local.get $start)) (i32.const 4300)))
      (then (return (i32.const -1))))
    (global.set $isFloat (local.get $f))
    (local.get $p))

  ;; Compare two key spans (a string's text between its quotes) in Python's
  ;; order of str, by code points: 0 only for the same string. Where the two
  ;; hold the same bytes they hold the same characters, so a compare walks
  ;; their common bytes (eight at a time while a word holds no backslash)
  ;; and decides at the first character that differs: by its byte where
  ;; neither holds an escape there (raw UTF-8 orders as its code points do),
  ;; else by code points ($cmpDecoded from there; an escape both spell alike
  ;; is stepped over: $sameEscape). Map keys often share long heads
  ;; (`src/pkg/module_`), escaped ones too (`docs/R\u00e9sum\u00e9/`). The
  ;; walk moves from character to character, so where it stops both spans
  ;; are at a character's start.
  (func $cmp (param $a0 i32) (param $a1 i32) (param $c0 i32) (param $c1 i32) (result i32)
    (local $n i32) (local $i i32) (local $x i32) (local $y i32) (local $w i64) (local $r i32)
    (loop $again
      (local.set $n (i32.sub (local.get $a1) (local.get $a0)))
      (if (i32.gt_u (local.get $n) (i32.sub (local.get $c1) (local.get $c0)))
        (then (local.set $n (i32.sub (local.get $c1) (local.get $c0)))))
      (local.set $i (i32.const 0))
      (block $bytes
        (loop $word
          (br_if $bytes (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $n)))
          (local.set $w (i64.load (i32.add (local.get $a0) (local.get $i))))
          (br_if $bytes (i64.ne (local.get $w) (i64.load (i32.add (local.get $c0) (local.get $i)))))
          (br_if $bytes (i64.ne (call $backslashMask (local.get $w)) (i64.const 0)))
          (local.set $i (i32.add (local.get $i) (i32.const 8)))
          (br $word)))
      (block $done
        (loop $byte
          (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
          (local.set $x (i32.load8_u (i32.add (local.get $a0) (local.get $i))))
          (local.set $y (i32.load8_u (i32.add (local.get $c0) (local.get $i))))
          (if (i32.or (i32.eq (local.get $x) (i32.const 0x5c)) (i32.eq (local.get $y) (i32.const 0x5c)))
            (then
              ;; an escape both spell alike is stepped over (its length back), and the walk goes on after it
              (local.set $r (call $sameEscape (i32.add (local.get $a0) (local.get $i)) (local.get $a1)
                                              (i32.add (local.get $c0) (local.get $i)) (local.get $c1)))
              (if (i32.eqz (local.get $r))
                (then (return (call $cmpDecoded (i32.add (local.get $a0) (local.get $i)) (local.get $a1)
                                                (i32.add (local.get $c0) (local.get $i)) (local.get $c1)))))
              (local.set $a0 (i32.add (local.get $a0) (i32.add (local.get $i) (local.get $r))))
              (local.set $c0 (i32.add (local.get $c0) (i32.add (local.get $i) (local.get $r))))
              (br $again)))
          (if (i32.ne (local.get $x) (local.get $y)) (then (return (i32.sub (local.get $x) (local.get $y)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $byte))))
    (i32.sub (i32.sub (local.get $a1) (local.get $a0)) (i32.sub (local.get $c1) (local.get $c0))))

  ;; The backslashes among the eight bytes of w: a word with the top bit of
  ;; each such byte set (a zero byte of w ^ 0x5c5c...), and maybe of bytes
  ;; after the first one; 0 when there is none.
  (func $backslashMask (param $w i64) (result i64)
    (local.set $w (i64.xor (local.get $w) (i64.const 0x5c5c5c5c5c5c5c5c)))
    (i64.and (i64.and (i64.sub (local.get $w) (i64.const 0x0101010101010101)) (i64.xor (local.get $w) (i64.const -1)))
             (i64.const 0x8080808080808080)))

  ;; The length of the escape at a when c holds the same one there (both
  ;; within their spans' ends a1 and c1) and it is not a high surrogate's
  ;; (which may join the next escape into one character); else 0.
  (func $sameEscape (param $a i32) (param $a1 i32) (param $c i32) (param $c1 i32) (result i32)
    (local $len i32)
    (if (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $c))) (then (return (i32.const 0))))
    (local.set $len (select (i32.const 6) (i32.const 2) (i32.eq (i32.load8_u offset=1 (local.get $a)) (i32.const 0x75))))
    (if (i32.or (i32.gt_u (i32.add (local.get $a) (local.get $len)) (local.get $a1))
                (i32.gt_u (i32.add (local.get $c) (local.get $len)) (local.get $c1)))
      (then (return (i32.const 0))))
    (if (i32.eqz (call $eq (local.get $a) (local.get $c) (local.get $len))) (then (return (i32.const 0))))
    ;; a \u escape of a high surrogate (D800-DBFF), read as $codePoint reads it
    (if (i32.eq (local.get $len) (i32.const 6))
      (then (if (i32.eq (i32.and (call $hex4At (i32.add (local.get $a) (i32.const 2))) (i32.const 0xfc00)) (i32.const 0xd800))
              (then (return (i32.const 0))))))
    (local.get $len))

  ;; $cmp from a character's start in both spans on: each character decoded.
  (func $cmpDecoded (param $a i32) (param $a1 i32) (param $c i32) (param $c1 i32) (result i32)
    (local $x i32) (local $y i32)
    (loop $point
      (if (i32.ge_u (local.get $a) (local.get $a1))
        (then (return (select (i32.const 0) (i32.const -1) (i32.ge_u (local.get $c) (local.get $c1))))))
      (if (i32.ge_u (local.get $c) (local.get $c1)) (then (return (i32.const 1))))
      (local.set $x (call $codePoint (local.get $a) (local.get $a1)))
      (local.set $a (global.get $pointEnd))
      (local.set $y (call $codePoint (local.get $c) (local.get $c1)))
      (local.set $c (global.get $pointEnd))
      (if (i32.ne (local.get $x) (local.get $y)) (then (return (i32.sub (local.get $x) (local.get $y)))))
      (br $point))
    (unreachable))

  (global $pointEnd (mut i32) (i32.const 0))  ;; set by $codePoint

  ;; The code point of the character at p in a string $string took (raw
  ;; UTF-8, a short escape, a \u escape, or two joined as json.loads joins a
  ;; surrogate pair within the span, which ends at `end`); where it ends in
  ;; $pointEnd.
  (func $codePoint (param $p i32) (param $end i32) (result i32)
    (local $b i32) (local $d i32) (local $u i32) (local $v i32)
    (local.set $b (i32.load8_u (local.get $p)))
    (if (i32.ne (local.get $b) (i32.const 0x5c))
      (then
        (if (i32.lt_u (local.get $b) (i32.const 0x80))
          (then
            (global.set $pointEnd (i32.add (local.get $p) (i32.const 1)))
            (return (local.get $b))))
        (if (i32.lt_u (local.get $b) (i32.const 0xe0))
          (then
            (global.set $pointEnd (i32.add (local.get $p) (i32.const 2)))
            (return (i32.or (i32.shl (i32.and (local.get $b) (i32.const 0x1f)) (i32.const 6))
                            (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f))))))
        (if (i32.lt_u (local.get $b) (i32.const 0xf0))
          (then
            (global.set $pointEnd (i32.add (local.get $p) (i32.const 3)))
            (return (i32.or (i32.or (i32.shl (i32.and (local.get $b) (i32.const 0x0f)) (i32.const 12))
                                    (i32.shl (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f)) (i32.const 6)))
                            (i32.and (i32.load8_u offset=2 (local.get $p)) (i32.const 0x3f))))))
        (global.set $pointEnd (i32.add (local.get $p) (i32.const 4)))
        (return (i32.or (i32.or (i32.shl (i32.and (local.get $b) (i32.const 0x07)) (i32.const 18))
                                (i32.shl (i32.and (i32.load8_u offset=1 (local.get $p)) (i32.const 0x3f)) (i32.const 12)))
                        (i32.or (i32.shl (i32.and (i32.load8_u offset=2 (local.get $p)) (i32.const 0x3f)) (i32.const 6))
                                (i32.and (i32.load8_u offset=3 (local.get $p)) (i32.const 0x3f)))))))
    (local.set $d (i32.load8_u offset=1 (local.get $p)))
    (if (i32.ne (local.get $d) (i32.const 0x75))
      (then
        (global.set $pointEnd (i32.add (local.get $p) (i32.const 2)))
        (if (i32.eq (local.get $d) (i32.const 0x62)) (then (return (i32.const 8))))
        (if (i32.eq (local.get $d) (i32.const 0x66)) (then (return (i32.const 12))))
        (if (i32.eq (local.get $d) (i32.const 0x6e)) (then (return (i32.const 10))))
        (if (i32.eq (local.get $d) (i32.const 0x72)) (then (return (i32.const 13))))
        (if (i32.eq (local.get $d) (i32.const 0x74)) (then (return (i32.const 9))))
        ;; " \ /: the byte itself
        (return (local.get $d))))
    (local.set $u (call $hex4At (i32.add (local.get $p) (i32.const 2))))
    (global.set $pointEnd (i32.add (local.get $p) (i32.const 6)))
    (if (i32.and (i32.and (i32.eq (i32.and (local.get $u) (i32.const 0xfc00)) (i32.const 0xd800))
                          (i32.le_u (i32.add (local.get $p) (i32.const 12)) (local.get $end)))
                 (i32.and (i32.eq (i32.load8_u offset=6 (local.get $p)) (i32.const 0x5c))
                          (i32.eq (i32.load8_u offset=7 (local.get $p)) (i32.const 0x75))))
      (then
        (local.set $v (call $hex4At (i32.add (local.get $p) (i32.const 8))))
        (if (i32.eq (i32.and (local.get $v) (i32.const 0xfc00)) (i32.const 0xdc00))
          (then
            (global.set $pointEnd (i32.add (local.get $p) (i32.const 12)))
            (return (i32.add (i32.const 0x10000)
                             (i32.or (i32.shl (i32.sub (local.get $u) (i32.const 0xd800)) (i32.const 10))
                                     (i32.sub (local.get $v) (i32.const 0xdc00)))))))))
    (local.get $u))
