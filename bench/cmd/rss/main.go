// Command rss measures what a queue consumer's process holds in memory over
// a run of records, at the memory sizes Lambda gives it. It builds a queue
// consumer's bootstrap (bench/cmd/queueconsumer: sqsbatch.Start, an effect
// that writes a ledger row per order) as the construct builds it, runs it
// under the Lambda runtime interface emulator (aws-lambda-rie) with the
// contract's environment, AWS_LAMBDA_FUNCTION_MEMORY_SIZE set to each size
// and a DynamoDB-compatible server (bench/cmd/ddbserver: kumo behind TLS),
// and feeds it the run's SQS records as an event source mapping would:
// batches of up to -batches records each, never over Lambda's 6 MB payload.
//
// Each run is a fresh execution environment and tables of its own. Where a
// memory cgroup can be made (v2 memory.max, else v1
// memory.limit_in_bytes), the bootstrap runs in one limited to the
// function's memory, so that a bootstrap that outgrows it is killed as on
// Lambda; -enforce=false runs it unlimited. A line per run: the bootstrap's
// peak RSS (VmHWM of its /proc status at the run's end, not the emulator's),
// the cgroup's peak, OOM kills, invocations, the largest batch, the records
// the function answered as done and the ledger's rows (the effects that
// ran). It exits with status 1 when a run lost a record.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	records := flag.Int("records", 10000, "records of each run")
	memory := flag.String("memory", "128,256", "the function's memory sizes in MB, comma-separated")
	batches := flag.String("batches", "10000,10", "batch sizes of the event source mapping, comma-separated (a batch is also cut at 6 MB)")
	policy := flag.String("gc", "tuned,nolimit,go-default", "GC policies, comma-separated: tuned (handler.TuneGC: GOGC 400, limit 3/4 of the memory), nolimit (GOGC 400, GOMEMLIMIT=off), go-default (GOGC 100, GOMEMLIMIT=off)")
	delivery := flag.String("delivery", "envelope,raw,small", "the messages' delivery, comma-separated: envelope (SNS to SQS, the construct's default), raw (raw message delivery: smaller records, more of them in 6 MB), small (raw, a minimal order and the shortest receipt handles: the most records 6 MB holds)")
	enforce := flag.Bool("enforce", true, "run each bootstrap in a memory cgroup limited to the function's memory")
	rie := flag.String("rie", "", "path of aws-lambda-rie (default: <repository>/.tools/bin/aws-lambda-rie)")
	flag.Parse()
	specs, err := plan(*records, *memory, *batches, *policy, *delivery)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rss:", err)
		os.Exit(2)
	}
	if !measure(specs, *rie, *enforce) {
		os.Exit(1)
	}
}

// plan is the runs the flags ask for, in order.
func plan(records int, memory, batches, gc, delivery string) ([]spec, error) {
	sizes, err := ints(memory)
	if err != nil {
		return nil, fmt.Errorf("-memory: %w", err)
	}
	bs, err := ints(batches)
	if err != nil {
		return nil, fmt.Errorf("-batches: %w", err)
	}
	if records < 1 {
		return nil, fmt.Errorf("-records %d: want at least 1", records)
	}
	var out []spec
	for _, d := range strings.Split(delivery, ",") {
		if d != "envelope" && d != "raw" && d != "small" {
			return nil, fmt.Errorf("-delivery: %q is not envelope, raw or small", d)
		}
		for _, mb := range sizes {
			for _, b := range bs {
				if b > maxBatchRecords {
					return nil, fmt.Errorf("-batches: %d is over the largest batch an SQS mapping takes (%d)", b, maxBatchRecords)
				}
				for _, p := range strings.Split(gc, ",") {
					if _, ok := policies[p]; !ok {
						return nil, fmt.Errorf("-gc: no policy %q", p)
					}
					out = append(out, spec{memoryMB: mb, records: records, batch: b, policy: p, delivery: d})
				}
			}
		}
	}
	return out, nil
}

