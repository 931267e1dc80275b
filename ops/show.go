package ops

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// factFlags are how show and forget name a fact: a business key, or a
// message through the consumer's key function.
type factFlags struct {
	body, file string
}

func (f *factFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.body, "body", "", "the fact's message, as the queue holds it (an SNS envelope or the raw message): needs the consumer's key function (ops.WithKey)")
	fs.StringVar(&f.file, "file", "", "a file holding the fact's message (as --body)")
}

// fact returns the fact that args (a business key) or the flags (a message)
// name: its record key, and its payload hash and origin for a message.
func (f *factFlags) fact(t *target, args []string) (idempotency.Fact, error) {
	body := f.body
	if f.file != "" {
		b, err := os.ReadFile(f.file)
		if err != nil {
			return idempotency.Fact{}, err
		}
		body = string(b)
	}
	switch {
	case body != "" && len(args) > 0:
		return idempotency.Fact{}, errors.New("give a key or a message (--body, --file), not both")
	case body != "" && t.inspect == nil:
		return idempotency.Fact{}, errors.New("a message (--body, --file) needs the consumer's key function: build the command with it (ops.Main(os.Args[1:], ops.WithKey(yourKeyFunc))), or give the business key")
	case body != "":
		facts, err := t.inspect(&events.SQSMessage{Body: body})
		if err != nil {
			return idempotency.Fact{}, fmt.Errorf("the consumer refuses this message (bad input; nothing read or changed): %w", err)
		}
		if len(facts) != 1 {
			keys := make([]string, len(facts))
			for i, f := range facts {
				keys[i] = f.Key
			}
			return idempotency.Fact{}, fmt.Errorf("the message carries %d facts (an S3 notification's records: %q; none for S3's test event), not one: name one by its key", len(facts), keys)
		}
		return facts[0], nil
	case len(args) != 1:
		return idempotency.Fact{}, errors.New("give one business key (the key the consumer's key function returns), or a message with --body or --file")
	}
	key, err := t.guard.Key(args[0])
	if err != nil {
		return idempotency.Fact{}, fmt.Errorf("the consumer's rules refuse this key (nothing read or changed): %w", err)
	}
	return idempotency.Fact{Key: key}, nil
}

// Verdict is what the consumer's guard does with a delivery of a fact, now.
type Verdict struct {
	// Outcome is the record's outcome in the handler's words
	// (outcome.Outcome's names: "processed", "duplicate", "in_progress",
	// "mismatch", "expired", "bad_input").
	Outcome string `json:"outcome"`
	// Reason says why, in words.
	Reason string `json:"reason"`
}

// judge is the guard's decision on a delivery of fact f (Hash "" when only
// the key is known: the verdict is then for the recorded payload) against
// rec, the record of its key (nil for none), at now: the rules of
// idempotency.Record.Holds and of the guard's run, in the order the guard
// applies them. expired is the guard's Expired for the delivery.
func judge(rec *idempotency.Record, f idempotency.Fact, expired error, now time.Time) Verdict {
	if expired != nil {
		return Verdict{outcome.Expired.String(), "never run: " + expired.Error()}
	}
	if rec == nil {
		return Verdict{outcome.Processed.String(), "no record holds the key: a delivery runs the effect"}
	}
	hash, which := f.Hash, "this payload"
	if hash == "" {
		hash, which = rec.PayloadHash, "the recorded payload"
	}
	if !rec.Holds(hash, now) {
		switch {
		case rec.Status == idempotency.StatusInProgress && rec.PayloadHash == hash:
			return Verdict{outcome.Processed.String(), fmt.Sprintf("the reservation's lease ended %s ago: a delivery of %s takes it over and runs the effect, which may have run before (a takeover)", now.Sub(rec.LeaseUntil).Round(time.Second), which)}
		default:
			return Verdict{outcome.Processed.String(), fmt.Sprintf("the record's business window ended %s ago: a delivery runs the effect again", now.Sub(rec.ExpiresAt).Round(time.Second))}
		}
	}
	switch {
	case rec.PayloadHash != hash:
		return Verdict{outcome.Mismatch.String(), "the key is recorded with another payload: never run, the message goes to the dead-letter queue"}
	case rec.Status == idempotency.StatusCompleted:
		return Verdict{outcome.Duplicate.String(), fmt.Sprintf("completed: a delivery of %s is skipped and gets the stored result, until the window ends in %s", which, rec.ExpiresAt.Sub(now).Round(time.Second))}
	}
	return Verdict{outcome.InProgress.String(), fmt.Sprintf("a worker holds the reservation for %s more: a delivery is retried after it (a payload other than the recorded one is a mismatch)", rec.LeaseUntil.Sub(now).Round(time.Millisecond))}
}

