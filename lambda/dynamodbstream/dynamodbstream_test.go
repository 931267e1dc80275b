package dynamodbstream_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/dynamodbstream"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

type item struct {
	PK      string            `json:"pk"`
	Version int64             `json:"version"`
	Total   string            `json:"total"` // a number kept as its digits
	Big     uint64            `json:"big"`
	Paid    bool              `json:"paid"`
	Note    *string           `json:"note"`
	Lines   []map[string]any  `json:"lines"`
	Tags    []string          `json:"tags"`
	Sizes   []int             `json:"sizes"`
	Blob    []byte            `json:"blob"`
	Meta    map[string]string `json:"meta"`
}

func ddb(seq, event string, keys, newImage, oldImage map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventID: "ev-" + seq, EventName: event, Change: events.DynamoDBStreamRecord{
		SequenceNumber: seq, Keys: keys, NewImage: newImage, OldImage: oldImage, StreamViewType: "NEW_AND_OLD_IMAGES",
		ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
	}}
}

func key(pk string) map[string]events.DynamoDBAttributeValue {
	return map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(pk)}
}

func image(pk string, version int) map[string]events.DynamoDBAttributeValue {
	return map[string]events.DynamoDBAttributeValue{
		"pk":      events.NewStringAttribute(pk),
		"version": events.NewNumberAttribute(strconv.Itoa(version)),
		"total":   events.NewStringAttribute("12.50"),
		"big":     events.NewNumberAttribute("18446744073709551615"),
		"paid":    events.NewBooleanAttribute(true),
		"note":    events.NewNullAttribute(),
		"lines":   events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"sku": events.NewStringAttribute("x"), "qty": events.NewNumberAttribute("2")})}),
		"tags":    events.NewStringSetAttribute([]string{"a", "b"}),
		"sizes":   events.NewNumberSetAttribute([]string{"1", "2"}),
		"blob":    events.NewBinaryAttribute([]byte{0, 1, 2}),
		"meta":    events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"by": events.NewStringAttribute("api")}),
	}
}

type changes struct {
	mu  sync.Mutex
	got []dynamodbstream.Change[item]
}

func (c *changes) fn(ctx context.Context, ch dynamodbstream.Change[item], r idempotency.Reservation) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ch)
	return "", nil
}

func changeKey(ch dynamodbstream.Change[item]) (string, error) {
	if ch.Event == dynamodbstream.Remove {
		return ch.Keys.PK + "/removed", nil
	}
	return ch.Keys.PK + "/" + strconv.FormatInt(ch.New.Version, 10), nil
}

func TestDynamoDBDecodesImages(t *testing.T) {
	var c changes
	cfg := config(io.Discard)
	cfg.OldImage = true
	h, err := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, c.fn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		ddb("100", "INSERT", key("o1"), image("o1", 1), nil),
		ddb("200", "MODIFY", key("o1"), image("o1", 2), image("o1", 1)),
		ddb("300", "REMOVE", key("o1"), nil, image("o1", 2)),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if len(c.got) != 3 {
		t.Fatalf("%d changes", len(c.got))
	}
	ins, mod, rem := c.got[0], c.got[1], c.got[2]
	if ins.Event != dynamodbstream.Insert || ins.New == nil || ins.Old != nil || ins.Keys.PK != "o1" || ins.SequenceNumber != "100" {
		t.Errorf("insert %+v", ins)
	}
	n := ins.New
	if n.Version != 1 || n.Total != "12.50" || n.Big != 18446744073709551615 || !n.Paid || n.Note != nil ||
		len(n.Lines) != 1 || n.Lines[0]["sku"] != "x" || len(n.Tags) != 2 || len(n.Sizes) != 2 || string(n.Blob) != "\x00\x01\x02" || n.Meta["by"] != "api" {
		t.Errorf("new image %+v", *n)
	}
	if mod.Old == nil || mod.Old.Version != 1 || mod.New.Version != 2 {
		t.Errorf("modify %+v", mod)
	}
	if rem.Event != dynamodbstream.Remove || rem.New != nil || rem.Old == nil || rem.Old.Version != 2 {
		t.Errorf("remove %+v", rem)
	}
}

// TestRemovesAreAChoice: no choice is refused; skip acknowledges REMOVE
// records without running, saying so; run hands them over.
func TestRemovesAreAChoice(t *testing.T) {
	var c changes
	cfg := config(io.Discard)
	cfg.Removes = ""
	if _, err := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, c.fn, cfg); err == nil || !strings.Contains(err.Error(), "is not one of") {
		t.Fatalf("err %v, want Removes refused", err)
	}
	var logs logBuf
	cfg = config(&logs)
	cfg.Removes = contract.RemoveSkip
	h, err := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, c.fn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{ddb("1", "REMOVE", key("o1"), nil, nil)}})
	if err != nil || len(resp.BatchItemFailures) != 0 || len(c.got) != 0 {
		t.Fatalf("%+v, %v, ran %d", resp, err, len(c.got))
	}
	if got := logs.outcomes(t)["1"]; got != "skipped" || !strings.Contains(logs.b.String(), "Removes skip") {
		t.Errorf("outcome %q:\n%s", got, logs.b.String())
	}
}

