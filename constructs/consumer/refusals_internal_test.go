package consumer

import (
	"strings"
	"testing"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/constructs/core"
	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

const day = 24 * time.Hour

// wantProblem checks that got holds exactly one problem with every part of
// want, or none when want is nil.
func wantProblem(t *testing.T, got []string, want []string) {
	t.Helper()
	if want == nil {
		if len(got) != 0 {
			t.Fatalf("refused, want accepted:\n%s", strings.Join(got, "\n"))
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("%d problems, want 1: %q", len(got), got)
	}
	for _, w := range want {
		if !strings.Contains(got[0], w) {
			t.Errorf("problem %q\ndoes not say %q", got[0], w)
		}
	}
}

func wantWarning(t *testing.T, got []synthWarning, id string, want []string) {
	t.Helper()
	if want == nil {
		if len(got) != 0 {
			t.Fatalf("warned, want no warning: %+v", got)
		}
		return
	}
	if len(got) != 1 || got[0].ID != id {
		t.Fatalf("warnings %+v, want one %s", got, id)
	}
	for _, w := range want {
		if !strings.Contains(got[0].Message, w) {
			t.Errorf("warning %q\ndoes not say %q", got[0].Message, w)
		}
	}
}

func known(what string, d time.Duration) retention { return retention{what: what, d: d, known: true} }

// TestRetentionIsOneSQSKeeps: a retention the props give is refused outside
// SQS's 60 seconds to 14 days, with the construct's words; a default, or a
// retention the construct cannot read, is not judged.
func TestRetentionIsOneSQSKeeps(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		r    retention
		want string
	}{
		{known("QueueProps.RetentionPeriod", 59*time.Second), "QueueProps.RetentionPeriod 59s is out of range: SQS keeps a message from 1m to 336h (14 days)"},
		{known("QueueProps.RetentionPeriod", time.Minute), ""},
		{known("DeadLetterQueueProps.RetentionPeriod", 14*day), ""},
		{known("DeadLetterQueueProps.RetentionPeriod", 14*day+time.Second), "DeadLetterQueueProps.RetentionPeriod 1209601s is out of range"},
		{retention{what: "SQS's default", d: 4 * day, known: true, isDefault: true}, ""},
		{retention{what: "the retention period of Queue S/Q"}, ""},
	} {
		got := retentionRangeProblems(tc.r)
		if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s %s: %q; want %q", tc.r.what, tc.r.d, got, tc.want)
		}
	}
}

func TestDeadLetterRetentionMustBeLongerThanTheQueues(t *testing.T) {
	for _, tc := range []struct {
		name       string
		queue, dlq retention
		fifo       bool
		want       []string
	}{
		{"equal, standard", known("QueueProps.RetentionPeriod", 4*day), known("DeadLetterQueueProps.RetentionPeriod", 4*day), false,
			[]string{"the dead-letter queue's retention 96h (4 days) (DeadLetterQueueProps.RetentionPeriod) is not longer than the queue's 96h (4 days)", "keeps a message's original enqueue time", "give the dead-letter queue a retention longer than the queue's"}},
		{"shorter, standard", known("q", 7*day), known("d", 2*day), false, []string{"48h (2 days)", "168h (7 days)"}},
		{"longer, standard", known("q", 4*day), known("d", 14*day), false, nil},
		{"equal, FIFO: the move resets the enqueue time", known("q", 4*day), known("d", 4*day), true, nil},
		{"dead-letter queue imported", known("q", 4*day), retention{what: "d"}, false, nil},
		{"queue imported", retention{what: "q"}, known("d", day), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, deadLetterRetentionProblems(tc.queue, tc.dlq, tc.fifo), tc.want)
		})
	}
}

func TestRetentionMustOutlastEveryReceive(t *testing.T) {
	for _, tc := range []struct {
		name       string
		queue      retention
		maxReceive float64
		visibility time.Duration
		want       []string
	}{
		{"10m vs 5 × 3m", known("QueueProps.RetentionPeriod", 10*time.Minute), 5, 3 * time.Minute,
			[]string{"the queue's retention 10m (QueueProps.RetentionPeriod) is not longer than MaxReceiveCount × the visibility timeout (5 × 3m = 15m)", "lost without an alarm", "longer than 15m"}},
		{"equal", known("q", 15*time.Minute), 5, 3 * time.Minute, []string{"15m"}},
		{"16m vs 5 × 3m", known("q", 16*time.Minute), 5, 3 * time.Minute, nil},
		{"maxReceiveCount unknown", known("q", time.Minute), 0, 3 * time.Minute, nil},
		{"retention unknown", retention{what: "q"}, 5, 3 * time.Minute, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, redriveRetentionProblems(tc.queue, tc.maxReceive, tc.visibility), tc.want)
		})
	}
}

