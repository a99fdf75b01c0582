package coordinator

import (
	"context"
	"net/http"
	"net/url"

	"github.com/sluicedb/sluice/coordinator/webui"
)

// Detail returns everything the web UI's job page shows (GET
// /v1/jobs/{id}/detail): the plan per round, stages, tasks and attempts.
func (c *Client) Detail(ctx context.Context, job string) (*webui.JobDetail, error) {
	var d webui.JobDetail
	return &d, c.getJSON(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(job)+"/detail", nil, &d)
}

// UIURL is the address of the coordinator's web UI under base (an API
// URL), or of one job's page when job is set.
func UIURL(base, job string) string {
	if job == "" {
		return base + "/ui/"
	}
	return base + "/ui/jobs/" + url.PathEscape(job)
}
