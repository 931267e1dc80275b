package streampoll

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// memStream is one shard of records {"seq": n}, n from first on, read
// Limit at a time; a read at a sequence number starts there.
func memStream(first, n, limit int) Stream {
	seq := func(r json.RawMessage) string {
		var v struct{ Seq string }
		_ = json.Unmarshal(r, &v)
		return v.Seq
	}
	var recs []json.RawMessage
	for i := range n {
		recs = append(recs, json.RawMessage(fmt.Sprintf(`{"Seq":"%d"}`, first+i)))
	}
	return Stream{
		Shards: []string{"s0"},
		Iterator: func(_ context.Context, _ string, pos Position) (string, error) {
			i := 0
			for pos.Sequence != "" && i < len(recs) && before(seq(recs[i]), pos) {
				i++
			}
			return strconv.Itoa(i), nil
		},
		Read: func(_ context.Context, it string) ([]json.RawMessage, string, error) {
			i, _ := strconv.Atoi(it)
			j := min(i+limit, len(recs))
			return recs[i:j], strconv.Itoa(j), nil
		},
		Sequence: seq,
	}
}

// TestTheCheckpointReplaysTheRecordsAfterTheLowestFailure: a partial batch
// response naming two records resumes at the lower one (as numbers: 98
// before 100, which a string comparison gets wrong), and every record from there is delivered again; a function
// error retries the batch whole; nothing is skipped.
func TestTheCheckpointReplaysTheRecordsAfterTheLowestFailure(t *testing.T) {
	var delivered []string
	calls := 0
	p := &Poller{Stream: memStream(97, 10, 3), BatchSize: 4, MaxRetries: 3}
	p.Invoke = func(_ context.Context, batch []json.RawMessage) ([]string, error) {
		calls++
		for _, r := range batch {
			delivered = append(delivered, p.Stream.Sequence(r))
		}
		switch calls {
		case 1: // 97..100: 100 and 98 fail
			return []string{"100", "98"}, nil
		case 3: // 102..105: a function error
			return nil, errors.New("boom")
		}
		return nil, nil
	}
	if err := p.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"97", "98", "99", "100", "98", "99", "100", "101", "102", "103", "104", "105", "102", "103", "104", "105", "106"}
	if !slices.Equal(delivered, want) {
		t.Fatalf("delivered %v, want %v", delivered, want)
	}
	if p.Records != 10 || p.Deliveries != len(want) || p.Replayed != len(want)-10 || p.PartialResponses != 1 || p.FunctionErrors != 1 {
		t.Errorf("counts %+v", p)
	}
	// A later Drain goes on from the checkpoint: nothing new, nothing
	// delivered.
	if err := p.Drain(context.Background()); err != nil || p.Deliveries != len(want) {
		t.Errorf("second drain: %v, %d deliveries", err, p.Deliveries)
	}
}

// TestAnUnknownItemIdentifierFailsTheBatch: an identifier that is not a
// record of the batch (or empty) is a complete failure, as Lambda's
// documentation says; past MaxRetries, Drain gives up.
func TestAnUnknownItemIdentifierFailsTheBatch(t *testing.T) {
	for _, id := range []string{"", "7"} {
		p := &Poller{Stream: memStream(1, 3, 10), MaxRetries: 2}
		p.Invoke = func(context.Context, []json.RawMessage) ([]string, error) { return []string{id}, nil }
		if err := p.Drain(context.Background()); !errors.Is(err, ErrGaveUp) || p.FunctionErrors != 3 || p.Deliveries != 9 {
			t.Errorf("identifier %q: %v, %d function errors, %d deliveries", id, err, p.FunctionErrors, p.Deliveries)
		}
	}
}

func TestSequenceNumbersCompareAsNumbers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{{"9", "10", true}, {"10", "9", false}, {"49590338271490256608559692538361571095921575989136588898", "49590338271490256608559692540925702759324208523137515618", true}, {"5", "5", false}} {
		if got := Less(c.a, c.b); got != c.less {
			t.Errorf("Less(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
