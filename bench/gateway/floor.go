package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
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

// startProxyProcess starts this program with -role proxy in front of the mock at mockURL.
func startProxyProcess(mockURL string) (*child, string) {
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cmd := withCPUs(*serveCPUs, self, "-role", "proxy", "-listen", "127.0.0.1:0", "-upstream", mockURL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := out.Read(buf)
	if err != nil {
		log.Fatalf("proxy process: %v", err)
	}
	return &child{name: "serve", cmd: cmd}, "http://" + strings.TrimSpace(string(buf[:n]))
}
