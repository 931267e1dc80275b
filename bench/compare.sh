#!/usr/bin/env bash
# compare.sh OLD NEW [COUNT] [PATTERN]: the end-to-end benchmark of two
# versions of the repository, side by side in one benchstat table. OLD and
# NEW are git revisions, or "." for the working tree. Each version's test
# binary is built once; the runs alternate (old, new, old, new, ...) COUNT
# times (default 10), so that a noisy, shared machine weighs on both alike.
# PATTERN selects the benchmarks (default EndToEnd); one table per benchmark.
set -euo pipefail
old=$1 new=$2 count=${3:-10} pattern=${4:-EndToEnd}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for side in old new; do
	rev=${!side}
	mkdir -p "$tmp/$side"
	if [ "$rev" = . ]; then
		(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -c) | tar -x -C "$tmp/$side"
	else
		git -C "$root" archive "$rev" | tar -x -C "$tmp/$side"
	fi
	(cd "$tmp/$side/bench" && go test -c -o "$tmp/$side/e2e.test" ./e2e)
done
for i in $(seq "$count"); do
	for side in old new; do
		(cd "$tmp/$side/bench/e2e" && "$tmp/$side/e2e.test" -test.run '^$' -test.bench "$pattern" -test.count 1) >>"$tmp/$side.txt"
	done
done
benchstat=${BENCHSTAT:-$root/.tools/bin/benchstat}
"$benchstat" -table .name -row /case old="$tmp/old.txt" new="$tmp/new.txt"
