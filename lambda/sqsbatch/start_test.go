package sqsbatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/internal/contracttest"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/idempotency/storetest"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/sqsbatch"
)

var (
	settings = contracttest.Settings
	getenv   = contracttest.Getenv
)

// TestFromEnvRefusesAnotherSourcesDelivery: a contract of an EventBridge
// rule's or an S3 bucket's delivery names the entry point to use.
func TestFromEnvRefusesAnotherSourcesDelivery(t *testing.T) {
	for _, d := range []contract.Delivery{contract.EventBridge, contract.S3} {
		s := settings()
		s.Delivery = d
		_, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil },
			getenv(s.Encode()), handler.WithStore(storetest.NewMemoryStore()))
		if err == nil || !strings.Contains(err.Error(), contract.DeliveryVar) || !strings.Contains(err.Error(), "eventbridge.Start") {
			t.Errorf("delivery %s: %v", d, err)
		}
	}
}

// TestNewRefusesAnotherSourcesDelivery: a handler built with New and the
// delivery of an EventBridge rule or an S3 bucket reads no body as a raw
// message: it fails the invocation, naming the package to use, and runs
// nothing.
func TestNewRefusesAnotherSourcesDelivery(t *testing.T) {
	for _, d := range []contract.Delivery{contract.EventBridge, contract.S3} {
		f := newFixture(t)
		rec := message(`{"orderId":"o-1","amount":5}`, contract.Raw)
		_, err := f.Handler(d).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		if !errors.Is(err, outcome.ErrMisconfigured) || !strings.Contains(err.Error(), "package eventbridge or s3event") || f.EffectCount("o-1") != 0 {
			t.Errorf("delivery %s: %v, effect ran %d times", d, err, f.EffectCount("o-1"))
		}
	}
}

// TestNewRunsTheContractsSettings: the handler built from an encoded
// contract processes a fact once, under the namespace and delivery the
// contract says.
func TestNewRunsTheContractsSettings(t *testing.T) {
	store := storetest.NewMemoryStore()
	var logs bytes.Buffer
	runs := 0
	h, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { runs++; return "ch_1", nil },
		getenv(settings().Encode()), handler.WithStore(store), handler.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 2 {
		ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: fmt.Sprint("m", i), Body: `{"orderId":"o-1","amount":5}`}}}
		if resp, err := h.Handle(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("delivery %d: %v, %v", i, resp, err)
		}
	}
	rec, err := store.Get(ctx, "charge#o-1")
	if err != nil || rec == nil || rec.Status != idempotency.StatusCompleted || runs != 1 {
		t.Fatalf("record %+v, %v, effect ran %d times; want charge#o-1 COMPLETED once", rec, err, runs)
	}
	if !strings.Contains(logs.String(), `"consumer":"ChargeOrder"`) || !strings.Contains(logs.String(), `"outcome":"duplicate"`) {
		t.Fatalf("logs do not name the consumer or the duplicate:\n%s", logs.String())
	}
}

// TestNewTellsTheAdapterItIsFIFO: with the contract's FIFO setting, the
// records of one message group run in order and stop at the first failure
// although nothing in their event source ARN says FIFO; without it, the same
// records run independently.
func TestNewTellsTheAdapterItIsFIFO(t *testing.T) {
	for _, fifo := range []bool{true, false} {
		t.Run(fmt.Sprint("fifo=", fifo), func(t *testing.T) {
			s := settings()
			s.FIFO = fifo
			var mu sync.Mutex
			var ran []string
			h, err := sqsbatch.FromEnv(orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
				mu.Lock()
				ran = append(ran, o.OrderID)
				mu.Unlock()
				if o.OrderID == "g-1" {
					return "", errors.New("declined")
				}
				return "ok", nil
			}, getenv(s.Encode()), handler.WithStore(storetest.NewMemoryStore()), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
			if err != nil {
				t.Fatal(err)
			}
			rec := func(id string) events.SQSMessage {
				return events.SQSMessage{MessageId: id, Body: `{"orderId":"` + id + `","amount":1}`, Attributes: map[string]string{"MessageGroupId": "g"}}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec("g-1"), rec("g-2")}})
			if err != nil {
				t.Fatal(err)
			}
			wantFailed := 1
			if fifo {
				wantFailed = 2 // g-2 is not started after g-1 failed
			}
			if len(resp.BatchItemFailures) != wantFailed || fifo && len(ran) != 1 {
				t.Fatalf("failures %v, effects %v; want %d failures", resp.BatchItemFailures, ran, wantFailed)
			}
		})
	}
}

