package fetch

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// blockedPrefixes are the address ranges the SSRF guard refuses, beyond what netip's
// predicates (loopback, private, link-local, unspecified, multicast) already cover.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, includes broadcast
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
}

// nat64 is the well-known NAT64 prefix: its addresses embed an IPv4 address that is
// checked in turn.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// IsBlocked reports whether the SSRF guard refuses to connect to ip: loopback, private
// (RFC 1918, fc00::/7), link-local (169.254.0.0/16 including the 169.254.169.254 metadata
// address, fe80::/10), unspecified, multicast, carrier-grade NAT (100.64.0.0/10) and
// reserved ranges. IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry.
func IsBlocked(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.Unmap()
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		return IsBlocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// dialControl returns a net.Dialer Control function that refuses blocked addresses. It runs
// after name resolution, on the exact address about to be connected, so a name that
// resolves (or re-resolves, as in DNS rebinding) to a blocked address is refused too.
func dialControl(blocked func(netip.Addr) bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: cannot parse dial address %q", ErrBlocked, address)
		}
		if blocked(ap.Addr()) {
			return fmt.Errorf("%w: %s is a loopback, private, link-local or reserved address and local URLs are not allowed", ErrBlocked, ap.Addr())
		}
		return nil
	}
}

// dialerFor builds the guarded dialer.
func dialerFor(resolver *net.Resolver, blocked func(netip.Addr) bool) *net.Dialer {
	return &net.Dialer{
		Resolver: resolver,
		Timeout:  30 * time.Second,
		Control:  dialControl(blocked),
	}
}
