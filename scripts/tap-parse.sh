# SPDX-License-Identifier: GPL-2.0
# TAP and console-log checks of the test runner; sourced by run-tests.sh and
# by selftest-runner.sh.  The caller sets passed, failed, skipped, summary.

# Anything here in the console log fails the run, even if every test passed.
splat_re='BUG:|WARNING:|Oops|KASAN|UBSAN|general protection fault|Kernel panic|kernel BUG|soft lockup|hung task|blocked for more than|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|refcount_t:|list_add corruption|list_del corruption|Bad page state|suspected memory leak|unreferenced object'

# parse_tap <dir> <label>: adds to the counters, prints one line per test.
parse_tap() {
	local dir=$1 label=$2 tap=$1/tap.log con=$1/console.log
	local ok nok todo skip plan rc end problems=()
	[[ -f $tap ]] || : > "$tap"
	ok=$(grep -Ec '^ok [0-9]+' "$tap" || true)
	skip=$(grep -Ec '^ok [0-9]+ .*# SKIP' "$tap" || true)
	nok=$(grep -E '^not ok [0-9]+' "$tap" | grep -Evc '# TODO' || true)
	todo=$(grep -Ec '^not ok [0-9]+ .*# TODO' "$tap" || true)
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$tap" | head -1)
	end=$(sed -n 's/^# toptier-guest: end .* rc=\([0-9]*\)$/\1/p' "$tap" | tail -1)
	ok=$((ok - skip))
	if [[ -z $end ]]; then
		problems+=("the guest never finished the test (timeout or crash)")
	elif [[ $end != 0 && $nok == 0 ]]; then
		problems+=("the test exited with status $end")
	fi
	if [[ -z $plan ]]; then
		problems+=("no TAP plan")
	elif ((ok + skip + nok + todo != plan)); then
		problems+=("$((ok + skip + nok + todo)) results for a plan of $plan")
	fi
	if grep -Eq "$splat_re" "$con" 2>/dev/null; then
		problems+=("kernel splat: $(grep -Em1 "$splat_re" "$con" | tr -d '\r' | cut -c1-120)")
	fi
	passed=$((passed + ok))
	skipped=$((skipped + skip))
	failed=$((failed + nok + ${#problems[@]}))
	local verdict=PASS
	((nok + ${#problems[@]} == 0)) || verdict=FAIL
	printf '%-4s %-40s %d ok, %d not ok, %d skipped\n' "$verdict" "$label" "$ok" "$nok" "$skip" | tee -a "$summary"
	grep -E '^not ok' "$tap" | sed 's/^/       /' | tee -a "$summary" || true
	known=$((${known:-0} + todo))
	grep -E '^ok .*# SKIP' "$tap" | sed 's/^/       /' | tee -a "$summary" || true
	local p
	for p in "${problems[@]}"; do
		echo "       $p" | tee -a "$summary"
	done
	[[ $verdict == PASS ]] || echo "       logs: $dir" | tee -a "$summary"
}

