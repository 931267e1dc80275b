package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// build compiles the main package pkg of this module for this machine as
// the construct builds a bootstrap (lambda.norpc, no cgo) into out.
func build(pkg, out string, tags ...string) error {
	cmd := exec.Command("go", "build", "-tags", strings.Join(append([]string{"lambda.norpc"}, tags...), ","), "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", pkg, err, msg)
	}
	return nil
}

// server is the DynamoDB-compatible server (bench/cmd/ddbserver: kumo
// behind TLS), a process of its own.
type server struct {
	endpoint, certFile string
	cmd                *exec.Cmd
}

func startServer(dir string) (*server, error) {
	bin := filepath.Join(dir, "ddbserver")
	if err := build(modulePath+"/cmd/ddbserver", bin); err != nil {
		return nil, err
	}
	s := &server{certFile: filepath.Join(dir, "ddbserver.pem")}
	s.cmd = exec.Command(bin, "-cert", s.certFile)
	s.cmd.Stderr = os.Stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if f := strings.Fields(line); err != nil || len(f) != 2 {
		s.stop()
		return nil, fmt.Errorf("ddbserver did not start (%q): %v", line, err)
	} else {
		s.endpoint = f[0]
	}
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// emulator is aws-lambda-rie running one bootstrap: one execution
// environment, one invocation at a time.
type emulator struct {
	cmd    *exec.Cmd
	url    string
	http   *http.Client
	mu     sync.Mutex
	tail   []string // the last lines the emulator and the bootstrap printed
	lines  int
	exited chan struct{}
}

// startEmulator starts rie with bootstrap and env on free loopback ports
// and waits until both of its listeners are up.
func startEmulator(rie, bootstrap string, env []string) (*emulator, error) {
	invokeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	e := &emulator{url: "http://" + invokeAddr + "/2015-03-31/functions/function/invocations",
		http: &http.Client{Timeout: 10 * time.Minute}, exited: make(chan struct{})}
	e.cmd = exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bootstrap)
	e.cmd.Env = env
	stdout, err := e.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	e.cmd.Stderr = e.cmd.Stdout // one pipe, read to its end
	if err := e.cmd.Start(); err != nil {
		return nil, err
	}
	go e.drain(stdout)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if listening(invokeAddr) && listening(apiAddr) {
			return e, nil
		}
		select {
		case <-e.exited:
			return nil, fmt.Errorf("the emulator exited: %s", e.lastLines())
		default:
		}
	}
	e.stop()
	return nil, fmt.Errorf("the emulator did not listen on %s and %s within 10s", invokeAddr, apiAddr)
}

// drain reads the output as Lambda's log pipe would, keeping the last
// lines for an error's message.
func (e *emulator) drain(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		e.mu.Lock()
		e.lines++
		e.tail = append(e.tail, sc.Text())
		if len(e.tail) > 20 {
			e.tail = e.tail[1:]
		}
		e.mu.Unlock()
	}
	_ = e.cmd.Wait()
	close(e.exited)
}

func (e *emulator) lastLines() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.tail, "\n")
}

// answer is the function's answer to one SQS batch: its failed records, or
// the function error the emulator reports.
type answer struct {
	BatchItemFailures []struct {
		ItemIdentifier string `json:"itemIdentifier"`
	} `json:"batchItemFailures"`
	ErrorType    string `json:"errorType"`
	ErrorMessage string `json:"errorMessage"`
}

// invoke sends one payload and returns the function's answer.
func (e *emulator) invoke(ctx context.Context, payload []byte) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return answer{}, err
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil || resp.StatusCode != http.StatusOK {
		return answer{ErrorType: fmt.Sprintf("HTTP %d", resp.StatusCode), ErrorMessage: string(body)}, nil
	}
	return a, nil
}

func (e *emulator) stop() {
	_ = e.cmd.Process.Kill()
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
	}
}

// bootstrapPID is the pid of the emulator's child (the runtime process it
// started at the first invocation), 0 if it has none.
func (e *emulator) bootstrapPID() int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", e.cmd.Process.Pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				return pid
			}
		}
	}
	return 0
}

// peakRSS is VmHWM of /proc/pid/status, the process's peak resident set,
// in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM in " + fmt.Sprintf("/proc/%d/status", pid))
}

// environ is the value of name in the environment process pid started
// with.
func environ(pid int, name string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
