package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// buildHandler builds the main package pkg for this machine into dir, from
// the module in srcDir, and returns the binary's path.
func buildHandler(ctx context.Context, srcDir, pkg, dir string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg), "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", out, pkg)
	cmd.Dir = srcDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

// runtime is one execution environment: a handler's bootstrap under the
// Lambda runtime interface emulator, which serves the Lambda runtime API to
// the bootstrap and one invocation at a time to us.
type runtime struct {
	name    string
	url     string
	timeout time.Duration
	cmd     *exec.Cmd
	exited  chan struct{}
	http    *http.Client
	wg      sync.WaitGroup // output readers
}

// functionLog creates fn's log file in logDir and returns the line writer of
// its runtimes, which hands each line to also too, when not nil (a
// consumer's metrics reader).
func functionLog(logDir string, fn *Function, also func(string)) (func(string), error) {
	f, err := os.Create(filepath.Join(logDir, fn.Name+".log"))
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	return func(l string) {
		mu.Lock()
		fmt.Fprintln(f, l)
		mu.Unlock()
		if also != nil {
			also(l)
		}
	}, nil
}

// startRuntime starts rie with bootstrap on free loopback ports, retrying
// with other ports if one was taken in the meantime. Every line the
// emulator or the handler prints goes to line.
func startRuntime(ctx context.Context, rie, bootstrap, name string, env []string, timeout time.Duration, line func(string)) (*runtime, error) {
	var lastErr error
	for range 5 {
		rt, err := tryStart(ctx, rie, bootstrap, name, env, timeout, line)
		if err == nil {
			return rt, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("runtime %s: %w", name, lastErr)
}

func tryStart(ctx context.Context, rie, bootstrap, name string, env []string, timeout time.Duration, line func(string)) (*runtime, error) {
	invokeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bootstrap)
	cmd.Env = append(env, "AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(int(timeout/time.Second)), "AWS_LAMBDA_FUNCTION_NAME="+name, "LOG_LEVEL=warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rt := &runtime{name: name, url: "http://" + invokeAddr + "/2015-03-31/functions/function/invocations", timeout: timeout, cmd: cmd, exited: make(chan struct{}),
		http: &http.Client{Timeout: timeout + 5*time.Second}}
	for _, r := range []io.Reader{stdout, stderr} {
		rt.wg.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				line(sc.Text())
			}
		})
	}
	go func() {
		rt.wg.Wait()
		_ = cmd.Wait()
		close(rt.exited)
	}()
	// Both of the emulator's listeners must be up: the handler's runtime
	// API too, which the bootstrap dials at its first invoke (a port taken
	// between freeAddr and the emulator's bind leaves it refusing, and the
	// bootstrap exits: another pair of ports is tried then).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if listening(invokeAddr) && listening(apiAddr) {
			return rt, nil
		}
		select {
		case <-rt.exited:
			return nil, fmt.Errorf("the emulator exited before listening on %s and %s (port taken?)", invokeAddr, apiAddr)
		case <-ctx.Done():
			rt.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	rt.stop()
	return nil, fmt.Errorf("the emulator did not listen on %s and %s within 10s", invokeAddr, apiAddr)
}

// listening reports whether addr accepts a connection.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// invocation is the result of one invoke.
type invocation struct {
	body     []byte
	funcErr  string // errorType of a function error (the emulator answers 200 with it)
	timedOut bool
}

// invoke sends payload and waits for the handler's answer.
func (rt *runtime) invoke(ctx context.Context, payload []byte) (invocation, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rt.url, bytes.NewReader(payload))
	if err != nil {
		return invocation{}, err
	}
	resp, err := rt.http.Do(req)
	if err != nil {
		return invocation{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return invocation{}, err
	}
	inv := invocation{body: body}
	switch {
	case bytes.HasPrefix(body, []byte("Task timed out")):
		inv.timedOut = true
	case resp.StatusCode != http.StatusOK:
		inv.funcErr = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))
	default:
		if t := errorType(body); t != "" {
			inv.funcErr = t
		}
	}
	return inv, nil
}

func (rt *runtime) stop() {
	if rt.cmd.Process != nil {
		_ = rt.cmd.Process.Kill()
	}
	select {
	case <-rt.exited:
	case <-time.After(5 * time.Second):
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

var errNoRIE = errors.New("aws-lambda-rie not found: run `make tools`, or pass -rie")

// findRIE returns the emulator's path: given, on PATH, or in .tools/bin of
// srcDir.
func findRIE(given, srcDir string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p, nil
	}
	p := filepath.Join(srcDir, ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errNoRIE
}
