;; The verify kernel: the fast path of journal verification for rows spelled
;; exactly as Python's writer spells them, as WebAssembly.
;;
;; Why WebAssembly: every verifying thread is its own JavaScript VM, and a
;; JavaScript scanner is JIT-compiled afresh in each, and on two cores that
;; compiling competes with the verifying itself. A WebAssembly module
;; compiles once, quickly, and runs at full speed from its first row.
;; SHA-256 stays native: the kernel calls back into Bun's hasher (imports
;; hashPayload/hashEvent).
;;
;; Contract (kernel.ts drives it; range.ts calls it): `verify` walks
;; consecutive rows from a line start and returns at the first row it does
;; not fully verify itself: a row not in Python's spelling, a row whose
;; floats or links or hashes do not check out, or the end of the data. Such
;; a row is left to the exact path (checkRow), which decides its verdict, so
;; this kernel only has to be exact for the rows it ACCEPTS: two tiers, no
;; third. Its modes (see verify) cover a range's first row, links-only and
;; the counting of rows past a failure, the replay display's fingerprint
;; text (FPRINT), and the provider-state gate of `replay <RUN> --verify`
;; (GATE); lines end in LF, CR or CRLF.
;;
;; A row is read once: its envelope, whose spelling Python's writer fixes,
;; by comparing bytes; its payload by the codec's scanner (src/codec/scan.wat),
;; whose consumer here builds the payload pre-image as it goes.
;;
;; Memory (imported; src/wasm/arena.ts lays it out from the exported
;; globals below): [0, heapBase) holds this module's tables and constants;
;; the range's read area (the lines), the previous-hash slot, the scratch,
;; the payload pre-image (out) and the member table follow (addresses given
;; to $setup and verify). A line's end byte is a line terminator or the
;; sentinel line feed at `bound`, which stops every scanning loop; word
;; loads may read up to 15 bytes past it (the read area leaves slack).
;;
;; Fixed addresses:
;;      0  the byte tables of src/codec/bytes.wat (STRCLASS, HEXVAL, HEXPAIR,
;;         SHORTESC), filled by $setupTables; with the helpers that read them,
;;         shared with the other modules (included at the end of this module)
;;   1280  the envelope pieces as Python spells them (data segments below)
;;   1440  '{"event_type":'   1456  ',"index":'
;;   1472  envelope key names (isEnvelopeKey)
;;   1600  payload digest     1632  event digest     1664  event digest hex
;;   1728  GATE: the content address's digest hex; from 1792 the member names
;;         and pre-image pieces it reads and writes (data segments below)
;;   2048  event pre-image: head written right-aligned before 2560, where
;;         the index digits end; then the fixed suffix
;;         ,"payload_hash":"H","prev_hash":"P"}   H at 2577, P at 2656, end 2722
;;   4096  the frames of the containers the scanner has open (8 bytes per
;;         depth, to the scanner's bound bytes.ts MAX_DEPTH: to 12104)
(module
  (import "env" "memory" (memory 1))
  ;; SHA-256 of the payload pre-image [out, out+len) into the payload digest
  (import "env" "hashPayload" (func $hashPayload (param i32)))
  ;; SHA-256 of the event pre-image [2722-len, 2722) into the event digest
  (import "env" "hashEvent" (func $hashEvent (param i32)))
  ;; 1 when the float lexeme [s, e) is exactly Python's repr of its value
  (import "env" "floatIsRepr" (func $floatIsRepr (param i32 i32) (result i32)))
  ;; EACH: the row at p was taken (the next starts at next); the member table and facts describe it during the call
  (import "env" "rowTaken" (func $rowTaken (param i32 i32)))

  ;; the layout the host reads (src/wasm/arena.ts): fixed addresses, and the first byte it may use
  (global (export "payloadDigest") i32 (i32.const 1600))
  (global (export "eventDigest") i32 (i32.const 1632))
  (global (export "eventEnd") i32 (i32.const 2722))
  (global (export "payloadHex") i32 (i32.const 2577))
  (global (export "heapBase") i32 (i32.const 12288))
  ;; verify's modes (flags)
  (global (export "FIRST") i32 (i32.const 1))
  (global (export "LINKS") i32 (i32.const 2))
  (global (export "GUESS") i32 (i32.const 4))
  (global (export "CLASSIFY") i32 (i32.const 8))
  (global (export "LEAVES") i32 (i32.const 16))
  (global (export "FPRINT") i32 (i32.const 32))
  (global (export "TEXT") i32 (i32.const 64))
  (global (export "EACH") i32 (i32.const 128))
  (global (export "GATE") i32 (i32.const 256))

  ;; areas (set by $setup)
  (global $scratch (mut i32) (i32.const 0))
  (global $scratchEnd (mut i32) (i32.const 0))
  (global $out (mut i32) (i32.const 0))
  (global $outEnd (mut i32) (i32.const 0))
  (global $mt (mut i32) (i32.const 0))
  (global $mtEnd (mut i32) (i32.const 0))
  (global $leafOut (mut i32) (i32.const 0))
  (global $leafEnd (mut i32) (i32.const 0))
  ;; per-row state
  (global $sp (mut i32) (i32.const 0))      ;; next free scratch byte
  (global $mTop (mut i32) (i32.const 0))    ;; next free member entry (16 bytes: keyS keyE valS valE)
  (global $bound (mut i32) (i32.const 0))   ;; the data's sentinel
  (global $typeS (mut i32) (i32.const 0))   ;; event type token, quotes included
  (global $typeE (mut i32) (i32.const 0))
  (global $prevS (mut i32) (i32.const 0))   ;; the three stored 64-byte hashes
  (global $phS (mut i32) (i32.const 0))
  (global $hashS (mut i32) (i32.const 0))
  (global $outLen (mut i32) (i32.const 0))
  (global $ixS (mut i32) (i32.const 0))     ;; the stored index lexeme
  (global $ixE (mut i32) (i32.const 0))
  (global $next (mut i32) (i32.const 0))    ;; the next line's start (after LF, CR or CRLF)
  (global $tsS (mut i32) (i32.const 0))     ;; the ts and elapsed_s lexemes
  (global $tsE (mut i32) (i32.const 0))
  (global $elS (mut i32) (i32.const 0))
  (global $elE (mut i32) (i32.const 0))
  ;; FPRINT (set by $fingerprintTo): the fingerprint text's next byte, its area's end, the row facts' area
  (global $fprint (mut i32) (i32.const 0))
  (global $fpOut (mut i32) (i32.const 0))
  (global $fpEnd (mut i32) (i32.const 0))
  (global $info (mut i32) (i32.const 0))
  ;; the byte after each row's text (a line feed; a run receipt's rows: a comma)
  (global $textSep (mut i32) (i32.const 10))
  ;; the last container the scanner closed: its canonical bytes in scratch
  (global $canonS (mut i32) (i32.const 0))
  (global $canonE (mut i32) (i32.const 0))
  ;; per-call results
  (global $idxLen (mut i32) (i32.const 0))
  (global $usedGuess (mut i32) (i32.const 0))
  (global $rows (mut i32) (i32.const 0))
  (global $lastRow (mut i32) (i32.const 0))
  ;; GATE: the findings area (set by gateArea; 16 bytes an entry), the entries and the mutation rows of the call
  (global $gateAt (mut i32) (i32.const 0))
  (global $gateEnd (mut i32) (i32.const 0))
  (global $gateN (mut i32) (i32.const 0))
  (global $gateRows (mut i32) (i32.const 0))

  (data (i32.const 1280) "{\"ts\": ")
  (data (i32.const 1296) ", \"elapsed_s\": ")
  (data (i32.const 1312) ", \"index\": ")
  (data (i32.const 1328) ", \"event\": \"")
  (data (i32.const 1344) "\", \"prev_hash\": \"")
  (data (i32.const 1376) "\", \"payload_hash\": \"")
  (data (i32.const 1408) "\", \"event_hash\": \"")
  (data (i32.const 1440) "{\"event_type\":")
  (data (i32.const 1456) ",\"index\":")
  (data (i32.const 1472) "ts")
  (data (i32.const 1480) "elapsed_s")
  (data (i32.const 1496) "index")
  (data (i32.const 1504) "event")
  (data (i32.const 1512) "prev_hash")
  (data (i32.const 1528) "payload_hash")
  (data (i32.const 1544) "event_hash")
  (data (i32.const 1560) "hash_profile")
  (data (i32.const 1792) "after_digest")
  (data (i32.const 1808) "before_digest")
  (data (i32.const 1824) "mutation_kind")
  (data (i32.const 1840) "step_index")
  (data (i32.const 1856) "content_address")
  (data (i32.const 1872) "flagged")
  (data (i32.const 1880) "\"provider_state_mutation\"")
  (data (i32.const 1912) "{\"after_digest\":")
  (data (i32.const 1928) ",\"before_digest\":")
  (data (i32.const 1948) ",\"kind\":")
  (data (i32.const 1960) ",\"step_index\":")
  (data (i32.const 1976) "\"None\"")
  (data (i32.const 1984) "0}")
  (data (i32.const 2560) ",\"payload_hash\":\"")
  (data (i32.const 2641) "\",\"prev_hash\":\"")
  (data (i32.const 2720) "\"}")

  (func (export "rows") (result i32) (global.get $rows))
  (func (export "lastRow") (result i32) (global.get $lastRow))
  ;; GATE: the provider_state_mutation rows the last call took, and its findings' entries ($gate)
  (func (export "gateRows") (result i32) (global.get $gateRows))
  (func (export "gateEntries") (result i32) (global.get $gateN))
  (func (export "gateArea") (param $at i32) (param $end i32)
    (global.set $gateAt (local.get $at))
    (global.set $gateEnd (local.get $end)))
  ;; After a FIRST call: where the row's pieces are (0 type token, 1 its end,
  ;; 2 stored prev_hash, 3 stored event_hash, 4 index lexeme, 5 its end), and
  ;; 6: whether the index lexeme was taken as the row's position (GUESS).
  (func (export "field") (param $i i32) (result i32)
    (block $b6 (block $b5 (block $b4 (block $b3 (block $b2 (block $b1 (block $b0
      (br_table $b0 $b1 $b2 $b3 $b4 $b5 $b6 (local.get $i)))
      (return (global.get $typeS)))
      (return (global.get $typeE)))
      (return (global.get $prevS)))
      (return (global.get $hashS)))
      (return (global.get $ixS)))
      (return (global.get $ixE)))
    (global.get $usedGuess))

