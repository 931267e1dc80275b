package build

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// TestEndpointKeyHoldsEveryParameter: endpointKey holds each field of
// dynamodb.EndpointParameters, so that two sets of parameters the rules can
// tell apart never share a remembered endpoint. A field a later SDK adds
// fails this test until the key holds it.
func TestEndpointKeyHoldsEveryParameter(t *testing.T) {
	var fields []string
	for f := range reflect.TypeFor[dynamodb.EndpointParameters]().Fields() {
		fields = append(fields, f.Name)
	}
	known := []string{"AccountId", "AccountIdEndpointMode", "Endpoint", "IsSearchOperation", "Region", "ResourceArn", "ResourceArnList", "UseDualStack", "UseFIPS"}
	if slices.Sort(fields); !slices.Equal(fields, known) {
		t.Fatalf("dynamodb.EndpointParameters has %v; endpointKey holds %v", fields, known)
	}
}

// countingResolver is the SDK's resolver, counting its calls.
type countingResolver struct {
	mu    sync.Mutex
	calls int
}

func (c *countingResolver) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return dynamodb.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, p)
}

// TestCachedEndpointsAnswerAsTheSDK: for parameters that differ in each
// field, the remembered endpoint is the SDK's own, and the SDK's resolver
// runs once per distinct set, concurrent requests included.
func TestCachedEndpointsAnswerAsTheSDK(t *testing.T) {
	base := dynamodb.EndpointParameters{Region: aws.String("eu-west-1"), UseFIPS: aws.Bool(false), UseDualStack: aws.Bool(false), ResourceArn: aws.String("idempotency")}
	vary := []func(p *dynamodb.EndpointParameters){
		func(p *dynamodb.EndpointParameters) {},
		func(p *dynamodb.EndpointParameters) { p.Region = aws.String("us-east-2") },
		func(p *dynamodb.EndpointParameters) { p.UseFIPS = aws.Bool(true) },
		func(p *dynamodb.EndpointParameters) { p.UseDualStack = aws.Bool(true) },
		func(p *dynamodb.EndpointParameters) { p.Endpoint = aws.String("https://127.0.0.1:8000") },
		func(p *dynamodb.EndpointParameters) { p.IsSearchOperation = aws.Bool(true) },
		func(p *dynamodb.EndpointParameters) {
			p.AccountId, p.AccountIdEndpointMode = aws.String("123456789012"), aws.String(string(aws.AccountIDEndpointModeRequired))
		},
		func(p *dynamodb.EndpointParameters) {
			p.AccountId, p.AccountIdEndpointMode = aws.String("123456789012"), aws.String(string(aws.AccountIDEndpointModeDisabled))
		},
		func(p *dynamodb.EndpointParameters) {
			p.ResourceArn = aws.String("arn:aws:dynamodb:eu-west-1:210987654321:table/idempotency")
		},
		func(p *dynamodb.EndpointParameters) {
			p.ResourceArn, p.ResourceArnList = nil, []string{"arn:aws:dynamodb:eu-west-1:210987654321:table/wallets"}
		},
	}
	counting := &countingResolver{}
	cached := &cachedEndpoints{next: counting, seen: map[endpointKey]smithyendpoints.Endpoint{}}
	hosts := map[string]bool{}
	for round := range 3 {
		var wg sync.WaitGroup
		for i, v := range vary {
			p := base
			v(&p)
			wg.Go(func() {
				got, err := cached.ResolveEndpoint(t.Context(), p)
				want, werr := dynamodb.NewDefaultEndpointResolverV2().ResolveEndpoint(t.Context(), p)
				if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("parameters %d: %v, %v; the SDK's %v, %v", i, got.URI.String(), err, want.URI.String(), werr)
				}
				if round == 0 {
					counting.mu.Lock()
					hosts[got.URI.Host] = true
					counting.mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	if len(hosts) < 6 {
		t.Errorf("%d distinct hosts for %d sets of parameters: the cases do not tell the keys apart: %v", len(hosts), len(vary), hosts)
	}
	if counting.calls > 2*len(vary) { // a set resolved by two goroutines at once is resolved twice, then remembered
		t.Errorf("the SDK's resolver ran %d times for %d sets of parameters, 3 rounds", counting.calls, len(vary))
	}
}