// TestRetentionMustOutlastTheBackoff: a message that fails every receive
// under the backoff reaches the dead-letter queue before its retention ends.
func TestRetentionMustOutlastTheBackoff(t *testing.T) {
	rt := func(base, cap time.Duration, maxReceive int, fifo bool) contract.Settings {
		s := contract.Defaults(30 * time.Second)
		s.BackoffBase, s.BackoffCap, s.MaxReceiveCount, s.FIFO = base, cap, maxReceive, fifo
		return s
	}
	for _, tc := range []struct {
		name       string
		queue      retention
		rt         contract.Settings
		visibility time.Duration
		want       []string
	}{
		{"defaults against 2h", known("QueueProps.RetentionPeriod", 2*time.Hour), rt(10*time.Minute, time.Hour, 5, false), 3 * time.Minute,
			[]string{"the queue's retention 2h (QueueProps.RetentionPeriod) is not longer than the retry horizon of the backoff and the last receive's visibility timeout (130m + 3m = 133m; the horizon: the longest delays after receives 1 to 4 of MaxReceiveCount 5, BackoffBase 10m doubled up to BackoffCap 1h)",
				"lost without an alarm; give the queue a retention longer than 133m, or a smaller BackoffCap, BackoffBase or MaxReceiveCount"}},
		{"defaults against SQS's 4 days", known("q", 4*day), rt(10*time.Minute, time.Hour, 5, false), 3 * time.Minute, nil},
		{"FIFO cap", known("q", 58*time.Minute), rt(10*time.Minute, time.Hour, 5, true), 3 * time.Minute,
			[]string{"(55m + 3m = 58m", "BackoffFIFOCap 15m"}},
		{"FIFO cap fits", known("q", 2*time.Hour), rt(10*time.Minute, time.Hour, 5, true), 3 * time.Minute, nil},
		{"backoff off", known("q", time.Hour), rt(0, time.Hour, 5, false), 3 * time.Minute, nil},
		{"retention unknown", retention{what: "q"}, rt(10*time.Minute, time.Hour, 5, false), 3 * time.Minute, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, backoffRetentionProblems(tc.queue, tc.rt, tc.visibility), tc.want)
		})
	}
}

func TestDeliveredBodyBytes(t *testing.T) {
	for _, tc := range []struct {
		topicMax int
		raw      bool
		want     int
	}{
		{262144, true, 262144},
		{262144, false, 2*262144 + 8192},
		{520192, false, 1048576},
		{1048576, true, 1048576},
		{1048576, false, 1048576},
	} {
		if got := deliveredBodyBytes(tc.topicMax, tc.raw); got != tc.want {
			t.Errorf("deliveredBodyBytes(%d, raw %t) = %d, want %d", tc.topicMax, tc.raw, got, tc.want)
		}
	}
}

func TestQueueSizeMustTakeWhatTheTopicDelivers(t *testing.T) {
	const need = 2*262144 + 8192
	for _, tc := range []struct {
		name     string
		size     queueSize
		need     int
		problem  []string
		warning  []string
		warnings int
	}{
		{name: "262144 set", size: queueSize{bytes: 262144, set: true}, need: need,
			problem: []string{"Queue S/Orders takes messages of up to 262144 bytes (its MaximumMessageSize), less than the largest body the subscription delivers, 532480 bytes", "set the queue's MaxMessageSizeBytes to 1048576"}},
		{name: "1 MiB set", size: queueSize{bytes: 1048576, set: true}, need: need},
		{name: "exactly what is delivered", size: queueSize{bytes: need, set: true}, need: need},
		{name: "unset, more than 256 KiB delivered", size: queueSize{unset: true}, need: need,
			warning: []string{"Queue S/Orders sets no MaximumMessageSize", "keeps 262144 bytes", "set the queue's MaxMessageSizeBytes to 1048576"}},
		{name: "unset, at most 256 KiB delivered", size: queueSize{unset: true}, need: 262144},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, warnings := queueSizeProblems("S/Orders", tc.size, tc.need)
			wantProblem(t, problems, tc.problem)
			wantWarning(t, warnings, core.WarnQueueSizeUnset, tc.warning)
		})
	}
}

func TestWindowShorterThanRetentionWarns(t *testing.T) {
	queueDefault := retention{what: "SQS's default", d: 4 * day, known: true, isDefault: true}
	for _, tc := range []struct {
		name            string
		window          time.Duration
		windowIsDefault bool
		queue           retention
		want            []string
	}{
		{"1h vs SQS's 4 days", time.Hour, false, queueDefault,
			[]string{"Window 1h is shorter than the queue's retention 96h (4 days)", "dead-letters a message older than Window as expired", "give a Window of at least 96h (4 days)", "acknowledge this warning", "A shorter retention is no fix"}},
		{"24h given vs SQS's 4 days", 24 * time.Hour, false, queueDefault, []string{"Window 24h"}},
		{"default Window vs a retention given", 24 * time.Hour, true, known("QueueProps.RetentionPeriod", 7*day), []string{"168h (7 days)"}},
		{"the defaults together", 24 * time.Hour, true, queueDefault, nil},
		{"Window as long as the retention", 4 * day, false, known("q", 4*day), nil},
		{"retention unknown", time.Hour, false, retention{what: "q"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantWarning(t, windowRetentionWarnings(tc.window, tc.windowIsDefault, tc.queue), core.WarnWindowShorterThanRetention, tc.want)
		})
	}
}

func TestStandardQueueFixNamesTheChoice(t *testing.T) {
	if got := standardQueueFix(fifo{topic: true, queue: true}, false); !strings.Contains(got, "set StandardQueue to true") {
		t.Errorf("FIFO topic, standard queue given: %q does not name StandardQueue", got)
	}
	if got := standardQueueFix(fifo{topic: true}, true); !strings.Contains(got, "leave StandardQueue nil") {
		t.Errorf("FIFO topic with StandardQueue, FIFO queue given: %q", got)
	}
	if got := standardQueueFix(fifo{}, true); got != "" {
		t.Errorf("standard topic: %q, want nothing", got)
	}
}

func TestFormatDays(t *testing.T) {
	for d, want := range map[time.Duration]string{
		day: "24h (1 day)", 4 * day: "96h (4 days)", 10 * time.Minute: "10m", 36 * time.Hour: "36h",
	} {
		if got := formatDays(d); got != want {
			t.Errorf("formatDays(%v) = %q, want %q", d, got, want)
		}
	}
}
