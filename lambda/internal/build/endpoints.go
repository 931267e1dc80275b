package build

import (
	"context"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// maxCachedEndpoints bounds the endpoints one client remembers: a consumer
// resolves one per table it writes (its own and its transactions' tables),
// in one region.
const maxCachedEndpoints = 64

// cachedEndpoints is the DynamoDB client's endpoint resolver
// (Options.EndpointResolverV2, the SDK's extension point for it): the SDK's
// own, whose answer for a set of parameters is remembered, since it is a
// function of them alone (the rules evaluated by
// dynamodb.NewDefaultEndpointResolverV2 read nothing else), instead of
// evaluated again for every request. The SDK copies what it uses of an
// endpoint into each request and changes nothing in the endpoint it is
// given, so one endpoint serves every request.
type cachedEndpoints struct {
	next dynamodb.EndpointResolverV2
	mu   sync.RWMutex
	seen map[endpointKey]smithyendpoints.Endpoint
}

// endpointKey is dynamodb.EndpointParameters as a map key: its pointers
// dereferenced ("" for nil, prefixed so that nil and "" differ) and its list
// joined.
type endpointKey struct {
	region, endpoint, accountID, accountIDMode, resourceARN, resourceARNs string
	dualStack, fips, search                                               string
}

func newCachedEndpoints() *cachedEndpoints {
	return &cachedEndpoints{next: dynamodb.NewDefaultEndpointResolverV2(), seen: map[endpointKey]smithyendpoints.Endpoint{}}
}

// ResolveEndpoint implements dynamodb.EndpointResolverV2.
func (c *cachedEndpoints) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	k := endpointKey{
		region: str(p.Region), endpoint: str(p.Endpoint), accountID: str(p.AccountId), accountIDMode: str(p.AccountIdEndpointMode),
		resourceARN: str(p.ResourceArn), dualStack: boolean(p.UseDualStack), fips: boolean(p.UseFIPS), search: boolean(p.IsSearchOperation),
	}
	if p.ResourceArnList != nil {
		k.resourceARNs = "=" + strings.Join(p.ResourceArnList, "\x00")
	}
	c.mu.RLock()
	e, ok := c.seen[k]
	c.mu.RUnlock()
	if ok {
		return e, nil
	}
	e, err := c.next.ResolveEndpoint(ctx, p)
	if err == nil {
		c.mu.Lock()
		if len(c.seen) < maxCachedEndpoints {
			c.seen[k] = e
		}
		c.mu.Unlock()
	}
	return e, err
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return "=" + *s
}

func boolean(b *bool) string {
	switch {
	case b == nil:
		return ""
	case *b:
		return "true"
	}
	return "false"
}
