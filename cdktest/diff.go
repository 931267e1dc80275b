package cdktest

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change, as
// diff -u shows them.
const diffContext = 3

// maxDiffWork bounds the work of the line diff (Myers' algorithm keeps one
// row per edit); past it, the changed middle of the files is shown as one
// hunk, all removed then all added, which is still a correct diff.
const maxDiffWork = 8 << 20

// edit is one line of a diff: ' ' kept, '-' only in the old text, '+' only
// in the new one.
type edit struct {
	op   byte
	line string
}

// unifiedDiff returns the differences between old and new, line by line,
// in the unified format of diff -u (hunks with diffContext lines of
// context), or "" when they are equal.
func unifiedDiff(oldName, newName, old, new string) string {
	if old == new {
		return ""
	}
	// A final newline ends the last line; it starts no empty one.
	oldNL, newNL := strings.HasSuffix(old, "\n"), strings.HasSuffix(new, "\n")
	old, new = strings.TrimSuffix(old, "\n"), strings.TrimSuffix(new, "\n")
	if old == new {
		return fmt.Sprintf("--- %s\n+++ %s\n(the same lines; only %s ends with a newline)\n", oldName, newName, map[bool]string{true: oldName, false: newName}[oldNL && !newNL])
	}
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	// Common prefix and suffix first: a template change is usually a few
	// lines in a long file, which leaves a short middle to diff.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	edits := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		edits = append(edits, edit{' ', l})
	}
	edits = append(edits, lineEdits(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		edits = append(edits, edit{' ', l})
	}
	return fmt.Sprintf("--- %s\n+++ %s\n%s", oldName, newName, hunks(edits))
}

// lineEdits is the shortest edit script from a to b (Myers, "An O(ND)
// difference algorithm"), or all of a removed and all of b added when that
// would take more than maxDiffWork.
func lineEdits(a, b []string) []edit {
	n, m := len(a), len(b)
	whole := func() []edit {
		out := make([]edit, 0, n+m)
		for _, l := range a {
			out = append(out, edit{'-', l})
		}
		for _, l := range b {
			out = append(out, edit{'+', l})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	max := n + m
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int // trace[d]: the furthest x per diagonal after d-1 edits
	for d := 0; d <= max; d++ {
		if (d+1)*len(v) > maxDiffWork {
			return whole()
		}
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: a line of b added
			} else {
				x = v[off+k-1] + 1 // right: a line of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, off)
			}
		}
	}
	return whole()
}

// backtrack walks the trace of lineEdits back from the end of a and b.
func backtrack(a, b []string, trace [][]int, off int) []edit {
	var rev []edit
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			prevK = k + 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, edit{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if x == prevX {
			rev = append(rev, edit{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, edit{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{' ', a[x-1]})
		x, y = x-1, y-1
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// hunks formats an edit script as the hunks of a unified diff.
func hunks(edits []edit) string {
	var sb strings.Builder
	oldLine, newLine := make([]int, len(edits)+1), make([]int, len(edits)+1)
	for i, e := range edits {
		oldLine[i+1], newLine[i+1] = oldLine[i], newLine[i]
		if e.op != '+' {
			oldLine[i+1]++
		}
		if e.op != '-' {
			newLine[i+1]++
		}
	}
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext lines after the last change that is at most
		// 2*diffContext unchanged lines from the next.
		start := max(0, i-diffContext)
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		end = min(len(edits), end+diffContext)
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", span(oldLine[start], oldLine[end]), span(newLine[start], newLine[end]))
		for _, e := range edits[start:end] {
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

// span is a hunk's range of lines, as diff -u writes it: first line
// (1-based) and count, the count omitted when it is 1; an empty range is
// written as the line before it.
func span(from, to int) string {
	switch n := to - from; n {
	case 0:
		return fmt.Sprintf("%d,0", from)
	case 1:
		return fmt.Sprint(from + 1)
	default:
		return fmt.Sprintf("%d,%d", from+1, n)
	}
}