// TestRemovesTellTTLExpiriesFromDeletes: skip-expired acknowledges the
// REMOVE records of TTL expiries (userIdentity {Service,
// dynamodb.amazonaws.com}) without running, logged as such, and runs a
// caller's delete; run hands both over, ByTTL telling them apart; skip
// runs neither.
func TestRemovesTellTTLExpiriesFromDeletes(t *testing.T) {
	ttl := func(r events.DynamoDBEventRecord) events.DynamoDBEventRecord {
		r.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
		return r
	}
	lookalike := func(r events.DynamoDBEventRecord) events.DynamoDBEventRecord { // another service's identity is not TTL's
		r.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "example.amazonaws.com"}
		return r
	}
	for _, c := range []struct {
		removes  contract.Removes
		outcomes map[string]string // by sequence number: 1 a TTL expiry, 2 a caller's delete, 3 a lookalike
		ran      []bool            // ByTTL of the changes run, in order
	}{
		{contract.RemoveSkipExpired, map[string]string{"1": "skipped", "2": "processed", "3": "processed"}, []bool{false, false}},
		{contract.RemoveRun, map[string]string{"1": "processed", "2": "processed", "3": "processed"}, []bool{true, false, false}},
		{contract.RemoveSkip, map[string]string{"1": "skipped", "2": "skipped", "3": "skipped"}, nil},
	} {
		t.Run(string(c.removes), func(t *testing.T) {
			var ch changes
			var logs logBuf
			cfg := config(&logs)
			cfg.Removes, cfg.Concurrency = c.removes, 1
			h, err := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, ch.fn, cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
				ttl(ddb("1", "REMOVE", key("o1"), nil, image("o1", 1))),
				ddb("2", "REMOVE", key("o2"), nil, image("o2", 1)),
				lookalike(ddb("3", "REMOVE", key("o3"), nil, image("o3", 1))),
			}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("%+v, %v", resp, err)
			}
			got := logs.outcomes(t)
			for seq, want := range c.outcomes {
				if got[seq] != want {
					t.Errorf("record %s: outcome %q, want %q\n%s", seq, got[seq], want, logs.b.String())
				}
			}
			var ran []bool
			for _, x := range ch.got {
				ran = append(ran, x.ByTTL)
			}
			if fmt.Sprint(ran) != fmt.Sprint(c.ran) {
				t.Errorf("ran ByTTL %v, want %v", ran, c.ran)
			}
			if c.removes == contract.RemoveSkipExpired && !strings.Contains(logs.b.String(), "TTL expiry") {
				t.Errorf("the skip does not say it is a TTL expiry:\n%s", logs.b.String())
			}
		})
	}
}

// TestViewTypeWithoutTheImagesFailsTheInvocation: a stream that does not
// carry the images asked for is misconfigured, which no retry fixes: the
// invocation fails (the errors alarm sees it), nothing is reported as a
// record's fault.
func TestViewTypeWithoutTheImagesFailsTheInvocation(t *testing.T) {
	var c changes
	cfg := config(io.Discard)
	cfg.OldImage = true
	h, _ := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, c.fn, cfg)
	keysOnly := ddb("1", "INSERT", key("o1"), nil, nil)
	keysOnly.Change.StreamViewType = "KEYS_ONLY"
	newOnly := ddb("2", "MODIFY", key("o2"), image("o2", 2), nil)
	newOnly.Change.StreamViewType = "NEW_IMAGE"
	for _, r := range []events.DynamoDBEventRecord{keysOnly, newOnly} {
		_, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{r}})
		if !errors.Is(err, outcome.ErrMisconfigured) || !strings.Contains(err.Error(), "view type") {
			t.Errorf("%s: err %v, want misconfigured naming the view type", r.Change.StreamViewType, err)
		}
	}
}

// TestOrderPerItemKey: the records of one item run in order; after one
// fails, its item's later records wait; the lowest failed is reported.
func TestOrderPerItemKey(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	fn := func(ctx context.Context, ch dynamodbstream.Change[item], r idempotency.Reservation) (string, error) {
		if ch.Keys.PK == "o2" && ch.New.Version == 1 {
			return "", errors.New("downstream down")
		}
		mu.Lock()
		ran = append(ran, r.Key)
		mu.Unlock()
		return "", nil
	}
	var logs logBuf
	h, _ := dynamodbstream.New(newGuard(t, storetest.NewMemoryStore()), changeKey, fn, config(&logs))
	resp, err := h.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		ddb("1000", "INSERT", key("o1"), image("o1", 1), nil),
		ddb("1001", "INSERT", key("o2"), image("o2", 1), nil),
		ddb("1002", "MODIFY", key("o1"), image("o1", 2), nil),
		ddb("1003", "MODIFY", key("o2"), image("o2", 2), nil),
	}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "1001" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := logs.outcomes(t); got["1003"] != "not_started" || got["1002"] != "processed" {
		t.Errorf("outcomes %v", got)
	}
	if len(ran) != 2 {
		t.Errorf("ran %v", ran)
	}
}
