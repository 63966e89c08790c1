package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

// runVersion prints the version, and the source revision and Go version the binary was
// built from when the build recorded them.
func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	fmt.Fprintf(stdout, "switchyard %s\n", version)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		dirty := ""
		if settings["vcs.modified"] == "true" {
			dirty = " (modified)"
		}
		fmt.Fprintf(stdout, "revision %s%s %s\n", rev, dirty, settings["vcs.time"])
	}
	fmt.Fprintf(stdout, "module %s %s, %s %s/%s\n", info.Main.Path, info.Main.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// serveUsage prints serve's flags and then every other environment variable serve reads.
// workerUsage prints `switchyard worker -h`: serve's flags, most of which a worker shares.
func workerUsage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintln(fs.Output(), "usage: switchyard worker --store postgres://… [flags]\n\n"+
			"Runs training and optimization jobs from the shared PostgreSQL store without serving the API;\n"+
			"give it the same configuration as serve (store, providers, prices, sandbox). --addr and\n"+
			"--public-url do not apply: the worker listens on 127.0.0.1 only, for its sandboxed agents,\n"+
			"and artifact links come from the replica that answers (its --public-url). Its metrics are\n"+
			"on a port chosen at start unless --metrics-addr names one.")
		serveFlagsUsage(fs)
	}
}

func serveUsage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintln(fs.Output(), "usage: switchyard serve [flags]")
		serveFlagsUsage(fs)
		fmt.Fprintln(fs.Output(), "\nsignals:\n"+signalsUsage)
	}
}

// serveFlagsUsage prints the flags and environment of serve (and worker).
func serveFlagsUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintln(w, "\nflags (each also settable as SWITCHYARD_<FLAG>, dashes as underscores):")
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nenvironment:")
	fmt.Fprintln(w, "  SWITCHYARD_API_KEYS     comma-separated API keys clients must send (Authorization: Bearer);\n                          unset on a fresh data directory: one is created and printed once")
	for _, p := range providers.Presets() {
		if p.KeyEnv != "" {
			fmt.Fprintf(w, "  %-23s %s API key", p.KeyEnv, p.Name)
			if p.BaseURLEnv != "" {
				fmt.Fprintf(w, "; %s overrides its base URL", p.BaseURLEnv)
			}
			fmt.Fprintln(w)
		}
		for _, e := range p.Env {
			if len(e.Name) > 23 {
				fmt.Fprintf(w, "  %s\n  %-23s %s\n", e.Name, "", e.Meaning)
				continue
			}
			fmt.Fprintf(w, "  %-23s %s\n", e.Name, e.Meaning)
		}
	}
	fmt.Fprintf(w, "  %-23s path of the WASI CPython for --sandbox wasm (default ~/.cache/switchyard/python-wasi/python.wasm)\n", wasm.EnvPythonWasm)
	fmt.Fprintln(w, "  GOGC                    when set, wins over --gc-percent")
	fmt.Fprintln(w, "  OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)\n                          turns traces on: OTLP/HTTP spans to this endpoint (unset: no tracing);\n                          OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME and the other OTEL_* variables apply")
	fmt.Fprintln(w, "  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true\n                          puts prompts and answers on the chat spans, as --trace-content does")
	fmt.Fprintln(w, "  (a --providers-config file may name further key variables with api_key_env, and a bedrock\n"+
		"   provider's credential variables with aws_access_key_id_env, aws_secret_access_key_env and\n"+
		"   aws_session_token_env, its profile with aws_profile_name, and opt into the EC2 instance role\n"+
		"   with aws_instance_role)")
}
