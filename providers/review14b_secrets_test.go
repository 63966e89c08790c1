package providers_test

// Review 14b: credentials in Bedrock's error messages and logs.

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/switchyard-ai/switchyard/providers"
)

// stsToken is shaped like a real STS session token: several hundred characters (AWS
// documents no upper bound; assumed-role tokens are commonly 700-1000).
var stsToken = "IQoJb3JpZ2luX2VjE" + strings.Repeat("AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/", 20) + "=="

// echoHeaders answers 403 with a message that quotes the request's signing headers, as a
// misbehaving proxy or a debug endpoint might.
func echoHeaders(prefix string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(prefix)
		for _, k := range []string{"X-Amz-Security-Token", "Authorization", "X-Amz-Date"} {
			b.WriteString(k + "=" + r.Header.Get(k) + " ")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException")
		w.WriteHeader(403)
		io.WriteString(w, `{"message":`+quoteJSON(b.String())+`}`)
	}
}

func quoteJSON(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// leaks reports whether msg carries a recognisable piece (24 characters or more) of secret.
func leaks(msg, secret string) bool {
	const piece = 24
	for i := 0; i+piece <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+piece]) {
			return true
		}
	}
	return false
}

// TestReview14bLongSessionTokenNotInErrors: an upstream error quoting the session token
// (X-Amz-Security-Token) leaves no piece of it in the error: a real token is longer than
// the 500 characters a message is cut to, and the cut must not keep part of it.
func TestReview14bLongSessionTokenNotInErrors(t *testing.T) {
	srv := newR14Server(t, 0, "", "")
	srv.answer = echoHeaders("The security token included in the request is invalid. ")
	cfg := r14Cfg
	cfg.SessionToken = stsToken
	_, err := providers.NewBedrock(providers.Config{BaseURL: srv.URL, AWS: cfg}).Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if err == nil {
		t.Fatal("no error")
	}
	if leaks(err.Error(), stsToken) {
		t.Errorf("the error carries part of the session token: %s", err)
	}
}

// TestReview14bSecretAtTheCutNotInErrors: the secret key quoted where the message is cut
// (around its 500th character) leaves no piece of it in the error.
func TestReview14bSecretAtTheCutNotInErrors(t *testing.T) {
	srv := newR14Server(t, 403, "application/json", `{"message":"`+strings.Repeat("x", 470)+` `+r14Secret+`"}`)
	_, err := ourBedrock(srv.URL).Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if err == nil {
		t.Fatal("no error")
	}
	if leaks(err.Error(), r14Secret) {
		t.Errorf("the error carries part of the secret key: ...%s", err.Error()[max(0, len(err.Error())-60):])
	}
}

// TestReview14bProviderCredentialsNotInErrorsOrLogs: credentials from an
// aws.CredentialsProvider (rotated, assumed-role ones) are redacted like static ones: an
// upstream quoting the session token and the secret leaves them in no error, and the debug
// log carries no credential either.
func TestReview14bProviderCredentialsNotInErrorsOrLogs(t *testing.T) {
	const token, secret = "FwoGZXIvYXdzEROTATEDSESSIONTOKENabcdefghijklmnop", "rotatedSECRETkey0123456789abcdefghijklmn"
	srv := newR14Server(t, 0, "", "")
	srv.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException")
		w.WriteHeader(403)
		io.WriteString(w, `{"message":"token `+r.Header.Get("X-Amz-Security-Token")+` does not belong to secret `+secret+`"}`)
	}
	var logs bytes.Buffer
	cfg := providers.AWSConfig{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDROTATED", SecretAccessKey: secret, SessionToken: token}, nil
	})}
	p := providers.NewBedrock(providers.Config{BaseURL: srv.URL, AWS: cfg,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	_, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), secret) {
		t.Errorf("the error carries the provider's credentials: %s", err)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), secret) {
		t.Errorf("the log carries credentials: %s", logs.String())
	}
}
