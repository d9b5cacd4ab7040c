# SPDX-License-Identifier: GPL-2.0
# Result parsing of the peer suite; sourced by run-peer.sh and by
# selftest-runner.sh, which checks it on canned logs.
source "$TOPTIER_ROOT/scripts/tap-parse.sh"	# splat_re

# cases <dir>: the guest's results as <job> TAB <case> TAB <status> lines
# (status pass, fail or skip) in <dir>/cases.tsv.  Top-level TAP lines of
# each job are its cases: kselftest prints "ok N name", "ok N # SKIP name",
# "not ok N # error name", and the harness "ok N name # SKIP reason".
cases() {
	local dir=$1
	awk -v splat="$splat_re" '
	{ sub(/\r$/, "") }
	# First file, console.log: splats per job, by the guest kmsg markers.
	FILENAME == ARGV[1] {
		if (match($0, /toptier-peer: begin [^ ]+/)) {
			cur = substr($0, RSTART + 20, RLENGTH - 20); next
		}
		if (/toptier-peer: done/) { cur = ""; next }
		if (cur != "" && $0 ~ splat && !(cur in splatted)) splatted[cur] = 1
		next
	}
	/^# toptier-guest: begin / { job = $4; delete seen; killed = 0; next }
	job == "" { next }
	/^# peer: .* killed after/ { killed = 1; next }
	/^# toptier-guest: end / {
		rc = $NF; sub(/^rc=/, "", rc)
		st = rc == 0 ? "pass" : rc == 4 ? "skip" : "fail"
		print job "\t(exit)\t" st (killed ? " (timeout)" : st == "fail" ? " (rc=" rc ")" : "")
		print job "\t(kernel log)\t" ((job in splatted) ? "fail (splat)" : "pass")
		ended[job] = 1; job = ""; next
	}
	/^(not )?ok [0-9]+/ {
		st = /^not / ? "fail" : "pass"
		line = $0; sub(/^(not )?ok [0-9]+ */, "", line)
		num = $0; sub(/^(not )?ok /, "", num); sub(/ .*/, "", num)
		if (line ~ /^# (SKIP|XFAIL|error)/) {
			dir_ = line; sub(/^# /, "", dir_); sub(/ .*/, "", dir_)
			name = line; sub(/^# [A-Za-z]+ */, "", name)
		} else {
			dir_ = ""
			name = line
			if (match(name, / # [A-Za-z]+/)) {
				dir_ = substr(name, RSTART + 3); sub(/ .*/, "", dir_)
				name = substr(name, 1, RSTART - 1)
			}
		}
		if (dir_ == "SKIP") st = "skip"
		else if (dir_ == "XFAIL") st = "pass"
		else if (dir_ == "error") st = "fail"
		if (name == "") name = "case " num
		if (name in seen) name = name " [" num "]"
		seen[name] = 1
		print job "\t" name "\t" st
	}
	END {
		if (job != "") {
			print job "\t(exit)\tfail (no end: guest died or was killed)"
			print job "\t(kernel log)\t" ((job in splatted) ? "fail (splat)" : "pass")
		}
	}' "$dir/console.log" "$dir/tap.log" > "$dir/cases.tsv"
}

# compare <job order> <baseline cases> <patched cases> [<patched retry cases>...]:
# the side-by-side rows (job, case, baseline, patched, verdict), in job-list
# order, each job's cases in the order they ran.  A case that passes on the
# baseline, not in the patched run but in a retry of it is "flaky on
# patched"; one that passes in no patched run is a REGRESSION.
compare() {
	local order=$1
	shift
	awk -F'\t' -v order="$order" '
	BEGIN { n = split(order, jl, "\n"); for (i = 1; i <= n; i++) rank[jl[i]] = i }
	FNR == 1 { for (k = 1; k < ARGC; k++) if (ARGV[k] == FILENAME) break }
	{
		key = $1 SUBSEP $2
		if (!(key in any)) { any[key] = 1; idx++; pos[key] = idx; rows[idx] = key }
		st[k, key] = $3
	}
	END {
		for (i = 1; i <= idx; i++) {
			key = rows[i]; split(key, kk, SUBSEP)
			b = ((1, key) in st) ? st[1, key] : "missing"
			p = ((2, key) in st) ? st[2, key] : "missing"
			bp = b ~ /^pass/; pp = p ~ /^pass/
			retried = ""
			if (bp && !pp)
				for (r = 3; r < ARGC; r++)
					if ((r, key) in st) {
						retried = retried ", retry " (r - 2) ": " st[r, key]
						if (st[r, key] ~ /^pass/) pp = 2
					}
			p = p retried
			if (bp && !pp) v = "REGRESSION"
			else if (bp && pp == 2) v = "flaky on patched"
			else if (!bp && pp) v = "better on patched"
			else if (bp) v = ""
			else if (b ~ /^fail/ && p ~ /^fail/) v = "fails on both"
			else if (b ~ /^skip/ && p ~ /^skip/) v = "skipped on both"
			else v = "passes on neither"
			printf "%d\t%08d\t%s\t%s\t%s\t%s\t%s\n", rank[kk[1]], pos[key], kk[1], kk[2], b, p, v
		}
	}' "$@" | sort -t$'\t' -k1,1n -k2,2n | cut -f3-
}
