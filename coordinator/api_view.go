package coordinator

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// detail serves GET /v1/jobs/{id}/detail: the job page's view as JSON.
func (a *API) detail(w http.ResponseWriter, r *http.Request) {
	d, err := a.c.store.JobDetail(r.Context(), r.PathValue("id"))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, webui.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// object serves GET /v1/jobs/{id}/objects?key=K: one object under the
// job's prefix in the bucket (a shuffle object the job page links to), as
// an Arrow IPC file.
func (a *API) object(w http.ResponseWriter, r *http.Request) {
	job, key := r.PathValue("id"), r.URL.Query().Get("key")
	if !strings.HasPrefix(key, shuffle.JobPrefix(a.c.cfg.Prefix, job)) || strings.Contains(key, "..") {
		writeErr(w, http.StatusBadRequest, fmt.Errorf("object %q is not one of job %s's objects", key, job))
		return
	}
	data, err := a.c.bucket.Get(r.Context(), key)
	if err != nil {
		code := http.StatusBadGateway
		if errors.Is(err, objstore.ErrNotFound) {
			code = http.StatusNotFound
		}
		writeErr(w, code, fmt.Errorf("read object %s: %w", key, err))
		return
	}
	name := key[strings.LastIndex(key, "/")+1:]
	w.Header().Set("Content-Type", "application/vnd.apache.arrow.file")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Content-Disposition", "attachment; filename=\""+name+"\"")
	_, _ = w.Write(data)
}
