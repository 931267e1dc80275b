package stream

import (
	"fmt"
	"testing"
)

// seqN is a realistic 56-digit Kinesis sequence number ending in n.
func seqN(n int) string { return fmt.Sprintf("4961%052d", n) }

// TestReportedSequenceNumberIsTheLowestAsANumber: of the failed records'
// sequence numbers the lowest is reported, compared as a number ("99"
// sorts after "100" as a string); a sequence number that is not a decimal
// number is an error. The handlers' tests (kinesis, dynamodbstream) pin
// the same through Handle.
func TestReportedSequenceNumberIsTheLowestAsANumber(t *testing.T) {
	for _, c := range []struct {
		seqs []string
		want string
	}{
		{[]string{"49612345678901234567890123456789012345678901234567890002", "9"}, "9"},
		{[]string{seqN(20), seqN(3), seqN(100)}, seqN(3)},
		{[]string{"0010", "9"}, "9"},
		{[]string{"100", "99", "1000"}, "99"},
	} {
		got, err := reportedSequenceNumber(c.seqs)
		if err != nil || got != c.want {
			t.Errorf("reportedSequenceNumber(%v) = %q, %v; want %q", c.seqs, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"12", "0x10"}, {"-1"}, {""}, {"1_000"}, nil} {
		if got, err := reportedSequenceNumber(bad); err == nil {
			t.Errorf("reportedSequenceNumber(%q) = %q, want an error", bad, got)
		}
	}
}
