#!/bin/bash
# probe runner: each case x shape in its own process, 20 s timeout
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SHAPES="1x1x1 64x64x64 127x131x67 127x129x33 20000x3x17 1x1000x1 33x65x1 96x96x1 1024x1024x1024 1000x1000x1000"
one() { c=$1; sh=$2; mode=$3; IFS=x read M N K <<< "$sh"
  out=$(timeout ${TO:-20} ./bin/$c $M $N $K $mode 2>&1 | head -c 20000); rc=$?
  rc=${PIPESTATUS[0]}
  res=$(echo "$out" | grep -o 'RESULT.*' | head -1)
  [ -z "$res" ] && res="NO-RESULT rc=$rc"
  [ $rc = 124 ] && res="TIMEOUT"
  lines=$(echo "$out" | wc -l)
  echo "$c $sh $mode :: $res (rc=$rc, ${lines} lines)"
  [ "$mode" = bench ] && echo "$out" | grep -E 'call|canary|bad'
}
export -f one
for c in ${CASES:-$(ls bin)}; do for sh in $SHAPES; do echo "$c $sh once"; done; echo "$c 64x64x64 twice"; done | xargs -P 8 -L1 bash -c 'one $0 $1 $2' | sort
