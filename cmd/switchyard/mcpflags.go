package main

import (
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// mcpFlags are serve's MCP gateway flags.
type mcpFlags struct {
	// Servers is --mcp-servers: the file of upstream MCP servers ("": no MCP gateway).
	Servers string
	// CallTimeout is --mcp-call-timeout.
	CallTimeout time.Duration
	// MaxResultBytes is --mcp-max-result-bytes.
	MaxResultBytes int
	// HealthTimeout is --mcp-health-timeout.
	HealthTimeout time.Duration
}

// gateway builds the MCP gateway of --mcp-servers; nil without the flag. The metrics, when
// they are on, count the tool calls. It connects to no server until one is used.
func (f mcpFlags) gateway(w *wiring) (*mcpgateway.Gateway, error) {
	if f.Servers == "" {
		return nil, nil
	}
	if f.CallTimeout <= 0 {
		return nil, fmt.Errorf("--mcp-call-timeout must be positive, got %s", f.CallTimeout)
	}
	if f.HealthTimeout < 0 {
		return nil, fmt.Errorf("--mcp-health-timeout must be positive, got %s", f.HealthTimeout)
	}
	if f.MaxResultBytes <= 0 {
		return nil, fmt.Errorf("--mcp-max-result-bytes must be positive, got %d", f.MaxResultBytes)
	}
	servers, err := mcpgateway.LoadConfig(f.Servers)
	if err != nil {
		return nil, fmt.Errorf("--mcp-servers %s: %w", f.Servers, err)
	}
	opts := mcpgateway.Options{CallTimeout: f.CallTimeout, MaxResultBytes: f.MaxResultBytes, HealthCheckTimeout: f.HealthTimeout, Logger: w.log, ClientVersion: version}
	if w.obs != nil && w.obs.metrics != nil {
		opts.Observer = w.obs.metrics
	}
	g, err := mcpgateway.New(servers, opts)
	if err != nil {
		return nil, fmt.Errorf("--mcp-servers %s: %w", f.Servers, err)
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name + " (" + string(s.Transport) + ")"
	}
	w.log.Info("mcp gateway", "servers", names)
	return g, nil
}
