;; Whether a float lexeme is Python's repr of the double it reads as,
;; decided without the host (both kernels and the codec's row scanner
;; include this file): what the kernels used to ask the host for (a string
;; made and parsed per float), which on journals of random-looking floats
;; (scores, costs, durations, metrics) was most of a verify's time.
;; $floatRepr: `I.F` with 1 <= I < 2^32 (a clock reading, a cost), double
;; arithmetic ($clockRepr); other fixed notation up to 15 significant
;; digits, by its spelling ($fixedFloat); scientific notation up to 15, by
;; its spelling ($floatScientific); 16 or 17 digits in either notation, in
;; exact integer arithmetic ($digitsRepr).
;;
;; A decimal L = D·10^q (D its n significant digits) reads as the double
;; d = M·2^E (M of 53 bits) whose rounding interval holds it. repr(d) is the
;; shortest decimal in that interval, the nearest to d among equally short
;; ones, the even one of two equally near (ECMAScript's Number-to-String
;; gives the same digits). So L is repr(d) when
;;   (1) no decimal of n-1 digits, a multiple of 10^(q+1), lies in the
;;       interval: enough to test the two around L, since the interval
;;       holds L and is convex; and
;;   (2) L lies within half a 10^q of d (at exactly half, D is even).
;; $digitsRepr scales every quantity to an integer below 2^125 (see there);
;; d itself is found from the double D·10^q computed in floating point
;; (within an ulp or two of it) by stepping to the neighbour whose interval
;; holds L.
;;
;; Left undecided (0) for the host's exact test: 16 or 17 digits at |q| > 27
;; (below about 1e-11, above about 1e43), subnormal doubles, a tie at a
;; binade's bottom.

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
    (local $p i32) (local $c i32) (local $n i32) (local $dot i32) (local $f i32) (local $first i32)
    (local $D i64) (local $d f64)
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
    (if (i32.lt_u (local.get $n) (i32.const 16)) (then (return (i32.const 0))))
    (local.set $f (i32.sub (i32.sub (local.get $e) (local.get $dot)) (i32.const 1)))
    (local.set $d (f64.div (f64.convert_i64_u (local.get $D)) (call $pow10 (local.get $f))))
    (if (i32.or (f64.lt (local.get $d) (f64.const 1e-4)) (f64.ge (local.get $d) (f64.const 1e16))) (then (return (i32.const 0))))
    (local.set $f (i32.sub (i32.const 0) (local.get $f)))
    ;; a trailing zero: a shorter spelling reads the same, but for "I.0" (an
    ;; integral value, whose repr spells its zeros): its digits are I's without them
    (if (i64.eqz (i64.rem_u (local.get $D) (i64.const 10)))
      (then
        (if (i32.ne (local.get $f) (i32.const -1)) (then (return (i32.const -1))))
        (loop $strip
          (local.set $D (i64.div_u (local.get $D) (i64.const 10)))
          (local.set $f (i32.add (local.get $f) (i32.const 1)))
          (br_if $strip (i64.eqz (i64.rem_u (local.get $D) (i64.const 10)))))))
    (call $digitsRepr (local.get $D) (local.get $f)))

  ;; 10^k as a double (0 <= k <= 44; exact to 10^22, within an ulp or two above).
  (func $pow10 (param $k i32) (result f64)
    (local $r f64)
    (local.set $r (f64.const 1))
    (if (i32.gt_u (local.get $k) (i32.const 22))
      (then (local.set $r (f64.const 1e22)) (local.set $k (i32.sub (local.get $k) (i32.const 22)))))
    (loop $mul
      (if (i32.ge_u (local.get $k) (i32.const 4))
        (then
          (local.set $r (f64.mul (local.get $r) (f64.const 1e4)))
          (local.set $k (i32.sub (local.get $k) (i32.const 4)))
          (br $mul))))
    (loop $one
      (if (local.get $k)
        (then
          (local.set $r (f64.mul (local.get $r) (f64.const 10)))
          (local.set $k (i32.sub (local.get $k) (i32.const 1)))
          (br $one))))
    (local.get $r))

  ;; Set when $scaled's value would not fit below 2^125.
  (global $tooWide (mut i32) (i32.const 0))

  ;; 5^k (0 <= k <= 27: below 2^63).
  (func $pow5 (param $k i32) (result i64)
    (local $r i64)
    (local.set $r (i64.const 1))
    (loop $mul
      (if (local.get $k)
        (then
          (local.set $r (i64.mul (local.get $r) (i64.const 5)))
          (local.set $k (i32.sub (local.get $k) (i32.const 1)))
          (br $mul))))
    (local.get $r))

  ;; x·five·2^p2 (x < 2^60, five < 2^63, p2 >= 0): the low 64 bits, the
  ;; high 64 in $mulHi; $tooWide set when it is 2^125 or more (sums of two
  ;; such values and their doubles must not wrap).
  (func $scaled (param $x i64) (param $five i64) (param $p2 i32) (result i64)
    (local $lo i64) (local $hi i64) (local $bits i32)
    (local.set $lo (call $mul128 (local.get $x) (local.get $five)))
    (local.set $hi (global.get $mulHi))
    (local.set $bits
      (select
        (i32.sub (i32.const 128) (i32.wrap_i64 (i64.clz (local.get $hi))))
        (i32.sub (i32.const 64) (i32.wrap_i64 (i64.clz (local.get $lo))))
        (i64.ne (local.get $hi) (i64.const 0))))
    (if (i32.gt_s (i32.add (local.get $bits) (local.get $p2)) (i32.const 125))
      (then (global.set $tooWide (i32.const 1)) (global.set $mulHi (i64.const 0)) (return (i64.const 0))))
    (if (i32.eqz (local.get $p2)) (then (return (local.get $lo))))
    (if (i32.ge_u (local.get $p2) (i32.const 64))
      (then
        (global.set $mulHi (i64.shl (local.get $lo) (i64.extend_i32_u (i32.sub (local.get $p2) (i32.const 64)))))
        (return (i64.const 0))))
    (global.set $mulHi
      (i64.or (i64.shl (local.get $hi) (i64.extend_i32_u (local.get $p2)))
              (i64.shr_u (local.get $lo) (i64.extend_i32_u (i32.sub (i32.const 64) (local.get $p2))))))
    (i64.shl (local.get $lo) (i64.extend_i32_u (local.get $p2))))

  ;; Whether the decimal L = D·10^q (D of 16 or 17 digits, the last not 0;
  ;; -27 <= q <= 27, else undecided) is repr(d) for the double d it reads as:
  ;; 1, -1, or 0 undecided (out of reach, a tie, a subnormal or infinite d).
  ;; Every quantity is multiplied by 4·10^-q·2^-E (d = M·2^E), which leaves
  ;; integers: L to 4D·5^a5·2^a2, d to 4M·5^b5·2^b2, half the spacing of
  ;; doubles at d to 2·5^b5·2^b2 (1·… below, at a binade's bottom), half a
  ;; 10^q to 2·5^a5·2^a2 (a5, b5: the powers of five of 10^±q; the powers of
  ;; two reduced by their common part). All below 2^125 for |q| <= 27 at
  ;; the magnitudes 16 digits at that q have, else undecided.
  (func $digitsRepr (param $D i64) (param $q i32) (result i32)
    (local $d f64) (local $bits i64) (local $M i64) (local $E i32) (local $x i32) (local $tries i32) (local $ends i32)
    (local $a2 i32) (local $b2 i32) (local $D1 i64)
    (local $xh i64) (local $xl i64) (local $ch i64) (local $cl i64) (local $ah i64) (local $al i64)
    (local $bh i64) (local $bl i64) (local $wh i64) (local $wl i64) (local $yh i64) (local $yl i64) (local $c i32)
    (local $fa i64) (local $fb i64) (local $bottom i32)
    (if (i32.gt_u (i32.add (local.get $q) (i32.const 27)) (i32.const 54)) (then (return (i32.const 0))))
    ;; 5^a5 and 5^b5: one of them is 1
    (local.set $fa (call $pow5 (select (local.get $q) (i32.const 0) (i32.gt_s (local.get $q) (i32.const 0)))))
    (local.set $fb (call $pow5 (select (i32.const 0) (i32.sub (i32.const 0) (local.get $q)) (i32.gt_s (local.get $q) (i32.const 0)))))
    (local.set $d (f64.convert_i64_u (local.get $D)))
    (if (i32.lt_s (local.get $q) (i32.const 0))
      (then (local.set $d (f64.div (local.get $d) (call $pow10 (i32.sub (i32.const 0) (local.get $q))))))
      (else (local.set $d (f64.mul (local.get $d) (call $pow10 (local.get $q))))))
    (global.set $tooWide (i32.const 0))
    ;; the double whose rounding interval holds L: D·10^q as computed, or a neighbour
    (block $found
      (loop $try
        ;; not within four doubles of it: the host decides
        (if (i32.ge_u (local.get $tries) (i32.const 4)) (then (return (i32.const 0))))
        (local.set $tries (i32.add (local.get $tries) (i32.const 1)))
        (local.set $bits (i64.reinterpret_f64 (local.get $d)))
        (local.set $x (i32.wrap_i64 (i64.shr_u (local.get $bits) (i64.const 52))))
        ;; normal and finite only
        (if (i32.ge_u (i32.sub (local.get $x) (i32.const 1)) (i32.const 2046)) (then (return (i32.const 0))))
        (local.set $M (i64.or (i64.and (local.get $bits) (i64.const 0xfffffffffffff)) (i64.const 0x10000000000000)))
        (local.set $E (i32.sub (local.get $x) (i32.const 1075)))
        (if (i32.le_s (local.get $q) (i32.const 0))
          (then
            (local.set $a2 (i32.sub (i32.const 0) (local.get $E)))
            (local.set $b2 (i32.sub (i32.const 0) (local.get $q))))
          (else
            (local.set $a2 (i32.sub (local.get $q) (local.get $E)))
            (local.set $b2 (i32.const 0))))
        (local.set $c (select (local.get $a2) (local.get $b2) (i32.lt_s (local.get $a2) (local.get $b2))))
        (local.set $a2 (i32.sub (local.get $a2) (local.get $c)))
        (local.set $b2 (i32.sub (local.get $b2) (local.get $c)))
        (local.set $xl (call $scaled (i64.shl (local.get $D) (i64.const 2)) (local.get $fa) (local.get $a2)))
        (local.set $xh (global.get $mulHi))
        (local.set $cl (call $scaled (i64.shl (local.get $M) (i64.const 2)) (local.get $fb) (local.get $b2)))
        (local.set $ch (global.get $mulHi))
        (local.set $wl (call $scaled (i64.const 2) (local.get $fb) (local.get $b2)))
        (local.set $wh (global.get $mulHi))
        (if (global.get $tooWide) (then (return (i32.const 0))))
        ;; the upper end: centre + w
        (local.set $bl (i64.add (local.get $cl) (local.get $wl)))
        (local.set $bh (i64.add (i64.add (local.get $ch) (local.get $wh)) (i64.extend_i32_u (i64.lt_u (local.get $bl) (local.get $cl)))))
        ;; the lower end: centre - w, or - w/2 at a binade's bottom (the spacing below halves)
        (local.set $bottom (i32.and (i64.eq (local.get $M) (i64.const 0x10000000000000)) (i32.gt_u (local.get $x) (i32.const 1))))
        (if (local.get $bottom)
          (then
            (local.set $wl (i64.or (i64.shr_u (local.get $wl) (i64.const 1)) (i64.shl (local.get $wh) (i64.const 63))))
            (local.set $wh (i64.shr_u (local.get $wh) (i64.const 1)))))
        (local.set $al (i64.sub (local.get $cl) (local.get $wl)))
        (local.set $ah (i64.sub (i64.sub (local.get $ch) (local.get $wh)) (i64.extend_i32_u (i64.lt_u (local.get $cl) (local.get $wl)))))
        (local.set $ends (i64.eqz (i64.and (local.get $M) (i64.const 1))))
        (br_if $found (call $within128 (local.get $xh) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends)))
        ;; L is past d's interval on one side: the neighbour on that side
        (local.set $d
          (f64.reinterpret_i64
            (select
              (i64.sub (local.get $bits) (i64.const 1))
              (i64.add (local.get $bits) (i64.const 1))
              (i32.lt_s (call $cmp128 (local.get $xh) (local.get $xl) (local.get $ch) (local.get $cl)) (i32.const 0)))))
        (br $try)))
    ;; (2) |X - C| against half a 10^q: 2·5^a5·2^a2
    (if (i32.lt_s (call $cmp128 (local.get $xh) (local.get $xl) (local.get $ch) (local.get $cl)) (i32.const 0))
      (then
        (local.set $yl (i64.sub (local.get $cl) (local.get $xl)))
        (local.set $yh (i64.sub (i64.sub (local.get $ch) (local.get $xh)) (i64.extend_i32_u (i64.lt_u (local.get $cl) (local.get $xl))))))
      (else
        (local.set $yl (i64.sub (local.get $xl) (local.get $cl)))
        (local.set $yh (i64.sub (i64.sub (local.get $xh) (local.get $ch)) (i64.extend_i32_u (i64.lt_u (local.get $xl) (local.get $cl)))))))
    (local.set $wl (call $scaled (i64.const 2) (local.get $fa) (local.get $a2)))
    (local.set $wh (global.get $mulHi))
    (if (global.get $tooWide) (then (return (i32.const 0))))
    (local.set $c (call $cmp128 (local.get $yh) (local.get $yl) (local.get $wh) (local.get $wl)))
    (if (i32.gt_s (local.get $c) (i32.const 0)) (then (return (i32.const -1))))
    ;; L and its neighbour of n digits equally near d: repr takes the even one (as
    ;; ECMAScript's Number-to-String does); at a binade's bottom the neighbour
    ;; below may not read as d: the host decides
    (if (i32.eqz (local.get $c))
      (then
        (if (local.get $bottom) (then (return (i32.const 0))))
        (if (i32.wrap_i64 (i64.and (local.get $D) (i64.const 1))) (then (return (i32.const -1))))))
    ;; (1) the multiples of 10^(q+1) on either side of L
    (local.set $D1 (i64.sub (local.get $D) (i64.rem_u (local.get $D) (i64.const 10))))
    (local.set $xl (call $scaled (i64.shl (local.get $D1) (i64.const 2)) (local.get $fa) (local.get $a2)))
    (local.set $xh (global.get $mulHi))
    (if (global.get $tooWide) (then (return (i32.const 0))))
    (if (call $within128 (local.get $xh) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends))
      (then (return (i32.const -1))))
    (local.set $xl (call $scaled (i64.shl (i64.add (local.get $D1) (i64.const 10)) (i64.const 2)) (local.get $fa) (local.get $a2)))
    (local.set $xh (global.get $mulHi))
    (if (global.get $tooWide) (then (return (i32.const 0))))
    (if (call $within128 (local.get $xh) (local.get $xl) (local.get $ah) (local.get $al) (local.get $bh) (local.get $bl) (local.get $ends))
      (then (return (i32.const -1))))
    (i32.const 1))

  ;; A lexeme in scientific notation, [s, e): 1 when it is Python's repr of
  ;; its value, -1 when not, 0 undecided. repr writes `d[.ddd]e±XX` (a
  ;; non-zero first digit, no trailing zero, a lowercase e, a sign, at least
  ;; two exponent digits) only outside [1e-4, 1e16). With at most 15
  ;; significant digits in the normal range, a decimal is the shortest that
  ;; reads as its double (15 = DBL_DIG: no two such decimals read as one
  ;; double), so the spelling decides; 16 or 17 digits, $digitsRepr; more,
  ;; never repr.
  (func $floatScientific (param $s i32) (param $e i32) (result i32)
    (local $p i32) (local $c i32) (local $n i32) (local $neg i32) (local $x i32) (local $q i32) (local $D i64)
    (local.set $p (local.get $s))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2d)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.ge_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x31)) (i32.const 9)) (then (return (i32.const -1))))
    (local.set $D (i64.extend_i32_u (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30))))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (local.set $n (i32.const 1))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2e))
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (loop $frac
          (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)))
          (if (i32.lt_u (local.get $c) (i32.const 10))
            (then
              (local.set $n (i32.add (local.get $n) (i32.const 1)))
              ;; (past 17 digits it is not repr: only counted)
              (if (i32.le_u (local.get $n) (i32.const 17))
                (then (local.set $D (i64.add (i64.mul (local.get $D) (i64.const 10)) (i64.extend_i32_u (local.get $c))))))
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
    ;; repr never spells more than 17 digits
    (if (i32.gt_u (local.get $n) (i32.const 17)) (then (return (i32.const -1))))
    (if (i32.lt_u (local.get $n) (i32.const 16)) (then (return (i32.const 0))))
    (call $digitsRepr (local.get $D) (i32.sub (local.get $x) (i32.sub (local.get $n) (i32.const 1)))))
