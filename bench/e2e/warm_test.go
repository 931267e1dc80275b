package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/handler"
	"github.com/idempotent-consumer/idempotent-consumer/lambda/outcome"
)

// The warm run: what a long-lived execution environment costs per record,
// over thousands of records, and what it holds in memory at its peak. Each
// run is a process of its own (this test binary, started again as a child),
// so that its peak RSS is the run's and nothing else's, and so that its GC
// starts from a fresh heap as an execution environment's does.
var (
	warmRecords = flag.String("warm.records", "2000,10000", "records per warm run, comma-separated")
	warmGC      = flag.String("warm.gc", "tuned", "GC policies of the warm runs, comma-separated: tuned (handler.TuneGC, as Start runs it), or a GOGC value that overrides its target")
)

// warmChildVar carries a child's run: "<library|floor> <case> <records>
// <run>", run numbering the children of a benchmark process so that their
// tables on the one server are distinct.
const warmChildVar = "E2E_WARM_CHILD"

// warmScenarios are the benchmark's cases and one of the warm runs' own:
// new facts into a completed-key cache large enough for all of them, whose
// live heap grows with the run (the cache's entries), so that what the GC
// policy makes of a growing heap shows.
func warmScenarios() []scenario {
	return append(scenarios(), scenario{name: "new-into-cache", cache: 10000, want: outcome.Processed, keys: freshKeys(batchSize)})
}

// warmRuns counts the children started.
var warmRuns atomic.Int64

// warmResult is what a child measured, written to its standard output as
// one JSON line.
type warmResult struct {
	CPUMicrosPerRecord float64 `json:"cpu_us_per_rec"`
	AllocsPerRecord    float64 `json:"allocs_per_rec"`
	BytesPerRecord     float64 `json:"bytes_per_rec"`
	RequestsPerRecord  float64 `json:"req_per_rec"`
	PeakRSSBytes       int64   `json:"peak_rss_bytes"`
	HeapInUseBytes     uint64  `json:"heap_inuse_bytes"`
}

// BenchmarkWarm runs -warm.records records of each case through
// sqsbatch.FromEnv in a fresh process, as one warm execution environment would
// receive them (batches of batchSize), under each -warm.gc policy.
func BenchmarkWarm(b *testing.B) { benchmarkWarm(b, "library") }

// BenchmarkWarmFloor is the same records through the minimal signed client
// (floor.go), in a fresh process each: the floor of each case at each size.
func BenchmarkWarmFloor(b *testing.B) { benchmarkWarm(b, "floor") }

func benchmarkWarm(b *testing.B, side string) {
	sizes, err := counts(*warmRecords)
	if err != nil {
		b.Fatal(err)
	}
	policies := strings.Split(*warmGC, ",")
	for _, n := range sizes {
		for _, sc := range warmScenarios() {
			if side == "floor" && sc.cache > 0 {
				continue // no request: no floor
			}
			for _, gc := range policies {
				b.Run(fmt.Sprintf("records=%d/case=%s/gc=%s", n, sc.name, gc), func(b *testing.B) {
					var sum warmResult
					runs := 0
					for b.Loop() {
						r, err := runWarmChild(side, sc.name, n, gc)
						if err != nil {
							b.Fatal(err)
						}
						runs++
						sum.CPUMicrosPerRecord += r.CPUMicrosPerRecord
						sum.AllocsPerRecord += r.AllocsPerRecord
						sum.BytesPerRecord += r.BytesPerRecord
						sum.RequestsPerRecord += r.RequestsPerRecord
						sum.PeakRSSBytes = max(sum.PeakRSSBytes, r.PeakRSSBytes)
					}
					k := float64(runs)
					b.ReportMetric(sum.CPUMicrosPerRecord/k, "cpu-µs/rec")
					b.ReportMetric(sum.AllocsPerRecord/k, "allocs/rec")
					b.ReportMetric(sum.BytesPerRecord/k, "B/rec")
					b.ReportMetric(sum.RequestsPerRecord/k, "req/rec")
					b.ReportMetric(float64(sum.PeakRSSBytes)/(1<<20), "peak-RSS-MiB")
					b.ReportMetric(0, "ns/op") // wall time is not the measure here
				})
			}
		}
	}
}

func counts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < batchSize {
			return nil, fmt.Errorf("-warm.records %q: want record counts of at least %d", list, batchSize)
		}
		out = append(out, n)
	}
	return out, nil
}

// runWarmChild starts this test binary as a child that runs one warm run
// against the server of this process, and returns what it measured.
func runWarmChild(side, name string, n int, gc string) (warmResult, error) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("%s=%s %s %d %d", warmChildVar, side, name, n, warmRuns.Add(1)),
		"E2E_SERVER="+srv.endpoint+" "+srv.control+" "+srv.certFile)
	if gc != "tuned" {
		cmd.Env = append(cmd.Env, "GOGC="+gc)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return warmResult{}, fmt.Errorf("warm run %s %s %d: %v: %s", side, name, n, err, lastLines(errOut.String(), 5))
	}
	var r warmResult
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &r); err != nil {
		return warmResult{}, fmt.Errorf("warm run %s %s %d wrote %q: %v", side, name, n, out.String(), err)
	}
	return r, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// warmChild is the child's whole life: it runs the run spec names against
