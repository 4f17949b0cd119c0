package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// servePprof serves Go's profiling endpoints (net/http/pprof) of this process — the parent, so
// embedded etcd's CPU shows here — on addr, which must be a loopback address (port 0: a free
// one). It answers the base URL, http://127.0.0.1:PORT/debug/pprof. The upstream components are
// profiled through their own --profiling endpoints on their secure ports (see componentProfiling).
func servePprof(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--pprof-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		// Profiles show memory contents (heap) and stacks: never off the machine.
		return "", errors.New("--pprof-addr must be a loopback address such as 127.0.0.1:0, not " + addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() { _ = http.Serve(ln, mux) }()
	return fmt.Sprintf("http://%s/debug/pprof", ln.Addr()), nil
}

// componentProfiling is the upstream components' --profiling flag: on only when profiles were
// asked for (their /debug/pprof on the secure port, behind authentication and RBAC: a
// system:masters token reads it).
func componentProfiling(on bool) string {
	return fmt.Sprintf("--profiling=%t", on)
}