// TestNewRefuses: what the handler cannot run with is an error from New
// that says why, before any store is built.
func TestNewRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(env map[string]string)
		want   string
	}{
		"another contract version":        {func(env map[string]string) { env[contract.VersionVar] = "99" }, "contract version 99"},
		"a window shorter than the lease": {func(env map[string]string) { env[contract.WindowVar] = "10s" }, "Window 10s is shorter than LeaseMax 30s"},
		"a duration that does not parse":  {func(env map[string]string) { env[contract.LeaseMaxVar] = "a minute" }, `IDEMPOTENCY_LEASE_MAX="a minute"`},
		"no table":                        {func(env map[string]string) { delete(env, contract.TableVar) }, "Table is empty"},
		"a design the store cannot use":   {func(env map[string]string) { env[contract.TTLAttributeVar] = "owner" }, `IDEMPOTENCY_TABLE_TTL_ATTRIBUTE: TableTTLAttribute "owner" is an attribute of the idempotency record`},
	} {
		t.Run(name, func(t *testing.T) {
			env := settings().Encode()
			tc.change(env)
			_, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil },
				getenv(env), handler.WithStore(storetest.NewMemoryStore()))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v; want one that contains %q", err, tc.want)
			}
		})
	}
	_, err := sqsbatch.FromEnv(orderKey, nil, getenv(map[string]string{contract.VersionVar: "99"}))
	if !errors.Is(err, contract.ErrVersion) {
		t.Fatalf("err %v; want ErrVersion", err)
	}
}

// TestNewTxNeedsATxStore: a transactional handler refuses a store that
// cannot commit transactions, at init.
func TestNewTxNeedsATxStore(t *testing.T) {
	type plain struct{ idempotency.Store }
	_, err := sqsbatch.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (any, string, error) { return nil, "", nil },
		getenv(settings().Encode()), handler.WithStore(plain{storetest.NewMemoryStore()}))
	if !errors.Is(err, idempotency.ErrNoTransactions) {
		t.Fatalf("err %v; want ErrNoTransactions", err)
	}
}

// TestStartExitsWithOneLine: a handler that cannot start logs one JSON line
// that says why, naming the variable, and exits with status 1, without a
// panic. The line is at FATAL, with a timestamp, so that Lambda keeps it at
// every application log level, FATAL included. The test runs itself as
// that handler, in a process of its own.
func TestStartExitsWithOneLine(t *testing.T) {
	if os.Getenv("HANDLER_TEST_START") == "1" {
		sqsbatch.Start(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil })
		return
	}
	for _, level := range []string{"", "INFO", "ERROR", "FATAL"} {
		t.Run("level="+level, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartExitsWithOneLine$")
			env := settings().Encode()
			env[contract.MinRemainingVar] = "1s" // not more than the finishing budget
			cmd.Env = append(os.Environ(), "HANDLER_TEST_START=1", "AWS_LAMBDA_LOG_LEVEL="+level)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("run: %v; want exit status 1", err)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			var line struct{ Level, Msg, Reason string }
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &line) != nil || line.Level != "FATAL" ||
				!strings.Contains(line.Reason, "BATCH_MIN_REMAINING: MinRemaining 1s is not more than FinishBudget 2s") {
				t.Fatalf("stderr:\n%s\nwant one JSON line at level FATAL with the variable and the rule", stderr.String())
			}
			if kept := lambdaKeeps(t, lines[0], level); !kept {
				t.Errorf("Lambda drops the init line at %s: %s", level, lines[0])
			}
		})
	}
}

// lambdaLevels are Lambda's application log levels, lowest first.
var lambdaLevels = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}

