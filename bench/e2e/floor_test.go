package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// floor makes the requests of each case with nothing but net/http, a
// SigV4 signature (the SDK's signer, used directly) and bodies written by
// hand: the least a client can do to send them over the same TLS
// connections and check the answers (status, x-amz-crc32, the error type,
// the old item of a failed condition). It lives in this benchmark only.
type floor struct {
	client   *http.Client
	endpoint string
	signer   *v4.Signer
	creds    aws.Credentials
	owners   atomic.Int64
}

func newFloor() (*floor, error) {
	pem, err := os.ReadFile(srv.certFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &floor{
		client: &http.Client{Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: batchSize,
		}},
		endpoint: srv.endpoint,
		signer:   v4.NewSigner(),
		creds:    aws.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: os.Getenv("AWS_SESSION_TOKEN")},
	}, nil
}

type floorConsumer struct {
	f              *floor
	sc             scenario
	table, wallets string
}

func (f *floor) consumer(sc scenario) (*floorConsumer, error) {
	table, err := newTable(admin, "floor")
	if err != nil {
		return nil, err
	}
	fc := &floorConsumer{f: f, sc: sc, table: table}
	if sc.tx {
		if fc.wallets, err = newTable(admin, "floor-wallets"); err != nil {
			return nil, err
		}
	}
	return fc, nil
}

// batch makes the requests of one batch, one goroutine per distinct key.
// duplicate says the keys are completed already.
func (fc *floorConsumer) batch(keys []string, duplicate bool) error {
	seen := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		wg.Go(func() {
			if err := fc.record("charge#"+k, duplicate); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

const floorHash = "v2:Xq3bBfE0cW3f9k8nqZ1X8n2vQyVtqk2p4m4tq9R2c0o"

func (fc *floorConsumer) record(pk string, duplicate bool) error {
	now := time.Now()
	owner := "owner-" + strconv.FormatInt(fc.f.owners.Add(1), 10)
	exp := now.Add(24 * time.Hour).Unix()
	ttl := exp + 7*24*3600
	if fc.sc.tx {
		body := fmt.Appendf(nil, `{"TransactItems":[{"Put":{"TableName":%q,"Item":%s,"ConditionExpression":%q,"ExpressionAttributeNames":%s,"ExpressionAttributeValues":%s,"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}},`+
			`{"Put":{"TableName":%q,"Item":{"pk":{"S":%q},"amount":{"N":"5000"}}}}]}`,
			fc.table, item(pk, "COMPLETED", owner, exp, ttl, 0, "credited"), reserveCondition, reserveNames, reserveValues(now), fc.wallets, "credit#"+pk)
		_, _, err := fc.f.do("TransactWriteItems", body, "")
		return err
	}
	body := fmt.Appendf(nil, `{"TableName":%q,"Item":%s,"ConditionExpression":%q,"ExpressionAttributeNames":%s,"ExpressionAttributeValues":%s,"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}`,
		fc.table, item(pk, "IN_PROGRESS", owner, exp, ttl, now.Add(30*time.Second).UnixMilli(), ""), reserveCondition, reserveNames, reserveValues(now))
	want := ""
	if duplicate {
		want = "ConditionalCheckFailedException"
	}
	_, resp, err := fc.f.do("PutItem", body, want)
	if err != nil || duplicate {
		if err == nil {
			var e struct{ Item map[string]map[string]string }
			if err = json.Unmarshal(resp, &e); err == nil && e.Item["status"]["S"] != "COMPLETED" {
				err = fmt.Errorf("old item %v", e.Item)
			}
		}
		return err
	}
	if fc.sc.fail {
		body = fmt.Appendf(nil, `{"TableName":%q,"Key":{"pk":{"S":%q}},"ConditionExpression":"#own = :owner AND #st = :in_progress","ExpressionAttributeNames":{"#st":"status","#own":"owner"},"ExpressionAttributeValues":{":owner":{"S":%q},":in_progress":{"S":"IN_PROGRESS"}}}`,
			fc.table, pk, owner)
		_, _, err = fc.f.do("DeleteItem", body, "")
		return err
	}
	body = fmt.Appendf(nil, `{"TableName":%q,"Key":{"pk":{"S":%q}},"UpdateExpression":"SET #st = :completed, #exp = :exp, #ttl = :ttl, #res = :result REMOVE #lease","ConditionExpression":"#own = :owner",`+
		`"ExpressionAttributeNames":{"#st":"status","#lease":"lease_until","#res":"result","#own":"owner","#exp":"expires_at","#ttl":"ttl"},`+
		`"ExpressionAttributeValues":{":completed":{"S":"COMPLETED"},":owner":{"S":%q},":exp":{"N":"%d"},":ttl":{"N":"%d"},":result":{"S":"ch_1"}}}`,
		fc.table, pk, owner, exp, ttl)
	_, _, err = fc.f.do("UpdateItem", body, "")
	return err
}

const reserveCondition = "attribute_not_exists(#pk) OR (#st = :completed AND #exp < :now_s) OR (#st = :in_progress AND #lease < :now_ms AND (#hash = :hash OR #exp < :now_s))"

const reserveNames = `{"#pk":"pk","#exp":"expires_at","#st":"status","#lease":"lease_until","#hash":"payload_hash"}`

func reserveValues(now time.Time) []byte {
	return fmt.Appendf(nil, `{":now_s":{"N":"%d"},":now_ms":{"N":"%d"},":in_progress":{"S":"IN_PROGRESS"},":completed":{"S":"COMPLETED"},":hash":{"S":%q}}`,
		now.Unix(), now.UnixMilli(), floorHash)
}

func item(pk, status, owner string, exp, ttl, lease int64, result string) []byte {
	b := fmt.Appendf(nil, `{"pk":{"S":%q},"status":{"S":%q},"owner":{"S":%q},"expires_at":{"N":"%d"},"ttl":{"N":"%d"},"payload_hash":{"S":%q},"layout":{"N":"1"}`,
		pk, status, owner, exp, ttl, floorHash)
	if lease != 0 {
		b = fmt.Appendf(b, `,"lease_until":{"N":"%d"}`, lease)
	}
	if result != "" {
		b = fmt.Appendf(b, `,"result":{"S":%q}`, result)
	}
	return append(b, '}')
}

// do sends one signed request and checks the answer: 200, or 400 with the
// error type wantErr; the body's CRC32 must match x-amz-crc32.
func (f *floor) do(op string, body []byte, wantErr string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, f.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	sum := sha256.Sum256(body)
	if err := f.signer.SignHTTP(context.Background(), f.creds, req, hex.EncodeToString(sum[:]), "dynamodb", "us-east-1", time.Now()); err != nil {
		return 0, nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	if crc, _ := strconv.ParseUint(resp.Header.Get("x-amz-crc32"), 10, 32); uint32(crc) != crc32.ChecksumIEEE(out) {
		return 0, nil, fmt.Errorf("%s: CRC32 mismatch", op)
	}
	switch {
	case wantErr == "" && resp.StatusCode == http.StatusOK:
	case wantErr != "" && resp.StatusCode == http.StatusBadRequest && bytes.Contains(out, []byte(wantErr)):
	default:
		return 0, nil, fmt.Errorf("%s: %d %s", op, resp.StatusCode, out)
	}
	return resp.StatusCode, out, nil
}
