package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// server is the DynamoDB-compatible server process (cmd/ddbserver).
type server struct {
	endpoint, control, certFile string
	cmd                         *exec.Cmd
}

// startServer builds cmd/ddbserver and starts it on loopback ports, in a
// process of its own.
func startServer(dir string) (*server, error) {
	bin := filepath.Join(dir, "ddbserver")
	build := exec.Command("go", "build", "-o", bin, "../cmd/ddbserver")
	build.Stdout, build.Stderr = os.Stdout, os.Stdout
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build ddbserver: %w", err)
	}
	s := &server{certFile: filepath.Join(dir, "ddbserver.pem")}
	s.cmd = exec.Command(bin, "-cert", s.certFile)
	s.cmd.Stderr = os.Stdout
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ddbserver: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = s.cmd.Process.Kill()
		return nil, fmt.Errorf("ddbserver did not start: %w", err)
	}
	fields := strings.Fields(line)
	if len(fields) != 2 {
		_ = s.cmd.Process.Kill()
		return nil, fmt.Errorf("ddbserver said %q", line)
	}
	s.endpoint, s.control = fields[0], fields[1]
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// wire is what the server saw: requests per operation and bytes on the wire
// (TLS records included) in each direction.
type wire struct {
	Requests int64            `json:"requests"`
	BytesIn  int64            `json:"bytes_in"`
	BytesOut int64            `json:"bytes_out"`
	Conns    int64            `json:"conns"`
	Targets  map[string]int64 `json:"targets"`
}

func (s *server) stats() (wire, error) {
	var w wire
	resp, err := http.Get(s.control + "/stats")
	if err != nil {
		return w, err
	}
	defer resp.Body.Close()
	return w, json.NewDecoder(resp.Body).Decode(&w)
}

func (w wire) minus(o wire) wire {
	d := wire{Requests: w.Requests - o.Requests, BytesIn: w.BytesIn - o.BytesIn, BytesOut: w.BytesOut - o.BytesOut, Conns: w.Conns - o.Conns, Targets: map[string]int64{}}
	for k, v := range w.Targets {
		if n := v - o.Targets[k]; n != 0 {
			d.Targets[k] = n
		}
	}
	return d
}

// adminClient is an SDK client from the same environment as the handler's,
// for creating tables outside the measurements.
func adminClient() (*dynamodb.Client, error) {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg), nil
}

var tables atomic.Int64

// newTable creates a table with a string partition key "pk".
func newTable(ddb *dynamodb.Client, prefix string) (string, error) {
	name := fmt.Sprintf("%s-%d", prefix, tables.Add(1))
	_, err := ddb.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	return name, err
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stderrCounter replaces os.Stderr with a pipe whose bytes it counts: the
// handler's default logger writes there, as on Lambda, where standard error
// is a pipe to the runtime's log collector.
type stderrCounter struct {
	n    atomic.Int64
	orig *os.File
}

func countStderr() (*stderrCounter, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c := &stderrCounter{orig: os.Stderr}
	os.Stderr = w
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			c.n.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

// writeCounter counts the bytes written to it and keeps the last write
// (the last metrics line).
type writeCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	last []byte
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	c.mu.Lock()
	c.last = append(c.last[:0], p...)
	c.mu.Unlock()
	return len(p), nil
}

// lastLine returns the last metrics line, decoded.
func (c *writeCounter) lastLine() (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]any
	return m, json.Unmarshal(c.last, &m)
}

var _ io.Writer = (*writeCounter)(nil)