// the parent's server and writes its warmResult; the exit status.
func warmChild(spec string) int {
	stderr := os.Stderr // countStderr replaces os.Stderr
	fail := func(err error) int {
		fmt.Fprintln(stderr, "warm run:", err)
		return 1
	}
	var side, name string
	var n int
	var run int64
	if _, err := fmt.Sscan(spec, &side, &name, &n, &run); err != nil {
		return fail(fmt.Errorf("%s=%q: %v", warmChildVar, spec, err))
	}
	tables.Store(run * 100) // names no other child's table takes
	s := strings.Fields(os.Getenv("E2E_SERVER"))
	if len(s) != 3 {
		return fail(fmt.Errorf("E2E_SERVER=%q", os.Getenv("E2E_SERVER")))
	}
	srv = &server{endpoint: s[0], control: s[1], certFile: s[2]}
	// What sqsbatch.Start does before it builds the handler, for a function
	// of 256 MB (the parent's environment, inherited).
	handler.TuneGC()
	var err error
	if admin, err = adminClient(); err != nil {
		return fail(err)
	}
	// The records' lines go to a pipe that is drained, as on Lambda.
	if logs, err = countStderr(); err != nil {
		return fail(err)
	}
	var sc scenario
	for _, c := range warmScenarios() {
		if c.name == name {
			sc = c
		}
	}
	if sc.name == "" {
		return fail(fmt.Errorf("no case %q", name))
	}
	batchOf, err := warmBatches(side, sc)
	if err != nil {
		return fail(err)
	}
	cpu0, m0, w0, _ := start()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	bytes0 := ms.TotalAlloc
	batches := n / batchSize
	for i := 1; i <= batches; i++ {
		if err := batchOf(i); err != nil {
			return fail(err)
		}
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms)
	w, err := srv.stats()
	if err != nil {
		return fail(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return fail(err)
	}
	records := float64(batches * batchSize)
	r := warmResult{
		CPUMicrosPerRecord: float64(cpu.Microseconds()) / records,
		AllocsPerRecord:    float64(ms.Mallocs-m0) / records,
		BytesPerRecord:     float64(ms.TotalAlloc-bytes0) / records,
		RequestsPerRecord:  float64(w.minus(w0).Requests) / records,
		PeakRSSBytes:       ru.Maxrss << 10, // KiB on Linux
		HeapInUseBytes:     ms.HeapInuse,
	}
	out, err := json.Marshal(r)
	if err != nil {
		return fail(err)
	}
	fmt.Println(string(out))
	return 0
}

// warmBatches prepares sc's consumer (or the floor's) as the benchmarks do,
// with its warm-up batch, and returns the function that runs batch i.
func warmBatches(side string, sc scenario) (func(int) error, error) {
	if side == "floor" {
		f, err := newFloor()
		if err != nil {
			return nil, err
		}
		fc, err := f.consumer(sc)
		if err != nil {
			return nil, err
		}
		if sc.prepare {
			if err := fc.batch(sc.keys(0), false); err != nil {
				return nil, err
			}
		}
		if err := fc.batch(sc.keys(0), sc.prepare); err != nil {
			return nil, err
		}
		return func(i int) error { return fc.batch(sc.keys(i), sc.prepare) }, nil
	}
	c, _, err := newConsumer(sc)
	if err != nil {
		return nil, err
	}
	if sc.prepare {
		for range 2 {
			if err := c.batch(sc.keys(0), outcome.Processed); err != nil {
				return nil, err
			}
		}
	}
	if err := c.batch(sc.keys(0), sc.want); err != nil {
		return nil, err
	}
	return func(i int) error { return c.batch(sc.keys(i), sc.want) }, nil
}

// TestWarmRun checks that a warm run's child measures what it says: the
// requests of a new record (reserve and complete) and of a duplicate (one),
// on both sides, and a peak RSS of its own. It checks no figure of speed.
func TestWarmRun(t *testing.T) {
	for _, c := range []struct {
		side, name string
		req        float64
	}{{"library", "new", 2}, {"library", "duplicate", 1}, {"floor", "new", 2}, {"floor", "duplicate", 1}} {
		r, err := runWarmChild(c.side, c.name, 4*batchSize, "tuned")
		if err != nil {
			t.Fatal(err)
		}
		if r.RequestsPerRecord != c.req || r.AllocsPerRecord <= 0 || r.BytesPerRecord <= 0 || r.CPUMicrosPerRecord <= 0 || r.PeakRSSBytes < 1<<20 {
			t.Errorf("%s %s: %+v; want %v requests per record and figures of its own", c.side, c.name, r, c.req)
		}
	}
}
