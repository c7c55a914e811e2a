;; Whether a float lexeme is Python's repr of the double it reads as,
;; decided without the host (both kernels and the codec's row scanner
;; include this file): what the kernels used to ask the host for (a string made and parsed per float),
;; which on journals of random-looking floats (scores, costs, durations) was
;; a call and a few strings for one row in six, or for every float of a step
;; row. $floatRepr: `I.F` with 1 <= I < 2^32 (a clock reading, a cost), double
;; arithmetic ($clockRepr); other fixed notation up to 15 significant digits,
;; by its spelling ($fixedFloat); 16 or 17, exact integer arithmetic ($floatExact);
;; scientific notation, its spelling up to 15 digits ($floatScientific).
;;
;; The lexeme L = D·10^-f (D its n significant digits, 16 <= n <= 17, f its
;; fraction digits, f <= 18) reads as the double d = M·2^E (M of 53 bits)
;; whose rounding interval holds it. repr(d) is the shortest decimal in that
;; interval, the nearest to d among equally short ones (ECMAScript's
;; Number-to-String gives the same digits). So L is repr(d) when
;;   (1) no decimal of n-1 digits, a multiple of 10^(1-f), lies in the
;;       interval: enough to test the two around L, since the interval
;;       holds L and is convex; and
;;   (2) L lies within half a 10^-f of d.
;; Every quantity is scaled by 10^f·2^(2-E) into an integer below 2^125:
;; L to X = D·2^(2-E), d to 4·M·P (P = 10^f), the interval's ends to
;; 4·M·P -/+ 2·P (-P below a power of two, where the spacing halves), half a
;; 10^-f to 2^(1-E). The ends belong to d when M is even (round half to
;; even). d itself is found from the double D/P (within an ulp or so of
;; it) by stepping to the neighbour whose interval holds L.
;;
;; Fixed notation in repr's fixed range [1e-4, 1e16) only: anything else,
;; and the rare ties, stay undecided (0) for the host's exact test.

  (func $isDigit (param $a i32) (result i32)
    (i32.lt_u (i32.sub (i32.load8_u (local.get $a)) (i32.const 0x30)) (i32.const 10)))

  ;; Whether a fixed-notation float lexeme [s, e) is Python's repr, without
  ;; conversion: 1 yes, -1 no, 0 undecided (floatIsRepr decides). A decimal
  ;; of at most 15 significant digits round-trips through a double and no
  ;; shorter decimal maps to the same double (15 = DBL_DIG), so such a lexeme
  ;; is the shortest repr exactly when it has no superfluous zeros and its
  ;; exponent is in repr's fixed range [-4, 16).
  (func $fixedFloat (param $s i32) (param $e i32) (result i32)
    (local $p i32) (local $intStart i32) (local $intEnd i32) (local $fracStart i32)
    (local $intLen i32) (local $i i32) (local $z i32) (local $sig i32)
    (local.set $p (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2d))
      (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (local.set $intStart (local.get $p))
    (loop $int
      (if (call $isDigit (local.get $p))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $int))))
    (local.set $intEnd (local.get $p))
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x2e)) (then (return (i32.const 0))))
    (local.set $fracStart (i32.add (local.get $p) (i32.const 1)))
    (if (i32.lt_s (i32.sub (local.get $e) (local.get $fracStart)) (i32.const 1)) (then (return (i32.const 0))))
    (local.set $i (local.get $fracStart))
    (block $done
      (loop $frac
        (br_if $done (i32.ge_u (local.get $i) (local.get $e)))
        (if (i32.eqz (call $isDigit (local.get $i))) (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $frac)))
    (local.set $intLen (i32.sub (local.get $intEnd) (local.get $intStart)))
    (if (i32.eqz (local.get $intLen)) (then (return (i32.const 0))))
    (if (i32.and (i32.gt_u (local.get $intLen) (i32.const 1)) (i32.eq (i32.load8_u (local.get $intStart)) (i32.const 0x30)))
      (then (return (i32.const 0))))
    (if (i32.and (i32.eq (i32.sub (local.get $e) (local.get $fracStart)) (i32.const 1))
                 (i32.eq (i32.load8_u (local.get $fracStart)) (i32.const 0x30)))
      (then
        ;; X.0: an integral value; repr is fixed for magnitudes below 1e16
        (if (i32.gt_u (local.get $intLen) (i32.const 16)) (then (return (i32.const 0))))
        (local.set $z (i32.sub (local.get $intEnd) (i32.const 1)))
        (loop $zeros
          (if (i32.and (i32.gt_u (local.get $z) (local.get $intStart)) (i32.eq (i32.load8_u (local.get $z)) (i32.const 0x30)))
            (then (local.set $z (i32.sub (local.get $z) (i32.const 1))) (br $zeros))))
        (return (i32.le_s (i32.add (i32.sub (local.get $z) (local.get $intStart)) (i32.const 1)) (i32.const 15)))))
    ;; a trailing zero in the fraction: never the shortest
    (if (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 0x30)) (then (return (i32.const -1))))
    (if (i32.and (i32.eq (local.get $intLen) (i32.const 1)) (i32.eq (i32.load8_u (local.get $intStart)) (i32.const 0x30)))
      (then
        (local.set $z (local.get $fracStart))
        (loop $lead
          (if (i32.eq (i32.load8_u (local.get $z)) (i32.const 0x30))
            (then (local.set $z (i32.add (local.get $z) (i32.const 1))) (br $lead))))
        ;; below 1e-4 repr is scientific: undecided
        (if (i32.gt_s (i32.sub (local.get $z) (local.get $fracStart)) (i32.const 3)) (then (return (i32.const 0))))
        (local.set $sig (i32.sub (local.get $e) (local.get $z))))
      (else
        (if (i32.gt_u (local.get $intLen) (i32.const 16)) (then (return (i32.const 0))))
        (local.set $sig (i32.add (local.get $intLen) (i32.sub (local.get $e) (local.get $fracStart))))))
    (i32.le_s (local.get $sig) (i32.const 15)))

  ;; The float lexeme [s, e): 1 when it is Python's repr of its value, -1
  ;; when not, 0 when only the host's exact test can tell.
  (func $floatRepr (param $s i32) (param $e i32) (result i32)
    (local $r i32)
    (local.set $r (call $clockRepr (local.get $s) (local.get $e)))
    (if (i32.ge_s (local.get $r) (i32.const 0)) (then (return (select (i32.const 1) (i32.const -1) (local.get $r)))))
    (local.set $r (call $fixedFloat (local.get $s) (local.get $e)))
    (if (local.get $r) (then (return (local.get $r))))
    (call $floatExact (local.get $s) (local.get $e)))

  ;; A clock reading (`-?I.F` with 1 <= I < 2^32 and F of at most 15
  ;; digits: a timestamp's 16 or 17 significant digits) decided in double
  ;; arithmetic, cheaper than $floatExact: 1 or 0, or -1 to leave it (any
  ;; other form, ties and ends). I is exact and lies in the binade [2^b,
  ;; 2^(b+1)) where doubles are spaced 1/S (S = 2^(52-b)), so the double read
  ;; is I + j/S with j = F·S/10^m rounded, and it owns the reals within
  ;; 1/(2S) of it. Python's repr is the shortest decimal there, the nearest
  ;; among equally short ones: F is it when no decimal of m-1 fraction
  ;; digits lies within 1/(2S) of j/S and F lies within half a 10^-m of j/S.
  (func $clockRepr (param $s i32) (param $e i32) (result i32)
    (local $i i32) (local $c i32) (local $intStart i32) (local $m i32) (local $b i32)
    (local $int i64) (local $frac i64) (local $pow i64)
    (local $S f64) (local $P f64) (local $fs f64) (local $q f64) (local $r2 f64) (local $j f64)
    (local $off f64) (local $T f64) (local $lo f64) (local $hi f64) (local $at f64)
    (local.set $i (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    ;; I = 0 (or a leading zero)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x30)) (then (return (i32.const -1))))
    (local.set $intStart (local.get $i))
    (block $end
      (loop $digit
        (br_if $end (i32.ge_u (local.get $i) (local.get $e)))
        (local.set $c (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)))
        (br_if $end (i32.ge_u (local.get $c) (i32.const 10)))
        (local.set $int (i64.add (i64.mul (local.get $int) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $digit)))
    (if (i32.or
          (i32.or (i32.eq (local.get $i) (local.get $intStart)) (i32.gt_u (i32.sub (local.get $i) (local.get $intStart)) (i32.const 10)))
          (i32.or (i32.ge_u (local.get $i) (local.get $e)) (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x2e))))
      (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (local.set $m (i32.sub (local.get $e) (local.get $i)))
    (if (i32.or (i32.lt_s (local.get $m) (i32.const 1)) (i32.gt_s (local.get $m) (i32.const 15))) (then (return (i32.const -1))))
    (local.set $pow (i64.const 1))
    (loop $digit
      (local.set $c (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)))
      (if (i32.ge_u (local.get $c) (i32.const 10)) (then (return (i32.const -1))))
      (local.set $frac (i64.add (i64.mul (local.get $frac) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
      (local.set $pow (i64.mul (local.get $pow) (i64.const 10)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (local.get $e))))
    ;; "I.0" is repr(I); "I.00" is not
    (if (i64.eqz (local.get $frac)) (then (return (i32.eq (local.get $m) (i32.const 1)))))
    ;; a trailing zero: a shorter spelling reads the same
    (if (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 0x30)) (then (return (i32.const 0))))
    (if (i64.ge_u (local.get $int) (i64.const 0x100000000)) (then (return (i32.const -1))))
    (local.set $b (i32.sub (i32.const 31) (i32.clz (i32.wrap_i64 (local.get $int)))))
    (local.set $S (f64.convert_i64_u (i64.shl (i64.const 1) (i64.extend_i32_u (i32.sub (i32.const 52) (local.get $b))))))
    (local.set $P (f64.convert_i64_u (local.get $pow)))
    (if (f64.gt (f64.mul (f64.mul (f64.const 2) (local.get $S)) (local.get $P)) (f64.const 9007199254740992)) (then (return (i32.const -1))))
    (local.set $fs (f64.mul (f64.convert_i64_u (local.get $frac)) (local.get $S)))
    ;; the quotient rounded may be one off: fs - q·P is exact
    (local.set $q (f64.floor (f64.div (local.get $fs) (local.get $P))))
    (if (f64.lt (f64.sub (local.get $fs) (f64.mul (local.get $q) (local.get $P))) (f64.const 0))
      (then (local.set $q (f64.sub (local.get $q) (f64.const 1))))
      (else
        (if (f64.ge (f64.sub (local.get $fs) (f64.mul (local.get $q) (local.get $P))) (local.get $P))
          (then (local.set $q (f64.add (local.get $q) (f64.const 1)))))))
    (local.set $r2 (f64.mul (f64.const 2) (f64.sub (local.get $fs) (f64.mul (local.get $q) (local.get $P)))))
    (if (f64.eq (local.get $r2) (local.get $P)) (then (return (i32.const -1))))
    (local.set $j (select (f64.add (local.get $q) (f64.const 1)) (local.get $q) (f64.gt (local.get $r2) (local.get $P))))
    (if (i32.or (f64.eq (local.get $j) (f64.const 0)) (f64.eq (local.get $j) (local.get $S))) (then (return (i32.const -1))))
    ;; F within half a step of j/S
    (local.set $off (f64.mul (f64.const 2) (f64.abs (f64.sub (local.get $fs) (f64.mul (local.get $j) (local.get $P))))))
    (if (f64.eq (local.get $off) (local.get $S)) (then (return (i32.const -1))))
    (if (f64.gt (local.get $off) (local.get $S)) (then (return (i32.const 0))))
    ;; a decimal k/T (T = 10^(m-1)) within 1/(2S) of j/S
    (local.set $T (f64.div (local.get $P) (f64.const 10)))
    (local.set $lo (f64.mul (f64.sub (f64.mul (f64.const 2) (local.get $j)) (f64.const 1)) (local.get $T)))
    (local.set $hi (f64.mul (f64.add (f64.mul (f64.const 2) (local.get $j)) (f64.const 1)) (local.get $T)))
    (local.set $at (f64.mul (f64.mul (f64.const 2) (local.get $S))
                            (f64.ceil (f64.div (local.get $lo) (f64.mul (f64.const 2) (local.get $S))))))
    (if (i32.or (f64.eq (local.get $at) (local.get $lo)) (f64.eq (local.get $at) (local.get $hi))) (then (return (i32.const -1))))
    (f64.ge (local.get $at) (local.get $hi)))


  ;; 128-bit values as (high, low) i64 pairs; the high half of $mul128's product.
  (global $mulHi (mut i64) (i64.const 0))

  ;; a·b: the low 64 bits, the high 64 in $mulHi.
  (func $mul128 (param $a i64) (param $b i64) (result i64)
    (local $a0 i64) (local $a1 i64) (local $b0 i64) (local $b1 i64)
    (local $p00 i64) (local $p01 i64) (local $p10 i64) (local $mid i64)
    (local.set $a0 (i64.and (local.get $a) (i64.const 0xffffffff)))
    (local.set $a1 (i64.shr_u (local.get $a) (i64.const 32)))
    (local.set $b0 (i64.and (local.get $b) (i64.const 0xffffffff)))
    (local.set $b1 (i64.shr_u (local.get $b) (i64.const 32)))
    (local.set $p00 (i64.mul (local.get $a0) (local.get $b0)))
    (local.set $p01 (i64.mul (local.get $a0) (local.get $b1)))
    (local.set $p10 (i64.mul (local.get $a1) (local.get $b0)))
    (local.set $mid
      (i64.add
        (i64.add (i64.shr_u (local.get $p00) (i64.const 32)) (i64.and (local.get $p01) (i64.const 0xffffffff)))
        (i64.and (local.get $p10) (i64.const 0xffffffff))))
    (global.set $mulHi
      (i64.add
        (i64.add (i64.mul (local.get $a1) (local.get $b1)) (i64.shr_u (local.get $mid) (i64.const 32)))
        (i64.add (i64.shr_u (local.get $p01) (i64.const 32)) (i64.shr_u (local.get $p10) (i64.const 32)))))
    (i64.or (i64.and (local.get $p00) (i64.const 0xffffffff)) (i64.shl (local.get $mid) (i64.const 32))))

  ;; (ah, al) against (bh, bl), unsigned: -1, 0 or 1.
  (func $cmp128 (param $ah i64) (param $al i64) (param $bh i64) (param $bl i64) (result i32)
    (if (i64.ne (local.get $ah) (local.get $bh))
      (then (return (select (i32.const -1) (i32.const 1) (i64.lt_u (local.get $ah) (local.get $bh))))))
    (if (i64.eq (local.get $al) (local.get $bl)) (then (return (i32.const 0))))
    (select (i32.const -1) (i32.const 1) (i64.lt_u (local.get $al) (local.get $bl))))

  ;; x·2^sh (x < 2^57, 1 <= sh <= 68): the low 64 bits, the high 64 in $mulHi.
  (func $shl128 (param $x i64) (param $sh i64) (result i64)
    (if (i64.ge_u (local.get $sh) (i64.const 64))
      (then
        (global.set $mulHi (i64.shl (local.get $x) (i64.sub (local.get $sh) (i64.const 64))))
        (return (i64.const 0))))
    (global.set $mulHi (i64.shr_u (local.get $x) (i64.sub (i64.const 64) (local.get $sh))))
    (i64.shl (local.get $x) (local.get $sh)))

  ;; Whether (xh, xl) lies in [(ah, al), (bh, bl)], the ends included when `ends`.
  (func $within128 (param $xh i64) (param $xl i64) (param $ah i64) (param $al i64) (param $bh i64) (param $bl i64) (param $ends i32) (result i32)
    (local $lo i32) (local $hi i32)
    (local.set $lo (call $cmp128 (local.get $xh) (local.get $xl) (local.get $ah) (local.get $al)))
    (local.set $hi (call $cmp128 (local.get $xh) (local.get $xl) (local.get $bh) (local.get $bl)))
    (if (result i32) (local.get $ends)
      (then (i32.and (i32.ge_s (local.get $lo) (i32.const 0)) (i32.le_s (local.get $hi) (i32.const 0))))
      (else (i32.and (i32.gt_s (local.get $lo) (i32.const 0)) (i32.lt_s (local.get $hi) (i32.const 0))))))

  ;; The float lexeme [s, e) (JSON number syntax, already checked): 1 when it
  ;; is Python's repr of its value, -1 when not, 0 undecided (see above).
  (func $floatExact (param $s i32) (param $e i32) (result i32)
    (local $p i32) (local $c i32) (local $n i32) (local $dot i32) (local $f i32) (local $tries i32) (local $ends i32)
    (local $first i32)
    (local $D i64) (local $P i64) (local $bits i64) (local $M i64) (local $sh i64) (local $w i64) (local $D1 i64)
    (local $xh i64) (local $xl i64) (local $ch i64) (local $cl i64)
    (local $ah i64) (local $al i64) (local $bh i64) (local $bl i64) (local $yh i64) (local $yl i64)
    (local $d f64)
    (local.set $p (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2d)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (local.set $dot (i32.const -1))
    (local.set $first (i32.const -1))
    ;; D: the significant digits (from the first non-zero one; past 17, only counted)
    (block $read
      (loop $digit
        (br_if $read (i32.ge_u (local.get $p) (local.get $e)))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eq (local.get $c) (i32.const 0x2e))
          (then (local.set $dot (local.get $p)))
          (else
            (local.set $c (i32.sub (local.get $c) (i32.const 0x30)))
            ;; an exponent: scientific notation
            (if (i32.ge_u (local.get $c) (i32.const 10)) (then (return (call $floatScientific (local.get $s) (local.get $e)))))
            (if (i32.or (local.get $n) (local.get $c))
              (then
                (if (i32.eqz (local.get $n)) (then (local.set $first (local.get $p))))
                (local.set $n (i32.add (local.get $n) (i32.const 1)))
                (if (i32.le_u (local.get $n) (i32.const 17))
                  (then (local.set $D (i64.add (i64.mul (local.get $D) (i64.const 10)) (i64.extend_i32_u (local.get $c))))))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $digit)))
    (if (i32.or (i32.lt_s (local.get $dot) (i32.const 0)) (i32.eqz (local.get $n))) (then (return (i32.const 0))))
    ;; repr writes fixed notation only for 1e-4 <= |x| < 1e16, and never more than 17 digits
    (if (i32.lt_u (local.get $first) (local.get $dot))
      (then (if (i32.ge_s (i32.sub (local.get $dot) (local.get $first)) (i32.const 17)) (then (return (i32.const -1)))))
      (else (if (i32.gt_s (i32.sub (local.get $first) (local.get $dot)) (i32.const 4)) (then (return (i32.const -1))))))
    (if (i32.gt_u (local.get $n) (i32.const 17)) (then (return (i32.const -1))))
    (local.set $f (i32.sub (i32.sub (local.get $e) (local.get $dot)) (i32.const 1)))
    ;; (2·P must fit in 64 bits)
    (if (i32.or (i32.lt_u (local.get $n) (i32.const 16)) (i32.gt_u (local.get $f) (i32.const 18))) (then (return (i32.const 0))))
    ;; a trailing zero: a shorter spelling reads the same, but for "I.0" (an
    ;; integral value, whose repr spells its zeros): left to the host
    (if (i64.eqz (i64.rem_u (local.get $D) (i64.const 10)))
      (then (return (select (i32.const 0) (i32.const -1) (i32.eq (local.get $f) (i32.const 1))))))
    (local.set $P (i64.const 1))
    (local.set $c (local.get $f))
    (loop $pow
      (if (local.get $c)
        (then
          (local.set $P (i64.mul (local.get $P) (i64.const 10)))
          (local.set $c (i32.sub (local.get $c) (i32.const 1)))
          (br $pow))))
    (local.set $d (f64.div (f64.convert_i64_u (local.get $D)) (f64.convert_i64_u (local.get $P))))
    (if (i32.or (f64.lt (local.get $d) (f64.const 1e-4)) (f64.ge (local.get $d) (f64.const 1e16))) (then (return (i32.const 0))))
    ;; the double whose rounding interval holds L: D/P or a neighbour
    (block $found
      (block $lost
        (loop $try
          (br_if $lost (i32.ge_u (local.get $tries) (i32.const 3)))
          (local.set $tries (i32.add (local.get $tries) (i32.const 1)))
          (local.set $bits (i64.reinterpret_f64 (local.get $d)))
          (local.set $M (i64.or (i64.and (local.get $bits) (i64.const 0xfffffffffffff)) (i64.const 0x10000000000000)))
          ;; sh = 2 - E, E = exponent field - 1075
          (local.set $sh (i64.sub (i64.const 1077) (i64.shr_u (local.get $bits) (i64.const 52))))
          (local.set $xl (call $shl128 (local.get $D) (local.get $sh)))
          (local.set $xh (global.get $mulHi))
          ;; 4·M·P
          (local.set $cl (call $mul128 (local.get $M) (local.get $P)))
          (local.set $ch (i64.or (i64.shl (global.get $mulHi) (i64.const 2)) (i64.shr_u (local.get $cl) (i64.const 62))))
          (local.set $cl (i64.shl (local.get $cl) (i64.const 2)))
          ;; the ends: centre -/+ 2P (-P at the bottom of a binade)
          (local.set $w (select (local.get $P) (i64.shl (local.get $P) (i64.const 1)) (i64.eq (local.get $M) (i64.const 0x10000000000000))))
          (local.set $al (i64.sub (local.get $cl) (local.get $w)))
          (local.set $ah (i64.sub (local.get $ch) (i64.extend_i32_u (i64.lt_u (local.get $cl) (local.get $w)))))
          (local.set $w (i64.shl (local.get $P) (i64.const 1)))
          (local.set $bl (i64.add (local.get $cl) (local.get $w)))
          (local.set $bh (i64.add (local.get $ch) (i64.extend_i32_u (i64.lt_u (local.get $bl) (local.get $cl)))))
          (local.set $ends (i64.eqz (i64.and (local.get $M) (i64.const 1))))
          (br_if $found (call $within128 (local.get $xh) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends)))
          ;; L is past d's interval on one side: the neighbour on that side
          (local.set $d
            (f64.reinterpret_i64
              (select
                (i64.sub (local.get $bits) (i64.const 1))
                (i64.add (local.get $bits) (i64.const 1))
                (i32.lt_s (call $cmp128 (local.get $xh) (local.get $xl) (local.get $ch) (local.get $cl)) (i32.const 0)))))
          (br $try))
      ;; not within three doubles of D/P: the host decides
      (return (i32.const 0))))
    ;; (2) 2·|X - 4MP| against 2^sh (half a 10^-f, doubled)
    (if (i32.lt_s (call $cmp128 (local.get $xh) (local.get $xl) (local.get $ch) (local.get $cl)) (i32.const 0))
      (then
        (local.set $yl (i64.sub (local.get $cl) (local.get $xl)))
        (local.set $yh (i64.sub (i64.sub (local.get $ch) (local.get $xh)) (i64.extend_i32_u (i64.lt_u (local.get $cl) (local.get $xl))))))
      (else
        (local.set $yl (i64.sub (local.get $xl) (local.get $cl)))
        (local.set $yh (i64.sub (i64.sub (local.get $xh) (local.get $ch)) (i64.extend_i32_u (i64.lt_u (local.get $xl) (local.get $cl)))))))
    (local.set $yh (i64.or (i64.shl (local.get $yh) (i64.const 1)) (i64.shr_u (local.get $yl) (i64.const 63))))
    (local.set $yl (i64.shl (local.get $yl) (i64.const 1)))
    (local.set $xl (call $shl128 (i64.const 1) (local.get $sh)))
    (local.set $c (call $cmp128 (local.get $yh) (local.get $yl) (global.get $mulHi) (local.get $xl)))
    ;; a tie between two spellings: the host decides
    (if (i32.eqz (local.get $c)) (then (return (i32.const 0))))
    (if (i32.gt_s (local.get $c) (i32.const 0)) (then (return (i32.const -1))))
    ;; (1) the multiples of 10^(1-f) on either side of L
    (local.set $D1 (i64.sub (local.get $D) (i64.rem_u (local.get $D) (i64.const 10))))
    (local.set $xl (call $shl128 (local.get $D1) (local.get $sh)))
    (if (call $within128 (global.get $mulHi) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends))
      (then (return (i32.const -1))))
    (local.set $xl (call $shl128 (i64.add (local.get $D1) (i64.const 10)) (local.get $sh)))
    (if (call $within128 (global.get $mulHi) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends))
      (then (return (i32.const -1))))
    (i32.const 1))

  ;; A lexeme in scientific notation, [s, e): 1 when it is Python's repr of
  ;; its value, -1 when not, 0 undecided. repr writes `d[.ddd]e±XX` (a
  ;; non-zero first digit, no trailing zero, a lowercase e, a sign, at least
  ;; two exponent digits) only outside [1e-4, 1e16). With at most 15
  ;; significant digits in the normal range, a decimal is the shortest that
  ;; reads as its double (15 = DBL_DIG: no two such decimals read as one
  ;; double), so the spelling decides; longer ones go to the host.
  (func $floatScientific (param $s i32) (param $e i32) (result i32)
    (local $p i32) (local $c i32) (local $n i32) (local $neg i32) (local $x i32) (local $q i32)
    (local.set $p (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2d)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.ge_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x31)) (i32.const 9)) (then (return (i32.const -1))))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (local.set $n (i32.const 1))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2e))
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (loop $frac
          (if (i32.lt_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)) (i32.const 10))
            (then
              (local.set $n (i32.add (local.get $n) (i32.const 1)))
              (local.set $p (i32.add (local.get $p) (i32.const 1)))
              (br $frac))))
        ;; "d.e5" is not JSON; a trailing zero is never the shortest
        (if (i32.eq (i32.load8_u (i32.sub (local.get $p) (i32.const 1))) (i32.const 0x30)) (then (return (i32.const -1))))))
    (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x65)) (then (return (i32.const -1))))
    (local.set $c (i32.load8_u offset=1 (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0x2d)) (then (local.set $neg (i32.const 1)))
      (else (if (i32.ne (local.get $c) (i32.const 0x2b)) (then (return (i32.const -1))))))
    (local.set $p (i32.add (local.get $p) (i32.const 2)))
    (local.set $q (local.get $p))
    (block $done
      (loop $digit
        (br_if $done (i32.ge_u (local.get $p) (local.get $e)))
        (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 10)) (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30))))
        (if (i32.gt_u (local.get $x) (i32.const 9999)) (then (return (i32.const 0))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $digit)))
    ;; two digits at least, and no leading zero beyond them
    (if (i32.lt_u (i32.sub (local.get $e) (local.get $q)) (i32.const 2)) (then (return (i32.const -1))))
    (if (i32.and (i32.gt_u (i32.sub (local.get $e) (local.get $q)) (i32.const 2)) (i32.eq (i32.load8_u (local.get $q)) (i32.const 0x30)))
      (then (return (i32.const -1))))
    (if (local.get $neg) (then (local.set $x (i32.sub (i32.const 0) (local.get $x)))))
    ;; repr's fixed range
    (if (i32.and (i32.ge_s (local.get $x) (i32.const -4)) (i32.le_s (local.get $x) (i32.const 15))) (then (return (i32.const -1))))
    (if (i32.and (i32.le_u (local.get $n) (i32.const 15))
          (i32.and (i32.ge_s (local.get $x) (i32.const -307)) (i32.le_s (local.get $x) (i32.const 307))))
      (then (return (i32.const 1))))
    (i32.const 0))
