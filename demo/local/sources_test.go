package local

import (
	"strings"
	"testing"
)

// checkSources checks the run's consumers of the other sources: the
// EventBridge rule's, the direct producers' and the uploads bucket's, each
// with its producers' retries (a new event id, a new message id, a repeated
// notification) absorbed, every fact's effect once, nothing dead-lettered,
// and their figures on the last line.
func checkSources(t *testing.T, rep *Report) {
	t.Helper()
	got := map[string]SourceReport{}
	for _, s := range rep.Sources {
		got[s.Source] = s
	}
	for _, name := range []string{"eventbridge", "direct", "uploads"} {
		s, ok := got[name]
		switch {
		case !ok:
			t.Errorf("no consumer of source %s ran: %+v", name, rep.Sources)
		case s.Effects != s.Facts || s.Doubles != 0 || s.Lost != 0 || s.DLQ != 0:
			t.Errorf("%s: facts=%d effects=%d double_effects=%d lost=%d dlq=%d, want every fact's effect once, nothing dead-lettered", name, s.Facts, s.Effects, s.Doubles, s.Lost, s.DLQ)
		case s.Retries == 0 || s.Duplicates < s.Retries:
			t.Errorf("%s: %d retries sent, %d duplicates absorbed: want each retry absorbed", name, s.Retries, s.Duplicates)
		}
		if !strings.Contains(rep.Line(), " "+name+"=facts:") {
			t.Errorf("last line %q has no figures of %s", rep.Line(), name)
		}
	}
	// The rewrite of a key with new content is a fact of its own: one more
	// fact than uploads of distinct keys.
	if u := got["uploads"]; u.Facts != sourceFacts(rep.Orders)+1 {
		t.Errorf("uploads: %d facts, want %d uploads and a rewrite", u.Facts, sourceFacts(rep.Orders))
	}
}
