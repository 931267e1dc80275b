// Command coldstart measures handlers' cold init: the time from starting a
// bootstrap to its first request to the Lambda Runtime API (the "next
// invocation" poll that ends the init phase), against a stand-in Runtime
// API on a loopback port. Given several bootstraps it starts them in turn,
// -n times each, so that a shared machine's busy moments fall on each of
// them alike, and prints for each its size, the median and range of its
// starts, and the median CPU time of the process (user and system, up to
// the poll: the process is killed while it waits on it), which a loaded
// machine stretches less than the wall time.
//
// The bootstrap's environment is the one Lambda gives a function (its
// defined runtime variables, with the role's credentials and the Runtime
// API) and the contract's, as the construct writes it: nothing of the
// caller's, whose variables (a machine's AWS_CA_BUNDLE, read and parsed at
// init) Lambda does not set. -env adds one.
//
// With -inittrace k it also starts each bootstrap -n times with
// GODEBUG=inittrace=1 and prints the median of the package initialisers'
// total, when the last one ended, and the k packages whose initialisers
// took longest (median of the starts).
//
//	go build -o /tmp/bootstrap ./app/cmd/charge
//	go run ./cmd/coldstart -n 20 -inittrace 8 /tmp/bootstrap /tmp/minimal
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

func main() {
	n := flag.Int("n", 20, "starts of each bootstrap")
	top := flag.Int("inittrace", 0, "also trace package initialisers (GODEBUG=inittrace=1) and print the `k` slowest")
	var extra []string
	flag.Func("env", "add `NAME=value` to the bootstraps' environment (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("%q is not NAME=value", v)
		}
		extra = append(extra, v)
		return nil
	})
	printEnv := flag.Bool("printenv", false, "print the bootstraps' environment, one NAME=value a line, and exit (to start one by hand: env -i $(coldstart -printenv) bootstrap)")
	flag.Parse()
	if *printEnv {
		for _, kv := range append(lambdaEnv("127.0.0.1:9001"), extra...) {
			fmt.Println(kv)
		}
		return
	}
	if flag.NArg() == 0 {
		log.Fatal("usage: coldstart [-n starts] [-inittrace k] bootstrap...")
	}
	api := newRuntimeAPI()
	runs := make([]*run, flag.NArg())
	for i, bin := range flag.Args() {
		st, err := os.Stat(bin)
		if err != nil {
			log.Fatal(err)
		}
		runs[i] = &run{bin: bin, size: st.Size()}
	}
	env := append(lambdaEnv(api.addr), extra...)
	traced := append(slices.Clip(env), "GODEBUG=inittrace=1")
	for range *n {
		for _, r := range runs {
			r.start(api, env)
			if *top > 0 {
				r.trace(api, traced)
			}
		}
	}
	for _, r := range runs {
		r.print(*top)
	}
}

// run is one bootstrap's starts.
type run struct {
	bin       string
	size      int64
	took, cpu []time.Duration
	traces    []initTrace
}

// start starts the bootstrap with env and records the time to its first
// Runtime API request and the CPU time it used.
func (r *run) start(api *runtimeAPI, env []string) {
	took, cpu, _ := api.start(r.bin, env)
	r.took, r.cpu = append(r.took, took), append(r.cpu, cpu)
}

// trace starts the bootstrap with env (GODEBUG=inittrace=1) and records
// its package initialisers.
func (r *run) trace(api *runtimeAPI, env []string) {
	took, _, stderr := api.start(r.bin, env)
	t := parseInitTrace(stderr)
	t.took = took
	r.traces = append(r.traces, t)
}

