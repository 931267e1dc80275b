package httpkey

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// FunctionURL serves a Lambda function URL event (payload 2.0, BUFFERED
// invoke mode) through ServeHTTP: lambda.Start(h.FunctionURL). An event it
// cannot turn into a request (a body that is not the base64 it claims)
// gets 400, never a function error.
func (h *Handler) FunctionURL(ctx context.Context, e events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	ctx = context.WithValue(ctx, eventKey{}, identity{iam: functionURLIAM(e.RequestContext.Authorizer)})
	ctx = withRequestID(ctx, e.RequestContext.RequestID)
	status, header, body, b64, cookies := h.serveEvent(ctx, e.RequestContext.HTTP.Method, e.RawPath, e.RawQueryString, e.Headers, e.Cookies, e.Body, e.IsBase64Encoded, e.RequestContext.DomainName)
	return events.LambdaFunctionURLResponse{StatusCode: status, Headers: header, Body: body, IsBase64Encoded: b64, Cookies: cookies}, nil
}

// HTTPAPI serves an API Gateway HTTP API event (payload format 2.0)
// through ServeHTTP: lambda.Start(h.HTTPAPI).
func (h *Handler) HTTPAPI(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	id := identity{}
	if a := e.RequestContext.Authorizer; a != nil {
		if a.IAM != nil {
			id.iam = a.IAM.UserARN
		}
		if a.JWT != nil {
			id.claims = a.JWT.Claims
		}
	}
	ctx = context.WithValue(ctx, eventKey{}, id)
	ctx = withRequestID(ctx, e.RequestContext.RequestID)
	status, header, body, b64, cookies := h.serveEvent(ctx, e.RequestContext.HTTP.Method, e.RawPath, e.RawQueryString, e.Headers, e.Cookies, e.Body, e.IsBase64Encoded, e.RequestContext.DomainName)
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: header, Body: body, IsBase64Encoded: b64, Cookies: cookies}, nil
}

func functionURLIAM(a *events.LambdaFunctionURLRequestContextAuthorizerDescription) string {
	if a == nil || a.IAM == nil {
		return ""
	}
	return a.IAM.UserARN
}

// serveEvent turns a payload 2.0 event into a request, serves it and
// returns the response as the event's response carries it: one value per
// header (several joined with ", ", as payload 2.0 joins a request's), the
// Set-Cookie values apart, and a body in base64 when it is not UTF-8.
func (h *Handler) serveEvent(ctx context.Context, method, path, query string, headers map[string]string, cookies []string, body string, isB64 bool, host string) (int, map[string]string, string, bool, []string) {
	raw := []byte(body)
	rec := newRecorder()
	if isB64 {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(body); err != nil {
			x := exchange{h: h, w: rec, r: &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}}}
			x.problem(http.StatusBadRequest, "bad_input", "Bad event", fmt.Sprintf("the event's body is not base64: %v", err))
			h.report(&x, 0)
			return eventResponse(rec)
		}
	}
	u := &url.URL{Path: path, RawQuery: query}
	if p, err := url.PathUnescape(path); err == nil {
		u.Path, u.RawPath = p, path
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), io.NopCloser(bytes.NewReader(raw)))
	if err != nil {
		r = &http.Request{Method: method, URL: u, Header: http.Header{}}
		r = r.WithContext(ctx)
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	r.URL, r.RequestURI, r.Host, r.ContentLength = u, u.RequestURI(), host, int64(len(raw))
	for name, v := range headers {
		r.Header.Set(name, v)
	}
	if len(cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	h.ServeHTTP(rec, r)
	return eventResponse(rec)
}

func eventResponse(rec *recorder) (int, map[string]string, string, bool, []string) {
	header := make(map[string]string, len(rec.header))
	var cookies []string
	for name, vs := range rec.header {
		if name == "Set-Cookie" {
			cookies = append(cookies, vs...)
			continue
		}
		header[name] = strings.Join(vs, ", ")
	}
	b := rec.body.Bytes()
	if utf8.Valid(b) {
		return rec.status, header, string(b), false, cookies
	}
	return rec.status, header, base64.StdEncoding.EncodeToString(b), true, cookies
}

type eventKey struct{}

// identity is what a Lambda event says of its caller.
type identity struct {
	iam    string
	claims map[string]string
}

// ClientIAM scopes keys to the caller's stable IAM identity (stableIAM of
// the userArn of a function URL with AWS_IAM auth, or of an HTTP API route
// with IAM authorization, which Lambda's event carries): the account and the
// role or user, never an assumed role's session name, which changes each
// time the caller's credentials are refreshed.
func ClientIAM() ClientFunc {
	return func(r *http.Request) (string, error) {
		id, _ := r.Context().Value(eventKey{}).(identity)
		if id.iam == "" {
			return "", fmt.Errorf("the request carries no IAM identity (a function URL with AWS_IAM auth, or an IAM-authorized route, gives one)")
		}
		return stableIAM(id.iam), nil
	}
}

// stableIAM returns the identity of an IAM principal's ARN that survives a
// refresh of its credentials: for an assumed role's session
// (arn:aws:sts::123456789012:assumed-role/Payments/aws-go-sdk-1700000000),
// the role in its account (arn:aws:sts::123456789012:assumed-role/Payments),
// whatever the session's name; any other ARN (an IAM user, the account's
// root, a federated user) as it is. Two sessions of one role are one
// client: a role is the unit that IAM grants, and a session's name is
// chosen by whoever assumes the role.
func stableIAM(arn string) string {
	const marker = ":assumed-role/"
	i := strings.Index(arn, marker)
	if i < 0 || !strings.HasPrefix(arn, "arn:") {
		return arn
	}
	role, _, _ := strings.Cut(arn[i+len(marker):], "/")
	return arn[:i+len(marker)] + role
}

// ClientClaim scopes keys to a claim of the JWT that an HTTP API's JWT
// authorizer verified ("sub" for the subject).
func ClientClaim(name string) ClientFunc {
	return func(r *http.Request) (string, error) {
		id, _ := r.Context().Value(eventKey{}).(identity)
		if v := id.claims[name]; v != "" {
			return v, nil
		}
		return "", fmt.Errorf("the request carries no verified JWT claim %q", name)
	}
}

// ClientHeader scopes keys to the value of a request header (a tenant id
// that a gateway in front sets; never one the client chooses freely).
func ClientHeader(name string) ClientFunc {
	return func(r *http.Request) (string, error) {
		if v := r.Header.Get(name); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("the request has no %s header", name)
	}
}
