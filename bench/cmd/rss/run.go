package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

// modulePath is the bench module's path, for building its commands from
// any directory inside it.
const modulePath = "github.com/idempotent-consumer/idempotent-consumer/bench"

// functionTimeout is the function's timeout: the largest batch takes a
// while on a shared machine, and Lambda allows 15 minutes.
const functionTimeout = 900 * time.Second

// policies are the GC settings a run can be made under: the environment
// they add to the function's.
var policies = map[string][]string{
	"tuned":      nil,                            // handler.TuneGC: GOGC 400, limit 3/4 of the function's memory
	"nolimit":    {"GOMEMLIMIT=off"},             // TuneGC's GOGC 400 without the limit
	"go-default": {"GOGC=100", "GOMEMLIMIT=off"}, // Go's own defaults
}

// spec is one run: records records through one execution environment of
// memoryMB, in batches of up to batch records (and 6 MB), under policy, in
// the delivery's bodies.
type spec struct {
	memoryMB, records, batch int
	policy                   string
	delivery                 string // "envelope" (SNS to SQS, the default), "raw" or "small" (raw)
}

// result is what a run measured.
type result struct {
	spec
	invocations, largest int      // invocations made; records in the largest
	answered             int      // records not reported failed, of invocations that answered
	ledger               int      // rows in the effect's table: the effects that ran
	failed               []string // function errors (an OOM kill among them)
	peakRSS              int64    // VmHWM of the bootstrap at the end, 0 if it was gone
	cgroupPeak           int64    // the cgroup's peak, 0 when not enforced
	oomKills             int
	restarts             int // bootstraps started after the first (a crash, an OOM kill)
	elapsed              time.Duration
}

// rig is what every run shares: the server, the built bootstrap, the
// emulator's path and a client for the tables.
type rig struct {
	dir, rie, bootstrap string
	srv                 *server
	db                  *dynamodb.Client
	enforce             bool
	enforcement         string // how the limit is enforced, or why not
	runs                int
}

// run makes one run in a fresh execution environment and tables of its own.
func (g *rig) run(ctx context.Context, sp spec) (result, error) {
	g.runs++
	r := result{spec: sp}
	idem, ledger := fmt.Sprintf("rss-%d-idempotency", g.runs), fmt.Sprintf("rss-%d-ledger", g.runs)
	for _, t := range []string{idem, ledger} {
		if err := g.createTable(ctx, t); err != nil {
			return r, err
		}
	}
	bootstrap, cg, err := g.limited(sp.memoryMB)
	if err != nil {
		return r, err
	}
	if cg != nil {
		defer func() { _ = cg.remove() }()
	}
	em, err := startEmulator(g.rie, bootstrap, g.environment(sp, idem, ledger))
	if err != nil {
		return r, err
	}
	start := time.Now()
	err = g.invokeAll(ctx, em, &r)
	r.elapsed = time.Since(start)
	if pid := em.bootstrapPID(); pid != 0 {
		r.peakRSS, _ = peakRSS(pid)
		if got := environ(pid, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"); got != strconv.Itoa(sp.memoryMB) && err == nil {
			err = fmt.Errorf("the bootstrap's AWS_LAMBDA_FUNCTION_MEMORY_SIZE is %q, want %d", got, sp.memoryMB)
		}
	}
	if cg != nil {
		r.cgroupPeak, r.oomKills = cg.peak(), cg.oomKills()
	}
	em.stop()
	if err != nil {
		return r, fmt.Errorf("%v\n%s", err, em.lastLines())
	}
	r.ledger, err = g.count(ctx, ledger)
	return r, err
}

// invokeAll feeds the run's records to the emulator, one batch after
// another, as the event source mapping would.
func (g *rig) invokeAll(ctx context.Context, em *emulator, r *result) error {
	next := newMessages(g.runs, r.delivery).batches(r.records, r.batch)
	pid := 0
	for {
		payload, n, err := next()
		if err != nil || payload == nil {
			return err
		}
		a, err := em.invoke(ctx, payload)
		if err != nil {
			return err
		}
		r.invocations++
		r.largest = max(r.largest, n)
		if a.ErrorType != "" {
			r.failed = append(r.failed, a.ErrorType+": "+a.ErrorMessage)
		} else {
			r.answered += n - len(a.BatchItemFailures)
		}
		if p := em.bootstrapPID(); p != pid {
			if pid != 0 {
				r.restarts++
			}
			pid = p
		}
	}
}

// limited returns the bootstrap to start: the built one, or, when the
// limit is enforced, a wrapper that puts it in a memory cgroup of memoryMB.
func (g *rig) limited(memoryMB int) (string, *memCgroup, error) {
	if !g.enforce {
		return g.bootstrap, nil, nil
	}
	cg, err := newMemCgroup(fmt.Sprintf("rss-%d-%d", os.Getpid(), g.runs), memoryMB)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(g.dir, strconv.Itoa(g.runs))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	script, err := cg.wrap(dir, g.bootstrap)
	return script, cg, err
}

// environment is the function's: its contract as the construct writes it,
// what Lambda sets (region, credentials, memory, timeout, name), the
// server's endpoint and certificate, and the policy's GC variables.
func (g *rig) environment(sp spec, idem, ledger string) []string {
	s := contract.Defaults(functionTimeout)
	s.Table, s.Namespace, s.Consumer, s.Delivery = idem, "orders", "Orders/Charge", "envelope"
	if sp.delivery != "envelope" {
		s.Delivery = "raw"
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDRSS", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_ENDPOINT_URL_DYNAMODB=" + g.srv.endpoint, "AWS_CA_BUNDLE=" + g.srv.certFile,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(sp.memoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(int(functionTimeout/time.Second)),
		"AWS_LAMBDA_FUNCTION_NAME=charge", "LEDGER_TABLE=" + ledger}
	for k, v := range s.Encode() {
		env = append(env, k+"="+v)
	}
	return append(env, policies[sp.policy]...)
}

func (g *rig) createTable(ctx context.Context, name string) error {
	_, err := g.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	return err
}

// count is the number of items in table.
func (g *rig) count(ctx context.Context, table string) (int, error) {
	n := 0
	p := dynamodb.NewScanPaginator(g.db, &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		n += int(page.Count)
	}
	return n, nil
}
