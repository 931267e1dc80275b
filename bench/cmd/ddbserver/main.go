// Command ddbserver serves a DynamoDB-compatible endpoint over TLS for the
// end-to-end benchmark, in a process of its own so that none of its CPU is
// counted as the benchmark's.
//
// It runs kumo's DynamoDB on a private loopback port and terminates TLS
// (a self-signed certificate it makes at start, written to -cert) in front
// of it. Two things make its answers look like DynamoDB's rather than the
// emulator's, so that the client does the work it does against the service:
// every response carries x-amz-crc32 (which the SDK verifies) and a request
// id, and a failed conditional PutItem (or a transaction's record Put) that
// asked for ReturnValuesOnConditionCheckFailure=ALL_OLD gets the old item in
// its error, as DynamoDB returns it (kumo does not). It counts requests per
// operation and the bytes on the wire (TLS included) of the TLS connections;
// GET /stats on the control address returns them as JSON.
//
// It prints one line when ready: "<https endpoint> <control URL>".
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sivchari/kumo"
)

func main() {
	certFile := flag.String("cert", "ddbserver.pem", "where to write the server's self-signed certificate (PEM)")
	flag.Parse()
	if err := run(*certFile); err != nil {
		log.Fatal(err)
	}
}

func run(certFile string) error {
	kumoSrv := kumo.NewServer()
	defer kumoSrv.Close()

	cert, pemBytes, err := selfSigned()
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		return err
	}
	st := &stats{targets: map[string]int64{}}
	p := &proxy{upstream: kumoSrv.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, stats: st}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	tlsLn := tls.NewListener(&countingListener{Listener: ln, stats: st}, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ctl, st) }()
	fmt.Printf("https://%s http://%s\n", ln.Addr(), ctl.Addr())
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(tlsLn)
}

// selfSigned makes a certificate for 127.0.0.1 and localhost.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ddbserver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pemBytes, nil
}

// stats are the counts GET /stats returns.
type stats struct {
	requests, bytesIn, bytesOut, conns atomic.Int64
	mu                                 sync.Mutex
	targets                            map[string]int64
}

func (s *stats) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	targets := make(map[string]int64, len(s.targets))
	for k, v := range s.targets {
		targets[k] = v
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"requests": s.requests.Load(), "bytes_in": s.bytesIn.Load(), "bytes_out": s.bytesOut.Load(),
		"conns": s.conns.Load(), "targets": targets,
	})
}

type countingListener struct {
	net.Listener
	stats *stats
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.stats.conns.Add(1)
	return &countingConn{Conn: c, stats: l.stats}, nil
}

type countingConn struct {
	net.Conn
	stats *stats
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.stats.bytesIn.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.stats.bytesOut.Add(int64(n))
	return n, err
}

// proxy forwards a request to kumo and makes its answer look like
// DynamoDB's.
type proxy struct {
	upstream string
	client   *http.Client
	stats    *stats
	ids      atomic.Int64
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	p.stats.requests.Add(1)
	p.stats.mu.Lock()
	p.stats.targets[op]++
	p.stats.mu.Unlock()

	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status, respBody, err := p.forward(r.Header, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if status == http.StatusBadRequest {
		respBody = p.withOldItem(op, r.Header, body, respBody)
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("x-amzn-RequestId", "BENCH"+strconv.FormatInt(p.ids.Add(1), 10))
	h.Set("x-amz-crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(respBody)), 10))
	h.Set("Content-Length", strconv.Itoa(len(respBody)))
	w.WriteHeader(status)
	_, _ = w.Write(respBody)
}

func (p *proxy) forward(header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, p.upstream+"/", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for _, k := range []string{"X-Amz-Target", "Content-Type", "Authorization", "X-Amz-Date"} {
		req.Header.Set(k, header.Get(k))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

type attrs = map[string]json.RawMessage

// withOldItem adds the item that failed a record's condition to the error,
// as DynamoDB does with ReturnValuesOnConditionCheckFailure=ALL_OLD.
func (p *proxy) withOldItem(op string, header http.Header, reqBody, respBody []byte) []byte {
	type put struct {
		TableName                           string
		Item                                attrs
		ReturnValuesOnConditionCheckFailure string
	}
	switch op {
	case "PutItem":
		var in put
		var out map[string]any
		if json.Unmarshal(reqBody, &in) != nil || json.Unmarshal(respBody, &out) != nil ||
			in.ReturnValuesOnConditionCheckFailure != "ALL_OLD" || !strings.HasSuffix(fmt.Sprint(out["__type"]), "ConditionalCheckFailedException") {
			return respBody
		}
		if item := p.get(header, in.TableName, in.Item["pk"]); item != nil {
			out["Item"] = item
			b, _ := json.Marshal(out)
			return b
		}
	case "TransactWriteItems":
		var in struct{ TransactItems []struct{ Put *put } }
		var out map[string]any
		if json.Unmarshal(reqBody, &in) != nil || json.Unmarshal(respBody, &out) != nil || len(in.TransactItems) == 0 {
			return respBody
		}
		first := in.TransactItems[0].Put
		reasons, _ := out["CancellationReasons"].([]any)
		if first == nil || first.ReturnValuesOnConditionCheckFailure != "ALL_OLD" || len(reasons) == 0 {
			return respBody
		}
		r0, _ := reasons[0].(map[string]any)
		if r0 == nil || r0["Code"] != "ConditionalCheckFailed" {
			return respBody
		}
		if item := p.get(header, first.TableName, first.Item["pk"]); item != nil {
			r0["Item"] = item
			b, _ := json.Marshal(out)
			return b
		}
	}
	return respBody
}

// get reads an item from kumo (not counted: it is the server's own work).
func (p *proxy) get(header http.Header, table string, pk json.RawMessage) attrs {
	if pk == nil {
		return nil
	}
	body, _ := json.Marshal(map[string]any{"TableName": table, "Key": attrs{"pk": pk}, "ConsistentRead": true})
	h := header.Clone()
	h.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
	status, resp, err := p.forward(h, body)
	if err != nil || status != http.StatusOK {
		return nil
	}
	var out struct{ Item attrs }
	if json.Unmarshal(resp, &out) != nil {
		return nil
	}
	return out.Item
}
