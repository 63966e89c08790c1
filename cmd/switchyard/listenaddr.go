package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// addrFlag names a listen address flag as the user set it: "--addr", or
// "--addr (from SWITCHYARD_ADDR)" when the environment gave the value (args do not name the
// flag), so an error points at where to fix it. (parseFlags sets the environment's values
// with fs.Set, so the flag set itself no longer tells them apart.)
func addrFlag(args []string, name string, getenv func(string) string) string {
	if inArgs(args, name) {
		return "--" + name
	}
	if getenv(envName(name)) != "" {
		return fmt.Sprintf("--%s (from %s)", name, envName(name))
	}
	return "--" + name
}

// inArgs reports whether the command line args name the flag (-name, --name, --name=v).
func inArgs(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return true
		}
	}
	return false
}

// checkListenAddr checks a listen address before anything starts: it must be host:port (the
// host empty for every interface, an IP address or a name that resolves; the port a number
// 0-65535, 0 picking a free one, or a service name). A refusal is a command line error (exit
// 2) naming the flag. A lookup that could not be made (the resolver timed out or failed) is
// not the value's fault: it is returned as a plain error (exit 1), as net.Listen would.
func checkListenAddr(ctx context.Context, flagName, addr string) error {
	const want = "want host:port, such as 127.0.0.1:8080, :8080 (every interface) or [::1]:8080"
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err) // SplitHostPort's text repeats the address
		}
		return &usageError{err: fmt.Errorf("%s %q: %v (%s)", flagName, addr, err, want)}
	}
	if port == "" {
		// net.Listen would pick a free port, which no client knows: a typo more likely than meant.
		return &usageError{err: fmt.Errorf("%s %q: no port after the colon (%s; port 0 picks a free one)", flagName, addr, want)}
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 0 || n > 65535 {
			return &usageError{err: fmt.Errorf("%s %q: port %d is out of range (0-65535; 0 picks a free one)", flagName, addr, n)}
		}
	} else if _, err := net.DefaultResolver.LookupPort(ctx, "tcp", port); err != nil {
		return &usageError{err: fmt.Errorf("%s %q: port %q is neither a number (0-65535) nor a known service name", flagName, addr, port)}
	}
	if host == "" {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // interfaces that lack it are net.Listen's to report (listenError)
	}
	if _, err := net.DefaultResolver.LookupHost(ctx, host); err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return &usageError{err: fmt.Errorf("%s %q: host %q does not resolve to an address (%s)", flagName, addr, host, want)}
		}
		return fmt.Errorf("%s %q: looking up host %q: %w", flagName, addr, host, err)
	}
	return nil
}

// listenError is a listener that did not open, as the operator can act on it: the flag, the
// address, and what to do for the usual causes (a run-time failure: exit 1).
func listenError(flagName, addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s %s: the address is already in use (another switchyard serve or another program listens on it: stop it or choose another address): %w", flagName, addr, err)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s %s: no network interface of this machine has that address (0.0.0.0 or an empty host listens on every interface): %w", flagName, addr, err)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%s %s: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE; choose a higher port): %w", flagName, addr, err)
	}
	return fmt.Errorf("%s %s: %w", flagName, addr, err)
}