;; FPRINT's areas: the fingerprint text is appended from `out` (before
  ;; outEnd); each row taken leaves its facts at `info` (i32s: ts start, end,
  ;; elapsed_s start, end, the member table's end, the event type token's
  ;; start, end; the text's end). A call with out = 0 only reads the text's end.
  (func (export "fingerprintTo") (param $out i32) (param $outEnd i32) (param $info i32) (result i32)
    (if (local.get $out)
      (then
        (global.set $fpOut (local.get $out))
        (global.set $fpEnd (local.get $outEnd))
        (global.set $info (local.get $info))))
    (global.get $fpOut))

  ;; The byte written after each row's text.
  (func (export "textSeparator") (param $c i32) (global.set $textSep (local.get $c)))

  ;; Tables, and the areas above heapBase.
  (func (export "setup") (param $scratch i32) (param $scratchEnd i32) (param $out i32) (param $outEnd i32)
    (param $mt i32) (param $mtEnd i32) (param $leafOut i32) (param $leafEnd i32)
    (global.set $leafOut (local.get $leafOut))
    (global.set $leafEnd (local.get $leafEnd))
    (global.set $scratch (local.get $scratch))
    (global.set $scratchEnd (local.get $scratchEnd))
    (global.set $out (local.get $out))
    (global.set $outEnd (local.get $outEnd))
    (global.set $mt (local.get $mt))
    (global.set $mtEnd (local.get $mtEnd))
    (call $setupTables))

  ;; ---------------------------------------------------------------- bytes

  ;; ---------------------------------------------------------------- the scanner's consumer

  ;; The kernel reads a row's payload with the codec's scanner (scan.wat,
  ;; included at the end) and builds, as the scanner goes, the payload's
  ;; canonical members: the member table holds each member's key and its
  ;; value's canonical bytes (a string or number as written; a container
  ;; re-emitted sorted and compact into scratch when it closes). The frames
  ;; of the containers open below the row's object are at 4096 + 8 * depth:
  ;; the member table's top and the scratch's next byte when it opened.

  ;; No tape: nothing reads a token back ($push is never called).
  (global $tape i32 (i32.const 0))
  (func $push (param $word i32) (param $s i32) (param $end i32) (result i32) (i32.const 0))
  ;; Python's writer puts one space after each separator.
  (global $spaced i32 (i32.const 1))

  ;; Spaces and tabs: a line break ends the row (the data's sentinel is one).
  (func $isWs (param $c i32) (result i32)
    (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 9))))

  ;; A member's key: a new member table entry (an envelope key among the
  ;; payload's is a duplicate, or a hash_profile: the exact path's).
  (func $onKey (param $depth i32) (param $kt i32) (param $ks i32) (param $ke i32) (result i32)
    (local $m i32)
    (if (i32.eq (local.get $depth) (i32.const 1))
      (then (if (call $isEnvelopeKey (local.get $ks) (i32.sub (local.get $ke) (local.get $ks))) (then (return (i32.const 0))))))
    (local.set $m (global.get $mTop))
    (if (i32.ge_u (local.get $m) (global.get $mtEnd)) (then (return (i32.const 0))))
    (global.set $mTop (i32.add (local.get $m) (i32.const 16)))
    (i32.store (local.get $m) (local.get $ks))
    (i32.store offset=4 (local.get $m) (local.get $ke))
    (i32.const 1))

  ;; Its value: the bytes as written, or a container's canonical bytes. Its
  ;; entry is the table's last (a container's members left it when it closed).
  (func $onValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32)
    (local $m i32)
    (local.set $m (i32.sub (global.get $mTop) (i32.const 16)))
    (if (i32.le_u (global.get $valKind) (i32.const 2))
      (then
        (local.set $vs (global.get $canonS))
        (local.set $ve (global.get $canonE))))
    (i32.store offset=8 (local.get $m) (local.get $vs))
    (i32.store offset=12 (local.get $m) (local.get $ve))
    (i32.const 1))

  ;; An array's elements go to scratch as they come, a comma between.
  (func $onElement (param $depth i32) (param $i i32) (result i32)
    (if (result i32) (local.get $i) (then (call $byteToScratch (i32.const 0x2c))) (else (i32.const 1))))

  (func $onElementValue (param $depth i32) (param $vs i32) (param $ve i32) (result i32)
    (if (result i32) (i32.le_u (global.get $valKind) (i32.const 2))
      (then (i32.const 1))
      (else (call $toScratch (local.get $vs) (local.get $ve)))))

  (func $onOpen (param $kind i32) (param $depth i32) (result i32)
    (local $frame i32)
    (local.set $frame (i32.add (i32.const 4096) (i32.shl (local.get $depth) (i32.const 3))))
    (i32.store (local.get $frame) (global.get $mTop))
    (i32.store offset=4 (local.get $frame) (global.get $sp))
    (if (result i32) (i32.eq (local.get $kind) (i32.const 2))
      (then (call $byteToScratch (i32.const 0x5b)))
      (else (i32.const 1))))

  ;; The row's own members are sorted with "event" among them (so their
  ;; order is not looked at here); a nested object's order spares its sort.
  (global $keysTo i32 (i32.const 1000))
  (global $containersTo i32 (i32.const 1000))
  (global $minusZero i32 (i32.const 64))
  (global $orderFrom i32 (i32.const 2))

  ;; A container closes. The row's object (depth 1): its payload must be in
  ;; Python's spelling (no raw UTF-8, no escape or number Python does not
  ;; write: each key and string then has the one spelling its pre-image
  ;; has). An array: its bracket. An object: its members sorted (unless its
  ;; own keys ascend already, in Python's order: $cmp) and assembled after
  ;; the scratch's end, then moved down to where it opened.
  (func $onClose (param $a i32) (param $kind i32) (param $depth i32) (param $flags i32) (param $own i32) (param $end i32) (result i32)
    (local $frame i32) (local $start i32) (local $base i32) (local $n i32) (local $at i32) (local $o i32)
    (if (i32.eq (local.get $depth) (i32.const 1))
      (then (return (i32.eqz (i32.and (local.get $flags) (i32.const 96))))))
    (local.set $frame (i32.add (i32.const 4096) (i32.shl (local.get $depth) (i32.const 3))))
    (local.set $start (i32.load offset=4 (local.get $frame)))
    (if (i32.eq (local.get $kind) (i32.const 2))
      (then
        (if (i32.eqz (call $byteToScratch (i32.const 0x5d))) (then (return (i32.const 0))))
        (global.set $canonS (local.get $start))
        (global.set $canonE (global.get $sp))
        (return (i32.const 1))))
    (local.set $base (i32.load (local.get $frame)))
    (local.set $n (i32.shr_u (i32.sub (global.get $mTop) (local.get $base)) (i32.const 4)))
    (if (local.get $own)
      (then (if (i32.eqz (call $sortMembers (local.get $base) (local.get $n))) (then (return (i32.const 0))))))
    (local.set $at (global.get $sp))
    (local.set $o (call $assemble (local.get $base) (local.get $n) (local.get $at) (global.get $scratchEnd)))
    (global.set $mTop (local.get $base))
    (if (i32.lt_s (local.get $o) (i32.const 0)) (then (return (i32.const 0))))
    (if (i32.ne (local.get $at) (local.get $start))
      (then (memory.copy (local.get $start) (local.get $at) (i32.sub (local.get $o) (local.get $at)))))
    (global.set $sp (i32.add (local.get $start) (i32.sub (local.get $o) (local.get $at))))
    (global.set $canonS (local.get $start))
    (global.set $canonE (global.get $sp))
    (i32.const 1))

  ;; A payload float must be spelled as Python writes its value, its repr
  ;; (decided here when the digits tell, float.wat; else by the host). Any
  ;; other declines the row (as an int's -0 does, by its NotPython flag).
  (func $numberFlags (param $s i32) (param $e i32) (result i32)
    (local $r i32)
    ;; no float repr is this long: spare the call
    (if (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 32)) (then (return (i32.const -1))))
    (local.set $r (call $floatRepr (local.get $s) (local.get $e)))
    (if (i32.eqz (local.get $r))
      (then (local.set $r (select (i32.const 1) (i32.const -1) (call $floatIsRepr (local.get $s) (local.get $e))))))
    (select (i32.const 0) (i32.const -1) (i32.gt_s (local.get $r) (i32.const 0))))

  ;; ---------------------------------------------------------------- values

  ;; Sort the n member entries at base in Python's key order ($cmp: code
  ;; points, escapes decoded): insertion sort for the few members most
  ;; objects have; a map of many keys in the order it was filled by their
  ;; first bytes ($mergeSort) where the member table has room above them,
  ;; else by Shell's sort with Ciura's gaps in place, so no map costs a
  ;; quadratic number of compares. Equal keys (a duplicate: Python keeps
  ;; the last) return 0; Shell's last pass (gap 1) compares every key with
  ;; the one it comes to rest after, so a duplicate is always found.
  (func $sortMembers (param $base i32) (param $n i32) (result i32)
    (if (i32.and (i32.gt_s (local.get $n) (i32.const 16))
                 (i32.ge_u (i32.sub (global.get $mtEnd) (global.get $mTop)) (i32.shl (local.get $n) (i32.const 6))))
      (then (return (call $mergeSort (local.get $base) (local.get $n)))))
    (if (i32.gt_s (local.get $n) (i32.const 701)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 701))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 301)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 301))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 132)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 132))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 57)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 57))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 23)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 23))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 16)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 10))) (then (return (i32.const 0))))))
    (if (i32.gt_s (local.get $n) (i32.const 16)) (then (if (i32.eqz (call $gapPass (local.get $base) (local.get $n) (i32.const 4))) (then (return (i32.const 0))))))
    (call $gapPass (local.get $base) (local.get $n) (i32.const 1)))

  ;; $sortMembers for a map of many keys (n > 16), with room for 64n bytes
  ;; above the entries (at $mTop, where they end). Each key gets a record of
  ;; 32 bytes: its first sixteen bytes as two big-endian numbers (zero past
  ;; a shorter key's end: no key holds a NUL byte, so a key that is
  ;; another's head sorts first), its entry's address, and a flag for a
  ;; backslash among those bytes (where bytes do not order as code points).
  ;; Two keys whose numbers differ, neither flagged, are in that order (raw
  ;; bytes, ASCII or UTF-8, order as their code points do); any other pair
  ;; is compared by $cmp. Two numbers, not one: a map's keys often share
  ;; their first eight bytes (`src/module_`). The records stay put; their
  ;; addresses are sorted, in runs of 8 by insertion, then merged bottom-up
  ;; between two lists; the entries are then written in order after the
  ;; lists and copied back to base. A comparison sort compares every two
  ;; keys that end side by side, and two equal keys have equal numbers, so
  ;; a duplicate reaches $cmp: 0.
  (func $mergeSort (param $base i32) (param $n i32) (result i32)
    (local $recs i32) (local $src i32) (local $dst i32) (local $out i32) (local $i i32) (local $e i32) (local $ks i32) (local $len i32)
    (local $w0 i64) (local $w1 i64) (local $width i32) (local $lo i32) (local $mid i32) (local $hi i32) (local $t i32)
    (local.set $recs (global.get $mTop))
    (local.set $src (i32.add (local.get $recs) (i32.shl (local.get $n) (i32.const 5))))
    (local.set $dst (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $out (i32.add (local.get $dst) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $i (i32.const 0))
    (loop $record
      (local.set $e (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 4))))
      (local.set $ks (i32.load (local.get $e)))
      (local.set $len (i32.sub (i32.load offset=4 (local.get $e)) (local.get $ks)))
      (local.set $w0 (call $headWord (local.get $ks) (local.get $len)))
      (local.set $w1 (select (call $headWord (i32.add (local.get $ks) (i32.const 8)) (i32.sub (local.get $len) (i32.const 8)))
                             (i64.const 0) (i32.gt_s (local.get $len) (i32.const 8))))
      (local.set $t (i32.add (local.get $recs) (i32.shl (local.get $i) (i32.const 5))))
      (i64.store (local.get $t) (call $bigEndian (local.get $w0)))
      (i64.store offset=8 (local.get $t) (call $bigEndian (local.get $w1)))
      (i32.store offset=16 (local.get $t) (local.get $e))
      ;; (the zeros $headWord puts past a short key's end are never taken for one)
      (i32.store offset=20 (local.get $t) (i64.ne (i64.or (call $backslashMask (local.get $w0)) (call $backslashMask (local.get $w1))) (i64.const 0)))
      (i32.store (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $record (i32.lt_u (local.get $i) (local.get $n))))
    (local.set $lo (i32.const 0))
    (loop $run
      (if (i32.eqz (call $insertRecords (local.get $src) (local.get $lo)
                     (select (i32.add (local.get $lo) (i32.const 8)) (local.get $n) (i32.lt_u (i32.add (local.get $lo) (i32.const 8)) (local.get $n)))))
        (then (return (i32.const 0))))
      (local.set $lo (i32.add (local.get $lo) (i32.const 8)))
      (br_if $run (i32.lt_u (local.get $lo) (local.get $n))))
    (local.set $width (i32.const 8))
    (block $merged
      (loop $pass
        (br_if $merged (i32.ge_u (local.get $width) (local.get $n)))
        (local.set $lo (i32.const 0))
        (loop $pair
          (local.set $mid (select (i32.add (local.get $lo) (local.get $width)) (local.get $n)
                                  (i32.lt_u (i32.add (local.get $lo) (local.get $width)) (local.get $n))))
          (local.set $hi (select (i32.add (local.get $mid) (local.get $width)) (local.get $n)
                                 (i32.lt_u (i32.add (local.get $mid) (local.get $width)) (local.get $n))))
          (if (i32.eqz (call $mergeRecords (local.get $src) (local.get $dst) (local.get $lo) (local.get $mid) (local.get $hi)))
            (then (return (i32.const 0))))
          (local.set $lo (local.get $hi))
          (br_if $pair (i32.lt_u (local.get $lo) (local.get $n))))
        (local.set $t (local.get $src))
        (local.set $src (local.get $dst))
        (local.set $dst (local.get $t))
        (local.set $width (i32.shl (local.get $width) (i32.const 1)))
        (br $pass)))
    ;; the entries in order, then back where they were
    (local.set $i (i32.const 0))
    (loop $entry
      (v128.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 4)))
        (v128.load (i32.load offset=16 (i32.load (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 2)))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $entry (i32.lt_u (local.get $i) (local.get $n))))
    (memory.copy (local.get $base) (local.get $out) (i32.shl (local.get $n) (i32.const 4)))
    (i32.const 1))

  ;; The eight bytes at p, those from the len-th on (when len < 8) zero, as one little-endian word.
  (func $headWord (param $p i32) (param $len i32) (result i64)
    (local $w i64)
    (local.set $w (i64.load (local.get $p)))
    (if (result i64) (i32.lt_u (local.get $len) (i32.const 8))
      (then (i64.and (local.get $w) (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.shl (local.get $len) (i32.const 3)))) (i64.const 1))))
      (else (local.get $w))))

  ;; A little-endian word's bytes as a big-endian number (the first byte most significant).
  (func $bigEndian (param $w i64) (result i64)
    (local.set $w (i64.or (i64.shl (i64.and (local.get $w) (i64.const 0x00ff00ff00ff00ff)) (i64.const 8))
                          (i64.and (i64.shr_u (local.get $w) (i64.const 8)) (i64.const 0x00ff00ff00ff00ff))))
    (local.set $w (i64.or (i64.shl (i64.and (local.get $w) (i64.const 0x0000ffff0000ffff)) (i64.const 16))
                          (i64.and (i64.shr_u (local.get $w) (i64.const 16)) (i64.const 0x0000ffff0000ffff))))
    (i64.rotl (local.get $w) (i64.const 32)))

  ;; Whether record a comes before record c ($mergeSort's order): 1 yes, 0
  ;; no, -1 when their keys are equal.
  (func $recordBefore (param $a i32) (param $c i32) (result i32)
    (local $ea i32) (local $ec i32) (local $r i32)
    (if (i32.eqz (i32.or (i32.load offset=20 (local.get $a)) (i32.load offset=20 (local.get $c))))
      (then
        (if (i64.ne (i64.load (local.get $a)) (i64.load (local.get $c)))
          (then (return (i64.lt_u (i64.load (local.get $a)) (i64.load (local.get $c))))))
        (if (i64.ne (i64.load offset=8 (local.get $a)) (i64.load offset=8 (local.get $c)))
          (then (return (i64.lt_u (i64.load offset=8 (local.get $a)) (i64.load offset=8 (local.get $c))))))))
    (local.set $ea (i32.load offset=16 (local.get $a)))
    (local.set $ec (i32.load offset=16 (local.get $c)))
    (local.set $r (call $cmp (i32.load (local.get $ea)) (i32.load offset=4 (local.get $ea))
                             (i32.load (local.get $ec)) (i32.load offset=4 (local.get $ec))))
    (if (i32.eqz (local.get $r)) (then (return (i32.const -1))))
    (i32.lt_s (local.get $r) (i32.const 0)))

  ;; Insertion sort of the record addresses [lo, hi) of the list at l; 0 when two keys are equal.
  (func $insertRecords (param $l i32) (param $lo i32) (param $hi i32) (result i32)
    (local $i i32) (local $at i32) (local $first i32) (local $r i32) (local $c i32)
    (local.set $first (i32.add (local.get $l) (i32.shl (local.get $lo) (i32.const 2))))
    (local.set $i (i32.add (local.get $lo) (i32.const 1)))
    (block $sorted
      (loop $next
        (br_if $sorted (i32.ge_u (local.get $i) (local.get $hi)))
        (local.set $at (i32.add (local.get $l) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $r (i32.load (local.get $at)))
        (block $placed
          (loop $down
            (br_if $placed (i32.le_u (local.get $at) (local.get $first)))
            (local.set $c (call $recordBefore (i32.load (i32.sub (local.get $at) (i32.const 4))) (local.get $r)))
            (if (i32.lt_s (local.get $c) (i32.const 0)) (then (return (i32.const 0))))
            (br_if $placed (local.get $c))
            (i32.store (local.get $at) (i32.load (i32.sub (local.get $at) (i32.const 4))))
            (local.set $at (i32.sub (local.get $at) (i32.const 4)))
            (br $down)))
        (i32.store (local.get $at) (local.get $r))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  ;; Merge the sorted record addresses [lo, mid) and [mid, hi) of the list
  ;; src into dst at the same place; 0 when two keys are equal.
  (func $mergeRecords (param $src i32) (param $dst i32) (param $lo i32) (param $mid i32) (param $hi i32) (result i32)
    (local $a i32) (local $aEnd i32) (local $c i32) (local $cEnd i32) (local $o i32) (local $before i32) (local $ra i32) (local $rc i32)
    (local.set $a (i32.add (local.get $src) (i32.shl (local.get $lo) (i32.const 2))))
    (local.set $aEnd (i32.add (local.get $src) (i32.shl (local.get $mid) (i32.const 2))))
    (local.set $c (local.get $aEnd))
    (local.set $cEnd (i32.add (local.get $src) (i32.shl (local.get $hi) (i32.const 2))))
    (local.set $o (i32.add (local.get $dst) (i32.shl (local.get $lo) (i32.const 2))))
    (block $drained
      (loop $take
        (br_if $drained (i32.or (i32.ge_u (local.get $a) (local.get $aEnd)) (i32.ge_u (local.get $c) (local.get $cEnd))))
        (local.set $ra (i32.load (local.get $a)))
        (local.set $rc (i32.load (local.get $c)))
        (local.set $before (call $recordBefore (local.get $ra) (local.get $rc)))
        (if (i32.lt_s (local.get $before) (i32.const 0)) (then (return (i32.const 0))))
        (i32.store (local.get $o) (select (local.get $ra) (local.get $rc) (local.get $before)))
        (local.set $o (i32.add (local.get $o) (i32.const 4)))
        (local.set $a (i32.add (local.get $a) (i32.shl (local.get $before) (i32.const 2))))
        (local.set $c (i32.add (local.get $c) (i32.shl (i32.xor (local.get $before) (i32.const 1)) (i32.const 2))))
        (br $take)))
    ;; what is left of either run, as it stands
    (if (i32.lt_u (local.get $a) (local.get $aEnd))
      (then (memory.copy (local.get $o) (local.get $a) (i32.sub (local.get $aEnd) (local.get $a))))
      (else (memory.copy (local.get $o) (local.get $c) (i32.sub (local.get $cEnd) (local.get $c)))))
    (i32.const 1))

  ;; One insertion pass over the entries g apart: 0 when two keys are equal.
  (func $gapPass (param $base i32) (param $n i32) (param $g i32) (result i32)
    (local $i i32) (local $j i32) (local $ei i32) (local $ej i32) (local $a0 i32) (local $a1 i32)
    (local $k i64) (local $v i64) (local $c i32) (local $stride i32)
    (local.set $stride (i32.shl (local.get $g) (i32.const 4)))
    (local.set $i (local.get $g))
    (block $sorted
      (loop $next
        (br_if $sorted (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $ei (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $a0 (i32.load (local.get $ei)))
        (local.set $a1 (i32.load offset=4 (local.get $ei)))
        (local.set $k (i64.load (local.get $ei)))
        (local.set $v (i64.load offset=8 (local.get $ei)))
        (local.set $j (i32.sub (local.get $i) (local.get $g)))
        (block $placed
          (loop $down
            (local.set $ej (i32.add (local.get $base) (i32.shl (local.get $j) (i32.const 4))))
            (local.set $c (call $cmp (i32.load (local.get $ej)) (i32.load offset=4 (local.get $ej)) (local.get $a0) (local.get $a1)))
            (if (i32.eqz (local.get $c)) (then (return (i32.const 0))))
            (br_if $placed (i32.lt_s (local.get $c) (i32.const 0)))
            (i64.store (i32.add (local.get $ej) (local.get $stride)) (i64.load (local.get $ej)))
            (i64.store offset=8 (i32.add (local.get $ej) (local.get $stride)) (i64.load offset=8 (local.get $ej)))
            (local.set $j (i32.sub (local.get $j) (local.get $g)))
            (br_if $down (i32.ge_s (local.get $j) (i32.const 0)))))
        (local.set $ej (i32.add (local.get $base) (i32.shl (i32.add (local.get $j) (local.get $g)) (i32.const 4))))
        (i64.store (local.get $ej) (local.get $k))
        (i64.store offset=8 (local.get $ej) (local.get $v))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  ;; Write {"k":v,...} for the n member entries at base, at o: the end or -1.
  (func $assemble (param $base i32) (param $n i32) (param $o i32) (param $limit i32) (result i32)
    (local $i i32) (local $m i32) (local $k0 i32) (local $kn i32) (local $v0 i32) (local $vn i32)
    (if (i32.gt_u (i32.add (local.get $o) (i32.const 1)) (local.get $limit)) (then (return (i32.const -1))))
    (i32.store8 (local.get $o) (i32.const 0x7b))
    (local.set $o (i32.add (local.get $o) (i32.const 1)))
    (block $done
      (loop $member
        (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
        (local.set $m (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 4))))
        ;; the key with its quotes
        (local.set $k0 (i32.sub (i32.load (local.get $m)) (i32.const 1)))
        (local.set $kn (i32.sub (i32.add (i32.load offset=4 (local.get $m)) (i32.const 1)) (local.get $k0)))
        (local.set $v0 (i32.load offset=8 (local.get $m)))
        (local.set $vn (i32.sub (i32.load offset=12 (local.get $m)) (local.get $v0)))
        (if (i32.gt_u (i32.add (i32.add (local.get $o) (i32.const 2)) (i32.add (local.get $kn) (local.get $vn))) (local.get $limit))
          (then (return (i32.const -1))))
        (if (local.get $i)
          (then
            (i32.store8 (local.get $o) (i32.const 0x2c))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))))
        (call $copy (local.get $o) (local.get $k0) (local.get $kn))
        (local.set $o (i32.add (local.get $o) (local.get $kn)))
        (i32.store8 (local.get $o) (i32.const 0x3a))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (call $copy (local.get $o) (local.get $v0) (local.get $vn))
        (local.set $o (i32.add (local.get $o) (local.get $vn)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $member)))
    (if (i32.gt_u (i32.add (local.get $o) (i32.const 1)) (local.get $limit)) (then (return (i32.const -1))))
    (i32.store8 (local.get $o) (i32.const 0x7d))
    (i32.add (local.get $o) (i32.const 1)))

  ;; Append [s, e) to scratch; 0 when it does not fit.
  (func $toScratch (param $s i32) (param $e i32) (result i32)
    (local $n i32)
    (local.set $n (i32.sub (local.get $e) (local.get $s)))
    (if (i32.gt_u (i32.add (global.get $sp) (local.get $n)) (global.get $scratchEnd)) (then (return (i32.const 0))))
    (call $copy (global.get $sp) (local.get $s) (local.get $n))
    (global.set $sp (i32.add (global.get $sp) (local.get $n)))
    (i32.const 1))

  ;; One byte to scratch; 0 when it does not fit.
  (func $byteToScratch (param $c i32) (result i32)
    (if (i32.ge_u (global.get $sp) (global.get $scratchEnd)) (then (return (i32.const 0))))
    (i32.store8 (global.get $sp) (local.get $c))
    (global.set $sp (i32.add (global.get $sp) (i32.const 1)))
    (i32.const 1))

  ;; ---------------------------------------------------------------- rows

  ;; The key [ks, ks+n) is an envelope key (or hash_profile): not a payload member.
  (func $isEnvelopeKey (param $ks i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $n) (i32.const 2)) (then (return (call $eq (local.get $ks) (i32.const 1472) (i32.const 2)))))
    (if (i32.eq (local.get $n) (i32.const 5))
      (then (return (i32.or (call $eq (local.get $ks) (i32.const 1496) (i32.const 5))
                            (call $eq (local.get $ks) (i32.const 1504) (i32.const 5))))))
    (if (i32.eq (local.get $n) (i32.const 9))
      (then (return (i32.or (call $eq (local.get $ks) (i32.const 1480) (i32.const 9))
                            (call $eq (local.get $ks) (i32.const 1512) (i32.const 9))))))
    (if (i32.eq (local.get $n) (i32.const 10)) (then (return (call $eq (local.get $ks) (i32.const 1544) (i32.const 10)))))
    (if (i32.eq (local.get $n) (i32.const 12))
      (then (return (i32.or (call $eq (local.get $ks) (i32.const 1528) (i32.const 12))
                            (call $eq (local.get $ks) (i32.const 1560) (i32.const 12))))))
    (i32.const 0))

  ;; A tentative 64-byte hash at p: its closing quote must be at p+64, before the data's end.
  (func $hash64 (param $p i32) (result i32)
    (i32.and (i32.lt_u (i32.add (local.get $p) (i32.const 64)) (global.get $bound))
             (i32.eq (i32.load8_u offset=64 (local.get $p)) (i32.const 0x22))))

  ;; Scan the row at p: the envelope as Python's writer spells it, then the
  ;; payload members; build the payload pre-image
  ;;   json.dumps({payload minus envelope, "event": type}, sort_keys=True, separators=(",", ":"))
  ;; at $out ($outLen). Returns the offset of the row's line end (LF or CR),
  ;; $next the next line's start; or -1.
  ;; The three hashes are located tentatively (64 bytes and a quote); $verify
  ;; compares each with a hex digest, which validates every byte (or, in the
  ;; modes that compute no digest, checks that each is hex).
  (func $row (param $p i32) (result i32)
    (local $q i32) (local $ks i32) (local $ke i32) (local $d i32) (local $m i32) (local $o i32) (local $n i32)
    (block $no
      ;; {"ts": N, "elapsed_s": N, "index": N, "event": "T", "prev_hash": "H", "payload_hash": "H", "event_hash": "H"
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1280) (i32.const 7))))
      (global.set $tsS (i32.add (local.get $p) (i32.const 7)))
      (local.set $p (call $skipNumber (global.get $tsS)))
      (br_if $no (i32.lt_s (local.get $p) (i32.const 0)))
      (global.set $tsE (local.get $p))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1296) (i32.const 15))))
      (global.set $elS (i32.add (local.get $p) (i32.const 15)))
      (local.set $p (call $skipNumber (global.get $elS)))
      (br_if $no (i32.lt_s (local.get $p) (i32.const 0)))
      (global.set $elE (local.get $p))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1312) (i32.const 11))))
      (global.set $ixS (i32.add (local.get $p) (i32.const 11)))
      (local.set $p (call $skipNumber (global.get $ixS)))
      (br_if $no (i32.lt_s (local.get $p) (i32.const 0)))
      (global.set $ixE (local.get $p))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1328) (i32.const 12))))
      (local.set $p (i32.add (local.get $p) (i32.const 12)))
      (local.set $q (call $scanString (local.get $p)))
      (br_if $no (i32.lt_s (local.get $q) (i32.const 0)))
      (global.set $typeS (i32.sub (local.get $p) (i32.const 1)))
      (global.set $typeE (i32.add (local.get $q) (i32.const 1)))
      (local.set $p (local.get $q))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1344) (i32.const 17))))
      (local.set $p (i32.add (local.get $p) (i32.const 17)))
      (br_if $no (i32.eqz (call $hash64 (local.get $p))))
      (global.set $prevS (local.get $p))
      (local.set $p (i32.add (local.get $p) (i32.const 64)))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1376) (i32.const 20))))
      (local.set $p (i32.add (local.get $p) (i32.const 20)))
      (br_if $no (i32.eqz (call $hash64 (local.get $p))))
      (global.set $phS (local.get $p))
      (local.set $p (i32.add (local.get $p) (i32.const 64)))
      (br_if $no (i32.eqz (call $eq (local.get $p) (i32.const 1408) (i32.const 18))))
      (local.set $p (i32.add (local.get $p) (i32.const 18)))
      (br_if $no (i32.eqz (call $hash64 (local.get $p))))
      (global.set $hashS (local.get $p))
      (local.set $p (i32.add (local.get $p) (i32.const 65)))
      ;; the payload members, by the codec's scanner (depth 1: the row's object)
      (global.set $sp (global.get $scratch))
      (global.set $mTop (global.get $mt))
      (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x2c))
        (then
          (drop (call $gap (i32.add (local.get $p) (i32.const 1)) (i32.const 1)))
          (local.set $p (call $members (global.get $at) (i32.const 0) (i32.const 1) (i32.const 0)))
          (br_if $no (i32.lt_s (local.get $p) (i32.const 0))))
        (else
          (br_if $no (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x7d)))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))))
      ;; the row must close right before its line end: a line feed (not the
      ;; sentinel), or a carriage return whose next byte is data (a CRLF may
      ;; straddle two reads; the caller takes such a row)
      (br_if $no (i32.ge_u (local.get $p) (global.get $bound)))
      (local.set $d (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $d) (i32.const 10))
        (then (global.set $next (i32.add (local.get $p) (i32.const 1))))
        (else
          (br_if $no (i32.ne (local.get $d) (i32.const 13)))
          (br_if $no (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (global.get $bound)))
          (global.set $next (i32.add (local.get $p)
            (select (i32.const 2) (i32.const 1) (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 10)))))))
      ;; "event" joins the members with the type as its value
      (local.set $m (global.get $mTop))
      (br_if $no (i32.ge_u (local.get $m) (global.get $mtEnd)))
      (global.set $mTop (i32.add (local.get $m) (i32.const 16)))
      (i32.store (local.get $m) (i32.sub (global.get $typeS) (i32.const 8)))
      (i32.store offset=4 (local.get $m) (i32.sub (global.get $typeS) (i32.const 3)))
      (i32.store offset=8 (local.get $m) (global.get $typeS))
      (i32.store offset=12 (local.get $m) (global.get $typeE))
      (if (global.get $fprint) (then (return (call $fingerprintRow (local.get $p)))))
      (local.set $n (i32.shr_u (i32.sub (global.get $mTop) (global.get $mt)) (i32.const 4)))
      (br_if $no (i32.eqz (call $sortMembers (global.get $mt) (local.get $n))))
      (local.set $o (call $assemble (global.get $mt) (local.get $n) (global.get $out) (global.get $outEnd)))
      (br_if $no (i32.lt_s (local.get $o) (i32.const 0)))
      (global.set $outLen (i32.sub (local.get $o) (global.get $out)))
      (return (local.get $p)))
    (i32.const -1))

  ;; One more member entry: key [ks, ke), value [vs, ve); 0 when the table is full.
  (func $pushMember (param $ks i32) (param $ke i32) (param $vs i32) (param $ve i32) (result i32)
    (local $m i32)
    (local.set $m (global.get $mTop))
    (if (i32.ge_u (local.get $m) (global.get $mtEnd)) (then (return (i32.const 0))))
    (global.set $mTop (i32.add (local.get $m) (i32.const 16)))
    (i32.store (local.get $m) (local.get $ks))
    (i32.store offset=4 (local.get $m) (local.get $ke))
    (i32.store offset=8 (local.get $m) (local.get $vs))
    (i32.store offset=12 (local.get $m) (local.get $ve))
    (i32.const 1))

  ;; $row's end in FPRINT mode, for the row scanned up to its line end p
  ;; (the payload members and "event" in the member table): the replay
  ;; fingerprint's text of the row, every member but ts and elapsed_s sorted
  ;; and compact, and a line feed, appended at $fpOut; the row's facts at
  ;; $info. The envelope's index must be canonical and its hashes strings in
  ;; the writer's spelling (then each is its own canonical text); p, or -1.
  (func $fingerprintRow (param $p i32) (result i32)
    (local $n i32) (local $o i32) (local $i i32)
    (if (i32.ne (call $atom (global.get $ixS)) (global.get $ixE)) (then (return (i32.const -1))))
    (if (i32.ne (call $scanString (global.get $prevS)) (i32.add (global.get $prevS) (i32.const 64))) (then (return (i32.const -1))))
    (if (i32.ne (call $scanString (global.get $phS)) (i32.add (global.get $phS) (i32.const 64))) (then (return (i32.const -1))))
    (if (i32.ne (call $scanString (global.get $hashS)) (i32.add (global.get $hashS) (i32.const 64))) (then (return (i32.const -1))))
    ;; the keys' spans in the envelope's fixed spelling, the hashes with their quotes
    (if (i32.eqz (call $pushMember (i32.sub (global.get $ixS) (i32.const 8)) (i32.sub (global.get $ixS) (i32.const 3))
                                   (global.get $ixS) (global.get $ixE))) (then (return (i32.const -1))))
    (if (i32.eqz (call $pushMember (i32.sub (global.get $prevS) (i32.const 13)) (i32.sub (global.get $prevS) (i32.const 4))
                                   (i32.sub (global.get $prevS) (i32.const 1)) (i32.add (global.get $prevS) (i32.const 65))))
      (then (return (i32.const -1))))
    (if (i32.eqz (call $pushMember (i32.sub (global.get $phS) (i32.const 16)) (i32.sub (global.get $phS) (i32.const 4))
                                   (i32.sub (global.get $phS) (i32.const 1)) (i32.add (global.get $phS) (i32.const 65))))
      (then (return (i32.const -1))))
    (if (i32.eqz (call $pushMember (i32.sub (global.get $hashS) (i32.const 14)) (i32.sub (global.get $hashS) (i32.const 4))
                                   (i32.sub (global.get $hashS) (i32.const 1)) (i32.add (global.get $hashS) (i32.const 65))))
      (then (return (i32.const -1))))
    (local.set $n (i32.shr_u (i32.sub (global.get $mTop) (global.get $mt)) (i32.const 4)))
    (if (i32.eqz (call $sortMembers (global.get $mt) (local.get $n))) (then (return (i32.const -1))))
    (local.set $o (call $assemble (global.get $mt) (local.get $n) (global.get $fpOut) (i32.sub (global.get $fpEnd) (i32.const 1))))
    (if (i32.lt_s (local.get $o) (i32.const 0)) (then (return (i32.const -1))))
    (i32.store8 (local.get $o) (global.get $textSep))
    (global.set $fpOut (i32.add (local.get $o) (i32.const 1)))
    (local.set $i (global.get $info))
    (i32.store (local.get $i) (global.get $tsS))
    (i32.store offset=4 (local.get $i) (global.get $tsE))
    (i32.store offset=8 (local.get $i) (global.get $elS))
    (i32.store offset=12 (local.get $i) (global.get $elE))
    (i32.store offset=16 (local.get $i) (global.get $mTop))
    (i32.store offset=20 (local.get $i) (global.get $typeS))
    (i32.store offset=24 (local.get $i) (global.get $typeE))
    (i32.store offset=28 (local.get $i) (global.get $fpOut))
    (local.get $p))

