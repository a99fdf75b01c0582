package tests

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// restServer is an Iceberg REST catalog server (the REST catalog spec's
// read endpoints: GET /v1/config, namespaces, a namespace, its tables, a
// table) over another iceberg-go catalog, for tests: the answers are that
// catalog's, encoded as the spec says, so iceberg-go's REST client, and
// sluice through it, meets the real protocol. It counts the requests.
type restServer struct {
	url string
	mu  sync.Mutex
	n   map[string]int
}

func (s *restServer) hit(k string) {
	s.mu.Lock()
	s.n[k]++
	s.mu.Unlock()
}

func (s *restServer) calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.n)
}

func icebergRESTServer(t *testing.T, cat icecat.Catalog) *restServer {
	t.Helper()
	s := &restServer{n: map[string]int{}}
	reply := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(v); err != nil {
			t.Errorf("rest server: %v", err)
		}
	}
	// fail answers an error as the spec's ErrorModel.
	fail := func(w http.ResponseWriter, err error) {
		code, typ := http.StatusInternalServerError, "ServerError"
		switch {
		case errors.Is(err, icecat.ErrNoSuchTable):
			code, typ = http.StatusNotFound, "NoSuchTableException"
		case errors.Is(err, icecat.ErrNoSuchNamespace):
			code, typ = http.StatusNotFound, "NoSuchNamespaceException"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": err.Error(), "type": typ, "code": code}})
	}
	// A namespace in a path or query: its levels joined by 0x1F.
	ns := func(v string) table.Identifier { return strings.Split(v, "\x1f") }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		s.hit("config")
		reply(w, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
	})
	mux.HandleFunc("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		s.hit("namespaces")
		var parent table.Identifier
		if p := r.URL.Query().Get("parent"); p != "" {
			parent = ns(p)
		}
		nss, err := cat.ListNamespaces(r.Context(), parent)
		if err != nil {
			fail(w, err)
			return
		}
		if nss == nil {
			nss = []table.Identifier{}
		}
		reply(w, map[string]any{"namespaces": nss})
	})
	mux.HandleFunc("GET /v1/namespaces/{ns}", func(w http.ResponseWriter, r *http.Request) {
		s.hit("namespace")
		props, err := cat.LoadNamespaceProperties(r.Context(), ns(r.PathValue("ns")))
		if err != nil {
			fail(w, err)
			return
		}
		reply(w, map[string]any{"namespace": ns(r.PathValue("ns")), "properties": props})
	})
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables", func(w http.ResponseWriter, r *http.Request) {
		s.hit("tables")
		type ident struct {
			Namespace []string `json:"namespace"`
			Name      string   `json:"name"`
		}
		ids := []ident{}
		for id, err := range cat.ListTables(r.Context(), ns(r.PathValue("ns"))) {
			if err != nil {
				fail(w, err)
				return
			}
			ids = append(ids, ident{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
		}
		reply(w, map[string]any{"identifiers": ids})
	})
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", func(w http.ResponseWriter, r *http.Request) {
		s.hit("load")
		id := append(ns(r.PathValue("ns")), r.PathValue("table"))
		tbl, err := cat.LoadTable(r.Context(), id)
		if err != nil {
			fail(w, err)
			return
		}
		reply(w, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": tbl.Metadata(), "config": map[string]string{}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.hit("other")
		t.Errorf("rest server: %s %s is not served", r.Method, r.URL)
		http.Error(w, `{"error": {"message": "not served", "type": "NotImplemented", "code": 501}}`, http.StatusNotImplemented)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}