// lambdaLevel is the level Lambda's advanced logging controls assign to a
// line of the function's output, by their documented rule: a JSON line
// with a valid "level" and a "timestamp" in RFC 3339 keeps its level; any
// other line is INFO.
func lambdaLevelOf(line string) string {
	var l struct {
		Level     string `json:"level"`
		Timestamp string `json:"timestamp"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || !slices.Contains(lambdaLevels, strings.ToUpper(l.Level)) {
		return "INFO"
	}
	if _, err := time.Parse(time.RFC3339, l.Timestamp); err != nil {
		return "INFO"
	}
	return strings.ToUpper(l.Level)
}

// lambdaKeeps reports whether Lambda keeps line at the application log
// level (INFO when empty), and checks that it does so at the line's own
// level.
func lambdaKeeps(t *testing.T, line, level string) bool {
	t.Helper()
	if level == "" {
		level = "INFO"
	}
	got := lambdaLevelOf(line)
	var own struct{ Level string }
	if err := json.Unmarshal([]byte(line), &own); err != nil || got != own.Level {
		t.Errorf("Lambda takes %q for %s, not its own level %q", line, got, own.Level)
	}
	return slices.Index(lambdaLevels, got) >= slices.Index(lambdaLevels, level)
}

// A handler's whole main: the construct's environment configures it.
func ExampleStart() {
	type Order struct {
		OrderID string `json:"orderId"`
		Amount  int64  `json:"amount"`
	}
	key := func(o Order) (string, error) {
		if o.Amount <= 0 { // refuse bad input here: it costs no store request
			return "", fmt.Errorf("%w: amount %d must be positive", outcome.ErrBadInput, o.Amount)
		}
		return o.OrderID, nil
	}
	charge := func(ctx context.Context, o Order, r idempotency.Reservation) (string, error) {
		return "ch_" + o.OrderID, nil // call the payment API with r.Key as its idempotency key
	}
	sqsbatch.Start(key, charge)
}

// TestNewTxRefusesWritesTheStoreCannotCommit: a transactional effect whose
// writes type the store does not take is refused at init, not on every
// message.
func TestNewTxRefusesWritesTheStoreCannotCommit(t *testing.T) {
	type myWrites []string
	_, err := sqsbatch.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (myWrites, string, error) { return nil, "", nil },
		getenv(settings().Encode()), handler.WithStore(storetest.NewMemoryStore()))
	if !errors.Is(err, idempotency.ErrTxInvalid) || !strings.Contains(err.Error(), "sqsbatch_test.myWrites") {
		t.Fatalf("err %v; want ErrTxInvalid naming the writes type", err)
	}
	if _, err := sqsbatch.FromEnvTx(orderKey, func(context.Context, order, idempotency.Reservation) (storetest.MemoryWrites, string, error) {
		return nil, "", nil
	},
		getenv(settings().Encode()), handler.WithStore(storetest.NewMemoryStore())); err != nil {
		t.Fatalf("the store's own writes type: %v", err)
	}
}

// TestDefaultClientKeepsTheCABundle: the default DynamoDB client trusts the
// CA bundle the environment names (AWS_CA_BUNDLE), as the SDK's default
// configuration does; widening the connection pool must not drop it.
func TestDefaultClientKeepsTheCABundle(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"no table"}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CA_BUNDLE": bundle, "AWS_ENDPOINT_URL_DYNAMODB": srv.URL, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
	} {
		t.Setenv(k, v)
	}
	h, err := sqsbatch.FromEnv(orderKey, func(context.Context, order, idempotency.Reservation) (string, error) { return "", nil },
		getenv(settings().Encode()), handler.WithLogger(slog.New(slog.DiscardHandler)), handler.WithMetrics(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", Body: `{"orderId":"o-1","amount":5}`}}})
	if requests.Load() == 0 {
		t.Fatal("no request reached the server: the client did not trust AWS_CA_BUNDLE")
	}
}

// TestLogLevels: under Lambda's advanced logging controls, the default
// logger honours the application log level (AWS_LAMBDA_LOG_LEVEL): at WARN
// a processed record writes no line and a failed one still does; every
// line has a level; the metrics line carries the configured level, so that
// Lambda keeps it. The test runs itself as the handler, in a process of its
// own, for its standard error and output.
func TestLogLevels(t *testing.T) {
	if os.Getenv("HANDLER_TEST_LEVELS") == "1" {
		h, err := sqsbatch.FromEnv(orderKey, func(_ context.Context, o order, _ idempotency.Reservation) (string, error) {
			if o.Amount < 0 {
				return "", errors.New("payment declined")
			}
			return "ok", nil
		}, handler.WithGetenv(func(k string) string {
			if v, ok := settings().Encode()[k]; ok {
				return v
			}
			return os.Getenv(k) // AWS_LAMBDA_LOG_LEVEL, as Lambda sets it
		}), handler.WithStore(storetest.NewMemoryStore()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sent := map[string]string{"SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)} // as SQS sends it: no warning for want of an origin time
		_, _ = h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
			{MessageId: "ok", Body: `{"orderId":"o-1","amount":5}`, Attributes: sent},
			{MessageId: "declined", Body: `{"orderId":"o-2","amount":-5}`, Attributes: sent},
		}})
		return
	}
	for level, want := range map[string][]string{"": {"ok", "declined"}, "INFO": {"ok", "declined"}, "WARN": {"declined"}, "ERROR": {"declined"}} {
		t.Run("level="+level, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLogLevels$")
			cmd.Env = append(os.Environ(), "HANDLER_TEST_LEVELS=1", "AWS_LAMBDA_LOG_LEVEL="+level)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			var ids []string
			for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				var line struct {
					Level     string
					MessageID string `json:"message_id"`
				}
				if err := json.Unmarshal([]byte(l), &line); err != nil || line.Level == "" {
					t.Fatalf("a line without a level: %q", l)
				}
				if !lambdaKeeps(t, l, level) {
					t.Errorf("Lambda drops %s at %s", l, level)
				}
				ids = append(ids, line.MessageID)
			}
			if strings.Join(ids, ",") != strings.Join(want, ",") {
				t.Errorf("lines for %v, want %v", ids, want)
			}
			wantLevel := level
			if wantLevel == "" {
				wantLevel = "INFO"
			}
			if !strings.Contains(stdout.String(), `"level":"`+wantLevel+`"`) || !strings.Contains(stdout.String(), `"Failed":1`) {
				t.Errorf("metrics line %q: want level %s and the counts", stdout.String(), wantLevel)
			}
		})
	}
}