;; ---------------------------------------------------------------- the provider-state gate

  ;; GATE, for the row at p just taken (its line end at e; its members in
  ;; the member table): when its event is provider_state_mutation, its
  ;; content address, SHA-256 of
  ;;   json.dumps({"after_digest", "before_digest", "kind", "step_index"},
  ;;              sort_keys=True, separators=(",", ":"))
  ;; (str() of after_digest, before_digest and mutation_kind, int() of
  ;; step_index, "None" and 0 when absent), is checked here when each of
  ;; those is absent or a string (step_index: an integer), the stored
  ;; content_address absent or a string, and flagged absent, false or null.
  ;; A row the kernel takes spells every string as Python's writer does,
  ;; which is the pre-image's own spelling, and its members once each (a
  ;; duplicate declines the row). A row whose address checks is counted;
  ;; one whose address does not is an entry with code 1; any other is an
  ;; entry with code 2, left to the host (its start and line end). An entry:
  ;; the row's place among the call's rows, the code, p, e.
  (func $gate (param $p i32) (param $e i32)
    (local $after i32) (local $before i32) (local $kind i32) (local $step i32) (local $addr i32) (local $flag i32)
    (local $o i32) (local $code i32) (local $c i32) (local $v i32)
    (if (i32.ne (i32.sub (global.get $typeE) (global.get $typeS)) (i32.const 25)) (then (return)))
    (if (i32.eqz (call $eq (global.get $typeS) (i32.const 1880) (i32.const 25))) (then (return)))
    (local.set $code (i32.const 2))
    (block $entry
      (local.set $flag (call $member (i32.const 1872) (i32.const 7)))
      (if (local.get $flag)
        (then
          (local.set $c (i32.load8_u (i32.load offset=8 (local.get $flag))))
          ;; false or null (any other value, even a falsy one, is the host's)
          (br_if $entry (i32.and (i32.ne (local.get $c) (i32.const 0x66)) (i32.ne (local.get $c) (i32.const 0x6e))))))
      (local.set $after (call $member (i32.const 1792) (i32.const 12)))
      (br_if $entry (i32.eqz (call $stringOrAbsent (local.get $after))))
      (local.set $before (call $member (i32.const 1808) (i32.const 13)))
      (br_if $entry (i32.eqz (call $stringOrAbsent (local.get $before))))
      (local.set $kind (call $member (i32.const 1824) (i32.const 13)))
      (br_if $entry (i32.eqz (call $stringOrAbsent (local.get $kind))))
      (local.set $addr (call $member (i32.const 1856) (i32.const 15)))
      (br_if $entry (i32.eqz (call $stringOrAbsent (local.get $addr))))
      (local.set $step (call $member (i32.const 1840) (i32.const 10)))
      (if (local.get $step)
        (then
          ;; an integer as the writer spells it: a minus sign perhaps, then digits only
          (local.set $v (i32.load offset=8 (local.get $step)))
          (if (i32.eq (i32.load8_u (local.get $v)) (i32.const 0x2d)) (then (local.set $v (i32.add (local.get $v) (i32.const 1)))))
          (br_if $entry (i32.ge_u (local.get $v) (i32.load offset=12 (local.get $step))))
          (loop $digit
            (br_if $entry (i32.eqz (call $isDigit (local.get $v))))
            (local.set $v (i32.add (local.get $v) (i32.const 1)))
            (br_if $digit (i32.lt_u (local.get $v) (i32.load offset=12 (local.get $step)))))))
      ;; the pre-image, where the payload's was (hashed by now)
      (local.set $o (call $piece (global.get $out) (i32.const 1912) (i32.const 16)))
      (local.set $o (call $valueOr (local.get $o) (local.get $after) (i32.const 1976) (i32.const 6)))
      (local.set $o (call $piece (local.get $o) (i32.const 1928) (i32.const 17)))
      (local.set $o (call $valueOr (local.get $o) (local.get $before) (i32.const 1976) (i32.const 6)))
      (local.set $o (call $piece (local.get $o) (i32.const 1948) (i32.const 8)))
      (local.set $o (call $valueOr (local.get $o) (local.get $kind) (i32.const 1976) (i32.const 6)))
      (local.set $o (call $piece (local.get $o) (i32.const 1960) (i32.const 14)))
      (local.set $o (call $valueOr (local.get $o) (local.get $step) (i32.const 1984) (i32.const 1)))
      (local.set $o (call $piece (local.get $o) (i32.const 1985) (i32.const 1)))
      (br_if $entry (i32.lt_s (local.get $o) (i32.const 0)))
      (call $hashPayload (i32.sub (local.get $o) (global.get $out)))
      (call $hex (i32.const 1728) (i32.const 1600))
      (local.set $code (i32.const 1))
      (global.set $gateRows (i32.add (global.get $gateRows) (i32.const 1)))
      ;; the stored address is the digest's hex: 64 characters between quotes
      (br_if $entry (i32.eqz (local.get $addr)))
      (local.set $v (i32.load offset=8 (local.get $addr)))
      (br_if $entry (i32.ne (i32.sub (i32.load offset=12 (local.get $addr)) (local.get $v)) (i32.const 66)))
      (br_if $entry (i32.eqz (call $eq (i32.add (local.get $v) (i32.const 1)) (i32.const 1728) (i32.const 64))))
      (return))
    (local.set $o (i32.add (global.get $gateAt) (i32.shl (global.get $gateN) (i32.const 4))))
    (i32.store (local.get $o) (global.get $rows))
    (i32.store offset=4 (local.get $o) (local.get $code))
    (i32.store offset=8 (local.get $o) (local.get $p))
    (i32.store offset=12 (local.get $o) (local.get $e))
    (global.set $gateN (i32.add (global.get $gateN) (i32.const 1))))

  ;; The member table's entry of the member named [k, k+n), or 0.
  (func $member (param $k i32) (param $n i32) (result i32)
    (local $m i32)
    (local.set $m (global.get $mt))
    (block $none
      (loop $each
        (br_if $none (i32.ge_u (local.get $m) (global.get $mTop)))
        (if (i32.eq (i32.sub (i32.load offset=4 (local.get $m)) (i32.load (local.get $m))) (local.get $n))
          (then (if (call $eq (i32.load (local.get $m)) (local.get $k) (local.get $n)) (then (return (local.get $m))))))
        (local.set $m (i32.add (local.get $m) (i32.const 16)))
        (br $each)))
    (i32.const 0))

  ;; The member (entry m) is absent or its value a string.
  (func $stringOrAbsent (param $m i32) (result i32)
    (if (result i32) (local.get $m)
      (then (i32.eq (i32.load8_u (i32.load offset=8 (local.get $m))) (i32.const 0x22)))
      (else (i32.const 1))))

  ;; n bytes from s appended at o (before $outEnd): the next byte, or -1 (o -1 stays).
  (func $piece (param $o i32) (param $s i32) (param $n i32) (result i32)
    (if (i32.lt_s (local.get $o) (i32.const 0)) (then (return (i32.const -1))))
    (if (i32.gt_u (i32.add (local.get $o) (local.get $n)) (global.get $outEnd)) (then (return (i32.const -1))))
    (call $copy (local.get $o) (local.get $s) (local.get $n))
    (i32.add (local.get $o) (local.get $n)))

  ;; The value of member m as written, or (absent) the n bytes at s: appended at o as $piece does.
  (func $valueOr (param $o i32) (param $m i32) (param $s i32) (param $n i32) (result i32)
    (if (result i32) (local.get $m)
      (then (call $piece (local.get $o) (i32.load offset=8 (local.get $m)) (i32.sub (i32.load offset=12 (local.get $m)) (i32.load offset=8 (local.get $m)))))
      (else (call $piece (local.get $o) (local.get $s) (local.get $n)))))

  ;; The 64 bytes at p are lowercase hex digits: a digit less 0x30, or a
  ;; letter less 0x61, is below 10 or 6 unsigned; shifted by 0x80 the
  ;; unsigned compares become signed ones (x86 has only those).
  (func $isHex64 (param $p i32) (result i32)
    (i32.and
      (i32.and (call $isHex16 (v128.load (local.get $p))) (call $isHex16 (v128.load offset=16 (local.get $p))))
      (i32.and (call $isHex16 (v128.load offset=32 (local.get $p))) (call $isHex16 (v128.load offset=48 (local.get $p))))))

  (func $isHex16 (param $x v128) (result i32)
    (i8x16.all_true
      (v128.or
        (i8x16.lt_s (i8x16.add (local.get $x) (v128.const i8x16 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50 0x50))
                    (v128.const i8x16 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118 -118))
        (i8x16.lt_s (i8x16.add (local.get $x) (v128.const i8x16 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f 0x1f))
                    (v128.const i8x16 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122 -122)))))

  ;; The stored index lexeme is a plain position (0, or 1 to 15 digits
  ;; without a leading zero): then it becomes the row's index digits.
  (func $indexFromLexeme (result i32)
    (local $n i32) (local $i i32)
    (local.set $n (i32.sub (global.get $ixE) (global.get $ixS)))
    (if (i32.or (i32.lt_s (local.get $n) (i32.const 1)) (i32.gt_s (local.get $n) (i32.const 15))) (then (return (i32.const 0))))
    (if (i32.and (i32.gt_s (local.get $n) (i32.const 1)) (i32.eq (i32.load8_u (global.get $ixS)) (i32.const 0x30)))
      (then (return (i32.const 0))))
    (loop $digit
      (if (i32.eqz (call $isDigit (i32.add (global.get $ixS) (local.get $i)))) (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (local.get $n))))
    (call $copy (i32.sub (i32.const 2560) (local.get $n)) (global.get $ixS) (local.get $n))
    (global.set $idxLen (local.get $n))
    (i32.const 1))

  ;; The decimal digits of index, right-aligned to end at 2560.
  (func $setIndex (param $index i64)
    (local $o i32)
    (local.set $o (i32.const 2560))
    (loop $digit
      (local.set $o (i32.sub (local.get $o) (i32.const 1)))
      (i32.store8 (local.get $o) (i32.add (i32.const 0x30) (i32.wrap_i64 (i64.rem_u (local.get $index) (i64.const 10)))))
      (local.set $index (i64.div_u (local.get $index) (i64.const 10)))
      (br_if $digit (i64.ne (local.get $index) (i64.const 0))))
    (global.set $idxLen (i32.sub (i32.const 2560) (local.get $o))))

  ;; index + 1, in place.
  (func $nextIndex
    (local $i i32) (local $c i32)
    (local.set $i (i32.const 2559))
    (loop $carry
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.ne (local.get $c) (i32.const 0x39))
        (then (i32.store8 (local.get $i) (i32.add (local.get $c) (i32.const 1))) (return)))
      (i32.store8 (local.get $i) (i32.const 0x30))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $carry (i32.ge_u (local.get $i) (i32.sub (i32.const 2560) (global.get $idxLen)))))
    ;; all nines: one more digit
    (i32.store8 (local.get $i) (i32.const 0x31))
    (global.set $idxLen (i32.add (global.get $idxLen) (i32.const 1))))

  ;; Verify consecutive rows from the line start p, the first at row index
  ;; (hi:lo), linked to the 64-hex previous hash at `last`; bound is the
  ;; data's sentinel. Stops at the first row it does not verify, or at
  ;; bound, and returns that row's offset; rows() counts the verified rows,
  ;; lastRow() is the last one's start, and its event hash is copied to
  ;; `last` (the range's previous-hash slot). Modes (flags):
  ;;   FIRST     a range's first row, alone: it links to its own stored
  ;;             prev_hash (the stitcher checks that link), which must be
  ;;             64 lowercase hex; field() then locates its pieces
  ;;   GUESS     with FIRST: a plain stored index is the row's position
  ;;   LINKS     links-only: no hashing; the stored event_hash must be 64
  ;;             lowercase hex
  ;;   CLASSIFY  past a failure: count the rows in Python's spelling, check nothing
  ;;   LEAVES    also write each hashed row's 32-byte event digest, in order,
  ;;             to the leaves area (a Merkle tree is built from them)
  ;;   FPRINT    no links, no hashing: append each row's replay fingerprint
  ;;             text (see $fingerprintRow; the areas: fingerprintTo)
  ;;   TEXT      with the hashing: append each verified row's text as FPRINT
  ;;             does (its members but ts and elapsed_s, sorted, compact: what
  ;;             a run receipt embeds of it), the row not taken when its
  ;;             index is not canonical or its event an empty string
  ;;   EACH      with TEXT: call the host's rowTaken after each row taken, while
  ;;             its member table and facts describe it (a caller that reads
  ;;             each row's fields)
  ;;   GATE      check each provider_state_mutation row taken ($gate; its
  ;;             findings in the gateArea, gateRows and gateEntries tell them)
  (func (export "verify") (param $p i32) (param $bound i32) (param $lo i32) (param $hi i32) (param $last i32)
    (param $flags i32) (result i32)
    (local $slot i32) (local $e i32) (local $tLen i32) (local $o i32)
    (local.set $slot (local.get $last))
    (global.set $bound (local.get $bound))
    (global.set $rows (i32.const 0))
    (global.set $gateN (i32.const 0))
    (global.set $gateRows (i32.const 0))
    (global.set $usedGuess (i32.const 0))
    (global.set $fprint (i32.ne (i32.and (local.get $flags) (i32.const 32)) (i32.const 0)))
    (call $setIndex (i64.or (i64.shl (i64.extend_i32_u (local.get $hi)) (i64.const 32)) (i64.extend_i32_u (local.get $lo))))
    (block $stop
      (loop $next
        (br_if $stop (i32.ge_u (local.get $p) (local.get $bound)))
        (br_if $stop (i32.and (i32.ne (i32.and (local.get $flags) (i32.const 16)) (i32.const 0))
          (i32.gt_u (i32.add (global.get $leafOut) (i32.shl (i32.add (global.get $rows) (i32.const 1)) (i32.const 5))) (global.get $leafEnd))))
        (br_if $stop (i32.and (i32.ne (i32.and (local.get $flags) (i32.const 256)) (i32.const 0))
          (i32.gt_u (i32.add (global.get $gateAt) (i32.shl (i32.add (global.get $gateN) (i32.const 1)) (i32.const 4))) (global.get $gateEnd))))
        (local.set $e (call $row (local.get $p)))
        (br_if $stop (i32.lt_s (local.get $e) (i32.const 0)))
        ;; LINKS and CLASSIFY compare no hash with a digest, so nothing else
        ;; checks the tentative hashes' bytes: they must be hex themselves
        ;; (a quote or a non-ASCII byte inside one is a line the reader discards)
        (if (i32.and (local.get $flags) (i32.const 10))
          (then
            (br_if $stop (i32.eqz (call $isHex64 (global.get $prevS))))
            (br_if $stop (i32.eqz (call $isHex64 (global.get $phS))))
            (br_if $stop (i32.eqz (call $isHex64 (global.get $hashS))))))
        (block $verified
          (br_if $verified (i32.and (local.get $flags) (i32.const 40)))
          (if (i32.and (local.get $flags) (i32.const 1))
            (then
              (br_if $stop (i32.eqz (call $isHex64 (global.get $prevS))))
              (local.set $last (global.get $prevS))
              (if (i32.and (local.get $flags) (i32.const 4))
                (then (global.set $usedGuess (call $indexFromLexeme))))))
          ;; the link: the stored prev_hash is the previous row's event hash
          (br_if $stop (i32.eqz (call $eq (global.get $prevS) (local.get $last) (i32.const 64))))
          (if (i32.and (local.get $flags) (i32.const 2))
            (then
              ;; (its event_hash was checked to be hex above)
              (local.set $last (global.get $hashS))
              (br $verified)))
          ;; the payload hash; the stored one must be it (else the exact path decides)
          (call $hashPayload (global.get $outLen))
          (call $hex (i32.const 2577) (i32.const 1600))
          (br_if $stop (i32.eqz (call $eq (global.get $phS) (i32.const 2577) (i32.const 64))))
          ;; {"event_type":T,"index":I  right-aligned before the suffix, P = the stored prev
          (local.set $tLen (i32.sub (global.get $typeE) (global.get $typeS)))
          (br_if $stop (i32.gt_u (local.get $tLen) (i32.const 400)))
          (call $copy (i32.const 2656) (global.get $prevS) (i32.const 64))
          (local.set $o (i32.sub (i32.sub (i32.const 2560) (global.get $idxLen)) (i32.const 9)))
          (call $copy (local.get $o) (i32.const 1456) (i32.const 9))
          (local.set $o (i32.sub (local.get $o) (local.get $tLen)))
          (call $copy (local.get $o) (global.get $typeS) (local.get $tLen))
          (local.set $o (i32.sub (local.get $o) (i32.const 14)))
          (call $copy (local.get $o) (i32.const 1440) (i32.const 14))
          (call $hashEvent (i32.sub (i32.const 2722) (local.get $o)))
          (call $hex (i32.const 1664) (i32.const 1632))
          (br_if $stop (i32.eqz (call $eq (global.get $hashS) (i32.const 1664) (i32.const 64))))
          (if (i32.and (local.get $flags) (i32.const 16))
            (then (call $copy (i32.add (global.get $leafOut) (i32.shl (global.get $rows) (i32.const 5))) (i32.const 1632) (i32.const 32))))
          ;; before the row becomes the link: a row stopped at is the exact path's, linked from the one before
          (if (i32.and (local.get $flags) (i32.const 64))
            (then
              (br_if $stop (i32.le_u (i32.sub (global.get $typeE) (global.get $typeS)) (i32.const 2)))
              (br_if $stop (i32.lt_s (call $fingerprintRow (local.get $p)) (i32.const 0)))))
          (local.set $last (global.get $hashS)))
        ;; taken
        (global.set $lastRow (local.get $p))
        (if (i32.and (local.get $flags) (i32.const 256)) (then (call $gate (local.get $p) (local.get $e))))
        (global.set $rows (i32.add (global.get $rows) (i32.const 1)))
        (call $nextIndex)
        (if (i32.and (local.get $flags) (i32.const 128)) (then (call $rowTaken (local.get $p) (global.get $next))))
        (local.set $p (global.get $next))
        (br_if $stop (i32.and (local.get $flags) (i32.const 1)))
        (br $next)))
    (if (i32.and (i32.ne (global.get $rows) (i32.const 0)) (i32.ne (local.get $last) (local.get $slot)))
      (then (call $copy (local.get $slot) (local.get $last) (i32.const 64))))
    (local.get $p))

  ;; The byte tables and helpers both kernels share.
  (@include "../../codec/scan.wat")
  (@include "../../codec/bytes.wat")
  (@include "../../codec/float.wat")
)
