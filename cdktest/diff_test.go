package cdktest

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// hunkHeader is "@@ -a,b +c,d @@", counts optional.
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// apply applies a unified diff to old, checking every context and removed
// line against it, and the counts of every hunk header.
func apply(t *testing.T, old, diff string) string {
	t.Helper()
	a := strings.Split(old, "\n")
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("no file header:\n%s", diff)
	}
	var out []string
	next := 0 // next line of a to copy, 0-based
	for i := 2; i < len(lines); {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("line %d: %q is no hunk header:\n%s", i+1, lines[i], diff)
		}
		count := func(s string) int {
			if s == "" {
				return 1
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		from, oldN, newN := count(m[1]), count(m[2]), count(m[4])
		if oldN > 0 {
			from-- // 1-based; an empty range names the line before it
		}
		if from < next {
			t.Fatalf("hunk %q overlaps the one before", lines[i])
		}
		out = append(out, a[next:from]...)
		next = from
		gotOld, gotNew := 0, 0
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "@@"); i++ {
			l := lines[i]
			switch l[0] {
			case ' ', '-':
				if next >= len(a) || a[next] != l[1:] {
					t.Fatalf("%q does not match old line %d", l, next+1)
				}
				next++
				gotOld++
				if l[0] == ' ' {
					out = append(out, l[1:])
					gotNew++
				}
			case '+':
				out = append(out, l[1:])
				gotNew++
			default:
				t.Fatalf("line %q", l)
			}
		}
		if gotOld != oldN || gotNew != newN {
			t.Fatalf("hunk %s has %d old and %d new lines", m[0], gotOld, gotNew)
		}
	}
	return strings.Join(append(out, a[next:]...), "\n")
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TestUnifiedDiff: on random texts and random edits of them, the diff
// applies (every context and removed line matches, every hunk header
// counts its lines), has the fewest changed lines (the longest common
// subsequence is kept), and shows at most three lines of context at each
// end of a hunk.
func TestUnifiedDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"{", "}", "},", `"Type": "AWS::SQS::Queue"`, `"Ref": "Orders"`, "]", "x", "y"}
	text := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	for i := range 2000 {
		a := text(rng.IntN(40))
		b := append([]string(nil), a...)
		for range rng.IntN(6) {
			switch p := rng.IntN(max(len(b), 1)); rng.IntN(3) {
			case 0:
				b = append(b[:p], append(text(1+rng.IntN(3)), b[p:]...)...)
			case 1:
				if len(b) > 0 {
					b = append(b[:p], b[min(len(b), p+1+rng.IntN(3)):]...)
				}
			case 2:
				if len(b) > 0 {
					b[p] = words[rng.IntN(len(words))]
				}
			}
		}
		old, new := strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n"
		d := unifiedDiff("old", "new", old, new)
		if old == new {
			if d != "" {
				t.Fatalf("case %d: equal texts, diff %q", i, d)
			}
			continue
		}
		if got := apply(t, old, d); got != new {
			t.Fatalf("case %d: the diff applied gives\n%q\nwant\n%q\ndiff:\n%s", i, got, new, d)
		}
		changed := 0
		for _, l := range strings.Split(d, "\n")[2:] {
			if l != "" && (l[0] == '-' || l[0] == '+') {
				changed++
			}
		}
		sa, sb := strings.Split(old, "\n"), strings.Split(new, "\n")
		if want := len(sa) + len(sb) - 2*lcs(sa, sb); changed != want {
			t.Fatalf("case %d: %d lines changed, the shortest diff changes %d:\n%s", i, changed, want, d)
		}
		for _, hunk := range strings.Split(d, "\n@@")[1:] {
			body := strings.Split(strings.TrimSuffix(hunk, "\n"), "\n")[1:]
			lead, trail := 0, 0
			for lead < len(body) && body[lead][0] == ' ' {
				lead++
			}
			for trail < len(body) && body[len(body)-1-trail][0] == ' ' {
				trail++
			}
			if lead > diffContext || trail > diffContext {
				t.Fatalf("case %d: hunk with %d leading and %d trailing context lines:\n%s", i, lead, trail, d)
			}
		}
	}
}

// TestUnifiedDiffOfALongTemplate: one changed line in the middle of a long
// template is one hunk of seven lines, as diff -u shows it, and two changes
// farther apart than twice the context are two hunks.
func TestUnifiedDiffOfALongTemplate(t *testing.T) {
	var a []string
	for i := range 3000 {
		a = append(a, fmt.Sprintf("line %d", i+1))
	}
	b := append([]string(nil), a...)
	b[1439] = "changed"
	b[1460] = "changed too"
	got := unifiedDiff("golden", "synthesized", strings.Join(a, "\n"), strings.Join(b, "\n"))
	want := `--- golden
+++ synthesized
@@ -1437,7 +1437,7 @@
 line 1437
 line 1438
 line 1439
-line 1440
+changed
 line 1441
 line 1442
 line 1443
@@ -1458,7 +1458,7 @@
 line 1458
 line 1459
 line 1460
-line 1461
+changed too
 line 1462
 line 1463
 line 1464
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if d := unifiedDiff("golden", "synthesized", "x\n", "x"); !strings.Contains(d, "only golden ends with a newline") {
		t.Errorf("a missing final newline: %q", d)
	}
	if d := unifiedDiff("golden", "synthesized", "x\ny\n", "x\nz\n"); d != "--- golden\n+++ synthesized\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n" {
		t.Errorf("a change of the last line: %q (a final newline starts no line)", d)
	}
	whole := unifiedDiff("golden", "synthesized", strings.Join(a, "\n"), strings.Join(append([]string{"new first"}, a[1:]...), "\n"))
	if !strings.HasPrefix(whole, "--- golden\n+++ synthesized\n@@ -1,4 +1,4 @@\n-line 1\n+new first\n line 2\n") {
		t.Errorf("a change of the first line:\n%s", whole)
	}
}

// TestUnifiedDiffPastItsBound: two long texts with nothing in common take
// more work than the bound; the diff is then their middle removed and
// added, one hunk, and still applies.
func TestUnifiedDiffPastItsBound(t *testing.T) {
	var a, b []string
	for i := range 4000 {
		a = append(a, fmt.Sprintf("old %d", i))
		b = append(b, fmt.Sprintf("new %d", i))
	}
	old := "same\n" + strings.Join(a, "\n") + "\nsame too\n"
	new := "same\n" + strings.Join(b, "\n") + "\nsame too\n"
	d := unifiedDiff("old", "new", old, new)
	if got := apply(t, old, d); got != new {
		t.Fatalf("the diff does not apply")
	}
	if !strings.HasPrefix(d, "--- old\n+++ new\n@@ -1,4002 +1,4002 @@\n same\n-old 0\n") || strings.Count(d, "\n@@") != 1 {
		t.Errorf("diff starts %q", d[:min(len(d), 80)])
	}
}
