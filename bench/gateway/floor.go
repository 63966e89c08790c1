package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// runProxyRole is the calibration floor for the separate-process setup: a bare
// httputil.ReverseProxy (no auth, validation, pricing or re-encoding) that forwards
// /v1/chat/completions to the mock. What it adds over the direct call is what any net/http
// gateway process pays for the extra hop on this machine before doing any work of its own.
func runProxyRole() {
	up, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 512
	t.DisableCompression = true
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.Header.Set("Authorization", "Bearer sk-mock")
		},
		Transport:     t,
		FlushInterval: -1,
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", rp)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.Serve(ln))
}

// startProxyProcess starts this program with -role proxy in front of the mock at mockURL,
// in serve's place (and under serve's name in the CPU report).
func startProxyProcess(mockURL string) (*child, string) {
	return startRole("serve", *serveCPUs, "-role", "proxy", "-listen", "127.0.0.1:0", "-upstream", mockURL)
}
