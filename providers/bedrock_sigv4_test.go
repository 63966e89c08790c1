package providers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/switchyard-ai/switchyard/providers"
)

// A SigV4 implementation of the test's own, written from AWS's description of the
// algorithm (the canonical request, the string to sign, the derived signing key), checked
// against the published vectors of AWS's SigV4 test suite, verifies what the adapter signs.

// The AWS SigV4 test suite's example credentials and time (20150830T123600Z).
const (
	suiteAccessKey = "AKIDEXAMPLE"
	suiteSecretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

var suiteTime = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)

// sigV4TestAWS signs the fixture table's Bedrock requests: the suite's credentials and
// time, region us-east-1.
var sigV4TestAWS = providers.AWSConfig{Region: "us-east-1", AccessKeyID: suiteAccessKey, SecretAccessKey: suiteSecretKey,
	Now: func() time.Time { return suiteTime }}

// sigV4Request is what a signature covers.
type sigV4Request struct {
	method, escapedPath, rawQuery string
	headers                       map[string][]string // lower-case names; "host" included
	payload                       []byte
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// uriEncode percent-encodes every byte but the unreserved ones (and '/' when keepSlash).
func uriEncode(s string, keepSlash bool) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 || keepSlash && c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sigV4Signature is the signature of r, signed over signedHeaders at amzDate for
// region/service with secret. doubleEncode encodes the path once more, as every service
// but S3 wants (Bedrock's model ids are escaped in the path, then again in the canonical
// request).
func sigV4Signature(r sigV4Request, signedHeaders []string, amzDate, region, service, secret string, doubleEncode bool) string {
	path := r.escapedPath
	if doubleEncode {
		path = uriEncode(path, true)
	}
	var query []string
	for _, kv := range strings.Split(r.rawQuery, "&") {
		if kv != "" {
			query = append(query, kv)
		}
	}
	slices.Sort(query)
	var canon strings.Builder
	for _, h := range signedHeaders {
		vals := make([]string, len(r.headers[h]))
		for i, v := range r.headers[h] {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		canon.WriteString(h + ":" + strings.Join(vals, ",") + "\n")
	}
	sum := sha256.Sum256(r.payload)
	creq := strings.Join([]string{r.method, path, strings.Join(query, "&"), canon.String(), strings.Join(signedHeaders, ";"), hex.EncodeToString(sum[:])}, "\n")
	date := amzDate[:8]
	creqSum := sha256.Sum256([]byte(creq))
	sts := strings.Join([]string{"AWS4-HMAC-SHA256", amzDate, date + "/" + region + "/" + service + "/aws4_request", hex.EncodeToString(creqSum[:])}, "\n")
	key := hmacSHA256([]byte("AWS4"+secret), date)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	return hex.EncodeToString(hmacSHA256(key, sts))
}

// TestSigV4VerifierMatchesTheAWSSuite: the test's own SigV4 gives the signatures AWS
// publishes for the suite's get-vanilla and post-vanilla requests, so it can judge the
// adapter's.
func TestSigV4VerifierMatchesTheAWSSuite(t *testing.T) {
	for _, c := range []struct{ method, want string }{
		{"GET", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{"POST", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
	} {
		r := sigV4Request{method: c.method, escapedPath: "/", headers: map[string][]string{
			"host": {"example.amazonaws.com"}, "x-amz-date": {"20150830T123600Z"}}}
		got := sigV4Signature(r, []string{"host", "x-amz-date"}, "20150830T123600Z", "us-east-1", "service", suiteSecretKey, true)
		if got != c.want {
			t.Errorf("%s-vanilla: signature %s, want %s", strings.ToLower(c.method), got, c.want)
		}
	}
}

// checkSigV4 fails t with what sigV4Problems finds.
func checkSigV4(t *testing.T, got captured, cfg providers.AWSConfig, region string) {
	t.Helper()
	for _, p := range sigV4Problems(got, cfg, region) {
		t.Error(p)
	}
}

// sigV4Problems checks the Authorization header of a request the adapter sent with cfg's
// credentials for region: its credential scope (date/region/bedrock/aws4_request), the
// headers it signs (host, x-amz-date, content-type and the body's length at least; the
// session token when there is one) and its signature, recomputed here. It returns what is
// wrong.
func sigV4Problems(got captured, cfg providers.AWSConfig, region string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	auth := got.header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return []string{fmt.Sprintf("Authorization = %q, want AWS4-HMAC-SHA256", auth)}
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ", ") {
		k, v, _ := strings.Cut(f, "=")
		fields[k] = v
	}
	amzDate := got.header.Get("X-Amz-Date")
	if want := cfg.Now().UTC().Format("20060102T150405Z"); amzDate != want {
		bad("X-Amz-Date = %q, want %q", amzDate, want)
	}
	if want := cfg.AccessKeyID + "/" + cfg.Now().UTC().Format("20060102") + "/" + region + "/bedrock/aws4_request"; fields["Credential"] != want {
		bad("credential = %q, want %q", fields["Credential"], want)
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	want := []string{"content-length", "content-type", "host", "x-amz-date"}
	if cfg.SessionToken != "" {
		want = append(want, "x-amz-security-token")
		if got.header.Get("X-Amz-Security-Token") != cfg.SessionToken {
			bad("X-Amz-Security-Token = %q", got.header.Get("X-Amz-Security-Token"))
		}
	}
	for _, h := range want {
		if !slices.Contains(signed, h) {
			bad("signed headers %v lack %s", signed, h)
		}
	}
	if !slices.IsSorted(signed) {
		bad("signed headers %v not sorted", signed)
	}
	r := sigV4Request{method: got.method, headers: map[string][]string{}, payload: got.body}
	r.escapedPath, r.rawQuery, _ = strings.Cut(got.path, "?")
	for k, v := range got.header {
		r.headers[strings.ToLower(k)] = v
	}
	r.headers["host"] = []string{got.host}
	if _, ok := r.headers["content-length"]; !ok {
		r.headers["content-length"] = []string{strconv.Itoa(len(got.body))}
	}
	if sig := sigV4Signature(r, signed, amzDate, region, "bedrock", cfg.SecretAccessKey, true); fields["Signature"] != sig {
		bad("signature %s does not verify (want %s)", fields["Signature"], sig)
	}
	for k, vs := range got.header {
		for _, v := range vs {
			if strings.Contains(v, cfg.SecretAccessKey) {
				bad("header %s carries the secret key", k)
			}
		}
	}
	return out
}

// captureOnce serves one answer and records the request.
func captureOnce(t *testing.T, status int, body string) (*httptest.Server, *captured) {
	t.Helper()
	var got captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = captured{method: r.Method, path: r.URL.RequestURI(), host: r.Host, header: r.Header.Clone(), body: b}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

const converseHello = `{"output":{"message":{"role":"assistant","content":[{"text":"Hi"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`

// TestBedrockSigV4: a signed Converse request carries the credential scope of its region
// and service, signs its headers (the session token too), and its signature verifies, for
// a fixed clock; a model string naming a region (a leading region, an ARN) is signed for
// that region; credentials from a provider are retrieved per call; a failing provider
// sends nothing.
func TestBedrockSigV4(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	cfg := sigV4TestAWS
	cfg.Region = "eu-west-1"
	cfg.SessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
	p := providers.NewBedrock(providers.Config{BaseURL: srv.URL, AWS: cfg})
	if !p.Configured() {
		t.Fatal("SigV4 credentials and a region: not configured")
	}
	for _, c := range []struct{ model, region, path string }{
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", "eu-west-1", "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"},
		{"us-west-2/meta.llama3-1-70b-instruct-v1:0", "us-west-2", "/model/meta.llama3-1-70b-instruct-v1%3A0/converse"},
		{"converse/amazon.nova-pro-v1:0", "eu-west-1", "/model/amazon.nova-pro-v1%3A0/converse"},
		{"arn:aws:bedrock:ap-northeast-1:123456789012:inference-profile/apac.anthropic.claude-sonnet-4-20250514-v1:0", "ap-northeast-1",
			"/model/arn%3Aaws%3Abedrock%3Aap-northeast-1%3A123456789012%3Ainference-profile%2Fapac.anthropic.claude-sonnet-4-20250514-v1%3A0/converse"},
	} {
		resp, err := p.Complete(context.Background(), hello(c.model))
		if err != nil || resp.Text != "Hi" {
			t.Fatalf("%s: %v, %+v", c.model, err, resp)
		}
		if got.path != c.path {
			t.Errorf("%s: path %q, want %q", c.model, got.path, c.path)
		}
		checkSigV4(t, *got, cfg, c.region)
	}
	// A tampered body no longer verifies: the signature covers the payload.
	tampered := *got
	tampered.body = append([]byte(nil), got.body...)
	tampered.body[len(tampered.body)-2] = ' '
	if len(sigV4Problems(tampered, cfg, "ap-northeast-1")) == 0 {
		t.Error("the verifier accepted a tampered body")
	}

	// Credentials from a provider: retrieved for each call.
	calls := 0
	cfg.Credentials = aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		calls++
		return aws.Credentials{AccessKeyID: "AKIDROTATED", SecretAccessKey: "rotated-secret", SessionToken: "rotated-token"}, nil
	})
	p = providers.NewBedrock(providers.Config{BaseURL: srv.URL, AWS: cfg})
	if _, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	rotated := cfg
	rotated.AccessKeyID, rotated.SecretAccessKey, rotated.SessionToken = "AKIDROTATED", "rotated-secret", "rotated-token"
	checkSigV4(t, *got, rotated, "eu-west-1")
	if calls != 1 {
		t.Errorf("credentials retrieved %d times, want 1", calls)
	}
	cfg.Credentials = aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, fmt.Errorf("no EC2 metadata here")
	})
	*got = captured{}
	_, err := providers.NewBedrock(providers.Config{BaseURL: srv.URL, AWS: cfg}).Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.KindOf(err) != providers.KindAuth || !strings.Contains(err.Error(), "no EC2 metadata here") || got.method != "" {
		t.Errorf("failing credentials: err = %v, sent %q", err, got.method)
	}
}

// TestBedrockAPIKey: a Bedrock API key goes as a bearer token, without SigV4, and wins over
// SigV4 credentials; it never appears in errors.
func TestBedrockAPIKey(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	p := providers.NewBedrock(providers.Config{BaseURL: srv.URL, APIKey: "ABSKbedrock-api-key-0123", AWS: sigV4TestAWS})
	if _, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); a != "Bearer ABSKbedrock-api-key-0123" {
		t.Errorf("Authorization = %q", a)
	}
	if got.header.Get("X-Amz-Date") != "" || got.header.Get("X-Amz-Security-Token") != "" {
		t.Errorf("bearer request carries SigV4 headers: %v", got.header)
	}
	// An upstream echoing the key and the session token: both redacted.
	srv2, _ := captureOnce(t, 403, `{"message":"bad key ABSKbedrock-api-key-0123 token FwoGZXIvYXdzEXAMPLETOKEN"}`)
	cfg := sigV4TestAWS
	cfg.SessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
	_, err := providers.NewBedrock(providers.Config{BaseURL: srv2.URL, APIKey: "ABSKbedrock-api-key-0123", AWS: cfg}).Complete(context.Background(), hello("m"))
	if providers.KindOf(err) != providers.KindAuth || strings.Contains(err.Error(), "ABSKbedrock") || strings.Contains(err.Error(), "FwoGZX") {
		t.Errorf("err = %v, want auth without the key or token", err)
	}
}