func (r *run) print(top int) {
	fmt.Printf("bootstrap %s: %d bytes; cold init (start to first Runtime API request), %d starts: median %v (min %v, max %v), CPU median %v\n",
		r.bin, r.size, len(r.took), ms(median(r.took)), ms(slices.Min(r.took)), ms(slices.Max(r.took)), ms(median(r.cpu)))
	if top == 0 || len(r.traces) == 0 {
		return
	}
	var total, end, rest []time.Duration
	byPkg := map[string][]time.Duration{}
	for _, t := range r.traces {
		total, end, rest = append(total, t.total()), append(end, t.end), append(rest, t.took-t.end)
		for p, d := range t.clock {
			byPkg[p] = append(byPkg[p], d)
		}
	}
	fmt.Printf("  package initialisers (GODEBUG=inittrace=1), %d starts: %d packages, median total %v, the last ending at %v, then %v to the poll (medians; the exec and the runtime's start before runtime.main are in the last)\n",
		len(r.traces), len(byPkg), ms(median(total)), ms(median(end)), ms(median(rest)))
	type pkg struct {
		name string
		d    time.Duration
	}
	var pkgs []pkg
	for p, ds := range byPkg {
		for len(ds) < len(r.traces) {
			ds = append(ds, 0) // a start whose trace lacks the package
		}
		pkgs = append(pkgs, pkg{p, median(ds)})
	}
	slices.SortFunc(pkgs, func(a, b pkg) int { return int(b.d - a.d) })
	for _, p := range pkgs[:min(top, len(pkgs))] {
		fmt.Printf("    %8v  %s\n", ms(p.d), p.name)
	}
}

// initTrace is one start's package initialisers: each package's clock
// time, when the last one ended (from runtime.main's start, as the trace
// counts), and the time from the exec to the first poll.
type initTrace struct {
	clock     map[string]time.Duration
	end, took time.Duration
}

func (t initTrace) total() time.Duration {
	var sum time.Duration
	for _, d := range t.clock {
		sum += d
	}
	return sum
}

// parseInitTrace reads the runtime's inittrace lines
// ("init net/http @12 ms, 0.10 ms clock, 4712 bytes, 49 allocs") and skips
// any other.
func parseInitTrace(stderr []byte) initTrace {
	t := initTrace{clock: map[string]time.Duration{}}
	for line := range bytes.Lines(stderr) {
		var pkg string
		var at, clock float64
		if _, err := fmt.Sscanf(string(line), "init %s @%g ms, %g ms clock", &pkg, &at, &clock); err != nil {
			continue
		}
		t.clock[pkg] += msDuration(clock)
		t.end = max(t.end, msDuration(at+clock))
	}
	return t
}

func msDuration(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// runtimeAPI is the stand-in Runtime API: it notes the time of each "next
// invocation" poll and holds it open.
type runtimeAPI struct {
	addr   string
	polled chan time.Time
}

func newRuntimeAPI() *runtimeAPI {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	api := &runtimeAPI{addr: ln.Addr().String(), polled: make(chan time.Time, 1)}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case api.polled <- time.Now():
			default:
			}
			<-r.Context().Done() // no invocation: the process is killed
		}))
	}()
	return api
}

// start starts bin with env, waits for its first poll and kills it; it
// returns the time to the poll, the CPU time the process used, and what
// it wrote on standard error.
func (api *runtimeAPI) start(bin string, env []string) (time.Duration, time.Duration, []byte) {
	cmd := exec.Command(bin)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	var took time.Duration
	select {
	case at := <-api.polled:
		took = at.Sub(start)
	case <-time.After(10 * time.Second):
		log.Fatalf("%s: no Runtime API request within 10s: %s", bin, stderr.Bytes())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return took, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), stderr.Bytes()
}

// lambdaEnv is the environment of a queue consumer as the construct and
// Lambda set it, with the Runtime API at addr: Lambda's defined runtime
// environment variables ("Defined runtime environment variables",
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html)
// and the contract's.
func lambdaEnv(addr string) []string {
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "idempotency", "charge", "ChargeOrder"
	env := []string{"AWS_LAMBDA_RUNTIME_API=" + addr, "AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKID", "AWS_SECRET_ACCESS_KEY=secret", "AWS_SESSION_TOKEN=token",
		"AWS_EXECUTION_ENV=AWS_Lambda_provided.al2023", "AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_FUNCTION_NAME=ChargeOrder", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/ChargeOrder", "AWS_LAMBDA_LOG_STREAM_NAME=[$LATEST]0",
		"_HANDLER=bootstrap", "LAMBDA_TASK_ROOT=/var/task", "LAMBDA_RUNTIME_DIR=/var/runtime", "TZ=:UTC",
		"LANG=en_US.UTF-8", "PATH=/usr/local/bin:/usr/bin/:/bin:/opt/bin"}
	for k, v := range s.Encode() {
		env = append(env, k+"="+v)
	}
	return env
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

func ms(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