// recordView is what show writes of a fact's record (--json).
type recordView struct {
	Consumer  string `json:"consumer"`
	Namespace string `json:"namespace"`
	Table     string `json:"table"`
	// Key is the record key, "<namespace>#<key>", or its keyed hash.
	Key    string `json:"key"`
	Hashed bool   `json:"hashed"`
	Found  bool   `json:"found"`
	Status string `json:"status,omitempty"`
	Owner  string `json:"owner,omitempty"`
	// LeaseUntil is when an IN_PROGRESS record may be taken over.
	LeaseUntil  *time.Time `json:"lease_until,omitempty"`
	WindowEnd   *time.Time `json:"window_end,omitempty"`
	TTL         *time.Time `json:"ttl,omitempty"`
	ResultBytes int        `json:"result_bytes"`
	PayloadHash string     `json:"payload_hash,omitempty"`
	// Replay is the operator's replay that wrote the record (its JSON,
	// replay.Replay), when one did.
	Replay string `json:"replay,omitempty"`
	// Verdict is what the guard does with a delivery now.
	Verdict Verdict `json:"verdict"`
}

func viewOf(t *target, f idempotency.Fact, rec *idempotency.Record, now time.Time) recordView {
	v := recordView{Consumer: t.s.Consumer, Namespace: t.s.Namespace, Table: t.s.Table, Key: f.Key, Hashed: t.s.KeySecret != "",
		Verdict: judge(rec, f, t.guard.Expired(f), now)}
	if rec == nil {
		return v
	}
	at := func(tm time.Time) *time.Time { u := tm.UTC(); return &u }
	v.Found, v.Status, v.Owner, v.PayloadHash, v.ResultBytes = true, string(rec.Status), rec.Owner, rec.PayloadHash, len(rec.Result)
	v.WindowEnd, v.TTL, v.Replay = at(rec.ExpiresAt), at(rec.TTL), rec.Replay
	if rec.Status == idempotency.StatusInProgress {
		v.LeaseUntil = at(rec.LeaseUntil)
	}
	return v
}

// write writes v in words.
func (v recordView) write(w io.Writer, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	when := func(tm *time.Time) string {
		if tm == nil {
			return "-"
		}
		d := tm.Sub(now).Round(time.Second)
		if d >= 0 {
			return fmt.Sprintf("%s (in %s)", tm.Format(time.RFC3339Nano), d)
		}
		return fmt.Sprintf("%s (%s ago)", tm.Format(time.RFC3339Nano), -d)
	}
	hashed := ""
	if v.Hashed {
		hashed = " (hashed with the consumer's key secret)"
	}
	fmt.Fprintf(tw, "consumer\t%s (namespace %s, table %s)\n", v.Consumer, v.Namespace, v.Table)
	fmt.Fprintf(tw, "key\t%s%s\n", v.Key, hashed)
	if !v.Found {
		fmt.Fprintf(tw, "record\tnone\n")
	} else {
		fmt.Fprintf(tw, "status\t%s\n", v.Status)
		fmt.Fprintf(tw, "owner\t%s\n", v.Owner)
		fmt.Fprintf(tw, "lease\t%s\n", when(v.LeaseUntil))
		fmt.Fprintf(tw, "window end\t%s\n", when(v.WindowEnd))
		fmt.Fprintf(tw, "ttl\t%s\n", when(v.TTL))
		fmt.Fprintf(tw, "result\t%d bytes\n", v.ResultBytes)
		if v.Replay != "" {
			fmt.Fprintf(tw, "replay\t%s\n", v.Replay)
		}
		fmt.Fprintf(tw, "payload hash\t%s\n", v.PayloadHash)
	}
	fmt.Fprintf(tw, "a delivery now\t%s: %s\n", v.Verdict.Outcome, v.Verdict.Reason)
	tw.Flush()
}

func runShow(ctx context.Context, o *options, args []string) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(o.stderr)
	var c common
	var ff factFlags
	c.register(fs)
	ff.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := locate(ctx, o, &c, false)
	if err != nil {
		return err
	}
	f, err := ff.fact(t, fs.Args())
	if err != nil {
		return err
	}
	rec, err := t.store.Get(ctx, f.Key)
	if err != nil {
		return fmt.Errorf("read the record of %s: %w", f.Key, err)
	}
	now := o.now()
	v := viewOf(t, f, rec, now)
	if c.json {
		return json.NewEncoder(o.stdout).Encode(v)
	}
	v.write(o.stdout, now)
	return nil
}

// oneLine is s on one line, for a table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
