// Command coldstart measures a handler's cold init: the time from starting
// its bootstrap to its first request to the Lambda Runtime API (the "next
// invocation" poll that ends the init phase), against a stand-in Runtime
// API on a loopback port. It prints the median and the range of -n starts,
// and the bootstrap's size.
//
//	go build -o /tmp/bootstrap ./app/cmd/charge
//	go run ./cmd/coldstart -n 50 /tmp/bootstrap
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/idempotent-consumer/idempotent-consumer/internal/contract"
)

func main() {
	n := flag.Int("n", 30, "starts")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: coldstart [-n starts] bootstrap")
	}
	bin := flag.Arg(0)
	st, err := os.Stat(bin)
	if err != nil {
		log.Fatal(err)
	}
	polled := make(chan time.Time, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case polled <- time.Now():
			default:
			}
			<-r.Context().Done() // no invocation: the process is killed
		}))
	}()
	s := contract.Defaults(30 * time.Second)
	s.Table, s.Namespace, s.Consumer = "idempotency", "charge", "ChargeOrder"
	env := append(os.Environ(), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKID", "AWS_SECRET_ACCESS_KEY=secret", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_LAMBDA_FUNCTION_NAME=ChargeOrder", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256")
	for k, v := range s.Encode() {
		env = append(env, k+"="+v)
	}
	var took []time.Duration
	for range *n {
		cmd := exec.Command(bin)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		select {
		case at := <-polled:
			took = append(took, at.Sub(start))
		case <-time.After(10 * time.Second):
			log.Fatal("no Runtime API request within 10s")
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	slices.Sort(took)
	fmt.Printf("bootstrap %s: %d bytes; cold init (start to first Runtime API request), %d starts: median %v, min %v, max %v\n",
		bin, st.Size(), len(took), took[len(took)/2].Round(10*time.Microsecond), took[0].Round(10*time.Microsecond), took[len(took)-1].Round(10*time.Microsecond))
}
