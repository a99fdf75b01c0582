package main

import (
	"strings"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// s3EndpointUsage describes --s3-endpoint.
const s3EndpointUsage = "S3 endpoint: http://host:port, https://host:port, or host:port (plain HTTP on a loopback host, TLS elsewhere; $SLUICE_S3_SSL decides when set)"

// httpEndpoint reads an HTTP endpoint (the coordinator API, a function
// URL, a Lambda API) by the rule S3 endpoints follow
// (objstore.ResolveEndpoint): a scheme is kept; without one a loopback
// host (what `sluice local start` prints) is http:// and any other
// https://, so that the same address works with or without its scheme.
func httpEndpoint(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "://") {
		return s
	}
	if objstore.Loopback(strings.SplitN(s, "/", 2)[0]) {
		return "http://" + s
	}
	return "https://" + s
}

// httpEndpoints is httpEndpoint of each.
func httpEndpoints(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = httpEndpoint(s)
	}
	return out
}
