# Guest case: the shipped verbs specs (R1 R2 R3 R6) through `strata run`
# against rxe0, then the journal checked (tests/rxe/cases/specs_check.lua).
set -u
S=$STRATA_RXE_BUILD/strata
O=$STRATA_RXE_OUT
cd $STRATA_RXE_SRC
timeout 240 $S run specs/verbs --site tests/rxe/site-guest.yaml \
  -o $O/verbs.xlsx --json $O/verbs.json 2>$O/run.err
rc=$?
cat $O/run.err
echo "strata run exit $rc"
$S lua tests/rxe/cases/specs_check.lua $O/verbs.jsonl $rc $O/run.err