func ints(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers, comma-separated", list)
		}
		out = append(out, n)
	}
	return out, nil
}

// measure makes the runs and prints a line each; false if one failed or
// lost a record.
func measure(specs []spec, rie string, enforce bool) bool {
	ctx := context.Background()
	g, err := newRig(rie, enforce)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rss:", err)
		return false
	}
	defer g.close()
	fmt.Println(g.header())
	fmt.Printf("%-8s %-6s %-7s %-10s %6s %7s %8s %8s %9s %9s %4s %8s\n", "delivery", "memory", "batches", "gc", "invoc", "largest", "answered", "ledger", "peak RSS", "cg peak", "oom", "seconds")
	ok := true
	for _, sp := range specs {
		r, err := g.run(ctx, sp)
		if err != nil {
			fmt.Printf("%-8s %-6d %-7d %-10s run failed: %v\n", sp.delivery, sp.memoryMB, sp.batch, sp.policy, err)
			ok = false
			continue
		}
		fmt.Println(r.line())
		for _, f := range r.failed {
			fmt.Printf("       function error: %.300s\n", f)
		}
		ok = ok && r.complete()
	}
	return ok
}

// complete reports whether every record was done once: answered, and its
// effect in the ledger.
func (r result) complete() bool {
	return len(r.failed) == 0 && r.answered == r.records && r.ledger == r.records
}

func (r result) line() string {
	mib := func(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }
	return fmt.Sprintf("%-8s %-6d %-7d %-10s %6d %7d %8d %8d %9s %9s %4d %8.1f", r.delivery, r.memoryMB, r.batch, r.policy, r.invocations, r.largest,
		r.answered, r.ledger, mib(r.peakRSS), mib(r.cgroupPeak), r.oomKills, r.elapsed.Seconds())
}

// newRig builds the bootstrap and starts the server.
func newRig(rie string, enforce bool) (*rig, error) {
	if rie == "" {
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			return nil, fmt.Errorf("go env GOMOD: %w", err)
		}
		rie = filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "..", ".tools", "bin", "aws-lambda-rie")
	}
	if _, err := os.Stat(rie); err != nil {
		return nil, fmt.Errorf("aws-lambda-rie (run `make tools`, or pass -rie): %w", err)
	}
	dir, err := os.MkdirTemp("", "rss-")
	if err != nil {
		return nil, err
	}
	g := &rig{dir: dir, rie: rie, bootstrap: filepath.Join(dir, "bootstrap"), enforce: enforce}
	if err := build(modulePath+"/cmd/queueconsumer", g.bootstrap); err != nil {
		g.close()
		return nil, err
	}
	if g.srv, err = startServer(dir); err != nil {
		g.close()
		return nil, err
	}
	if enforce {
		g.enforcement = g.probe()
	}
	pem, err := os.ReadFile(g.srv.certFile)
	if err != nil {
		g.close()
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDRSS", "secret", "")),
		config.WithCustomCABundle(bytes.NewReader(pem)))
	if err != nil {
		g.close()
		return nil, err
	}
	g.db = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(g.srv.endpoint) })
	return g, nil
}

// probe makes and removes a cgroup, to say before the runs whether the
// limit is enforced and how; a rig that cannot enforce it runs unlimited.
func (g *rig) probe() string {
	cg, err := newMemCgroup(fmt.Sprintf("rss-%d-probe", os.Getpid()), 128)
	if err != nil {
		g.enforce = false
		return "not enforced: " + err.Error()
	}
	_ = cg.remove()
	return "enforced: " + cg.kind
}

// header says what every run shares.
func (g *rig) header() string {
	how := g.enforcement
	if how == "" {
		how = "not enforced (-enforce=false)"
	}
	return fmt.Sprintf("memory limit: %s\nbootstrap: bench/cmd/queueconsumer under %s; MiB columns: the bootstrap's VmHWM, the cgroup's peak", how, g.rie)
}

func (g *rig) close() {
	if g.srv != nil {
		g.srv.stop()
	}
	_ = os.RemoveAll(g.dir)
}
