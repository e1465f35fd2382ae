#!/bin/bash
# Temporary: run every test of every built case in its own process (20 s timeout).
B=${B:-/tmp/corpus_build}
T=$(ls $B/*.test | head -1)
$T --gtest_list_tests | awk '/^[^ ]/{s=$1} /^  /{print s $1}' > $B/tests.txt
echo "$(wc -l < $B/tests.txt) tests"
onet() {
  c=$1; t=$2
  out=$(timeout 20 $B/$c.test --gtest_filter=$t --gtest_color=no 2>&1); rc=$?
  if [ $rc = 124 ]; then v=TIMEOUT
  elif echo "$out" | grep -q '^\[  PASSED  \] 1 test'; then [ $rc = 0 ] && v=PASS || v="PASS-but-rc$rc"
  elif echo "$out" | grep -q '^\[  FAILED  \]'; then v=FAIL
  else v="NORESULT-rc$rc"; fi
  msg=$(echo "$out" | grep -m1 -E 'launch failed|failed while running|elements wrong|past the end|before the start|changed its inputs|device reported|call [0-9] of' | cut -c1-150)
  echo "$c|$t|$v|$(echo "$out" | wc -c)|$msg"
}
export -f onet; export B
for c in $(ls $B/*.test | xargs -n1 basename | sed 's/\.test$//'); do
  while read t; do echo "$c $t"; done < $B/tests.txt
done | xargs -P 12 -L1 bash -c 'onet $0 $1' > $B/results.txt
sort $B/results.txt > ${OUT:-/tmp}/results.txt
awk -F'|' '{n[$1]++; if($3=="PASS") p[$1]++} END{for(c in n) printf "%-40s %2d/%2d pass\n", c, p[c]+0, n[c]}' $B/results.txt | sort
